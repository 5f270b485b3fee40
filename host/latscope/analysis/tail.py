"""How far a table's tail reaches: the latency one sample exceeds with probability 1e-3, 1e-6
and 1e-9, from an extreme-value fit after checks that the samples allow one, or a refusal
that names the check that failed.

:func:`estimate_tail` takes a table's samples in capture order (whole stamp units) and the
stamp unit in ns, and gives a :class:`TailEstimate`: either ``quantiles`` or ``refusal``
("not estimable: <check> (<test> = <statistic>, p = <p-value> < 0.01)" or the count that
failed; every failed check, separated by "; "), never both. It changes nothing
it is given; the table's maximum stays the measured maximum.

**What a quantile means.** For probability p, ``ns`` is the estimated smallest whole-unit
latency that a sample exceeds with probability at most p (the (1 - p) quantile of the
samples' distribution, in stamp units as the samples, times the unit), with ``low_ns`` ..
``high_ns`` its :data:`CONFIDENCE` confidence interval. It is an estimate from a model of the
tail, not a bound: it holds if the samples are independent draws from one distribution whose
tail the model describes beyond the largest sample seen, which the checks can refute but not
prove (a rare path that never ran in the capture is in no sample).

**Checks**, each at significance level :data:`ALPHA` (the estimate is refused when one fails;
every failed one is named):

1. *Enough samples*: at least :data:`MIN_SAMPLES`.
2. *Independence*: Ljung-Box portmanteau tests, lags 1 .. :data:`LAGS`, on the samples' ranks
   (mid-ranks for ties) and on the tail's positions (1 for a sample among the 2 sqrt(n)
   largest of the series, else 0); the check's p-value is twice the smaller of the two
   (Bonferroni). A drift, a regime that persists over consecutive samples or a periodic
   pattern correlates the ranks some lags apart; a tick that delays every m-th sample puts
   the largest samples m apart, which the positions show even where the ranks' correlation
   is too weak (a few delayed samples among many). Ranks, because the autocorrelation of raw
   values is dominated by a few outliers and its test needs finite fourth moments; under
   independence the ranks are exchangeable whatever the distribution, ties included. Not a
   runs test: runs above and below the median mean little when most samples equal the
   median (p50 = p99 is common).
3. *Identical distribution*: two-sample Kolmogorov-Smirnov test between the first and the
   second half of the series. With ties (discrete samples) its p-value is conservative (the
   test refuses identically distributed data at most as often as ALPHA says), which costs
   power but not validity; the regime changes it has to see are large.
4. *Tail resolution*: the ``k + 1`` largest samples (the threshold and the exceedances, below)
   must not be a few repeated values: two of them drawn at random must be equal with
   probability at most :data:`MAX_COINCIDENCE`. Real tables often hold few values (a block of
   equal samples and a handful of outliers); spread over a unit each, they would make a
   continuous tail out of a few lumps, which the fit's test below rejects for some spreads
   and not for others. A geometric tail of scale s stamp units gives about 1 / (2 s): it
   passes from s = 3 on (refused in 3 % of draws of 1000 samples, s = 2 in 52 %:
   ``bench/tail_coverage.py``). A bounded tail whose k largest samples lie within about 3
   units is refused too (a uniform over 500 units from 100,000 samples on); its quantiles
   lie within those units of the maximum.
5. *Tail fit*: Cramer-von Mises test of the fitted distribution on the exceedances (their
   probability integral transform against the uniform). Its p-value treats the parameters as
   known, which makes it conservative (they were fitted to the same exceedances): it refuses
   gross misfits, not every misfit.

The order-dependent checks (2, 3) run on ``series``; the fit and checks 1, 4, 5 on all the
samples, given as exact value counts (``counts``) when the series holds only the first of
them (the bounded analysis keeps the first 20,000 in order and the counts of all):
``checked_samples`` then says how many samples the order-dependent checks saw.

**Ties.** Samples are whole stamp units, so the fit takes each of the largest samples as
spread uniformly over [value, value + 1) (a pseudo-random spread, seeded from a hash of the
value counts, so the same samples give the same figures). This spread variable Y exceeds a
whole number v exactly as often as a sample reaches v, so P(sample > floor(y_p)) <= p for Y's
quantile y_p, and ``floor(y_p)`` is the whole-unit quantile reported (its interval's ends
likewise rounded down). The rank and KS checks need no spread.

**The fit.** Peaks over a threshold: the ``k = 2 * sqrt(n)`` largest of the n samples
(:func:`exceedance_count`) above the (k + 1)-th largest, fitted with the generalised Pareto
distribution (GPD, shape xi in :data:`SHAPE_RANGE`, maximum likelihood). The quantile is
``u + sigma / xi * ((zeta / p) ** xi - 1)`` with zeta = k / n the fraction of samples above
the threshold u. k grows slower than n so that the threshold moves further into the tail as
the sample count grows (less model bias), with enough exceedances for the fit (63 of 1000,
200 of 10,000). The coverage study (``bench/tail_coverage.py --k``) compared it with
k = sqrt(n) and k = 100: all held the 1e-6 quantile in about 95 % of draws (but for the
uniform from 10,000 samples, whose 100 largest lie within 5 units: too coarse in 28 % of
draws), but sqrt(n) gave 1e-6 intervals ten times as wide from 1000 samples (normal: upper
end 13,073 units above the truth, median, against 1306) and k = 100 twice as wide from
10,000 (321 against 132 units).

**The interval** is the range of the quantile over the likelihood-ratio confidence region of
the GPD's two parameters, {(xi, sigma): 2 (l_max - l) <= chi2_2(CONFIDENCE)}
(:data:`REGION_DEGREES`): it holds the true quantile whenever the region holds the true
parameters, for all three probabilities at once. A fitted GPD only approximates a tail at a
finite threshold (a normal tail's exceedances look shorter-tailed than they are), so the
nominal level overstates the coverage; the study compared 95 % and 99 %, each for a single
quantile's profile interval (one degree of freedom) and for the joint region. Only the 99 %
joint region held the true 1e-6 quantile in at least 95 % of draws for every tail tested
(the normal from 1000 samples, the hardest: 87.4 %, 91.4 %, 92.2 % and 95.6 %, refusals
counted as misses). Its upper end is infinite (open) when the region reaches the top of
SHAPE_RANGE: the samples then do not bound the tail. From 1000 samples the 1e-6 interval
is wide (an exponential tail of scale 30 units: from 200 units below the true quantile to
16,000 above, median), from 10,000 narrower (130 below, 940 above).

A probability at or above zeta (at least k samples expected above the quantile: 1e-3 from
4 million samples) lies within the samples: its quantile is the order statistic and its
interval the distribution-free one from order statistics (``method`` "order statistics"),
as for the table's percentiles.
"""

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .statistics import TableAccumulator, quantile_ranks

