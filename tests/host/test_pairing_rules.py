"""The pairing rules of docs/tests.md, cycle by cycle, and the sigrok decoders against
``analyze`` on random captures.

The edge cases the rules decide (each a small capture): an IRQ edge in the very cycle of a
test's START or END; an A and a B in one cycle; two markers in one cycle (trace port and
bus window); the endpoints of a span in which events may have been lost. Then a property
test (hypothesis): random synthetic captures, written as capture files by the reference
encoder, go through ``analyze`` and, exported as sigrok session files, through sigrok-cli
with latscope's decoders (as tests/system/test_sigrok.py does for simulated runs); both must give
the same samples, discard the same pairs and flag the same samples with the kernel's tick.

Needs ``sigrok-cli`` for the property test.
"""

import csv
import os
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from latscope.analysis.batch import BatchAnalysis
from latscope.analysis.pairing import SampleCollector, analyze
from latscope.analysis.summary import analyze_capture
from latscope.capture.file import CaptureWriter, load_capture
from latscope.events import Events
from latscope.export.files import export_capture
from latscope.export.sigrok import SigrokWriter
from latscope.simulated.soc import ROOT
from latscope_defs.channels import Layout
from latscope_defs.markers import KERNEL_TICK_ENTRY, KERNEL_TICK_EXIT, Point, Test, encode
from latscope_defs.protocol import VERSION, Source, StreamEncoder, hole_value
from support.analysis_checks import assert_same
from support.sigrok_run import table_rows

CLOCK_HZ = 100_000_000
M, B, IRQ, L = Source.MARKER, Source.BUS, Source.IRQ, Source.LOSS
#: A hole record in a row list: the parser's (its count 3), inserted into the events.
HOLE_ROW = "hole"


def mark(test, point, arg=0):
    return encode(test, point, arg)


def samples_of(rows):
    """``analyze``'s samples of ``rows`` ({table: [(start, length)]}) and tables, after
    checking that every other way of pairing them gives the same: the batch analysis fed
    one event at a time, the bounded analysis of the capture file in 64-byte and in 1 MiB
    batches (``latscope analyze``), and the sigrok decoders on its export (samples, tick
    flags, discarded pairs)."""
    events = _events(rows)
    tables = analyze(events, CLOCK_HZ)
    single = BatchAnalysis(CLOCK_HZ, table=SampleCollector)
    for at in range(len(events)):
        single.feed(events[at : at + 1])
    by_one = {name: c.table() for name, c in single.finish().ordered_tables().items()}
    assert table_rows(by_one) == table_rows(tables)
    assert [t.discarded for t in by_one.values()] == [t.discarded for t in tables.values()]
    with tempfile.TemporaryDirectory() as directory:
        ordered = sorted(zip(events.stamp.tolist(), events.source.tolist(), events.value.tolist()))
        capture = write_capture(Path(directory) / "rules.lsc", sorted(ordered, key=stream_order))
        for batch_bytes in (64, 1 << 20):
            bounded = analyze_capture(capture.path, batch_bytes=batch_bytes, background=False)
            assert_same(tables, bounded[1], batch_bytes)
        expected, decoded, _, layout = decoded_samples(capture, Path(directory) / "rules.sr")
        assert decoded == expected == table_rows(tables)
        assert sigrok_discarded(Path(directory) / "rules.sr", layout) == sum(
            table.discarded for table in tables.values()
        )
    return {
        name: list(zip(table.starts.tolist(), table.samples.tolist()))
        for name, table in tables.items()
    }, tables


def _events(rows):
    rows = sorted(rows, key=lambda row: (row[0], row[1] != L, row[1]))
    return Events([r[0] for r in rows], [int(r[1]) for r in rows], [r[2] for r in rows])


# --- the rules, case by case ----------------------------------------------------------------


