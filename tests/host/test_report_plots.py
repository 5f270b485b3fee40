"""The report's latency-over-time, CDF and worst-sample figures: the data of their artists
(lines, bands, labels) against the samples, computed here with numpy; a run of 10^6 samples
drawn in bounded time and points."""

import time

import numpy as np
import pytest

from latscope.analysis.statistics import TIME_BINS, TableAccumulator
from latscope.report import plots

STAMP_HZ = 100e6  # 10 ns a stamp
NS = 1e9 / STAMP_HZ


def table(samples, name="IL-a-1", period=5000):
    """A table of ``samples`` (stamps), one every ``period`` stamps, added in batches."""
    samples = np.asarray(samples, np.int64)
    starts = np.arange(len(samples), dtype=np.int64) * period + 777
    accumulator = TableAccumulator(name, STAMP_HZ)
    for at in range(0, len(samples), 65536):
        accumulator.add(samples[at : at + 65536], starts[at : at + 65536])
    return accumulator, starts


def test_a_short_run_is_drawn_sample_by_sample_over_capture_time():
    samples = np.random.default_rng(3).integers(50, 400, 1000)
    accumulator, starts = table(samples)
    (axes,) = plots.latency_over_time(accumulator).axes
    points = axes.lines[0]
    assert np.array_equal(points.get_xdata(), (starts - starts[0]) / STAMP_HZ)
    assert np.array_equal(points.get_ydata(), samples * NS)
    assert axes.get_xlabel() == "capture time (s)"


def test_a_long_run_is_drawn_as_bins_of_median_p99_and_max_in_bounded_time():
    samples = np.random.default_rng(4).integers(50, 4000, 1_000_000)
    started = time.monotonic()
    accumulator, starts = table(samples)
    figure = plots.latency_over_time(accumulator)
    plots.png_bytes(figure)
    assert time.monotonic() - started < 30  # 2 cores shared: about 3 s alone

    (axes,) = figure.axes
    width = accumulator.time_bin_width
    bins = [samples[at : at + width] * NS for at in range(0, len(samples), width)]
    assert TIME_BINS // 2 < len(bins) <= TIME_BINS
    p99, median = axes.lines[0], axes.lines[1]
    assert median.get_label() == "median" and p99.get_label() == "p99"
    assert np.array_equal(median.get_xdata(), (starts[::width] - starts[0]) / STAMP_HZ)
    assert np.array_equal(median.get_ydata(), [np.percentile(b, 50) for b in bins])
    assert np.array_equal(p99.get_ydata(), [np.percentile(b, 99) for b in bins])
    (band,) = axes.collections  # p99..max of each bin
    top = band.get_paths()[0].vertices[:, 1]
    assert set(np.max(b) for b in bins) <= set(top) and top.max() == samples.max() * NS
    drawn = sum(len(line.get_xdata()) for line in axes.lines) + len(top)
    assert drawn < 10 * TIME_BINS  # not a point per sample


@pytest.mark.parametrize("log_tail", [True, False])
def test_cdf_of_a_family_is_the_fraction_at_or_below_each_latency(log_tail):
    rng = np.random.default_rng(5)
    family = [(f"IL-a-{n}", rng.integers(100, 300 * n, 500 * n)) for n in (1, 2)]
    figure = plots.cdf(
        [(name, table(s, name)[0]) for name, s in family], title="IL", log_tail=log_tail
    )
    axes = figure.axes
    assert len(axes) == (2 if log_tail else 1)
    for (name, samples), line in zip(family, axes[0].lines, strict=True):
        ordered = np.sort(samples * NS)
        x = line.get_xdata()
        assert line.get_label() == name and np.array_equal(x, np.unique(ordered))
        below = np.searchsorted(ordered, x, side="right") / len(ordered)
        assert np.allclose(line.get_ydata(), below, rtol=0, atol=1e-12)
    if log_tail:
        assert axes[1].get_yscale() == "log"
        for (_, samples), line in zip(family, axes[1].lines, strict=True):
            ordered = np.sort(samples * NS)
            above = 1 - np.searchsorted(ordered, line.get_xdata(), side="right") / len(ordered)
            assert np.allclose(line.get_ydata(), above, rtol=0, atol=1e-12)
            assert line.get_xdata()[-1] < ordered[-1]  # P > max is 0: not on a log scale


@pytest.mark.parametrize("figure_of", [plots.time_series, plots.latency_over_time])
def test_worst_sample_labels_do_not_overlap(figure_of):
    # The three worst samples next to each other with nearly the same latency: their rings
    # overlap, their labels must not.
    samples = np.full(2000, 100)
    samples[1000:1003] = [900, 899, 898]
    figure = figure_of(table(samples)[0])
    (axes,) = figure.axes
    renderer = figure.canvas.get_renderer()
    labels = [text for text in axes.texts if text.get_text().startswith("#")]
    assert [label.get_text() for label in labels] == ["#1", "#2", "#3"]
    boxes = [label.get_window_extent(renderer) for label in labels]
    for i, box in enumerate(boxes):
        for other in boxes[i + 1 :]:
            assert not box.overlaps(other)