# scipy (a second to import) is imported by the functions that use it: every latscope command
# imports this module, few of them estimate a tail.

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

__all__ = [
    "PROBABILITIES",
    "CONFIDENCE",
    "ALPHA",
    "MIN_SAMPLES",
    "LAGS",
    "MAX_COINCIDENCE",
    "SHAPE_RANGE",
    "Check",
    "Quantile",
    "TailEstimate",
    "exceedance_count",
    "estimate_tail",
    "estimate_table",
]

#: Per-sample exceedance probabilities estimated.
PROBABILITIES = (1e-3, 1e-6, 1e-9)
#: Confidence level of the intervals (module doc, "The interval": why 99 %).
CONFIDENCE = 0.99
#: Significance level of each check.
ALPHA = 0.01
#: Fewest samples estimated from: the coverage study's smallest table (bench/tail_coverage.py).
MIN_SAMPLES = 1000
#: Lags of the Ljung-Box test: patterns up to this many samples apart.
LAGS = 40
#: Largest probability that two of the tail's samples are equal (tail resolution check).
MAX_COINCIDENCE = 0.2
#: Degrees of freedom of the likelihood-ratio region: both GPD parameters (module doc).
REGION_DEGREES = 2
#: The GPD's shape is searched in this range: below -1 the likelihood has no maximum (it
#: grows without bound as the support's end nears the largest exceedance); the upper end only
#: keeps the search finite (a region that reaches it makes the interval's upper end open).
SHAPE_RANGE = (-1.0, 3.0)


