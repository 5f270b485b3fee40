"""Holes (LOSS records of lost source 0xF): no sample is ever paired across one, a lost
START, END or PARAM never merges windows or misnames a table, and the report says what was
lost. Checked against the ground truth of a synthetic suite run (tests/support/synthetic_suite.py),
whose samples are recorded as it is laid out, not computed by ``analyze``."""

import json
import random

import pytest

from latscope import cli
from latscope.analysis.pairing import analyze
from latscope.analysis.spans import HOLE, holes_of
from latscope.capture.file import CaptureWriter
from latscope.events import Events
from latscope.report.run_description import integrity_line
from latscope_defs.markers import Point, Test
from latscope_defs.protocol import Source
from support.synthetic_suite import IDENTITY, encode, make_run

HZ = IDENTITY["clock_hz"]


@pytest.fixture(scope="module")
def run():
    return make_run(seed=3, count=120, handlers=True)


def with_holes(events, cuts):
    """``events`` (list of tuples) with the events of each (begin, end) range replaced by a
    hole record: count = events removed, stamp = the next delivered event's (the end of the
    stream: last stamp + 1), as the parser emits it."""
    out, at = [], 0
    for begin, end in sorted(cuts):
        out += events[at:begin]
        stamp = events[end][0] if end < len(events) else events[-1][0] + 1
        out.append((stamp, int(Source.LOSS), ((end - begin) << 4) | HOLE))
        at = end
    out += events[at:]
    return Events(*zip(*out))


def invented(tables, truth):
    """Samples of ``tables`` that are not a sample of the ground truth, same table."""
    wrong = []
    for name, table in tables.items():
        meant = truth.get(name, {})
        wrong += [
            (name, int(start), int(length))
            for start, length in zip(table.starts.tolist(), table.samples.tolist())
            if meant.get(start) != length
        ]
    return wrong


def test_the_truth_is_what_analyze_finds(run):
    tables = analyze(Events(*zip(*run.events)), HZ)
    assert {
        name: dict(zip(t.starts.tolist(), t.samples.tolist())) for name, t in tables.items()
    } == run.samples
    assert all(t.discarded == 0 for t in tables.values())


def test_no_sample_across_a_hole(run):
    """Random holes of 1 .. 400 events anywhere: every sample is a true one; without the
    hole record the same damage invents samples (so the check can fail)."""
    rng = random.Random(7)
    events, discarded, invented_without = run.events, 0, 0
    for trial in range(60):
        cuts = []
        for _ in range(rng.randint(1, 3)):
            begin = rng.randrange(len(events))
            cuts.append((begin, min(len(events), begin + rng.randint(1, 400))))
        cuts = [
            cut
            for n, cut in enumerate(sorted(cuts))
            if all(cut[0] >= other[1] for other in sorted(cuts)[:n])
        ]
        damaged = with_holes(events, cuts)
        tables = analyze(damaged, HZ)
        assert invented(tables, run.samples) == [], (trial, cuts)
        assert all(t.discarded_by_holes <= t.discarded for t in tables.values())
        discarded += sum(t.discarded_by_holes for t in tables.values())
        plain = damaged[damaged.source != Source.LOSS]
        invented_without += len(invented(analyze(plain, HZ), run.samples))
        assert [hole.lost for hole in holes_of(damaged)] == [e - b for b, e in sorted(cuts)]
    assert discarded > 0 and invented_without > 0


def _find(events, test, point, arg=None):
    return [
        i
        for i, (_, source, value) in enumerate(events)
        if source == Source.MARKER
        and value >> 10 == test
        and (value >> 7) & 7 == point
        and (arg is None or value & 0x7F == arg)
    ]


def test_lost_end_and_start_do_not_merge_windows(run):
    """A hole that swallows TSL-a-2's END and TSL-a-10's START: TSL-a-10's samples after it
    are attributed to no table (not to TSL-a-2), pairs across it are discarded."""
    events = run.events
    end = _find(events, Test.TSL_A, Point.END)[0]
    start = _find(events, Test.TSL_A, Point.START, 10)[0]
    tables = analyze(with_holes(events, [(end - 3, start + 1)]), HZ)
    assert invented(tables, run.samples) == []
    assert len(tables["TSL-a-2"].samples) < len(run.samples["TSL-a-2"])
    assert "TSL-a-10" not in tables
    assert len(tables["TSL-a-128"].samples) == len(run.samples["TSL-a-128"])


