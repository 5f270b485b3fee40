"""Trace-marker encoding: the one definition shared by the firmware and the host.

A marker is the 16-bit value ``test << 10 | point << 7 | arg`` (:class:`Test`, :class:`Point`)
that the DUT writes in one store to the GPIO trace port or to the bus trace window
(``docs/markers.md``). The C header ``firmware/include/latscope/markers.h`` is generated from
this module (``python -m latscope_defs.markers --header``); a test checks that the committed
header is current.
"""

import argparse
import sys
from collections.abc import Sequence
from enum import IntEnum
from typing import TypeVar, overload

import numpy as np
import numpy.typing as npt

__all__ = [
    "TEST_SHIFT",
    "POINT_SHIFT",
    "ARG_BITS",
    "Test",
    "Point",
    "KERNEL_HANDLER",
    "KERNEL_TICK_ENTRY",
    "KERNEL_TICK_EXIT",
    "KERNEL_POINT_NAMES",
    "SUITE_IRQ_LINE",
    "SUITE_PARAMETERS",
    "SUITE_OBJECT_SAMPLES",
    "SUITE_CLOCK_SAMPLES",
    "encode",
    "decode",
    "c_header",
]

TEST_BITS, POINT_BITS, ARG_BITS = 6, 3, 7
POINT_SHIFT = ARG_BITS
TEST_SHIFT = ARG_BITS + POINT_BITS
MARKER_BITS = TEST_BITS + POINT_BITS + ARG_BITS


class Test(IntEnum):
    """Tests of the suite, named after the reference evaluation report (section 4)."""

    __test__ = False  # a name pytest would otherwise try to collect as a test class
    NONE = 0  #: not inside a test (e.g. the suite's own progress markers)
    IL_A = 1  #: IL-a-1 and IDL-a-1: IRQ while a high-priority thread marks continuously
    IDL_B = 2  #: IDL-b-N: the ISR gives a semaphore N equal-priority threads pend on
    TSL_A = 3  #: TSL-a-N: N equal-priority threads yield in turn
    TF_A = 4  #: thread create
    TF_B = 5  #: thread delete (never ran)
    TF_C = 6  #: thread delete after use
    SEO_A = 7  #: semaphore create
    SEO_B = 8  #: semaphore delete
    SEO_C = 9  #: semaphore delete after use
    SEO_D = 10  #: semaphore acquire, no contention
    SEO_E = 11  #: semaphore release, no contention
    SEO_F = 12  #: semaphore release with N threads of different priority pending
    SEO_G = 13  #: priority inversion: time for the high-priority thread to get the mutex
    MQ = 14  #: message send -> blocked receiver resumes
    CLOCK_ISR = 15  #: clock-ISR method: fixed work interrupted or not by the tick
    KERNEL = 16  #: the kernel's own markers (ISR_ENTRY: about to call a line's handler)
    LOAD = 17  #: a load profile's activity (docs/tests.md, "Load profiles"): no table


class Point(IntEnum):
    START = 0  #: test starts; arg = its parameter (e.g. number of threads)
    END = 1  #: test ends
    ISR_ENTRY = 2  #: first instruction of the test's interrupt handler
    ISR_EXIT = 3  #: last instruction of the handler before it returns
    T1 = 4  #: a measurement starts (before the call or action measured)
    T2 = 5  #: a measurement ends (after it, in whichever thread runs next)
    THREAD = 6  #: "this thread is running"; arg = thread index
    PARAM = 7  #: a test parameter or progress value in arg


#: Points of the kernel's own markers (test KERNEL), docs/markers.md: about to call an
#: interrupt line's handler (arg = the line), the tick's work begins, the tick's work ends.
KERNEL_HANDLER = Point.ISR_ENTRY
KERNEL_TICK_ENTRY = Point.T1
KERNEL_TICK_EXIT = Point.T2
#: The interrupt line the suite attaches the appliance's IRQ to (the firmware's SUITE_IRQ):
#: the kernel's handler markers of this line end the ILH tables; another line's (a load
#: profile's second source, docs/tests.md "Load profiles") are events of a window only.
SUITE_IRQ_LINE = 0
#: The suite's default plan (firmware/suite/suite.h takes these through markers.h, each
#: -D overridable; the host's loss accounting knows from them which tables a run makes):
#: the parameters of the tests that run one window per value (IDL-b's and TSL-a's thread
#: counts, SEO-f's most pending threads, in run order), and the caps on the samples of the
#: object tests (TF, SEO, MQ: min(SAMPLES, 256)) and of the clock-ISR test (min(SAMPLES, 100)).
SUITE_PARAMETERS = {Test.IDL_B: (1, 10, 128), Test.TSL_A: (2, 10, 128), Test.SEO_F: (255,)}
SUITE_OBJECT_SAMPLES = 256
SUITE_CLOCK_SAMPLES = 100
#: Their names in reports and in the sigrok decoders ("handler 0", "tick entry").
KERNEL_POINT_NAMES = {
    KERNEL_HANDLER: "handler",
    KERNEL_TICK_ENTRY: "tick entry",
    KERNEL_TICK_EXIT: "tick exit",
}


