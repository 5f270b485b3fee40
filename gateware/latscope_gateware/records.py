"""Records: the unit of the device-to-host stream (see ``latscope_defs.protocol``)."""

from amaranth.hdl import *
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.crc import catalog
from amaranth.lib.wiring import In, Out

from latscope_defs.protocol import (
    CONT_BITS,
    GATEWARE_VERSION,
    LEAD_PAYLOAD_BITS,
    MAX_CONT,
    SHORT_LEADS,
    Source,
    fixed_length,
    lead_bytes,
    lead_payload_bits,
    short_delta_bits,
)

__all__ = ["record_layout", "RecordSerializer", "RecordArbiter", "WordCrc32"]

#: One record before serialisation. For SEAL records the serializer fills in the CRC-32
#: (the payload must be 0). ``short``: a short record (version 4), whose lead byte is
#: ``lead`` (of a ``protocol.SHORT_LEADS`` layout, its delta bits 0) and whose payload is
#: the delta; ``source`` is the event's all the same.
record_layout = data.StructLayout(
    {
        "source": 4,
        "payload": 64,
        "short": 1,
        "lead": 8,
    }
)

#: The numbers of payload bits a lead byte can hold in the gateware's protocol version:
#: a long record's (``protocol.lead_payload_bits``), a short record's delta bits.
_LEAD_BITS = sorted(
    {lead_payload_bits(s, GATEWARE_VERSION) for s in Source}
    | ({short_delta_bits(layout) for layout in SHORT_LEADS} if GATEWARE_VERSION >= 4 else set())
)


class WordCrc32(wiring.Component):
    """CRC-32/ISO-HDLC of bytes, with the ports and timing of
    ``amaranth.lib.crc.catalog.CRC32_ISO_HDLC(8).create()`` (``start``, ``data``, ``valid``,
    ``crc``), computed the way software does: the register holds the CRC bit-reflected, and
    a byte is one lookup in a 256-word table and a shift,
    ``register = TABLE[(register ^ byte) & 0xFF] ^ (register >> 8)``. The same values; for a
    simulator that evaluates every signal every cycle (Verilator) a few word operations,
    where Amaranth's form is 32 XOR trees. Boards use Amaranth's (no table memory, shallow
    logic)."""

    start: In(1)
    data: In(8)
    valid: In(1)
    crc: Out(32)

    #: The polynomial 0x04C11DB7 bit-reflected; initial value and final XOR are all ones.
    REFLECTED_POLYNOMIAL = 0xEDB88320
    ONES = 0xFFFFFFFF

    @classmethod
    def table(cls):
        """The CRC register after eight zero bits from ``[i]`` (the byte-wise table)."""
        rows = []
        for value in range(256):
            for _ in range(8):
                value = (value >> 1) ^ (cls.REFLECTED_POLYNOMIAL if value & 1 else 0)
            rows.append(value)
        return rows

    def elaborate(self, platform):
        m = Module()
        m.submodules.table = table = memory.Memory(shape=32, depth=256, init=self.table())
        lookup = table.read_port(domain="comb")
        register = Signal(32, init=self.ONES)
        current = Mux(self.start, self.ONES, register)
        m.d.comb += lookup.addr.eq((current ^ self.data)[:8])
        with m.If(self.valid):
            m.d.sync += register.eq(lookup.data ^ (current >> 8))
        with m.Elif(self.start):
            m.d.sync += register.eq(self.ONES)
        m.d.comb += self.crc.eq(register ^ self.ONES)
        return m


