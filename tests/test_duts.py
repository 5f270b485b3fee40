"""Real-device ports of the test suite (docs/duts/), checked on the CI machine.

Linux (Raspberry Pi): the suite is cross-compiled for aarch64, and built natively and run
against a fake BCM2835 register block: `firmware/tests/gpiomem_watch.c` hands the program a
memfd in place of /dev/gpiomem and logs every store the program makes to it (the mapping is
made read-only, each store faults and is performed by the tracer). The log is checked store by
store against the BCM set/clear protocol of docs/duts/raspberry-pi.md, and the markers it
spells are analysed like any capture.

Cortex-M: every port cross-compiles (STM32F4, RP2040), and the suite and the smoke test run
under QEMU (netduinoplus2, an STM32F405) for functional correctness; QEMU gives no timing.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from latscope.analysis import analyze
from latscope.markers import Point, Test, decode
from latscope.parser import Events
from latscope.protocol import Source
from test_suite_native import check_pair

ROOT = Path(__file__).resolve().parent.parent
FIRMWARE = ROOT / "firmware"
SUITE = FIRMWARE / "suite"
SAMPLES = 30
PINS = 0x1FFFF            # GPIO0-15 = D0-D15, GPIO16 = STROBE
STROBE = 1 << 16
COST_MARKERS = 200        # markers of test NONE the Linux suite writes to time one marker

# Two Linux runs: call-duration tests in one thread (any scheduling rights), and tests that
# need SCHED_FIFO on one CPU (threads preempting each other, handler-thread markers between
# a thread's: the interrupt lock must keep the strobe shadow and the pins in step).
LINUX_RUNS = {
    "one-thread": ["SEO_A", "SEO_B", "SEO_C", "SEO_D", "SEO_E"],
    "realtime": ["IL_A", "TF_A", "TF_B", "TF_C", "SEO_A", "MQ"],
}


def need(*tools):
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"{', '.join(missing)} needed (scripts/setup.sh installs them)")


def make(directory, *args, timeout=300):
    result = subprocess.run(["make", "-s", "-C", str(directory), "-j2", *args],
                            capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


# ---------------------------------------------------------------------------- Linux

@pytest.fixture(scope="module")
def watcher(tmp_path_factory):
    need("gcc")
    binary = tmp_path_factory.mktemp("watch") / "gpiomem_watch"
    subprocess.run(["gcc", "-O1", "-Wall", "-Wextra", "-Werror", "-o", str(binary),
                    str(FIRMWARE / "tests" / "gpiomem_watch.c")], check=True)
    return binary


def read_store_log(path):
    """[(register, word)] of the GPSET0/GPCLR0 stores and {offset: word} of the others."""
    stores, others = [], {}
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        fields = line.split()
        if fields[0] in ("set", "clr"):
            stores.append((fields[0], int(fields[1], 16)))
        elif fields[0] == "w":
            others[int(fields[1], 16)] = int(fields[2], 16)
        else:
            raise AssertionError(f"store log line {number}: {line!r}")
    return stores, others


def markers_from_stores(stores):
    """The marker values the pins show at each strobe edge, checking the protocol: all pins
    cleared first; then two stores per marker, set and clear in either order, together
    covering the 17 pins exactly once; the first leaves the strobe alone, the second moves
    it (set when it rises, clear when it falls); the strobe alternates from low."""
    assert stores[0] == ("clr", PINS)
    pins = 0
    values = []
    body = stores[1:]
    assert len(body) % 2 == 0, "a marker of one store"
    for k in range(0, len(body), 2):
        (reg1, word1), (reg2, word2) = body[k], body[k + 1]
        assert reg1 != reg2 and word1 & word2 == 0 and word1 | word2 == PINS, (k, body[k:k + 2])
        assert not word1 & STROBE and word2 & STROBE, (k, body[k:k + 2])
        rising = not pins & STROBE
        assert reg2 == ("set" if rising else "clr"), (k, body[k:k + 2])
        for reg, word in ((reg1, word1), (reg2, word2)):
            pins = pins | word if reg == "set" else pins & ~word
        values.append(pins & 0xFFFF)
    return np.array(values, np.int64)


@pytest.fixture(scope="module")
def linux_builds(tmp_path_factory):
    need("gcc", "make")
    build = tmp_path_factory.mktemp("linux")
    binaries = {}
    for name, tests in LINUX_RUNS.items():
        # A THREAD heartbeat every 10^5 polls, not 1024: each traced store is a fault.
        make(SUITE, "linux", f"SAMPLES={SAMPLES}", f"TESTS={','.join(tests)}",
             f"BUILD={build / name}", "SUITE_CFLAGS=-DSUITE_IL_HEARTBEAT=100000u")
        binaries[name] = build / name / "linux-native" / "suite"
    return binaries


@pytest.fixture(scope="module", params=sorted(LINUX_RUNS))
def linux_run(request, linux_builds, watcher, tmp_path_factory):
    name = request.param
    log = tmp_path_factory.mktemp(name) / "stores.txt"
    env = dict(os.environ, LATSCOPE_CPU="0", LATSCOPE_SOFT_IRQ_US="200", LATSCOPE_GPIO="gpiomem")
    result = subprocess.run([str(watcher), str(log), str(linux_builds[name])], env=env,
                            capture_output=True, text=True, timeout=60)
    if name == "realtime" and "no SCHED_FIFO rights" in result.stderr:
        pytest.skip("this machine gives no SCHED_FIFO rights (CAP_SYS_NICE): the suite's "
                    "threads cannot preempt each other")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "suite: done" in result.stdout
    return name, result.stdout, read_store_log(log)


def test_linux_gpiomem_every_store(linux_run):
    """Pins set up as outputs, every marker two stores with the strobe's second, and the
    values the pins spell are exactly the suite's: the timing markers first, then each
    selected test between its START and END."""
    name, console, (stores, others) = linux_run
    assert others[0x00] == 0x09249249                       # GPFSEL0: GPIO0-9 outputs
    assert others[0x04] & 0x1FFFFF == 0x00049249            # GPFSEL1: GPIO10-16 outputs
    values = markers_from_stores(stores)
    tests, points, args = decode(values)
    assert np.all(tests[:COST_MARKERS] == Test.NONE)
    assert np.all(points[:COST_MARKERS] == Point.PARAM)
    assert args[:COST_MARKERS].tolist() == [i % 128 for i in range(COST_MARKERS)]
    assert re.search(r"linux: markers by gpiomem: \d+ ns per marker", console)
    starts = [Test(t).name for t, p in zip(tests, points) if p == Point.START]
    ends = [Test(t).name for t, p in zip(tests, points) if p == Point.END]
    assert starts == ends == LINUX_RUNS[name]


def test_linux_gpiomem_tables(linux_run):
    """The markers from the store log, analysed as a capture: every call-duration table has
    its samples, each pairing the right markers; the handler thread's markers (IL-a) sit
    between the interrupted thread's."""
    name, _, (stores, _) = linux_run
    values = markers_from_stores(stores)
    events = Events(np.arange(len(values), dtype=np.uint64) * 10,
                    np.full(len(values), int(Source.MARKER), np.uint8), values)
    tables = analyze(events, 1e9)
    markers = {10 * i: tuple(int(x) for x in m) for i, m in enumerate(zip(*decode(values)))}
    expected = {"SEO_A": "SEO-a-1", "SEO_B": "SEO-b-1", "SEO_C": "SEO-c-1", "SEO_D": "SEO-d-1",
                "SEO_E": "SEO-e-1", "TF_A": "TF-a-1", "TF_B": "TF-b-1", "TF_C": "TF-c-2",
                "MQ": "MQ-a-1"}
    for test in LINUX_RUNS[name]:
        if test == "IL_A":
            check_il_window(values)
            continue
        table = tables[expected[test]]
        assert len(table.samples) == SAMPLES and table.discarded == 0, test
        for k, (start, sample) in enumerate(zip(table.starts.tolist(), table.samples.tolist())):
            a, b = markers[start], markers[start + sample]
            assert (a[1], b[1]) == (Point.T1, Point.T2) and a[0] == b[0]
            check_pair(expected[test], k, a, b)


