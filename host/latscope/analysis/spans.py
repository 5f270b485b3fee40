"""Where events may have been lost: the stamp spans of LOSS records and holes, in which a
pair of events is not trusted (docs/tests.md, rules 4 to 6)."""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from latscope_defs.protocol import (
    HOLE_SOURCE,
    HoleCount,
    Source,
    hole_count,
    hole_kind,
    hole_restart,
    loss_source,
)

from ..events import Events

__all__ = [
    "HOLE",
    "Hole",
    "LossSpans",
    "Mask",
    "Sources",
    "Spans",
    "Stamps",
    "Values",
    "hole_spans",
    "holes_of",
    "is_hole",
    "lossy_spans",
    "merge_spans",
    "merged",
    "overlaps",
]

#: Lost-source nibble of a LOSS record that stands for a hole: events of any source may be
#: missing (the parser's interface, docs/protocol.md).
HOLE = HOLE_SOURCE

#: Stamps (int64: stamps are far below 2**63) and the like.
Stamps = npt.NDArray[np.int64]
#: Event sources and values, as :class:`~latscope.events.Events` holds them.
Sources = npt.NDArray[np.uint8]
Values = npt.NDArray[np.uint64]
#: Sorted, disjoint stamp spans: (low, high).
Spans = tuple[Stamps, Stamps]
#: A boolean array: one flag per event, pair or span.
Mask = npt.NDArray[np.bool_]

_EMPTY: Stamps = np.zeros(0, np.int64)


def overlaps(spans: Spans, a: Stamps, end: Stamps) -> Mask:
    """Which pairs (a, end) overlap one of the sorted, disjoint ``spans`` (low, high)."""
    low, high = spans
    # The first span that ends after A; the pair is lossy if that span starts before B.
    first = np.searchsorted(high, a, side="right")
    lossy = first < len(high)
    lossy[lossy] = low[first[lossy]] < end[lossy]
    return lossy


def lossy_spans(
    stamp: Stamps,
    source: Sources,
    value: Values,
    extra: Sequence[int] | Stamps | None,
    holes: Spans | None = None,
) -> Spans:
    """Sorted, disjoint stamp spans (low, high) in which lost events may lie: for every LOSS
    record of source X, from the stamp of X's previous event in the stream (none: from the
    start) to the LOSS record's stamp; for every hole (:data:`HOLE`), the span of
    :func:`hole_spans` (``holes``: those spans, if known); plus a point span for every
    stamp in ``extra``. A lost event's
    stamp t satisfies low < t < high; a pair (A, B) is lossy when some span has low < B
    and high > A.

    Where lost events can lie: a LOSS record of source X says that events of X were lost after
    X's previous record in the stream and before the LOSS record itself (the appliance emits it
    when its FIFO has room again, at the latest together with X's next event). Event stamps are
    corrected for their source's pin delay and the LOSS record's is not, so an event stamped in
    the very cycle of the LOSS record comes out a few cycles *before* it: the span that may hold
    lost events is therefore taken from X's previous event to the LOSS record's stamp, and a pair
    that overlaps any such span is discarded.
    """
    is_loss = (source == Source.LOSS) & ~is_hole(source, value)
    at = np.flatnonzero(is_loss)
    lost_source = loss_source(value[is_loss].astype(np.int64))
    low = np.full(len(at), np.iinfo(np.int64).min, np.int64)
    for lost in np.unique(lost_source):
        of_source = np.flatnonzero(source == lost)
        if not len(of_source):
            continue  # no event of that source yet: lost from the start
        mine = lost_source == lost
        previous = np.searchsorted(of_source, at[mine]) - 1
        low[mine] = np.where(previous >= 0, stamp[of_source[np.maximum(previous, 0)]], low[mine])
    high = stamp[at]
    hole_low, hole_high = hole_spans(stamp, source, value) if holes is None else holes
    extra = np.asarray(extra if extra is not None else [], np.int64)
    return merged(np.concatenate([low, hole_low, extra]), np.concatenate([high, hole_high, extra]))


def merged(low: Stamps, high: Stamps) -> Spans:
    """Spans sorted by start, overlapping ones merged."""
    if not len(low):
        return low, high
    # Sorted by start, a span joins the previous group unless it starts after everything
    # before it has ended.
    order = np.argsort(low, kind="stable")
    low, high = low[order], np.maximum.accumulate(high[order])
    starts = np.flatnonzero(np.append(True, low[1:] > high[:-1]))
    ends = np.append(starts[1:], len(low)) - 1
    return low[starts], high[ends]


def is_hole(source: Sources, value: Values) -> Mask:
    """Mask of the hole records (LOSS records of lost source :data:`HOLE`)."""
    mask = source == Source.LOSS
    mask[mask] = loss_source(value[mask].astype(np.int64)) == HOLE  # few: LOSS records only
    return mask


