"""Capture files from real runs of the test suite, for the report, streaming and API tests.

The suite (firmware/suite) built natively with the reference kernel's host port records
every marker store and IRQ edge with a host time stamp in nanoseconds
(``make -C firmware/suite native-run``). :func:`native_suite_capture` runs it, turns the
dump into the events the appliance would report (``native_suite.events_from_stores``),
encodes them with the reference encoder (the gateware's exact byte stream) and writes a
capture file with ``CaptureWriter``: a capture whose latencies were measured, at a 1 GHz
"clock" (host nanoseconds), never invented.
"""

import re
import shutil
import subprocess
import time
from pathlib import Path

from latscope.capture.file import CaptureWriter
from latscope_defs.protocol import VERSION, StreamEncoder
from support.native_suite import SUITE, events_from_stores, read_native_dump

#: The native build stamps in host nanoseconds.
NATIVE_CLOCK_HZ = 1_000_000_000


def native_identity(board, stamp_shift=0):
    return {
        "version": VERSION,
        "clock_hz": NATIVE_CLOCK_HZ,
        "stamp_shift": stamp_shift,
        "marker_width": 16,
        "edge_count": 0,
        "bus_width": 32,
        "fifo_depth": 0,
        "board": board,
        "latency": {},
    }


def build_native_suite(samples, tests="all", marker="gpio", cflags=""):
    """Path of the native suite binary (built if needed); fails without gcc and make (a
    missing tool must not turn the report tests into skips that hide a regression).
    ``cflags``: more -D settings of the suite (SUITE_CFLAGS, suite.h). One build directory
    per test selection, sample count and settings, so that no two of them rebuild each
    other's binary, and one build at a time in it (`make test` runs two workers)."""
    import pytest

    from latscope.simulated.soc import build_lock

    if shutil.which("gcc") is None or shutil.which("make") is None:
        pytest.fail("needs gcc and make on PATH (the native suite is built for this test)")
    build = f"build/pytest-report-{tests.replace(',', '-').lower()}-{samples}"
    if cflags:  # "-DSUITE_CLK_WORK=1000u" -> "-dsuite_clk_work-1000u"
        build += "-" + "-".join(re.findall(r"\w+", cflags)).lower()
    with build_lock(SUITE / build):
        subprocess.run(
            [
                "make",
                "-s",
                "-C",
                str(SUITE),
                "native",
                f"MARKER={marker}",
                f"SAMPLES={samples}",
                f"TESTS={tests}",
                f"BUILD={build}",
                f"SUITE_CFLAGS={cflags}",
                "-j2",
            ],
            check=True,
            capture_output=True,
            text=True,
        )
    return SUITE / build / f"native-{marker}" / "suite"


def native_suite_capture(
    path,
    samples=100,
    *,
    board="native host port",
    tests="all",
    stamp_shift=0,
    conditions=None,
    chunk_size=64 * 1024,
    irq=None,
    cflags="",
):
    """Runs the native suite (``tests``: all or markers.Test names, comma-separated) and
    writes its markers as a capture file at ``path``. ``stamp_shift`` 1 says the stamps
    count half cycles of the clock (a DDR board's identity). ``conditions``: the metadata's
    load and cache (a dict; default: none recorded, as captures before them);
    ``chunk_size``: of the file's DATA chunks (a METADATA copy every 8 of them). ``irq``: IRQ
    settings recorded instead of the native run's (fields of a dict); ``cflags``: the suite
    built with these -D settings (SUITE_CFLAGS), recorded as the suite's ``cflags``."""
    binary = build_native_suite(samples, tests, cflags=cflags)
    dump = Path(path).with_suffix(".markers.txt")
    result = subprocess.run([str(binary), str(dump)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    events = events_from_stores(*read_native_dump(dump))
    encoder = StreamEncoder(marker_width=16)
    for stamp, source, value in events:
        encoder.event(stamp, source, value)
    encoder.flush()
    metadata = {
        "identity": native_identity(board, stamp_shift),
        "port": "native",
        "start_time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "irq": {
            "period": 50,
            "jitter_mask": 0,
            "width": 1,
            "enable": True,
            "one_shot": False,
            "active_low": False,
            **(irq or {}),
        },
        "suite": {
            "samples": samples,
            "tests": tests,
            "marker": "gpio",
            "kernel": "reference kernel, host port",
            **({"cflags": cflags} if cflags else {}),
        },
        "handler_markers": False,  # the host port's kernel writes none
        "test_info": "test suite run natively (host time stamps, ns)",
        **({"conditions": conditions} if conditions else {}),
    }
    with CaptureWriter(path, metadata, chunk_size=chunk_size, metadata_every=8) as writer:
        writer.write(encoder.take())
        writer.close({"events": len(events)})
    return events
