"""Turns FIFO entries into delta-coded event records and SYNC records."""

from amaranth.hdl import *
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from latscope.protocol import (CRC_BITS, DELTA_BITS, SEGMENT_MAX_EVENTS, STAMP_BITS, Source,
                               value_width)

from .records import record_layout

__all__ = ["EventEncoder"]


class EventEncoder(wiring.Component):
    """Delta-codes events into records, opening segments with SYNC records.

    Implements exactly the segment rules of ``latscope.protocol.StreamEncoder``:

    * a SYNC record (time base = the event's stamp) comes before the first event after
      ``start``, before an event whose delta would not fit in ``DELTA_BITS``, and before the
      event that would make a segment longer than ``SEGMENT_MAX_EVENTS``;
    * within an entry the LOSS record goes first, then events in source order;
    * an open segment is closed by a SYNC with the unchanged time base (a *flush*) once
      ``flush_after`` cycles have passed since its first event record, before the next entry
      is taken, or at once when ``stopping`` and the FIFO is empty. The host can verify events
      only when their segment is closed, so this bounds how late they reach it, whatever the
      event rate.

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
        based = Signal()                        # a SYNC has been sent since start
        segment_events = Signal(range(SEGMENT_MAX_EVENTS + 1))
        age = Signal(range(self._flush_after + 1))   # cycles since the segment's first event
        aged = Signal()                         # age == flush_after
        in_segment = Signal()                   # segment_events != 0

        # `delta` (= entry.stamp - base) is computed in the cycles after the entry is loaded,
        # low half then high half with a registered borrow, then whether it is too far for an
        # event record (`phase` 3, 2, 1), before any record of the entry is offered; a record
        # sent leaves delta 0 and goes back to `phase` 1. That is exact: while an entry is loaded, `base`
        # only changes by a record of that entry being sent, which makes it the entry's stamp
        # (delta 0), and flush SYNCs (which keep `base`) are sent only while no entry is
        # loaded. So no wide subtraction lies on the path to the record and the SYNC decision;
        # the three cycles cost nothing, the link is far slower than the encoder.
        delta = Signal(STAMP_BITS)
        borrow = Signal()
        phase = Signal(range(4))
        low = Signal(DELTA_BITS + 1)
        m.d.comb += low.eq(entry.stamp[:DELTA_BITS] - base[:DELTA_BITS])
        too_far = Signal()                      # delta >= 2 ** DELTA_BITS
        full = Signal()                         # segment_events == SEGMENT_MAX_EVENTS
        need_sync = ~based | full | too_far     # all three from flip-flops

        record = self.records.payload
        sent = self.records.valid & self.records.ready

        # Which record of the entry goes next: the LOSS record, else the lowest pending event.
        source_list = list(self._sources)
        event_source = Signal(4)
        event_value = Signal(64)
        lowest_now = Signal(len(source_list))
        m.d.comb += lowest_now.eq(pending & -pending)     # isolates the lowest set bit
        with m.Switch(lowest_now):
            for index, source in enumerate(source_list):
                with m.Case(1 << index):
                    m.d.comb += [
                        event_source.eq(source),
                        event_value.eq(entry.value[source.name]),
                    ]
        with m.If(pending_loss):
            m.d.comb += [
                event_source.eq(Source.LOSS),
                event_value.eq(Cat(entry.loss_source, entry.loss_count)),
            ]

        payload = Signal(64)
        with m.Switch(event_source):
            for source in [Source.LOSS, *source_list]:
                with m.Case(source):
                    m.d.comb += payload.eq(self._payload(m, source, delta, event_value))
        # The next event record, registered in the cycle before it is offered (`phase` 1,
        # which follows every load and every record sent), so that its selection and
        # formatting are not on the path to the stream.
        lowest = Signal.like(lowest_now)
        event_record = Signal(record_layout)

        def send_sync(time_base):
            m.d.comb += [
                self.records.valid.eq(1),
                record.source.eq(Source.SYNC),
                record.payload.eq(time_base << CRC_BITS),
            ]
            with m.If(sent):
                m.d.sync += [
                    base.eq(time_base),
                    based.eq(1),
                    segment_events.eq(0),
                    in_segment.eq(0),
                    full.eq(0),
                ]

        with m.If(self.start):
            m.d.sync += [based.eq(0), segment_events.eq(0), in_segment.eq(0), full.eq(0)]
        with m.Elif(based & in_segment & ~loaded &
                    ((self.stopping & ~self.entries.valid) | aged)):
            send_sync(base)
        with m.Elif(loaded & (phase == 3)):
            m.d.sync += [delta[:DELTA_BITS].eq(low[:DELTA_BITS]), borrow.eq(low[DELTA_BITS]),
                         phase.eq(2)]
        with m.Elif(loaded & (phase == 2)):
            m.d.sync += [delta[DELTA_BITS:].eq(entry.stamp[DELTA_BITS:] - base[DELTA_BITS:] - borrow),
                         phase.eq(1)]
        with m.Elif(loaded & (phase == 1)):
            m.d.sync += [
                too_far.eq(delta[DELTA_BITS:].any()),
                lowest.eq(lowest_now),
                event_record.source.eq(event_source),
                event_record.payload.eq(payload),
                phase.eq(0),
            ]
        with m.Elif(loaded):
            with m.If(sent):
                m.d.sync += [delta.eq(0), too_far.eq(0), phase.eq(1)]
            with m.If(need_sync):
                send_sync(entry.stamp)
            with m.Else():
                m.d.comb += [
                    self.records.valid.eq(1),
                    record.eq(event_record),
                ]
                with m.If(sent):
                    m.d.sync += [
                        base.eq(entry.stamp),
                        segment_events.eq(segment_events + 1),
                        in_segment.eq(1),
                        full.eq(segment_events == SEGMENT_MAX_EVENTS - 1),
                    ]
                    with m.If(pending_loss):
                        m.d.sync += pending_loss.eq(0)
                        with m.If(pending == 0):
                            m.d.sync += loaded.eq(0)
                    with m.Else():
                        m.d.sync += pending.eq(pending & ~lowest)
                        with m.If(pending == lowest):
                            m.d.sync += loaded.eq(0)
        with m.Elif(self.entries.valid):
            m.d.comb += self.entries.ready.eq(1)
            m.d.sync += [
                entry.eq(self.entries.payload),
                phase.eq(3),
                loaded.eq(1),
                pending.eq(self.entries.payload.present.as_value()),
                pending_loss.eq(self.entries.payload.loss_valid),
            ]

        # The age of the open segment saturates at the limit until the flush is sent.
        with m.If(~in_segment):
            m.d.sync += [age.eq(0), aged.eq(0)]
        with m.Elif(~aged):
            m.d.sync += [age.eq(age + 1), aged.eq(age == self._flush_after - 1)]
        return m