def hole_spans(
    stamp: Stamps,
    source: Sources,
    value: Values,
    at: npt.NDArray[np.intp] | None = None,
) -> Spans:
    """(low, high) of every hole, in stream order: from the previous delivered event of any
    source (LOSS records, whose stamps are not pin-corrected, do not count; none: from the
    start) to the hole's stamp, both widened by one stamp so that a lost event in the very
    stamp of either end counts as inside.

    Why the previous event is low enough: a lost event followed that event in the stream,
    so within one source its stamp is later; from another source it can be earlier by at
    most the difference of the two pin delays, and the rules' end events (B) are markers,
    whose lost fellows share B's source. So no lost event that could change a pair lies
    below it. ``at``: the holes' indices, if known.

    Holes: where the host dropped or could not verify stream data (a segment that failed its
    check, a gap in a capture file, a resync), the parser emits a LOSS record whose lost-source
    nibble is :data:`HOLE` (0xF): events of *any* source may be missing there. A hole is a loss
    span for every source, from the previous delivered event of any source (none: from the
    start) to the hole's stamp. A hole may also have swallowed a test's END or its next START
    (and a PARAM): so a window takes start events (A) only from before the first hole inside
    it. After a hole, the test's markers up to its next START or END form a window of unknown
    parameter: its samples go to the tables whose name does not depend on the parameter, and
    to no table otherwise (docs/tests.md, rules 4 to 6).
    """
    at = np.flatnonzero(is_hole(source, value)) if at is None else at
    low = np.full(len(at), np.iinfo(np.int64).min, np.int64)
    if len(at):
        delivered = np.flatnonzero(source != Source.LOSS)
        previous = np.searchsorted(delivered, at) - 1
        has = previous >= 0
        low[has] = stamp[delivered[previous[has]]] - 1
    return low, stamp[at] + 1


@dataclass(frozen=True)
class Hole:
    """A hole in the events: ``index`` in the stream, ``stamp`` (the first verified stamp
    after it), ``after`` (the stamp of the previous delivered event, None: from the start)
    and ``lost``: event records lost there, ``kind``: how exact that is (``HoleCount``:
    exactly, at most, at least), ``restart``: the device's sequence starts anew after it (a
    device reset, or another capture appended)."""

    index: int
    stamp: int
    after: int | None
    lost: int
    kind: HoleCount = HoleCount.EXACT
    restart: bool = False

    @property
    def count_text(self) -> str:
        """The count as a reader should take it: "exactly 3", "at most 12", "at least 0"."""
        return f"{_COUNT_WORDS[self.kind]} {self.lost}"


_COUNT_WORDS = {
    HoleCount.EXACT: "exactly",
    HoleCount.AT_MOST: "at most",
    HoleCount.AT_LEAST: "at least",
}


def holes_of(events: Events) -> list[Hole]:
    """The holes (:class:`Hole`) of a parser ``Events``, in stream order."""
    stamp = events.stamp.astype(np.int64, copy=False)
    low, _ = hole_spans(stamp, events.source, events.value)
    at = np.flatnonzero(is_hole(events.source, events.value))
    values = [int(events.value[i]) for i in at.tolist()]
    return [
        Hole(
            int(i),
            int(stamp[i]),
            None if lo == np.iinfo(np.int64).min else int(lo) + 1,
            hole_count(value),
            HoleCount(hole_kind(value)),
            bool(hole_restart(value)),
        )
        for i, lo, value in zip(at.tolist(), low.tolist(), values)
    ]


def merge_spans(*spans: Spans) -> Spans:
    """One sorted, disjoint set of (low, high) spans from several, merged as
    ``lossy_spans`` merges (spans that overlap or touch become one)."""
    return merged(
        np.concatenate([s[0] for s in spans]).astype(np.int64),
        np.concatenate([s[1] for s in spans]).astype(np.int64),
    )


def _last_of_each(source: Sources) -> dict[int, int]:
    """{source: index of its last event} of the sources in ``source``, looked for from the
    end in growing pieces (a batch's last events hold most sources' last)."""
    wanted = set(np.flatnonzero(np.bincount(source)).tolist())
    found: dict[int, int] = {}
    end, piece = len(source), 256
    while wanted:
        begin = max(0, end - piece)
        for kind in list(wanted):
            at = np.flatnonzero(source[begin:end] == kind)
            if len(at):
                found[kind] = begin + int(at[-1])
                wanted.discard(kind)
        end, piece = begin, piece * 4
    return found


class LossSpans:
    """The loss spans of a capture's LOSS records (:func:`latscope.analysis.spans.lossy_spans`,
    the one definition), found batch by batch: ``feed(events)`` returns the spans of the
    batch's LOSS records, each from the previous event of its source, which may lie in an
    earlier batch. Keeps the last event of every source."""

    def __init__(self) -> None:
        self._last: dict[int, tuple[int, int, int]] = {}  # source -> (stream index, stamp, value)
        self._events = 0

    def feed(self, events: Events) -> tuple[Spans, Spans]:
        """The (merged) loss spans of the LOSS records in ``events`` (the next batch) and,
        among them, the spans of its holes (``hole_spans``)."""
        new: Spans = (_EMPTY, _EMPTY)
        holes: Spans = (_EMPTY, _EMPTY)
        if np.any(events.source == Source.LOSS):
            # The last event of every other source stands before the batch, so that each
            # LOSS record finds the previous event of its source as in the whole capture.
            before = sorted(
                (index, source, stamp, value)
                for source, (index, stamp, value) in self._last.items()
                if source != Source.LOSS
            )
            prefix = Events([b[2] for b in before], [b[1] for b in before], [b[3] for b in before])
            joined = Events.concatenate([prefix, events])
            stamp = joined.stamp.astype(np.int64)
            new = lossy_spans(stamp, joined.source, joined.value, None)
            holes = merged(*hole_spans(stamp, joined.source, joined.value))
        for source, at in _last_of_each(events.source).items():
            self._last[source] = (self._events + at, int(events.stamp[at]), int(events.value[at]))
        self._events += len(events)
        return new, holes

    def safe_end(self, horizon: int, lag: int) -> int:
        """A stamp below which no span of a later LOSS record begins, unless its source has
        had no event since ``horizon - lag`` (or none at all): the earliest latest event of
        the sources that had one since, and one stamp below the ``horizon`` (a hole begins
        at the previous event of any source)."""
        recent = [
            stamp
            for source, (_, stamp, _) in self._last.items()
            if source != Source.LOSS and stamp >= horizon - lag
        ]
        return min(recent + [horizon - 1])
