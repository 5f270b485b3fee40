"""Turns FIFO entries into delta-coded event records and SYNC records."""

import operator
from functools import reduce

from amaranth.hdl import *
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from latscope.protocol import (DELTA_BITS, SEGMENT_MAX_EVENTS, SEQUENCE_BITS, STAMP_BITS,
                               Source, Tally, value_width)

from .records import record_layout

__all__ = ["EventEncoder"]


class EventEncoder(wiring.Component):
    """Delta-codes events into records, in segments: SYNC, events, TALLY, SEAL.

    Implements exactly the segment rules of ``latscope.protocol.StreamEncoder`` (version 2):

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
    """

    def __init__(self, layout, sources, *, marker_width=16, flush_after=1 << 16):
        self._layout = layout
        self._sources = dict(sources)
        self._marker_width = marker_width
        self._flush_after = flush_after
        super().__init__({
            "entries": In(stream.Signature(layout)),
            "records": Out(stream.Signature(record_layout)),
            "start": In(1),
            "stopping": In(1),
        })

    def _payload(self, m, source, delta, value):
        width = value_width(source, self._marker_width)
        return (delta[:DELTA_BITS] << width) | value[:width]

    def elaborate(self, platform):
        m = Module()
        entry = Signal(self._layout)
        loaded = Signal()                       # `entry` holds records not yet sent
        pending_loss = Signal()
        pending = Signal(len(self._sources))    # events of `entry` not yet sent, by source order
        base = Signal(STAMP_BITS)               # stamp the next delta counts from
        opened = Signal()                       # a segment is open: SYNC sent, not sealed
        tallied = Signal()                      # its TALLY is sent: the SEAL comes next
        segment_events = Signal(range(SEGMENT_MAX_EVENTS + 1))
        sent_count = Signal(SEQUENCE_BITS)      # event records sent since reset
        captured = Signal(SEQUENCE_BITS)        # event records sent since start
        age = Signal(range(self._flush_after + 1))   # cycles since the segment's first event
        aged = Signal()                         # age == flush_after
        in_segment = Signal()                   # segment_events != 0

        # `delta` (= entry.stamp - base) is computed in the cycles after the entry is loaded,
        # low half then high half with a registered borrow, then whether it is too far for an
        # event record (`phase` 3, 2, 1), before any record of the entry is offered; a record
        # sent makes delta 0 (`zeroed`) and goes back to `phase` 2 (choosing the next record).
        # That is exact: while an entry is loaded, `base` only changes by a record of that
        # entry being sent, which makes it the entry's stamp (delta 0), and flush SYNCs (which
        # keep `base`) are sent only while no entry is loaded. So no wide subtraction lies on
        # the path to the record and the SYNC decision; the cycles cost nothing, the link is
        # far slower than the encoder. The halves are registered in every cycle, whatever the
        # phase: used in exclusive phases, synthesis would share one subtractor between them,
        # with input multiplexers in front of its carry chain.
        low = Signal(DELTA_BITS + 1)            # low half and its borrow (valid in phase 2)
        high = Signal(STAMP_BITS - DELTA_BITS)  # high half (valid in phase 1)
        m.d.sync += [
            low.eq(entry.stamp[:DELTA_BITS] - base[:DELTA_BITS]),
            high.eq(entry.stamp[DELTA_BITS:] - base[DELTA_BITS:] - low[DELTA_BITS]),
        ]
        zeroed = Signal()                       # a record of the entry was sent: delta is 0
        delta = Mux(zeroed, 0, Cat(low[:DELTA_BITS], high))
        phase = Signal(range(4))
        offering = Signal()                     # `phase` 0 with an entry loaded, in one flip-flop
        full = Signal()                         # segment_events == SEGMENT_MAX_EVENTS

        record = self.records.payload

        # Which record of the entry goes next: the LOSS record, else the lowest pending event,
        # chosen in `phase` 2 (one-hot, registered in `choice`: bit 0 LOSS, bit 1 + i source
        # i), then formatted in `phase` 1 by an AND-OR of the formatted records, and offered
        # from `phase` 0, so that neither step is a long path. Beside the record, also from
        # `phase` 1: whether the open segment must be sealed first (`need_seal`: segment
        # full, or delta too far for an event record), whether a SYNC must go first
        # (`need_sync`: no segment open) and whether the record is the entry's last. (A start
        # while the record waits sends the encoder back to `phase` 1, so they see its effect.)
        source_list = list(self._sources)
        lowest_now = Signal(len(source_list))
        for index in range(len(source_list)):
            m.d.comb += lowest_now[index].eq(pending[index] & ~pending[:index].any()
                                             if index else pending[0])
        choice = Signal(1 + len(source_list))
        lowest = choice[1:]                     # the pending event the record is of, if any
        values = [(Source.LOSS, Cat(entry.loss_source, entry.loss_count))]
        values += [(source, entry.value[source.name]) for source in source_list]
        event_source = Signal(4)
        payload = Signal(64)
        m.d.comb += [
            event_source.eq(reduce(operator.or_, [Mux(choice[index], source, 0)
                                                  for index, (source, _) in enumerate(values)])),
            payload.eq(reduce(operator.or_,
                              [Mux(choice[index], self._payload(m, source, delta, value), 0)
                               for index, (source, value) in enumerate(values)])),
        ]
        event_record = Signal(record_layout)
        need_seal = Signal()
        need_sync = Signal()
        last_record = Signal()
        tally = Signal(Tally)
        m.d.comb += [
            tally.count.eq(segment_events),
            tally.sent.eq(sent_count),
            tally.captured.eq(captured),
        ]

        # What is offered in this cycle, written out as sums of flip-flops (no priority chain)
        # so that `valid` and the updates a sent record makes are a few gates deep:
        # a flush (TALLY, then SEAL) while no entry is loaded, or, with an entry loaded and
        # its record ready (`phase` 0), the TALLY and SEAL or the SYNC before it, or its
        # record. Once the TALLY is out, the SEAL follows before anything else.
        offer_flush = Signal()
        offer_entry = Signal()
        m.d.comb += [
            offer_flush.eq(~self.start & ~loaded & opened & in_segment
                           & ((self.stopping & ~self.entries.valid) | aged | tallied)),
            offer_entry.eq(~self.start & offering),
            self.records.valid.eq(offer_flush | offer_entry),
        ]
        sealing = Signal()                      # the offer is the TALLY or the SEAL
        m.d.comb += sealing.eq(offer_flush | tallied | need_seal)
        with m.If(sealing):
            m.d.comb += [
                record.source.eq(Mux(tallied, Source.SEAL, Source.TALLY)),
                record.payload.eq(Mux(tallied, 0, tally.as_value())),
            ]
        with m.Elif(need_sync):
            m.d.comb += [record.source.eq(Source.SYNC), record.payload.eq(entry.stamp)]
        with m.Else():
            m.d.comb += record.eq(event_record)
        sent = Signal()
        sent_tally = Signal()
        sent_seal = Signal()
        sent_sync = Signal()
        sent_event = Signal()
        m.d.comb += [
            sent.eq(self.records.ready & (offer_flush | offer_entry)),
            sent_tally.eq(sent & sealing & ~tallied),
            sent_seal.eq(sent & tallied),
            sent_sync.eq(sent & ~sealing & need_sync),
            sent_event.eq(sent & ~sealing & ~need_sync),
        ]

        # An entry is taken exactly when nothing else happens in the encoder: no start, no
        # flush and no entry loaded (then the flush's `stopping & ~valid` is 0).
        m.d.comb += self.entries.ready.eq(
            ~self.start & ~loaded & ~(opened & in_segment & (aged | tallied)))

        with m.If(self.start):
            m.d.sync += [opened.eq(0), tallied.eq(0), segment_events.eq(0), in_segment.eq(0),
                         full.eq(0), captured.eq(0)]
        with m.Elif(sent_tally):
            m.d.sync += tallied.eq(1)
        with m.Elif(sent_seal):
            m.d.sync += [
                opened.eq(0),
                tallied.eq(0),
                segment_events.eq(0),
                in_segment.eq(0),
                full.eq(0),
            ]
        with m.Elif(sent_sync):
            m.d.sync += [base.eq(entry.stamp), opened.eq(1)]
        with m.Elif(sent_event):
            m.d.sync += [
                base.eq(entry.stamp),
                segment_events.eq(segment_events + 1),
                in_segment.eq(1),
                full.eq(segment_events == SEGMENT_MAX_EVENTS - 1),
                captured.eq(captured + 1),
            ]
        with m.If(sent_event):
            m.d.sync += sent_count.eq(sent_count + 1)

        # The entry's own work: delta, record, then its records one by one. (A flush is only
        # offered while no entry is loaded, and an entry is taken exactly with `ready`.)
        with m.If(loaded & ~self.start):
            with m.Switch(phase):
                with m.Case(3):
                    m.d.sync += phase.eq(2)
                with m.Case(2):
                    m.d.sync += [
                        choice.eq(Mux(pending_loss, 1, Cat(C(0, 1), lowest_now))),
                        phase.eq(1),
                    ]
                with m.Case(1):
                    m.d.sync += [
                        need_seal.eq(opened & (full | (~zeroed & high.any()))),
                        need_sync.eq(~opened),
                        last_record.eq(Mux(pending_loss, pending == 0, pending == lowest)),
                        event_record.source.eq(event_source),
                        event_record.payload.eq(payload),
                        phase.eq(0),
                        offering.eq(1),
                    ]
                with m.Case(0):
                    with m.If(self.records.ready):
                        # After a SYNC or an event record `base` is the entry's stamp.
                        m.d.sync += [zeroed.eq(zeroed | ~sealing), phase.eq(2),
                                     offering.eq(0)]
        with m.Elif(loaded):
            # A start: no segment is open, so a record waiting in `phase` 0 is looked at again.
            with m.If(offering):
                m.d.sync += [phase.eq(1), offering.eq(0)]
        with m.Elif(self.entries.valid & self.entries.ready):
            m.d.sync += [
                entry.eq(self.entries.payload),
                zeroed.eq(0),
                phase.eq(3),
                loaded.eq(1),
                pending.eq(self.entries.payload.present.as_value()),
                pending_loss.eq(self.entries.payload.loss_valid),
            ]
        # A record of the entry sent (only while it is loaded and no start comes: outside
        # the chain above, so that these enables are a gate or two deep).
        with m.If(sent_event):
            with m.If(pending_loss):
                m.d.sync += pending_loss.eq(0)
            with m.Else():
                m.d.sync += pending.eq(pending & ~lowest)
            with m.If(last_record):
                m.d.sync += loaded.eq(0)

        # The age of the open segment saturates at the limit until the flush is sent.
        with m.If(~in_segment):
            m.d.sync += [age.eq(0), aged.eq(0)]
        with m.Elif(~aged):
            m.d.sync += [age.eq(age + 1), aged.eq(age == self._flush_after - 1)]
        return m
