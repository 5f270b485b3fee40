"""A capture file's run and tables, in bounded memory: :func:`analyze_capture` reads its
events in batches (:class:`~latscope.capture.batches.CaptureBatches`), accumulates the tables
(:mod:`latscope.analysis.batch`) and counts what the reports say about the run
(:class:`CaptureSummary`, :class:`RunCounts`). Memory does not grow with the number of
events.
"""

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from os import PathLike
from typing import Any

import numpy as np

from latscope_defs.markers import (
    KERNEL_TICK_ENTRY,
    MARKER_BITS,
    POINT_BITS,
    TEST_BITS,
    Test,
    encode,
)
from latscope_defs.protocol import Source, loss_count, loss_source

from ..capture.batches import BATCH_BYTES, CaptureBatches
from ..capture.file import Capture, CaptureInfo, FileStats
from ..events import Events
from ..link.parser import ParserStats
from .accounting import plan_of_metadata
from .batch import analyze_batches, latency_skew
from .rules import is_marker
from .spans import HOLE, Hole, holes_of, is_hole
from .statistics import TableAccumulator, interval_stamps

__all__ = ["CaptureSummary", "RunCounts", "analyze_capture"]


#: A marker value's test and point bits (``decode``'s fields), and those of the kernel's tick
#: entry.
_POINT = encode((1 << TEST_BITS) - 1, (1 << POINT_BITS) - 1) & ((1 << MARKER_BITS) - 1)
_TICK_ENTRY = encode(Test.KERNEL, KERNEL_TICK_ENTRY)


class RunCounts:
    """What the report says about a capture's losses, counted batch by batch: ``device_losses``
    ({source name: events} of the LOSS records that are no hole), ``holes``
    (:class:`latscope.analysis.spans.Hole`, from ``holes_of``), ``first_stamp`` (of the first event
    in the stream), ``events`` and ``tick_markers``: the kernel's KERNEL/TICK_ENTRY markers
    (0: this DUT does not record its tick, docs/markers.md, and no sample can be flagged as
    ticked)."""

    def __init__(self) -> None:
        self.device_losses: dict[str, int] = {}
        self.holes: list[Hole] = []
        self.first_stamp: int | None = None
        self.events = 0
        self.tick_markers = 0
        self._delivered = Events.empty()  # the last event that is no LOSS record

    def feed(self, events: Events) -> None:
        if not len(events):
            return
        if self.first_stamp is None:
            self.first_stamp = int(events.stamp[0])
        marker = is_marker(events.source)
        self.tick_markers += int(np.count_nonzero((events.value[marker] & _POINT) == _TICK_ENTRY))
        loss = events.source == Source.LOSS
        lost = loss_source(events.value[loss])
        for source, count in zip(lost.tolist(), loss_count(events.value[loss]).tolist()):
            if source == HOLE:
                continue
            try:
                name = Source(source).name
            except ValueError:
                name = str(source)
            self.device_losses[name] = self.device_losses.get(name, 0) + count
        if np.any(is_hole(events.source, events.value)):
            # A hole begins after the previous delivered event: it may be in an earlier batch.
            before = len(self._delivered)
            for hole in holes_of(Events.concatenate([self._delivered, events])):
                self.holes.append(replace(hole, index=hole.index - before + self.events))
        last = len(loss) - 1 - int(np.argmax(~loss[::-1]))  # the last that is no LOSS record
        if not loss[last]:
            self._delivered = events[last : last + 1]
        self.events += len(events)


