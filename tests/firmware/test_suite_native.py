"""The test suite's marker logic, run natively: firmware/suite built with the reference kernel's
host port (`make -C firmware/suite native`), its recorded markers and simulated IRQ edges turned
into the host's ``Events`` and analysed with ``latscope.analysis.pairing.analyze``.

Checked: every table of docs/tests.md exists with exactly the samples the suite promises, every
sample pairs the markers it should (the right thread, the right iteration, the right handler
call), and the GPIO variant's strobe changes on every store, including when an ISR writes
markers between a thread's. Latencies are not checked: host time stamps mean nothing here.

The same checks also run on the RV32 build on the simulated SoC (built if needed), from the
harness's ground-truth log; tests/system/test_ground_truth.py does it through the appliance.
"""

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from latscope.analysis.pairing import analyze
from latscope.events import Events
from latscope_defs.markers import Point, Test, decode, encode
from latscope_defs.protocol import Source
from support.bringup import bringup_build
from support.native_suite import SUITE, events_from_stores, read_native_dump
from support.suite_tables import SUITE_START_ORDER, suite_rules

SAMPLES = 30  # SUITE_SAMPLES of the short suite: also OBJ and CLK samples
GPIO_STROBE = 1 << 16

# Every table of the suite and the markers its samples pair (A marker, B marker); "irq" = edge.
# (The ILH tables, which need the kernel's handler marker: check_handler_tables.)
EXPECTED = {name: (rule.start, rule.end) for rule, name in suite_rules(handler=False)}


def read_truth_log(path):
    """Marker stores and IRQ edges of the SoC harness's ground-truth log."""
    stamps, kinds, values = [], [], []
    for line in Path(path).read_text().splitlines():
        fields = line.split()
        if line.startswith("#") or len(fields) < 3:
            continue
        if fields[1] == "gpio":
            kind, value = "gpio", int(fields[2], 16)
        elif fields[1] == "trace":
            kind, value = "bus", int(fields[3], 16)
        elif fields[1] == "irq":
            kind, value = "irq", int(fields[2])
        else:
            continue
        stamps.append(int(fields[0]))
        kinds.append(kind)
        values.append(value)
    return stamps, kinds, values


def make_suite(target, marker, build, extra=()):
    subprocess.run(
        [
            "make",
            "-s",
            "-C",
            str(SUITE),
            target,
            f"MARKER={marker}",
            f"SAMPLES={SAMPLES}",
            f"BUILD={build}",
            "-j2",
            *extra,
        ],
        check=True,
        capture_output=True,
        text=True,
    )


