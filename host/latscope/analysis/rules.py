"""The pairing rules: which events of which test make the samples of which table
(docs/tests.md), and the kernel's tick markers that flag a sample."""

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from latscope_defs.markers import KERNEL_TICK_ENTRY, KERNEL_TICK_EXIT, Point, Test
from latscope_defs.protocol import Source

__all__ = [
    "MARKER_SOURCES",
    "is_marker",
    "Endpoint",
    "Rule",
    "RULES",
    "TableParameters",
    "is_tick",
    "tick_overlaps",
]

#: What starts or ends a sample: an asserting IRQ edge, the kernel's handler-entry marker, or
#: a marker point of the rule's test.
Endpoint = Literal["irq", "handler"] | Point

#: A table's parameters: ``test`` (its test's name), ``n`` (the START marker's argument, None:
#: none), and what a table of its own adds (the IRQ loop's ``channel`` and edge counts).
TableParameters = dict[str, str | int | None]

#: Marker values reach the host from the trace port (MARKER) or the bus window (BUS).
MARKER_SOURCES = (Source.MARKER, Source.BUS)


def is_marker(source: npt.NDArray[np.uint8]) -> npt.NDArray[np.bool_]:
    """Which events' ``source`` is one of :data:`MARKER_SOURCES` (a comparison per source:
    np.isin costs about ten times more on these uint8 arrays)."""
    mask = source == MARKER_SOURCES[0]
    for other in MARKER_SOURCES[1:]:
        mask |= source == other
    return mask


@dataclass(frozen=True)
class Rule:
    """One sample table of a test: ``name`` (``{n}`` = the START marker's argument), the
    event that starts a sample and the event that ends it. An event is ``"irq"`` (an
    asserting IRQ edge), ``"handler"`` (the kernel's KERNEL/ISR_ENTRY marker: it is about
    to call an interrupt handler) or a marker :class:`Point` of the test."""

    test: Test
    name: str
    start: Endpoint
    end: Endpoint


RULES: list[Rule] = [
    Rule(Test.IL_A, "IL-a-1", "irq", Point.ISR_ENTRY),
    Rule(Test.IL_A, "ILH-a-1", "irq", "handler"),
    Rule(Test.IL_A, "IDL-a-1", Point.ISR_EXIT, Point.THREAD),
    Rule(Test.IDL_B, "IL-b-{n}", "irq", Point.ISR_ENTRY),
    Rule(Test.IDL_B, "ILH-b-{n}", "irq", "handler"),
    Rule(Test.IDL_B, "IDL-b-{n}", Point.ISR_EXIT, Point.T2),
    Rule(Test.TSL_A, "TSL-a-{n}", Point.T1, Point.T2),
    Rule(Test.TF_A, "TF-a-1", Point.T1, Point.T2),
    Rule(Test.TF_B, "TF-b-1", Point.T1, Point.T2),
    Rule(Test.TF_C, "TF-c-2", Point.T1, Point.T2),
    Rule(Test.SEO_A, "SEO-a-1", Point.T1, Point.T2),
    Rule(Test.SEO_B, "SEO-b-1", Point.T1, Point.T2),
    Rule(Test.SEO_C, "SEO-c-1", Point.T1, Point.T2),
    Rule(Test.SEO_D, "SEO-d-1", Point.T1, Point.T2),
    Rule(Test.SEO_E, "SEO-e-1", Point.T1, Point.T2),
    Rule(Test.SEO_F, "SEO-f-{n}", Point.T1, Point.T2),
    Rule(Test.SEO_G, "SEO-g-3", Point.T1, Point.T2),
    Rule(Test.MQ, "MQ-a-1", Point.T1, Point.T2),
    Rule(Test.CLOCK_ISR, "CLK-a-1", Point.T1, Point.T2),
]


def is_tick(
    tests: npt.NDArray[np.integer], points: npt.NDArray[np.integer]
) -> npt.NDArray[np.bool_]:
    """Mask of the kernel's tick markers (KERNEL/TICK_ENTRY, KERNEL/TICK_EXIT) among
    decoded markers."""
    return (tests == Test.KERNEL) & ((points == KERNEL_TICK_ENTRY) | (points == KERNEL_TICK_EXIT))


def tick_overlaps(
    starts: npt.NDArray[np.int64], lengths: npt.NDArray[np.int64], ticks: npt.NDArray[np.int64]
) -> npt.NDArray[np.bool_]:
    """Which samples (first stamp ``starts``, ``lengths``) overlap the kernel's tick: a tick
    marker (entry or exit, sorted stamps ``ticks``) lies in [start, start + length]. Code
    runs in no sample's end while the tick's work runs (interrupts are off), so a sample
    the tick's work delayed holds its entry or exit marker, or both."""
    ends = starts + lengths
    return np.searchsorted(ticks, starts, side="left") < np.searchsorted(ticks, ends, side="right")