def test_irq_edge_in_the_cycle_of_start_or_end_is_in_no_window():
    start, end = mark(Test.IL_A, Point.START, 1), mark(Test.IL_A, Point.END)
    entry = mark(Test.IL_A, Point.ISR_ENTRY)
    got, _ = samples_of(
        [
            (100, M, start),
            (100, IRQ, 1),
            (110, IRQ, 0),
            (150, M, entry),
            (200, IRQ, 1),
            (230, M, entry),
            (300, IRQ, 1),
            (300, M, end),
            (320, M, entry),
        ]
    )
    # The edge at 100 (START's cycle) pairs with nothing: the ISR_ENTRY at 150 has no A.
    # The edge at 300 (END's cycle) is outside too.
    assert got == {"IL-a-1": [(200, 30)], "IDL-a-1": []}


def test_a_b_in_one_cycle_is_no_pair_the_b_ends_the_previous_a():
    start = mark(Test.TSL_A, Point.START, 2)
    t1, t2 = mark(Test.TSL_A, Point.T1), mark(Test.TSL_A, Point.T2)
    # T1 at 120 (bus) and T2 at 120 (trace port): the T2 ends the sample of the T1 at 100;
    # the T1 of 120 pairs with the T2 at 150.
    got, _ = samples_of([(90, M, start), (100, M, t1), (120, B, t1), (120, M, t2), (150, M, t2)])
    assert got == {"TSL-a-2": [(100, 20), (120, 30)]}
    # IRQ A and marker B in one cycle: B is not that edge's; the edge pairs with a later B.
    start, entry = mark(Test.IL_A, Point.START, 1), mark(Test.IL_A, Point.ISR_ENTRY)
    got, _ = samples_of(
        [
            (90, M, start),
            (100, IRQ, 1),
            (140, IRQ, 0),
            (200, IRQ, 1),
            (200, M, entry),
            (260, M, entry),
        ]
    )
    assert got["IL-a-1"] == [(100, 100), (200, 60)]


def test_two_markers_in_one_cycle_are_taken_trace_port_first():
    # START (trace port) and PARAM (bus) in one cycle: PARAM is the test's next marker.
    start = mark(Test.IDL_B, Point.START, 0)
    param = mark(Test.IDL_B, Point.PARAM, 1)
    exit_, t2 = mark(Test.IDL_B, Point.ISR_EXIT), mark(Test.IDL_B, Point.T2)
    got, _ = samples_of([(50, M, start), (50, B, param), (60, M, exit_), (75, B, t2)])
    assert got == {"IL-b-128": [], "IDL-b-128": [(60, 15)]}
    # A marker of the test in the cycle of END but on the bus (after the trace port's
    # END) is outside the window; the trace port's marker before a bus END is inside.
    start, end = mark(Test.TSL_A, Point.START, 2), mark(Test.TSL_A, Point.END)
    t1, t2 = mark(Test.TSL_A, Point.T1), mark(Test.TSL_A, Point.T2)
    got, _ = samples_of([(10, M, start), (20, M, t1), (30, M, end), (30, B, t2)])
    assert got == {"TSL-a-2": []}
    got, _ = samples_of([(10, M, start), (20, M, t1), (30, M, t2), (30, B, end)])
    assert got == {"TSL-a-2": [(20, 10)]}


def test_handler_entry_marker_of_the_kernel():
    """ILH: the IRQ edge to the kernel's KERNEL/ISR_ENTRY marker (another test's marker,
    in the window by its place in the marker order); IL (to the handler's own marker)
    beside it. Without kernel markers in the capture there is no ILH table."""
    start, end = mark(Test.IL_A, Point.START, 1), mark(Test.IL_A, Point.END)
    entry, kernel = mark(Test.IL_A, Point.ISR_ENTRY), mark(Test.KERNEL, Point.ISR_ENTRY, 0)
    events = [
        (100, M, start),
        (200, IRQ, 1),
        (250, IRQ, 0),
        (360, B, kernel),
        (380, M, entry),
        (500, IRQ, 1),
        (560, B, kernel),
        (600, M, end),
        (700, B, kernel),
    ]
    got, _ = samples_of(events)
    assert got["ILH-a-1"] == [(200, 160), (500, 60)]
    assert got["IL-a-1"] == [(200, 180)]
    got, _ = samples_of([event for event in events if event[2] != kernel])
    assert "ILH-a-1" not in got and got["IL-a-1"] == [(200, 180)]