def test_lost_param_names_no_table(run):
    """IDL-b-128's START arrives, its PARAM (bits 7 and up of 128) is lost in a hole: the
    window's name is not known, so there is no IDL-b-0 (or IL-b-0) table."""
    events = run.events
    start = _find(events, Test.IDL_B, Point.START, 0)[0]
    assert _find(events, Test.IDL_B, Point.PARAM) == [start + 1]
    tables = analyze(with_holes(events, [(start + 1, start + 2)]), HZ)
    assert not {"IDL-b-0", "IL-b-0", "IDL-b-128", "IL-b-128"} & set(tables)
    assert invented(tables, run.samples) == []


def test_hole_at_the_start_and_at_the_end(run):
    events = run.events
    damaged = with_holes(events, [(0, 351), (len(events) - 5, len(events))])
    first, last = holes_of(damaged)
    assert (first.after, first.lost, first.stamp) == (None, 351, events[351][0])
    assert (last.after, last.lost) == (events[-6][0], 5)
    tables = analyze(damaged, HZ)
    assert invented(tables, run.samples) == []
    # IL_A's START was in the hole: its table's name does not depend on the parameter, so
    # what follows the hole is still IL-a-1 (of unknown parameter).
    il = tables["IL-a-1"]
    assert 0 < len(il.samples) < len(run.samples["IL-a-1"]) and il.parameters["n"] is None


def test_window_opened_by_a_hole(run):
    """A hole that swallows a test's START and its first samples: a table whose name does
    not depend on the parameter keeps the samples after the hole (all true); one whose name
    does (TSL-a-N) gets none; a pair across a hole inside a window is discarded, counted."""
    events = run.events
    for test, name in ((Test.TF_A, "TF-a-1"), (Test.MQ, "MQ-a-1"), (Test.CLOCK_ISR, "CLK-a-1")):
        start = _find(events, test, Point.START)[0]
        tables = analyze(with_holes(events, [(start - 2, start + 7)]), HZ)
        assert invented(tables, run.samples) == [], name
        assert len(run.samples[name]) - 5 <= len(tables[name].samples) < len(run.samples[name])
    # Inside a window: T1 before the hole, T2 after it.
    t1 = _find(events, Test.TF_A, Point.T1)[10]
    tables = analyze(with_holes(events, [(t1 + 1, t1 + 2)]), HZ)
    table = tables["TF-a-1"]
    assert invented(tables, run.samples) == [] and table.discarded_by_holes >= 1
    # The sample whose T2 was lost, and (spans are closed at the hole's stamp) the one
    # starting at the hole's stamp.
    assert len(table.samples) >= len(run.samples["TF-a-1"]) - 2
    assert table.parameters == {"test": "TF_A", "n": 1}