@dataclass(frozen=True)
class Check:
    """One check: ``name`` ("enough samples", "independence", "identical distribution",
    "tail resolution", "tail fit"), ``passed``, and ``reason``: what was measured against
    what (the refusal names the failed checks by it)."""

    name: str
    passed: bool
    reason: str
    statistic: float
    pvalue: float | None = None


@dataclass(frozen=True)
class Quantile:
    """The latency (ns, whole stamp units) a sample exceeds with probability at most
    ``probability``, and its confidence interval (``high_ns`` inf: open). ``method``: "fit"
    (extrapolated by the tail model) or "order statistics" (within the samples)."""

    probability: float
    ns: float
    low_ns: float
    high_ns: float
    method: str


@dataclass(frozen=True)
class TailEstimate:
    """The tail estimate of one table: ``quantiles`` (one per probability), or ``refusal``
    ("not estimable: ..."). ``samples``: the samples behind the fit; ``checked_samples``: those
    the order-dependent checks saw (the first ones, in capture order); ``checks``: the checks
    run, in order. The fit's ``threshold_ns``, ``exceedances`` (k), ``shape`` (xi) and
    ``scale_ns`` (sigma) are None when refused."""

    samples: int
    checked_samples: int
    checks: tuple[Check, ...]
    confidence: float
    refusal: str | None = None
    quantiles: tuple[Quantile, ...] = ()
    threshold_ns: float | None = None
    exceedances: int | None = None
    shape: float | None = None
    scale_ns: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """The estimate as a JSON-ready dict (docs/results-schema.md, ``tables[].tail``): an
        interval's open end (the samples do not bound it) is None."""

        def finite(ns: float) -> float | None:
            return ns if math.isfinite(ns) else None

        return {
            "estimable": self.refusal is None,
            "refusal": self.refusal,
            "samples": self.samples,
            "checked_samples": self.checked_samples,
            "confidence": self.confidence,
            "quantiles": [
                {
                    "probability": q.probability,
                    "ns": q.ns,
                    "low_ns": finite(q.low_ns),
                    "high_ns": finite(q.high_ns),
                    "method": q.method,
                }
                for q in self.quantiles
            ],
            "threshold_ns": self.threshold_ns,
            "exceedances": self.exceedances,
            "shape": self.shape,
            "scale_ns": self.scale_ns,
            "checks": [
                {
                    "name": c.name,
                    "passed": c.passed,
                    "reason": c.reason,
                    "statistic": c.statistic,
                    "pvalue": c.pvalue,
                }
                for c in self.checks
            ],
        }


def estimate_table(
    table: TableAccumulator, probabilities: Sequence[float] = PROBABILITIES
) -> TailEstimate:
    """The tail estimate of an analysed table, from what the bounded analysis keeps of it:
    the fit and the count, resolution and fit checks from the exact count of every value
    (all samples); the order-dependent checks (independence, identical distribution) from
    the first samples in capture order (``TableAccumulator.kept_points``: the first
    ``KEEP_POINTS``, 20,000; all of a shorter table). Past those nothing of the order is
    kept, so a longer table's later samples are checked for neither: ``checked_samples``
    says how many were."""
    series, _ = table.kept_points()
    return estimate_tail(
        series, table.ns_per_stamp, (table.values, table.counts), probabilities=probabilities
    )


def exceedance_count(n: int) -> int:
    """Samples above the threshold for a table of ``n`` samples (module doc, "The fit")."""
    return round(2 * math.sqrt(n))


