"""Records: the unit of the device-to-host stream (see ``latscope.protocol``)."""

from amaranth.hdl import *
from amaranth.lib import data, stream, wiring
from amaranth.lib.crc import catalog
from amaranth.lib.wiring import In, Out

from latscope.protocol import (CONT_BITS, LEAD_FLAG, LEAD_PAYLOAD_BITS, MAX_CONT,
                               SYNC_CONT, Source)

__all__ = ["record_layout", "RecordSerializer", "RecordArbiter"]

#: One record before serialisation. For SYNC records the serializer fills in the CRC field
#: (the low ``CRC_BITS`` of the payload must be 0).
record_layout = data.StructLayout({
    "source": 4,
    "payload": 64,
})


class RecordSerializer(wiring.Component):
    """Turns records into bytes and keeps the segment CRC.

    A record of payload *p* becomes a lead byte and the fewest continuation bytes that hold
    *p*; SYNC records always get ``SYNC_CONT`` continuation bytes and carry in their low
    ``CRC_BITS`` the CRC-16/XMODEM of every non-REPLY byte since the previous SYNC's lead byte.
    The CRC restarts with each SYNC's own lead byte; ``clear_crc`` restarts it empty (START).

    One record is taken only when the previous one is fully sent (one idle cycle between
    records), so the CRC register already holds every byte sent when a SYNC is taken.
    """

    records: In(stream.Signature(record_layout))
    bytes: Out(stream.Signature(8))
    clear_crc: In(1)

    def elaborate(self, platform):
        m = Module()
        m.submodules.crc = crc = catalog.CRC16_XMODEM(8).create()

        source = Signal(4)
        payload = Signal(64)
        cont = Signal(range(MAX_CONT + 1))     # continuation bytes of the record
        left = Signal(range(MAX_CONT + 2))     # bytes still to send, lead included
        busy = Signal()

        # Fewest continuation bytes that hold the incoming payload.
        needed = Signal.like(cont)
        incoming = self.records.payload
        # Later (higher n) assignments win, so this finds the highest non-empty group.
        for n in range(MAX_CONT):
            with m.If(incoming.payload >> (LEAD_PAYLOAD_BITS + CONT_BITS * n) != 0):
                m.d.comb += needed.eq(n + 1)

        is_sync = incoming.source == Source.SYNC
        m.d.comb += self.records.ready.eq(~busy)
        with m.If(self.records.valid & ~busy):
            m.d.sync += [
                busy.eq(1),
                source.eq(incoming.source),
                payload.eq(Mux(is_sync, incoming.payload | crc.crc, incoming.payload)),
                cont.eq(Mux(is_sync, SYNC_CONT, needed)),
                left.eq(Mux(is_sync, SYNC_CONT, needed) + 1),
            ]

        is_lead = left == cont + 1
        byte = Signal(8)
        with m.If(is_lead):
            m.d.comb += byte.eq(LEAD_FLAG | (source << LEAD_PAYLOAD_BITS)
                                | payload.bit_select(cont * CONT_BITS, LEAD_PAYLOAD_BITS))
        with m.Else():
            m.d.comb += byte.eq(payload.bit_select((left - 1).as_unsigned() * CONT_BITS, CONT_BITS))
        m.d.comb += [
            self.bytes.payload.eq(byte),
            self.bytes.valid.eq(busy),
        ]
        sent = busy & self.bytes.ready
        with m.If(sent):
            m.d.sync += left.eq(left - 1)
            with m.If(left == 1):
                m.d.sync += busy.eq(0)

        m.d.comb += [
            crc.data.eq(byte),
            crc.valid.eq(sent & (source != Source.REPLY)),
            crc.start.eq(self.clear_crc | (sent & is_lead & (source == Source.SYNC))),
        ]
        return m


class RecordArbiter(wiring.Component):
    """Merges two record streams; ``priority`` wins when both are valid. A record is one
    transfer, so records never interleave byte-wise."""

    priority: In(stream.Signature(record_layout))
    other: In(stream.Signature(record_layout))
    records: Out(stream.Signature(record_layout))

    def elaborate(self, platform):
        m = Module()
        with m.If(self.priority.valid):
            m.d.comb += [
                self.records.payload.eq(self.priority.payload),
                self.records.valid.eq(1),
                self.priority.ready.eq(self.records.ready),
            ]
        with m.Else():
            m.d.comb += [
                self.records.payload.eq(self.other.payload),
                self.records.valid.eq(self.other.valid),
                self.other.ready.eq(self.records.ready),
            ]
        return m
