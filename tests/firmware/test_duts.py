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
from test_suite_native import check_pair

from latscope.analysis.pairing import analyze
from latscope.events import Events
from latscope.link.selftest import check_wiring, wiring_pattern
from latscope_defs.markers import KERNEL_TICK_ENTRY, KERNEL_TICK_EXIT, Point, Test, decode
from latscope_defs.protocol import Source
from support.load_markers import LOADS, build_suffix, check_load_markers
from support.suite_tables import SUITE_START_ORDER, suite_rules

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "firmware"
SUITE = FIRMWARE / "suite"
SAMPLES = 30
PINS = 0x1FFFF  # GPIO0-15 = D0-D15, GPIO16 = STROBE
STROBE = 1 << 16
COST_MARKERS = 200  # markers of test NONE the Linux suite writes to time one marker

# Two Linux runs: call-duration tests in one thread (any scheduling rights), and the whole
# suite, which needs SCHED_FIFO on one CPU (threads preempting each other, handler-thread
# markers between a thread's: the interrupt lock must keep the strobe shadow and the pins in
# step). The tracer runs on that CPU above the suite (gpiomem_watch --cpu), so a thread
# stopped at a traced store lets no less urgent one run; but a stop and continue puts a
# thread behind its equals, so the order among equal-priority threads (TSL-a, IDL-b-N>1,
# IDL-a) is the tracer's, and those tables are not checked here (test_suite_native.py checks
# their logic on the host port).
ALL_TESTS = SUITE_START_ORDER
LINUX_RUNS = {
    "one-thread": ["SEO_A", "SEO_B", "SEO_C", "SEO_D", "SEO_E"],
    "realtime": ALL_TESTS,
}
LINUX_SEO_F = 97  # BENCH_PRIO_COUNT - 1 of the Linux port
# The tables checked sample by sample, by test name: those of the tests whose order the
# tracer leaves alone (above), IDL-b with one waiter, none that starts at an IRQ edge.
LINUX_TABLES = {
    rule.test.name: name
    for rule, name in suite_rules(parameters={Test.IDL_B: (1,), Test.SEO_F: (LINUX_SEO_F,)})
    if rule.start != "irq" and rule.test not in (Test.IL_A, Test.TSL_A)
}


def need(*tools):
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"{', '.join(missing)} needed (scripts/setup.sh installs them)")