def estimate_tail(
    series: ArrayLike,
    ns_per_stamp: float,
    counts: tuple[ArrayLike, ArrayLike] | None = None,
    *,
    probabilities: Sequence[float] = PROBABILITIES,
    confidence: float = CONFIDENCE,
) -> TailEstimate:
    """The tail estimate of a table (module doc). ``series``: its samples (stamp units) in
    capture order, all of them or the first ones; ``counts``: None, or (values, counts) of all
    its samples (sorted distinct values and how often each occurs, e.g. TableAccumulator's
    ``values`` and ``counts``) when the series holds only the first."""
    series = np.asarray(series, np.int64)
    if counts is None:
        values, occurrences = np.unique(series, return_counts=True)
    else:
        values = np.asarray(counts[0], np.int64)
        occurrences = np.asarray(counts[1], np.int64)
    n = int(occurrences.sum())
    if len(series) < min(n, MIN_SAMPLES):
        raise ValueError(f"the series must hold the first {MIN_SAMPLES} samples at least")

    def refused(checks: list[Check]) -> TailEstimate:
        return TailEstimate(
            n,
            len(series),
            tuple(checks),
            confidence,
            "not estimable: " + "; ".join(check.reason for check in checks if not check.passed),
        )

    enough = n >= MIN_SAMPLES
    checks = [
        Check(
            "enough samples",
            enough,
            f"{'enough' if enough else 'too few'} samples: "
            f"{n} {'>=' if enough else '<'} {MIN_SAMPLES}",
            float(n),
        )
    ]
    if not enough:
        return refused(checks)
    k = exceedance_count(n)
    top_values, top_counts, lowest_total = _top(values, occurrences, k + 1)
    checks += [
        _independence(series),
        _identical_distribution(series),
        _resolution(top_values, top_counts),
    ]
    if not all(check.passed for check in checks):
        return refused(checks)

    rng = np.random.default_rng(_seed(values, occurrences))
    top = _spread(top_values, top_counts, lowest_total, rng)
    u, y_max = top[0], top[-1] - top[0]
    likelihood = _Likelihood((top[1:] - u) / y_max)
    best, xi, tau, v = likelihood.fit()
    checks.append(_tail_fit(likelihood, xi, v))
    if not checks[-1].passed:
        return refused(checks)

    zeta = k / n
    taus, xi_low, xi_high, open_ = likelihood.region(best, v, confidence)

    def to_ns(excess: float) -> float:
        """Whole stamp units below the quantile u + excess (module doc, "Ties"), in ns."""
        return math.floor(u + excess * y_max) * ns_per_stamp

    quantiles = []
    for probability in probabilities:
        if probability >= zeta:
            quantiles.append(
                _order_statistic(values, occurrences, probability, confidence, ns_per_stamp)
            )
            continue
        log_ratio = math.log(zeta / probability)
        ends = np.concatenate([_excess(xi_low, taus, log_ratio), _excess(xi_high, taus, log_ratio)])
        quantiles.append(
            Quantile(
                probability,
                to_ns(float(_excess(xi, tau, log_ratio))),
                to_ns(float(np.nanmin(ends))),
                math.inf if open_ else to_ns(float(np.nanmax(ends))),
                "fit",
            )
        )
    return TailEstimate(
        n,
        len(series),
        tuple(checks),
        confidence,
        None,
        tuple(quantiles),
        math.floor(u) * ns_per_stamp,
        k,
        xi,
        xi / tau * y_max * ns_per_stamp,
    )


# --- checks --------------------------------------------------------------------------------


def _verdict(
    name: str, labels: tuple[str, str], test: str, statistic: float, pvalue: float
) -> Check:
    """A check by a test's p-value against ALPHA; ``labels``: (passed, failed) wording."""
    passed = bool(pvalue >= ALPHA)
    reason = (
        f"{labels[0] if passed else labels[1]} ({test} = {statistic:.4g}, "
        f"p = {pvalue:.2g} {'>=' if passed else '<'} {ALPHA})"
    )
    return Check(name, passed, reason, float(statistic), float(pvalue))