def test_loss_span_endpoints():
    """A LOSS record of source X at stamp h after X's event at stamp l: events may be lost
    at l < t < h; a pair (A, B) is discarded iff l < B and h > A."""
    start, t1, t2 = (
        mark(Test.SEO_D, Point.START, 1),
        mark(Test.SEO_D, Point.T1),
        mark(Test.SEO_D, Point.T2),
    )
    base = [(10, M, start), (100, M, t1), (120, M, t2)]
    # IRQ events at 40 and 100 bound the span (40, 100) of a LOSS at 100: h = A, kept.
    _, tables = samples_of(base + [(40, IRQ, 1), (100, L, 1 << 4 | IRQ), (101, IRQ, 0)])
    assert tables["SEO-d-1"].samples.tolist() == [20] and tables["SEO-d-1"].discarded == 0
    # LOSS at 101: h > A: discarded.
    _, tables = samples_of(base + [(40, IRQ, 1), (101, L, 1 << 4 | IRQ), (102, IRQ, 0)])
    assert tables["SEO-d-1"].samples.tolist() == [] and tables["SEO-d-1"].discarded == 1
    # The span's low end is X's previous event: at B (120) it is kept, at 119 discarded.
    _, tables = samples_of(base + [(120, IRQ, 1), (200, L, 1 << 4 | IRQ), (201, IRQ, 0)])
    assert tables["SEO-d-1"].discarded == 0
    _, tables = samples_of(base + [(119, IRQ, 1), (200, L, 1 << 4 | IRQ), (201, IRQ, 0)])
    assert tables["SEO-d-1"].discarded == 1


# --- analyze and the sigrok decoders on random captures ----------------------------------

#: The tests a random capture uses and the points their rules pair.
TESTS = {
    Test.IL_A: (Point.ISR_ENTRY, Point.ISR_EXIT, Point.THREAD),
    Test.IDL_B: (Point.ISR_ENTRY, Point.ISR_EXIT, Point.T2),
    Test.TSL_A: (Point.T1, Point.T2),
}


@st.composite
def captures(draw):
    """Events of a random capture: markers of three tests (on the trace port or the bus
    window, START/END/PARAM included, ENDs sometimes missing), the kernel's handler and
    tick markers (bus window), IRQ edges and LOSS records, with events of different sources
    sharing cycles."""
    rows = []
    stamp, irq_level = 1000, 0
    tests = draw(st.lists(st.sampled_from(sorted(TESTS)), min_size=1, max_size=2, unique=True))
    for _ in range(draw(st.integers(3, 40))):
        stamp += draw(st.sampled_from([1, 1, 2, 3, 7, 20, 60]))
        # One to three events in this cycle, of different sources; "start" is a START
        # marker with an IRQ edge in its cycle, "pair" two markers of one test.
        kinds = draw(
            st.lists(
                st.sampled_from(
                    ["marker"] * 4
                    + ["bus"] * 2
                    + ["irq"] * 3
                    + ["loss", "start", "pair", "kernel", "tick", "hole"]
                ),
                min_size=1,
                max_size=3,
            )
        )
        test = draw(st.sampled_from(tests))
        if "hole" in kinds:
            kinds = ["hole"] + [kind for kind in kinds if kind != "hole"]  # first in its cycle
        if "start" in kinds:
            kinds = ["start", "irq"]
        elif "pair" in kinds:
            kinds = ["marker", "bus"]
        for kind in dict.fromkeys(kinds):
            if kind == "hole":
                rows.append((stamp, HOLE_ROW, 0))
                continue
            source = {
                "marker": M,
                "bus": B,
                "irq": IRQ,
                "loss": L,
                "start": M,
                "kernel": B,
                "tick": B,
            }[kind]
            if kind in ("kernel", "tick"):  # the kernel's handler-entry or tick marker
                if "bus" in kinds or (kind == "tick" and "kernel" in kinds):
                    continue  # (bus window: one marker a cycle)
                value = (
                    mark(Test.KERNEL, Point.ISR_ENTRY, 0)
                    if kind == "kernel"
                    else mark(
                        Test.KERNEL, draw(st.sampled_from([KERNEL_TICK_ENTRY, KERNEL_TICK_EXIT]))
                    )
                )
            elif kind in ("marker", "bus", "start"):
                point = (
                    Point.START
                    if kind == "start"
                    else draw(
                        st.sampled_from((Point.START, Point.END, Point.PARAM) + TESTS[test] * 3)
                    )
                )
                value = mark(test, point, draw(st.integers(0, 3)))
            elif kind == "irq":
                irq_level ^= 1
                value = irq_level
            else:
                value = draw(st.integers(1, 3)) << 4 | int(draw(st.sampled_from([M, B, IRQ])))
            rows.append((stamp, source, value))
    # Stream order (docs/protocol.md): by stamp; in one cycle the LOSS record first, then
    # the events in source order (a hole before them all).
    return sorted(rows, key=stream_order)


