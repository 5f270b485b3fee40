"""Exact statistics of a sample table in bounded memory: what reports need, without the samples
(:class:`TableAccumulator`), and the one definition of a table's statistics
(:func:`stats_of_counts`; docs/tests.md, "How the statistics are computed").
"""

import math
from collections.abc import Sequence
from typing import NotRequired, Protocol, TypedDict, Unpack

import numpy as np
import numpy.typing as npt

from .accounting import NOTHING_LOST, Lost
from .delays import DelayStats
from .rules import TableParameters

__all__ = [
    "KEEP_POINTS",
    "ENVELOPE_BUCKETS",
    "WORST_KEPT",
    "TIME_BINS",
    "PERCENTILES",
    "CONFIDENCE",
    "TableAccumulator",
    "stats_of_counts",
    "percentile_of_counts",
    "percentile_supported",
    "quantile_ranks",
    "ci_key",
    "merge_counts",
    "interval_stamps",
    "Stats",
    "Worst",
    "WorstEvent",
    "Flags",
]

#: A table row's statistics (:func:`stats_of_counts`): counts, figures in ns (None: not
#: supported by the sample count), confidence intervals ([low, high], None: open).
Stats = dict[str, int | float | list[float | None] | None]


class WorstEvent(TypedDict):
    """An event around a worst sample (:func:`latscope.analysis.worst.worst_samples`)."""

    stamp: int
    offset_ns: float  # from the sample's start
    where: str  # "before", "inside", "after"
    source: str
    event: str  # latscope.analysis.worst.describe_event


class Worst(TypedDict):
    """One of a table's worst samples (:meth:`TableAccumulator.worst`), and what
    :func:`latscope.analysis.worst.worst_samples` adds to it."""

    index: int
    start: int
    end: int
    value: int
    ns: float
    cold: bool
    tick: bool
    rank: NotRequired[int]
    time_s: NotRequired[float]
    events: NotRequired[list[WorstEvent]]
    events_omitted: NotRequired[int]


#: A table's flagged samples (:meth:`TableAccumulator.flags`).
Flags = dict[str, int | Stats]

_Int64s = npt.NDArray[np.int64]


class _WholeTable(Protocol):
    """What :meth:`TableAccumulator.of_table` takes of a whole table
    (:class:`latscope.analysis.pairing.SampleTable`, which imports this module)."""

    name: str
    stamp_hz: float
    parameters: TableParameters
    samples: _Int64s
    starts: _Int64s
    ticked: npt.NDArray[np.bool_]
    delays: _Int64s
    discarded: int
    discarded_by_holes: int
    lost: Lost


class _Options(TypedDict, total=False):
    """:class:`TableAccumulator`'s keyword options."""

    interval_stamps: int | None
    keep_points: int
    buckets: int


#: Samples kept one by one for the time series (plots.MAX_POINTS draws up to this many).
KEEP_POINTS = 20_000
#: Buckets of the sample-index envelope (plots draw up to MAX_POINTS // 4 slices).
ENVELOPE_BUCKETS = 8192
#: Time bins of the latency-over-time figure of a long table: consecutive samples whose
#: exact value counts are kept per bin, for the bin's median, p99 and max. 128: a band 5-6 px
#: wide per bin on the report's 750 px figure, and memory at most 128 times the table's own
#: value counts.
TIME_BINS = 128
#: Largest samples kept per table (reports show up to this many worst samples).
WORST_KEPT = 16
#: Percentiles of a table row: (key, q in percent, fewest samples). THE rule of every
#: output (text, CSV, JSON, HTML, compare, sweep, live): a percentile q is reported only
#: from 1 / (1 - q) samples up (docs/tests.md, "Statistics"); below, it is null ("–").
PERCENTILES = (("p50_ns", 50, 2), ("p99_ns", 99, 100), ("p999_ns", 99.9, 1000))
#: Coverage of the confidence interval given with every reported percentile.
CONFIDENCE = 0.95


def percentile_supported(q: float, n: int) -> bool:
    """Whether a table of ``n`` samples reports percentile ``q`` (:data:`PERCENTILES`)."""
    fewest = next(f for _, p, f in PERCENTILES if p == q)
    return n >= fewest


