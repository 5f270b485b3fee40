"""Figures of sample tables: time series, frequency distribution, maximum per interval, tail
(exceedance probability and its estimate), latency by IRQ trigger delay.

Every function returns a :class:`matplotlib.figure.Figure` made without pyplot (no global
state, no display: the Agg renderer), so reports can be made in batch and in threads, and
takes a table as :func:`~latscope.analysis.pairing.analyze` gives it (``SampleTable``) or as
the bounded analysis accumulates it (``TableAccumulator``): the figures are made from the
accumulator, so both give the same figures. :func:`save` writes a figure as PNG and SVG.
"""

import io
import math
from pathlib import Path

import numpy as np

from ..analysis.statistics import TableAccumulator

__all__ = [
    "MAX_BINS",
    "MAX_POINTS",
    "tick_histogram",
    "accumulated",
    "time_series",
    "latency_over_time",
    "cdf",
    "distribution",
    "overlay_distributions",
    "interval_maxima",
    "max_over_time",
    "exceedance",
    "MARKED",
    "latency_by_delay",
    "save",
    "png_bytes",
    "table_figures",
    "figure_name",
]

#: Most bins of a distribution (the bin width grows by whole ticks past this).
MAX_BINS = 200
#: Most samples drawn one by one in a time series.
MAX_POINTS = 20_000
WIDTH, HEIGHT = 7.5, 3.2  # inches; 100 dpi PNGs: 750 px wide


def tick_histogram(samples, max_bins=MAX_BINS, *, low=None, high=None, counts=None):
    """Histogram of integer tick values: ``(edges, counts, width)``.

    Bins are ``width`` ticks wide (a whole number, the smallest that needs at most
    ``max_bins`` bins) and start at ``low`` (default: the smallest sample); ``edges`` are
    in ticks, ``len(edges) == len(counts) + 1``. ``low``/``high`` let several tables share
    the same bins. ``counts``: ``samples`` are distinct values, each counted that often."""
    samples = np.asarray(samples, np.int64)
    if not len(samples):
        return np.zeros(1, np.int64), np.zeros(0, np.int64), 1
    low = int(samples.min()) if low is None else int(low)
    high = int(samples.max()) if high is None else int(high)
    width = max(1, math.ceil((high - low + 1) / max_bins))
    bins = (high - low) // width + 1
    slot = (samples - low) // width
    if counts is None:
        binned = np.bincount(slot, minlength=bins)
    else:
        binned = np.zeros(bins, np.int64)
        np.add.at(binned, slot, np.asarray(counts, np.int64))
    edges = low + width * np.arange(bins + 1, dtype=np.int64)
    return edges, binned, width


def accumulated(table, interval_s=None):
    """The :class:`~latscope.analysis.statistics.TableAccumulator` of a table (itself if it is one);
    ``interval_s``: the max-per-interval width it must have kept."""
    if isinstance(table, TableAccumulator):
        return table
    interval = max(1, int(interval_s * table.stamp_hz)) if interval_s else None
    return TableAccumulator.of_table(table, interval_stamps=interval)


def _ns_per_tick(stamp_hz):
    return 1e9 / stamp_hz


def _figure(rows=1, height=HEIGHT):
    # matplotlib is imported on the first figure: `latscope analyze` needs none (0.6 s).
    from matplotlib.figure import Figure

    figure = Figure(figsize=(WIDTH, height * rows), dpi=100, layout="constrained")
    axes = figure.subplots(rows, 1, squeeze=False)[:, 0]
    return figure, axes