def stream_order(row):
    return row[0], row[1] != HOLE_ROW, row[1] != L, 0 if row[1] == HOLE_ROW else row[1]


def write_capture(path, rows):
    """The capture file of ``rows`` (stream order), loaded; a ``HOLE_ROW`` becomes a parser
    hole record at its place in the loaded events (stamped with the next delivered event's
    stamp, or its own at the end, as the parser stamps them)."""
    encoder = StreamEncoder(marker_width=16)
    for stamp, source, value in rows:
        if source != HOLE_ROW:
            encoder.event(stamp, source, value)
    encoder.flush()
    identity = {
        "version": VERSION,
        "clock_hz": CLOCK_HZ,
        "stamp_shift": 0,
        "marker_width": 16,
        "edge_count": 0,
        "bus_width": 32,
        "fifo_depth": 0,
        "board": "synthetic",
        "latency": {},
    }
    with CaptureWriter(
        path,
        {
            "identity": identity,
            "port": "synthetic",
            "start_time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "irq": {},
            "test_info": "hypothesis",
        },
    ) as writer:
        writer.write(encoder.take())
        writer.close({"events": len(rows)})
    capture = load_capture(path)
    holes = [at for at, row in enumerate(rows) if row[1] == HOLE_ROW]
    if holes:
        stamp, source, value = (list(column) for column in zip(*capture.events))
        for at in holes:  # rows without the holes are the events, in this order
            after = [row[0] for row in rows[at:] if row[1] not in (HOLE_ROW, L)]
            stamp.insert(at, after[0] if after else rows[at][0])
            source.insert(at, int(L))
            value.insert(at, hole_value(3))
        capture.events = Events(stamp, source, value)
    return capture


def sigrok_csv(sr_path, layout):
    result = subprocess.run(
        [
            "sigrok-cli",
            "-i",
            str(sr_path),
            "-P",
            layout.decoder_stack(),
            "-B",
            "latscope_latency=csv",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, SIGROKDECODE_DIR=str(ROOT / "decoders")),
    )
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    return result.stdout


def sigrok_discarded(sr_path, layout):
    result = subprocess.run(
        [
            "sigrok-cli",
            "-i",
            str(sr_path),
            "-P",
            layout.decoder_stack(),
            "-A",
            "latscope_latency=discarded",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, SIGROKDECODE_DIR=str(ROOT / "decoders")),
    )
    assert result.returncode == 0, result.stderr
    return len(result.stdout.splitlines())


@pytest.mark.slow
@settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    phases=[Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rows=captures())
def test_decoders_give_the_samples_of_analyze(rows, tmp_path):
    capture = write_capture(tmp_path / "random.lsc", rows)
    assert len(capture.events) == len(rows)  # the file holds what was written (and holes)
    tables = analyze(capture.events, capture.stamp_hz)
    expected, decoded, info, layout = decoded_samples(capture, tmp_path / "random.sr")
    assert decoded == expected
    assert sigrok_discarded(tmp_path / "random.sr", layout) == sum(
        t.discarded for t in tables.values()
    )


