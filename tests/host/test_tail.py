"""The tail estimate (latscope.analysis.tail): coverage of its intervals on tails of known
distributions, refusals of series that break its assumptions, and what it does with ties,
prefixes and counts. Samples come from support/tail_samples.py (whole stamp units, true quantiles
exact from scipy)."""

import re

import numpy as np
import pytest
from scipy import optimize, stats

from latscope.analysis import tail
from latscope.analysis.tail import MIN_SAMPLES, estimate_tail, exceedance_count
from support.cases import parametrize_first_fast
from support.tail_samples import DISTRIBUTIONS, FAULTS, coverage, draw, refusals, true_quantile

DRAWS = 200


def estimate(samples):
    return estimate_tail(samples, 1.0)


@parametrize_first_fast(
    "name, n", [(name, n) for n in (1000, 10_000) for name in sorted(DISTRIBUTIONS)]
)
def test_coverage(name, n):
    """The 1e-6 quantile's interval holds the true quantile in at least 90 % of 200 draws
    (a refusal counts as a miss; seconds each: `make check` runs the first case). Measured
    here (seeds 1..5 by distribution, 200 draws; the same figures from
    ``bench/tail_coverage.py --draws 200``):

    ============  ======  =======
    distribution  n 1000  n 10000
    ============  ======  =======
    exponential   0.975   0.980
    gumbel        0.965   0.975
    normal        0.955   0.955
    uniform       0.985   0.970
    weibull 0.5   0.975   0.980
    ============  ======  =======
    """
    seed = sorted(DISTRIBUTIONS).index(name) + 1
    held, _, _, _ = coverage(estimate, DISTRIBUTIONS[name], n, DRAWS, seed)
    assert held.get(1e-6, 0) >= 0.9 * DRAWS


@pytest.mark.parametrize(
    "fault, n", [(fault, 10_000 if fault == "ticks at random, 1 %" else 1000) for fault in FAULTS]
)
def test_faults_are_refused_by_the_right_check(fault, n):
    """Dependent series (1000 samples, the fewest estimated from) are refused by the
    independence check, a regime change by the halves' comparison, a tail of two lumps (the
    noise's top and 1 % of ticks; 10,000 samples so that the ticks are half the exceedances)
    by the fit's test, each in at least 90 % of 200 draws. Measured: every draw of every
    fault refused by its check but for the two lumps, 199 of 200."""
    right, _ = refusals(estimate, fault, n, DRAWS, seed=7)
    assert right >= 0.9 * DRAWS


def test_the_checks_see_the_order_not_the_values():
    """The same dependent samples, shuffled, pass the independence check (ALPHA = 0.01)."""
    rng = np.random.default_rng(3)
    generate, _ = FAULTS["AR(1), phi 0.7"]
    passed = sum(
        estimate(rng.permutation(generate(1000, rng))).checks[1].passed for _ in range(DRAWS)
    )
    assert passed >= 0.95 * DRAWS


def test_a_refusal_names_the_check_with_its_statistic():
    generate, _ = FAULTS["AR(1), phi 0.7"]
    result = estimate(generate(1000, np.random.default_rng(1)))
    assert result.quantiles == () and result.threshold_ns is None
    assert re.fullmatch(
        r"not estimable: not independent \(Ljung-Box Q of the ranks, lags 1-40"
        r" = [0-9.e+]+, p = [0-9.e+-]+ < 0\.01\)",
        result.refusal,
    ), result.refusal
    assert not result.checks[1].passed and result.checks[1].pvalue < 0.01


def test_too_few_samples_are_refused():
    rng = np.random.default_rng(2)
    samples = draw(DISTRIBUTIONS["exponential"], MIN_SAMPLES, rng)
    assert (
        estimate(samples[:-1]).refusal
        == f"not estimable: too few samples: {MIN_SAMPLES - 1} < {MIN_SAMPLES}"
    )
    assert [check.name for check in estimate(samples[:-1]).checks] == ["enough samples"]
    assert estimate(samples).checks[0].passed


@pytest.mark.parametrize(
    "samples",
    [
        # The demo's shape: a block of equal samples and a few outliers (tick-delayed).
        np.where(np.arange(1000) % 97 == 5, 400 + np.arange(1000) % 113, 221),
        # A smooth tail narrower than a stamp unit: exponential of scale 0.5 units.
        np.floor(np.random.default_rng(4).exponential(0.5, 1000)).astype(np.int64),
    ],
    ids=["block and outliers", "sub-unit tail"],
)
def test_a_tail_of_few_values_is_refused(samples):
    result = estimate(np.random.default_rng(5).permutation(samples))
    assert result.refusal.startswith("not estimable: tail too coarse: the 64 largest samples")


def test_the_same_samples_give_the_same_figures():
    """The spread within a stamp unit is seeded from the value counts: the same samples, in
    any order, give the same fit."""
    rng = np.random.default_rng(6)
    samples = draw(DISTRIBUTIONS["gumbel"], 5000, rng)
    first = estimate(samples)
    assert first.refusal is None
    assert estimate(samples.copy()) == first
    assert estimate(rng.permutation(samples)).quantiles == first.quantiles


