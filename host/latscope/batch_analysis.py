"""The rules of :func:`latscope.analysis.analyze`, applied to a capture batch by batch in
bounded memory, with the very same results.

:class:`BatchAnalysis` takes the events of a capture in batches of any size, in stream order
(``feed``; ``finish`` at the end), and keeps a :class:`~latscope.accumulate.TableAccumulator`
per table. Every event is looked at once. What is held between batches is only what a later
event can still change:

* per test, its open window (START stamp and parameter; a parameter waits for the test's next
  marker, which may be a PARAM), and for tests with an IRQ rule the windows an IRQ may still
  fall into (IRQs are assigned to windows by stamp);
* per rule, the start events whose sample is not decided yet (their end or the next start may
  still come) and the end events that can still end one: a handful;
* IRQ edges whose window may still change (a START marker stamped before them may come later
  in the stream: within the pin-latency spread, ``skew``);
* the spans where lost events may lie (:func:`latscope.analysis._lossy_spans`, one definition),
  merged; and the last event of every source (where a later LOSS record's span begins).

A sample is decided when no later event can change it. Events of one source come in stamp
order (the parser's guarantee), and an event's stamp is at least the largest stamp seen so far
less ``skew`` (the pin-latency spread: the appliance sends its events in the order it stamps
them and subtracts at most that much). The loss spans are the exception: a LOSS record reaches
back to the previous event of its source, which may precede samples already counted. When a
new span reaches back before the end of a counted sample, the analysis cannot take that
sample back: it then only collects the spans to the end (``needs_second_pass``), and a second
pass with every span known from the start (``spans=``) gives the exact tables.
:func:`analyze_batches` does both. To make that rare, a decided sample is counted only once
every source that had an event lately (``loss_lag_s``) has had one after the sample's end:
a later LOSS record of such a source cannot reach back over it. Only a LOSS record of a
source silent for longer (or never seen) needs the second pass.
"""

import numpy as np

from .accumulate import TableAccumulator
from .analysis import MARKER_SOURCES, RULES, _lossy_spans, _pair
from .markers import ARG_BITS, Point, Test, decode
from .parser import Events
from .protocol import Source

__all__ = ["BatchAnalysis", "LossSpans", "analyze_batches", "merge_spans"]

_NEVER = np.iinfo(np.int64).max
_EMPTY = np.zeros(0, np.int64)


def merge_spans(*spans):
    """One sorted, disjoint set of (low, high) spans from several, merged as
    ``_lossy_spans`` merges (spans that overlap or touch become one)."""
    low = np.concatenate([s[0] for s in spans]).astype(np.int64)
    high = np.concatenate([s[1] for s in spans]).astype(np.int64)
    if not len(low):
        return low, high
    order = np.argsort(low, kind="stable")
    low, high = low[order], np.maximum.accumulate(high[order])
    starts = np.flatnonzero(np.append(True, low[1:] > high[:-1]))
    ends = np.append(starts[1:], len(low)) - 1
    return low[starts], high[ends]


class LossSpans:
    """The loss spans of a capture's LOSS records (:func:`latscope.analysis._lossy_spans`,
    the one definition), found batch by batch: ``feed(events)`` returns the spans of the
    batch's LOSS records, each from the previous event of its source, which may lie in an
    earlier batch. Keeps the last event of every source."""

    def __init__(self):
        self._last = {}                  # source -> (stream index, stamp, value)
        self._events = 0

    def feed(self, events):
        """The (merged) spans of the LOSS records in ``events`` (the next batch)."""
        new = (_EMPTY, _EMPTY)
        if np.any(events.source == Source.LOSS):
            # The last event of every other source stands before the batch, so that each
            # LOSS record finds the previous event of its source as in the whole capture.
            before = sorted((index, source, stamp, value) for source, (index, stamp, value)
                            in self._last.items() if source != Source.LOSS)
            prefix = Events([b[2] for b in before], [b[1] for b in before],
                            [b[3] for b in before])
            joined = Events.concatenate([prefix, events])
            new = _lossy_spans(joined.stamp.astype(np.int64), joined.source, joined.value,
                               None)
        for source in np.unique(events.source).tolist():
            at = len(events) - 1 - int(np.argmax(events.source[::-1] == source))
            self._last[source] = (self._events + at, int(events.stamp[at]),
                                  int(events.value[at]))
        self._events += len(events)
        return new

    def safe_end(self, horizon, lag):
        """A stamp below which no span of a later LOSS record begins, unless its source has
        had no event since ``horizon - lag`` (or none at all): the earliest latest event of
        the sources that had one since, and one stamp below the ``horizon`` (a hole begins
        at the previous event of any source)."""
        recent = [stamp for source, (_, stamp, _) in self._last.items()
                  if source != Source.LOSS and stamp >= horizon - lag]
        return min(recent + [horizon - 1])