def _binomial_cdf_window(n: int, p: float) -> tuple[int, npt.NDArray[np.float64]]:
    """(first k, cumulative probabilities P(B <= k) for k = first, first + 1, ...) of
    B ~ Binomial(n, p), over every k whose probability is not below 1e-300 relative to
    the mode's: from the mode outwards by the ratio of neighbouring probabilities, in
    logarithms (exact to rounding; the mass outside is far below a double's resolution)."""
    mode = min(n, int((n + 1) * p))
    spread = int(40 * math.sqrt(n * p * (1 - p))) + 40
    low, high = max(0, mode - spread), min(n, mode + spread)
    log_mode = (
        math.lgamma(n + 1)
        - math.lgamma(mode + 1)
        - math.lgamma(n - mode + 1)
        + mode * math.log(p)
        + (n - mode) * math.log1p(-p)
    )
    up = np.arange(mode, high, dtype=np.float64)  # k -> k + 1
    down = np.arange(mode, low, -1, dtype=np.float64)  # k -> k - 1
    log_odds = math.log(p) - math.log1p(-p)
    log_up = np.cumsum(np.log(n - up) - np.log(up + 1) + log_odds)
    log_down = np.cumsum(np.log(down) - np.log(n - down + 1) - log_odds)
    log_pmf = np.concatenate([log_down[::-1], [0.0], log_up]) + log_mode
    return low, np.cumsum(np.exp(log_pmf))


def quantile_ranks(
    n: int, q: float, confidence: float = CONFIDENCE
) -> tuple[int | None, int | None]:
    """Ranks (l, u), 1-based, of the order statistics X(l) <= X(u) of ``n`` samples that
    hold the ``q`` percent quantile of their distribution with probability at least
    ``confidence``, whatever the distribution (continuous): P(l <= B < u) for
    B ~ Binomial(n, q / 100), the number of samples below the quantile, with l the largest
    rank and u the smallest such that each tail is at most (1 - confidence) / 2. l is None
    when even X(1) is not low enough (the interval is open below the minimum), u None when
    even X(n) is not high enough (open above the maximum)."""
    tail = (1 - confidence) / 2
    first, cdf = _binomial_cdf_window(n, q / 100)
    # F(l - 1) <= tail: the largest such l; F(u - 1) >= 1 - tail: the smallest such u.
    below = np.flatnonzero(cdf <= tail)
    lower = first + int(below[-1]) + 1 if len(below) else first
    above = np.flatnonzero(cdf >= 1 - tail)
    upper = first + int(above[0]) + 1 if len(above) else n + 1
    return (lower if lower >= 1 else None), (upper if upper <= n else None)


def merge_counts(
    values: _Int64s,
    counts: _Int64s,
    new_values: _Int64s,
    new_counts: _Int64s | None = None,
) -> tuple[_Int64s, _Int64s]:
    """Sorted distinct values and their counts of two value-count sets (``new_counts``
    None: every new value counts once)."""
    if new_counts is None:
        new_values, new_counts = _value_counts(np.asarray(new_values, np.int64))
    if not len(values):
        return new_values.astype(np.int64), new_counts.astype(np.int64)
    at = np.searchsorted(values, new_values)
    if np.all(at < len(values)) and np.array_equal(
        values[np.minimum(at, len(values) - 1)], new_values
    ):
        counts = counts.copy()  # every value seen before: just count
        counts[at] += new_counts
        return values, counts
    merged, inverse = np.unique(np.concatenate([values, new_values]), return_inverse=True)
    total = np.zeros(len(merged), np.int64)
    np.add.at(total, inverse, np.concatenate([counts, new_counts]).astype(np.int64))
    return merged, total


def _value_counts(samples: _Int64s) -> tuple[_Int64s, _Int64s]:
    """Sorted distinct values of ``samples`` and their counts (a bincount when the values
    span little more than their number, else a sort)."""
    if not len(samples):
        return samples, samples
    low, high = int(samples.min()), int(samples.max())
    if high - low <= 4 * len(samples) + 4096:
        counts = np.bincount(samples - low)
        values = np.flatnonzero(counts)
        return values + low, counts[values]
    return np.unique(samples, return_counts=True)


