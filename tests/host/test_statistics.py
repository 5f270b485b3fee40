"""The percentile rule and the percentiles' confidence intervals (latscope.analysis.statistics).

The ranks are checked against the binomial distribution summed exactly in rational numbers
(``fractions``), and the intervals' coverage by drawing samples of a known distribution."""

from fractions import Fraction
from math import comb

import numpy as np
import pytest

from latscope.analysis.statistics import (
    PERCENTILES,
    TIME_BINS,
    TableAccumulator,
    percentile_supported,
    quantile_ranks,
    stats_of_counts,
)


def exact_ranks(n, q_percent, confidence=Fraction(95, 100)):
    """(l, u) by the definition: the largest l with P(B <= l - 1) <= tail and the smallest
    u with P(B <= u - 1) >= 1 - tail, B ~ Binomial(n, q), in exact arithmetic."""
    q = Fraction(str(q_percent)) / 100
    tail = (1 - confidence) / 2
    cdf, total = [], Fraction(0)
    for k in range(n + 1):
        total += comb(n, k) * q**k * (1 - q) ** (n - k)
        cdf.append(total)
    below = lambda k: Fraction(0) if k < 0 else cdf[k]  # noqa: E731
    lower = max(rank for rank in range(n + 2) if below(rank - 1) <= tail)
    upper = min(rank for rank in range(n + 2) if rank > n or below(rank - 1) >= 1 - tail)
    return (lower if lower >= 1 else None), (upper if upper <= n else None)


@pytest.mark.parametrize(
    "n, q",
    [
        (2, 50),
        (3, 50),
        (10, 50),
        (101, 50),
        (100, 99),
        (250, 99),
        (1000, 99),
        (1000, 99.9),
        (1500, 99.9),
    ],
)
def test_ranks_are_those_of_the_exact_binomial(n, q):
    assert quantile_ranks(n, q) == exact_ranks(n, q)


def test_the_rule():
    assert [fewest for _, _, fewest in PERCENTILES] == [2, 100, 1000]
    for key, q, fewest in PERCENTILES:
        assert not percentile_supported(q, fewest - 1) and percentile_supported(q, fewest)
        for n, reported in ((fewest - 1, False), (fewest, True)):
            row = stats_of_counts(np.arange(n), np.ones(n, np.int64), 1e9)
            assert (row[key] is not None) == reported, (key, n)
            assert (row[key.replace("_ns", "_ci_ns")] is not None) == reported, (key, n)


def test_intervals_cover_the_true_quantile():
    """Samples of an exponential distribution (continuous, known quantiles, stamps of 1 ns
    fine enough not to tie): at least 95 % of the intervals hold the true quantile, and
    not far more (the ranks are not wider than needed)."""
    rng = np.random.default_rng(14)
    for q, n in ((50, 200), (99, 300), (99.9, 3000)):
        truth = -np.log1p(-q / 100) * 1e6  # ns, mean 1 ms
        covered = 0
        runs = 400
        for _ in range(runs):
            samples = np.rint(rng.exponential(1e6, n)).astype(np.int64)
            row = stats_of_counts(*np.unique(samples, return_counts=True), 1e9)
            low, high = row[[k for k, p, _ in PERCENTILES if p == q][0].replace("_ns", "_ci_ns")]
            covered += (low is None or low <= truth) and (high is None or truth <= high)
        assert 0.93 * runs <= covered <= 0.995 * runs, (q, covered)


def test_interval_ends_are_order_statistics():
    samples = np.arange(1000, 3000, 2)  # 1000 distinct values
    row = stats_of_counts(samples, np.ones(len(samples), np.int64), 1e9)
    lower, upper = quantile_ranks(1000, 99)
    assert row["p99_ci_ns"] == [float(samples[lower - 1]), float(samples[upper - 1])]
    assert row["p999_ci_ns"][1] is None  # open above the maximum
    assert row["p999_ci_ns"][0] == float(samples[quantile_ranks(1000, 99.9)[0] - 1])


def test_worst_samples_ties_earliest_first_and_their_flags():
    """The worst samples against an order computed here, not by the statistics code: the
    largest first, ties the earliest first, whatever batches the samples came in; with
    their cold and tick flags, and the flag counts (cold: the first sample, tick: the
    ticked ones, flagged: either)."""
    from latscope.analysis.statistics import WORST_KEPT, TableAccumulator

    rng = np.random.default_rng(29)
    samples = rng.choice([5, 7, 9, 9], size=500)
    samples[0] = 9  # the cold sample among the tied maxima
    ticked = rng.random(500) < 0.1
    starts = np.cumsum(rng.integers(10, 100, 500))
    assert np.count_nonzero(samples == 9) > 2 * WORST_KEPT  # ties decide the order
    expected = sorted(range(500), key=lambda i: (-int(samples[i]), i))[:WORST_KEPT]
    cuts = np.sort(rng.choice(np.arange(1, 500), 40, replace=False))
    for bounds in ([0, 500], list(range(501)), [0, *cuts.tolist(), 500]):
        table = TableAccumulator("T", 1e8, {})
        for begin, end in zip(bounds, bounds[1:]):
            table.add(samples[begin:end], starts[begin:end], ticked[begin:end])
        worst = table.worst()
        assert [w["index"] for w in worst] == expected
        assert [(w["start"], w["value"]) for w in worst] == [
            (int(starts[i]), int(samples[i])) for i in expected
        ]
        assert [(w["cold"], w["tick"]) for w in worst] == [
            (i == 0, bool(ticked[i])) for i in expected
        ]
        flags = table.flags()
        assert (flags["cold"], flags["tick"]) == (1, int(np.count_nonzero(ticked)))
        assert flags["flagged"] == int(np.count_nonzero(ticked | (np.arange(500) == 0)))


@pytest.mark.parametrize("spread", [4000, 2**60])  # 2**60: too wide for one sort key per bin
def test_time_bins_are_exact_whatever_the_pieces(spread):
    """Each time bin holds its samples' exact value counts and its first sample's start,
    fed in pieces of 1 to 3000 samples: bins begun, ended and halved within and across
    pieces; its median, p99 and max are then those of its samples."""
    rng = np.random.default_rng(7)
    samples = rng.integers(50, 50 + spread, 40_000, dtype=np.int64)
    starts = np.arange(len(samples), dtype=np.int64) * 1000 + 5
    table = TableAccumulator("T", 1e9, {})
    at = 0
    while at < len(samples):
        end = at + int(rng.integers(1, 3000))
        table.add(samples[at:end], starts[at:end])
        at = end
    width = table.time_bin_width
    bins = [samples[at : at + width] for at in range(0, len(samples), width)]
    assert TIME_BINS // 2 < len(bins) <= TIME_BINS
    for (_, values, counts), b in zip(table._time_bins, bins, strict=True):
        expected = np.unique(b, return_counts=True)
        assert np.array_equal(values, expected[0]) and np.array_equal(counts, expected[1])
        assert values.dtype == counts.dtype == np.int64
    first, median, p99, high = table.time_bins()
    assert np.array_equal(first, starts[::width])
    if spread > 2**53:  # not exact in doubles: np.percentile's rounding is not the table's
        return
    assert np.array_equal(median, [np.percentile(b, 50) for b in bins])
    assert np.array_equal(p99, [np.percentile(b, 99) for b in bins])
    assert np.array_equal(high, [b.max() for b in bins])
