"""The pairing rules (docs/tests.md) applied to a capture's events batch by batch, in bounded
memory: the one implementation of the rules in the host (:class:`BatchAnalysis`, and
:func:`analyze_batches` with its second pass when a loss reaches back). The whole-capture
analysis (:func:`latscope.analysis.pairing.analyze`) is this over one batch, and the live
statistics of a capture (:mod:`latscope.analysis.live`) are this fed as events arrive.
"""

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Generic, Protocol, TypedDict, TypeVar, Unpack, overload

import numpy as np
import numpy.typing as npt

from latscope_defs.markers import (
    ARG_BITS,
    MARKER_BITS,
    POINT_BITS,
    POINT_SHIFT,
    SUITE_IRQ_LINE,
    SUITE_PARAMETERS,
    TEST_BITS,
    TEST_SHIFT,
    Point,
    Test,
)
from latscope_defs.protocol import Source, irq_level

from ..events import Events
from . import window_loop
from .accounting import Lost, SuitePlan, lost_of
from .delays import TriggerDelays
from .rules import RULES, Rule, TableParameters, is_marker, is_tick, tick_overlaps
from .spans import LossSpans, Mask, Sources, Spans, Stamps, is_hole, merge_spans, overlaps
from .statistics import Stats, TableAccumulator

if TYPE_CHECKING:
    from ..link.identity import Identity

__all__ = [
    "BatchAnalysis",
    "BatchOptions",
    "TableCollector",
    "TableFactory",
    "analyze_batches",
    "latency_skew",
    "pair",
]

_NEVER = np.iinfo(np.int64).max
_LOWEST = np.iinfo(np.int64).min
_EMPTY: Stamps = np.zeros(0, np.int64)
#: The bits of an event's value that hold a marker (its test, point and argument).
_MARKER_VALUE = (1 << MARKER_BITS) - 1


class TableCollector(Protocol):
    """What :class:`BatchAnalysis` feeds a table's samples to (its ``table``, described
    there)."""

    parameters: TableParameters
    lost: Lost  # set when the analysis ends (:mod:`latscope.analysis.accounting`)

    def add(
        self, samples: Stamps, starts: Stamps, ticked: Mask, delays: Stamps | None = None
    ) -> None: ...

    def discard(self, starts: Stamps, by_hole: Mask) -> None: ...


#: The collector type of a :class:`BatchAnalysis`.
C = TypeVar("C", bound=TableCollector)
#: Makes a table's collector: ``table(name, stamp_hz, parameters)``.
TableFactory = Callable[[str, float, TableParameters], C]


class BatchOptions(TypedDict, total=False):
    """The options of :class:`BatchAnalysis` (described there) that
    :func:`analyze_batches` passes on."""

    losses: Sequence[int] | Stamps | None
    skew: int
    loss_lag_s: float
    live: bool
    plan: SuitePlan | None


class _SpanOptions(BatchOptions, total=False):
    """And the spans of a second pass."""

    spans: Spans | None
    hole_spans: Spans | None


def latency_skew(identity: "Identity", irq_shift: int = 0) -> int:
    """The most an event's (pin-latency corrected) stamp can fall below an earlier event's:
    the spread of the stamp corrections (pin latencies, ``irq_shift``: a loop calibration's,
    ``Identity.stamp_latency``; and the IRQ output's pad delay, added, not subtracted, as its
    negative), LOSS records (not corrected) counting as 0 (the ``skew`` of
    :class:`BatchAnalysis` for a capture from the appliance ``identity``)."""
    shifts = {source: int(c) for source, c in identity.stamp_latency(irq_shift).items()}
    shifts[Source.IRQ] = shifts.get(Source.IRQ, 0) - identity.irq_pad_delay
    cycles = [*shifts.values(), 0]
    return max(cycles) - min(cycles)


def _in_time_order(
    stamp: Stamps, source: Sources, value: Stamps, epoch: Stamps
) -> tuple[Stamps, Sources, Stamps, Stamps]:
    """Markers (trace port and bus window: their ``stamp``, ``source``, ``value`` and
    ``epoch``) in stamp order; two in one cycle in the order trace port, bus window. (The
    stream is in stamp order within a source; after the pin-delay correction a trace-port
    marker can follow a later bus marker there.)"""
    if not (np.any(source == Source.BUS) and np.any(source == Source.MARKER)):
        return stamp, source, value, epoch
    order = np.lexsort((source, stamp))
    return stamp[order], source[order], value[order], epoch[order]


def pair(
    a: Stamps, a_window: Stamps, b: Stamps, b_window: Stamps, loss_spans: Spans, hole_only: Spans
) -> tuple[Mask, Mask, Mask, Stamps]:
    """Samples from each stamp in ``a`` to the first stamp in ``b`` after it in the same
    window, when no other ``a`` comes in between and the pair overlaps no span of
    ``loss_spans`` (:func:`~latscope.analysis.spans.lossy_spans`). Stamps are sorted and so
    are their window numbers. Returns, over ``a``: the mask of kept samples, the mask of
    pairs discarded for a loss between them, the mask of those discarded for a hole
    (``hole_only``: the merged hole spans, a subset of ``loss_spans``), and every A's length
    to its B (meaningful where one of the masks is set). One compiled pass
    (``window_loop.pair``): an A in the very cycle of B does not steal B (ties are
    impossible within one source)."""
    keep, lossy, by_hole = (np.empty(len(a), bool) for _ in range(3))
    lengths = np.empty(len(a), np.int64)
    (a, a_window, b, b_window, loss_low, loss_high, hole_low, hole_high) = (
        np.ascontiguousarray(x, np.int64)
        for x in (a, a_window, b, b_window, *loss_spans, *hole_only)
    )
    window_loop.pair(
        a,
        a_window,
        b,
        b_window,
        loss_low,
        loss_high,
        hole_low,
        hole_high,
        keep,
        lossy,
        by_hole,
        lengths,
    )
    return keep, lossy, by_hole, lengths


