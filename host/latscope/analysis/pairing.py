"""The whole-capture analysis: every sample of every table of a capture's events
(:func:`analyze`, a :class:`SampleTable` per table): the batch analysis
(:class:`~latscope.analysis.batch.BatchAnalysis`, the one implementation of the pairing rules)
over one batch, with a collector that keeps every sample; ``docs/tests.md`` describes the
rules."""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ..events import Events
from .accounting import NOTHING_LOST, Lost, SuitePlan, plan_of_metadata
from .batch import BatchAnalysis
from .delays import NO_DELAY
from .rules import TableParameters
from .spans import Mask, Stamps
from .statistics import Stats

if TYPE_CHECKING:
    from ..capture.file import Capture

__all__ = ["SampleTable", "SampleCollector", "analyze", "analyze_loaded", "loaded_analysis"]

_EMPTY: Stamps = np.zeros(0, np.int64)


@dataclass
class SampleTable:
    """Samples of one table, in stamp units (``stamp_hz`` per second: capture clock
    cycles, or half cycles with DDR inputs), in capture order, with their start stamps."""

    name: str
    stamp_hz: float
    samples: Stamps  # stamp units
    starts: Stamps  # stamp of each sample's first event
    discarded: int = 0  # pairs dropped because of a loss between them
    parameters: TableParameters = field(default_factory=dict)
    #: stamps of the first events of the discarded pairs
    discarded_starts: Stamps = field(default_factory=lambda: np.empty(0, np.int64))
    discarded_by_holes: int = 0  # of ``discarded``: those with a hole between them
    #: bool per sample: a tick marker lies in it (:func:`~latscope.analysis.rules.tick_overlaps`;
    #: empty: none known)
    ticked: Mask = field(default_factory=lambda: np.zeros(0, bool))
    #: int64 per sample: the trigger delay of its IRQ edge, capture cycles
    #: (:mod:`~latscope.analysis.delays`; NO_DELAY: none)
    delays: Stamps = field(default_factory=lambda: np.zeros(0, np.int64))
    #: samples damage took without a pair to discard (:mod:`latscope.analysis.accounting`)
    lost: Lost = NOTHING_LOST

    def ns(self) -> npt.NDArray[np.floating]:
        return self.samples * (1e9 / self.stamp_hz)

    def stats(self) -> Stats:
        """Number of samples, min / max / average (the reference report's table), standard
        deviation and percentiles, in ns: :func:`latscope.analysis.statistics.stats_of_counts` (the
        method the bounded analysis uses too)."""
        from .statistics import stats_of_counts

        values, counts = np.unique(self.samples, return_counts=True)
        return stats_of_counts(
            values, counts, self.stamp_hz, self.discarded, self.discarded_by_holes, self.lost
        )


class SampleCollector:
    """The table collector of :func:`analyze` (:class:`~latscope.analysis.batch.BatchAnalysis`'s
    ``table``): keeps every sample, start stamp, tick flag and discarded pair, in capture
    order; :meth:`table` makes the :class:`SampleTable`."""

    def __init__(self, name: str, stamp_hz: float, parameters: TableParameters) -> None:
        self.name, self.stamp_hz, self.parameters = name, stamp_hz, parameters
        self.lost = NOTHING_LOST  # set by the analysis when it ends
        # (samples, starts, ticked, delays) per batch
        self._kept: list[tuple[Stamps, Stamps, Mask, Stamps]] = []
        self._discarded: list[tuple[Stamps, Mask]] = []  # (starts, by_hole) per batch

    def add(
        self, samples: Stamps, starts: Stamps, ticked: Mask, delays: Stamps | None = None
    ) -> None:
        if delays is None:
            delays = np.full(len(samples), NO_DELAY, np.int64)
        self._kept.append((samples, starts, ticked, delays))

    def discard(self, starts: Stamps, by_hole: Mask) -> None:
        self._discarded.append((starts, by_hole))

    def table(self) -> SampleTable:
        samples, starts, ticked, delays = (
            np.concatenate(column)
            for column in zip((_EMPTY, _EMPTY, np.zeros(0, bool), _EMPTY), *self._kept)
        )
        discarded, by_hole = (
            np.concatenate(column) for column in zip((_EMPTY, np.zeros(0, bool)), *self._discarded)
        )
        return SampleTable(
            self.name,
            self.stamp_hz,
            samples,
            starts,
            len(discarded),
            self.parameters,
            discarded,
            int(np.count_nonzero(by_hole)),
            ticked,
            delays,
            self.lost,
        )


def analyze(
    events: Events,
    stamp_hz: float,
    *,
    losses: Sequence[int] | Stamps | None = None,
    plan: SuitePlan | None = None,
    end_missing: bool = False,
) -> dict[str, SampleTable]:
    """Sample tables of every test found in ``events`` (a parser ``Events``), by name, in
    the order their tests' windows first appear. ``stamp_hz``: stamp units per second
    (``Capture.stamp_hz``, ``Identity.stamp_hz``).

    ``losses``: extra stamps where data is known to be missing (added to the LOSS records).
    ``plan``: the suite's plan (:func:`latscope.analysis.accounting.plan_of_metadata`), for
    the tables' ``lost`` estimates and the tables a hole swallowed (None: not known);
    ``end_missing``: the events' end may be missing (a capture file not closed).

    A test runs between its START and END markers (a second START before the END, whose END
    was lost, ends the window instead). Inside that window a *pairing rule* makes one
    sample from an event A and the first event B after it, when no other A comes between them (an
    A with no B is dropped) and no lost event can lie between them: a sample is either exact or
    absent, never wrong.
    """
    return _tables(_analysis(events, stamp_hz, losses, plan, end_missing))


def _analysis(
    events: Events,
    stamp_hz: float,
    losses: Sequence[int] | Stamps | None,
    plan: SuitePlan | None,
    end_missing: bool,
) -> BatchAnalysis[SampleCollector]:
    analysis = BatchAnalysis(stamp_hz, table=SampleCollector, losses=losses, plan=plan)
    analysis.feed(events)
    return analysis.finish(end_missing=end_missing)


def _tables(analysis: BatchAnalysis[SampleCollector]) -> dict[str, SampleTable]:
    return {name: collector.table() for name, collector in analysis.ordered_tables().items()}


def analyze_loaded(capture: "Capture") -> dict[str, SampleTable]:
    """:func:`analyze` of a loaded capture file, its tables accounted for as the bounded
    analysis does: with the suite's plan of its metadata, its end missing if not closed."""
    return _tables(loaded_analysis(capture))


def loaded_analysis(capture: "Capture") -> BatchAnalysis[SampleCollector]:
    """The finished analysis of :func:`analyze_loaded` (its tables and what else it found,
    e.g. :attr:`~latscope.analysis.batch.BatchAnalysis.unfinished`)."""
    return _analysis(
        capture.events,
        capture.stamp_hz,
        None,
        plan_of_metadata(capture.metadata),
        capture.end is None,
    )