def _independence(series: IntArray) -> Check:
    """Ljung-Box on the ranks and on the tail's positions; p: twice the smaller p-value."""
    from scipy import stats

    ranks = stats.rankdata(series)
    threshold = np.sort(series)[-exceedance_count(len(series)) - 1]
    tests = [
        (_ljung_box(ranks), "the ranks"),
        (_ljung_box((series > threshold).astype(np.float64)), "the tail's positions"),
    ]
    (q, p), which = min(tests, key=lambda test: test[0][1])
    return _verdict(
        "independence",
        ("independent", "not independent"),
        f"Ljung-Box Q of {which}, lags 1-{LAGS}",
        q,
        min(1.0, 2 * p),
    )


def _ljung_box(x: FloatArray) -> tuple[float, float]:
    """(Q, p) of the Ljung-Box test, Q = n (n + 2) sum over lags h of r_h**2 / (n - h)."""
    from scipy import stats

    x = x - x.mean()
    n = len(x)
    lags = np.arange(1, LAGS + 1)
    energy = float(np.sum(x * x))
    if not energy:  # all equal: nothing to test (resolution refuses)
        return 0.0, 1.0
    # Products summed by numpy, not BLAS: the same bits everywhere, no threads to wait for.
    r = np.array([np.sum(x[:-h] * x[h:]) for h in lags]) / energy
    q = n * (n + 2) * float(np.sum(r * r / (n - lags)))
    return q, float(stats.chi2.sf(q, LAGS))


def _identical_distribution(series: IntArray) -> Check:
    from scipy import stats

    half = len(series) // 2
    result = stats.ks_2samp(series[:half], series[half:], method="asymp")
    return _verdict(
        "identical distribution",
        ("identically distributed", "not identically distributed"),
        "Kolmogorov-Smirnov D between the halves",
        result.statistic,
        result.pvalue,
    )


def _resolution(top_values: IntArray, top_counts: IntArray) -> Check:
    """Probability that two of the tail's samples (drawn without replacement) are equal."""
    m = int(top_counts.sum())
    coincidence = float(np.sum(top_counts * (top_counts - 1))) / (m * (m - 1))
    passed = coincidence <= MAX_COINCIDENCE
    most = int(top_counts.max())
    reason = (
        f"tail {'resolved' if passed else 'too coarse'}: the {m} largest samples hold "
        f"{len(top_values)} distinct values ({most} equal), two of them equal with "
        f"probability {coincidence:.2f} {'<=' if passed else '>'} {MAX_COINCIDENCE}"
    )
    return Check("tail resolution", passed, reason, coincidence)


def _tail_fit(likelihood: "_Likelihood", xi: float, v: float) -> Check:
    """Cramer-von Mises test of the fitted GPD: F(y) = 1 - (1 + tau y) ** (-1 / xi)."""
    from scipy import stats

    pit = -np.expm1(-_log1p_tau(np.array([v]), likelihood.r)[0] / xi)
    result = stats.cramervonmises(pit, "uniform")
    return _verdict(
        "tail fit",
        ("tail fits the GPD", "tail does not fit the GPD"),
        "Cramer-von Mises W2",
        result.statistic,
        result.pvalue,
    )


# --- the largest samples, spread over their stamp unit ---------------------------------------


def _seed(values: IntArray, counts: IntArray) -> int:
    """A seed from the value counts: the same samples spread the same way."""
    digest = hashlib.sha256(values.astype("<i8").tobytes() + counts.astype("<i8").tobytes())
    return int.from_bytes(digest.digest()[:8], "little")


def _top(values: IntArray, counts: IntArray, m: int) -> tuple[IntArray, IntArray, int]:
    """Values and counts of the ``m`` largest samples (the lowest value's count cut to fit),
    and the lowest value's count among all samples."""
    above = np.cumsum(counts[::-1])
    first = len(values) - 1 - int(np.searchsorted(above, m))
    top_values, top_counts = values[first:], counts[first:].copy()
    top_counts[0] -= int(above[-1 - first]) - m
    return top_values, top_counts, int(counts[first])


