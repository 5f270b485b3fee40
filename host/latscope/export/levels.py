"""A capture's events as the levels of logic signals, change by change
(:class:`LevelTracker`): what the session-file, VCD and live-VCD writers take
(:class:`Changes`).
"""

from dataclasses import dataclass

import numpy as np

from latscope_defs.channels import EXPORT_DATA_BITS
from latscope_defs.protocol import Source

from ..analysis.spans import is_hole, lossy_spans  # the one definition of where events may be lost
from ..events import Events

__all__ = ["Changes", "HOLDBACK", "LevelTracker", "MARGIN"]

#: Cycles shown before the first event (so that no edge falls on sample 0, where a decoder
#: cannot see it) and after the last.
MARGIN = 16

#: Cycles by which events of different sources may arrive out of stamp order (the spread of
#: the pin-latency corrections, with room to spare): ``LevelTracker`` holds them that long.
HOLDBACK = 64


@dataclass
class Changes:
    """Sample words after each change: ``stamps`` (int64 cycles, increasing), ``words``."""

    stamps: np.ndarray
    words: np.ndarray

    def __len__(self):
        return len(self.stamps)


class LevelTracker:
    """Turns events into sample-word changes, batch by batch.

    ``feed(events)`` (events in stream order) returns the :class:`Changes` of every event up
    to ``holdback`` cycles before the latest stamp seen; events of different sources can
    arrive a few cycles out of stamp order (pin-latency correction), so the newest ones wait
    for the next batch. ``finish()`` returns the rest. Fed all at once (``final=True``) the
    result is exact; fed in pieces (a live stream), a loss span that begins before what was
    already returned starts at the first cycle not yet returned (``loss_clamped``).

    The signals are those of :class:`latscope_defs.channels.Layout` (one sample = one stamp
    unit; bit n of a sample word = channel n): the data of the last marker (low 16 bits), STROBE
    toggling at every marker in the cycle of its stamp, IRQ high while the IRQ generator's
    output is asserted (whatever its polarity), the edge channels as captured, and LOSS high
    over the spans in which :func:`latscope.analysis.pairing.analyze` takes events to be
    possibly lost (its ``lossy_spans``, the one definition): from the previous event of the
    source that lost events to the LOSS record that reports them, high from the span's first
    cycle up to (not including) its last; high at the start if the span began before. A sample
    (A, B) is discarded when such a span starts before B and ends after A. HOLE toggles at
    each hole of the stream (a parser hole record), in the cycle of the earliest event that
    came after it in the stream (none: the hole record's own stamp), so that the events of
    that cycle and later are the ones after the hole, those before it the ones before, as
    the analysis takes them (docs/tests.md rules 5 and 6: where windows begin and take
    start events). Holes with no event between them are one toggle. (Within the pin-latency
    spread of a hole, an event before it in the stream could be stamped after that cycle:
    a hole that lost less than a few cycles; such a toggle comes late, ``holes_late``.)

    A level can only show an edge if it changes. Where a capture has an IRQ or edge event that
    does not change the level (its opposite edge was lost: the appliance reports a LOSS there),
    the opposite level is shown for the one cycle before it, so the edge still appears; an extra
    IRQ *assertion* is never invented this way (a repeated releasing edge is left out, no rule
    uses it). Two markers in one cycle (trace port and bus window together) are taken in the
    order trace port, bus window (as analyze takes them, docs/tests.md): the first on STROBE/D*,
    the second on the second marker lane STROBE2/D2_* of a layout that has it
    (``Layout.second_lane``, which :func:`latscope.export.files.export_capture` sets when the
    capture has such a cycle). Without that lane (the live stream) the second one is shown
    instead of the first and the number dropped is counted.
    """

    def __init__(self, layout, *, holdback=HOLDBACK, spans=None, initial=None):
        """``spans``: every loss span of the events to come, when known beforehand (then the
        tracker finds none itself and none is clamped); ``initial``: the levels before the
        first change, when known (the level before each 1-bit channel's first edge, high
        LOSS if a span began before): fed in batches, the result is then that of feeding all
        at once."""
        self.layout = layout
        self.strobe_bit = layout.bit("STROBE")
        self.strobe2_bit = layout.bit("STROBE2") if layout.second_lane else None
        self.irq_bit = layout.bit("IRQ")
        self.loss_bit = layout.bit("LOSS")
        self.hole_bit = layout.bit("HOLE")
        self.edge_bit = [layout.bit(f"EDGE{n}") for n in range(layout.edge_count)]
        self.holdback = holdback
        self.word = 0  # levels after the last change returned
        self.initial = 0  # levels before the first change
        self.last_change = {}  # 1-bit channel -> stamp of its last change
        self.last_stamp = None  # stamp of the last change returned
        self.markers_dropped = 0
        self.edges_stretched = 0
        self.edges_dropped = 0
        self.loss_clamped = 0
        self.holes_late = 0  # hole toggles shown after an event from before the hole
        self._toggles = np.empty(0, np.int64)  # hole toggles not yet shown
        self._hole_waiting = None  # stamp of a hole with no event after it yet
        self._latest_before = np.iinfo(np.int64).min  # largest stamp of a delivered event
        self._held = (np.empty(0, np.int64), np.empty(0, np.uint8), np.empty(0, np.int64))
        self._last_of_source = {}  # source -> stamp of its last event (stream order)
        self._rises = np.empty(0, np.int64)  # loss spans not yet shown: their starts
        self._falls = np.empty(0, np.int64)  # ... and ends
        self._loss_open = 0  # loss spans shown as started, not yet ended
        self._spans_known = spans is not None
        if spans is not None:
            self._rises, self._falls = (np.asarray(column, np.int64) for column in spans)
        if initial is not None:
            self.word = self.initial = int(initial)

    def _note_losses(self, events):
        """Adds the loss spans of new events (stream order) to the pending ones; a source's
        previous event may be in an earlier batch: it goes in front as a stand-in."""
        known = [(stamp, source) for source, stamp in self._last_of_source.items()]
        stamp = np.concatenate(
            [np.array([k[0] for k in known], np.int64), events.stamp.astype(np.int64)]
        )
        source = np.concatenate([np.array([k[1] for k in known], np.uint8), events.source])
        value = np.concatenate([np.zeros(len(known), np.int64), events.value.astype(np.int64)])
        low, high = lossy_spans(stamp, source, value, None)
        self._rises = np.concatenate([self._rises, low])
        self._falls = np.concatenate([self._falls, high])
        for n in np.unique(events.source).tolist():
            if n != Source.LOSS:
                self._last_of_source[n] = int(events.stamp[events.source == n][-1])

    def _note_holes(self, events):
        """Adds the toggles of the batch's holes (stream order): each in the cycle of the
        earliest delivered event between it and the next hole (a hole with none waits for
        the next batch)."""
        delivered = events.source != Source.LOSS
        hole = is_hole(events.source, events.value)
        if not hole.any() and self._hole_waiting is None:
            if delivered.any():
                self._latest_before = max(self._latest_before, int(events.stamp[delivered].max()))
            return
        stamp = events.stamp.astype(np.int64)
        # Runs of delivered events between holes: run k follows the k-th hole of the batch
        # (run 0: before the first, after a hole still waiting from the batch before).
        run = np.cumsum(hole)
        toggles = []
        waiting = self._hole_waiting
        for k in range(int(run[-1]) + 1):
            mine = delivered & (run == k)
            if k and waiting is None:  # the k-th hole of the batch
                waiting = int(stamp[np.flatnonzero(hole)[k - 1]])
            if not mine.any():
                continue
            if waiting is not None:
                first = int(stamp[mine].min())
                self.holes_late += first <= self._latest_before
                toggles.append(first)
                waiting = None
            self._latest_before = max(self._latest_before, int(stamp[mine].max()))
        self._hole_waiting = waiting
        self._toggles = np.concatenate([self._toggles, np.asarray(toggles, np.int64)])

    def feed(self, events, final=False):
        if len(events) and not self._spans_known:
            self._note_losses(events)
        if len(events):
            self._note_holes(events)
        if final and self._hole_waiting is not None:  # a hole at the very end
            self._toggles = np.append(self._toggles, self._hole_waiting)
            self._hole_waiting = None
        stamp = np.concatenate([self._held[0], events.stamp.astype(np.int64)])
        source = np.concatenate([self._held[1], events.source])
        value = np.concatenate([self._held[2], events.value.astype(np.int64)])
        order = np.argsort(stamp, kind="stable")
        stamp, source, value = stamp[order], source[order], value[order]
        if final or not len(stamp):
            ready, cut = len(stamp), np.iinfo(np.int64).max
        else:
            cut = stamp[-1] - self.holdback
            ready = int(np.searchsorted(stamp, cut, side="right"))
        self._held = (stamp[ready:], source[ready:], value[ready:])
        return self._changes(stamp[:ready], source[:ready], value[:ready], cut)

    def finish(self):
        return self.feed(Events.empty(), final=True)

    # --- internals ----------------------------------------------------------------------

    def _changes(self, stamp, source, value, cut):
        if self.last_stamp is not None and len(stamp) and stamp[0] <= self.last_stamp:
            # Out of order by more than the holdback: show it in the next cycle.
            stamp = np.maximum(stamp, self.last_stamp + 1)
        groups = []  # (stamps, bit mask, bit values) per channel group

        is_marker = np.isin(source, (Source.MARKER, Source.BUS))
        m_stamp, m_value = stamp[is_marker], value[is_marker] & ((1 << EXPORT_DATA_BITS) - 1)
        order = np.lexsort((source[is_marker], m_stamp))  # one cycle: trace port first
        m_stamp, m_value = m_stamp[order], m_value[order]
        second = np.zeros(len(m_stamp), bool)
        second[1:] = m_stamp[1:] == m_stamp[:-1]
        if self.strobe2_bit is not None:
            groups.append(
                self._lane(self.strobe2_bit, self.strobe2_bit + 1, m_stamp[second], m_value[second])
            )
            first = ~second
        else:
            first = np.append(~second[1:], True)[: len(second)]  # the later of one cycle's
            self.markers_dropped += int(np.count_nonzero(second))
        groups.append(self._lane(self.strobe_bit, 0, m_stamp[first], m_value[first]))

        groups.append(self._loss_level(cut))
        groups.append(self._hole_level(cut))

        is_irq = source == Source.IRQ
        groups.append(self._levels(self.irq_bit, stamp[is_irq], value[is_irq] & 1, never=1))
        for n in range(self.layout.edge_count):
            is_edge = source == Source.EDGE0 + n
            groups.append(self._levels(self.edge_bit[n], stamp[is_edge], value[is_edge] & 1))
        return self._merge(groups)

    def _lane(self, strobe_bit, data_bit, stamps, values):
        """Changes of a marker lane: its 16 data bits from ``data_bit`` on and its strobe,
        toggled by every marker."""
        strobe = ((self.word >> strobe_bit) + np.arange(1, len(stamps) + 1)) & 1
        mask = ((1 << EXPORT_DATA_BITS) - 1) << data_bit | 1 << strobe_bit
        return stamps, mask, values << data_bit | strobe << strobe_bit

    def _loss_level(self, cut):
        """Changes of the LOSS channel: high while a loss span is open (spans that touch
        are one); the span starts and ends up to ``cut`` are due."""
        rises, falls = self._rises[self._rises <= cut], self._falls[self._falls <= cut]
        self._rises, self._falls = self._rises[self._rises > cut], self._falls[self._falls > cut]
        if self.last_stamp is None:
            # Nothing shown yet: spans that began before the first event start high.
            before = rises == np.iinfo(np.int64).min
            self._loss_open += int(np.count_nonzero(before))
            rises = rises[~before]
            if self._loss_open:
                self.word |= 1 << self.loss_bit
                self.initial = self.word
        else:
            early = rises <= self.last_stamp
            self.loss_clamped += int(np.count_nonzero(early))
            rises = np.where(early, self.last_stamp + 1, rises)
        points = np.concatenate([rises, falls])
        step = np.concatenate([np.ones(len(rises), np.int64), -np.ones(len(falls), np.int64)])
        order = np.lexsort((-step, points))  # at one stamp, starts before ends
        points, open_spans = points[order], self._loss_open + np.cumsum(step[order])
        if not len(points):
            return points, 1 << self.loss_bit, points
        self._loss_open = int(open_spans[-1])
        last = np.append(points[1:] != points[:-1], True)  # the level after each stamp
        level = (open_spans[last] > 0).astype(np.int64)
        return points[last], 1 << self.loss_bit, level << self.loss_bit

    def _hole_level(self, cut):
        """Changes of the HOLE channel: a toggle per hole, those up to ``cut`` due (one
        shown before is moved to the first cycle not yet shown)."""
        due = self._toggles[self._toggles <= cut]
        self._toggles = self._toggles[self._toggles > cut]
        if self.last_stamp is not None:
            due = np.maximum(due, self.last_stamp + 1)
        due = np.unique(due)  # two at one stamp are one hole for the rules
        level = ((self.word >> self.hole_bit) + np.arange(1, len(due) + 1)) & 1
        return due, 1 << self.hole_bit, level << self.hole_bit

    def _levels(self, bit, stamp, level, never=None):
        """Changes of a 1-bit channel. A level equal to the previous one gets the opposite
        level in the cycle before, if that cycle is free and the pulse is not ``never``."""
        if not len(stamp):
            return stamp, 1 << bit, level
        if self.last_stamp is None and bit not in self.last_change:
            # Nothing shown yet: the channel starts at the level before its first edge.
            self.word = (self.word & ~(1 << bit)) | ((1 - int(level[0])) << bit)
            self.initial = self.word
        previous = np.concatenate([[(self.word >> bit) & 1], level[:-1]])
        before = np.concatenate([[self.last_change.get(bit, np.iinfo(np.int64).min)], stamp[:-1]])
        repeated = level == previous
        pulse = repeated & (stamp - 1 > before)
        if never is not None:
            pulse &= (1 - level) != never
        self.edges_stretched += int(np.count_nonzero(pulse))
        self.edges_dropped += int(np.count_nonzero(repeated & ~pulse))
        stamp = np.concatenate([stamp, stamp[pulse] - 1])
        level = np.concatenate([level, 1 - level[pulse]])
        order = np.argsort(stamp, kind="stable")
        stamp, level = stamp[order], level[order]
        self.last_change[bit] = int(stamp[-1])
        return stamp, 1 << bit, level << bit

    def _merge(self, groups):
        """One word per distinct stamp: every group's latest value at that stamp."""
        stamps = np.unique(np.concatenate([g[0] for g in groups]))
        if not len(stamps):
            return Changes(stamps.astype(np.int64), np.empty(0, np.uint64))
        words = np.full(len(stamps), self.word, np.int64)
        for g_stamp, mask, g_value in groups:
            if not len(g_stamp):
                continue
            latest = np.searchsorted(g_stamp, stamps, side="right") - 1  # -1: none yet
            known = latest >= 0
            words[known] = (words[known] & ~mask) | g_value[latest[known]]
        # Drop stamps whose word equals the one before (nothing visible changed).
        previous = np.concatenate([[self.word], words[:-1]])
        changed = words != previous
        stamps, words = stamps[changed], words[changed]
        if len(stamps):
            self.word = int(words[-1])
            self.last_stamp = int(stamps[-1])
        return Changes(stamps.astype(np.int64), words.astype(np.uint64))