def time_series(table, *, x="index"):
    """Latency of every sample in capture order. ``x``: ``"index"`` (sample number) or
    ``"time"`` (capture time of the sample's start, seconds from the first sample).

    Time series of more than :data:`MAX_POINTS` samples are drawn as the min..max envelope of
    consecutive slices of the samples (a power of two of them each: the envelope of
    :class:`~latscope.analysis.statistics.TableAccumulator`), so figures stay small and fast for
    10^9 samples and no maximum disappears.
    """
    table = accumulated(table)
    figure, (axes,) = _figure()
    ns_per_stamp = table.ns_per_stamp
    count = table.count
    if count > MAX_POINTS:
        index, starts, low, high, _ = table.envelope()
        at = (starts - table.first_start) / table.stamp_hz if x == "time" else index
        axes.fill_between(
            at,
            low * ns_per_stamp,
            high * ns_per_stamp,
            step="post",
            linewidth=0.6,
            color="tab:blue",
            label=f"min..max of {table.bucket_width} samples",
        )
        axes.legend(loc="upper right", fontsize="small")
    elif count:
        samples, starts = table.kept_points()
        at = (starts - starts[0]) / table.stamp_hz if x == "time" else np.arange(count)
        axes.plot(
            at,
            samples * ns_per_stamp,
            linestyle="none",
            marker=".",
            markersize=2.5,
            color="tab:blue",
        )
    axes.set_xlabel("capture time (s)" if x == "time" and count else "sample")
    axes.set_ylabel("latency (ns)")
    axes.set_title(f"{table.name}: latency of each sample ({count} samples)")
    axes.set_ylim(bottom=0)
    axes.grid(alpha=0.3)
    if count:  # last: the labels are placed in the final limits
        _mark_worst(axes, table, x)
    return figure


def _mark_worst(axes, table, x):
    """Rings the worst samples (latscope.analysis.worst.WORST_SHOWN) with their rank and flags, as
    the report lists them; labels of close samples are moved up until none overlaps another."""
    from ..analysis.worst import WORST_SHOWN, flags_text

    labels = []
    for rank, entry in enumerate(table.worst(WORST_SHOWN), 1):
        at = (
            (entry["start"] - table.first_start) / table.stamp_hz if x == "time" else entry["index"]
        )
        flags = flags_text(entry)
        labels.append(_ring(axes, at, entry["ns"], f"#{rank}{f' {flags}' if flags else ''}"))
    _separate(axes, labels)


#: Points between two labels that _separate moves apart.
LABEL_GAP = 1.0


def _separate(axes, labels):
    """Moves each label (in rank order) up, in points, past every label placed before it that
    it would overlap: measured with the figure's final layout and limits."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    figure = axes.figure
    canvas = figure.canvas
    if not isinstance(canvas, FigureCanvasAgg):
        canvas = FigureCanvasAgg(figure)
    renderer = canvas.get_renderer()
    figure.draw_without_rendering()
    placed = []
    points_per_pixel = 72.0 / figure.dpi
    for label in labels:
        box = label.get_window_extent(renderer)
        while any(box.overlaps(other) for other in placed):
            above = max(other.y1 for other in placed if box.overlaps(other))
            dx, dy = label.xyann
            label.xyann = (dx, dy + (above - box.y0) * points_per_pixel + LABEL_GAP)
            box = label.get_window_extent(renderer)
        placed.append(box)


def _ring(axes, x, y, label):
    """A red ring at a worst point, labelled; the label's Annotation."""
    axes.plot(
        [x], [y], marker="o", markersize=7, fillstyle="none", color="tab:red", linestyle="none"
    )
    return axes.annotate(
        label,
        (x, y),
        textcoords="offset points",
        xytext=(5, 3),
        fontsize="x-small",
        color="tab:red",
    )


def latency_over_time(table):
    """Latency over capture time (seconds from the table's first sample), at any run length:
    up to :data:`MAX_POINTS` samples every one as a point; more, per time bin of consecutive
    samples (``TableAccumulator.time_bins``: :data:`~latscope.analysis.statistics.TIME_BINS`
    at most) the band from its p99 to its max and its median, so that the figure stays the
    same size however long the run. The worst samples are ringed."""
    table = accumulated(table)
    figure, (axes,) = _figure()
    count = table.count
    if count > MAX_POINTS:
        starts, median, p99, high = table.time_bins()
        at = (starts - table.first_start) / table.stamp_hz
        axes.fill_between(
            at, p99, high, step="post", alpha=0.35, color="tab:red", label="p99..max per bin"
        )
        axes.plot(at, p99, drawstyle="steps-post", linewidth=0.8, color="tab:red", label="p99")
        axes.plot(at, median, drawstyle="steps-post", linewidth=1.0, color="black", label="median")
        axes.legend(loc="upper right", fontsize="small")
        detail = f"{len(at)} bins of {table.time_bin_width} samples"
    elif count:
        samples, starts = table.kept_points()
        at = (starts - starts[0]) / table.stamp_hz
        axes.plot(
            at,
            samples * table.ns_per_stamp,
            linestyle="none",
            marker=".",
            markersize=2.5,
            color="tab:blue",
        )
        detail = "every sample"
    else:
        detail = "no sample"
    axes.set_xlabel("capture time (s)")
    axes.set_ylabel("latency (ns)")
    axes.set_title(f"{table.name}: latency over time ({count} samples, {detail})")
    axes.set_ylim(bottom=0)
    axes.grid(alpha=0.3)
    if count:  # last: the labels are placed in the final limits
        _mark_worst(axes, table, "time")
    return figure


