"""Streaming statistics (latscope.analysis.live) against the whole-capture analysis, on a real
run of the test suite (``suite_capture``) fed in random pieces, as a capture loop sees it.

The streaming rules must give exactly the tables of ``analyze``: count, min, max, mean,
standard deviation, discarded pairs, histogram and the maximum per interval; memory (the
events held between pieces) must stay bounded however long the run."""

import argparse

import numpy as np
import pytest

from latscope.analysis.live import StreamingAnalyzer
from latscope.analysis.pairing import analyze
from latscope.capture.file import load_capture
from latscope.cli import parse_duration
from latscope.events import Events
from latscope_defs.protocol import Source
from suite_capture import native_suite_capture


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    path = tmp_path_factory.mktemp("streaming") / "suite.lsc"
    native_suite_capture(path, 60)
    return load_capture(path)


def feed_in_pieces(analyzer, events, seed, largest=700):
    rng = np.random.default_rng(seed)
    held, at = 0, 0
    while at < len(events):
        size = int(rng.integers(1, largest))
        analyzer.feed(events[at:at + size])
        at += size
        held = max(held, analyzer.held)
    return held


def assert_same_tables(analyzer, tables):
    assert set(analyzer.tables) == set(tables)
    for name, table in tables.items():
        live, exact = analyzer.tables[name], table.stats()
        got = live.stats()
        assert live.count == exact["samples"], name
        assert live.discarded == exact["discarded"], name
        if not live.count:
            continue
        assert live.min == table.samples.min() and live.max == table.samples.max(), name
        assert live.total == int(table.samples.sum()), name
        assert got["avg_ns"] == pytest.approx(exact["avg_ns"], rel=1e-12), name
        assert got["std_ns"] == pytest.approx(exact["std_ns"], rel=1e-9, abs=1e-9), name
        counts = np.bincount(table.samples // live.bin_width, minlength=len(live.histogram))
        assert np.array_equal(live.histogram, counts), name


@pytest.mark.parametrize("seed", [1, 2])
def test_pieces_give_the_exact_tables(capture, seed):
    analyzer = StreamingAnalyzer(capture.stamp_hz)
    held = feed_in_pieces(analyzer, capture.events, seed)
    assert_same_tables(analyzer, analyze(capture.events, capture.stamp_hz))
    assert held < 2000 and analyzer.events_released == 0


def test_losses_discard_the_same_pairs(capture):
    """LOSS records (the device's FIFO overflowed: a marker lost) inside the IL test: pairs
    that may span the lost event are discarded, by the streaming rules as by ``analyze``."""
    events = capture.events
    irq = np.flatnonzero((events.source == Source.IRQ) & (events.value == 1))
    at = irq[5:60:7] + 1          # right after some IRQ edges: their IL pair spans the loss
    stamp = np.insert(events.stamp, at, events.stamp[at - 1] + np.uint64(1))
    source = np.insert(events.source, at, int(Source.LOSS))
    value = np.insert(events.value, at, 1 << 4 | int(Source.MARKER))   # one marker lost
    lossy = Events(stamp, source, value)
    tables = analyze(lossy, capture.stamp_hz)
    assert tables["IL-a-1"].discarded >= len(at) - 1
    analyzer = StreamingAnalyzer(capture.stamp_hz)
    feed_in_pieces(analyzer, lossy, 3, largest=50)
    assert_same_tables(analyzer, tables)


def test_each_piece_is_analysed_once(capture, monkeypatch):
    """The held events are not analysed again to find what was counted before: one
    ``analyze`` per fed piece (with the events held from before it)."""
    from latscope.analysis import live as live_stats

    calls = []

    def counting(events, stamp_hz, **options):
        calls.append(len(events))
        return analyze(events, stamp_hz, **options)

    monkeypatch.setattr(live_stats, "analyze", counting)
    analyzer = StreamingAnalyzer(capture.stamp_hz)
    pieces = [capture.events[n:n + 500] for n in range(0, len(capture.events), 500)]
    for piece in pieces:
        analyzer.feed(piece)
    assert len(calls) == len(pieces)
    assert_same_tables(analyzer, analyze(capture.events, capture.stamp_hz))


def test_long_run_bounded_memory_and_max_per_interval(capture):
    """The suite's run repeated 30 times back to back (stamps shifted), fed in pieces:
    the held events stay those of one run's pieces, and max-per-interval matches."""
    events, clock = capture.events, capture.stamp_hz
    span = int(events.stamp.max()) + 1
    runs = 30
    long = Events(np.concatenate([events.stamp + np.uint64(i * span) for i in range(runs)]),
                  np.tile(events.source, runs), np.tile(events.value, runs))
    interval = span / clock / 3                     # three intervals per run
    analyzer = StreamingAnalyzer(clock, interval=interval, max_bins=64)
    held = feed_in_pieces(analyzer, long, 4, largest=2000)
    assert held < 4000 < len(long) // 50
    tables = analyze(long, clock)
    assert_same_tables(analyzer, tables)
    table = tables["IL-a-1"]
    live = analyzer.tables["IL-a-1"]
    assert live.bin_width > 1 and live.histogram.sum() == live.count  # the histogram grew
    seconds, maxima = live.max_over_time()
    slot = (table.starts - table.starts[0]) // live.interval_stamps
    for index in range(len(maxima)):
        mine = table.samples[slot == index]
        if len(mine):
            assert maxima[index] == pytest.approx(mine.max() * 1e9 / clock)
        else:
            assert np.isnan(maxima[index])
    assert seconds == pytest.approx(live.interval_stamps / clock)


def test_pending_events_are_bounded_even_without_samples():
    """A test window whose samples never complete (an ISR that never marks) must not hold
    events without end: past max_pending they are let go and counted."""
    from latscope_defs.markers import Point, Test, encode
    clock = 100_000_000
    start = encode(Test.IL_A, Point.START, 1)
    stamps = np.arange(1, 20_001, dtype=np.uint64) * 100
    source = np.full(len(stamps), int(Source.IRQ), np.uint8)
    value = np.tile(np.array([1, 0], np.uint64), len(stamps) // 2)
    source[0], value[0] = int(Source.MARKER), start
    analyzer = StreamingAnalyzer(clock, max_pending=1000)
    feed_in_pieces(analyzer, Events(stamps, source, value), 5, largest=300)
    assert analyzer.held <= 1001 + 1
    assert analyzer.events_released > 15_000
    assert analyzer.running == {"IL_A"}


def test_parse_duration():
    assert parse_duration("8h") == 8 * 3600
    assert parse_duration("15m") == 900 and parse_duration("2.5") == 2.5
    for bad in ("8x", "-1", "h"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_duration(bad)


def test_progress_shows_the_running_tests(capture):
    """The capture's live display: per table of the tests running now, n/min/avg/max."""
    from latscope.cli import running_tables
    from latscope_defs.markers import Point, Test, decode
    events = capture.events
    tests, points, _ = decode(events.value.astype(np.int64) & 0xffff)
    marker = events.source == Source.MARKER
    end_il = np.flatnonzero(marker & (tests == Test.IL_A) & (points == Point.END))[0]
    analyzer = StreamingAnalyzer(capture.stamp_hz)
    analyzer.feed(events[:end_il - 10])                 # inside the IL-a window
    assert analyzer.running == {"IL_A"}
    line = running_tables(analyzer)
    for name in ("IL-a-1", "IDL-a-1"):
        table = analyzer.tables[name]
        stats = table.stats()
        assert (f"{name} n={table.count} min/avg/max {stats['min_ns']:.0f}/"
                f"{stats['avg_ns']:.0f}/{stats['max_ns']:.0f} ns") in line
    analyzer.feed(events[end_il - 10:])
    assert running_tables(analyzer) == "" and analyzer.running == set()