class _Pending:
    """Start and end events of one rule not decided yet: stamps and window numbers."""

    def __init__(self) -> None:
        self.a, self.a_window = _EMPTY, _EMPTY
        self.b, self.b_window = _EMPTY, _EMPTY

    def add(self, a: Stamps, a_window: Stamps, b: Stamps, b_window: Stamps) -> None:
        if len(a):
            self.a, self.a_window = _joined(self.a, a), _joined(self.a_window, a_window)
        if len(b):
            self.b, self.b_window = _joined(self.b, b), _joined(self.b_window, b_window)


_Scalar = TypeVar("_Scalar", bound=np.generic)


#: Where a batch's markers of one test are (``BatchAnalysis._test_markers``): their global
#: marker indices and their windows' segments: from the test's marker ``seg_at[k]`` (its
#: position among them) on, window ``seg_window[k + 1]`` of epoch ``seg_epoch[k + 1]``
#: (``[0]``: the window, and epoch, open before the batch; window -1: none).
_Placed = tuple[npt.NDArray[np.intp], Stamps, Stamps, Stamps]


def _plan_key(test: int, parameter: int | None) -> tuple[Test, int | None]:
    """A window's key in :attr:`SuitePlan.windows`: its test, and its parameter if the
    suite runs the test once per parameter (``SUITE_PARAMETERS``; None: not known)."""
    return Test(test), parameter if test in SUITE_PARAMETERS else None


def _event_columns(
    first: npt.ArrayLike, dtype: type[np.integer], stamp: Stamps, epoch: Stamps, holes: bool
) -> tuple[npt.NDArray[np.integer], Stamps, Stamps]:
    """The event columns a compiled pass (window_loop) takes: ``first`` (values or points) as
    ``dtype``, the stamps, and the epochs only where the stream has holes (else empty: the
    pass then reads every event as of one epoch), each contiguous."""
    return (
        np.ascontiguousarray(first, dtype),
        np.ascontiguousarray(stamp, np.int64),
        np.ascontiguousarray(epoch, np.int64) if holes else _EMPTY,
    )


def _joined(held: npt.NDArray[_Scalar], new: npt.NDArray[_Scalar]) -> npt.NDArray[_Scalar]:
    """``held`` followed by ``new`` (``new`` itself when nothing is held: no copy)."""
    return np.concatenate([held, new]) if len(held) else new


class _TestState:
    """One test's windows and the pending events of its rules.

    A window runs from a START marker to the test's next END, or to its next START when the
    END was lost. Its parameter is the START marker's argument; a parameter of 128 or more
    (IDL-b-128, SEO-f-255) continues in a PARAM marker that is the test's very next marker,
    whose argument holds bits 7 and up. The parameter is not certain when a hole comes right
    after the START (before the test's next marker, or at any time if none follows): a PARAM
    may be lost there. After a hole, the test's markers up to its next START or END lie in
    one true window whose START may be lost in the hole: they form a window of unknown
    parameter, from the test's first marker after the hole (where in the hole the true
    window went on or began is not known: the IRQ edges and handler markers before that
    marker are in no window, so the IL and ILH samples of one interrupt are kept or lost
    together, in whichever order its events come). Windows that end
    at the same bound form a group, named by its first window (``outer``): a start event
    pairs with an end event of its group, so that a pair across a hole is seen (and
    discarded)."""

    def __init__(self, test: int) -> None:
        self.test = test
        self.rules = [(index, rule) for index, rule in enumerate(RULES) if rule.test == test]
        self.pending = [_Pending() for _ in self.rules]
        self.uses_irq = any(rule.start == "irq" for _, rule in self.rules)
        self.uses_handler = any("handler" in (rule.start, rule.end) for _, rule in self.rules)
        self.windows = 0  # windows so far; the latest is windows - 1
        self.open = False  # a group is open (no bound since it began)
        self.group = -1  # the open group's first window
        self.outer: list[int] = []  # window -> first window of its group
        self.epoch = -1  # holes before the latest window began
        self.last_epoch = 0  # holes before the test's latest marker
        # (window, START argument, epoch): its next marker decides
        self.param_wait: tuple[int, int, int] | None = None
        # (window, rule) -> table name (None: no table)
        self.names: dict[tuple[int, int], str | None] = {}
        self.first: list[list[int]] = []  # [window, first stamp, end stamp or _NEVER, epoch]
        self.group_rows = 0  # rows of ``first`` from the open group's first on
        self.last_first = -_NEVER  # first stamps of IRQ windows only grow
        self.start_marker: dict[int, int] = {}  # window -> global index of the marker it began at
        # window -> [first stamp, end stamp or _NEVER] (which losses touched it: accounting)
        self.ranges: dict[int, list[int]] = {}
        self.hole_opened: set[int] = set()  # windows a hole opened (no START)
        self.window_epoch: dict[int, int] = {}  # window -> holes before it began
        # window -> its parameter where certain (None: not known), once named
        self.parameter: dict[int, int | None] = {}
        # IRQs (stamps, epochs) not given a window yet
        self.irq_wait: tuple[Stamps, Stamps] = (_EMPTY, _EMPTY)
        self.irq_floor = -_NEVER  # no IRQ still to be given a window is stamped below

    def closed(self, windows: Stamps) -> Mask:
        """Which ``windows`` have all their markers seen (their group has ended)."""
        return ~(self.open & (self.outer_of(windows) == self.group))

    def outer_of(self, windows: Stamps) -> Stamps:
        return np.asarray(self.outer, np.int64)[windows] if len(windows) else windows