def make(directory, *args, timeout=300):
    result = subprocess.run(
        ["make", "-s", "-C", str(directory), "-j2", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


# ---------------------------------------------------------------------------- Linux


@pytest.fixture(scope="module")
def watcher(tmp_path_factory):
    need("gcc")
    binary = tmp_path_factory.mktemp("watch") / "gpiomem_watch"
    subprocess.run(
        [
            "gcc",
            "-O1",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-o",
            str(binary),
            str(FIRMWARE / "tests" / "gpiomem_watch.c"),
        ],
        check=True,
    )
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
        assert reg1 != reg2 and word1 & word2 == 0 and word1 | word2 == PINS, (k, body[k : k + 2])
        assert not word1 & STROBE and word2 & STROBE, (k, body[k : k + 2])
        rising = not pins & STROBE
        assert reg2 == ("set" if rising else "clr"), (k, body[k : k + 2])
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
        make(
            SUITE,
            "linux",
            f"SAMPLES={SAMPLES}",
            f"TESTS={','.join(sorted(set(tests)))}",
            f"BUILD={build / name}",
            "SUITE_CFLAGS=-DSUITE_IL_HEARTBEAT=100000u",
        )
        binaries[name] = build / name / "linux-native" / "suite"
    return binaries


@pytest.fixture(scope="module", params=sorted(LINUX_RUNS))
def linux_run(request, linux_builds, watcher, tmp_path_factory):
    name = request.param
    log = tmp_path_factory.mktemp(name) / "stores.txt"
    env = dict(os.environ, LATSCOPE_CPU="0", LATSCOPE_SOFT_IRQ_US="1000", LATSCOPE_GPIO="gpiomem")
    result = subprocess.run(
        [str(watcher), "--cpu", "0", str(log), str(linux_builds[name])],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if name == "realtime" and "no SCHED_FIFO rights" in result.stderr:
        pytest.skip(
            "this machine gives no SCHED_FIFO rights (CAP_SYS_NICE): the suite's "
            "threads cannot preempt each other"
        )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "suite: done" in result.stdout
    return name, result.stdout, read_store_log(log)


@pytest.mark.slow
def test_linux_gpiomem_every_store(linux_run):
    """Pins set up as outputs, every marker two stores with the strobe's second, and the
    values the pins spell are exactly the suite's: the timing markers first, then each
    selected test between its START and END."""
    name, console, (stores, others) = linux_run
    assert others[0x00] == 0x09249249  # GPFSEL0: GPIO0-9 outputs
    assert others[0x04] & 0x1FFFFF == 0x00049249  # GPFSEL1: GPIO10-16 outputs
    values = markers_from_stores(stores)
    tests, points, args = decode(values)
    assert np.all(tests[:COST_MARKERS] == Test.NONE)
    assert np.all(points[:COST_MARKERS] == Point.PARAM)
    assert args[:COST_MARKERS].tolist() == [i % 128 for i in range(COST_MARKERS)]
    assert re.search(r"linux: markers by gpiomem: \d+ ns per marker", console)
    assert "linux: marker path: gpiomem (" in console
    starts = [Test(t).name for t, p in zip(tests, points) if p == Point.START]
    ends = [Test(t).name for t, p in zip(tests, points) if p == Point.END]
    assert starts == ends == LINUX_RUNS[name]


@pytest.mark.slow
def test_linux_gpiomem_tables(linux_run):
    """The markers from the store log, analysed as a capture: every table whose order the
    tracer leaves alone (LINUX_TABLES) has its samples, each pairing the right markers; the
    handler thread's markers (IL-a) come in whole pairs between the interrupted thread's."""
    name, _, (stores, _) = linux_run
    values = markers_from_stores(stores)
    events = Events(
        np.arange(len(values), dtype=np.uint64) * 10,
        np.full(len(values), int(Source.MARKER), np.uint8),
        values,
    )
    tables = analyze(events, 1e9)
    markers = {10 * i: tuple(int(x) for x in m) for i, m in enumerate(zip(*decode(values)))}
    for test in sorted(set(LINUX_RUNS[name])):
        if test == "IL_A":
            check_il_window(values)
            continue
        if test not in LINUX_TABLES:
            continue
        table = tables[LINUX_TABLES[test]]
        assert len(table.samples) == SAMPLES and table.discarded == 0, test
        a_point = Point.ISR_EXIT if test == "IDL_B" else Point.T1
        for k, (start, sample) in enumerate(zip(table.starts.tolist(), table.samples.tolist())):
            a, b = markers[start], markers[start + sample]
            assert (a[1], b[1]) == (a_point, Point.T2) and a[0] == b[0], (test, k, a, b)
            check_pair(LINUX_TABLES[test], k, a, b)


def check_il_window(values):
    """IL-a with software IRQs (no IRQ pin in CI): the handler thread's ENTRY/EXIT pairs
    come whole, numbered 0, 1, ... in order, at least SAMPLES of them, between the polling
    thread's THREAD markers. Calls may follow each other when the thread did not run in
    between (on Linux raises queue up while a traced handler is slow; the thread ends the
    window when it has seen SAMPLES calls, however many there were by then, so a call that
    lands after its last look at the count is followed by END, not by THREAD)."""
    tests, points, args = decode(values)
    il = [(int(p), int(a)) for t, p, a in zip(tests, points, args) if t == Test.IL_A]
    assert il[0] == (Point.START, 1) and il[-1] == (Point.END, 0)
    calls = [k for k, (p, _) in enumerate(il) if p == Point.ISR_ENTRY]
    assert len(calls) >= SAMPLES
    for n, k in enumerate(calls):
        assert il[k : k + 2] == [(Point.ISR_ENTRY, n % 128), (Point.ISR_EXIT, n % 128)]
    others = {p for p, _ in il[1:-1]} - {Point.ISR_ENTRY, Point.ISR_EXIT}
    assert others == {Point.THREAD}
    # The thread's last THREAD marker follows the SAMPLES-th call (it ends the window once it
    # has seen that many); after it, only whole calls raised before the line was disabled.
    last_thread = max(k for k, (p, _) in enumerate(il) if p == Point.THREAD)
    assert il[last_thread] == (Point.THREAD, 0) and last_thread > calls[SAMPLES - 1] + 1
    assert {p for p, _ in il[last_thread + 1 : -1]} <= {Point.ISR_ENTRY, Point.ISR_EXIT}


@pytest.mark.slow
def test_linux_cross_compiles_for_the_pi(tmp_path):
    """The suite and the self-test's wiring walk for a Raspberry Pi (aarch64, Debian's cross
    gcc), without libgpiod."""
    need("aarch64-linux-gnu-gcc", "make")
    make(SUITE, "linux", "wiring-linux", "CROSS=aarch64-linux-gnu-", f"BUILD={tmp_path}", "GPIOD=0")
    for name in ("suite", "wiring_walk"):
        assert "libgpiod" not in aarch64_elf(tmp_path / "linux-aarch64-linux-gnu" / name)


def aarch64_elf(binary):
    """readelf's header and dynamic section of an aarch64 ELF64 program (asserted so)."""
    text = subprocess.run(
        ["aarch64-linux-gnu-readelf", "-h", "-d", str(binary)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "AArch64" in text and "ELF64" in text
    return text


#: v1-only calls of the IRQ path (gpiod_compat.c): v2 requests edges with
#: gpiod_chip_request_lines and reads them with gpiod_line_request_read_edge_events.
GPIOD_V1_IRQ_CALLS = ("gpiod_line_request_rising_edge_events", "gpiod_line_event_read")


@pytest.mark.slow
def test_linux_cross_compiles_against_debian_libgpiod_v1(tmp_path):
    """The suite and the wiring walk for a Raspberry Pi with the IRQ path (GPIOD=1), linked
    against Debian bookworm's libgpiod v1 for arm64 (libgpiod-dev:arm64, which scripts/setup.sh
    installs through multiarch): aarch64 programs that need v1's shared library (soname
    libgpiod.so.2; v2's is libgpiod.so.3) for v1's edge-event calls. Under qemu-user, with
    that library from the arm64 packages, the suite starts and names its marker path."""
    need("aarch64-linux-gnu-gcc", "make", "qemu-aarch64")
    make(SUITE, "linux", "wiring-linux", "CROSS=aarch64-linux-gnu-", "GPIOD=1", f"BUILD={tmp_path}")
    build = tmp_path / "linux-aarch64-linux-gnu"
    for name in ("suite", "wiring_walk"):
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+)\]", aarch64_elf(build / name))
        assert "libgpiod.so.2" in needed, (name, needed)
    table = subprocess.run(
        ["aarch64-linux-gnu-nm", "-D", "--undefined-only", str(build / "suite")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for symbol in GPIOD_V1_IRQ_CALLS:
        assert re.search(rf" U {symbol}$", table, re.M), symbol
    line = marker_path_line(build / "suite", runner=["qemu-aarch64"])
    assert line.startswith("linux: marker path: libgpiod v1 on /nonexistent, the slower fallback")


GPIOD_V2_SRC = ROOT / ".cache" / "gpiod-sdist"  # scripts/setup.sh: PyPI gpiod 2.5.0's sources


def marker_path_line(binary, runner=()):
    """The marker path the Linux suite announces when /dev/gpiomem cannot be opened (run
    through runner: an emulator for another architecture's program)."""
    result = subprocess.run(
        [*runner, str(binary)],
        env=dict(
            os.environ, LATSCOPE_GPIOMEM="/nonexistent/gpiomem", LATSCOPE_GPIOCHIP="/nonexistent"
        ),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    return result.stdout.splitlines()[0]


@pytest.mark.slow
def test_linux_builds_against_libgpiod_v1_and_v2(tmp_path):
    """The Linux port against the system's libgpiod (Debian bookworm: v1) and against a real
    libgpiod v2 built from its sources (GPIOD_SRC), natively and for a Raspberry Pi (aarch64,
    with the IRQ path): each build names its API when it falls back from a missing
    /dev/gpiomem, and the v2 builds link v2's calls (gpiod_chip_request_lines and the edge
    events' gpiod_line_request_read_edge_events exist only in v2)."""
    need("gcc", "aarch64-linux-gnu-gcc", "make")
    if not (GPIOD_V2_SRC / "libgpiod-version.txt").is_file():
        pytest.fail(f"{GPIOD_V2_SRC} missing (scripts/setup.sh fetches libgpiod v2's sources)")
    make(SUITE, "linux", f"BUILD={tmp_path / 'v1'}")
    line = marker_path_line(tmp_path / "v1" / "linux-native" / "suite")
    assert line.startswith("linux: marker path: libgpiod v1 on /nonexistent, the slower fallback")
    assert "/nonexistent/gpiomem: No such file or directory" in line
    for cross, nm in (("", "nm"), ("aarch64-linux-gnu-", "aarch64-linux-gnu-nm")):
        build = tmp_path / f"v2{cross}"
        make(
            SUITE,
            "linux",
            "wiring-linux",
            f"CROSS={cross}",
            f"GPIOD_SRC={GPIOD_V2_SRC}",
            f"BUILD={build}",
        )
        binary = build / f"linux-{cross.rstrip('-') or 'native'}" / "suite"
        table = subprocess.run([nm, str(binary)], capture_output=True, text=True, check=True).stdout
        for symbol in ("gpiod_chip_request_lines", "gpiod_line_request_read_edge_events"):
            assert re.search(rf" T {symbol}$", table, re.M), symbol
        if not cross:
            assert marker_path_line(binary).startswith("linux: marker path: libgpiod v2 on")


@pytest.mark.slow
def test_linux_builds_with_every_load(tmp_path):
    """The suite on Linux builds with every load profile (firmware/ports/linux/load_linux.c),
    natively and for a Raspberry Pi (aarch64), and refuses the caches off (user space
    cannot)."""
    need("gcc", "aarch64-linux-gnu-gcc", "make")
    for load in LOADS:
        for cross in ("", "aarch64-linux-gnu-"):
            make(SUITE, "linux", f"LOAD={load}", f"CROSS={cross}", "GPIOD=0", f"BUILD={tmp_path}")
            target = cross.rstrip("-") or "native"
            assert (tmp_path / f"linux-{target}{build_suffix(load)}" / "suite").is_file()
    refused = subprocess.run(
        ["make", "-s", "-C", str(SUITE), "linux", "CACHE=off", f"BUILD={tmp_path}"],
        capture_output=True,
        text=True,
    )
    assert refused.returncode != 0 and "CACHE=off" in refused.stderr


@pytest.mark.slow
@pytest.mark.parametrize("load", ["bus", "irq-high", "irq-low"])
def test_linux_load_runs(load, watcher, tmp_path):
    """The Linux port's load hardware in a run under the store tracer (the SEO tests, one
    thread, any scheduling rights): the suite ends, and the irq profiles' handler writes its
    calls between the suite's markers (raised 1000 times a second here: each traced store
    costs a fault)."""
    need("gcc", "make")
    tests = LINUX_RUNS["one-thread"]
    rate = None if load == "bus" else 1000
    make(
        SUITE,
        "linux",
        f"SAMPLES={SAMPLES}",
        f"TESTS={','.join(tests)}",
        f"LOAD={load}",
        f"LOAD_PARAM={rate or ''}",
        f"BUILD={tmp_path}",
    )
    log = tmp_path / "stores.txt"
    binary = tmp_path / f"linux-native{build_suffix(load, rate)}" / "suite"
    result = subprocess.run(
        [str(watcher), str(log), str(binary)],
        env=dict(os.environ, LATSCOPE_GPIO="gpiomem"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0 and "suite: done" in result.stdout, result.stdout + result.stderr
    # No LATSCOPE_CPU here: the port picks one CPU itself and says which.
    assert re.search(r"linux: LATSCOPE_CPU unset: every thread on CPU \d+, the last", result.stdout)
    values = markers_from_stores(read_store_log(log)[0])
    check_load_markers(values, load)
    tests_of, points, _ = decode(values)
    assert [Test(t).name for t, p in zip(tests_of, points) if p == Point.START] == tests


@pytest.mark.slow
@pytest.mark.parametrize("test", ["IL_A", "IDL_B"])
def test_linux_irq_unwired_times_out(test, watcher, tmp_path):
    """The suite on Linux with no IRQ source at all (no GPIO line, UIO device or software
    raise: the appliance's IRQ unwired) stops its first IRQ test after SUITE_IRQ_TIMEOUT_MS
    without a handler call, saying what it expected on which line and the likely causes,
    with exit code 2: a message, not a hang."""
    need("gcc", "make")
    make(SUITE, "linux", f"SAMPLES={SAMPLES}", f"TESTS={test}", f"BUILD={tmp_path}")
    env = dict(os.environ, LATSCOPE_CPU="0", LATSCOPE_GPIO="gpiomem")
    for name in ("LATSCOPE_SOFT_IRQ_US", "LATSCOPE_IRQ0_GPIO", "LATSCOPE_IRQ0_UIO"):
        env.pop(name, None)
    result = subprocess.run(
        [str(watcher), "--cpu", "0", str(tmp_path / "stores.txt")]
        + [str(tmp_path / "linux-native" / "suite")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if "no SCHED_FIFO rights" in result.stderr:
        pytest.skip("no SCHED_FIFO rights: the IRQ tests' threads cannot preempt main")
    name = {"IL_A": "IL-a-1", "IDL_B": "IDL-b-1"}[test]
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"suite: FAIL {name}: no interrupt for 1000 ms (0 handler calls of {SAMPLES})" in (
        result.stdout
    )
    assert "expected: rising edges of the appliance's IRQ on no line: LATSCOPE_IRQ0_GPIO" in (
        result.stdout
    )
    assert "likely: the IRQ wire not connected" in result.stdout
    assert "suite: done" not in result.stdout


@pytest.mark.slow
def test_linux_wiring_walk_every_store(watcher, tmp_path):
    """The self-test's wiring program on the Linux marker port (firmware/tools/
    wiring_linux.c), run against the fake register block: its stores follow the port's
    set/clear protocol, and the pins at its 32 strobe edges are the host's wiring_pattern()."""
    need("gcc", "make")
    make(SUITE, "wiring-linux", f"BUILD={tmp_path}")
    log = tmp_path / "stores.txt"
    result = subprocess.run(
        [str(watcher), str(log), str(tmp_path / "linux-native" / "wiring_walk")],
        env=dict(os.environ, LATSCOPE_GPIO="gpiomem"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    stores, _ = read_store_log(log)
    values = markers_from_stores(stores).tolist()
    assert values == wiring_pattern() and check_wiring(values).ok


# ---------------------------------------------------------------------------- Cortex-M

CM_SEO_F_MAX = 255  # the NUCLEO-F446RE's SEO-f (128 KiB of RAM), also under QEMU
#: RCC_PLLCFGR of the F446's 180 MHz from the HSI (ports/cortex-m/clock_stm32f4.h): M 8,
#: N 180, P 2, Q 8, R 2; QEMU logs the store (its RCC is an unimplemented device).
PLLCFGR_STORE = "RCC: unimplemented device write (size 4, offset 0x004, value 0x28002d08)"
QEMU = [
    "qemu-system-arm",
    "-machine",
    "netduinoplus2",
    "-nographic",
    "-monitor",
    "none",
    "-serial",
    "none",
    "-semihosting-config",
    "enable=on,target=native",
]
UNIMP_WRITE = re.compile(
    r"^(GPIO[A-I]): unimplemented device write \(size 4, offset (0x[0-9a-f]+), "
    r"value (0x[0-9a-f]+)\)$"
)
BSRR = 0x18


def need_arm():
    need("arm-none-eabi-gcc", "make")
    if not Path("/usr/lib/picolibc/arm-none-eabi/picolibc.specs").exists():
        pytest.fail("picolibc-arm-none-eabi needed (scripts/setup.sh installs it)")


# QEMU's -d int lines for the SysTick exception (number 15): taken, and returned from.
SYSTICK_TAKEN = "...taking pending nonsecure exception 15"
SYSTICK_RETURN = re.compile(r"^Exception return: magic PC (?:0x)?[0-9a-f]+ previous exception 15$")


def bsrr_stores(log, systicks=None):
    """[(port, word)] of the BSRR stores QEMU logged (its GPIO ports are unimplemented
    devices: -d unimp logs every access), after the start-up configuration. ``systicks``: a
    list that gets, per SysTick exception of a -d unimp,int log (one log, in execution
    order), the numbers of the stores made before it was taken and before it returned."""

    def bsrr(line):
        match = UNIMP_WRITE.match(line)
        if match and int(match[2], 16) == BSRR:
            return match[1], int(match[3], 16)
        return None

    return logged_stores(log, bsrr, systicks)


def logged_stores(log, store_of, systicks=None):
    """[store_of(line)] of the lines of QEMU's log for which it is not None, and the
    SysTick exceptions among them (``systicks``: as bsrr_stores)."""
    stores = []
    for line in Path(log).read_text().splitlines():
        store = store_of(line)
        if store is not None:
            stores.append(store)
        elif systicks is not None and line == SYSTICK_TAKEN:
            systicks.append([len(stores), None])
        elif systicks is not None and SYSTICK_RETURN.match(line):
            assert systicks and systicks[-1][1] is None, "a SysTick return without its entry"
            systicks[-1][1] = len(stores)
    return stores


def check_tick_markers(values, systicks, first_store=2, stores_per_marker=2):
    """The kernel's tick markers (ports/cortex-m/arch_port.h): every SysTick exception QEMU
    took writes exactly KERNEL/TICK_ENTRY then KERNEL/TICK_EXIT, and no tick marker is
    written outside a SysTick. Marker k is the ``stores_per_marker`` stores from
    ``first_store + k * stores_per_marker`` on (the GPIO port: 2 + 2k and 3 + 2k,
    stm32_markers)."""
    tests, points, _ = decode(values)
    tick = (tests == Test.KERNEL) & np.isin(points, [KERNEL_TICK_ENTRY, KERNEL_TICK_EXIT])
    assert len(systicks) > 0 and systicks[-1][1] is not None
    inside = np.zeros(len(values), bool)
    n = stores_per_marker
    for taken, returned in systicks:
        # the markers whole inside: first store at or after taken, last before returned
        first = max(0, -(-(taken - first_store) // n))
        stop = (returned - first_store) // n
        assert [(int(tests[k]), int(points[k])) for k in range(first, stop)] == [
            (Test.KERNEL, KERNEL_TICK_ENTRY),
            (Test.KERNEL, KERNEL_TICK_EXIT),
        ], (taken, returned)
        inside[first:stop] = True
    assert not np.any(tick & ~inside), "a tick marker outside a SysTick"


def stm32_markers(stores):
    """Marker values from the STM32 port's stores, checking the protocol of
    suite/stm32f4/ls_marker_port.h: all marker pins low at start; then per marker GPIOB's
    BSRR with all 16 pins set or reset, then GPIOC's with PC11 (D11) and PC8 (STROBE) set or
    reset; the strobe changes with every marker, from low."""
    pc = (1 << 8) | (1 << 11)
    assert stores[:2] == [("GPIOB", 0xFFFF << 16), ("GPIOC", pc << 16)]
    body = stores[2:]
    assert len(body) % 2 == 0
    strobe = 0
    values = []
    for k in range(0, len(body), 2):
        (port_b, b), (port_c, c) = body[k], body[k + 1]
        assert (port_b, port_c) == ("GPIOB", "GPIOC"), (k, body[k : k + 2])
        assert b & 0xFFFF ^ (b >> 16) == 0xFFFF, (k, hex(b))
        assert c & 0xFFFF ^ (c >> 16) == pc and not c & ~(pc | pc << 16), (k, hex(c))
        assert (c >> 8) & 1 == strobe ^ 1, (k, hex(c))
        strobe ^= 1
        values.append(b & 0xFFFF & ~(1 << 11) | c & (1 << 11))
    return np.array(values, np.int64)


def check_cm_tables(values, source=Source.MARKER):
    """The suite's tables from the markers (``values``: the events' values, of ``source``):
    every one that needs no IRQ edge (QEMU raises the line in software), with the samples
    and pairs of the native run."""
    events = Events(
        np.arange(len(values), dtype=np.uint64) * 10,
        np.full(len(values), int(source), np.uint8),
        values,
    )
    tables = analyze(events, 1e9)
    marker_values = np.asarray(values, np.int64) & 0xFFFF
    markers = {10 * i: tuple(int(x) for x in m) for i, m in enumerate(zip(*decode(marker_values)))}
    expected = {
        name: (rule.start, rule.end)
        for rule, name in suite_rules(parameters={Test.SEO_F: (CM_SEO_F_MAX,)})
        if rule.start != "irq"
    }
    assert {name for name in tables if not name.startswith("IL-")} == set(expected)
    for name, (a_point, b_point) in expected.items():
        table = tables[name]
        assert len(table.samples) == SAMPLES and table.discarded == 0, name
        for k, (start, sample) in enumerate(zip(table.starts.tolist(), table.samples.tolist())):
            a, b = markers[start], markers[start + sample]
            assert (a[1], b[1]) == (a_point, b_point) and a[0] == b[0], (name, k, a, b)
            check_pair(name, k, a, b)
    check_il_window(marker_values)


@pytest.mark.qemu
@pytest.mark.parametrize("clock", ["full", "reset"])
@pytest.mark.parametrize("board", ["qemu-stm32", "qemu-m0plus"])
def test_cortex_m_under_qemu(board, clock, tmp_path):
    """The smoke test and the suite on the Cortex-M port under QEMU (netduinoplus2), with
    the STM32 board code compiled for the M4 and for the RP2040's M0+ (ARMv6-M), at the full
    clock (180 MHz set-up: QEMU logs its RCC stores, the PLL's among them) and at the reset
    clock (no RCC store): every smoke case passes, the suite runs to its end, and QEMU's log
    of the GPIO stores spells the suite's markers. Functional only: QEMU's time is not the
    board's."""
    need_arm()
    need("qemu-system-arm")
    make(FIRMWARE, "cortex-m", f"CM_BOARD={board}", f"CM_CLOCK={clock}", f"BUILD={tmp_path}")
    suffix = "-reset-clock" if clock == "reset" else ""
    smoke = subprocess.run(
        [*QEMU, "-kernel", str(tmp_path / f"cm-{board}{suffix}" / "bench_smoke.elf")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    console = smoke.stdout + smoke.stderr
    assert smoke.returncode == 0, console[-3000:]
    assert "SUMMARY bench_smoke: passed=8 failed=0" in console
    assert int(re.search(r"tick wake-ups during the churn: (\d+)", console)[1]) > 0

    _, _, log = cm_suite_under_qemu(board, tmp_path, clock=clock)
    assert (PLLCFGR_STORE in log) == (clock == "full")
    assert ("RCC: unimplemented device write (size 4, offset 0x004," in log) == (clock == "full")


def cm_suite_under_qemu(board, build, load="none", clock="full"):
    """Builds the suite for a QEMU board (with a load profile) and runs it under QEMU with
    its GPIO stores and exceptions logged: it runs to its end, every SysTick writes its tick
    markers, the tables are those of the native run. Gives the console, the marker values
    and QEMU's log."""
    make(
        SUITE,
        "cortex-m",
        f"CM_BOARD={board}",
        f"SAMPLES={SAMPLES}",
        f"LOAD={load}",
        f"CM_CLOCK={clock}",
        f"BUILD={build}",
    )
    log = build / "unimp.log"
    suffix = "-reset-clock" if clock == "reset" else ""
    console = suite_under_qemu(
        build / f"cm-{board}{suffix}-gpio{build_suffix(load)}" / "suite.elf", log
    )
    systicks = []
    values = stm32_markers(bsrr_stores(log, systicks))
    check_tick_markers(values, systicks)
    check_cm_tables(values)
    return console, values, log.read_text()


def suite_under_qemu(elf, log):
    """Runs the suite ``elf`` under QEMU with its stores to unimplemented devices and its
    exceptions logged to ``log``: it runs to its end. Gives the console."""
    run = subprocess.run(
        [*QEMU, "-d", "unimp,int", "-D", str(log), "-kernel", str(elf)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    console = run.stdout + run.stderr
    assert run.returncode == 0 and "suite: done" in console, console[-3000:]
    return console


#: A store to DMA2 stream 5's configuration with EN set (board_stm32f4.c, the bus profile).
DMA2_ENABLE = re.compile(
    r"^DMA2: unimplemented device write \(size 4, offset 0x0*88, "
    r"value (0x[0-9a-f]+)\)$",
    re.M,
)


@pytest.mark.qemu
@pytest.mark.parametrize(
    "board,load",
    [("qemu-stm32", load) for load in LOADS if load != "none"] + [("qemu-m0plus", "mixed")],
)
def test_cortex_m_loads_under_qemu(board, load, tmp_path):
    """The suite under each load profile on the Cortex-M port under QEMU runs to its end
    with the tables and tick markers of the idle run, and its markers hold the load's: its
    threads' progress, its second interrupt line's handler calls (under QEMU the busy-wait
    hook raises that line, TIM2 standing still), and for the bus profile the stores that
    start DMA2 (which QEMU does not model: it logs them)."""
    need_arm()
    need("qemu-system-arm")
    console, values, log = cm_suite_under_qemu(board, tmp_path, load)
    assert "suite: load " in console
    check_load_markers(values, load)
    enables = [int(value, 16) for value in DMA2_ENABLE.findall(log)]
    assert any(value & 1 for value in enables) == (load in ("bus", "mixed")), enables


@pytest.mark.slow
@pytest.mark.parametrize("board", ["stm32f4", "rp2040"])
def test_cortex_m_boards_build_with_loads(board, tmp_path):
    """The boards' load hardware code (TIM2 and DMA2 on the Nucleo, the timer alarm and
    paced DMA on the Pico) builds with every profile at once; the caches-off setting is
    refused (these cores have no cache to turn off)."""
    need_arm()
    make(SUITE, "cortex-m", f"CM_BOARD={board}", "LOAD=mixed", f"BUILD={tmp_path}")
    table = symbols(tmp_path / f"cm-{board}-gpio-mixed" / "suite.elf")
    assert {"load_port_bus_start", "load_port_irq_start", "load_port_irq_ack"} <= set(table)
    refused = subprocess.run(
        [
            "make",
            "-s",
            "-C",
            str(SUITE),
            "cortex-m",
            f"CM_BOARD={board}",
            "CACHE=off",
            f"BUILD={tmp_path}",
        ],
        capture_output=True,
        text=True,
    )
    assert refused.returncode != 0 and "CACHE=off" in refused.stderr


@pytest.mark.qemu
@pytest.mark.parametrize("board", ["qemu-stm32", "qemu-m0plus"])
def test_cortex_m_wiring_walk_under_qemu(board, tmp_path):
    """The self-test's wiring program on the Cortex-M port (firmware/tools/wiring_cm.c, the
    STM32 board code for the M4 and the M0+): it exits 0, and QEMU's log of its GPIO stores
    spells the host's wiring_pattern(), one strobe edge per marker."""
    need_arm()
    need("qemu-system-arm")
    make(SUITE, "wiring-cortex-m", f"CM_BOARD={board}", f"BUILD={tmp_path}")
    log = tmp_path / "unimp.log"
    run = subprocess.run(
        [
            *QEMU,
            "-d",
            "unimp",
            "-D",
            str(log),
            "-kernel",
            str(tmp_path / f"cm-{board}-gpio" / "wiring_walk.elf"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0 and "wiring: done" in run.stdout + run.stderr
    values = stm32_markers(bsrr_stores(log)).tolist()
    assert values == wiring_pattern() and check_wiring(values).ok


def symbols(elf):
    out = subprocess.run(
        ["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True
    ).stdout
    return {
        parts[2]: int(parts[0], 16) for parts in map(str.split, out.splitlines()) if len(parts) == 3
    }


@pytest.mark.slow
@pytest.mark.parametrize("board", ["stm32f4", "rp2040"])
def test_cortex_m_boards_cross_compile(board, tmp_path):
    """The suite and the smoke test for the Nucleo (flash image) and the Pico (SRAM image,
    entered at 0x20000000, with its UF2): the vector table where the core looks for it."""
    need_arm()
    make(FIRMWARE, "cortex-m", f"CM_BOARD={board}", f"BUILD={tmp_path}")
    make(SUITE, "cortex-m", "wiring-cortex-m", f"CM_BOARD={board}", f"BUILD={tmp_path}")
    check_wiring_image(tmp_path / f"cm-{board}-gpio", board)
    elf = tmp_path / f"cm-{board}-gpio" / "suite.elf"
    header = subprocess.run(
        ["arm-none-eabi-readelf", "-h", "-A", str(elf)], capture_output=True, text=True, check=True
    ).stdout
    assert "ARM" in header and "ELF32" in header
    table = symbols(elf)
    # suite_end is one marker: the strobe shadow's store plus the port's device stores
    # (STM32: GPIOB and GPIOC BSRR; RP2040: SIO GPIO_OUT_XOR), between PRIMASK save/restore.
    code = subprocess.run(
        ["arm-none-eabi-objdump", "-d", "--no-show-raw-insn", "--disassemble=suite_end", str(elf)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    stores = re.findall(r"\bstr(?:\.w)?\s", code)
    assert len(stores) == (3 if board == "stm32f4" else 2), code
    assert "cpsid" in code and "msr" in code and "bl" not in code.split("<suite_end>:")[1]
    if board == "stm32f4":
        assert table["__interrupt_vector"] == 0x0800_0000
        assert "Tag_CPU_arch: v7E-M" in header
        assert table["__stack"] == 0x2000_0000 + 128 * 1024  # the F446RE's SRAM1 + SRAM2
        return
    assert "Tag_CPU_arch: v6S-M" in header
    assert table["rp2040_entry"] == 0x2000_0000 and table["__interrupt_vector"] % 256 == 0
    check_uf2(elf.parent / "suite")


@pytest.mark.slow
def test_cortex_m_f401_and_clock_settings(tmp_path):
    """The NUCLEO-F401RE's build: its 96 KiB of RAM, at its reset clock only (the full-clock
    set-up is the F446's 180 MHz, which the F401 cannot run: refused); the ST-LINK's clock
    (full-hse) is refused for the Pico."""
    need_arm()
    make(SUITE, "cortex-m", "CM_BOARD=stm32f401", "CM_CLOCK=reset", f"BUILD={tmp_path}")
    table = symbols(tmp_path / "cm-stm32f401-reset-clock-gpio" / "suite.elf")
    assert table["__interrupt_vector"] == 0x0800_0000
    assert table["__stack"] == 0x2000_0000 + 96 * 1024
    for board, clock in (("stm32f401", "full"), ("rp2040", "full-hse")):
        refused = subprocess.run(
            ["make", "-s", "-C", str(SUITE), "cortex-m", f"CM_BOARD={board}", f"CM_CLOCK={clock}"],
            capture_output=True,
            text=True,
        )
        assert refused.returncode != 0 and "CM_CLOCK" in refused.stderr, (board, clock)


def check_wiring_image(directory, board):
    """The wiring program for a board: entered where the suite is (the Nucleo's flash
    vector table, the Pico's SRAM entry), and for the Pico its UF2."""
    table = symbols(directory / "wiring_walk.elf")
    if board == "stm32f4":
        assert table["__interrupt_vector"] == 0x0800_0000
    else:
        assert table["rp2040_entry"] == 0x2000_0000
        check_uf2(directory / "wiring_walk")


def check_uf2(stem):
    """stem.uf2 carries stem.bin at 0x20000000, in RP2040 UF2 blocks."""
    image = stem.with_suffix(".bin").read_bytes()
    uf2 = stem.with_suffix(".uf2").read_bytes()
    assert len(uf2) == 512 * -(-len(image) // 256)
    payload = b""
    for n in range(len(uf2) // 512):
        block = uf2[512 * n : 512 * (n + 1)]
        magic0, magic1, flags, address, size, number, count, family = np.frombuffer(
            block[:32], "<u4"
        ).tolist()
        assert (magic0, magic1, flags, family) == (0x0A324655, 0x9E5D5157, 0x2000, 0xE48BFF56)
        assert (address, size, number, count) == (0x2000_0000 + 256 * n, 256, n, len(uf2) // 512)
        assert block[-4:] == (0x0AB16F30).to_bytes(4, "little")
        payload += block[32 : 32 + 256]
    assert payload[: len(image)] == image


# ---------------------------------------------------------------------------- docs


@pytest.mark.parametrize(
    "dut,page", [("raspberry-pi", "raspberry-pi.md"), ("nucleo", "nucleo.md"), ("pico", "pico.md")]
)
def test_wiring_tables_are_current(dut, page):
    """docs/duts/<page> has the wiring table to every board, as the board descriptions give
    it (python -m latscope_boards.duts prints them)."""
    from latscope_boards import BOARDS, get_board
    from latscope_boards.duts import wiring_table

    text = (ROOT / "docs" / "duts" / page).read_text()
    for name in BOARDS:
        assert wiring_table(dut, get_board(name)) in text, f"docs/duts/{page}: {name} table stale"