def test_analyze_command_shows_the_holes(run, tmp_path, capsys):
    """The report of a capture whose events hold a hole: the integrity line does not say
    nothing was lost, JSON lists the hole and the pairs it discarded."""
    events = run.events
    begin = _find(events, Test.TSL_A, Point.START, 2)[0] + 40
    damaged = list(with_holes(events, [(begin, begin + 30)]))
    path = tmp_path / "holes.lsc"
    with CaptureWriter(path, {"identity": IDENTITY}) as writer:
        writer.write(encode(damaged))  # the hole record travels as a LOSS record
    assert cli.main(["analyze", str(path)]) == 0
    text = capsys.readouterr().out
    assert "DATA LOST" in text and "1 hole(s) where exactly 30 events are missing" in text
    assert cli.main(["analyze", str(path), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    integrity = document["integrity"]
    assert integrity["holes"] == 1 and integrity["hole_events_lost_at_most"] == 30
    assert integrity["lost_events"] == 0 and "LOSS" not in integrity["lost_by_source"]
    tsl = {row["name"]: row for row in document["tables"]}["TSL-a-2"]
    assert tsl["discarded_by_holes"] >= 1 and tsl["samples"] < len(run.samples["TSL-a-2"])
    assert integrity["pairs_discarded_by_holes"] == sum(
        row["discarded_by_holes"] for row in document["tables"]
    )


def test_integrity_line_never_says_nothing_lost_after_damage():
    base = {
        "lost_events": 0,
        "holes": 0,
        "hole_events_lost_at_most": 0,
        "segments_bad": 0,
        "records_dropped": 0,
        "file_gaps": 0,
        "chunks_bad": 0,
        "truncated_bytes": 0,
        "bytes_skipped": 0,
        "pairs_discarded": 0,
        "pairs_discarded_by_holes": 0,
        "holes_not_exact": 0,
        "holes_unbounded": 0,
        "device_resets": 0,
        "segments_old": 0,
        "records_old": 0,
        "notes": [],
        "closed": True,
    }
    assert integrity_line(base).startswith("nothing lost")
    for key in (
        "lost_events",
        "holes",
        "segments_bad",
        "records_dropped",
        "file_gaps",
        "chunks_bad",
        "truncated_bytes",
    ):
        line = integrity_line({**base, key: 1})
        assert line.startswith("DATA LOST") and "nothing" not in line, key


def test_il_and_ilh_lose_an_interrupt_together_after_a_hole():
    """A hole while no window of the test is open, then the test's markers (its START was
    lost in the hole): the window the hole opens begins at the test's first marker after
    it, so an interrupt before that marker gives neither its IL nor its ILH sample, and one
    after it gives both (they once kept the IL sample and lost the ILH one: the IRQ edge
    was in the window from the hole on, the handler marker in none). In one batch and
    event by event."""
    from latscope.analysis.batch import BatchAnalysis
    from latscope.analysis.pairing import SampleCollector
    from latscope_defs.markers import encode

    il, kernel = Test.IL_A, Test.KERNEL
    m, bus, irq = int(Source.MARKER), int(Source.BUS), int(Source.IRQ)
    handler = encode(kernel, Point.ISR_ENTRY, 0)
    rows = [(100, m, encode(il, Point.START, 1)), (500, m, encode(il, Point.END))]
    rows += [(700, int(Source.LOSS), 3 << 4 | HOLE)]
    for k, edge in enumerate((800, 850)):  # before the first marker after the hole, after
        rows += [(edge, irq, 1), (edge + 10, bus, handler), (edge + 20, m, encode(il, 2, k))]
        rows += [(edge + 30, irq, 0)]
    rows += [(900, m, encode(il, Point.END))]
    events = Events(*zip(*rows))
    for size in (len(rows), 1):
        analysis = BatchAnalysis(HZ, table=SampleCollector)
        for at in range(0, len(rows), size):
            analysis.feed(events[at : at + size])
        tables = {name: c.table() for name, c in analysis.finish().ordered_tables().items()}
        pairs = {
            name: list(zip(t.starts.tolist(), t.samples.tolist())) for name, t in tables.items()
        }
        assert pairs["IL-a-1"] == [(850, 20)] and pairs["ILH-a-1"] == [(850, 10)], size


def test_a_hole_that_swallows_an_end(run):
    """A hole that swallows IDL-b-1's END and IDL-b-10's START, the kernel's handler markers
    in the truth: IDL-b-10's interrupts after the hole lie in a window of unknown parameter,
    so no IL-b or ILH-b table takes them (none lands in IL-b-1 or ILH-b-1, no IL-b-10 or
    ILH-b-10 is made), nothing is invented, and IDL-b-128 is whole."""
    events = run.events
    end = _find(events, Test.IDL_B, Point.END)[0]
    start = _find(events, Test.IDL_B, Point.START, 10)[0]
    tables = analyze(with_holes(events, [(end - 2, start + 1)]), HZ)
    assert invented(tables, run.samples) == []
    for name in ("IL-b-1", "ILH-b-1"):
        assert len(tables[name].samples) == len(run.samples[name])  # all before the hole
        assert max(tables[name].starts) < events[end][0]  # none after it
    assert not {"IL-b-10", "ILH-b-10", "IDL-b-10"} & set(tables)
    for name in ("IL-b-128", "ILH-b-128", "IDL-b-128"):
        assert len(tables[name].samples) == len(run.samples[name])