class RecordSerializer(wiring.Component):
    """Turns records into bytes and keeps the segment CRC.

    A record of payload *p* becomes a lead byte and the fewest continuation bytes that hold
    *p*; the segment records (SYNC, TALLY, SEAL) have their fixed lengths
    (``protocol.fixed_length``), and a SEAL carries the CRC-32/ISO-HDLC of every non-REPLY
    byte from its segment's SYNC lead byte to the TALLY's last byte. The CRC restarts with each
    SYNC's own lead byte; ``clear_crc`` restarts it empty (START).

    One record is taken only when the previous one is fully sent (one idle cycle between
    records), so the CRC register holds every byte sent when a SEAL's CRC is filled in, in the
    cycle after it is taken (the CRC unit's inputs are registered: it sees a byte, and
    ``clear_crc``, a cycle late). Its
    length is worked out in the cycle after it is taken, from the registered payload, and its
    lead byte is picked into a register in the cycle after that, so the lead byte is offered
    from the third cycle on (the link is far slower than that).

    ``word_crc``: the CRC unit is :class:`WordCrc32` (``verilog_export --word-xor``) instead of
    Amaranth's; the same bytes.
    """

    records: In(stream.Signature(record_layout))
    bytes: Out(stream.Signature(8))
    clear_crc: In(1)

    def __init__(self, *, word_crc=False):
        self._word_crc = word_crc
        super().__init__()

    def elaborate(self, platform):
        m = Module()
        m.submodules.crc = crc = (
            WordCrc32() if self._word_crc else catalog.CRC32_ISO_HDLC(8).create()
        )

        source = Signal(4)
        payload = Signal(64)
        lead = Signal(8)  # the lead byte's fixed bits
        cont = Signal(range(MAX_CONT + 1))  # continuation bytes of the record
        left = Signal(range(MAX_CONT + 2))  # bytes still to send, lead included
        busy = Signal()
        sizing = Signal()  # the record was taken in the previous cycle

        # Fewest continuation bytes that hold the payload, and one more (the bytes to send):
        # the payload needs continuation byte n + 1 iff it has a bit above the lead byte's and
        # n continuation bytes' worth. Those tests (wide ORs) are registered as the record is
        # taken; they form a thermometer code, whose top is found as a one-hot (no chain of
        # priority multiplexers) and encoded, for both counts, with no adder.
        above = Signal(MAX_CONT)
        top = [
            above[n] & ~above[n + 1] if n + 1 < MAX_CONT else above[n] for n in range(MAX_CONT)
        ]  # top[n]: exactly n + 1 continuation bytes

        def encoded(offset, shape):
            # The number of continuation bytes plus `offset`, in binary.
            cases = [(~above[0], offset)] + [(top[n], n + 1 + offset) for n in range(MAX_CONT)]
            count = Signal(shape)
            for bit in range(len(count)):
                m.d.comb += count[bit].eq(
                    Cat(*[chosen for chosen, value in cases if value >> bit & 1]).any()
                )
            return count

        needed = encoded(0, cont.shape())
        needed_bytes = encoded(1, left.shape())

        incoming = self.records.payload
        m.d.comb += self.records.ready.eq(~busy)
        is_sync = source == Source.SYNC
        is_seal = source == Source.SEAL
        # Fixed lengths by source (one-hot over the few fixed sources, then an AND-OR).
        fixed = {Source(s): fixed_length(s) - 1 for s in (Source.SYNC, Source.TALLY, Source.SEAL)}
        is_fixed = Signal()
        fixed_cont = Signal.like(cont)
        m.d.comb += is_fixed.eq(Cat(source == s for s in fixed).any())
        for s, n in fixed.items():
            with m.If(source == s):
                m.d.comb += fixed_cont.eq(n)
        lead_fixed, lead_bits = self._lead(m, self.records.payload)
        # above[n] for each number of lead payload bits, the record's chosen.
        above_for = {
            bits: Cat(incoming.payload[bits + CONT_BITS * n :] != 0 for n in range(MAX_CONT))
            for bits in _LEAD_BITS
        }
        with m.If(self.records.valid & ~busy):
            m.d.sync += [
                busy.eq(1),
                sizing.eq(1),
                source.eq(incoming.source),
                payload.eq(incoming.payload),
                lead.eq(lead_fixed),
            ]
            for bits, thermometer in above_for.items():
                with m.If(lead_bits == bits):
                    m.d.sync += above.eq(thermometer)
        with m.If(sizing):
            # The CRC goes into a SEAL here, not when it is taken: the CRC unit sees each byte
            # a cycle after it is sent (its inputs are registered).
            m.d.sync += [
                sizing.eq(0),
                cont.eq(Mux(is_fixed, fixed_cont, needed)),
                left.eq(Mux(is_fixed, fixed_cont + 1, needed_bytes)),
            ]
            with m.If(is_seal):
                m.d.sync += payload.eq(crc.crc)

        # The byte on offer is a register, so that the CRC and the link see a flip-flop: the
        # lead byte is picked out of the payload in the cycle after the record's length is
        # known (`leading`), each continuation byte when the byte before it is sent.
        is_lead = left == cont + 1
        byte = Signal(8)
        leading = Signal()
        m.d.sync += leading.eq(sizing)
        sent = busy & ~sizing & ~leading & self.bytes.ready
        with m.If(leading):
            # The payload has no bit above the lead byte's share (the fewest continuation
            # bytes, or a fixed length that holds it), so its top group ORs in.
            m.d.sync += byte.eq(lead | payload.bit_select(cont * CONT_BITS, LEAD_PAYLOAD_BITS))
        with m.Elif(sent):
            m.d.sync += byte.eq(payload.bit_select((left - 2).as_unsigned() * CONT_BITS, CONT_BITS))
        m.d.comb += [
            self.bytes.payload.eq(byte),
            self.bytes.valid.eq(busy & ~sizing & ~leading),
        ]
        with m.If(sent):
            m.d.sync += left.eq(left - 1)
            with m.If(left == 1):
                m.d.sync += busy.eq(0)

        m.d.sync += [
            crc.data.eq(byte),
            crc.valid.eq(sent & (source != Source.REPLY)),
            crc.start.eq(self.clear_crc | (sent & is_lead & is_sync)),
        ]
        return m

    @staticmethod
    def _lead(m, record):
        """The fixed bits of ``record``'s lead byte and the number of payload bits it holds:
        a long record's by its source (``protocol.lead_bytes``, ``lead_payload_bits``), a
        short record's by its layout."""
        fixed = Signal(8)
        bits = Signal(range(max(_LEAD_BITS) + 1))
        with m.If(record.short):
            m.d.comb += fixed.eq(record.lead)
            for layout, kind in SHORT_LEADS.items():
                with m.If(record.lead[layout.as_shape()["kind"].offset :] == kind):
                    m.d.comb += bits.eq(short_delta_bits(layout))
        with m.Else():
            with m.Switch(record.source):
                for s in Source:
                    with m.Case(s):
                        m.d.comb += [
                            fixed.eq(lead_bytes(s, GATEWARE_VERSION)[0]),
                            bits.eq(lead_payload_bits(s, GATEWARE_VERSION)),
                        ]
        return fixed, bits


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