def _spread(
    top_values: IntArray, top_counts: IntArray, lowest_total: int, rng: np.random.Generator
) -> FloatArray:
    """The m largest samples, each plus a uniform draw in [0, 1), sorted: as if every sample
    were spread and the m largest taken. Of the lowest value's samples only the largest
    spreads enter; they are drawn as the largest order statistics of its full count (the
    largest of N uniforms is V ** (1 / N), the next that times V' ** (1 / (N - 1)), ...), so
    that a block of millions of equal samples costs nothing."""
    upper = np.repeat(top_values[1:], top_counts[1:]) + rng.random(int(top_counts[1:].sum()))
    exponents = 1 / np.arange(lowest_total, lowest_total - top_counts[0], -1, dtype=np.float64)
    lowest = top_values[0] + np.cumprod(rng.random(int(top_counts[0])) ** exponents)
    return np.sort(np.concatenate([upper, lowest]))


# --- the generalised Pareto likelihood ------------------------------------------------------


def _log1p_tau(v: FloatArray, r: FloatArray) -> FloatArray:
    """log(1 + tau * r) per row (tau = expm1(v)) and sample r = y / max(y) in [0, 1]: (G, k),
    accurate as v -> -inf (a support ending at the largest exceedance)."""
    out = np.empty((len(v), len(r)))
    below = v <= 0
    out[below] = np.log((1 - r) + r * np.exp(v[below])[:, None])
    out[~below] = np.log1p(np.expm1(v[~below])[:, None] * r)
    return out


def _excess(xi: Any, tau: Any, log_ratio: float) -> Any:
    """The quantile above the threshold, ((zeta / p) ** xi - 1) / tau with tau = xi / sigma and
    log_ratio = log(zeta / p), in units of the largest exceedance."""
    return np.expm1(xi * log_ratio) / tau


