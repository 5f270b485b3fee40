"""Turns FIFO entries into delta-coded event records, in sealed segments.

Four small parts: :class:`RecordChoice` (which record of an entry goes next),
:class:`RecordFormat` (that record's source and payload), :class:`SegmentState` (the open
segment and the sequence numbers, as the records sent change them) and :class:`EventEncoder`,
which steps an entry through them and offers its records and the segment records."""

import operator
from functools import reduce

from amaranth.hdl import *
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from latscope_defs.protocol import (
    DELTA_BITS,
    SEGMENT_MAX_EVENTS,
    SEQUENCE_BITS,
    STAMP_BITS,
    Source,
    Tally,
    value_width,
)

from .records import record_layout
from .short_form import ShortForm

__all__ = ["RecordChoice", "RecordFormat", "SegmentState", "EventEncoder"]


class RecordChoice(wiring.Component):
    """Which record of a loaded entry goes next: its LOSS record first, then its events in
    source order.

    ``load`` takes the entry's ``present`` events and ``loss`` flag as the records to send;
    ``pick`` registers the next of them in ``choice`` (one-hot: bit 0 the LOSS record, bit
    1 + i source i); ``advance`` says that record was sent. ``last``: the chosen record is the
    entry's last one."""

    def __init__(self, count):
        self._count = count
        super().__init__(
            {
                "present": In(count),
                "loss": In(1),
                "load": In(1),
                "pick": In(1),
                "advance": In(1),
                "choice": Out(1 + count),
                "last": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        pending = Signal(self._count)  # events not yet sent, in source order
        pending_loss = Signal()
        lowest_now = Signal(self._count)  # the lowest pending event, one-hot
        for index in range(self._count):
            m.d.comb += lowest_now[index].eq(
                pending[index] & ~pending[:index].any() if index else pending[0]
            )
        lowest = self.choice[1:]  # the event the chosen record is of, if any
        with m.If(self.load):
            m.d.sync += [pending.eq(self.present), pending_loss.eq(self.loss)]
        with m.Elif(self.pick):
            m.d.sync += self.choice.eq(Mux(pending_loss, 1, Cat(C(0, 1), lowest_now)))
        with m.If(self.advance):
            with m.If(pending_loss):
                m.d.sync += pending_loss.eq(0)
            with m.Else():
                m.d.sync += pending.eq(pending & ~lowest)
        m.d.comb += self.last.eq(Mux(pending_loss, pending == 0, pending == lowest))
        return m


class RecordFormat(wiring.Component):
    """The event record ``choice`` (as :class:`RecordChoice` gives it) of ``entry``, with
    ``delta``: its ``source`` and ``payload``, as an AND-OR of every source's record (no
    priority chain)."""

    def __init__(self, layout, sources, *, marker_width=16):
        self._sources = list(sources)
        self._marker_width = marker_width
        super().__init__(
            {
                "entry": In(layout),
                "choice": In(1 + len(self._sources)),
                "delta": In(STAMP_BITS),
                "source": Out(4),
                "payload": Out(64),
            }
        )

    def elaborate(self, platform):
        m = Module()
        entry = self.entry
        values = [(Source.LOSS, Cat(entry.loss_source, entry.detail.loss_count))]
        values += [(source, self._value(entry, source)) for source in self._sources]

        def payload(source, value):
            width = value_width(source, self._marker_width)
            return (self.delta[:DELTA_BITS] << width) | value[:width]

        m.d.comb += [
            self.source.eq(
                reduce(
                    operator.or_,
                    [
                        Mux(self.choice[index], source, 0)
                        for index, (source, _) in enumerate(values)
                    ],
                )
            ),
            self.payload.eq(
                reduce(
                    operator.or_,
                    [
                        Mux(self.choice[index], payload(*pair), 0)
                        for index, pair in enumerate(values)
                    ],
                )
            ),
        ]
        return m

    @staticmethod
    def _value(entry, source):
        """A source's event value in ``entry``: an IRQ edge's level, and the rest of its
        value where the entry carries one (``detail.irq``, 0 beside a LOSS record:
        :func:`.event_capture.entry_layout`)."""
        value = entry.value[source.name]
        if source != Source.IRQ or "irq" not in entry.detail.shape().members:
            return value
        return Cat(value, Mux(entry.loss_valid, 0, entry.detail.irq))


class SegmentState(wiring.Component):
    """The open segment, as the records sent change it: ``start`` (nothing open, the capture's
    count restarts) and one of ``sent_tally``, ``sent_seal``, ``sent_sync``, ``sent_event``
    (``stamp``: the stamp of the entry whose SYNC or event record it is).

    ``base``: the stamp the next delta counts from; ``opened``: SYNC sent, not sealed;
    ``tallied``: its TALLY sent, the SEAL comes next; ``in_segment``: it has an event record;
    ``full``: ``SEGMENT_MAX_EVENTS`` of them; ``aged``: ``flush_after`` cycles since its
    first; ``tally``: the TALLY payload (count, sequence numbers since reset and since
    ``start``)."""

    def __init__(self, *, flush_after):
        self._flush_after = flush_after
        super().__init__(
            {
                "start": In(1),
                "sent_tally": In(1),
                "sent_seal": In(1),
                "sent_sync": In(1),
                "sent_event": In(1),
                "stamp": In(STAMP_BITS),
                "base": Out(STAMP_BITS),
                "opened": Out(1),
                "tallied": Out(1),
                "in_segment": Out(1),
                "full": Out(1),
                "aged": Out(1),
                "tally": Out(Tally),
            }
        )

    def elaborate(self, platform):
        m = Module()
        events = Signal(range(SEGMENT_MAX_EVENTS + 1))
        sent = Signal(SEQUENCE_BITS)  # event records sent since reset
        captured = Signal(SEQUENCE_BITS)  # event records sent since start
        m.d.comb += [
            self.tally.count.eq(events),
            self.tally.sent.eq(sent),
            self.tally.captured.eq(captured),
        ]
        # The sent_* inputs never come together: each register has its own short enable, with
        # `start` last (it wins), rather than one priority chain through all of them.
        with m.If(self.sent_sync | self.sent_event):
            m.d.sync += self.base.eq(self.stamp)
        with m.If(self.sent_sync):
            m.d.sync += self.opened.eq(1)
        with m.If(self.sent_tally):
            m.d.sync += self.tallied.eq(1)
        with m.If(self.sent_event):
            m.d.sync += [
                events.eq(events + 1),
                self.in_segment.eq(1),
                self.full.eq(events == SEGMENT_MAX_EVENTS - 1),
                captured.eq(captured + 1),
                sent.eq(sent + 1),
            ]
        with m.If(self.sent_seal | self.start):
            m.d.sync += [
                self.opened.eq(0),
                self.tallied.eq(0),
                events.eq(0),
                self.in_segment.eq(0),
                self.full.eq(0),
            ]
        with m.If(self.start):
            m.d.sync += captured.eq(0)

        # The age of the open segment saturates at the limit until the flush is sent.
        age = Signal(range(self._flush_after + 1))
        with m.If(~self.in_segment):
            m.d.sync += [age.eq(0), self.aged.eq(0)]
        with m.Elif(~self.aged):
            m.d.sync += [age.eq(age + 1), self.aged.eq(age == self._flush_after - 1)]
        return m


class EventEncoder(wiring.Component):
    """Delta-codes events into records, in segments: SYNC, events, TALLY, SEAL.

    Implements exactly the segment rules of ``latscope_defs.protocol.StreamEncoder`` (version 2):

    * a SYNC record (time base = the event's stamp) opens a segment before an event when none
      is open: the first event after ``start`` or after a seal;
    * the open segment is sealed (a TALLY record: its event count and the sequence numbers,
      then a SEAL record, whose CRC-32 the serializer fills in) before an event whose delta
      would not fit in ``DELTA_BITS`` and before the event that would make it longer than
      ``SEGMENT_MAX_EVENTS``;
    * within an entry the LOSS record goes first, then events in source order;
    * the open segment is also sealed (a *flush*) once ``flush_after`` cycles have passed
      since its first event record, before the next entry is taken, or at once when
      ``stopping`` and the FIFO is empty. The host can verify events only when their
      segment is sealed, so this bounds how late they reach it, whatever the event rate.

    The TALLY's ``sent`` counts event records sent since reset, ``captured`` since ``start``.

    Parameters
    ----------
    layout : the FIFO entry layout (see :func:`event_capture.entry_layout`)
    sources : dict of Source to value width, in entry order
    marker_width : value width of MARKER events
    flush_after : age in cycles at which an open segment is closed
    short_records : whether events may go out as short records (:class:`.ShortForm`);
        without them every record is long
    """

    def __init__(
        self, layout, sources, *, marker_width=16, flush_after=1 << 16, short_records=True
    ):
        self._short_records = short_records
        self._layout = layout
        self._sources = dict(sources)
        self._marker_width = marker_width
        self._flush_after = flush_after
        super().__init__(
            {
                "entries": In(stream.Signature(layout)),
                "records": Out(stream.Signature(record_layout)),
                "start": In(1),
                "stopping": In(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        m.submodules.choice = choice = RecordChoice(len(self._sources))
        m.submodules.format = format = RecordFormat(
            self._layout, self._sources, marker_width=self._marker_width
        )
        m.submodules.segment = segment = SegmentState(flush_after=self._flush_after)
        m.submodules.short = short = ShortForm(
            self._layout, self._sources, RecordFormat._value, enabled=self._short_records
        )
        state = _EntryState(self._layout)
        self._delta(m, state, segment.base)
        self._connect_parts(m, choice, format, segment, state)
        m.d.comb += [
            short.entry.eq(state.entry),
            short.choice.eq(choice.choice),
            short.delta.eq(format.delta),
            short.sent_event.eq(segment.sent_event),
            short.clear.eq(segment.sent_sync | self.start),
        ]
        self._offer(m, segment, state)
        self._take_entries(m, segment, state)
        self._step(m, choice, format, short, segment, state)
        self._finish_entry(m, choice, segment, state)
        return m

    def _delta(self, m, state, base):
        """``delta`` (= entry.stamp - base) in two registered halves, ``low`` then ``high``
        with a registered borrow, in the cycles after the entry is loaded (``phase`` 3, 2), so
        that no wide subtraction lies on the path to the record and the seal decision.

        That is exact: while an entry is loaded, ``base`` only changes by a SYNC or event
        record of that entry, which makes it the entry's stamp (``zeroed``: delta is 0), and
        flushes are sent only while no entry is loaded. The cycles cost nothing, the link is
        far slower than the encoder. The halves are registered in every cycle, whatever the
        phase: used in exclusive phases, synthesis would share one subtractor between them,
        with input multiplexers in front of its carry chain."""
        entry, low, high = state.entry, state.low, state.high
        m.d.sync += [
            low.eq(entry.stamp[:DELTA_BITS] - base[:DELTA_BITS]),
            high.eq(entry.stamp[DELTA_BITS:] - base[DELTA_BITS:] - low[DELTA_BITS]),
        ]

    def _connect_parts(self, m, choice, format, segment, state):
        """The parts' inputs: the offered entry's records to choose from, the loaded entry and
        its delta to format, the stamp and ``start`` for the segment."""
        m.d.comb += [
            choice.present.eq(self.entries.payload.present.as_value()),
            choice.loss.eq(self.entries.payload.loss_valid),
            format.entry.eq(state.entry),
            format.choice.eq(choice.choice),
            format.delta.eq(Mux(state.zeroed, 0, Cat(state.low[:DELTA_BITS], state.high))),
            segment.stamp.eq(state.entry.stamp),
            segment.start.eq(self.start),
        ]

    def _offer(self, m, segment, state):
        """What is offered in this cycle, and which record that is when sent (to ``segment``).

        Written out as sums of flip-flops (no priority chain) so that ``valid`` and the
        updates a sent record makes are a few gates deep: a flush (TALLY, then SEAL) while no
        entry is loaded, or, with an entry loaded and its record ready (``phase`` 0), the
        TALLY and SEAL, or ``entry_record`` (the SYNC before the entry's record, or that
        record). Once the TALLY is out, the SEAL follows before anything else."""
        loaded, offering, kind = state.loaded, state.offering, state.kind
        record = self.records.payload
        offer_flush = Signal()
        offer_entry = Signal()
        m.d.comb += [
            offer_flush.eq(
                ~self.start
                & ~loaded
                & segment.opened
                & segment.in_segment
                & ((self.stopping & ~self.entries.valid) | segment.aged | segment.tallied)
            ),
            offer_entry.eq(~self.start & offering),
            self.records.valid.eq(offer_flush | offer_entry),
        ]
        # The payload from flip-flops only: the entry's SYNC or event record when that is what
        # it offers, else the TALLY or the SEAL (of a flush, or of the entry's seal).
        tallied = segment.tallied
        with m.If(offering & (kind.sync | kind.event)):
            m.d.comb += record.eq(state.entry_record)
        with m.Else():
            m.d.comb += [
                record.source.eq(Mux(tallied, Source.SEAL, Source.TALLY)),
                record.payload.eq(Mux(tallied, 0, segment.tally.as_value())),
            ]
        # Which record went out, each a short AND of flip-flops (the entry's `kind` is one).
        ready = self.records.ready
        m.d.comb += [
            segment.sent_tally.eq(ready & ((offer_flush & ~tallied) | (offer_entry & kind.tally))),
            segment.sent_seal.eq(ready & ((offer_flush & tallied) | (offer_entry & kind.seal))),
            segment.sent_sync.eq(ready & offer_entry & kind.sync),
            segment.sent_event.eq(ready & offer_entry & kind.event),
        ]

    def _take_entries(self, m, segment, state):
        """An entry is taken exactly when nothing else happens in the encoder: no start, no
        flush and no entry loaded (then the flush's ``stopping & ~valid`` is 0)."""
        m.d.comb += self.entries.ready.eq(
            ~self.start
            & ~state.loaded
            & ~(segment.opened & segment.in_segment & (segment.aged | segment.tallied))
        )

    def _step(self, m, choice, format, short, segment, state):
        """The entry's own work: delta, record, then its records one by one (``phase`` 3 to 0,
        and back to 2 after each record sent); a start sends a record on offer back to be
        looked at again; with no entry loaded, the next is taken. (A flush is only offered
        while no entry is loaded, and an entry is taken exactly with ``ready``.)"""
        phase = state.phase
        with m.If(state.loaded & ~self.start):
            with m.Switch(phase):
                with m.Case(3):
                    m.d.sync += phase.eq(2)
                with m.Case(2):
                    m.d.comb += choice.pick.eq(1)
                    m.d.sync += phase.eq(1)
                with m.Case(1):
                    self._prepare_record(m, choice, format, short, segment, state)
                with m.Case(0):
                    with m.If(self.records.ready):
                        # After a SYNC or an event record `base` is the entry's stamp.
                        m.d.sync += [
                            state.zeroed.eq(state.zeroed | state.kind.sync | state.kind.event),
                            phase.eq(2),
                            state.offering.eq(0),
                        ]
        with m.Elif(state.loaded):
            # A start: no segment is open, so a record waiting in `phase` 0 is looked at again.
            with m.If(state.offering):
                m.d.sync += [phase.eq(1), state.offering.eq(0)]
        with m.Elif(self.entries.valid & self.entries.ready):
            m.d.comb += choice.load.eq(1)
            m.d.sync += [
                state.entry.eq(self.entries.payload),
                state.zeroed.eq(0),
                phase.eq(3),
                state.loaded.eq(1),
            ]

    def _prepare_record(self, m, choice, format, short, segment, state):
        """``phase`` 1: the record the entry offers next (``entry_record``, the SYNC before
        the entry's record or that record) and, beside it, its ``kind`` (one-hot: the TALLY
        or the SEAL when the open segment must be sealed first (TALLY sent, segment full, or
        delta too far for an event record), a SYNC when no segment is open, else the event
        record) and whether it is the entry's last (``finishing``), all registered for the
        offer from ``phase`` 0. Nothing else can change them before the offer. (A start while
        the record waits sends the encoder back to ``phase`` 1, so they see its effect.)"""
        kind, entry_record = state.kind, state.entry_record
        tallied, opened = segment.tallied, segment.opened
        seal = opened & (segment.full | (~state.zeroed & state.high.any()))
        m.d.sync += [
            kind.seal.eq(tallied),
            kind.tally.eq(~tallied & seal),
            kind.sync.eq(~tallied & ~seal & ~opened),
            kind.event.eq(~tallied & ~seal & opened),
            state.finishing.eq(~tallied & ~seal & opened & choice.last),
            state.phase.eq(0),
            state.offering.eq(1),
        ]
        # The SYNC before the entry's record, or that record, in one register.
        # A short record (``short``, version 4) carries the delta alone.
        with m.If(segment.opened):
            m.d.sync += [
                entry_record.source.eq(format.source),
                entry_record.payload.eq(
                    Mux(short.short, format.delta[:DELTA_BITS], format.payload)
                ),
                entry_record.short.eq(short.short),
                entry_record.lead.eq(short.lead),
            ]
        with m.Else():
            m.d.sync += [
                entry_record.source.eq(Source.SYNC),
                entry_record.payload.eq(state.entry.stamp),
                entry_record.short.eq(0),
            ]

    def _finish_entry(self, m, choice, segment, state):
        """An event record of the entry sent moves the choice on; the entry's last record
        sent unloads it. (Only while it is loaded and no start comes: outside the chain of
        :meth:`_step`, so that these enables are a gate or two deep.)"""
        m.d.comb += choice.advance.eq(segment.sent_event)
        with m.If(self.records.ready & ~self.start & state.offering & state.finishing):
            m.d.sync += state.loaded.eq(0)


class _EntryState:
    """:class:`EventEncoder`'s registers for the entry being encoded, which its parts share.

    A loaded entry goes through ``phase`` 3 to 0, one step each, so that none is a long
    path: the delta's low half (3), its high half while the next record is chosen (2),
    whether the delta is too far for an event record, the record formatted (1), the record
    offered (0). Any record sent goes back to ``phase`` 2 for the next; a SYNC or event
    record sent makes the delta 0 (``zeroed``)."""

    def __init__(self, layout):
        self.entry = Signal(layout)
        self.loaded = Signal()  # `entry` holds records not yet sent
        # The delta's halves: the low half and its borrow (valid in phase 2), the high half
        # (valid in phase 1).
        self.low = Signal(DELTA_BITS + 1)
        self.high = Signal(STAMP_BITS - DELTA_BITS)
        self.zeroed = Signal()  # a record of the entry was sent: delta is 0
        self.phase = Signal(range(4))
        self.offering = Signal()  # `phase` 0 with an entry loaded, one flip-flop
        # The record on offer and what it is (EventEncoder._prepare_record).
        self.entry_record = Signal(record_layout)  # the SYNC or event record on offer
        self.kind = Signal(data.StructLayout({"tally": 1, "seal": 1, "sync": 1, "event": 1}))
        self.finishing = Signal()