def cdf(named_tables, *, title, log_tail=True):
    """The cumulative distribution of each table of ``named_tables`` (``(label, table)``):
    the fraction of its samples at or below each latency, exact (from the value counts);
    ``log_tail``: below it the tail, the fraction above each latency on a log scale, where
    the rare samples that decide a worst case stay visible."""
    figure, axes = _figure(2 if log_tail else 1, height=2.6)
    for label, table in named_tables:
        table = accumulated(table)
        if not table.count:
            continue
        ns = table.values * table.ns_per_stamp
        below = np.cumsum(table.counts) / table.count
        axes[0].step(ns, below, where="post", linewidth=1.0, label=label)
        if log_tail:
            above = 1.0 - below
            shown = above > 0
            axes[1].step(ns[shown], above[shown], where="post", linewidth=1.0, label=label)
    axes[0].set_ylabel("P(sample <= latency)")
    axes[0].set_title(title)
    axes[0].legend(fontsize="x-small", loc="lower right")
    if log_tail:
        axes[1].set_yscale("log")
        axes[1].set_ylabel("P(sample > latency)")
    for ax in axes:
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel("latency (ns)")
    return figure


def _bar(axes, edges, counts, tick_ns, **style):
    axes.stairs(counts, edges * tick_ns, fill=style.pop("fill", True), **style)


def distribution(table):
    """Frequency distribution of one table: count per bin of whole ticks, on a linear and on
    a logarithmic count axis.

    Distributions are histograms *in clock ticks*: a bin is a whole number of ticks wide, so no
    bin straddles a tick boundary and every bin holds the samples of the same tick values (a bin
    width that is not a whole number of ticks makes comb artefacts). The count is shown linear
    and logarithmic: on the log scale the rare maxima that decide a worst case stay visible, as
    in OSADL's latency plots.
    """
    table = accumulated(table)
    figure, axes = _figure(2, height=2.6)
    tick_ns = _ns_per_tick(table.stamp_hz)
    edges, counts, width = tick_histogram(table.values, counts=table.counts)
    for ax, log in zip(axes, (False, True)):
        _bar(ax, edges, counts, tick_ns, color="tab:blue")
        ax.set_ylabel("samples (log)" if log else "samples")
        if log and len(counts):
            ax.set_yscale("log")
            ax.set_ylim(bottom=0.7)
        ax.grid(alpha=0.3)
    axes[0].set_title(
        f"{table.name}: frequency distribution (bin = {width} tick(s) = {width * tick_ns:g} ns)"
    )
    axes[1].set_xlabel("latency (ns)")
    return figure


def overlay_distributions(named_tables, *, title=None):
    """Distributions of the same test from several captures, on shared bins: a list of
    ``(label, table)``; linear and log count. Bins are whole ticks of the first table's
    clock."""
    figure, axes = _figure(2, height=2.6)
    present = [(label, accumulated(table)) for label, table in named_tables]
    present = [(label, table) for label, table in present if table.count]
    if present:
        # Shared bins in ns: convert every table's values to the first table's ticks.
        tick_ns = _ns_per_tick(present[0][1].stamp_hz)
        ticks = [
            np.rint(table.values * table.ns_per_stamp / tick_ns).astype(np.int64)
            for _, table in present
        ]
        low = min(int(t.min()) for t in ticks)
        high = max(int(t.max()) for t in ticks)
        for ax, log in zip(axes, (False, True)):
            for (label, table), t in zip(present, ticks):
                edges, counts, width = tick_histogram(t, low=low, high=high, counts=table.counts)
                _bar(ax, edges, counts, tick_ns, fill=False, linewidth=1.2, label=label)
            if log:
                ax.set_yscale("log")
                ax.set_ylim(bottom=0.7)
            ax.set_ylabel("samples (log)" if log else "samples")
            ax.grid(alpha=0.3)
        axes[0].legend(fontsize="small")
        axes[0].set_title(
            title or f"{present[0][1].name}: distributions (bin = {width * tick_ns:g} ns)"
        )
    axes[1].set_xlabel("latency (ns)")
    return figure