@pytest.fixture(scope="module", params=["gpio", "bus"])
def native_run(request, tmp_path_factory):
    if shutil.which("gcc") is None or shutil.which("make") is None:
        pytest.fail("gcc and make are needed (make setup installs them)")
    marker = request.param
    build = "build/pytest"
    make_suite("native", marker, build)
    dump = tmp_path_factory.mktemp(marker) / "markers.txt"
    result = subprocess.run(
        [str(SUITE / build / f"native-{marker}" / "suite"), str(dump)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "suite: done" in result.stdout
    stamps, kinds, values = read_native_dump(dump)
    return marker, kinds, values, events_from_stores(stamps, kinds, values)


def marker_at(events):
    """stamp -> (test, point, arg) of every marker."""
    is_marker = np.isin(events.source, [int(Source.MARKER), int(Source.BUS)])
    stamps = events.stamp[is_marker].astype(np.int64)
    tests, points, args = decode(events.value[is_marker].astype(np.int64) & 0xFFFF)
    return {int(s): (int(t), int(p), int(a)) for s, t, p, a in zip(stamps, tests, points, args)}


def pairs(table, markers):
    """(A marker or None for an IRQ edge, B marker) of every sample of a table."""
    out = []
    for start, sample in zip(table.starts.tolist(), table.samples.tolist()):
        assert sample > 0
        out.append((markers.get(start), markers[start + sample]))
    return out


def check_suite(events, *, obj_samples, clk_samples, exact):
    """The checks shared by the native and the RV32 run. exact: every table has exactly the
    promised samples (native); else the IRQ tables may have one more (an edge in the few
    cycles between the last sample and the line's disable)."""
    tables = analyze(events, 1e9)
    markers = marker_at(events)
    check_handler_tables(tables, markers)
    tables = {name: table for name, table in tables.items() if not name.startswith("ILH-")}
    assert set(tables) == set(EXPECTED)
    for name, (a_point, b_point) in EXPECTED.items():
        table = tables[name]
        wanted = (
            SAMPLES
            if name[:2] in ("IL", "ID", "TS")
            else clk_samples
            if name.startswith("CLK")
            else obj_samples
        )
        got = len(table.samples)
        assert got == wanted or (not exact and name.startswith("IL") and got == wanted + 1), (
            name,
            got,
            wanted,
        )
        assert table.discarded == 0
        for k, (a, b) in enumerate(pairs(table, markers)):
            assert b[1] == b_point, (name, k, b)
            if a_point == "irq":
                assert a is None, (name, k, a)
            else:
                assert a[1] == a_point and a[0] == b[0], (name, k, a)
            check_pair(name, k, a, b)


def check_handler_tables(tables, markers):
    """The ILH tables (the SoC build's kernel writes a handler-entry marker): beside each
    IL table, from the same IRQ edges to the kernel's marker of line 0, which comes
    before the handler's ISR_ENTRY marker."""
    handler = [name for name in tables if name.startswith("ILH-")]
    assert handler == [] or sorted(handler) == sorted(
        name.replace("IL-", "ILH-") for name in EXPECTED if name.startswith("IL-")
    )
    for name in handler:
        il = tables[name.replace("ILH-", "IL-")]
        table = tables[name]
        assert table.starts.tolist() == il.starts.tolist(), name
        assert np.all(table.samples < il.samples), name
        for start, sample in zip(table.starts.tolist(), table.samples.tolist()):
            assert markers[start + sample] == (Test.KERNEL, Point.ISR_ENTRY, 0), name


def check_pair(name, k, a, b):
    """What the suite writes in the arguments: the pairing joined the right markers."""
    family, n = name.rsplit("-", 1)
    n = int(n)
    if family in ("IL-a", "IL-b"):
        assert b[2] == k % 128  # the k-th handler call of the window
    elif family == "IDL-a":
        assert a[2] == k % 128 and b[2] == 0  # back in thread 0 after call k
    elif family == "IDL-b":
        assert b[2] == k % n  # equal-priority waiters wake in FIFO turn
    elif family == "TSL-a":
        assert b[2] == (a[2] + 1) % n  # the next thread in the yield round
    elif family == "SEO-f":
        assert a[2] == (k % n) + 1 and b[2] == k % n  # k pending: the newest is released
    else:
        assert a[2] == b[2] == k % 128, (name, k, a, b)


def test_native_suite_tables_and_pairs(native_run):
    _, _, _, events = native_run
    check_suite(events, obj_samples=SAMPLES, clk_samples=SAMPLES, exact=True)


def test_native_gpio_strobe_changes_on_every_store(native_run):
    marker, kinds, values, events = native_run
    if marker != "gpio":
        assert set(kinds) == {"bus", "irq"}
        assert all(v <= 0xFFFF for v, k in zip(values, kinds) if k == "bus")
        return
    words = np.array([v for v, k in zip(values, kinds) if k == "gpio"], np.uint64)
    strobe = (words >> 16) & 1
    assert strobe[0] == 1 and np.all(strobe[1:] != strobe[:-1])
    assert np.all(words >> 17 == 0)
    # ISR markers really interleave with thread markers (the case the shadow must survive).
    points = decode(words.astype(np.int64) & 0xFFFF)[1]
    assert np.count_nonzero(points == Point.ISR_ENTRY) >= SAMPLES * 4


def test_native_windows_and_parameters(native_run):
    _, _, _, events = native_run
    markers = [m for _, m in sorted(marker_at(events).items())]
    starts = [(t, a) for t, p, a in markers if p == Point.START]
    assert [Test(t).name for t, _ in starts] == SUITE_START_ORDER
    # Parameters of 128 and more: START's argument, then PARAM with the bits from 7 up.
    for i, (t, p, a) in enumerate(markers):
        if p == Point.START and t in (Test.IDL_B, Test.TSL_A) and a == 0:
            assert markers[i + 1] == (t, Point.PARAM, 1)
    # Every window is closed, by its own test's END, before the next START.
    order = [(t, p) for t, p, _ in markers if p in (Point.START, Point.END)]
    assert order == [(t, point) for t, _ in starts for point in (Point.START, Point.END)]


def test_native_clock_isr_samples_see_the_tick(native_run):
    """The tick interrupts some CLK samples and not others (the PARAM after T2 says which)."""
    _, _, _, events = native_run
    markers = [m for _, m in sorted(marker_at(events).items())]
    ticks = [a for t, p, a in markers if t == Test.CLOCK_ISR and p == Point.PARAM]
    assert len(ticks) == SAMPLES
    assert 0 in ticks and any(t >= 1 for t in ticks)


def test_parameter_high_bits_follow_start():
    """analyze: a PARAM right after START extends the window's parameter (IDL-b-128), a PARAM
    elsewhere does not."""

    def m(test, point, arg=0):
        return encode(test, point, arg)

    values = [
        m(Test.TSL_A, Point.START, 128 & 127),
        m(Test.TSL_A, Point.PARAM, 1),
        m(Test.TSL_A, Point.T1, 0),
        m(Test.TSL_A, Point.T2, 1),
        m(Test.TSL_A, Point.END),
        m(Test.CLOCK_ISR, Point.START, 1),
        m(Test.CLOCK_ISR, Point.T1),
        m(Test.CLOCK_ISR, Point.T2),
        m(Test.CLOCK_ISR, Point.PARAM, 1),
        m(Test.CLOCK_ISR, Point.END),
    ]
    stamps = np.arange(len(values), dtype=np.uint64) * 10
    events = Events(stamps, np.full(len(values), int(Source.MARKER), np.uint8), values)
    tables = analyze(events, 1e9)
    assert sorted(tables) == ["CLK-a-1", "TSL-a-128"]
    assert tables["TSL-a-128"].samples.tolist() == [10]
    assert tables["TSL-a-128"].parameters == {"test": "TSL_A", "n": 128}


def idl_table(rows):
    """The IDL-a-1 table of events given as (stamp, source, value) rows in stream order."""
    stamps, sources, values = zip(*rows)
    return analyze(Events(stamps, [int(s) for s in sources], values), 1e9)["IDL-a-1"]


def test_a_loss_next_to_the_end_event_discards_the_pair():
    """The appliance sends a LOSS record at the latest with the next event of the source
    (same cycle); the parser corrects the event's stamp for its pin delay (4 cycles for the
    marker port) and not the LOSS record's. A THREAD marker lost after ISR_EXIT, then the
    next THREAD: the pair (ISR_EXIT, next THREAD) must be discarded, not measured."""
    il = Test.IL_A
    exit_, thread = encode(il, Point.ISR_EXIT), encode(il, Point.THREAD)
    # (stamp, source, value) in stream order: the LOSS record (1 marker) rides ahead of the
    # THREAD marker in the entry of raw cycle 304, which the parser reports at 300; another,
    # clean pair follows.
    rows = [
        (0, Source.MARKER, encode(il, Point.START, 1)),
        (100, Source.MARKER, exit_),
        (304, Source.LOSS, 1 << 4 | Source.MARKER),
        (300, Source.MARKER, thread),
        (1000, Source.MARKER, exit_),
        (1100, Source.MARKER, thread),
        (2000, Source.MARKER, encode(il, Point.END)),
    ]
    table = idl_table(rows)
    assert table.samples.tolist() == [100] and table.starts.tolist() == [1000]
    assert table.discarded == 1
    # An IRQ lost (its LOSS record comes later, with the next IRQ event) between an ISR's
    # exit and the next THREAD marker also spoils that pair: the span starts at the
    # previous IRQ event.
    rows = [
        (0, Source.MARKER, encode(il, Point.START, 1)),
        (50, Source.IRQ, 1),
        (100, Source.MARKER, exit_),
        (300, Source.MARKER, thread),
        (400, Source.LOSS, 1 << 4 | Source.IRQ),
        (400, Source.IRQ, 0),
        (2000, Source.MARKER, encode(il, Point.END)),
    ]
    table = idl_table(rows)
    assert table.samples.tolist() == [] and table.discarded == 1


@pytest.mark.verilator
@pytest.mark.parametrize("marker", ["gpio", "bus"])
def test_rv32_suite_on_the_simulated_soc(marker, tmp_path):
    """The RV32 build on the SoC harness (bring-up IRQ driver, every 5000 cycles): the same
    tables and pairs, from the harness's log of the stores and the IRQ line."""
    cpu = "VexRiscv_IMAC"
    binary, _ = bringup_build(cpu)
    build = tmp_path / "build"
    make_suite("sim", marker, build, [f"CPU={cpu}", "PACE=0"])
    truth = tmp_path / "truth.txt"
    result = subprocess.run(
        [
            str(binary),
            "--irq-period",
            "5000",
            "--truth",
            str(truth),
            "--console",
            str(tmp_path / "console.txt"),
            "--max-cycles",
            "20000000",
            str(build / "suite.elf"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    console = (tmp_path / "console.txt").read_text()
    assert result.returncode == 0, result.stdout + result.stderr + console
    assert "suite: done" in console
    events = events_from_stores(*read_truth_log(truth))
    check_suite(events, obj_samples=SAMPLES, clk_samples=SAMPLES, exact=False)


def test_a_loss_of_a_source_with_no_events_reaches_back_to_the_start():
    """Events of a source that has shown none yet were lost: they may lie anywhere before
    the LOSS record, so every pair before it is discarded; the pairs after it count."""
    il = Test.IL_A
    exit_, thread = encode(il, Point.ISR_EXIT), encode(il, Point.THREAD)
    rows = [
        (0, Source.MARKER, encode(il, Point.START, 1)),
        (100, Source.MARKER, exit_),
        (300, Source.MARKER, thread),
        (500, Source.LOSS, 3 << 4 | Source.EDGE0),
        (1000, Source.MARKER, exit_),
        (1100, Source.MARKER, thread),
        (2000, Source.MARKER, encode(il, Point.END)),
    ]
    table = idl_table(rows)
    assert table.samples.tolist() == [100] and table.starts.tolist() == [1000]
    assert table.discarded == 1