def decoded_samples(capture, sr):
    """(table, start, cycles, tick flag) of every sample, from ``analyze`` and from the
    capture exported to ``sr`` through sigrok-cli's decoders; the export's info; its
    layout."""
    tables = analyze(capture.events, capture.stamp_hz)
    expected = sorted(
        (name, int(start), int(cycles), bool(ticked))
        for name, table in tables.items()
        for start, cycles, ticked in zip(table.starts, table.samples, table.ticked)
    )
    info = export_capture(capture, [SigrokWriter(sr, pvs=False)])
    assert info.markers_dropped == 0
    layout = Layout(0, second_lane=info.layout.second_lane)
    rows_out = list(csv.DictReader(sigrok_csv(sr, layout).splitlines()))
    decoded = sorted(
        (
            row["table"],
            int(row["start_sample"]) + info.origin,
            int(row["ticks"]),
            row["kernel_tick"] == "1",
        )
        for row in rows_out
    )
    return expected, decoded, info, layout


def test_tick_flag_at_the_ends_of_a_sample(tmp_path):
    """A tick marker flags the samples whose [A, B] holds it, ends included, in analyze and
    in the decoders alike: in A's cycle, in B's cycle on the bus window (after B in the
    stream: the marker decoder puts tick markers first in their cycle), inside; not one
    cycle before A or after B."""
    start, end = mark(Test.TSL_A, Point.START, 2), mark(Test.TSL_A, Point.END)
    t1, t2 = mark(Test.TSL_A, Point.T1), mark(Test.TSL_A, Point.T2)
    entry, exit_ = mark(Test.KERNEL, KERNEL_TICK_ENTRY), mark(Test.KERNEL, KERNEL_TICK_EXIT)
    rows = [(100, M, start)]
    pairs = {200: None, 300: 300, 400: 420, 500: 511, 600: 599, 700: 721, 800: 810}
    for a, tick in pairs.items():  # A at a, B at a + 20, a tick or none
        rows += [(a, M, t1), (a + 20, M, t2)]
        if tick is not None:
            rows.append((tick, B, entry if tick % 2 else exit_))
    rows.append((900, M, end))
    capture = write_capture(tmp_path / "ticks.lsc", sorted(rows, key=lambda r: (r[0], r[1])))
    expected, decoded, _, _ = decoded_samples(capture, tmp_path / "ticks.sr")
    assert [row[3] for row in expected] == [False, True, True, True, False, False, True]
    assert decoded == expected


def test_export_finds_a_shared_cycle_in_any_batch(tmp_path):
    """The export's survey pass reads the capture in batches: two markers in one cycle
    far from the start, and across a batch boundary, still switch on the second marker
    lane, and the files are those of a single batch."""
    t1, t2 = mark(Test.TSL_A, Point.T1), mark(Test.TSL_A, Point.T2)
    rows = [(100, M, mark(Test.TSL_A, Point.START, 2))]
    rows += [(200 + 10 * n, M, t1 if n % 2 else t2) for n in range(60)]
    rows += [(900, M, t1), (900, B, t2), (1000, M, mark(Test.TSL_A, Point.END))]
    path = tmp_path / "shared.lsc"
    write_capture(path, rows)
    whole = export_capture(path, [tmp_path / "whole.vcd"])
    assert whole.layout.second_lane and not whole.markers_dropped
    for batch_bytes in (7, 64, 1000):
        info = export_capture(path, [tmp_path / "batched.vcd"], batch_bytes=batch_bytes)
        assert info.layout.second_lane, batch_bytes
        assert (tmp_path / "batched.vcd").read_text() == (tmp_path / "whole.vcd").read_text()
    rows = [row for row in rows if row[1] != B]
    write_capture(path, rows)
    assert not export_capture(path, [tmp_path / "one.vcd"], batch_bytes=7).layout.second_lane


# --- holes in the decoders (rules 5 and 6) -----------------------------------------------------