def max_over_time(interval_s, maxima_ns, *, title="maximum per interval", intervals=None):
    """The largest sample of every interval of ``interval_s`` seconds (NaN: no sample),
    e.g. from :func:`interval_maxima`: for runs where the worst case appears once an hour.
    ``intervals``: the number of each maximum's interval (only those that hold samples,
    ``interval_maxima(..., sparse=True)``); None: one per interval from the first."""
    figure, (axes,) = _figure()
    maxima_ns = np.asarray(maxima_ns, np.float64)
    intervals = np.arange(len(maxima_ns)) if intervals is None else np.asarray(intervals)
    span = int(intervals[-1]) + 1 if len(intervals) else 0
    hours = interval_s * span >= 3 * 3600
    scale, unit = (3600.0, "h") if hours else (1.0, "s")
    width = interval_s / scale
    low = intervals * width
    if len(maxima_ns):
        axes.hlines(maxima_ns, low, low + width, color="tab:red", linewidth=1.2)
        axes.plot(
            low + width / 2, maxima_ns, linestyle="none", marker=".", markersize=3, color="tab:red"
        )
    axes.set_xlabel(f"capture time ({unit})")
    axes.set_ylabel("max latency (ns)")
    axes.set_title(f"{title} ({interval_s:g} s)")
    axes.set_ylim(bottom=0)
    axes.grid(alpha=0.3)
    return figure


def interval_maxima(table, interval_s, sparse=False):
    """The largest sample (ns) of every ``interval_s`` seconds of capture time, counted from
    the table's first sample (NaN: no sample in that interval); ``sparse``: (interval
    numbers, maxima) of the intervals that hold samples only."""
    table = accumulated(table, interval_s)
    if table.interval_stamps != max(1, int(interval_s * table.stamp_hz)):
        raise ValueError(
            f"{table.name}: maxima kept per {table.interval_stamps} stamps, not per {interval_s} s"
        )
    return table.interval_maxima() if sparse else table.interval_maxima_ns()


#: Probabilities whose estimated latency the exceedance figure marks.
MARKED = (1e-6, 1e-9)
#: Rows of the fitted tail drawn (probabilities from the threshold's down to the lowest).
TAIL_ROWS = 40
#: The lowest probability drawn.
LOWEST_PROBABILITY = 1e-10


def exceedance(table):
    """The tail of one table: the fraction of its samples above each latency (the empirical
    complementary distribution, log scale, its last step reaching the measured maximum, a
    dotted line), and its tail estimate (:mod:`latscope.analysis.tail`): the fitted tail
    from the threshold down to :data:`LOWEST_PROBABILITY` with its confidence band (the
    intervals of every drawn probability: the same joint region as the interval of the
    table's figures, so the marked points are those figures; an open end drawn to the
    figure's edge) and the :data:`MARKED` points; or the reason it is not estimable."""
    import textwrap

    from ..analysis.tail import PROBABILITIES, estimate_table, exceedance_count

    table = accumulated(table)
    figure, (axes,) = _figure(height=3.8)
    n = table.count
    ns = table.values * table.ns_per_stamp
    above = (n - np.cumsum(table.counts)) / n if n else np.zeros(0)
    shown = above > 0
    if shown.any():  # each step to the next value, the last to the maximum
        x = np.append(ns[shown], ns[-1])
        axes.step(
            x,
            np.append(above[shown], above[shown][-1]),
            where="post",
            color="tab:blue",
            label="samples",
        )
    if n:
        axes.axvline(
            ns[-1],
            color="tab:blue",
            linestyle=":",
            linewidth=1,
            label=f"max {ns[-1]:.1f} ns (measured)",
        )
    zeta = exceedance_count(n) / n if n else 1.0
    rows = np.geomspace(zeta, LOWEST_PROBABILITY, TAIL_ROWS)[1:]
    grid = sorted({*rows.tolist(), *PROBABILITIES}, reverse=True)
    estimate = estimate_table(table, [p for p in grid if p < zeta])
    if estimate.refusal is None:
        fitted = [q for q in estimate.quantiles if q.method == "fit"]
        p = np.array([q.probability for q in fitted])
        x = np.array([q.ns for q in fitted])
        low = np.array([q.low_ns for q in fitted])
        high = np.array([q.high_ns for q in fitted])
        edge = max(np.max(high[np.isfinite(high)], initial=0.0), np.max(x)) * 1.05
        axes.fill_betweenx(
            p,
            low,
            np.minimum(high, edge),
            color="tab:orange",
            alpha=0.25,
            label=f"{estimate.confidence:.0%} confidence band",
        )
        axes.plot(x, p, color="tab:orange", label="fitted tail (GPD)")
        for q in fitted:
            if q.probability in MARKED:
                axes.plot(
                    [q.ns],
                    [q.probability],
                    marker="o",
                    color="tab:red",
                    linestyle="none",
                    label=f"p {q.probability:.0e}: {q.ns:.1f} ns",
                )
        axes.set_xlim(right=edge)
        title = f"{table.name}: tail ({n} samples) and its estimate"
    else:
        axes.text(
            0.02,
            0.04,
            "\n".join(textwrap.wrap(estimate.refusal, 95)),
            transform=axes.transAxes,
            fontsize="x-small",
            va="bottom",
        )
        title = f"{table.name}: tail ({n} samples), not estimable"
    axes.set_yscale("log")
    axes.set_ylim(LOWEST_PROBABILITY, 1.5)
    axes.set_xlabel("latency (ns)")
    axes.set_ylabel("P(sample > latency)")
    axes.set_title(title)
    axes.grid(alpha=0.3)
    axes.legend(loc="upper right", fontsize="x-small")
    return figure