class _Pending:
    """Start and end events of one rule not decided yet: stamps and window numbers."""

    def __init__(self):
        self.a, self.a_window = _EMPTY, _EMPTY
        self.b, self.b_window = _EMPTY, _EMPTY

    def add(self, a, a_window, b, b_window):
        if len(a):
            self.a = np.concatenate([self.a, a])
            self.a_window = np.concatenate([self.a_window, a_window])
        if len(b):
            self.b = np.concatenate([self.b, b])
            self.b_window = np.concatenate([self.b_window, b_window])


class _TestState:
    """One test's windows and the pending events of its rules."""

    def __init__(self, test):
        self.test = test
        self.rules = [(index, rule) for index, rule in enumerate(RULES) if rule.test == test]
        self.pending = [_Pending() for _ in self.rules]
        self.uses_irq = any(rule.start == "irq" for _, rule in self.rules)
        self.windows = 0                 # windows opened so far; the open one is windows - 1
        self.open = False
        self.param_wait = None           # (window, START argument): its next marker decides
        self.names = {}                  # window -> table name (when its parameter is known)
        self.first = []                  # (window, START stamp, end stamp or _NEVER) for IRQs
        self.start_marker = {}           # window -> global index of its START marker

    def closed(self, window):
        """Whether every marker of ``window`` has been seen (its END or next START has)."""
        return window < self.windows - 1 or not self.open