def test_from_counts_and_a_prefix():
    """What the bounded analysis keeps: the fit from the exact counts of all samples, the
    order-dependent checks from the first ones."""
    rng = np.random.default_rng(7)
    samples = draw(DISTRIBUTIONS["exponential"], 50_000, rng)
    values, counts = np.unique(samples, return_counts=True)
    whole = estimate(samples)
    kept = estimate_tail(samples[:20_000], 1.0, (values, counts))
    assert (kept.samples, kept.checked_samples, whole.checked_samples) == (50_000, 20_000, 50_000)
    assert kept.exceedances == whole.exceedances == exceedance_count(50_000)
    assert kept.quantiles == whole.quantiles
    with pytest.raises(ValueError):
        estimate_tail(samples[: MIN_SAMPLES - 1], 1.0, (values, counts))
    few = samples[:300]
    assert (
        estimate_tail(few, 1.0, np.unique(few, return_counts=True)).refusal
        == "not estimable: too few samples: 300 < 1000"
    )


def test_inputs_and_the_maximum_are_left_alone():
    """The estimate changes nothing it is given: the table's samples, its counts and so its
    maximum stay what was measured."""
    rng = np.random.default_rng(8)
    samples = draw(DISTRIBUTIONS["normal"], 2000, rng)
    values, counts = np.unique(samples, return_counts=True)
    copies = samples.copy(), values.copy(), counts.copy()
    result = estimate_tail(samples, 10.0, (values, counts))
    assert result.refusal is None
    for given, copy in zip((samples, values, counts), copies):
        assert np.array_equal(given, copy)
    assert samples.max() == copies[0].max()


def test_probabilities_within_the_samples_are_order_statistics():
    """From 4 million samples on, at least k = 2 sqrt(n) samples are expected above the
    1e-3 quantile: it is read from the samples, the smaller probabilities from the fit."""
    n = 4_000_000
    rng = np.random.default_rng(9)
    distribution = DISTRIBUTIONS["exponential"]
    samples = draw(distribution, n, rng)
    values, counts = np.unique(samples, return_counts=True)
    result = estimate_tail(samples[:20_000], 1.0, (values, counts))
    assert [q.method for q in result.quantiles] == ["order statistics", "fit", "fit"]
    first = result.quantiles[0]
    assert first.ns == np.sort(samples)[n - n // 1000 - 1]
    assert first.low_ns <= true_quantile(distribution, 1e-3) <= first.high_ns
    assert first.low_ns <= first.ns <= first.high_ns


def profile_interval(y, log_ratio, cut, inside):
    """The interval of the quantile u + d over {log-likelihood >= cut}, by brute force with
    scipy's GPD: for each d the likelihood's maximum over the shape (a grid, then Brent), and
    the two d where that maximum meets the cut (Brent's root finder, either side of a d
    ``inside`` the region)."""

    def at(xi, d):
        value = stats.genpareto.logpdf(
            y, xi[:, None], 0, (d * xi / np.expm1(xi * log_ratio))[:, None]
        ).sum(axis=1)
        return np.where(np.isfinite(value), value, -np.inf)

    def meets(d):
        grid = np.linspace(-0.999, 2.999, 401)
        i = int(np.argmax(at(grid, d)))
        found = optimize.minimize_scalar(
            lambda xi: -at(np.array([xi]), d)[0],
            method="bounded",
            bounds=(grid[max(i - 1, 0)], grid[min(i + 1, 400)]),
            options={"xatol": 1e-10},
        )
        return max(-found.fun, at(grid[i : i + 1], d)[0]) - cut

    return (
        optimize.brentq(meets, inside * 1e-3, inside, xtol=1e-12),
        optimize.brentq(meets, inside, inside * 1e8, xtol=1e-12),
    )


@pytest.mark.parametrize(
    "distribution",
    [stats.expon(), stats.genpareto(0.3), stats.genpareto(-0.4)],
    ids=["xi 0", "xi 0.3", "xi -0.4"],
)
def test_the_fit_and_its_region_are_the_likelihoods(distribution):
    """The maximum likelihood is scipy's genpareto.fit's, and the interval, the range of the
    quantile over the likelihood region (Grimshaw's reduction, Lambert's W), is the same set
    found by brute force: the profile likelihood of the quantile meeting the region's cut."""
    samples = np.sort(distribution.rvs(2000, random_state=np.random.default_rng(10)))[-64:]
    y = samples[1:] - samples[0]
    likelihood = tail._Likelihood(y / y.max())
    best, xi, tau, v = likelihood.fit()
    shape, _, scale = stats.genpareto.fit(y, floc=0)
    assert xi == pytest.approx(shape, abs=2e-3)
    assert xi / tau * y.max() == pytest.approx(scale, rel=2e-3)
    taus, low, high, open_ = likelihood.region(best, v, tail.CONFIDENCE)
    log_ratio = np.log(63 / 2000 / 1e-6)
    ends = np.concatenate([tail._excess(low, taus, log_ratio), tail._excess(high, taus, log_ratio)])
    cut = best - len(y) * np.log(y.max()) - stats.chi2.ppf(tail.CONFIDENCE, 2) / 2
    assert not open_
    estimate = float(tail._excess(xi, tau, log_ratio)) * y.max()
    assert np.array([np.nanmin(ends), np.nanmax(ends)]) * y.max() == pytest.approx(
        profile_interval(y, log_ratio, cut, estimate), rel=1e-3
    )