def _without(counted: tuple[_Int64s, _Int64s], removed: _Int64s) -> tuple[_Int64s, _Int64s]:
    """The value counts ``counted`` (:func:`_value_counts` of some samples) less those of
    ``removed`` (a few of those samples): :func:`_value_counts` of the others, without
    counting them all again."""
    values, counts = counted
    if not len(removed):
        return counted
    gone_values, gone_counts = _value_counts(removed)
    counts = counts.copy()
    counts[np.searchsorted(values, gone_values)] -= gone_counts
    left = counts > 0
    return values[left], counts[left]


def _value_counts_per_bin(
    bins: _Int64s, samples: _Int64s, counts: _Int64s | None = None
) -> tuple[list[_Int64s], list[_Int64s]]:
    """Per bin (``bins``: each sample's, ascending), its sorted distinct values and their
    counts, as :func:`merge_counts` gives them (``counts``: each sample's; None: one), in one
    sort of all the samples (by bin, then value) rather than one per bin."""
    low = int(samples.min())
    span = int(samples.max()) - low + 1
    key = bins * span + (samples - low) if (int(bins[-1]) + 1) * span < 2**62 else None
    weights = None  # each sorted sample's count (None: one)
    if key is not None and counts is None:  # a plain sort of the keys: the fastest
        bins, values = np.divmod(np.sort(key), span)
        values += low
    else:
        # A stable sort merges the runs of sorted values (the bins') fastest.
        order = np.lexsort((samples, bins)) if key is None else np.argsort(key, kind="stable")
        bins, values = bins[order], samples[order]
        weights = None if counts is None else counts[order]
    first = np.flatnonzero(
        np.concatenate([[True], (bins[1:] != bins[:-1]) | (values[1:] != values[:-1])])
    )
    if weights is None:
        totals = np.diff(np.append(first, len(values)))
    else:
        totals = np.add.reduceat(weights, first)
    # Where each bin's distinct values begin and end (slices: np.split costs 5 times more).
    bounds = [0, *(np.flatnonzero(np.diff(bins[first])) + 1).tolist(), len(first)]
    values = values[first]
    return (
        [values[a:b] for a, b in zip(bounds, bounds[1:])],
        [totals[a:b] for a, b in zip(bounds, bounds[1:])],
    )


def _order_statistic(values: _Int64s, cumulative: _Int64s, k: int) -> int:
    """The k-th smallest (0-based) of the samples given by sorted values and their
    cumulative counts."""
    return int(values[np.searchsorted(cumulative, k, side="right")])


def percentile_of_counts(
    values: _Int64s, cumulative: _Int64s, q: float, ns_per_stamp: float
) -> float:
    """``np.percentile(ns, q)`` (method "linear") of the samples ``values`` (cumulative
    counts ``cumulative``), with ``ns = sample * ns_per_stamp``: numpy's formula, step by
    step, on the same doubles (numpy/lib/_function_base_impl.py, ``_quantile``, ``_lerp``)."""
    n = int(cumulative[-1])
    virtual = float(n - 1) * (q / 100)
    if virtual >= n - 1:
        return float(values[-1]) * ns_per_stamp
    below = math.floor(virtual)
    gamma = virtual - below
    a = float(_order_statistic(values, cumulative, below)) * ns_per_stamp
    b = float(_order_statistic(values, cumulative, below + 1)) * ns_per_stamp
    difference = b - a
    return b - difference * (1 - gamma) if gamma >= 0.5 else a + difference * gamma