def decoders_agree(rows, tmp_path):
    """``analyze``'s samples of ``rows`` (stream order, holes included), checked equal to
    the decoders' on the export (samples, tick flags, discarded pairs); returns them."""
    capture = write_capture(tmp_path / "holes.lsc", rows)
    expected, decoded, _, layout = decoded_samples(capture, tmp_path / "holes.sr")
    assert decoded == expected
    tables = analyze(capture.events, capture.stamp_hz)
    assert sigrok_discarded(tmp_path / "holes.sr", layout) == sum(
        table.discarded for table in tables.values()
    )
    return expected


def test_a_window_a_hole_split_takes_no_start_event_and_has_no_parameter(tmp_path):
    """Rule 5 in both: after a hole inside TSL-a-2's window its markers form a window of
    unknown parameter (TSL-a-N takes none of its samples), the pair across the hole is
    discarded; TF-a-1's name has no parameter, so it takes the samples after its hole."""
    tsl, tf = Test.TSL_A, Test.TF_A
    rows = [(100, M, mark(tsl, Point.START, 2)), (110, M, mark(tsl, Point.T1))]
    rows += [(120, M, mark(tsl, Point.T2)), (130, M, mark(tsl, Point.T1))]
    rows += [(150, HOLE_ROW, 0), (160, M, mark(tsl, Point.T2))]  # across: discarded
    rows += [(170, M, mark(tsl, Point.T1)), (180, M, mark(tsl, Point.T2))]  # no table
    rows += [(200, M, mark(tsl, Point.END)), (300, M, mark(tf, Point.START, 1))]
    rows += [(310, M, mark(tf, Point.T1)), (340, HOLE_ROW, 0), (350, M, mark(tf, Point.T1))]
    rows += [(365, M, mark(tf, Point.T2))]  # discarded: a hole's span ends after its stamp
    rows += [(370, M, mark(tf, Point.T1)), (390, M, mark(tf, Point.T2))]
    rows += [(400, M, mark(tf, Point.END))]
    assert decoders_agree(rows, tmp_path) == [
        ("TF-a-1", 370, 20, False),
        ("TSL-a-2", 110, 10, False),
    ]


def test_a_start_followed_by_a_hole_has_no_parameter(tmp_path):
    """Rule 6 in both: IDL-b's START (argument 0) followed by a hole before its next marker:
    the PARAM (128 = 0 | 1 << 7) may be lost there, so IL-b-N takes none of the window's
    samples; with the PARAM seen it is IL-b-128."""
    idl = Test.IDL_B
    start, param = mark(idl, Point.START, 0), mark(idl, Point.PARAM, 1)
    entry = mark(idl, Point.ISR_ENTRY)
    rows = [(100, M, start), (120, HOLE_ROW, 0), (120, M, param), (200, IRQ, 1)]
    rows += [(230, M, entry), (240, IRQ, 0), (300, M, mark(idl, Point.END))]
    assert decoders_agree(rows, tmp_path) == []
    rows = [row for row in rows if row[1] != HOLE_ROW]
    assert decoders_agree(rows, tmp_path) == [("IL-b-128", 200, 30, False)]


def test_after_a_hole_with_no_window_open(tmp_path):
    """A hole that swallowed IL-a's START: its window of unknown parameter begins at the
    test's first marker after the hole; an interrupt before that marker gives neither its
    IL nor its ILH sample, one after it both, in analyze and in the decoders."""
    il, handler = Test.IL_A, mark(Test.KERNEL, Point.ISR_ENTRY, 0)
    rows = [(100, M, mark(il, Point.START, 1)), (200, M, mark(il, Point.END))]
    rows += [(300, HOLE_ROW, 0)]
    for k, edge in enumerate((400, 500)):
        rows += [(edge, IRQ, 1), (edge + 10, B, handler), (edge + 20, M, mark(il, 2, k))]
        rows += [(edge + 30, IRQ, 0)]
    rows += [(600, M, mark(il, Point.END))]
    assert decoders_agree(rows, tmp_path) == [
        ("IL-a-1", 500, 20, False),
        ("ILH-a-1", 500, 10, False),
    ]
