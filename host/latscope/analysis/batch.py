"""The rules of :func:`latscope.analysis.pairing.analyze`, applied to a capture batch by batch
in bounded memory, with the very same results (:class:`BatchAnalysis`, and
:func:`analyze_batches` with its second pass when a loss reaches back).
"""

import numpy as np

from latscope_defs.markers import ARG_BITS, Point, Test, decode
from latscope_defs.protocol import Source

from ..events import Events
from .pairing import pair
from .rules import RULES, is_tick, tick_overlaps
from .spans import LossSpans, holes_of, is_hole, merge_spans
from .statistics import TableAccumulator
from .windows import markers_in_time_order

__all__ = ["BatchAnalysis", "analyze_batches"]

_NEVER = np.iinfo(np.int64).max
_LOWEST = np.iinfo(np.int64).min
_EMPTY = np.zeros(0, np.int64)


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
    """One test's windows and the pending events of its rules.

    Windows as ``windows_of_test`` makes them: from a START, or (after a hole) from the
    test's first marker after it, to the next START or END; windows that end at the same
    bound form a group, named by its first window (``outer``): a start event pairs with an
    end event of its group."""

    def __init__(self, test):
        self.test = test
        self.rules = [(index, rule) for index, rule in enumerate(RULES) if rule.test == test]
        self.pending = [_Pending() for _ in self.rules]
        self.uses_irq = any(rule.start == "irq" for _, rule in self.rules)
        self.uses_handler = any("handler" in (rule.start, rule.end) for _, rule in self.rules)
        self.windows = 0                 # windows so far; the latest is windows - 1
        self.open = False                # a group is open (no bound since it began)
        self.group = -1                  # the open group's first window
        self.outer = []                  # window -> first window of its group
        self.epoch = -1                  # holes before the latest window began
        self.last_epoch = 0              # holes before the test's latest marker
        self.param_wait = None           # (window, START argument, epoch): its next marker decides
        self.names = {}                  # (window, rule) -> table name (None: no table)
        self.first = []                  # [window, first stamp, end stamp or _NEVER, epoch]
        self.group_rows = 0              # rows of ``first`` from the open group's first on
        self.last_first = -_NEVER        # first stamps of IRQ windows only grow
        self.start_marker = {}           # window -> global index of the marker it began at
        self.irq_wait = (_EMPTY, _EMPTY)  # IRQs (stamps, epochs) not given a window yet
        self.irq_floor = -_NEVER         # no IRQ still to be given a window is stamped below

    def closed(self, windows):
        """Which ``windows`` have all their markers seen (their group has ended)."""
        return ~(self.open & (self.outer_of(windows) == self.group))

    def outer_of(self, windows):
        return np.asarray(self.outer, np.int64)[windows] if len(windows) else windows