class BatchAnalysis:
    """See the module doc. ``stamp_hz``: stamp units per second; ``losses``: extra stamps
    where data is missing (as ``analyze``'s); ``spans``: every loss span of the capture, when
    known (a second pass); ``skew``: the largest amount by which an event's stamp can fall
    below the largest stamp before it (the spread of the pin latencies); ``interval_stamps``:
    width of the tables' max-per-interval slots (None: none); ``loss_lag_s``: a sample is
    counted once every source with an event in the last ``loss_lag_s`` seconds has had one
    after it (so that a LOSS record of such a source finds it uncounted)."""

    def __init__(self, stamp_hz, *, losses=None, spans=None, skew=0, interval_stamps=None,
                 loss_lag_s=0.1):
        self.stamp_hz = stamp_hz
        self.loss_lag = int(loss_lag_s * stamp_hz)
        self.skew = int(skew)
        self.interval_stamps = interval_stamps
        extra = np.asarray(losses if losses is not None else [], np.int64)
        self.spans_known = spans is not None
        self.spans = merge_spans(spans if spans is not None else (_EMPTY, _EMPTY),
                                 (extra, extra))
        self.needs_second_pass = False
        self.tables = {}
        self._order = {}                 # table -> (START marker index, rule index)
        self._tests = {}
        self._losses = LossSpans()
        self._irq_held = _EMPTY
        self._last_irq = None
        self._counted_end = -_NEVER      # largest end of a counted sample
        self.events = 0
        self.markers = 0
        self.stamp_min = self.stamp_max = None
        self.out_of_order = 0            # events stamped below the horizon promised
        self._horizon = -_NEVER

    # --- input ---------------------------------------------------------------------------

    def feed(self, events):
        """Adds the next events (a parser ``Events``, in stream order)."""
        if not len(events):
            return
        stamp = events.stamp.astype(np.int64)
        source, value = events.source, events.value
        low, high = int(stamp.min()), int(stamp.max())
        self.out_of_order += int(np.count_nonzero(stamp < self._horizon))
        self.stamp_min = low if self.stamp_min is None else min(self.stamp_min, low)
        self.stamp_max = high if self.stamp_max is None else max(self.stamp_max, high)
        self._collect_spans(events)
        self.events += len(events)
        if self.needs_second_pass:
            return                       # only the spans matter now
        self._horizon = max(self._horizon, self.stamp_max - self.skew)
        self._markers(stamp, source, value)
        irq = stamp[(source == Source.IRQ) & (value == 1)]
        if len(irq):
            self._irq_held = np.concatenate([self._irq_held, irq])
            self._last_irq = int(irq[-1])
        self._decide(final=False)

    def finish(self):
        """Ends the capture: decides every pending sample."""
        if self.needs_second_pass:
            return self
        self._horizon = _NEVER
        for state in self._tests.values():
            if state.param_wait is not None:         # the START was the test's last marker
                window, argument = state.param_wait
                self._name_window(state, window, argument)
        self._decide(final=True)
        return self

    def _collect_spans(self, events):
        """Adds the loss spans of the batch's LOSS records; notes when one reaches back
        before the end of a counted sample."""
        if self.spans_known:
            return
        new = self._losses.feed(events)
        if len(new[0]) and int(new[0].min()) < self._counted_end:
            self.needs_second_pass = True
        if len(new[0]):
            self.spans = merge_spans(self.spans, new)

    # --- windows -------------------------------------------------------------------------

    def _markers(self, stamp, source, value):
        marker_at = np.flatnonzero((source == Source.MARKER) | (source == Source.BUS))
        first_index = self.markers
        self.markers += len(marker_at)
        if not len(marker_at):
            return
        tests, points, args = decode(value[marker_at].astype(np.int32) & 0xffff)
        order = np.argsort(tests.astype(np.uint8), kind="stable")
        test_of = tests[order]
        edges = np.flatnonzero(np.append(True, test_of[1:] != test_of[:-1]))
        for begin, end in zip(edges, np.append(edges[1:], len(order))):
            test = int(test_of[begin])
            state = self._tests.get(test)
            if state is None:
                state = self._tests[test] = _TestState(test)
            if not state.rules:
                continue
            mine = order[begin:end]
            self._test_markers(state, stamp[marker_at[mine]], points[mine], args[mine],
                               first_index + mine)

    def _test_markers(self, state, m_stamp, m_points, m_args, global_index):
        """Windows of one test's markers in this batch; adds their start and end events to
        the pending events of the test's rules."""
        if state.param_wait is not None:             # this batch's first marker decides
            window, argument = state.param_wait
            if m_points[0] == Point.PARAM:
                argument |= int(m_args[0]) << ARG_BITS
            self._name_window(state, window, argument)
        bounds = np.flatnonzero((m_points == Point.START) | (m_points == Point.END))
        carried = state.windows - 1 if state.open else -1
        bound_window = np.full(len(bounds), -1, np.int64)
        for k, at in enumerate(bounds.tolist()):
            if state.open:                            # this bound ends the open window
                self._close(state, int(m_stamp[at]))
            if m_points[at] == Point.START:
                window = state.windows
                state.windows += 1
                state.open = True
                bound_window[k] = window
                state.start_marker[window] = int(global_index[at])
                if state.uses_irq:
                    state.first.append([window, int(m_stamp[at]), _NEVER])
                state.param_wait = None
                if at + 1 < len(m_points):
                    argument = int(m_args[at])
                    if m_points[at + 1] == Point.PARAM:
                        argument |= int(m_args[at + 1]) << ARG_BITS
                    self._name_window(state, window, argument)
                else:
                    state.param_wait = (window, int(m_args[at]))
        # Each marker is in the window of the last bound before it (or the carried one).
        lengths = np.diff(np.concatenate([[0], bounds, [len(m_points)]]))
        windows = np.repeat(np.concatenate([[carried], bound_window]), lengths)
        of_kind = {}
        for (index, rule), pending in zip(state.rules, state.pending):
            for kind in (rule.start, rule.end):
                if kind not in of_kind:
                    inside = (m_points == kind) & (windows >= 0) if kind != "irq" else None
                    of_kind[kind] = ((m_stamp[inside], windows[inside]) if inside is not None
                                     else (_EMPTY, _EMPTY))
            pending.add(*of_kind[rule.start], *of_kind[rule.end])

    def _close(self, state, stamp):
        state.open = False
        if state.uses_irq:
            state.first[-1][2] = stamp

    def _name_window(self, state, window, parameter):
        state.param_wait = None
        for index, rule in state.rules:
            name = rule.name.format(n=parameter)
            state.names[(window, index)] = name
            if name not in self.tables:
                self.tables[name] = TableAccumulator(
                    name, self.stamp_hz, {"test": Test(state.test).name, "n": parameter},
                    interval_stamps=self.interval_stamps)
                self._order[name] = (state.start_marker[window], index)

    def _assign_irqs(self):
        """Gives the held IRQ edges stamped below the horizon (no START can come before
        them any more) their windows, in every test with an IRQ rule."""
        ready = int(np.argmax(self._irq_held >= self._horizon)) if np.any(
            self._irq_held >= self._horizon) else len(self._irq_held)
        irq, self._irq_held = self._irq_held[:ready], self._irq_held[ready:]
        for state in self._tests.values():
            if not state.uses_irq or not state.first:
                continue
            table = np.array(state.first, np.int64).reshape(-1, 3)
            if len(irq):
                slot = np.searchsorted(table[:, 1], irq, side="right") - 1
                inside = (slot >= 0) & (irq < table[np.maximum(slot, 0), 2])
                window = np.where(inside, table[np.maximum(slot, 0), 0], -1)
                for (index, rule), pending in zip(state.rules, state.pending):
                    if rule.start == "irq":
                        pending.add(irq[inside], window[inside], _EMPTY, _EMPTY)
            # Windows no IRQ still to come can fall into: ended at or before the lowest
            # stamp an unassigned IRQ can have.
            if len(self._irq_held):
                lowest = int(self._irq_held[0])
            elif self._last_irq is not None:
                lowest = self._last_irq
            else:
                continue
            keep = 0
            while keep < len(state.first) - 1 and state.first[keep][2] <= lowest:
                keep += 1
            del state.first[:keep]

    # --- samples -------------------------------------------------------------------------

    def _decide(self, final):
        self._safe = self._losses.safe_end(self._horizon, self.loss_lag)
        self._assign_irqs()
        for state in self._tests.values():
            for (index, rule), pending in zip(state.rules, state.pending):
                if len(pending.a):
                    self._decide_rule(state, index, rule, pending, final)
                self._trim_ends(pending)

    def _decide_rule(self, state, index, rule, pending, final):
        a, a_window, b = pending.a, pending.a_window, pending.b
        keep, lossy, lengths = _pair(a, a_window, b, pending.b_window, self.spans)
        if final:
            decided = np.ones(len(a), bool)
        else:
            closed = (a_window < state.windows - 1) | (not state.open)
            no_more_a = closed
            if rule.start == "irq":                   # IRQs may still fall into the window
                no_more_a = closed & (self._window_ends(state, a_window) <= self._horizon)
            same_next = np.append(a_window[1:] == a_window[:-1], False)
            has_next = np.arange(len(a)) < len(a) - 1
            next_a = np.where(same_next, np.append(a[1:], 0), _NEVER)
            end_seen = np.searchsorted(b, a, side="right") < len(b)
            unnamed = -1 if state.param_wait is None else state.param_wait[0]
            decided = ((has_next | no_more_a)
                       & (end_seen | closed | (same_next & (next_a < self._horizon)))
                       & (a_window != unnamed))
            # A sample waits until no LOSS record of a source seen lately can reach back
            # over it (its span starts at that source's latest event, or later).
            decided &= ~(keep & (a + lengths > self._safe))
            decided = np.logical_and.accumulate(decided)
        count = int(np.count_nonzero(decided))
        if not count:
            return
        self._count(state, index, a[:count], a_window[:count], keep[:count], lossy[:count],
                    lengths[:count])
        pending.a, pending.a_window = a[count:], a_window[count:]

    @staticmethod
    def _window_ends(state, windows):
        """End stamps of ``windows`` (-_NEVER for windows no longer kept: ended before any
        IRQ still to come)."""
        if not state.first:
            return np.full(len(windows), -_NEVER, np.int64)
        table = np.array(state.first, np.int64).reshape(-1, 3)
        at = np.searchsorted(table[:, 0], windows)
        found = table[np.minimum(at, len(table) - 1), 0] == windows
        return np.where(found, table[np.minimum(at, len(table) - 1), 2], -_NEVER)

    def _count(self, state, index, a, a_window, keep, lossy, lengths):
        """Adds decided samples to their tables (by window: the window's name)."""
        if keep.any():
            self._counted_end = max(self._counted_end, int((a + lengths)[keep].max()))
        # Windows come in order: one run of samples per window.
        runs = np.flatnonzero(np.append(True, a_window[1:] != a_window[:-1])).tolist()
        for begin, end in zip(runs, runs[1:] + [len(a)]):
            table = self.tables[state.names[(int(a_window[begin]), index)]]
            kept = keep[begin:end]
            table.add(lengths[begin:end][kept], a[begin:end][kept])
            table.discarded += int(np.count_nonzero(lossy[begin:end]))

    def _trim_ends(self, pending):
        """Drops end events that can end no sample any more: at or below every pending start
        and the horizon (later starts are stamped above it)."""
        floor = self._horizon
        if len(pending.a):
            floor = min(floor, int(pending.a.min()))
        drop = int(np.searchsorted(pending.b, floor, side="right"))
        if drop:
            pending.b, pending.b_window = pending.b[drop:], pending.b_window[drop:]

    # --- results -------------------------------------------------------------------------

    def ordered_tables(self):
        """``{name: TableAccumulator}`` in ``analyze``'s order (the order the tests' windows
        first appear)."""
        return {name: self.tables[name]
                for name in sorted(self.tables, key=lambda name: self._order[name])}


def analyze_batches(batches, stamp_hz, **options):
    """Tables (``{name: TableAccumulator}``, as ``analyze`` orders them) of the events that
    ``batches()`` yields in batches (a callable: it is called again when a loss span reaches
    back before counted samples, for a second pass with every span known). ``options``: as
    :class:`BatchAnalysis`. Returns the :class:`BatchAnalysis`."""
    analysis = BatchAnalysis(stamp_hz, **options)
    for events in batches():
        analysis.feed(events)
    analysis.passes = 1
    if analysis.needs_second_pass:
        options = dict(options, losses=None)
        analysis = BatchAnalysis(stamp_hz, spans=analysis.spans, **options)
        for events in batches():
            analysis.feed(events)
        analysis.passes = 2
    return analysis.finish()
