"""Coverage study of the tail estimate (host/latscope/analysis/tail.py), larger than its tests.

Draws tables of known tails (tests/support/tail_samples.py: whole stamp units, true quantiles exact
from scipy) and prints, per distribution and sample count: how often each probability's
interval held the true quantile (a refusal counts as a miss), how often the truth lay below
the interval, the refusals by check, the median interval of the 1e-6 quantile around the
truth, and the time per estimate. Then how often the faulty series of the tests are refused
by the right check, and how the tail resolution check treats tails of a few stamp units.

With ``--draws 200`` and the default sizes the coverage figures are those of
tests/host/test_tail.py (same seeds). ``--confidence``, ``--degrees`` (of the likelihood-ratio
region: 1 is the profile interval of each quantile alone) and ``--k`` (the exceedance count
as a Python expression of n) rerun the study with another choice than tail.py's, to compare.

Run: ``.venv/bin/python bench/tail_coverage.py [--draws 1000] [--sizes 1000 10000 100000]``
(about 3 minutes with the defaults on one core; 100,000 samples cost about 0.1 s a draw).
"""

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "host"))
sys.path.insert(0, str(ROOT / "tests"))

from latscope.analysis import tail  # noqa: E402
from support.tail_samples import DISTRIBUTIONS, FAULTS, coverage, refusals, true_quantile  # noqa: E402

#: Tails beyond the tests': a Weibull lighter than exponential (shape 1.5), whose exceedances
#: look bounded at any finite threshold.
EXTRA = {"weibull 1.5": stats.weibull_min(1.5, loc=1000, scale=100)}


def coverage_table(draws, sizes, confidence):
    names = sorted(DISTRIBUTIONS) + sorted(EXTRA)
    print(
        f"coverage of the {confidence:.0%} intervals ({draws} draws each; a refusal is a miss;"
        " 'below': truth below the interval; 1e-6 interval: median ends minus the truth, "
        "stamp units)"
    )
    print(
        f"{'distribution':<13}{'n':>8}  {'1e-3':>6} {'1e-6':>6} {'1e-9':>6}  {'below':>5}  "
        f"{'1e-6 interval':>18}  {'ms':>5}  refused"
    )
    false_refusals = {}
    for n in sizes:
        for name in names:
            distribution = {**DISTRIBUTIONS, **EXTRA}[name]
            seed = names.index(name) + 1
            start = time.process_time()
            held, below, refused, results = coverage(
                lambda samples: tail.estimate_tail(samples, 1.0, confidence=confidence),
                distribution,
                n,
                draws,
                seed,
            )
            ms = 1000 * (time.process_time() - start) / draws
            truth = true_quantile(distribution, 1e-6)
            ends = np.array(
                [
                    (q.low_ns - truth, q.high_ns - truth)
                    for r in results
                    for q in r.quantiles
                    if q.probability == 1e-6
                ]
            )
            interval = (
                f"[{np.median(ends[:, 0]):+.0f}, {np.median(ends[:, 1]):+.0f}]"
                if len(ends)
                else "-"
            )
            rates = " ".join(f"{held.get(p, 0) / draws:6.3f}" for p in tail.PROBABILITIES)
            print(
                f"{name:<13}{n:>8}  {rates}  {sum(below.values()):>5}  {interval:>18}  "
                f"{ms:5.1f}  {refused or ''}"
            )
            for check, count in refused.items():
                false_refusals[check] = false_refusals.get(check, 0) + count
    total = draws * len(sizes) * len(names)
    print(
        "refusals of these independent, identically distributed samples: "
        + ", ".join(
            f"{check} {count / total:.2%}" for check, count in sorted(false_refusals.items())
        )
        + f" of {total} draws"
    )


def fault_table(draws):
    print(f"\nfaulty series refused by the right check ({draws} draws each)")
    for fault, (_, check) in FAULTS.items():
        for n in (1000, 10_000):
            right, failed = refusals(
                lambda samples: tail.estimate_tail(samples, 1.0), fault, n, draws, seed=7
            )
            estimated = sum(not names for names in failed)
            print(
                f"  {fault:<26}{n:>7}  by {check}: {right / draws:6.3f}   estimated: "
                f"{estimated / draws:6.3f}"
            )


def resolution_table(draws):
    print(
        f"\ntails of a few stamp units: exponential of scale s units, 1000 samples "
        f"({draws} draws each)"
    )
    for scale in (0.5, 1, 2, 3, 5, 10):
        distribution = stats.expon(loc=1000, scale=scale)
        held, _, refused, results = coverage(
            lambda samples: tail.estimate_tail(samples, 1.0), distribution, 1000, draws, seed=11
        )
        coincidence = np.median(
            [c.statistic for r in results for c in r.checks if c.name == "tail resolution"]
        )
        estimated = sum(r.refusal is None for r in results)
        print(
            f"  s = {scale:<4}  coincidence (median) {coincidence:.3f}   too coarse "
            f"{refused.get('tail resolution', 0) / draws:6.3f}   1e-6 held in "
            f"{held.get(1e-6, 0)} of {estimated} estimated"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000])
    parser.add_argument("--confidence", type=float, default=tail.CONFIDENCE)
    parser.add_argument("--degrees", type=int, default=tail.REGION_DEGREES)
    parser.add_argument(
        "--k",
        help="exceedance count, a Python expression of n "
        "(default tail.exceedance_count: round(2 * sqrt(n)))",
    )
    parser.add_argument("--only-coverage", action="store_true")
    args = parser.parse_args()
    # Other choices than tail.py's, for comparison only: set on the module for this run.
    tail.REGION_DEGREES = args.degrees
    if args.k:
        tail.exceedance_count = lambda n: round(eval(args.k, {"sqrt": math.sqrt, "n": n}))
    print(
        f"tail.py: k = {args.k or 'round(2 * sqrt(n))'}, region of {args.degrees} degree(s) "
        f"of freedom, checks at {tail.ALPHA}"
    )
    coverage_table(args.draws, args.sizes, args.confidence)
    if not args.only_coverage:
        fault_table(args.draws)
        resolution_table(args.draws)


if __name__ == "__main__":
    main()
