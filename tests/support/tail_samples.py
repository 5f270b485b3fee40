"""Sample tables of known tails and of known faults, for the tail estimate's tests
(tests/host/test_tail.py) and its coverage study (bench/tail_coverage.py).

Samples are whole stamp units, as latscope's: a latency X drawn from a continuous distribution
is recorded as floor(X). The true whole-unit quantile for probability p, the smallest k with
P(floor(X) > k) = P(X >= k + 1) <= p, is ceil(isf(p)) - 1, exact from scipy's distribution.
Scales are tens of units (hundreds of ns at a 10 ns stamp), so the tails are resolved.
"""

import math

import numpy as np
from scipy import stats

#: The tails of the coverage tests: light (normal, bounded uniform), exponential-type
#: (Gumbel, exponential) and heavier than exponential (Weibull with shape 0.5).
DISTRIBUTIONS = {
    "gumbel": stats.gumbel_r(loc=1000, scale=30),
    "weibull": stats.weibull_min(0.5, loc=1000, scale=30),
    "exponential": stats.expon(loc=1000, scale=30),
    "normal": stats.norm(loc=1000, scale=30),
    "uniform": stats.uniform(loc=1000, scale=500),
}


def true_quantile(distribution, probability):
    """The whole-unit latency that floor(X) exceeds with probability at most p."""
    return math.ceil(distribution.isf(probability)) - 1


def draw(distribution, n, rng):
    return np.floor(distribution.rvs(n, random_state=rng)).astype(np.int64)


def coverage(estimate, distribution, n, draws, seed):
    """Draws ``draws`` tables of ``n`` samples and estimates each (``estimate``: samples ->
    TailEstimate): per probability, how many intervals held the true quantile, how many were
    above it (truth below the low end); refusals by reason (the first failed check's name)."""
    rng = np.random.default_rng(seed)
    held, above, refused, results = {}, {}, {}, []
    for _ in range(draws):
        result = estimate(draw(distribution, n, rng))
        results.append(result)
        if result.refusal:
            name = next(check.name for check in result.checks if not check.passed)
            refused[name] = refused.get(name, 0) + 1
            continue
        for quantile in result.quantiles:
            truth = true_quantile(distribution, quantile.probability)
            p = quantile.probability
            held[p] = held.get(p, 0) + (quantile.low_ns <= truth <= quantile.high_ns)
            above[p] = above.get(p, 0) + (truth < quantile.low_ns)
    return held, above, refused, results


# --- series that break the checks' assumptions (normal noise of 30 units around 1000) ------


def _noise(n, rng):
    return rng.normal(1000, 30, n)


def ar1(n, rng, phi=0.7):
    """x_t = phi x_(t-1) + e_t, stationary, marginal sd 30."""
    shocks = rng.normal(0, 30 * math.sqrt(1 - phi * phi), n)
    x = np.empty(n)
    x[0] = rng.normal(0, 30)
    for t in range(1, n):
        x[t] = phi * x[t - 1] + shocks[t]
    return np.floor(1000 + x).astype(np.int64)


def periodic(n, rng):
    """A sine of 30 units with a period of 5 to 40 samples (random) under the noise."""
    period = rng.uniform(5, 40)
    phase = rng.uniform(0, 2 * math.pi)
    return np.floor(
        _noise(n, rng) + 30 * np.sin(2 * math.pi * np.arange(n) / period + phase)
    ).astype(np.int64)


def _tick(n, rng):
    """What the tick adds to a sample it delays: 100 to 300 units."""
    return rng.uniform(100, 300, n)


def ticks_interleaved(n, rng):
    """Every m-th sample (m from 5 to 40, random phase) delayed by the tick."""
    m = int(rng.integers(5, 41))
    ticked = (np.arange(n) + int(rng.integers(m))) % m == 0
    return np.floor(_noise(n, rng) + ticked * _tick(n, rng)).astype(np.int64)


def ticks_in_blocks(n, rng):
    """Blocks of 50 samples, every other one delayed by the tick throughout."""
    ticked = (np.arange(n) // 50 + int(rng.integers(2))) % 2 == 1
    return np.floor(_noise(n, rng) + ticked * _tick(n, rng)).astype(np.int64)


def regime_change(n, rng):
    """The second half has a tick in a fifth of its samples (at random), the first none."""
    ticked = (np.arange(n) >= n // 2) & (rng.random(n) < 0.2)
    return np.floor(_noise(n, rng) + ticked * _tick(n, rng)).astype(np.int64)


def ticks_mixed(n, rng):
    """Independent samples, 1 % of them (at random) a tick's at 1400 +- 10 units: the tail
    is two lumps, the top of the noise and the ticks, which no GPD describes."""
    ticked = rng.random(n) < 0.01
    return np.floor(np.where(ticked, rng.normal(1400, 10, n), _noise(n, rng))).astype(np.int64)


#: Faulty series and the check that must refuse each.
FAULTS = {
    "AR(1), phi 0.7": (ar1, "independence"),
    "periodic pattern": (periodic, "independence"),
    "ticks every m-th sample": (ticks_interleaved, "independence"),
    "ticks in blocks": (ticks_in_blocks, "independence"),
    "ticks from mid-run": (regime_change, "identical distribution"),
    "ticks at random, 1 %": (ticks_mixed, "tail fit"),
}


def refusals(estimate, fault, n, draws, seed):
    """How many of ``draws`` faulty series of ``n`` samples are refused by the right check,
    and the failed checks' names per draw."""
    generate, check = FAULTS[fault]
    rng = np.random.default_rng(seed)
    failed = [
        {c.name for c in estimate(generate(n, rng)).checks if not c.passed} for _ in range(draws)
    ]
    return sum(check in names for names in failed), failed
