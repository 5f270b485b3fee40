"""Live statistics (latscope.analysis.live: the batch analysis fed as events arrive, with the
exact TableAccumulator) against the whole-capture analysis, on a real run of the test suite
(``suite_capture``) fed in random pieces, as a capture loop sees it.

The live rules must give exactly the tables of ``analyze``: count, every sample value, the
statistics to the last bit, discarded pairs and the maximum per interval; memory (the events
held between pieces) must stay bounded however long the run."""

import argparse

import numpy as np
import pytest

from latscope.analysis.live import live_analysis
from latscope.analysis.pairing import analyze
from latscope.capture.file import load_capture
from latscope.cli import parse_duration
from latscope.events import Events
from latscope_defs.protocol import Source
from support.suite_capture import native_suite_capture
from support.suite_tables import table_names


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    path = tmp_path_factory.mktemp("streaming") / "suite.lsc"
    native_suite_capture(path, 60)
    return load_capture(path)


def feed_in_pieces(analyzer, events, seed, largest=700):
    """Feeds ``events`` in random pieces, then finishes (the end of the capture); returns
    the most events held between two pieces."""
    rng = np.random.default_rng(seed)
    held, at = 0, 0
    while at < len(events):
        size = int(rng.integers(1, largest))
        analyzer.feed(events[at : at + size])
        at += size
        held = max(held, analyzer.held)
    analyzer.finish()
    return held


def assert_same_tables(analyzer, tables):
    live_tables = analyzer.ordered_tables()
    assert list(live_tables) == list(tables)
    for name, table in tables.items():
        live, exact = live_tables[name], table.stats()
        assert live.count == exact["samples"], name
        assert live.discarded == exact["discarded"], name
        assert live.stats() == exact, name
        values, counts = np.unique(table.samples, return_counts=True)
        assert np.array_equal(live.values, values) and np.array_equal(live.counts, counts), name


@pytest.mark.parametrize("seed", [1, 2])
def test_pieces_give_the_exact_tables(capture, seed):
    analyzer = live_analysis(capture.identity)
    held = feed_in_pieces(analyzer, capture.events, seed)
    assert_same_tables(analyzer, analyze(capture.events, capture.stamp_hz))
    assert held < 2000 and not analyzer.needs_second_pass


def test_losses_discard_the_same_pairs(capture):
    """LOSS records (the device's FIFO overflowed: a marker lost) inside the IL test: pairs
    that may span the lost event are discarded, by the live rules as by ``analyze``."""
    events = capture.events
    irq = np.flatnonzero((events.source == Source.IRQ) & (events.value == 1))
    at = irq[5:60:7] + 1  # right after some IRQ edges: their IL pair spans the loss
    stamp = np.insert(events.stamp, at, events.stamp[at - 1] + np.uint64(1))
    source = np.insert(events.source, at, int(Source.LOSS))
    value = np.insert(events.value, at, 1 << 4 | int(Source.MARKER))  # one marker lost
    lossy = Events(stamp, source, value)
    tables = analyze(lossy, capture.stamp_hz)
    assert tables["IL-a-1"].discarded >= len(at) - 1
    analyzer = live_analysis(capture.identity)
    feed_in_pieces(analyzer, lossy, 3, largest=50)
    assert_same_tables(analyzer, tables)


def test_each_event_is_looked_at_once(capture):
    """Nothing is analysed again to find what was counted before: fed in pieces, the
    analysis takes every event once and every marker once."""
    analyzer = live_analysis(capture.identity)
    for n in range(0, len(capture.events), 500):
        analyzer.feed(capture.events[n : n + 500])
    analyzer.finish()
    markers = np.isin(capture.events.source, [int(Source.MARKER), int(Source.BUS)])
    assert analyzer.events == len(capture.events)
    assert analyzer.markers == np.count_nonzero(markers)
    assert_same_tables(analyzer, analyze(capture.events, capture.stamp_hz))


def test_long_run_bounded_memory_and_max_per_interval(capture):
    """The suite's run repeated 30 times back to back (stamps shifted), fed in pieces:
    the held events stay those of one run's pieces, and max-per-interval matches."""
    events, clock = capture.events, capture.stamp_hz
    span = int(events.stamp.max()) + 1
    runs = 30
    long = Events(
        np.concatenate([events.stamp + np.uint64(i * span) for i in range(runs)]),
        np.tile(events.source, runs),
        np.tile(events.value, runs),
    )
    interval = span / clock / 3  # three intervals per run
    analyzer = live_analysis(capture.identity, interval)
    held = feed_in_pieces(analyzer, long, 4, largest=2000)
    assert held < 4000 < len(long) // 50
    tables = analyze(long, clock)
    assert_same_tables(analyzer, tables)
    table = tables["IL-a-1"]
    live = analyzer.tables["IL-a-1"]
    maxima = live.interval_maxima_ns()
    slot = (table.starts - table.starts[0]) // live.interval_stamps
    for index in range(len(maxima)):
        mine = table.samples[slot == index]
        if len(mine):
            assert maxima[index] == pytest.approx(mine.max() * 1e9 / clock)
        else:
            assert np.isnan(maxima[index])
    assert len(maxima) == slot[-1] + 1 >= 3 * runs - 3
    assert live.interval_stamps == int(interval * clock)