def latency_by_delay(table):
    """Latency versus IRQ trigger delay (``TableAccumulator.by_delay``, the rows of the
    report's latency-by-delay table): per delay the min..max range and the mean of its
    samples, the worst delays (``DelayStats.rows``' ``worst``) ringed with their delay. The
    delay axis is in capture cycles, the unit of the IRQ records."""
    table = accumulated(table)
    figure, (axes,) = _figure()
    rows = table.by_delay.rows(table.ns_per_stamp, None)
    if rows:
        delay = np.array([row["delay_cycles"] for row in rows])
        low, high, mean = (
            np.array([row[key] for row in rows]) for key in ("min_ns", "max_ns", "mean_ns")
        )
        axes.fill_between(
            delay, low, high, step="mid", alpha=0.25, color="tab:blue", label="min..max"
        )
        axes.plot(delay, mean, marker=".", markersize=3, linewidth=0.8, color="black", label="mean")
        for row in rows:
            if row["worst"]:
                _ring(axes, row["delay_cycles"], row["max_ns"], f"delay {row['delay_cycles']}")
        axes.legend(loc="lower right", fontsize="small")
    axes.set_xlabel("IRQ trigger delay (capture cycles)")
    axes.set_ylabel("latency (ns)")
    axes.set_title(f"{table.name}: latency by trigger delay ({len(rows)} delays, worst ringed)")
    axes.set_ylim(bottom=0)
    axes.grid(alpha=0.3)
    return figure


def save(figure, stem, formats=("png", "svg")):
    """Writes ``stem.png`` and ``stem.svg``; returns the paths."""
    paths = []
    for fmt in formats:
        path = Path(f"{stem}.{fmt}")
        figure.savefig(path, format=fmt)
        paths.append(path)
    return paths


def png_bytes(figure):
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def figure_name(table_name, kind):
    """File stem of a table's figure, e.g. ``IL-a-1.distribution``."""
    return f"{table_name}.{kind}"


def table_figures(table, *, x="index", interval_s=None):
    """``{kind: Figure}`` of one table: ``timeseries``, ``overtime`` (latency over capture
    time), ``distribution`` and ``exceedance``
    (the tail and its estimate), with ``interval_s`` also ``maxima`` (the maximum per
    interval of capture time), and for a table whose samples carry IRQ trigger delays
    ``by-delay`` (:func:`latency_by_delay`)."""
    figures = {
        "timeseries": time_series(table, x=x),
        "overtime": latency_over_time(table),
        "distribution": distribution(table),
        "exceedance": exceedance(table),
    }
    if len(accumulated(table).by_delay.delays):
        figures["by-delay"] = latency_by_delay(table)
    if interval_s:
        intervals, maxima = interval_maxima(table, interval_s, sparse=True)
        figures["maxima"] = max_over_time(
            interval_s, maxima, intervals=intervals, title=f"{table.name}: maximum per interval"
        )
    return figures
