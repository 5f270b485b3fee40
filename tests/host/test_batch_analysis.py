"""The batch analysis (latscope.analysis.batch, latscope.analysis.statistics) is invariant in
the batch size: ``analyze`` (the batch analysis over one batch, keeping every sample) and the
bounded tables at every batch size down to one event have the same tables in the same order,
the same samples in the same order, the same discarded pairs and statistics to the last bit.
The samples themselves are checked independently elsewhere: against a pairing of the
simulator's own pin log (tests/system/test_truth_pairing.py), the ground truth of synthetic
suite runs (tests/host/test_holes.py, tests/host/test_fault_injection.py) and the sigrok
decoders (tests/host/test_pairing_rules.py); here, the tick flags against their definition and
the statistics against numpy.

Captures: real runs of the test suite (native build, host nanosecond stamps; also as a DDR
board's half-cycle stamps) read from capture files in small batches, and synthetic event
streams of every test shape with dropped markers, lost ENDs, PARAM continuations, LOSS
records of every source and pin-latency skew between sources. Statistics are checked against
numpy on the samples of ``analyze`` too: min, max and percentiles equal ``np.percentile``,
mean and standard deviation agree within a few units of the last place.
"""

import numpy as np
import pytest

from latscope.analysis.batch import BatchAnalysis, analyze_batches
from latscope.analysis.pairing import analyze
from latscope.analysis.statistics import TableAccumulator, stats_of_counts
from latscope.analysis.summary import CaptureSummary, analyze_capture
from latscope.capture.file import load_capture
from latscope.events import Events
from latscope_defs.markers import KERNEL_TICK_ENTRY, KERNEL_TICK_EXIT, Point, Test, encode
from latscope_defs.protocol import Source, hole_value
from support.analysis_checks import assert_same
from support.cases import parametrize_first_fast
from support.suite_capture import native_suite_capture

BATCHES = (1, 2, 5, 64, 4096, 1 << 40)


def batches_of(events, size):
    return lambda: (events[at : at + size] for at in range(0, len(events), size))