class BatchAnalysis:
    """The rules applied batch by batch (below). ``stamp_hz``: stamp units per second;
    ``losses``: extra stamps where data is missing (as ``analyze``'s); ``spans``,
    ``hole_spans``: every loss span and hole span of the capture, when known (a second pass);
    ``skew``: the largest amount by which an event's stamp can fall below the largest stamp
    before it (the spread of the pin latencies); ``interval_stamps``: width of the tables'
    max-per-interval slots (None: none); ``loss_lag_s``: a sample is counted once every source
    with an event in the last ``loss_lag_s`` seconds has had one after it (so that a LOSS record
    of such a source finds it uncounted).

    :class:`BatchAnalysis` takes the events of a capture in batches of any size, in stream order
    (``feed``; ``finish`` at the end), and keeps a
    :class:`~latscope.analysis.statistics.TableAccumulator` per table. Every event is looked at
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
    cannot take that sample back: it then only collects the spans to the end
    (``needs_second_pass``), and a second pass with every span known from the start (``spans=``)
    gives the exact tables. :func:`analyze_batches` does both. To make that rare, a decided
    sample is counted only once every source that had an event lately (``loss_lag_s``) has had
    one after the sample's end: a later LOSS record of such a source cannot reach back over it.
    Only a LOSS record of a source silent for longer (or never seen) needs the second pass.
    """

    def __init__(self, stamp_hz, *, losses=None, spans=None, hole_spans=None, skew=0,
                 interval_stamps=None, loss_lag_s=0.1):
        self.stamp_hz = stamp_hz
        self.loss_lag = int(loss_lag_s * stamp_hz)
        self.skew = int(skew)
        self.interval_stamps = interval_stamps
        extra = np.asarray(losses if losses is not None else [], np.int64)
        self.spans_known = spans is not None
        self.spans = merge_spans(spans if spans is not None else (_EMPTY, _EMPTY),
                                 (extra, extra))
        self.hole_spans = hole_spans if hole_spans is not None else (_EMPTY, _EMPTY)
        self.holes = 0                   # holes so far (the epoch of what comes next)
        self.needs_second_pass = False
        self.tables = {}
        self._order = {}                 # table -> (START marker index, rule index)
        self._n_from = {}                # table -> window its parameter n comes from
        # Tests with an IRQ rule see every IRQ edge from the start (a window a hole opens
        # may take IRQs from before the test's first marker after it).
        self._tests = {test: _TestState(test) for test in dict.fromkeys(
            rule.test for rule in RULES if rule.start == "irq")}
        self._losses = LossSpans()
        self._hole_after = []            # per hole: stamp of the last event before it
        self._delivered = Events.empty()  # the latest event that is no LOSS record
        self._counted_end = -_NEVER      # largest end of a counted sample
        self.events = 0
        self.markers = 0
        self.stamp_min = self.stamp_max = None
        self.out_of_order = 0            # events stamped below the horizon promised
        self._horizon = -_NEVER
        # Markers are taken in stamp order (trace port before bus window in one cycle, as
        # analyze takes them): those not below the horizon wait, a later one may precede.
        self._held = (_EMPTY, np.zeros(0, np.uint8), _EMPTY, _EMPTY)  # stamp, source, value, epoch
        self.handlers = 0                # the kernel's handler-entry markers so far
        self._ticks = _EMPTY             # stamps of the tick markers a sample may still hold
        self._handler_names = set()      # tables of "handler" rules (none without such markers)

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
        epoch = self.holes + np.cumsum(is_hole(source, value))     # holes up to each event
        self._note_holes(events, int(epoch[-1]) > self.holes)
        self.holes = int(epoch[-1])
        self._take_markers(stamp, source, value, epoch, final=False)
        irq_at = np.flatnonzero((source == Source.IRQ) & (value == 1))
        if len(irq_at):
            for state in self._tests.values():
                if state.uses_irq:
                    state.irq_wait = (np.concatenate([state.irq_wait[0], stamp[irq_at]]),
                                      np.concatenate([state.irq_wait[1], epoch[irq_at]]))
        self._decide(final=False)

    def finish(self):
        """Ends the capture: decides every pending sample."""
        if self.needs_second_pass:
            return self
        self._horizon = _NEVER
        self._take_markers(_EMPTY, np.zeros(0, np.uint8), _EMPTY, _EMPTY, final=True)
        for state in self._tests.values():
            if state.param_wait is not None:         # the START was the test's last marker
                window, argument, epoch = state.param_wait
                state.param_wait = None
                self._name_window(state, window, argument, certain=self.holes == epoch)
        self._decide(final=True)
        return self

    def _note_holes(self, events, any_hole):
        """Notes where each hole of the batch begins: the stamp of the last delivered event
        before it (``holes_of``; it may be in an earlier batch)."""
        if any_hole:
            joined = Events.concatenate([self._delivered, events])
            self._hole_after += [_LOWEST if hole.after is None else hole.after
                                 for hole in holes_of(joined)]
        delivered = np.flatnonzero(events.source != Source.LOSS)
        if len(delivered):
            self._delivered = events[delivered[-1:]]

    def _collect_spans(self, events):
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

    def _take_markers(self, stamp, source, value, epoch, final):
        """Adds the batch's markers to those held and takes, in stamp order, the ones below
        the horizon (all when ``final``)."""
        at = np.flatnonzero((source == Source.MARKER) | (source == Source.BUS))
        held = [np.concatenate([h, column[at]]) for h, column in
                zip(self._held, (stamp, source, value.astype(np.int64), epoch))]
        order = markers_in_time_order(held[0], held[1])
        h_stamp, h_source, h_value, h_epoch = (column[order] for column in held)
        ready = len(h_stamp) if final else int(np.searchsorted(h_stamp, self._horizon))
        self._held = tuple(column[ready:] for column in (h_stamp, h_source, h_value, h_epoch))
        self._markers(h_stamp[:ready], h_value[:ready], h_epoch[:ready])

    def _markers(self, m_stamp, m_value, m_epoch):
        """The next markers in stamp order (``m_epoch``: holes in the stream before each)."""
        first_index = self.markers
        self.markers += len(m_stamp)
        if not len(m_stamp):
            return
        tests, points, args = decode(m_value.astype(np.int32) & 0xffff)
        handler_at = np.flatnonzero((tests == Test.KERNEL) & (points == Point.ISR_ENTRY))
        self.handlers += len(handler_at)
        self._ticks = np.concatenate([self._ticks, m_stamp[is_tick(tests, points)]])
        order = np.argsort(tests.astype(np.uint8), kind="stable")
        test_of = tests[order]
        edges = np.flatnonzero(np.append(True, test_of[1:] != test_of[:-1]))
        placed = {}                                  # test -> where its windows are
        for begin, end in zip(edges, np.append(edges[1:], len(order))):
            test = int(test_of[begin])
            state = self._tests.get(test)
            if state is None:
                state = self._tests[test] = _TestState(test)
            if not state.rules:
                continue
            mine = order[begin:end]
            placed[test] = self._test_markers(state, m_stamp[mine], points[mine], args[mine],
                                              m_epoch[mine], first_index + mine)
        for test, state in self._tests.items():
            if state.uses_handler and len(handler_at):
                self._handler_markers(state, placed.get(test), m_stamp[handler_at],
                                      m_epoch[handler_at], first_index + handler_at)

    @staticmethod
    def _handler_markers(state, placed, h_stamp, h_epoch, h_at):
        """Adds the kernel's handler-entry markers (global marker indices ``h_at``) to the test's "handler" rules: each is in the window of the test's marker
        before it in the marker order (as ``analyze`` places them by position), if any."""
        if placed is None:                           # no marker of the test in the batch
            placed = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64),
                      (state.windows - 1, state.epoch) if state.open else (-1, -1))
        positions, windows, window_epoch, carried = placed
        before = np.searchsorted(positions, h_at) - 1
        window = np.append(windows, carried[0])[before]      # -1 -> the carried window
        epoch = np.append(window_epoch, carried[1])[before]
        inside = window >= 0
        for (index, rule), pending in zip(state.rules, state.pending):
            if rule.end == "handler":
                pending.add(_EMPTY, _EMPTY, h_stamp[inside], window[inside])
            if rule.start == "handler":
                start = inside & (h_epoch == epoch)
                pending.add(h_stamp[start], window[start], _EMPTY, _EMPTY)

    def _test_markers(self, state, m_stamp, m_points, m_args, m_epoch, global_index):
        """Windows of one test's markers in this batch; adds their start and end events to
        the pending events of the test's rules. A start event counts only in the epoch of
        its window (no hole since it began); a START's parameter is certain only if no hole
        comes before the test's next marker (a PARAM may have been lost in it)."""
        if state.param_wait is not None:             # this batch's first marker decides
            window, argument, epoch = state.param_wait
            state.param_wait = None
            certain = int(m_epoch[0]) == epoch
            if m_points[0] == Point.PARAM and certain:
                argument |= int(m_args[0]) << ARG_BITS
            self._name_window(state, window, argument, certain)
        is_start = m_points == Point.START
        is_bound = is_start | (m_points == Point.END)
        # A hole opens a window at the test's first marker after it (unless a START).
        no_holes = state.last_epoch == int(m_epoch[-1])        # none before these markers
        opening = np.zeros(len(m_points), bool) if no_holes else (
            m_epoch != np.concatenate([[state.last_epoch], m_epoch[:-1]])) & ~is_start
        state.last_epoch = int(m_epoch[-1])
        carried = (state.windows - 1, state.epoch) if state.open else (-1, -1)
        segments = []                                 # (position, window, epoch) from there on
        for at in np.flatnonzero(is_bound | opening).tolist():
            if opening[at]:
                epoch = int(m_epoch[at])
                window = self._new_window(state, int(global_index[at]),
                                          self._hole_after[epoch - 1], epoch, group=False)
                self._name_window(state, window, -1, certain=False)
                segments.append((at, window, epoch))
            if not is_bound[at]:
                continue
            if state.open:                            # this bound ends the open group
                self._close(state, int(m_stamp[at]))
            if not is_start[at]:
                segments.append((at, -1, -1))
                continue
            epoch = int(m_epoch[at])
            window = self._new_window(state, int(global_index[at]), int(m_stamp[at]), epoch,
                                      group=True)
            segments.append((at, window, epoch))
            if at + 1 < len(m_points):
                argument = int(m_args[at])
                certain = int(m_epoch[at + 1]) == epoch
                if m_points[at + 1] == Point.PARAM and certain:
                    argument |= int(m_args[at + 1]) << ARG_BITS
                self._name_window(state, window, argument, certain)
            else:
                state.param_wait = (window, int(m_args[at]), epoch)
        # Each marker is in the window of the last segment before it (or the carried one).
        at = np.array([0] + [seg[0] for seg in segments] + [len(m_points)], np.int64)
        lengths = np.diff(at)
        windows = np.repeat(np.array([carried[0]] + [seg[1] for seg in segments]), lengths)
        window_epoch = np.repeat(np.array([carried[1]] + [seg[2] for seg in segments]),
                                 lengths)
        same_epoch = True if no_holes else m_epoch == window_epoch
        of_kind = {}
        for (index, rule), pending in zip(state.rules, state.pending):
            for kind, as_start in ((rule.start, True), (rule.end, False)):
                if (kind, as_start) not in of_kind:
                    inside = None
                    if kind not in ("irq", "handler"):
                        inside = (m_points == kind) & (windows >= 0)
                        if as_start:
                            inside &= same_epoch
                    of_kind[kind, as_start] = ((m_stamp[inside], windows[inside])
                                               if inside is not None else (_EMPTY, _EMPTY))
            pending.add(*of_kind[rule.start, True], *of_kind[rule.end, False])
        # Where the windows are, for the handler markers: global marker indices, windows,
        # their epochs, and the window (and epoch) before the batch.
        return global_index, windows, window_epoch, carried

    def _new_window(self, state, marker, first, epoch, group):
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
        if state.uses_irq:
            state.last_first = max(state.last_first, first)
            state.first.append([window, state.last_first, _NEVER, epoch])
        return window

    def _close(self, state, stamp):
        """The open group ends at a bound stamped ``stamp``."""
        state.open = False
        for row in state.first[state.group_rows:]:
            row[2] = stamp

    def _name_window(self, state, window, parameter, certain):
        """Names the tables of ``window`` once its parameter is known. A name with the
        parameter in it is known only where the parameter is certain; a window without one
        gives that rule no table (its samples count nowhere). A table's ``n`` is the
        parameter of its first certain window, its place that of its first window."""
        for index, rule in state.rules:
            known = certain or "{n}" not in rule.name
            name = rule.name.format(n=parameter) if known else None
            state.names[(window, index)] = name
            if name is None:
                continue
            place = (state.start_marker[window], index)
            if "handler" in (rule.start, rule.end):
                self._handler_names.add(name)
            if name not in self.tables:
                self.tables[name] = TableAccumulator(
                    name, self.stamp_hz, {"test": Test(state.test).name, "n": None},
                    interval_stamps=self.interval_stamps)
                self._order[name] = place
            self._order[name] = min(self._order[name], place)
            if certain and self._n_from.get(name, _NEVER) > window:
                self.tables[name].parameters["n"] = parameter
                self._n_from[name] = window

    def _assign_irqs(self, final):
        """Gives IRQ edges their windows, in every test with an IRQ rule, once no window
        can still begin at or before them: a START comes above the horizon, and a window a
        hole opens begins where the hole does (the last event before it), for a hole after
        the test's latest marker or one still to come (after the latest event)."""
        for state in self._tests.values():
            if not state.uses_irq:
                continue
            stamps, epochs = state.irq_wait
            below = _NEVER if final else min(
                [self._horizon, self._delivered_stamp()]
                + self._hole_after[state.last_epoch:self.holes])
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
            no_end = (stamps < self._horizon) & (np.append(epochs[1:] == epochs[:-1], False)) \
                & np.append(stamps[1:] < self._horizon, False)
            if state.uses_handler and state.open:
                no_end[:] = False
            dead = after_hole & ((epochs < settled) | no_end)
            state.irq_wait = (stamps[~dead], epochs[~dead])
            state.irq_floor = min(self._horizon, int(state.irq_wait[0][0])
                                  if len(state.irq_wait[0]) else _NEVER)
            self._prune_windows(state)

    def _delivered_stamp(self):
        return int(self._delivered.stamp[0]) if len(self._delivered) else _NEVER

    @staticmethod
    def _irqs_into_windows(state, irq, irq_epoch):
        if not len(irq) or not state.first:
            return
        table = np.array(state.first, np.int64).reshape(-1, 4)
        # Strictly after the window's first stamp (an IRQ in the cycle of a START is in none).
        slot = np.searchsorted(table[:, 1], irq, side="left") - 1
        row = table[np.maximum(slot, 0)]
        # Inside a window's stamps, and no hole since it began (a start event).
        inside = (slot >= 0) & (irq < row[:, 2]) & (irq_epoch == row[:, 3])
        for (index, rule), pending in zip(state.rules, state.pending):
            if rule.start == "irq":
                pending.add(irq[inside], row[inside, 0], _EMPTY, _EMPTY)

    @staticmethod
    def _prune_windows(state):
        """Forgets the IRQ windows that ended at or before every IRQ still to come."""
        keep = 0
        while keep < len(state.first) - 1 and state.first[keep][2] <= state.irq_floor:
            keep += 1
        del state.first[:keep]
        state.group_rows = max(0, state.group_rows - keep)

    # --- samples -------------------------------------------------------------------------

    def _decide(self, final):
        self._safe = self._losses.safe_end(self._horizon, self.loss_lag)
        self._assign_irqs(final)
        floor = self._horizon                     # no sample still to count begins below
        for state in self._tests.values():
            for (index, rule), pending in zip(state.rules, state.pending):
                if len(pending.a):
                    self._decide_rule(state, index, rule, pending, final)
                self._trim_ends(pending)
                if len(pending.a):
                    floor = min(floor, int(pending.a.min()))
            if len(state.irq_wait[0]):
                floor = min(floor, int(state.irq_wait[0].min()))
        self._ticks = self._ticks[np.searchsorted(self._ticks, floor):]

    def _decide_rule(self, state, index, rule, pending, final):
        a, a_window, b = pending.a, pending.a_window, pending.b
        group = state.outer_of(a_window)            # a start pairs within its group
        keep, lossy, by_hole, lengths = pair(a, group, b, state.outer_of(pending.b_window),
                                              self.spans, self.hole_spans)
        if final:
            decided = np.ones(len(a), bool)
        else:
            closed = state.closed(a_window)
            no_more_a = closed
            if rule.start == "irq":                   # IRQs may still fall into the window
                no_more_a = closed & (self._window_ends(state, a_window) <= state.irq_floor)
            same_next = np.append(group[1:] == group[:-1], False)
            has_next = np.arange(len(a)) < len(a) - 1
            next_a = np.where(same_next, np.append(a[1:], 0), _NEVER)
            # Its end is known when it has one in its group (a first end event beyond the
            # group means the group is closed).
            end_seen = lengths > 0
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
                    by_hole[:count], lengths[:count])
        pending.a, pending.a_window = a[count:], a_window[count:]

    @staticmethod
    def _window_ends(state, windows):
        """End stamps of ``windows`` (-_NEVER for windows no longer kept: ended before any
        IRQ still to come)."""
        if not state.first:
            return np.full(len(windows), -_NEVER, np.int64)
        table = np.array(state.first, np.int64).reshape(-1, 4)
        at = np.searchsorted(table[:, 0], windows)
        found = table[np.minimum(at, len(table) - 1), 0] == windows
        return np.where(found, table[np.minimum(at, len(table) - 1), 2], -_NEVER)

    def _count(self, state, index, a, a_window, keep, lossy, by_hole, lengths):
        """Adds decided samples to their tables (by window: the window's name; none for a
        window whose parameter is not certain)."""
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
            starts, samples = a[begin:end][kept], lengths[begin:end][kept]
            table.add(samples, starts, tick_overlaps(starts, samples, self._ticks))
            table.discarded += int(np.count_nonzero(lossy[begin:end]))
            table.discarded_by_holes += int(np.count_nonzero(by_hole[begin:end]))

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
        first appear); tables of "handler" rules only if the capture has handler-entry
        markers (as ``analyze``)."""
        return {name: self.tables[name]
                for name in sorted(self.tables, key=lambda name: self._order[name])
                if self.handlers or name not in self._handler_names}


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
        analysis = BatchAnalysis(stamp_hz, spans=analysis.spans,
                                 hole_spans=analysis.hole_spans, **options)
        for events in batches():
            analysis.feed(events)
        analysis.passes = 2
    return analysis.finish()
