"""Cases of a parametrized test for `make check` and `make test` (tests/README.md, "Markers")."""

import pytest


def parametrize_first_fast(argnames, cases, **options):
    """``pytest.mark.parametrize`` whose cases after the first are marked slow: `make check`
    runs the test in its first case, `make test` in every case (more seeds, clock ratios,
    sizes: more of the same check, each several seconds of simulation)."""
    several = len(argnames.split(",") if isinstance(argnames, str) else argnames) > 1
    first, *rest = cases
    slow = [pytest.param(*(case if several else (case,)), marks=pytest.mark.slow) for case in rest]
    return pytest.mark.parametrize(argnames, [first, *slow], **options)