def _exact_sums(ns: Sequence[float], counts: Sequence[int]) -> tuple[int, int, int]:
    """(sum, sum of squares, common denominator) of doubles ``ns`` counted ``counts``
    times, as Python integers: ns[i] = numerator[i] / denominator exactly."""
    ratios = [value.as_integer_ratio() for value in ns]
    denominator = max(d for _, d in ratios)  # all are powers of two
    total = squares = 0
    for (numerator, d), count in zip(ratios, counts):
        scaled = numerator * (denominator // d)
        total += scaled * count
        squares += scaled * scaled * count
    return total, squares, denominator


def _sqrt_ratio(numerator: int, denominator: int) -> float:
    """sqrt(numerator / denominator) rounded once to a double (integers, numerator >= 0)."""
    # Scale by an even power of two so that the integer root has at least 64 bits: the true
    # root lies in [root, root + 1), and a double rounds root + 1/2 as it rounds any value
    # strictly inside that interval (no rounding boundary of 53 bits lies inside it).
    shift = max(0, 128 - (numerator.bit_length() - denominator.bit_length()))
    shift += shift & 1
    scaled, remainder = divmod(numerator << shift, denominator)
    root = math.isqrt(scaled)
    if root * root == scaled and not remainder:
        return root / (1 << (shift // 2))
    return (2 * root + 1) / (1 << (shift // 2 + 1))


def ci_key(key: str) -> str:
    """The row key of a percentile's confidence interval: ``p99_ns`` -> ``p99_ci_ns``."""
    return key.replace("_ns", "_ci_ns")


def stats_of_counts(
    values: _Int64s | Sequence[int],
    counts: _Int64s | Sequence[int],
    stamp_hz: float,
    discarded: int = 0,
    discarded_by_holes: int = 0,
    lost: Lost = NOTHING_LOST,
) -> Stats:
    """A table row's statistics (ns) from exact value counts, defined below.
    ``discarded``: pairs dropped for a loss between them, ``discarded_by_holes``: of those,
    for a hole; ``lost``: samples damage took without a pair to discard
    (:mod:`latscope.analysis.accounting`), as ``lost`` (None: not known) and
    ``lost_estimated``.

    Statistics (:func:`stats_of_counts`, also used by ``SampleTable.stats``, so the
    whole-capture and the bounded analysis agree to the last bit) are those of the nanosecond
    values ``sample * (1e9 / stamp_hz)`` (double precision, as ``SampleTable.ns``):

    * min, max: the smallest and largest of them;
    * avg: their exact mean, rounded once to a double;
    * std: the square root of their exact population variance, rounded once to a double;
    * p50, p99, p99.9: numpy's default ``np.percentile`` (linear interpolation between the
      order statistics at ``(n - 1) * q``, numpy's exact formula), found from the value counts,
      and only where the sample count supports them (:data:`PERCENTILES`: a percentile q from
      ``1 / (1 - q)`` samples up, so p50 from 2, p99 from 100, p99.9 from 1000; with fewer
      samples fewer than one is expected above it, and the figure would only repeat the
      maximum). Each one reported comes with a distribution-free :data:`CONFIDENCE` interval
      from order statistics (:func:`quantile_ranks`).

    The mean and the standard deviation are thus independent of the order of summation: numpy's
    ``mean`` gives the same mean whenever its float sum is exact (e.g. whole nanoseconds, below
    2**53 in total); its ``std`` may differ in the last bits.
    """
    values = np.asarray(values, np.int64)
    counts = np.asarray(counts, np.int64)
    n = int(counts.sum()) if len(counts) else 0
    if not n:  # every statistic not known (null), as the results document says
        return {
            "samples": 0,
            **dict.fromkeys(("min_ns", "max_ns", "avg_ns", "std_ns")),
            **{name: None for key, _, _ in PERCENTILES for name in (key, ci_key(key))},
            "discarded": discarded,
            "discarded_by_holes": discarded_by_holes,
            "lost": lost.count,
            "lost_estimated": lost.estimate,
        }
    ns_per_stamp = 1e9 / stamp_hz
    ns = [float(v) * ns_per_stamp for v in values.tolist()]
    total, squares, denominator = _exact_sums(ns, counts.tolist())
    # Mean = total / (n * denominator); variance = (n * squares - total**2) / (n * d)**2.
    mean = total / (n * denominator)  # int / int: rounded once
    variance_numerator = n * squares - total * total
    std = _sqrt_ratio(variance_numerator, (n * denominator) ** 2)
    cumulative = np.cumsum(counts)
    row: Stats = {"samples": n, "min_ns": ns[0], "max_ns": ns[-1], "avg_ns": mean, "std_ns": std}
    for key, q, fewest in PERCENTILES:
        ci = ci_key(key)
        if n < fewest:
            row[key] = row[ci] = None
            continue
        row[key] = percentile_of_counts(values, cumulative, q, ns_per_stamp)
        row[ci] = [
            None
            if rank is None
            else float(_order_statistic(values, cumulative, rank - 1)) * ns_per_stamp
            for rank in quantile_ranks(n, q)
        ]
    row["discarded"] = discarded
    row["discarded_by_holes"] = discarded_by_holes
    row["lost"] = lost.count
    row["lost_estimated"] = lost.estimate
    return row


def interval_stamps(interval_s: float | None, stamp_hz: float) -> int | None:
    """The width in stamp units of a max-per-interval slot of ``interval_s`` seconds (at
    least one; None: no interval maxima)."""
    return max(1, int(interval_s * stamp_hz)) if interval_s else None


class TableAccumulator:
    """One sample table, accumulated batch by batch (as below). ``name``,
    ``stamp_hz`` and ``parameters`` as in ``SampleTable``; ``interval_stamps``: width of the
    max-per-interval slots in stamp units (None: not kept).

    :class:`TableAccumulator` takes a table's samples (integers in stamp units) in batches, in
    capture order, and keeps:

    * the exact count of every sample value (``values``, ``counts``): samples are small integers
      (a latency of 1 ms at 1 GHz is 10**6), so this is bounded by the range of latencies, not by
      their number. Count, min, max, sum, sum of squares and every percentile follow exactly;
    * the first :data:`KEEP_POINTS` samples with their start stamps (a time series of up to that
      many samples is drawn point by point, as from the whole table);
    * a sample-index envelope of at most :data:`ENVELOPE_BUCKETS` buckets: per bucket of
      ``bucket_width`` consecutive samples (a power of two, doubled when the buckets are full)
      the min, max, sum and the start stamp of its first sample, exact;
    * optionally the maximum per interval of capture time (``interval_stamps`` wide, counted from
      the table's first sample), of the intervals that hold samples only (however long the
      capture, or the stamp span of a crafted file, memory grows only with those);
    * the :data:`WORST_KEPT` largest samples (:meth:`TableAccumulator.worst`: value, index,
      start stamp, whether a tick overlaps it; among equal values the earliest first), and the
      samples flagged as not typical (:meth:`TableAccumulator.flags`): the table's first
      sample (cold caches, ``cold``) and those the kernel's tick overlaps (``tick``), with the
      exact value counts of the other samples, for the statistics without them.
    """

    def __init__(
        self,
        name: str,
        stamp_hz: float,
        parameters: TableParameters | None = None,
        *,
        interval_stamps: int | None = None,
        keep_points: int = KEEP_POINTS,
        buckets: int = ENVELOPE_BUCKETS,
    ) -> None:
        self.name = name
        self.stamp_hz = stamp_hz
        self.parameters: TableParameters = dict(parameters or {})
        self.interval_stamps = interval_stamps
        self.discarded = 0
        self.discarded_by_holes = 0  # of ``discarded``: a hole between them
        self.lost = NOTHING_LOST  # set by the analysis when it ends
        self.count = 0
        self.values = np.zeros(0, np.int64)
        self.counts = np.zeros(0, np.int64)
        self.keep_points = keep_points
        self.points: list[_Int64s] = []  # the first samples, by batch
        self.point_starts: list[_Int64s] = []  # ... and their starts
        self.buckets = buckets
        self.bucket_width = 1
        self._bucket = {key: np.zeros(0, np.int64) for key in ("low", "high", "sum", "start")}
        self.first_start: int | None = None
        self._slot_at = np.zeros(0, np.int64)  # intervals with samples, sorted
        self._slot_max = np.zeros(0, np.int64)  # ... and the largest sample of each
        self.ticked = 0  # samples a tick overlaps
        self.clean_values = np.zeros(0, np.int64)  # value counts of the samples
        self.clean_counts = np.zeros(0, np.int64)  # neither cold nor ticked
        # The largest samples: value, index, start stamp, ticked (WORST_KEPT at most).
        self._worst: tuple[_Int64s | npt.NDArray[np.bool_], ...] = (
            np.zeros(0, np.int64),
            np.zeros(0, np.int64),
            np.zeros(0, np.int64),
            np.zeros(0, bool),
        )
        self.by_delay = DelayStats()  # the latency at each trigger delay
        # TIME_BINS bins of time_bin_width consecutive samples (a power of two, doubled
        # when they are full): each bin's start stamp and exact value counts.
        self.time_bin_width = 1
        self._time_bins: list[tuple[int, _Int64s, _Int64s]] = []

    @classmethod
    def of_table(cls, table: _WholeTable, **options: Unpack[_Options]) -> "TableAccumulator":
        """The accumulator of a whole ``SampleTable``."""
        accumulator = cls(table.name, table.stamp_hz, table.parameters, **options)
        accumulator.add(
            table.samples,
            table.starts,
            table.ticked if len(table.ticked) == len(table.samples) else None,
            table.delays if len(table.delays) == len(table.samples) else None,
        )
        accumulator.discarded = table.discarded
        accumulator.discarded_by_holes = table.discarded_by_holes
        accumulator.lost = table.lost
        return accumulator

    def add(
        self,
        samples: _Int64s | Sequence[int],
        starts: _Int64s | Sequence[int],
        ticked: npt.NDArray[np.bool_] | Sequence[bool] | None = None,
        delays: _Int64s | Sequence[int] | None = None,
    ) -> None:
        """Adds the next samples (stamp units, capture order), their start stamps,
        whether the kernel's tick overlaps each (``rules.tick_overlaps``; None: none) and
        their trigger delays (:mod:`.delays`; None: none)."""
        samples = np.asarray(samples, np.int64)
        starts = np.asarray(starts, np.int64)
        if not len(samples):
            return
        ticked = np.zeros(len(samples), bool) if ticked is None else np.asarray(ticked, bool)
        first_index = self.count
        self.count += len(samples)
        batch = _value_counts(samples)  # counted once for both sets of value counts
        self.values, self.counts = merge_counts(self.values, self.counts, *batch)
        self.ticked += int(np.count_nonzero(ticked))
        clean = ~ticked
        clean[0] &= first_index > 0  # the table's first sample: cold
        if clean.any():
            self.clean_values, self.clean_counts = merge_counts(
                self.clean_values, self.clean_counts, *_without(batch, samples[~clean])
            )
        self._keep_worst(samples, first_index + np.arange(len(samples)), starts, ticked)
        if first_index < self.keep_points:
            room = self.keep_points - first_index
            self.points.append(samples[:room])
            self.point_starts.append(starts[:room])
        if self.first_start is None:
            self.first_start = int(starts[0])
        self._envelope(first_index, samples, starts)
        self._add_to_time_bins(first_index, samples, starts)
        if self.interval_stamps:
            self._intervals(samples, starts)
        if delays is not None:
            self.by_delay.add(np.asarray(delays, np.int64), samples)

    def discard(self, starts: _Int64s, by_hole: npt.NDArray[np.bool_]) -> None:
        """Counts pairs discarded for a loss between them (``starts``: their first stamps;
        ``by_hole``: whether a hole lay between them)."""
        self.discarded += len(starts)
        self.discarded_by_holes += int(np.count_nonzero(by_hole))

    def _keep_worst(
        self, samples: _Int64s, index: _Int64s, starts: _Int64s, ticked: npt.NDArray[np.bool_]
    ) -> None:
        """Keeps the WORST_KEPT largest of the samples so far (ties: the earliest)."""
        if len(samples) > WORST_KEPT:  # the batch's candidates first
            threshold = np.partition(samples, len(samples) - WORST_KEPT)[-WORST_KEPT]
            top = samples >= threshold
            samples, index, starts, ticked = samples[top], index[top], starts[top], ticked[top]
        columns = [
            np.concatenate([kept, new])
            for kept, new in zip(self._worst, (samples, index, starts, ticked))
        ]
        order = np.lexsort((columns[1], -columns[0]))[:WORST_KEPT]
        self._worst = tuple(column[order] for column in columns)

    def _envelope(self, first_index: int, samples: _Int64s, starts: _Int64s) -> None:
        """Adds samples ``first_index ..`` to the buckets of ``bucket_width`` samples."""
        while (first_index + len(samples) - 1) // self.bucket_width >= self.buckets:
            self._halve()
        width = self.bucket_width
        # Where each bucket's samples begin in this batch, and the buckets' numbers.
        at = np.arange(-first_index % width, len(samples), width)
        if not len(at) or at[0]:
            at = np.concatenate([[0], at])
        slots = (first_index + at) // width
        low = np.minimum.reduceat(samples, at)
        high = np.maximum.reduceat(samples, at)
        total = np.add.reduceat(samples, at)
        bucket = self._bucket
        grow = int(slots[-1]) + 1 - len(bucket["low"])
        if grow > 0:
            for key, fill in (
                ("low", np.iinfo(np.int64).max),
                ("high", -1),
                ("sum", 0),
                ("start", -1),
            ):
                bucket[key] = np.append(bucket[key], np.full(grow, fill, np.int64))
        bucket["low"][slots] = np.minimum(bucket["low"][slots], low)
        bucket["high"][slots] = np.maximum(bucket["high"][slots], high)
        bucket["sum"][slots] += total
        fresh = bucket["start"][slots] < 0
        bucket["start"][slots[fresh]] = starts[at[fresh]]

    def _add_to_time_bins(self, first_index: int, samples: _Int64s, starts: _Int64s) -> None:
        joined = 0  # the bins' width doubles this many times: 2**joined bins join into one
        while (first_index + len(samples) - 1) // (self.time_bin_width << joined) >= TIME_BINS:
            joined += 1
        if joined and self._time_bins:
            lengths = [len(values) for _, values, _ in self._time_bins]
            self._time_bins = list(
                zip(
                    [start for start, _, _ in self._time_bins[:: 1 << joined]],
                    *_value_counts_per_bin(
                        np.repeat(np.arange(len(lengths)) >> joined, lengths),
                        np.concatenate([values for _, values, _ in self._time_bins]),
                        np.concatenate([counts for _, _, counts in self._time_bins]),
                    ),
                )
            )
        self.time_bin_width <<= joined
        width = self.time_bin_width
        done = 0
        slot = first_index // width
        if slot < len(self._time_bins):  # the last bin, begun by an earlier batch
            done = min(len(samples), (slot + 1) * width - first_index)
            start, values, counts = self._time_bins[slot]
            self._time_bins[slot] = (start, *merge_counts(values, counts, samples[:done]))
        if done < len(samples):  # new bins, from a bin's first sample on
            self._time_bins += zip(
                starts[done::width].tolist(),
                *_value_counts_per_bin(np.arange(len(samples) - done) // width, samples[done:]),
            )

    def time_bins(
        self,
    ) -> tuple[_Int64s, npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Per time bin (:data:`TIME_BINS` at most, ``time_bin_width`` consecutive samples
        each, the last maybe fewer): (start stamp of its first sample, median, p99, max in
        ns), the percentiles as :func:`percentile_of_counts` gives them for whole tables."""
        starts = np.array([start for start, _, _ in self._time_bins], np.int64)
        columns: list[list[float]] = [[], [], []]
        for _, values, counts in self._time_bins:
            cumulative = np.cumsum(counts)
            for column, q in zip(columns, (50, 99, 100)):
                column.append(percentile_of_counts(values, cumulative, q, self.ns_per_stamp))
        median, p99, high = (np.array(column, np.float64) for column in columns)
        return starts, median, p99, high

    def _halve(self) -> None:
        """Joins buckets pairwise: twice the width, half the buckets."""
        for key, join in (
            ("low", np.minimum),
            ("high", np.maximum),
            ("sum", np.add),
            ("start", None),
        ):
            column = self._bucket[key]
            if len(column) % 2:
                column = np.append(column, self._bucket_fill(key))
            pairs = column.reshape(-1, 2)
            self._bucket[key] = (
                pairs[:, 0].copy() if join is None else join(pairs[:, 0], pairs[:, 1])
            )
        self.bucket_width *= 2

    @staticmethod
    def _bucket_fill(key: str) -> int:
        return {"low": np.iinfo(np.int64).max, "high": -1, "sum": 0, "start": -1}[key]

    def _intervals(self, samples: _Int64s, starts: _Int64s) -> None:
        # add() calls this with interval maxima kept, after its first sample.
        assert self.interval_stamps is not None and self.first_start is not None
        slot = (starts - self.first_start) // self.interval_stamps
        at = np.flatnonzero(np.append(True, slot[1:] != slot[:-1]))  # runs of one slot
        slots = np.concatenate([self._slot_at, slot[at]])
        maxima = np.concatenate([self._slot_max, np.maximum.reduceat(samples, at)])
        if np.any(slots[1:] < slots[:-1]):  # not in capture order: sort
            order = np.argsort(slots, kind="stable")
            slots, maxima = slots[order], maxima[order]
        first = np.flatnonzero(np.append(True, slots[1:] != slots[:-1]))
        self._slot_at, self._slot_max = slots[first], np.maximum.reduceat(maxima, first)

    # --- results ----------------------------------------------------------------------

    @property
    def ns_per_stamp(self) -> float:
        return 1e9 / self.stamp_hz

    def stats(self) -> Stats:
        """The table row's statistics (``SampleTable.stats``: same method, same values)."""
        return stats_of_counts(
            self.values,
            self.counts,
            self.stamp_hz,
            self.discarded,
            self.discarded_by_holes,
            self.lost,
        )

    def worst(self, n: int = WORST_KEPT) -> list[Worst]:
        """The ``n`` largest samples, largest first (ties: the earliest first): dicts of
        ``index`` (in the table), ``start`` and ``end`` (stamps), ``value`` (stamp units),
        ``ns``, ``cold`` (the table's first sample), ``tick`` (a tick overlaps it)."""
        values, index, starts, ticked = (column[:n] for column in self._worst)
        return [
            {
                "index": int(i),
                "start": int(s),
                "end": int(s + v),
                "value": int(v),
                "ns": float(v) * self.ns_per_stamp,
                "cold": int(i) == 0,
                "tick": bool(t),
            }
            for v, i, s, t in zip(values.tolist(), index.tolist(), starts.tolist(), ticked.tolist())
        ]

    def flags(self) -> Flags:
        """The flagged samples: ``cold`` (the first sample: 1, or 0 in an empty table),
        ``tick`` (samples a tick overlaps), ``flagged`` (either), and ``unflagged``: the
        statistics of the other samples (``stats_of_counts``, the same percentile rule)."""
        unflagged = stats_of_counts(self.clean_values, self.clean_counts, self.stamp_hz)
        unflagged.pop("discarded")
        unflagged.pop("discarded_by_holes")
        unflagged.pop("lost")
        unflagged.pop("lost_estimated")
        clean = int(self.clean_counts.sum())
        return {
            "cold": min(self.count, 1),
            "tick": self.ticked,
            "flagged": self.count - clean,
            "unflagged": unflagged,
        }

    def kept_points(self) -> tuple[_Int64s, _Int64s]:
        """(samples, starts) of the first ``keep_points`` samples (all, if no more)."""
        if not self.points:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate(self.points), np.concatenate(self.point_starts)

    def envelope(
        self,
    ) -> tuple[_Int64s, _Int64s, _Int64s, _Int64s, npt.NDArray[np.float64]]:
        """Per bucket of ``bucket_width`` consecutive samples: (index of its first sample,
        start stamp of that sample, min, max, mean), in stamp units; the last bucket may hold
        fewer samples."""
        used = -(-self.count // self.bucket_width) if self.count else 0
        bucket = {key: column[:used] for key, column in self._bucket.items()}
        first = np.arange(used, dtype=np.int64) * self.bucket_width
        sizes = np.minimum(first + self.bucket_width, self.count) - first
        return first, bucket["start"], bucket["low"], bucket["high"], bucket["sum"] / sizes

    def interval_maxima(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """(interval numbers, largest sample in ns) of the intervals that hold samples,
        counted from the table's first sample."""
        return self._slot_at.copy(), (self._slot_max * self.ns_per_stamp).astype(np.float64)

    def interval_maxima_ns(self) -> npt.NDArray[np.float64]:
        """Largest sample (ns) of every interval since the table's first sample (NaN: none):
        as long as the intervals the samples span (for spans the caller knows are short)."""
        span = int(self._slot_at[-1]) + 1 if len(self._slot_at) else 0
        dense = np.full(span, np.nan)
        dense[self._slot_at] = self._slot_max * self.ns_per_stamp
        return dense