def shaped_stream(seed, runs=12, loss_rate=0.0, latency=None, hole_rate=0.0, kernel=False):
    """Events of test runs as the suite makes them (START [PARAM] samples END), with markers
    dropped now and then, ENDs lost, stray markers, IRQ edges every ~400 cycles, LOSS records
    (``loss_rate`` per event, of IRQ or MARKER events) and pin latencies
    subtracted from the stamps (``latency``: {source: cycles}) as the parser does; holes
    (``hole_rate`` per event: the parser's LOSS record of source HOLE, stamped with the next
    event, the events in it gone), some right after a START. ``kernel``: the kernel's
    handler-entry marker on the bus window a few cycles before (or in the cycle of) each
    ISR_ENTRY, so that ILH tables exist and markers of two sources share cycles, and its
    tick markers (KERNEL/TICK_ENTRY, 40 to 90 cycles later TICK_EXIT) about every 1500
    cycles."""
    rng = np.random.default_rng(seed)
    raw = []  # (raw stamp, source, value)
    t = 100
    shapes = {
        Test.IL_A: [Point.ISR_ENTRY, Point.ISR_EXIT, Point.THREAD],
        Test.IDL_B: [Point.ISR_ENTRY, Point.ISR_EXIT, Point.T2],
        Test.TSL_A: [Point.T1, Point.T2],
        Test.SEO_F: [Point.T1, Point.T2],
        Test.MQ: [Point.T1, Point.T2],
    }
    for _ in range(runs):
        test = rng.choice(list(shapes))
        n = int(rng.choice([1, 2, 10, 128, 255, 300]))
        raw.append((t, Source.MARKER, encode(test, Point.START, n)))
        if n >= 128:
            raw.append((t + 3, Source.MARKER, encode(test, Point.PARAM, n >> 7)))
        t += 20
        for _ in range(int(rng.integers(0, 60))):
            for point in shapes[test]:
                t += int(rng.integers(5, 120))
                if rng.random() < 0.05:
                    continue  # a dropped marker
                raw.append((t, Source.MARKER, encode(test, point, 0)))
                if kernel and point == Point.ISR_ENTRY:
                    raw.append(
                        (
                            t - int(rng.integers(0, 4)),
                            Source.BUS,
                            encode(Test.KERNEL, Point.ISR_ENTRY, 0),
                        )
                    )
                if rng.random() < 0.02:  # a stray marker of another test
                    raw.append((t + 1, Source.MARKER, encode(Test.TSL_A, Point.T2, 0)))
        t += 50
        if rng.random() < 0.85:  # else the END was lost
            raw.append((t, Source.MARKER, encode(test, Point.END, 0)))
        t += int(rng.integers(10, 400))
    end = t
    if kernel:
        bus = {stamp for stamp, source, _ in raw if source == Source.BUS}
        for at in np.cumsum(rng.integers(1000, 2000, size=end // 1000)).tolist():
            for stamp, point in (
                (at, KERNEL_TICK_ENTRY),
                (at + int(rng.integers(40, 90)), KERNEL_TICK_EXIT),
            ):
                if stamp < end and stamp not in bus:  # one event a cycle on the bus
                    raw.append((stamp, Source.BUS, encode(Test.KERNEL, point, 0)))
    irq = np.cumsum(rng.integers(300, 500, size=end // 300))
    for at in irq[irq < end].tolist():
        raw += [(at, Source.IRQ, 1), (at + 30, Source.IRQ, 0)]
    raw.sort(key=lambda event: (event[0], event[1]))
    events = []
    gone = 0
    for stamp, source, value in raw:
        after_start = source == Source.MARKER and value >> 7 & 7 == Point.START
        if gone:  # inside a hole: lost, then reported
            gone -= 1
            if not gone:
                events.append((stamp, Source.LOSS, hole_value(3)))
            continue
        if rng.random() < hole_rate * (30 if after_start else 1):
            gone = int(rng.integers(1, 4))
        if rng.random() < loss_rate:
            lost = int(rng.choice([Source.IRQ, Source.MARKER]))
            events.append((stamp, Source.LOSS, int(rng.integers(1, 9)) << 4 | lost))
        shift = (latency or {}).get(source, 0)
        events.append((max(stamp - shift, 0), source, value))
    stamp, source, value = (list(column) for column in zip(*events))
    return Events(stamp, source, value)


@parametrize_first_fast("seed", range(6))
@parametrize_first_fast("loss_rate, hole_rate", [(0.0, 0.0), (0.003, 0.0), (0.0, 0.002)])
def test_synthetic_streams_at_every_batch_size(seed, loss_rate, hole_rate):
    # Pin latencies that reorder IRQ edges and markers (the horizon must allow for them).
    latency = [None, {Source.MARKER: 2, Source.IRQ: 60}, None, {Source.MARKER: 60, Source.IRQ: 0}][
        seed % 4
    ]
    events = shaped_stream(seed, loss_rate=loss_rate, latency=latency, hole_rate=hole_rate)
    whole = analyze(events, 100e6)
    assert sum(len(t.samples) for t in whole.values()) > 50  # a real workload
    if loss_rate:
        assert sum(t.discarded for t in whole.values()), "no pair crossed a loss"
    if hole_rate:
        assert sum(t.discarded_by_holes for t in whole.values()), "no pair crossed a hole"
    skew = max((latency or {0: 0}).values())
    for size in BATCHES:
        analysis = analyze_batches(batches_of(events, size), 100e6, skew=skew)
        assert_same(whole, analysis.ordered_tables(), (seed, size))
        assert analysis.out_of_order == 0
        assert analysis.passes == 1  # losses of lively sources: counted in one pass


@pytest.mark.slow  # 5 s at every batch size; test_synthetic_streams_at_every_batch_size stays
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("hole_rate", [0.0, 0.002])
def test_handler_markers_and_shared_cycles_at_every_batch_size(seed, hole_rate):
    """The kernel's handler-entry markers (ILH tables, placed in windows by marker order) on
    the bus window, sharing cycles with the trace port's markers and, after the pin-latency
    correction, arriving after later trace-port markers: the bounded analysis takes markers
    in time order as analyze does."""
    latency = [
        None,
        {Source.MARKER: 3, Source.BUS: 0, Source.IRQ: 10},
        {Source.MARKER: 0, Source.BUS: 3, Source.IRQ: 0},
        None,
    ][seed]
    events = shaped_stream(seed + 10, runs=16, latency=latency, hole_rate=hole_rate, kernel=True)
    whole = analyze(events, 100e6)
    assert sum(len(t.samples) for name, t in whole.items() if name.startswith("ILH-")) > 20
    check_tick_flags(events, whole)
    skew = max((latency or {0: 0}).values())
    for size in BATCHES:
        analysis = analyze_batches(batches_of(events, size), 100e6, skew=skew)
        assert_same(whole, analysis.ordered_tables(), (seed, size))
        assert analysis.out_of_order == 0


def check_tick_flags(events, tables):
    """Every sample's tick flag, by its definition, one sample at a time: a tick marker's
    stamp lies in [start, start + length]."""
    tests, points = events.value >> 10, events.value >> 7 & 7
    kernel = (events.source == Source.BUS) & (tests == Test.KERNEL)
    ticks = events.stamp[kernel & ((points == KERNEL_TICK_ENTRY) | (points == KERNEL_TICK_EXIT))]
    ticks = ticks.astype(np.int64).tolist()
    flagged = 0
    for table in tables.values():
        for start, length, ticked in zip(
            table.starts.tolist(), table.samples.tolist(), table.ticked.tolist()
        ):
            assert ticked == any(start <= tick <= start + length for tick in ticks)
            flagged += ticked
    assert flagged > 10


def test_the_skew_allowance_matters():
    """Without the pin-latency allowance the horizon is wrong and samples come out wrong:
    the comparison above can fail."""
    events = shaped_stream(2, latency={Source.MARKER: 2, Source.IRQ: 60})
    whole = analyze(events, 100e6)
    analysis = analyze_batches(batches_of(events, 1), 100e6, skew=0)
    assert analysis.out_of_order
    with pytest.raises(AssertionError):
        assert_same(whole, analysis.ordered_tables(), "skew 0")


def test_a_loss_reaching_back_takes_a_second_pass():
    """A LOSS of a source whose last event lies before counted samples: the first pass
    cannot take them back, the second (every span known) gives analyze's tables."""
    events = shaped_stream(3)
    at = len(events) * 3 // 4
    loss = Events([int(events.stamp[at])], [Source.LOSS], [1 << 4 | Source.EDGE3])
    events = Events.concatenate([events[:at], loss, events[at:]])
    whole = analyze(events, 1e9)
    first = BatchAnalysis(1e9)
    for part in batches_of(events, 100)():
        first.feed(part)
    assert first.needs_second_pass
    assert_same(whole, analyze_batches(batches_of(events, 100), 1e9).ordered_tables(), "2nd")


def test_a_hole_before_the_first_event_takes_one_pass():
    """A hole before any delivered event: its span reaches back to the start of the capture,
    over no counted sample, so one pass gives the tables (and the tables of one batch are
    exact without a second pass, which analyze does not make)."""
    events = shaped_stream(5, hole_rate=0.002)
    hole = Events([int(events.stamp[0])], [Source.LOSS], [hole_value(3)])
    events = Events.concatenate([hole, events])
    whole = analyze(events, 1e9)
    for size in (7, 1 << 40):
        analysis = analyze_batches(batches_of(events, size), 1e9)
        assert analysis.passes == 1, size
        assert_same(whole, analysis.ordered_tables(), size)


def test_extra_losses():
    events = shaped_stream(4)
    holes = events.stamp[::97].astype(np.int64) + 1
    whole = analyze(events, 1e9, losses=holes)
    for size in (3, 1000):
        bounded = analyze_batches(batches_of(events, size), 1e9, losses=holes)
        assert_same(whole, bounded.ordered_tables(), size)


@pytest.fixture(scope="module")
def suite_captures(tmp_path_factory):
    directory = tmp_path_factory.mktemp("bounded")
    paths = []
    for shift in (0, 1):
        path = directory / f"suite-{shift}.lsc"
        native_suite_capture(path, samples=300, stamp_shift=shift)
        paths.append(path)
    return paths


@pytest.mark.slow
def test_real_suite_captures(suite_captures):
    for path, sizes in zip(suite_captures, [(1, 1000), (7, 1 << 40)]):
        capture = load_capture(path)
        whole = analyze(capture.events, capture.stamp_hz)
        assert len(whole) >= 20 and all(len(t.samples) for t in whole.values())
        for size in sizes:
            bounded = analyze_batches(batches_of(capture.events, size), capture.stamp_hz)
            assert_same(whole, bounded.ordered_tables(), (path.name, size))


@pytest.mark.slow
def test_statistics_against_numpy(suite_captures):
    """Independent of the accumulator: numpy on the samples of ``analyze``."""
    capture = load_capture(suite_captures[1])
    for table in analyze(capture.events, capture.stamp_hz).values():
        ns = table.ns()
        row = table.stats()
        assert row["min_ns"] == ns.min() and row["max_ns"] == ns.max()
        for key, q, fewest in (("p50_ns", 50, 2), ("p99_ns", 99, 100), ("p999_ns", 99.9, 1000)):
            assert row[key] == (np.percentile(ns, q) if len(ns) >= fewest else None)
        assert row["avg_ns"] == ns.mean()  # exact float sum: same mean
        assert row["std_ns"] == pytest.approx(ns.std(), rel=1e-14)


@pytest.mark.parametrize("stamp_hz", [1e9, 72e6, 36e6, 200e6])
def test_percentiles_and_moments_of_counts(stamp_hz):
    rng = np.random.default_rng(int(stamp_hz) % 1000)
    for _ in range(200):
        samples = rng.integers(0, rng.integers(1, 10**6), rng.integers(1, 3000))
        ns = samples * (1e9 / stamp_hz)
        row = stats_of_counts(*np.unique(samples, return_counts=True), stamp_hz)
        for key, q, fewest in (("p50_ns", 50, 2), ("p99_ns", 99, 100), ("p999_ns", 99.9, 1000)):
            assert row[key] == (np.percentile(ns, q) if len(ns) >= fewest else None)
        assert row["avg_ns"] == pytest.approx(ns.mean(), rel=1e-14)
        assert row["std_ns"] == pytest.approx(ns.std(), rel=1e-12, abs=1e-9)


def test_envelope_and_interval_maxima_are_exact():
    rng = np.random.default_rng(5)
    samples = rng.integers(0, 5000, 100_000)
    starts = np.cumsum(rng.integers(1, 3000, len(samples)))
    accumulator = TableAccumulator("T", 1e9, interval_stamps=1_000_000, keep_points=100, buckets=64)
    for at in range(0, len(samples), 777):
        accumulator.add(samples[at : at + 777], starts[at : at + 777])
    first, first_start, low, high, mean = accumulator.envelope()
    width = accumulator.bucket_width
    assert width == 2048 and len(first) == -(-len(samples) // width)
    for k, index in enumerate(first.tolist()):
        piece = samples[index : index + width]
        assert (low[k], high[k], first_start[k]) == (piece.min(), piece.max(), starts[index])
        assert mean[k] == piece.sum() / len(piece)
    slot = (starts - starts[0]) // 1_000_000
    expected = np.full(slot[-1] + 1, -1)
    np.maximum.at(expected, slot, samples)
    assert np.array_equal(
        accumulator.interval_maxima_ns(),
        np.where(expected < 0, np.nan, expected * 1.0),
        equal_nan=True,
    )


@pytest.mark.parametrize("background", [False, True])
def test_capture_files_read_in_batches(suite_captures, background):
    """``analyze_capture``: the file read in small batches (in a helper process or not)
    gives ``analyze``'s tables of the whole loaded capture, and the same run summary."""
    path = suite_captures[0]
    capture = load_capture(path)
    summary, tables = analyze_capture(path, batch_bytes=3000, background=background)
    assert_same(analyze(capture.events, capture.stamp_hz), tables, background)
    expected = CaptureSummary.of_capture(capture)
    for key in (
        "event_count",
        "stamp_min",
        "stamp_max",
        "metadata",
        "end",
        "duration_s",
        "first_stamp",
        "device_losses",
        "holes",
    ):
        assert getattr(summary, key) == getattr(expected, key), key
    assert summary.parser_stats == capture.parser_stats
    assert summary.file_stats == capture.file_stats
    assert summary.summary() == capture.summary()
    assert summary.out_of_order == 0 and summary.passes == 1


def _export_files(sr, vcd):
    """The contents of a session file's entries (the zip's dates vary) and of a VCD."""
    import zipfile

    with zipfile.ZipFile(sr) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    return entries, vcd.read_text()


@pytest.mark.parametrize("window", [(None, None), ("middle", None)])
def test_export_from_the_file_in_batches(suite_captures, tmp_path, window):
    """``export_capture`` of a capture file, read in small batches, writes the files of the
    loaded capture exported at once (``LevelTracker`` fed everything, ``write_sr``)."""
    from latscope.export.files import BatchMarkers, OpenWindows, between, export_capture, extent
    from latscope.export.levels import LevelTracker
    from latscope.export.sigrok import write_sr
    from latscope.export.vcd import VcdWriter
    from latscope.export.writer import Signals
    from latscope_defs.channels import Layout

    path = suite_captures[0]
    capture = load_capture(path)
    start = None if window[0] is None else int(capture.events.stamp[len(capture.events) // 2])
    events = between(capture.events, start, None)
    layout = Layout.for_identity(capture.identity)
    stamps = events.stamp.astype(np.int64)
    origin, samples = extent(
        int(stamps.min()), int(stamps.max()), int(capture.stamp_hz), start, None
    )
    if start is not None:  # the STARTs (and PARAMs) of windows open at ``start`` first
        before = OpenWindows()
        before.feed(BatchMarkers(capture.events), start)
        events = Events.concatenate([before.context(start, origin), events])
    tracker = LevelTracker(layout)
    changes = tracker.feed(events, final=True)
    write_sr(
        tmp_path / "whole.sr",
        layout.names,
        changes,
        int(capture.stamp_hz),
        origin=origin,
        samples=samples,
        initial=tracker.initial,
    )
    writer = VcdWriter(tmp_path / "whole.vcd")
    writer.begin(
        Signals(
            layout,
            int(capture.stamp_hz),
            origin,
            tracker.initial,
            comment=f"latscope export of {path.name}: sample 0 = stamp "
            f"{origin}, {int(capture.stamp_hz)} samples/s",
        )
    )
    writer.add(changes)
    writer.finish(origin + samples)
    info = export_capture(
        path, [tmp_path / "parts.sr", tmp_path / "parts.vcd"], start=start, batch_bytes=2000
    )
    assert (info.origin, info.samples, info.changes) == (origin, samples, len(changes))
    assert _export_files(tmp_path / "parts.sr", tmp_path / "parts.vcd") == _export_files(
        tmp_path / "whole.sr", tmp_path / "whole.vcd"
    )
