"""Every sample accounted for (issue 29): per table, the samples an undamaged capture would
have given are ``kept + discarded + lost``. ``lost`` counts the samples that damage took
without leaving a pair to discard: a start or end event swallowed by a hole or a LOSS span,
the part of a window after a hole that became a window of unknown parameter (docs/tests.md,
rule 5), a window whose START or PARAM a hole took, a whole window a hole swallowed.

A table none of whose windows a loss span (hole or LOSS record) touches lost nothing: 0,
exact. Otherwise the undamaged count is not in the capture; it is estimated from the suite's
plan (:class:`SuitePlan`: the ``suite`` settings in the capture's metadata, which tests ran
with how many samples, and the suite's defaults in ``latscope_defs.markers``): the samples
per window of the table's test times the table's windows, ``lost ~N``. A window of the plan
that left no named START (every marker of it in a hole, or its START or PARAM) has its
tables reported with its samples lost (``~N``), when a hole lies where it ran: between the
windows of the plan seen before and after it, or after the last one when the capture's end
is missing. Where the plan is not known (no ``suite`` settings, a bring-up program, settings
that change the plan) the estimate is unknown: ``?``.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from latscope_defs.markers import (
    SUITE_CLOCK_SAMPLES,
    SUITE_OBJECT_SAMPLES,
    SUITE_PARAMETERS,
    Test,
)

__all__ = ["NOTHING_LOST", "Lost", "SuitePlan", "lost_of", "plan_of_metadata"]

#: Tests whose windows give ``SUITE_OBJ_SAMPLES`` = min(samples, 256) samples, and the
#: clock-ISR test's ``SUITE_CLK_SAMPLES`` = min(samples, 100) (``firmware/suite/suite.h``,
#: the tests' sources); every other test (IL, IDL, TSL) gives ``SUITE_SAMPLES``.
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
#: The suite.h settings (-D, the suite's ``cflags``) that change the plan: with any of them
#: set, the plan is not known.
_PLAN_SETTINGS = (
    "SUITE_SAMPLES",
    "SUITE_OBJ_SAMPLES",
    "SUITE_CLK_SAMPLES",
    "SUITE_SELECT",
    "SUITE_IDL_B_THREADS",
    "SUITE_TSL_THREADS",
    "SUITE_SEO_F_MAX",
)


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


@dataclass(frozen=True)
class SuitePlan:
    """What a run of the suite built with ``SAMPLES=samples`` and ``TESTS=tests`` (the
    :class:`~latscope_defs.markers.Test` members it ran) does: its windows, in run order
    (``windows``: (test, parameter or None); one per parameter of the tests of
    ``SUITE_PARAMETERS``, one for each other test) and the samples each gives
    (``per_window``). ``handlers``: whether the DUT's kernel writes the handler-entry
    markers that end the ILH tables (None: not said; then the capture's own markers tell)."""

    samples: int
    tests: tuple[Test, ...]
    handlers: bool | None = None

    @classmethod
    def of(cls, samples: int, tests: str = "all", handlers: bool | None = None) -> "SuitePlan":
        """The plan of the suite's ``SAMPLES`` and ``TESTS`` settings (``all`` or
        comma-separated Test names, as ``firmware/suite/Makefile`` takes them)."""
        chosen = {Test[name.strip()] for name in tests.split(",")} if tests != "all" else None
        return cls(
            samples,
            tuple(
                test
                for test in Test
                if Test.NONE < test < Test.KERNEL and (chosen is None or test in chosen)
            ),
            handlers,
        )

    @property
    def windows(self) -> list[tuple[Test, int | None]]:
        return [(test, n) for test in self.tests for n in SUITE_PARAMETERS.get(test, (None,))]

    def per_window(self, test: int) -> int:
        """The samples a window of ``test`` gives in an undamaged run."""
        if test in _OBJECT_TESTS:
            return min(self.samples, SUITE_OBJECT_SAMPLES)
        if test == Test.CLOCK_ISR:
            return min(self.samples, SUITE_CLOCK_SAMPLES)
        return self.samples


def plan_of_metadata(metadata: Mapping[str, Any]) -> SuitePlan | None:
    """The plan of a capture of the suite (its metadata's ``suite``: ``samples``, ``tests``,
    ``program``, ``cflags``; and ``handler_markers``); None for a capture that does not say,
    of another program, or whose build changed the plan's settings."""
    suite = metadata.get("suite")
    if not isinstance(suite, Mapping):
        return None
    samples, tests = suite.get("samples"), suite.get("tests", "all")
    cflags = suite.get("cflags", "")
    if (
        not isinstance(samples, int)
        or isinstance(samples, bool)
        or samples <= 0
        or suite.get("program", "suite") != "suite"
        or not isinstance(cflags, str)
        or any(setting in cflags for setting in _PLAN_SETTINGS)
        or not isinstance(tests, str)
    ):
        return None
    handlers = metadata.get("handler_markers")
    try:
        return SuitePlan.of(samples, tests, handlers if isinstance(handlers, bool) else None)
    except KeyError:  # a test name this host does not know
        return None


def lost_of(
    test: int,
    kept: int,
    discarded: int,
    windows: int,
    damaged: bool,
    plan: SuitePlan | None,
) -> Lost:
    """A table's :class:`Lost`: ``kept`` samples, ``discarded`` pairs, ``windows`` its
    windows: those with a START that named it and those of the plan a hole swallowed (at
    least one: a table of a window a hole opened has one), ``damaged``: a loss span touched
    one of them (or a window of the test whose parameter is unknown may be one of its, or a
    hole swallowed one)."""
    if not damaged:
        return NOTHING_LOST
    if plan is None:
        return Lost(None, True)
    return Lost(max(0, max(1, windows) * plan.per_window(test) - kept - discarded), True)
