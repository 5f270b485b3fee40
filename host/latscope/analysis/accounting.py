"""Every sample accounted for (issue 29): per table, the samples an undamaged capture would
have given are ``kept + discarded + lost``. ``lost`` counts the samples that damage took
without leaving a pair to discard: a start or end event swallowed by a hole or a LOSS span,
the part of a window after a hole that became a window of unknown parameter (docs/tests.md,
rule 5), a window whose START or PARAM a hole took.

A table none of whose windows a loss span (hole or LOSS record) touches lost nothing: 0,
exact. Otherwise the undamaged count is not in the capture; it is estimated from the suite's
sample count per window (the ``suite.samples`` setting in the capture's metadata, and the
suite's rule for the object and clock tests, ``firmware/suite/suite.h``) times the table's
windows: ``lost ~N``. The estimate is exact when the table had that many samples per window
and a hole swallowed no whole window of it (a window whose START, its markers and its END
all fell into holes leaves no trace of its table); without the setting it is unknown.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from latscope_defs.markers import Test

__all__ = ["NOTHING_LOST", "Lost", "lost_of", "per_window_of_metadata", "suite_per_window"]

#: Tests whose windows give ``SUITE_OBJ_SAMPLES`` = min(samples, 256) samples, and the
#: clock-ISR test's ``SUITE_CLK_SAMPLES`` = min(samples, 100) (``firmware/suite/suite.h``);
#: every other test (IL, IDL, TSL) gives ``SUITE_SAMPLES``.
_OBJECT_TESTS = {
    Test.TF_A,
    Test.TF_B,
    Test.TF_C,
    Test.SEO_A,
    Test.SEO_B,
    Test.SEO_C,
    Test.SEO_D,
    Test.SEO_E,
    Test.SEO_F,
    Test.SEO_G,
    Test.MQ,
}
_OBJECT_SAMPLES = 256
_CLOCK_SAMPLES = 100

#: The samples one window of a test gives in an undamaged run: ``per_window(test)``.
PerWindow = Callable[[int], int]


@dataclass(frozen=True)
class Lost:
    """A table's lost samples: ``count`` (None: not known, no sample count per window) and
    whether it is an ``estimate`` (a loss touched the table's windows) or exact."""

    count: int | None
    estimate: bool

    def text(self) -> str:
        """As the outputs show it: "0", "~12", "?" (not known)."""
        if self.count is None:
            return "?"
        return f"~{self.count}" if self.estimate else str(self.count)


#: What a table that no loss touched lost.
NOTHING_LOST = Lost(0, False)


def suite_per_window(samples: int) -> PerWindow:
    """The suite's samples per window of each test when it was built with ``SAMPLES=samples``."""

    def per_window(test: int) -> int:
        if test in _OBJECT_TESTS:
            return min(samples, _OBJECT_SAMPLES)
        if test == Test.CLOCK_ISR:
            return min(samples, _CLOCK_SAMPLES)
        return samples

    return per_window


def per_window_of_metadata(metadata: Mapping[str, Any]) -> PerWindow | None:
    """The per-window sample counts of a capture of the suite (its metadata's
    ``suite.samples``); None for a capture that does not say."""
    suite = metadata.get("suite")
    samples = suite.get("samples") if isinstance(suite, Mapping) else None
    if isinstance(samples, int) and not isinstance(samples, bool) and samples > 0:
        return suite_per_window(samples)
    return None


def lost_of(
    test: int,
    kept: int,
    discarded: int,
    windows: int,
    damaged: bool,
    per_window: PerWindow | None,
) -> Lost:
    """A table's :class:`Lost`: ``kept`` samples, ``discarded`` pairs, ``windows`` its test's
    windows with a START that named it (at least one: a table of a window a hole opened
    has one), ``damaged``: a loss span touched one of them (or a window of the test whose
    parameter is unknown may be one of its)."""
    if not damaged:
        return NOTHING_LOST
    if per_window is None:
        return Lost(None, True)
    return Lost(max(0, max(1, windows) * per_window(test) - kept - discarded), True)