@dataclass
class CaptureSummary(CaptureInfo):
    """A capture without its events: what ``Capture`` says about the run (``metadata``,
    ``parser_stats``, ``file_stats``, ``end``; ``identity``, ``clock_hz``, ``stamp_hz``)
    plus ``event_count``, the smallest and largest stamps, the stamp of the first event, the
    device's losses by source, the holes and the tick markers (:class:`RunCounts`)."""

    path: str
    metadata: dict[str, Any]  # the capture file's metadata: JSON
    parser_stats: ParserStats
    file_stats: FileStats
    end: dict[str, Any] | None = None  # the END chunk's JSON (None: not closed)
    event_count: int = 0
    stamp_min: int | None = None
    stamp_max: int | None = None
    first_stamp: int | None = None
    device_losses: dict[str, int] = field(default_factory=dict)
    holes: list[Hole] = field(default_factory=list)
    passes: int = 1  # file reads the analysis needed
    out_of_order: int = 0  # events below the horizon (BatchAnalysis): 0 = exact
    tick_markers: int = 0  # KERNEL/TICK_ENTRY markers (0: ticks not recorded)
    unfinished: list[str] = field(default_factory=list)  # BatchAnalysis.unfinished

    @classmethod
    def of_capture(cls, capture: Capture, unfinished: list[str] | None = None) -> "CaptureSummary":
        """The summary of a loaded ``Capture``; ``unfinished``: its analysis's
        (:attr:`~latscope.analysis.batch.BatchAnalysis.unfinished`; None: not analyzed)."""
        counts = RunCounts()
        counts.feed(capture.events)
        stamps = capture.events.stamp
        return cls(
            capture.path,
            capture.metadata,
            capture.parser_stats,
            capture.file_stats,
            capture.end,
            len(stamps),
            int(stamps.min()) if len(stamps) else None,
            int(stamps.max()) if len(stamps) else None,
            counts.first_stamp,
            counts.device_losses,
            counts.holes,
            0,
            tick_markers=counts.tick_markers,
            unfinished=unfinished or [],
        )

    summary = Capture.summary  # the same line, from the counts

    @property
    def duration_s(self) -> float:
        """Seconds from the first to the last event (0 with fewer than two)."""
        if (
            self.event_count < 2
            or not self.stamp_hz
            or self.stamp_min is None  # (None only without events)
            or self.stamp_max is None
        ):
            return 0.0
        return float(self.stamp_max - self.stamp_min) / self.stamp_hz


def analyze_capture(
    path: str | PathLike[str],
    *,
    interval_s: float | None = 60.0,
    batch_bytes: int = BATCH_BYTES,
    background: bool = True,
) -> tuple[CaptureSummary, dict[str, TableAccumulator]]:
    """``(CaptureSummary, {name: TableAccumulator})`` of a capture file, in bounded memory;
    the tables keep their maximum per ``interval_s`` seconds (None: not kept).
    ``background``: parse in a helper process (:class:`CaptureBatches`)."""
    batches = CaptureBatches(path, batch_bytes=batch_bytes, background=background)
    stamp_hz = batches.stamp_hz
    interval = interval_stamps(interval_s, stamp_hz)
    passes: list[RunCounts | None] = []

    def read() -> Iterator[Events]:
        counts = RunCounts() if not passes else None
        passes.append(counts)
        for events in batches:
            if counts is not None:
                counts.feed(events)
            yield events

    analysis = analyze_batches(
        read,
        stamp_hz,
        skew=latency_skew(batches.identity, batches.irq_shift),
        plan=plan_of_metadata(batches.metadata),
        table=partial(TableAccumulator, interval_stamps=interval),
        end_missing=lambda: batches.end is None,
    )
    counts = passes[0]
    assert counts is not None  # the first pass counts
    # analyze_batches reads the batches to the end, which sets their statistics.
    assert batches.parser_stats is not None and batches.file_stats is not None
    summary = CaptureSummary(
        batches.path,
        batches.metadata,
        batches.parser_stats,
        batches.file_stats,
        batches.end,
        analysis.events,
        analysis.stamp_min,
        analysis.stamp_max,
        counts.first_stamp,
        counts.device_losses,
        counts.holes,
        len(passes),
        analysis.out_of_order,
        counts.tick_markers,
        analysis.unfinished,
    )
    return summary, analysis.ordered_tables()