def encode(test: int, point: int, arg: int = 0) -> int:
    return (int(test) << TEST_SHIFT) | (int(point) << POINT_SHIFT) | (arg & ((1 << ARG_BITS) - 1))


#: An integer array of marker values: shifts and masks by Python ints keep its dtype (NEP 50).
_Markers = TypeVar("_Markers", bound=npt.NDArray[np.integer])


@overload
def decode(value: int) -> tuple[int, int, int]: ...
@overload
def decode(value: _Markers) -> tuple[_Markers, _Markers, _Markers]: ...
def decode(
    value: int | npt.NDArray[np.integer],
) -> tuple[int | npt.NDArray[np.integer], ...]:
    """(test, point, arg) of a marker value, as plain ints (vectorises over numpy arrays)."""
    return (
        (value >> TEST_SHIFT) & ((1 << TEST_BITS) - 1),
        (value >> POINT_SHIFT) & ((1 << POINT_BITS) - 1),
        value & ((1 << ARG_BITS) - 1),
    )


def c_header() -> str:
    lines = [
        "/* Generated by `python -m latscope_defs.markers --header` from "
        "defs/latscope_defs/markers.py;",
        " * do not edit. The encoding is described in docs/markers.md. */",
        "#ifndef LATSCOPE_MARKERS_H",
        "#define LATSCOPE_MARKERS_H",
        "",
        f"#define LS_MARKER_BITS {MARKER_BITS}",
        f"#define LS_TEST_SHIFT {TEST_SHIFT}",
        f"#define LS_POINT_SHIFT {POINT_SHIFT}",
        f"#define LS_ARG_MASK 0x{(1 << ARG_BITS) - 1:x}u",
        "",
        "/* A marker value: test, point and argument in one 16-bit word. */",
        "#define LS_MARKER(test, point, arg) \\",
        "    ((unsigned)(((test) << LS_TEST_SHIFT) | ((point) << LS_POINT_SHIFT) | "
        "((arg) & LS_ARG_MASK)))",
        "",
    ]
    for enum, prefix in ((Test, "LS_TEST_"), (Point, "LS_POINT_")):
        lines.append(f"enum ls_{enum.__name__.lower()} {{")
        for member in enum:
            lines.append(f"    {prefix}{member.name} = {member.value},")
        lines += ["};", ""]
    lines += ["/* Points of the kernel's own markers (test KERNEL). */"]
    lines += [
        f"#define LS_{name} LS_POINT_{point.name}"
        for name, point in (
            ("KERNEL_HANDLER", KERNEL_HANDLER),
            ("KERNEL_TICK_ENTRY", KERNEL_TICK_ENTRY),
            ("KERNEL_TICK_EXIT", KERNEL_TICK_EXIT),
        )
    ]
    lines += [
        "",
        "/* The interrupt line of the appliance's IRQ (its handler markers end ILH). */",
        f"#define LS_SUITE_IRQ_LINE {SUITE_IRQ_LINE}",
        "",
        "/* The suite's default plan (suite.h: SUITE_IDL_B_THREADS, SUITE_TSL_THREADS,",
        " * SUITE_SEO_F_MAX, the caps of SUITE_OBJ_SAMPLES and SUITE_CLK_SAMPLES). */",
        "#define LS_SUITE_IDL_B_THREADS " + ", ".join(map(str, SUITE_PARAMETERS[Test.IDL_B])),
        "#define LS_SUITE_TSL_THREADS " + ", ".join(map(str, SUITE_PARAMETERS[Test.TSL_A])),
        f"#define LS_SUITE_SEO_F_MAX {SUITE_PARAMETERS[Test.SEO_F][0]}u",
        f"#define LS_SUITE_OBJ_SAMPLES_MAX {SUITE_OBJECT_SAMPLES}u",
        f"#define LS_SUITE_CLK_SAMPLES_MAX {SUITE_CLOCK_SAMPLES}u",
    ]
    lines += ["", "#endif", ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m latscope_defs.markers", description="Print the marker encoding."
    )
    parser.add_argument("--header", action="store_true", help="print the C header")
    args = parser.parse_args(argv)
    if args.header:
        sys.stdout.write(c_header())
    else:
        for test in Test:
            print(f"{test.value:3d} {test.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