class BatchAnalysis(Generic[C]):
    """The rules applied batch by batch (below). ``stamp_hz``: stamp units per second;
    ``table``: makes a table's collector, ``table(name, stamp_hz, parameters)`` (default
    :class:`~latscope.analysis.statistics.TableAccumulator`: exact statistics in bounded
    memory; the whole-capture analysis keeps every sample instead); ``losses``: extra stamps
    where data is missing (as ``analyze``'s); ``spans``, ``hole_spans``: every loss span and
    hole span of the capture, when known (a second pass); ``skew``: the largest amount by which
    an event's stamp can fall below the largest stamp before it (the spread of the pin
    latencies: :func:`latency_skew`); ``loss_lag_s``: a sample is counted once every source
    with an event in the last ``loss_lag_s`` seconds has had one after it (so that a LOSS record
    of such a source finds it uncounted); ``live``: what a loss span that reaches back over
    counted samples does (below).

    A table's collector has ``parameters`` (a dict; the analysis sets its ``n``) and takes, in
    capture order, ``add(samples, starts, ticked)`` (stamp units; start stamps; whether the
    kernel's tick overlaps each: :func:`~latscope.analysis.rules.tick_overlaps`) and
    ``discard(starts, by_hole)`` (start stamps of pairs discarded for a loss between them;
    whether a hole lay between them).

    :class:`BatchAnalysis` takes the events of a capture in batches of any size, in stream order
    (``feed``; ``finish`` at the end), and feeds a collector per table. Every event is looked at
    once. What is held between batches is only what a later event can still change:

    * per test, its open window (START stamp and parameter; a parameter waits for the test's next
      marker, which may be a PARAM), and for tests with an IRQ rule the windows an IRQ may still
      fall into (IRQs are assigned to windows by stamp);
    * per rule, the start events whose sample is not decided yet (their end or the next start may
      still come) and the end events that can still end one: a handful;
    * IRQ edges whose window may still change (a START marker stamped before them may come later
      in the stream: within the pin-latency spread, ``skew``);
    * the spans where lost events may lie (:func:`latscope.analysis.spans.lossy_spans`, one
      definition), merged; and the last event of every source (where a later LOSS record's
      span begins).

    A sample is decided when no later event can change it. Events of one source come in stamp
    order (the parser's guarantee), and an event's stamp is at least the largest stamp seen so
    far less ``skew`` (the pin-latency spread: the appliance sends its events in the order it
    stamps them and subtracts at most that much). The loss spans are the exception: a LOSS
    record reaches back to the previous event of its source, which may precede samples already
    counted. When a new span reaches back before the end of a counted sample, the analysis
    cannot take that sample back (``needs_second_pass``). It then only collects the spans to
    the end, and a second pass with every span known from the start (``spans=``) gives the
    exact tables: :func:`analyze_batches` does both. Live (``live=True``: the events are not
    kept for a second pass) it goes on counting with the spans it knows: the samples counted
    before may then include pairs that the new span discards (the exact tables come from the
    capture file). To make that rare, a decided sample is counted only once every source that
    had an event lately (``loss_lag_s``) has had one after the sample's end: a later LOSS record
    of such a source cannot reach back over it. Only a LOSS record of a source silent for longer
    (or never seen) reaches back. Fed all events in one batch, the analysis knows every span
    before it counts: it is exact in one pass.
    """

    #: File reads of the events :func:`analyze_batches` made (1, or 2 for a second pass).
    passes: int

    @overload
    def __init__(
        self: "BatchAnalysis[TableAccumulator]", stamp_hz: float, **options: Unpack[_SpanOptions]
    ) -> None: ...

    @overload
    def __init__(
        self, stamp_hz: float, *, table: TableFactory[C], **options: Unpack[_SpanOptions]
    ) -> None: ...

    def __init__(
        self,
        stamp_hz: float,
        *,
        # Without ``table``, a BatchAnalysis[TableAccumulator] (the first overload); mypy
        # cannot check a default against a type variable.
        table: TableFactory[C] = TableAccumulator,  # type: ignore[assignment]
        losses: Sequence[int] | Stamps | None = None,
        spans: Spans | None = None,
        hole_spans: Spans | None = None,
        skew: int = 0,
        loss_lag_s: float = 0.1,
        live: bool = False,
        plan: SuitePlan | None = None,
    ) -> None:
        self.stamp_hz = stamp_hz
        self.loss_lag = int(loss_lag_s * stamp_hz)
        self.skew = int(skew)
        self.live = live
        self.plan = plan
        self._new_table = table
        extra = np.asarray(losses if losses is not None else [], np.int64)
        self.spans_known = spans is not None
        self.spans = merge_spans(spans if spans is not None else (_EMPTY, _EMPTY), (extra, extra))
        self.hole_spans = hole_spans if hole_spans is not None else (_EMPTY, _EMPTY)
        self.holes = 0  # holes so far (the epoch of what comes next)
        self.needs_second_pass = False
        self.tables: dict[str, C] = {}
        self._kept: dict[str, int] = {}  # table -> samples counted
        self._discarded: dict[str, int] = {}  # table -> pairs discarded
        # table -> (START marker index, 0, rule index); of a window of the plan that a hole
        # swallowed: (the next window's START marker index, its rank before it, rule index)
        self._order: dict[str, tuple[int, int, int]] = {}
        self._n_from: dict[str, int] = {}  # table -> window its parameter n comes from
        # Tests with an IRQ rule see every IRQ edge from the start (a window a hole opens
        # may take IRQs from before the test's first marker after it).
        self._tests: dict[int, _TestState] = {
            test: _TestState(test)
            for test in dict.fromkeys(rule.test for rule in RULES if rule.start == "irq")
        }
        self._losses = LossSpans()
        self.trigger_delays = TriggerDelays()  # each IRQ sample's delay, from its record
        self._counted_end = _LOWEST  # largest end of a counted sample (none: below any span)
        self.events = 0
        self.markers = 0
        self.stamp_min: int | None = None
        self.stamp_max: int | None = None
        self.out_of_order = 0  # events stamped below the horizon promised
        self._horizon = -_NEVER
        # Markers are taken in stamp order (trace port before bus window in one cycle, as
        # analyze takes them): those not below the horizon wait, a later one may precede.
        # (stamp, source, value, epoch)
        self._held: tuple[Stamps, Sources, Stamps, Stamps] = (
            _EMPTY,
            np.zeros(0, np.uint8),
            _EMPTY,
            _EMPTY,
        )
        self.handlers = 0  # the kernel's handler-entry markers so far
        self._ticks = _EMPTY  # stamps of the tick markers a sample may still hold
        # tables of "handler" rules (none without such markers)
        self._handler_names: set[str] = set()

    # --- input ---------------------------------------------------------------------------

    def feed(self, events: Events) -> None:
        """Adds the next events (a parser ``Events``, in stream order)."""
        if not len(events):
            return
        stamp = events.stamp.view(np.int64)  # stamps are far below 2**63
        source, value = events.source, events.value
        low, high = int(stamp.min()), int(stamp.max())
        if low < self._horizon:
            self.out_of_order += int(np.count_nonzero(stamp < self._horizon))
        self.stamp_min = low if self.stamp_min is None else min(self.stamp_min, low)
        self.stamp_max = high if self.stamp_max is None else max(self.stamp_max, high)
        self._collect_spans(events)
        self.events += len(events)
        if self.needs_second_pass and not self.live:
            return  # only the spans matter now
        self._horizon = max(self._horizon, self.stamp_max - self.skew)
        hole_at = np.flatnonzero(is_hole(source, value))

        def epoch(at: npt.NDArray[np.intp]) -> Stamps:
            """Holes in the stream up to the events ``at`` (indices into the batch; without
            holes one number, repeated without memory)."""
            before = self.holes
            return (
                before + np.searchsorted(hole_at, at, side="right")
                if len(hole_at)
                else np.broadcast_to(np.int64(before), len(at))
            )

        at = np.flatnonzero(is_marker(source))
        markers = (stamp[at], source[at], value[at].astype(np.int64), epoch(at))
        # Asserting edges: a version 3 IRQ value holds the level and a trigger's delay.
        at = np.flatnonzero((source == Source.IRQ) & (irq_level(value) == 1))
        self.trigger_delays.feed(stamp, source, value)
        irq, irq_epoch = stamp[at], epoch(at)
        del at  # (one batch may be a whole capture: free it early)
        self.holes += len(hole_at)
        self._take_markers(*markers, final=False)
        del markers
        if len(irq):
            for state in self._tests.values():
                if state.uses_irq:
                    state.irq_wait = (
                        _joined(state.irq_wait[0], irq),
                        _joined(state.irq_wait[1], irq_epoch),
                    )
        self._decide(final=False)

    def finish(self, *, end_missing: bool = False) -> "BatchAnalysis[C]":
        """Ends the capture: decides every pending sample. ``end_missing``: the capture may
        have lost its end (a capture file not closed): for the accounting, as if a hole
        followed its last event."""
        if self.needs_second_pass and not self.live:
            return self
        self._horizon = _NEVER
        self._take_markers(_EMPTY, np.zeros(0, np.uint8), _EMPTY, _EMPTY, final=True)
        for state in self._tests.values():
            if state.param_wait is not None:  # the START was the test's last marker
                window, argument, epoch = state.param_wait
                state.param_wait = None
                self._name_window(state, window, argument, certain=self.holes == epoch)
        self._decide(final=True)
        self._account(end_missing)
        return self

    def _account(self, end_missing: bool) -> None:
        """Sets every table's ``lost`` (:mod:`latscope.analysis.accounting`): a table is
        damaged when a loss span overlaps one of its windows (or the window is still open
        at an ``end_missing``), when a window of its test whose parameter is unknown may be
        one of its (a table named by the parameter), or when a hole swallowed a window of
        the plan that makes it (:meth:`_swallowed`; its table is made, empty, if no other
        window named it)."""
        windows: dict[str, int] = {}
        damaged: set[str] = set()
        for state in self._tests.values():
            unknown = False  # a window of the test whose parameter is unknown
            for (window, _), name in state.names.items():
                first, end = state.ranges[window]
                hit = (
                    window in state.hole_opened
                    or (end_missing and end == _NEVER)
                    or bool(overlaps(self.spans, np.array([first]), np.array([end]))[0])
                )
                if name is None:
                    unknown = True
                    continue
                if window not in state.hole_opened:
                    windows[name] = windows.get(name, 0) + 1
                if hit:
                    damaged.add(name)
            if unknown:
                damaged.update(
                    name
                    for (_, index), name in state.names.items()
                    if name is not None and "{n}" in RULES[index].name
                )
        for (test, n), place in self._swallowed(end_missing):
            for index, rule in enumerate(RULES):
                if rule.test != test or (
                    "handler" in (rule.start, rule.end) and not self._handler_tables
                ):
                    continue
                name = rule.name.format(n=n)
                if name not in self.tables:
                    self.tables[name] = self._new_table(
                        name, self.stamp_hz, {"test": test.name, "n": n}
                    )
                    self._order[name] = (*place, index)
                windows[name] = windows.get(name, 0) + 1
                damaged.add(name)
        for name, table in self.tables.items():
            test = Test[str(table.parameters["test"])]
            table.lost = lost_of(
                test,
                self._kept.get(name, 0),
                self._discarded.get(name, 0),
                windows.get(name, 0),
                name in damaged,
                self.plan,
            )

    def _swallowed(
        self, end_missing: bool
    ) -> list[tuple[tuple[Test, int | None], tuple[int, int]]]:
        """The plan's windows that left no named START where a hole lies: ``((test,
        parameter), place)``, ``place`` the (START marker index, rank) that orders their
        tables just before the next window seen. Walks the windows seen (a START with a
        certain parameter) in stream order, with their places in the plan: those the plan
        has between two of them (from the start: before the first; to the end: after the
        last; the plan begins anew where a window comes again) ran in a hole when one lies
        between the two, else (no hole: the capture began late or ended early) not while
        the capture ran."""
        if self.plan is None:
            return []
        plan = self.plan.windows
        position = {window: at for at, window in enumerate(plan)}
        seen = sorted(
            (state.start_marker[window], position[key], state.window_epoch[window])
            for state in self._tests.values()
            for window in range(state.windows)
            if window not in state.hole_opened
            for key in [_plan_key(state.test, state.parameter.get(window))]
            if key in position
        )
        swallowed: list[tuple[tuple[Test, int | None], tuple[int, int]]] = []

        def between(after: int, before: int, place: int, hole: bool) -> None:
            """The plan's windows after position ``after``, before ``before`` (wrapping
            round when ``before`` is not after it), if a ``hole`` lies between."""
            if not hole:
                return
            skipped = list(range(after + 1, before if before > after else len(plan)))
            if before <= after:
                skipped += range(before)
            swallowed.extend(
                (plan[at], (place, rank - len(skipped))) for rank, at in enumerate(skipped)
            )

        if not seen:
            between(-1, len(plan), self.markers, self.holes > 0 or end_missing)
            return swallowed
        between(-1, seen[0][1], seen[0][0], seen[0][2] > 0)
        for (_, at, epoch), (marker, next_at, next_epoch) in zip(seen, seen[1:]):
            between(at, next_at, marker, next_epoch > epoch)
        between(seen[-1][1], len(plan), self.markers, self.holes > seen[-1][2] or end_missing)
        return swallowed

    def _collect_spans(self, events: Events) -> None:
        """Adds the loss spans of the batch's LOSS records; notes when one reaches back
        before the end of a counted sample."""
        if self.spans_known:
            return
        new, holes = self._losses.feed(events)
        if len(new[0]) and int(new[0].min()) < self._counted_end:
            self.needs_second_pass = True
        if len(new[0]):
            self.spans = merge_spans(self.spans, new)
        if len(holes[0]):
            self.hole_spans = merge_spans(self.hole_spans, holes)

    # --- windows -------------------------------------------------------------------------

    def _take_markers(
        self, stamp: Stamps, source: Sources, value: Stamps, epoch: Stamps, final: bool
    ) -> None:
        """Adds the batch's markers (stamps, sources, values, epochs) to those held and takes,
        in stamp order, the ones below the horizon (all when ``final``)."""
        held_stamp, held_source, held_value, held_epoch = self._held
        h_stamp, h_source, h_value, h_epoch = _in_time_order(
            _joined(held_stamp, stamp),
            _joined(held_source, source),
            _joined(held_value, value),
            _joined(held_epoch, epoch),
        )
        ready = len(h_stamp) if final else int(np.searchsorted(h_stamp, self._horizon))
        self._held = (h_stamp[ready:], h_source[ready:], h_value[ready:], h_epoch[ready:])
        self._markers(h_stamp[:ready], h_value[:ready], h_epoch[:ready])

    def _markers(self, m_stamp: Stamps, m_value: Stamps, m_epoch: Stamps) -> None:
        """The next markers in stamp order (``m_epoch``: holes in the stream before each)."""
        first_index = self.markers
        self.markers += len(m_stamp)
        if not len(m_stamp):
            return
        # Grouped by test (each test's markers in their order), decoded: one compiled pass.
        n = len(m_stamp)
        uniform = n > 1 and m_epoch.strides[0] == 0  # one epoch (no hole): not gathered
        counts, order = np.zeros(1 << TEST_BITS, np.int64), np.empty(n, np.int64)
        stamps, epochs = np.empty(n, np.int64), np.empty(0 if uniform else n, np.int64)
        points, args = np.empty(n, np.int32), np.empty(n, np.int32)
        window_loop.group(
            *_event_columns(m_value, np.int64, m_stamp, m_epoch, holes=not uniform),
            _MARKER_VALUE,
            TEST_SHIFT,
            TEST_BITS,
            POINT_SHIFT,
            POINT_BITS,
            ARG_BITS,
            counts,
            order,
            stamps,
            points,
            args,
            epochs,
        )
        if uniform:
            epochs = np.broadcast_to(m_epoch[:1], n)
        bounds = np.cumsum([0, *counts.tolist()]).tolist()
        # The kernel's markers (in their order): handler entries and ticks.
        kernel = slice(bounds[Test.KERNEL], bounds[Test.KERNEL + 1])
        k_points, k_args = points[kernel], args[kernel]
        handler_at = order[kernel][(k_points == Point.ISR_ENTRY) & (k_args == SUITE_IRQ_LINE)]
        self.handlers += len(handler_at)
        ticks = is_tick(np.full(len(k_points), int(Test.KERNEL)), k_points)
        self._ticks = np.concatenate([self._ticks, stamps[kernel][ticks]])
        placed: dict[int, _Placed] = {}  # test -> where its windows are
        for test in np.flatnonzero(counts).tolist():
            state = self._tests.get(test)
            if state is None:
                state = self._tests[test] = _TestState(test)
            if not state.rules:
                continue
            mine = slice(bounds[test], bounds[test + 1])
            placed[test] = self._test_markers(
                state,
                stamps[mine],
                points[mine],
                args[mine],
                epochs[mine],
                first_index + order[mine],
            )
        for test, state in self._tests.items():
            if state.uses_handler and len(handler_at):
                self._handler_markers(
                    state,
                    placed.get(test),
                    m_stamp[handler_at],
                    m_epoch[handler_at],
                    first_index + handler_at,
                )

    @staticmethod
    def _handler_markers(
        state: _TestState,
        placed: "_Placed | None",
        h_stamp: Stamps,
        h_epoch: Stamps,
        h_at: npt.NDArray[np.intp],
    ) -> None:
        """Adds the kernel's handler-entry markers (global marker indices ``h_at``) to the
        test's "handler" rules: each is in the window of the test's marker before it in the
        marker order (as ``analyze`` places them by position), if any."""
        if placed is None:  # no marker of the test in the batch
            carried = (state.windows - 1, state.epoch) if state.open else (-1, -1)
            placed = (_EMPTY, _EMPTY, np.array(carried[:1]), np.array(carried[1:]))
        positions, seg_at, seg_window, seg_epoch = placed
        before = np.searchsorted(positions, h_at) - 1  # the test's marker before (-1: none)
        segment = np.searchsorted(seg_at, before, side="right")  # 0: the carried window
        window, epoch = seg_window[segment], seg_epoch[segment]
        inside = window >= 0
        for (_, rule), pending in zip(state.rules, state.pending):
            if rule.end == "handler":
                pending.add(_EMPTY, _EMPTY, h_stamp[inside], window[inside])
            if rule.start == "handler":
                start = inside & (h_epoch == epoch)
                pending.add(h_stamp[start], window[start], _EMPTY, _EMPTY)

    def _test_markers(
        self,
        state: _TestState,
        m_stamp: Stamps,
        m_points: npt.NDArray[np.int32],
        m_args: npt.NDArray[np.int32],
        m_epoch: Stamps,
        global_index: npt.NDArray[np.intp],
    ) -> "_Placed":
        """Windows of one test's markers in this batch; adds their start and end events to
        the pending events of the test's rules. A start event counts only in the epoch of
        its window (no hole since it began); a START's parameter is certain only if no hole
        comes before the test's next marker (a PARAM may have been lost in it)."""
        if state.param_wait is not None:  # this batch's first marker decides
            window, argument, epoch = state.param_wait
            state.param_wait = None
            certain = int(m_epoch[0]) == epoch
            if m_points[0] == Point.PARAM and certain:
                argument |= int(m_args[0]) << ARG_BITS
            self._name_window(state, window, argument, certain)
        is_start = m_points == Point.START
        is_bound = is_start | (m_points == Point.END)
        # A hole opens a window at the test's first marker after it (unless a START).
        no_holes = state.last_epoch == int(m_epoch[-1])  # none before these markers
        opening = (
            None
            if no_holes
            else (m_epoch != np.concatenate([[state.last_epoch], m_epoch[:-1]])) & ~is_start
        )
        state.last_epoch = int(m_epoch[-1])
        carried = (state.windows - 1, state.epoch) if state.open else (-1, -1)
        segments: list[tuple[int, int, int]] = []  # (position, window, epoch) from there on
        for at in np.flatnonzero(is_bound if opening is None else is_bound | opening).tolist():
            if opening is not None and opening[at]:
                epoch = int(m_epoch[at])
                # It begins at this marker: where in the hole the true window went on (or
                # began) is not known, so no IRQ edge before the marker is in it.
                window = self._new_window(
                    state, int(global_index[at]), int(m_stamp[at]), epoch, group=False
                )
                self._name_window(state, window, -1, certain=False)
                segments.append((at, window, epoch))
            if not is_bound[at]:
                continue
            if state.open:  # this bound ends the open group
                self._close(state, int(m_stamp[at]))
            if not is_start[at]:
                segments.append((at, -1, -1))
                continue
            epoch = int(m_epoch[at])
            window = self._new_window(
                state, int(global_index[at]), int(m_stamp[at]), epoch, group=True
            )
            segments.append((at, window, epoch))
            if at + 1 < len(m_points):
                argument = int(m_args[at])
                certain = int(m_epoch[at + 1]) == epoch
                if m_points[at + 1] == Point.PARAM and certain:
                    argument |= int(m_args[at + 1]) << ARG_BITS
                self._name_window(state, window, argument, certain)
            else:
                state.param_wait = (window, int(m_args[at]), epoch)
                self._name_window(state, window, None, certain=False)
        # Each marker is in the window of the last segment before it (or the carried one).
        seg_at = np.array([seg[0] for seg in segments], np.int64)
        seg_window = np.array([carried[0]] + [seg[1] for seg in segments], np.int64)
        seg_epoch = np.array([carried[1]] + [seg[2] for seg in segments], np.int64)
        # The rules' marker points, as start events (only in the epoch of their window) and
        # as end events, in one compiled pass.
        kinds = list(
            dict.fromkeys(
                (kind, as_start)
                for _, rule in state.rules
                for kind, as_start in ((rule.start, True), (rule.end, False))
                if kind not in ("irq", "handler")
            )
        )
        route = (
            *_event_columns(m_points, np.int32, m_stamp, m_epoch, holes=not no_holes),
            seg_at,
            seg_window,
            seg_epoch,
            np.array([int(kind) for kind, _ in kinds], np.int64),
            np.array([as_start for _, as_start in kinds], np.uint8),
        )
        stamps, windows = (np.empty((len(kinds), len(m_points)), np.int64) for _ in range(2))
        counts = window_loop.route(*route, stamps, windows)
        # (Copies: a view would keep every row's pages while one rule's events wait.)
        of_kind = {
            kind: (stamps[row, :count].copy(), windows[row, :count].copy())
            for row, (kind, count) in enumerate(zip(kinds, counts))
        }
        none = (_EMPTY, _EMPTY)
        for (_, rule), pending in zip(state.rules, state.pending):
            pending.add(
                *of_kind.get((rule.start, True), none), *of_kind.get((rule.end, False), none)
            )
        return global_index, seg_at, seg_window, seg_epoch

    def _new_window(
        self, state: _TestState, marker: int, first: int, epoch: int, group: bool
    ) -> int:
        """A new window beginning at global marker index ``marker``, stamp ``first``: a
        START's (``group``: it begins a group) or one a hole opened (it joins the open
        group, if any)."""
        window = state.windows
        state.windows += 1
        if group or not state.open:
            state.open, state.group, state.group_rows = True, window, len(state.first)
        state.outer.append(state.group)
        state.epoch = epoch
        state.start_marker[window] = marker
        state.ranges[window] = [first, _NEVER]
        state.window_epoch[window] = epoch
        if not group:
            state.hole_opened.add(window)
        if state.uses_irq:
            state.last_first = max(state.last_first, first)
            state.first.append([window, state.last_first, _NEVER, epoch])
        return window

    def _close(self, state: _TestState, stamp: int) -> None:
        """The open group ends at a bound stamped ``stamp``."""
        state.open = False
        for row in state.first[state.group_rows :]:
            row[2] = stamp
        for window in range(state.group, state.windows):
            state.ranges[window][1] = stamp

    def _name_window(
        self, state: _TestState, window: int, parameter: int | None, certain: bool
    ) -> None:
        """Names the tables of ``window`` once its parameter is known. A name with the
        parameter in it is known only where the parameter is certain; a window without one
        gives that rule no table (its samples count nowhere). A table's ``n`` is the
        parameter of its first certain window, its place that of its first window.
        ``parameter`` None: not known yet (a PARAM marker may still follow the START): only
        the names without it are given, and the window is named again once it is known."""
        state.parameter[window] = parameter if certain else None
        for index, rule in state.rules:
            known = certain or "{n}" not in rule.name
            name = rule.name.format(n=parameter) if known else None
            state.names[(window, index)] = name
            if name is None:
                continue
            place = (state.start_marker[window], 0, index)
            if "handler" in (rule.start, rule.end):
                self._handler_names.add(name)
            if name not in self.tables:
                self.tables[name] = self._new_table(
                    name, self.stamp_hz, {"test": Test(state.test).name, "n": None}
                )
                self._order[name] = place
            self._order[name] = min(self._order[name], place)
            if certain and self._n_from.get(name, _NEVER) > window:
                self.tables[name].parameters["n"] = parameter
                self._n_from[name] = window

    def _assign_irqs(self, final: bool) -> None:
        """Gives IRQ edges their windows, in every test with an IRQ rule, once no window
        can still begin at or before them: every window begins at a marker (a START, or the
        test's first marker after a hole), and markers still to come are stamped above the
        horizon."""
        for state in self._tests.values():
            if not state.uses_irq:
                continue
            stamps, epochs = state.irq_wait
            below = _NEVER if final else self._horizon
            ready = int(np.argmax(stamps >= below)) if np.any(stamps >= below) else len(stamps)
            self._irqs_into_windows(state, stamps[:ready], epochs[:ready])
            stamps, epochs = stamps[ready:], epochs[ready:]
            # After a hole with no marker of the test since, an IRQ followed by another
            # below the horizon can end no sample (no end event can come between them any
            # more; a handler marker can, if the test's window is open: it is in that one);
            # one of an epoch the test has had no marker in, and never will (none held
            # either), none.
            after_hole = epochs > state.last_epoch
            settled = int(np.min(self._held[3], initial=self.holes))
            no_end = (
                (stamps < self._horizon)
                & (np.append(epochs[1:] == epochs[:-1], False))
                & np.append(stamps[1:] < self._horizon, False)
            )
            if state.uses_handler and state.open:
                no_end[:] = False
            dead = after_hole & ((epochs < settled) | no_end)
            state.irq_wait = (stamps[~dead], epochs[~dead])
            state.irq_floor = min(
                self._horizon, int(state.irq_wait[0][0]) if len(state.irq_wait[0]) else _NEVER
            )
            self._prune_windows(state)

    @staticmethod
    def _irqs_into_windows(state: _TestState, irq: Stamps, irq_epoch: Stamps) -> None:
        if not len(irq) or not state.first:
            return
        window, first, end, epoch = np.array(state.first, np.int64).reshape(-1, 4).T
        # Strictly after the window's first stamp (an IRQ in the cycle of a START is in none).
        slot = np.searchsorted(first, irq, side="left") - 1
        row = np.maximum(slot, 0)
        # Inside a window's stamps, and no hole since it began (a start event).
        inside = (slot >= 0) & (irq < end[row]) & (irq_epoch == epoch[row])
        row = row[inside]
        for (_, rule), pending in zip(state.rules, state.pending):
            if rule.start == "irq":
                pending.add(irq[inside], window[row], _EMPTY, _EMPTY)

    @staticmethod
    def _prune_windows(state: _TestState) -> None:
        """Forgets the IRQ windows that ended at or before every IRQ still to come."""
        keep = 0
        while keep < len(state.first) - 1 and state.first[keep][2] <= state.irq_floor:
            keep += 1
        del state.first[:keep]
        state.group_rows = max(0, state.group_rows - keep)

    # --- samples -------------------------------------------------------------------------

    def _decide(self, final: bool) -> None:
        self._safe = self._losses.safe_end(self._horizon, self.loss_lag)
        self._assign_irqs(final)
        floor = self._horizon  # no sample still to count begins below
        for state in self._tests.values():
            for (index, rule), pending in zip(state.rules, state.pending):
                if len(pending.a):
                    self._decide_rule(state, index, rule, pending, final)
                self._trim_ends(pending)
                if len(pending.a):
                    floor = min(floor, int(pending.a.min()))
            if len(state.irq_wait[0]):
                floor = min(floor, int(state.irq_wait[0].min()))
        self._ticks = self._ticks[np.searchsorted(self._ticks, floor) :]

    def _decide_rule(
        self, state: _TestState, index: int, rule: Rule, pending: _Pending, final: bool
    ) -> None:
        a, a_window, b = pending.a, pending.a_window, pending.b
        group = state.outer_of(a_window)  # a start pairs within its group
        keep, lossy, by_hole, lengths = pair(
            a, group, b, state.outer_of(pending.b_window), self.spans, self.hole_spans
        )
        if final:
            decided = np.ones(len(a), bool)
        else:
            closed = state.closed(a_window)
            no_more_a = closed
            if rule.start == "irq":  # IRQs may still fall into the window
                no_more_a = closed & (self._window_ends(state, a_window) <= state.irq_floor)
            same_next = np.append(group[1:] == group[:-1], False)
            has_next = np.arange(len(a)) < len(a) - 1
            next_a = np.where(same_next, np.append(a[1:], 0), _NEVER)
            # Its end is known when it has one in its group (a first end event beyond the
            # group means the group is closed).
            end_seen = lengths > 0
            # A sample or discarded pair needs its table's name; a start event that gives
            # neither (a window waiting for its PARAM must not hold them all) does not.
            named = (
                "{n}" not in rule.name
                or state.param_wait is None
                or (a_window != state.param_wait[0]) | ~(keep | lossy)
            )
            decided = (
                (has_next | no_more_a)
                & (end_seen | closed | (same_next & (next_a < self._horizon)))
                & named
            )
            # A sample waits until no LOSS record of a source seen lately can reach back
            # over it (its span starts at that source's latest event, or later).
            decided &= ~(keep & (a + lengths > self._safe))
            decided = np.logical_and.accumulate(decided)
        count = int(np.count_nonzero(decided))
        if not count:
            return
        self._count(
            state,
            index,
            a[:count],
            a_window[:count],
            keep[:count],
            lossy[:count],
            by_hole[:count],
            lengths[:count],
            from_irq=rule.start == "irq",
        )
        pending.a, pending.a_window = a[count:], a_window[count:]

    @staticmethod
    def _window_ends(state: _TestState, windows: Stamps) -> Stamps:
        """End stamps of ``windows`` (-_NEVER for windows no longer kept: ended before any
        IRQ still to come)."""
        if not state.first:
            return np.full(len(windows), -_NEVER, np.int64)
        table = np.array(state.first, np.int64).reshape(-1, 4)
        at = np.searchsorted(table[:, 0], windows)
        found = table[np.minimum(at, len(table) - 1), 0] == windows
        return np.where(found, table[np.minimum(at, len(table) - 1), 2], -_NEVER)

    def _count(
        self,
        state: _TestState,
        index: int,
        a: Stamps,
        a_window: Stamps,
        keep: Mask,
        lossy: Mask,
        by_hole: Mask,
        lengths: Stamps,
        *,
        from_irq: bool,
    ) -> None:
        """Adds decided samples to their tables (by window: the window's name; none for a
        window whose parameter is not certain); samples ``from_irq`` with their trigger
        delays (``TriggerDelays``)."""
        if keep.any():
            self._counted_end = max(self._counted_end, int((a + lengths)[keep].max()))
        # Windows come in order: one run of samples per window.
        runs = np.flatnonzero(np.append(True, a_window[1:] != a_window[:-1])).tolist()
        for begin, end in zip(runs, runs[1:] + [len(a)]):
            name = state.names[(int(a_window[begin]), index)]
            if name is None:
                continue
            table = self.tables[name]
            kept = keep[begin:end]
            self._kept[name] = self._kept.get(name, 0) + int(np.count_nonzero(kept))
            starts, samples = a[begin:end][kept], lengths[begin:end][kept]
            delays = self.trigger_delays.of(starts) if from_irq and self.trigger_delays else None
            table.add(samples, starts, tick_overlaps(starts, samples, self._ticks), delays)
            lost = lossy[begin:end]
            if lost.any():
                self._discarded[name] = self._discarded.get(name, 0) + int(np.count_nonzero(lost))
                table.discard(a[begin:end][lost], by_hole[begin:end][lost])

    def _trim_ends(self, pending: _Pending) -> None:
        """Drops end events that can end no sample any more: at or below every pending start
        and the horizon (later starts are stamped above it)."""
        floor = self._horizon
        if len(pending.a):
            floor = min(floor, int(pending.a.min()))
        drop = int(np.searchsorted(pending.b, floor, side="right"))
        if drop:
            pending.b, pending.b_window = pending.b[drop:], pending.b_window[drop:]

    # --- results -------------------------------------------------------------------------

    def ordered_tables(self) -> dict[str, C]:
        """``{name: table collector}`` in the order the tests' windows first appear (then
        the order of their rules); tables of "handler" rules only if the capture has
        handler-entry markers."""
        return {
            name: self.tables[name]
            for name in sorted(self.tables, key=lambda name: self._order[name])
            if self._handler_tables or name not in self._handler_names
        }

    @property
    def _handler_tables(self) -> bool:
        """Whether the tables of "handler" rules are made: the capture has handler-entry
        markers, or the plan says the DUT writes them (a hole may have taken them all)."""
        return self.handlers > 0 or bool(self.plan and self.plan.handlers)

    def summary(self: "BatchAnalysis[TableAccumulator]") -> dict[str, Stats]:
        """``{name: stats()}`` of the tables so far (collectors with ``stats()``)."""
        return {name: table.stats() for name, table in self.ordered_tables().items()}

    @property
    def running(self) -> set[str]:
        """Names of the tests whose window is open (among the markers taken so far)."""
        return {Test(test).name for test, state in self._tests.items() if state.open}

    @property
    def unfinished(self) -> list[str]:
        """The tests whose latest window is still open: after :meth:`finish`, those the
        capture ended inside (no END: the capture stopped first, or the DUT stopped inside
        the test, e.g. at its IRQ timeout). Each is named by the tables of that window, or
        by its test where it named none (a parameter not known)."""
        named = []
        for test, state in self._tests.items():
            if not state.open:
                continue
            window = state.windows - 1
            tables = sorted(
                {name for (w, _), name in state.names.items() if w == window and name is not None}
            )
            named.append(", ".join(tables) if tables else Test(test).name)
        return named

    @property
    def held(self) -> int:
        """Events held for what later events can still change: markers not yet taken,
        start and end events not yet decided, IRQ edges not yet given a window."""
        return len(self._held[0]) + sum(
            len(state.irq_wait[0]) + sum(len(p.a) + len(p.b) for p in state.pending)
            for state in self._tests.values()
        )


def analyze_batches(
    batches: Callable[[], Iterable[Events]],
    stamp_hz: float,
    *,
    table: TableFactory[TableAccumulator] = TableAccumulator,
    end_missing: Callable[[], bool] = lambda: False,
    **options: Unpack[BatchOptions],
) -> BatchAnalysis[TableAccumulator]:
    """The tables (``ordered_tables()``) of the events that
    ``batches()`` yields in batches (a callable: it is called again when a loss span reaches
    back before counted samples, for a second pass with every span known). ``options``: as
    :class:`BatchAnalysis`; ``end_missing()``, asked once the batches are read: as
    :meth:`BatchAnalysis.finish`'s. Returns the :class:`BatchAnalysis`."""
    analysis = BatchAnalysis(stamp_hz, table=table, **options)
    for events in batches():
        analysis.feed(events)
    analysis.passes = 1
    if analysis.needs_second_pass:
        second: BatchOptions = {**options, "losses": None}
        analysis = BatchAnalysis(
            stamp_hz, table=table, spans=analysis.spans, hole_spans=analysis.hole_spans, **second
        )
        for events in batches():
            analysis.feed(events)
        analysis.passes = 2
    return analysis.finish(end_missing=end_missing())