def check_il_window(values):
    """IL-a with software IRQs (no IRQ pin in CI): the handler thread's ENTRY/EXIT pairs
    come whole, numbered 0..SAMPLES-1 in order, between the polling thread's THREAD
    markers (two calls may follow each other when the thread did not run in between)."""
    tests, points, args = decode(values)
    il = [(int(p), int(a)) for t, p, a in zip(tests, points, args) if t == Test.IL_A]
    assert il[0] == (Point.START, 1) and il[-1] == (Point.END, 0)
    calls = [k for k, (p, _) in enumerate(il) if p == Point.ISR_ENTRY]
    assert len(calls) == SAMPLES
    for n, k in enumerate(calls):
        assert il[k:k + 2] == [(Point.ISR_ENTRY, n), (Point.ISR_EXIT, n)]
    others = {p for p, _ in il[1:-1]} - {Point.ISR_ENTRY, Point.ISR_EXIT}
    assert others == {Point.THREAD} and il[calls[-1] + 2] == (Point.THREAD, 0)


def test_linux_cross_compiles_for_the_pi(tmp_path):
    """The suite for a Raspberry Pi (aarch64, Debian's cross gcc), without libgpiod."""
    need("aarch64-linux-gnu-gcc", "make")
    make(SUITE, "linux", "CROSS=aarch64-linux-gnu-", f"BUILD={tmp_path}", "GPIOD=0")
    binary = tmp_path / "linux-aarch64-linux-gnu" / "suite"
    header = subprocess.run(["aarch64-linux-gnu-readelf", "-h", str(binary)],
                            capture_output=True, text=True, check=True).stdout
    assert "AArch64" in header and "ELF64" in header