def test_pending_events_are_bounded_even_without_samples(capture):
    """A test window whose samples never complete (an ISR that never marks) must not hold
    events without end: an IRQ edge followed by the next is decided (no sample) and let go."""
    from latscope_defs.markers import Point, Test, encode

    start = encode(Test.IL_A, Point.START, 1)
    stamps = np.arange(1, 20_001, dtype=np.uint64) * 100
    source = np.full(len(stamps), int(Source.IRQ), np.uint8)
    value = np.tile(np.array([1, 0], np.uint64), len(stamps) // 2)
    source[0], value[0] = int(Source.MARKER), start
    analyzer = live_analysis(capture.identity)
    rng = np.random.default_rng(5)
    events, held, at = Events(stamps, source, value), 0, 0
    while at < len(events):
        size = int(rng.integers(1, 300))
        analyzer.feed(events[at : at + size])
        at += size
        held = max(held, analyzer.held)
    assert held <= 300 + 2
    assert analyzer.running == {"IL_A"}
    assert analyzer.tables["IL-a-1"].count == 0


def test_a_loss_reaching_back_keeps_the_live_figures_going(capture, tmp_path):
    """A LOSS record of a source silent for long (its span reaches back over counted
    samples): the live statistics cannot take those samples back. They go on counting (the
    samples after it are counted as in the file's analysis) and say so
    (``needs_second_pass``); the file's analysis discards the pairs the span covers, and
    what ``latscope capture --json`` prints at the end comes from the file then."""
    from latscope.capture.file import CaptureWriter
    from latscope.cli import final_tables
    from latscope_defs.protocol import StreamEncoder

    # An EDGE3 event 0.2 s before the suite (then silent for longer than the live analysis
    # waits) and its LOSS record half-way through it: every pair between is lossy.
    first = int(capture.events.stamp[0])
    events = Events(
        capture.events.stamp + np.uint64(capture.stamp_hz // 5),
        capture.events.source,
        capture.events.value,
    )
    at = len(events) // 2
    edge = Events([first], [int(Source.EDGE3)], [1])
    loss = Events([int(events.stamp[at])], [int(Source.LOSS)], [1 << 4 | int(Source.EDGE3)])
    lossy = Events.concatenate([edge, events[:at], loss, events[at:]])
    exact = analyze(lossy, capture.stamp_hz)
    live = live_analysis(capture.identity)
    feed_in_pieces(live, lossy, 6, largest=100)
    assert live.needs_second_pass
    # The same pairs, of which the live statistics counted those the late span discards.
    assert list(live.ordered_tables()) == list(exact)
    for name, table in live.ordered_tables().items():
        assert table.count + table.discarded == len(exact[name].samples) + exact[name].discarded
        assert table.count >= len(exact[name].samples)
    discarded = sum(table.discarded for table in exact.values())
    assert discarded > 100 + sum(table.discarded for table in live.tables.values())
    # The capture's final figures: those of its file.
    encoder = StreamEncoder(marker_width=16)
    for stamp, source, value in zip(
        lossy.stamp.tolist(), lossy.source.tolist(), lossy.value.tolist()
    ):
        encoder.event(stamp, source, value)
    encoder.flush()
    path = tmp_path / "lossy.lsc"
    with CaptureWriter(path, {"identity": capture.metadata["identity"], "port": "x"}) as writer:
        writer.write(encoder.take())
        writer.close({})
    assert final_tables(live, path) == {name: table.stats() for name, table in exact.items()}


def test_parse_duration():
    assert parse_duration("8h") == 8 * 3600
    assert parse_duration("15m") == 900 and parse_duration("2.5") == 2.5
    for bad in ("8x", "-1", "h"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_duration(bad)


def test_progress_shows_the_running_tests(capture):
    """The capture's live display: per table of the tests running now, n/min/avg/max."""
    from latscope.progress import running_tables
    from latscope_defs.markers import Point, Test, decode

    events = capture.events
    tests, points, _ = decode(events.value.astype(np.int64) & 0xFFFF)
    marker = events.source == Source.MARKER
    end_il = np.flatnonzero(marker & (tests == Test.IL_A) & (points == Point.END))[0]
    analyzer = live_analysis(capture.identity)
    analyzer.feed(events[: end_il - 10])  # inside the IL-a window
    assert analyzer.running == {"IL_A"}
    line = running_tables(analyzer)
    for name in table_names([Test.IL_A], handler=False):
        table = analyzer.tables[name]
        stats = table.stats()
        assert (
            f"{name} n={table.count} min/avg/max {stats['min_ns']:.0f}/"
            f"{stats['avg_ns']:.0f}/{stats['max_ns']:.0f} ns"
        ) in line
    analyzer.feed(events[end_il - 10 :])
    analyzer.finish()
    assert running_tables(analyzer) == "" and analyzer.running == set()