class _Likelihood:
    """The GPD log-likelihood of exceedances r (scaled to a largest of 1) in Grimshaw's
    reduction: with tau = xi / sigma fixed, it depends on the samples only through
    m(tau) = mean(log(1 + tau r)): l = -k (log(xi / tau) + (1 + 1 / xi) m), largest at
    xi = m. Rows are v = log(1 + tau), from V_RANGE's -40 (a support ending within e**-40 of
    the largest exceedance) to 30 (xi far above SHAPE_RANGE for any sample)."""

    V_RANGE = (-40.0, 30.0)
    COARSE_ROWS, ZOOM_ROWS, FINE_ROWS = 281, 17, 256

    def __init__(self, r: FloatArray) -> None:
        self.r = r
        self.k = len(r)

    def rows(self, v: FloatArray) -> tuple[FloatArray, FloatArray]:
        """(tau, m) per row v (v = 0, the exponential limit, taken just beside zero)."""
        v = np.where(v == 0, 1e-12, v)
        return np.expm1(v), _log1p_tau(v, self.r).mean(axis=1)

    def profile(self, v: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """The largest l over xi in SHAPE_RANGE per row: (l, xi, tau)."""
        tau, m = self.rows(v)
        xi = np.clip(m, *SHAPE_RANGE)
        return -self.k * (np.log(xi / tau) + (1 + 1 / xi) * m), xi, tau

    def fit(self) -> tuple[float, float, float, float]:
        """Maximum likelihood: (l, xi, tau, v), from a grid of rows zoomed in twice."""
        v = np.linspace(*self.V_RANGE, self.COARSE_ROWS)
        ll, xi, tau = self.profile(v)
        best = int(np.argmax(ll))
        for _ in range(2):
            v = np.linspace(v[max(best - 1, 0)], v[min(best + 1, len(v) - 1)], self.ZOOM_ROWS)
            ll, xi, tau = self.profile(v)
            best = int(np.argmax(ll))
        return float(ll[best]), float(xi[best]), float(tau[best]), float(v[best])

    def region(
        self, best: float, v_best: float, confidence: float
    ) -> tuple[FloatArray, FloatArray, FloatArray, bool]:
        """The confidence region {l >= best - chi2_d(confidence) / 2},
        d = REGION_DEGREES: per row, tau and the
        lowest and highest xi in it (rows spaced as Chebyshev nodes between the region's
        ends, where the quantiles' extremes lie), and whether it reaches the top of
        SHAPE_RANGE or of the rows (the upper ends are then open)."""
        from scipy import stats

        cut = best - stats.chi2.ppf(confidence, REGION_DEGREES) / 2
        # The best row v_best is inside: a region narrower than the grid is found too.
        v = np.sort(np.append(np.linspace(*self.V_RANGE, self.COARSE_ROWS), v_best))
        inside = np.flatnonzero(self.profile(v)[0] >= cut)
        first, last = inside[0], inside[-1]
        low = v[first] if first == 0 else self._edge(cut, v[first - 1], v[first])
        high = v[last] if last == len(v) - 1 else self._edge(cut, v[last + 1], v[last])
        rows = low + (high - low) * (1 - np.cos(np.linspace(0, np.pi, self.FINE_ROWS))) / 2
        tau, xi_low, xi_high, clipped = self._shapes(rows, cut)
        return tau, xi_low, xi_high, bool(clipped or last == len(v) - 1)

    def _edge(self, cut: float, outside: float, inside: float) -> float:
        """The row between ``outside`` (l < cut) and ``inside`` where the profile meets the
        cut, to a ZOOM_ROWS**-3 of their distance."""
        for _ in range(3):
            v = np.linspace(outside, inside, self.ZOOM_ROWS)
            first = int(np.argmax(self.profile(v)[0] >= cut))  # v[-1] is inside
            outside, inside = v[max(first - 1, 0)], v[first]
        return inside

    def _shapes(self, v: FloatArray, cut: float) -> tuple[FloatArray, FloatArray, FloatArray, bool]:
        """Per row: tau, the lowest and highest xi in SHAPE_RANGE with l >= cut (both NaN if
        none: a row may fall just outside at the region's ends), and whether any row's
        region was cut at the top of SHAPE_RANGE. With xi = m / w, l >= cut is
        w - log(w) <= B, B = -cut / k - m - log(m / tau); the roots of w - log(w) = B are
        -W(-exp(-B)) on the two real branches of Lambert's W."""
        from scipy import special

        tau, m = self.rows(v)
        b = -cut / self.k - m - np.log(m / tau)
        z = -np.exp(-np.maximum(b, 1.0))
        with np.errstate(divide="ignore"):
            ends = m / -special.lambertw(z, -1).real, m / -special.lambertw(z, 0).real
        low, high = np.minimum(*ends), np.maximum(*ends)
        clipped = high > SHAPE_RANGE[1]
        low, high = np.maximum(low, SHAPE_RANGE[0]), np.minimum(high, SHAPE_RANGE[1])
        empty = (b < 1) | (low > high)
        return (
            tau,
            np.where(empty, np.nan, low),
            np.where(empty, np.nan, high),
            bool((clipped & ~empty).any()),
        )


# --- probabilities within the samples --------------------------------------------------------


def _order_statistic(
    values: IntArray, counts: IntArray, probability: float, confidence: float, ns_per_stamp: float
) -> Quantile:
    """The smallest value that at most n * p samples exceed, and the distribution-free
    interval from order statistics (statistics.quantile_ranks, as for the table's
    percentiles; an end beyond the samples is open: -inf or inf)."""
    n = int(counts.sum())
    cumulative = np.cumsum(counts)

    def at_rank(rank: int) -> float:
        """The rank-th smallest sample (1-based), in ns."""
        return float(values[np.searchsorted(cumulative, rank)]) * ns_per_stamp

    low, high = quantile_ranks(n, 100 * (1 - probability), confidence)
    return Quantile(
        probability,
        at_rank(n - math.floor(n * probability)),
        -math.inf if low is None else at_rank(low),
        math.inf if high is None else at_rank(high),
        "order statistics",
    )
