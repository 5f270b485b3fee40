"""The latscope wire protocol in code: the one definition the gateware and the host share.

``docs/protocol.md`` describes every byte; this module is that description in code: record
sources and payloads, the segment records (SYNC, TALLY, SEAL), commands and replies, the SUMP
device mode, and :class:`StreamEncoder`, the reference encoder (versions 1 to 4; the gateware
writes ``GATEWARE_VERSION``). The gateware imports its constants and message layouts and the
host's parser uses the same ones, so the two sides cannot drift apart.
"""

from collections.abc import Callable
from enum import IntEnum, IntFlag
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import numpy.typing as npt

from .fields import Array, Fields

if TYPE_CHECKING:
    from amaranth.lib import data

# The Amaranth structs of the layouts (``LossValue``, ``IrqConfig`` ...) and the tables of
# them are module attributes made on first use (``__getattr__``), not listed here.
__all__ = [
    "VERSION",
    "VERSIONS",
    "GATEWARE_VERSION",
    "MAGIC",
    "Source",
    "EDGE_SOURCES",
    "value_width",
    "LEAD_FLAG",
    "LEAD_PAYLOAD_BITS",
    "lead_payload_bits",
    "lead_source",
    "lead_bytes",
    "REPLY_LEAD",
    "short_lead",
    "SHORT_MARKER_LEAD",
    "SHORT_BUS_LEAD",
    "SHORT_EDGE_LEAD",
    "SHORT_LEAD_KINDS",
    "SHORT_VALUE_LEADS",
    "SHORT_EDGE_SOURCES",
    "HISTORY",
    "short_delta_bits",
    "short_reference",
    "encode_short_value",
    "encode_short_edge",
    "CONT_BITS",
    "MAX_CONT",
    "SYNC_CONT",
    "fixed_length",
    "DELTA_BITS",
    "SEGMENT_MAX_EVENTS",
    "STAMP_BITS",
    "CRC_BITS",
    "LOSS_COUNT_BITS",
    "SEQUENCE_BITS",
    "TALLY_PAYLOAD",
    "HOLE_SOURCE",
    "HoleCount",
    "HOLE_VALUE",
    "hole_value",
    "hole_count",
    "hole_kind",
    "hole_restart",
    "BUS_VALUE_BITS",
    "memory_bus_write",
    "LOSS_VALUE",
    "loss_value",
    "loss_source",
    "loss_count",
    "IRQ_DELAY_BITS",
    "IRQ_VALUE",
    "irq_value",
    "irq_level",
    "irq_triggered",
    "irq_delay",
    "crc16",
    "crc32",
    "record_length",
    "encode_record",
    "event_payload",
    "sync_payload",
    "tally_payload",
    "Command",
    "ClockCheck",
    "TRIGGER_SOURCES",
    "IDENTIFY_REPLY",
    "STATUS_REPLY",
    "IRQ_CONFIG",
    "IRQ_FLAGS",
    "START_ARGS",
    "ECHO_PATTERN",
    "ECHO_REPLY",
    "TRIGGER_CONFIG",
    "TRIGGER_FLAGS",
    "COMMAND_ARG_FIELDS",
    "REPLY_FIELDS",
    "OLDER_REPLY_SIZES",
    "reply_sizes",
    "UNKNOWN_COMMAND_REPLY",
    "StreamEncoder",
    "SumpCommand",
    "SUMP_LONG_COMMAND",
    "SUMP_ARG_BYTES",
    "SUMP_MODE_ENTRY",
    "SUMP_ID_REPLY",
    "SUMP_REFERENCE_HZ",
    "SUMP_GROUP_BITS",
    "SUMP_MAX_GROUPS",
    "SUMP_PROTOCOL_VERSION",
    "SumpFlags",
    "SumpMetadataKey",
    "sump_metadata",
]

#: Protocol version; the identify reply carries it. Bump on any incompatible change.
VERSION = 4
#: Versions the host reads (versions 1 to 3: capture files written before version 4, a
#: version 3 device; a version 2 device, which has no trigger).
VERSIONS = (1, 2, 3, 4)
#: The version the gateware's encoder writes and its IDENTIFY reply gives: the current one. (A
#: change made on the host first sets it to the version before until the gateware follows, as
#: version 4 did; the gateware and its tests use this name.)
GATEWARE_VERSION = VERSION
#: First four bytes of the identify reply payload.
MAGIC = b"LTSC"


class Source(IntEnum):
    """Record source: the 4-bit field of a lead byte."""

    MARKER = 0  #: trace-port marker; value = sampled data bits
    BUS = 1  #: write into the bus trace window; value = written data (32 bits)
    IRQ = 2  #: IRQ output edge; value: IrqValue (v3; v1, v2: 1 asserting, 0 releasing edge)
    LOSS = 3  #: events lost to a full FIFO; value: LossValue (count << 4 | lost source)
    EDGE0 = 4  #: edge channel 0 .. 7 (sources 4..11); value = new pin level
    EDGE1 = 5
    EDGE2 = 6
    EDGE3 = 7
    EDGE4 = 8
    EDGE5 = 9
    EDGE6 = 10
    EDGE7 = 11
    TALLY = 12  #: closes a segment's CRC domain (v2); payload = :class:`Tally`
    SEAL = 13  #: ends a segment (v2); payload = CRC-32 of SYNC .. TALLY
    REPLY = 14  #: one byte of a command reply; payload = the byte (no time)
    SYNC = 15  #: opens a segment; payload = stamp (48 bits) (v1: << 16 | CRC-16)


EDGE_SOURCES = tuple(Source(Source.EDGE0 + n) for n in range(8))

LEAD_FLAG = 0x80
#: Payload bits in the lead byte of a long record, versions 1 to 3 (``lead_payload_bits``).
LEAD_PAYLOAD_BITS = 3
CONT_BITS = 7
#: Longest record: a lead byte and nine continuation bytes hold 66 payload bits.
MAX_CONT = 9
#: Version 1 SYNC records have this many continuation bytes (10 bytes in all).
SYNC_CONT = 9
#: Continuation bytes of the fixed-length records, per protocol version.
_FIXED_CONT = {
    1: {15: SYNC_CONT},
    2: {15: 7, 12: 8, 13: 5},  # SYNC 8 bytes (52 bits), TALLY 9 (59), SEAL 6 (38)
    3: {15: 7, 12: 8, 13: 5},  # as version 2
    4: {15: 7, 12: 8, 13: 5},  # as version 2, with 51, 58 and 37 bits
}


def fixed_length(source: int, version: int | None = None) -> int | None:
    """Bytes of a record of ``source`` if that source has a fixed length, else None."""
    cont = _FIXED_CONT[VERSION if version is None else version].get(int(source))
    return None if cont is None else 1 + cont


#: An event's delta (cycles since the previous event or SYNC) is below ``2 ** DELTA_BITS``;
#: a longer gap makes the encoder start a new segment first.
DELTA_BITS = 24
#: A segment holds at most this many event records before the encoder closes it.
SEGMENT_MAX_EVENTS = 255
#: Width of the time-stamp counter and of the stamp in a SYNC record; the host unwraps it.
STAMP_BITS = 48
#: Width of the version 1 SYNC's CRC-16 (version 2's SEAL carries a CRC-32).
CRC_BITS = 16
#: Width of the sequence numbers in a TALLY record.
SEQUENCE_BITS = 24
#: Width of the lost-event count in a LOSS record.
LOSS_COUNT_BITS = 32


LOSS_VALUE = Fields(
    "LossValue",
    {
        "source": 4,  # the source (Source) that lost events
        "count": LOSS_COUNT_BITS,  # how many were lost since its previous LOSS record
    },
    """The value of a LOSS record: how many events of which source the FIFO lost.""",
)
_LOSS_SOURCE = LOSS_VALUE["source"]
_LOSS_COUNT = LOSS_VALUE["count"]
_LOSS_SOURCE_MASK = (1 << _LOSS_SOURCE.width) - 1
_LOSS_COUNT_MASK = (1 << _LOSS_COUNT.width) - 1

#: A LOSS value or a numpy array of them: the field accessors take either.
_Values = TypeVar("_Values", int, npt.NDArray[np.integer])


def loss_value(source: int, count: int) -> int:
    """The value of a LOSS record (an int)."""
    return (int(count) << _LOSS_COUNT.offset) | (int(source) << _LOSS_SOURCE.offset)


def loss_source(value: _Values) -> _Values:
    """The lost source of LOSS values (an int or a numpy array of them)."""
    return (value >> _LOSS_SOURCE.offset) & _LOSS_SOURCE_MASK


def loss_count(value: _Values) -> _Values:
    """The lost-event count of LOSS values (an int or a numpy array of them)."""
    return (value >> _LOSS_COUNT.offset) & _LOSS_COUNT_MASK


#: Bits of an IRQ edge's trigger delay (capture cycles, up to 16383: 131 us at 125 MHz), in
#: :class:`IrqValue` and in :class:`TriggerConfig`'s ``start``, ``stop``, ``step`` and ``hold``.
#: (An IRQ value of 16 bits, like a marker's, and a TriggerConfig as long as IrqConfig keep
#: the encoder's record multiplexer and the command register as they were.)
IRQ_DELAY_BITS = 14


IRQ_VALUE = Fields(
    "IrqValue",
    {
        "level": 1,  # 1: asserting edge, 0: releasing edge (whatever the polarity)
        "triggered": 1,  # the edge is one of a trigger's firing (docs/protocol.md)
        "delay": IRQ_DELAY_BITS,  # that firing's delay, capture cycles (0 if not triggered)
    },
    """The value of an IRQ record (version 3): the edge, and the firing of the trigger that
    made it. An edge of the periodic generator has ``triggered`` 0 and ``delay`` 0, so its
    value is the level alone, as in versions 1 and 2.""",
)


def irq_value(level: int, triggered: int = 0, delay: int = 0) -> int:
    """The value of an IRQ record (an int)."""
    return IRQ_VALUE.pack(level=level, triggered=triggered, delay=delay)


def _irq_field(name: str, value: _Values) -> _Values:
    result: _Values = IRQ_VALUE.get(name, value)
    return result


def irq_level(value: _Values) -> _Values:
    """The level of IRQ values (ints or a numpy array of them, any version): 1 asserting."""
    return _irq_field("level", value)


def irq_triggered(value: _Values) -> _Values:
    """Whether IRQ values are of a trigger's firing (ints or a numpy array of them)."""
    return _irq_field("triggered", value)


def irq_delay(value: _Values) -> _Values:
    """The trigger delay of IRQ values, capture cycles (ints or a numpy array of them)."""
    return _irq_field("delay", value)


#: Bits of a BUS event's value, whichever front end makes it.
BUS_VALUE_BITS = 32


def memory_bus_write(data_width: int, address_bits: int) -> "data.StructLayout":
    """The value of a BUS event from an asynchronous memory bus (docs/membus.md): the written
    data in the low bits, the write's address (its pins) right above, zero above both, in
    the 32 bits of every BUS value. So a 16-bit marker stored to any address has the low 16
    bits the simulated bus window's event has (the marker, zero-extended), and on an 8-bit
    bus a store of the marker's low byte to address ``marker >> 8`` does too."""
    if data_width + address_bits > BUS_VALUE_BITS:
        raise ValueError(
            f"{data_width} data and {address_bits} address bits exceed a BUS value's "
            f"{BUS_VALUE_BITS}"
        )
    from amaranth.lib import data

    return data.StructLayout({"data": data_width, "address": address_bits})


#: Value width of the fixed-width sources; MARKER's width comes from the identify reply.
_FIXED_VALUE_WIDTH = {
    Source.BUS: BUS_VALUE_BITS,
    Source.IRQ: IRQ_VALUE.size,
    Source.LOSS: LOSS_VALUE.size,
    **{source: 1 for source in EDGE_SOURCES},
}


TALLY_PAYLOAD = Fields(
    "Tally",
    {
        "captured": SEQUENCE_BITS,  # event records sent since START
        "sent": SEQUENCE_BITS,  # event records sent since power-up (never reset)
        "count": 8,  # event records in this segment (1 .. SEGMENT_MAX_EVENTS)
    },
    """Payload of a TALLY record (version 2): what the segment it closes holds, and where it
    sits in the device's stream. The sequence numbers count event records (LOSS included)
    modulo ``2 ** SEQUENCE_BITS``, up to and including this segment's; each segment holds at
    least one, so they also number the segments.""",
)


#: LOSS records whose lost-source nibble is this are *holes*, which the parser (never the
#: device) puts into the events it returns: events of any source may be missing there.
HOLE_SOURCE = 0xF


class HoleCount(IntEnum):
    """How a hole's count stands to the event records really lost there."""

    EXACT = 0  #: exactly that many
    AT_MOST = 1  #: an upper bound
    AT_LEAST = 2  #: a lower bound: bytes went missing in unknown number, nothing bounds it


HOLE_VALUE = Fields(
    "HoleValue",
    {
        "source": 4,  # HOLE_SOURCE
        "count": 57,  # event records lost there (as ``kind`` says)
        "restart": 1,  # after the hole the device's sequence starts anew (a reset)
        "kind": 2,  # HoleCount
    },
    """The value of a hole's LOSS event. The parser makes it (the device never sends one), so
    it may use all 64 bits of an event's value; ``source`` and the low bits of ``count`` sit
    where a LOSS record's are (:data:`LOSS_VALUE`).""",
)
_HOLE = {name: (field.offset, (1 << field.width) - 1) for name, field in HOLE_VALUE}


def hole_value(count: int, kind: HoleCount = HoleCount.EXACT, restart: bool = False) -> int:
    """The value of a hole's LOSS event: ``count`` event records lost, any source; ``kind``
    (:class:`HoleCount`) says whether that is exact or a bound, ``restart`` that the device's
    sequence starts anew after it. A count beyond the field (2**57 records, far more than
    a device can send) is stored as the field's largest value."""
    fields = {
        "source": HOLE_SOURCE,
        "count": min(int(count), _HOLE["count"][1]),
        "restart": int(restart),
        "kind": int(kind),
    }
    return sum(value << _HOLE[name][0] for name, value in fields.items())


def _hole_field(name: str) -> Callable[[_Values], _Values]:
    offset, mask = _HOLE[name]
    return lambda value: (value >> offset) & mask


#: The fields of hole values (an int or a numpy array of them): event records lost, how
#: exact that is (a HoleCount number), whether the device's sequence starts anew after it.
hole_count = _hole_field("count")
hole_kind = _hole_field("kind")
hole_restart = _hole_field("restart")


def value_width(source: int, marker_width: int = 16, version: int | None = None) -> int:
    """Number of value bits at the bottom of an event record's payload, in protocol
    ``version`` (the current one if None)."""
    of = Source(source)
    if of == Source.MARKER:
        return marker_width
    if of in (Source.REPLY, Source.SYNC, Source.TALLY, Source.SEAL):
        raise ValueError(f"{of.name} records carry no event value")
    if of == Source.IRQ and (VERSION if version is None else version) < 3:
        return 1  # the level alone
    return _FIXED_VALUE_WIDTH[of]


def crc16(data: bytes | bytearray, crc: int = 0) -> int:
    """CRC-16/XMODEM (poly 0x1021, init 0, no reflection), as in SYNC records.

    The gateware computes it with ``amaranth.lib.crc.catalog.CRC16_XMODEM``."""
    import binascii

    return binascii.crc_hqx(bytes(data), crc)


def crc32(data: bytes | bytearray, crc: int = 0) -> int:
    """CRC-32/ISO-HDLC (zlib's, Python's ``binascii.crc32``), as in SEAL records.

    The gateware computes it with ``amaranth.lib.crc.catalog.CRC32_ISO_HDLC``."""
    import binascii

    return binascii.crc32(bytes(data), crc)


def lead_payload_bits(source: int, version: int | None = None) -> int:
    """Payload bits in the lead byte of a long record of ``source``: 3 up to version 3 and for
    REPLY in every version, 2 for the others in version 4."""
    if (VERSION if version is None else version) < 4 or source == Source.REPLY:
        return LEAD_PAYLOAD_BITS
    return 2


def lead_bytes(source: int, version: int | None = None) -> range:
    """The lead bytes of a long record of ``source``. REPLY's are the same in every version
    (``REPLY_LEAD``): the host reads the IDENTIFY reply before it knows the version."""
    bits = lead_payload_bits(source, version)
    first = REPLY_LEAD if source == Source.REPLY else LEAD_FLAG | (int(source) << bits)
    return range(first, first + (1 << bits))


def short_lead(lead: int, version: int | None = None) -> Fields | None:
    """The layout of the short record a lead byte starts (version 4: one of
    SHORT_LEAD_KINDS), None for a long record's lead."""
    if (VERSION if version is None else version) < 4:
        return None
    for layout, kind in SHORT_LEAD_KINDS.items():
        if lead >> layout["kind"].offset == kind:
            return layout
    return None


def lead_source(lead: int, version: int | None = None) -> int | None:
    """The source of the record a lead byte starts: a long record's source, the event source
    of a short record (version 4); None where version 4 leaves a lead byte unused."""
    if lead in lead_bytes(Source.REPLY, version):
        return Source.REPLY
    layout = short_lead(lead, version)
    if layout in SHORT_VALUE_LEADS:
        return SHORT_VALUE_LEADS[layout]
    if layout is SHORT_EDGE_LEAD:
        return SHORT_EDGE_SOURCES[(lead >> _EDGE_CODE.offset) & ((1 << _EDGE_CODE.width) - 1)]
    bits = lead_payload_bits(Source.MARKER, version)
    source = (lead >> bits) & 0xF
    if lead >= LEAD_FLAG + (16 << bits) or source == Source.REPLY:
        return None  # version 4: the long REPLY's place
    return source


def _groups(lead: int, lead_bits: int, payload: int, cont: int) -> bytes:
    """A record: ``lead`` with the top ``lead_bits`` of ``payload`` in its low bits, then
    ``cont`` continuation bytes of 7 payload bits each, most significant group first."""
    out = bytearray([lead | ((payload >> (CONT_BITS * cont)) & ((1 << lead_bits) - 1))])
    out += bytes((payload >> (CONT_BITS * i)) & 0x7F for i in reversed(range(cont)))
    return bytes(out)


def _continuations(payload: int, lead_bits: int) -> int:
    """The fewest continuation bytes that hold ``payload`` beside ``lead_bits`` lead bits."""
    n = 0
    while payload >> (lead_bits + CONT_BITS * n):
        n += 1
    return n


def record_length(payload: int, source: int | None = None, version: int | None = None) -> int:
    """Number of bytes of the (long) record that carries ``payload``."""
    bits = lead_payload_bits(Source.MARKER if source is None else source, version)
    fixed = None if source is None else fixed_length(source, version)
    if fixed is not None:
        if payload >> (bits + CONT_BITS * (fixed - 1)):
            raise ValueError(f"payload {payload:#x} does not fit in a {fixed}-byte record")
        return fixed
    n = _continuations(payload, bits)
    if n > MAX_CONT:
        raise ValueError(f"payload {payload:#x} does not fit in one record")
    return 1 + n


def encode_record(source: int, payload: int, version: int | None = None) -> bytes:
    """Bytes of one (long) record."""
    n = record_length(payload, source, version) - 1
    return _groups(lead_bytes(source, version)[0], lead_payload_bits(source, version), payload, n)


def event_payload(
    source: int, delta: int, value: int, marker_width: int = 16, version: int | None = None
) -> int:
    width = value_width(source, marker_width, version)
    if not 0 <= delta < (1 << DELTA_BITS):
        raise ValueError(f"delta {delta} out of range")
    if not 0 <= value < (1 << width):
        raise ValueError(f"value {value:#x} wider than {width} bits")
    return (delta << width) | value


# --- Short records (version 4) --------------------------------------------------------------
#
# Lead bytes 0xC0 .. 0xEF and 0xF8 .. 0xFF start short records: a marker or a bus write whose
# value repeats, or steps by one from, one of the segment's last four of its source, or an
# edge of the periodic IRQ generator or of an edge channel. Their continuation bytes carry
# the delta (docs/protocol.md, "Short records").

#: Where the REPLY records' lead bytes are in every version: ``1 1110 ppp``.
REPLY_LEAD = LEAD_FLAG | (Source.REPLY << LEAD_PAYLOAD_BITS)
#: A short MARKER or BUS record's value repeats, or steps by one from, one of the last this
#: many values of its source in the segment.
HISTORY = 4


SHORT_MARKER_LEAD = Fields(
    "ShortMarkerLead",
    {
        "delta_top": 2,  # the delta's top bits
        "step": 1,  # 0: the same value, 1: one more
        "back": 2,  # which earlier marker of the segment (0: the one right before)
        "kind": 3,  # 0b110
    },
    """The lead byte of a short MARKER record, ``110b bsdd`` (0xC0 .. 0xDF): the value is
    ``step`` plus the value of the marker ``back + 1`` markers before it in the segment,
    modulo ``2 ** marker_width``. The delta is ``delta_top`` followed by the continuation
    bytes' 7-bit groups.""",
)
SHORT_BUS_LEAD = Fields(
    "ShortBusLead",
    {
        "step": 1,  # 0: the same value, 1: one more
        "back": 2,  # which earlier BUS record of the segment (0: the one right before)
        "kind": 5,  # 0b11111
    },
    """The lead byte of a short BUS record, ``1111 1bbs`` (0xF8 .. 0xFF): as a short MARKER
    (its value from one of the segment's last BUS values, modulo 2**32), the delta all in
    the continuation bytes (none: 0).""",
)
SHORT_EDGE_LEAD = Fields(
    "ShortEdgeLead",
    {
        "level": 1,  # the new level (IRQ: 1 asserting edge)
        "code": 3,  # index into SHORT_EDGE_SOURCES
        "kind": 4,  # 0b1110
    },
    """The lead byte of a short edge record, ``1110 cccl`` (0xE0 .. 0xEF):
    ``SHORT_EDGE_SOURCES[code]`` changed to ``level`` (an IRQ edge of the periodic generator:
    ``irq_value(level)``). The continuation bytes' 7-bit groups are the delta; none: 0.""",
)

#: The short records' lead layouts, each with the value its ``kind`` field has (as Amaranth
#: structs: ``SHORT_LEADS``).
SHORT_LEAD_KINDS: dict[Fields, int] = {
    SHORT_MARKER_LEAD: 0b110,
    SHORT_BUS_LEAD: 0b11111,
    SHORT_EDGE_LEAD: 0b1110,
}
#: The source of each short value record's layout (as Amaranth structs:
#: ``SHORT_VALUE_SOURCES``).
SHORT_VALUE_LEADS = {SHORT_MARKER_LEAD: Source.MARKER, SHORT_BUS_LEAD: Source.BUS}
#: The sources a short edge record codes (ShortEdgeLead.code): the IRQ output, EDGE0 .. EDGE6
#: (EDGE7's edges take long records: 8 codes are what the lead byte has room for).
SHORT_EDGE_SOURCES = (Source.IRQ, *EDGE_SOURCES[:7])
_EDGE_CODE = SHORT_EDGE_LEAD["code"]


def short_delta_bits(layout: "Fields | type[data.Struct]") -> int:
    """Bits of the delta in a short record's lead byte (the rest is in its continuation
    bytes); ``layout`` a SHORT_LEAD_KINDS layout or its struct."""
    fields = _fields_of(layout)
    return fields["delta_top"].width if "delta_top" in fields else 0


def _fields_of(layout: "Fields | type[data.Struct]") -> Fields:
    if isinstance(layout, Fields):
        return layout
    return next(fields for fields in _STRUCTS.values() if fields.struct() is layout)


def short_reference(value: int, history: list[int], width: int) -> tuple[int, int] | None:
    """``(back, step)`` of the short record of ``value`` after ``history``, the segment's
    values of its source (oldest first), or None if it needs a long record: the first match
    in the order back 0, 1, 2, 3, step 0 before step 1 (the gateware's priority)."""
    mask = (1 << width) - 1
    for back, earlier in enumerate(reversed(history[-HISTORY:])):
        for step in (0, 1):
            if value == (earlier + step) & mask:
                return back, step
    return None


def _short_record(layout: Fields, fields: dict[str, int], delta: int) -> bytes:
    if not 0 <= delta < (1 << DELTA_BITS):
        raise ValueError(f"delta {delta} out of range")
    lead = layout.pack(**fields, kind=SHORT_LEAD_KINDS[layout])
    bits = short_delta_bits(layout)
    return _groups(lead, bits, delta, _continuations(delta, bits))


def encode_short_value(source: int, back: int, step: int, delta: int) -> bytes:
    """Bytes of a short MARKER or BUS record (fewest continuation bytes)."""
    layout = {v: k for k, v in SHORT_VALUE_LEADS.items()}[Source(source)]
    return _short_record(layout, {"back": back, "step": step}, delta)


def encode_short_edge(source: int, level: int, delta: int) -> bytes:
    """Bytes of a short edge record of ``source`` (one of SHORT_EDGE_SOURCES)."""
    code = SHORT_EDGE_SOURCES.index(Source(source))
    return _short_record(SHORT_EDGE_LEAD, {"level": level, "code": code}, delta)


def sync_payload(stamp: int, crc: int | None = None) -> int:
    """A SYNC's payload: the stamp (version 2), or the stamp and a CRC-16 (version 1)."""
    stamp %= 1 << STAMP_BITS
    return stamp if crc is None else (stamp << CRC_BITS) | crc


def tally_payload(count: int, sent: int, captured: int) -> int:
    """A TALLY's payload (the sequence numbers are taken modulo ``2 ** SEQUENCE_BITS``)."""
    mask = (1 << SEQUENCE_BITS) - 1
    return TALLY_PAYLOAD.pack(count=count, sent=sent & mask, captured=captured & mask)


# --- Host to device: commands -------------------------------------------------------------
#
# A command is one opcode byte followed by the bytes of its argument layout (little-endian,
# field order as declared, ``layout.size // 8`` bytes). Every command is answered by a reply
# message: the opcode, a length byte and that many payload bytes, each carried by a REPLY
# record. A command whose bytes stop arriving mid-way is dropped after a timeout, which is
# how the host resynchronises the command channel.


class Command(IntEnum):
    IDENTIFY = ord("I")  #: reply: IdentifyReply
    START = ord("S")  #: args: StartArgs; begins a capture (a SYNC precedes its first event)
    STOP = ord("P")  #: ends a capture; the encoder drains the FIFO, closes the segment
    IRQ_CONFIG = ord("Q")  #: args: IrqConfig
    STATUS = ord("R")  #: reply: StatusReply
    ECHO = ord("E")  #: args: EchoPattern; reply: EchoReply, the pattern (link test)
    TRIGGER_CONFIG = ord("T")  #: args: TriggerConfig (version 3)


#: Reply to an opcode the device does not know: opcode ``?``, one byte: the unknown opcode.
UNKNOWN_COMMAND_REPLY = ord("?")


IRQ_FLAGS = Fields(
    "IrqFlags",
    {
        "enable": 1,  # generator running
        "one_shot": 1,  # fire once, then clear ``enable``
        "active_low": 1,  # output idles high and asserts low
        "_pad": 5,
    },
)
IRQ_CONFIG = Fields(
    "IrqConfig",
    {
        "period": 32,  # cycles between asserting edges (minimum)
        "jitter_mask": 32,  # pseudo-random extra cycles, ANDed with a 32-bit LFSR
        "width": 32,  # cycles the output stays asserted (at least 1, less than period)
        "flags": IRQ_FLAGS,
    },
    """IRQ generator settings. Intervals between asserting edges are
    ``period + (lfsr & jitter_mask)`` cycles: ``jitter_mask = 0`` is a fixed period; a mask
    of ``2**k - 1`` spreads the edges uniformly over ``[period, period + 2**k - 1]`` so
    they do not phase-lock with the DUT's tick.""",
)


#: The sources a trigger can watch (``TriggerConfig.source``): markers, bus-window writes
#: and edge channels.
TRIGGER_SOURCES = (Source.MARKER, Source.BUS, *EDGE_SOURCES)


TRIGGER_FLAGS = Fields(
    "TriggerFlags",
    {
        "enable": 1,  # the trigger drives the IRQ output; the periodic generator's edges do not
        "arm": 1,  # each asserting edge of the periodic generator arms one firing
        "_pad": 2,
    },
)
TRIGGER_CONFIG = Fields(
    "TriggerConfig",
    {
        "source": 4,  # a Source of TRIGGER_SOURCES; any other never triggers
        "flags": TRIGGER_FLAGS,
        "match": 16,  # the value bits the trigger event must have ...
        "mask": 16,  # ... where mask bits are 1
        "every": 8,  # fire at every N-th trigger taken (0 acts as 1)
        "start": IRQ_DELAY_BITS,  # the first delay, capture cycles
        "stop": IRQ_DELAY_BITS,  # the delay wraps to ``start`` where it would reach this
        "step": IRQ_DELAY_BITS,  # added to the delay at each firing
        "hold": IRQ_DELAY_BITS,  # capture cycles the output stays asserted after its first
    },
    """The IRQ trigger (version 3; docs/protocol.md, "Triggered IRQs"): a trigger event is an
    event of ``source`` whose value ``v`` (a marker's data, a bus write's low 16 bits, an
    edge channel's new level) has ``(v ^ match) & mask == 0``. Every ``every``-th trigger
    the trigger takes fires the IRQ output ``delay`` capture cycles later, ``1 + hold``
    capture cycles long; ``delay`` starts at ``start`` and steps by ``step`` at each firing,
    back to ``start`` where it would reach ``stop`` (``range(start, stop, step)``, over and
    over). 13 bytes.""",
)


class ClockCheck(IntFlag):
    """STATUS ``clock_check``: what the iCE40 gearbox's clock-phase probe saw since the
    power-on reset (``latscope_boards.gearbox.Ice40PhaseProbe``). The probe samples a
    flip-flop that toggles at every capture clock edge the way the gearbox samples a pin;
    ``SEEN_0`` .. ``SEEN_3``: a capture cycle's samples showed the toggle first at that
    sample (0: the earliest). The gearbox's quarter-cycle stamps hold when only
    ``EXPECTED`` (sample 1: the capture clock rises on a rising edge of the edge clock,
    the first sample after it is the falling edge half an edge-clock period later) was
    ever seen; sample 2 (or 0) is the capture clock rising on the edge clock's falling
    edges, every stamp of the strobe and the edge pins a quarter cycle off. ``IRREGULAR``:
    a cycle's samples showed no change or more than one."""

    SEEN_0 = 1 << 0
    SEEN_1 = 1 << 1
    SEEN_2 = 1 << 2
    SEEN_3 = 1 << 3
    IRREGULAR = 1 << 4
    EXPECTED = SEEN_1


START_ARGS = Fields(
    "StartArgs",
    {"sources": 16},  # bit n enables source n (see Source); 0xffff enables everything present
)
ECHO_PATTERN = Fields(
    "EchoPattern", {"pattern": 64}, """ECHO's argument: the link self-test's pattern."""
)
ECHO_REPLY = Fields(
    "EchoReply",
    {"pattern": 64, "end": 8},  # end: always 0
    """ECHO's reply: the pattern as it arrived, then a zero byte. A reply's last byte must
    not be one a reader could take for the first of a two-byte REPLY record at the end of a
    read (docs/protocol.md, Replies), and a pattern's last byte is any value.""",
)
IDENTIFY_REPLY = Fields(
    "IdentifyReply",
    {
        "magic": 32,  # MAGIC, little-endian
        "version": 8,  # VERSION
        "clock_hz": 32,  # capture clock frequency
        "stamp_shift": 8,  # sub-cycle stamp bits: one stamp unit is 1 / (clock_hz << stamp_shift)
        "marker_width": 8,  # data bits of the marker port (value width of MARKER events)
        "edge_count": 8,  # edge channels present (EDGE0 ..)
        "bus_width": 8,  # data bits of the bus-write front end, 0 if absent
        "fifo_depth": 16,  # events the FIFO holds
        "marker_latency": 8,  # cycles from the strobe changing at the pin to the stamp
        "bus_latency": 8,  # cycles from the bus write completing to the stamp
        "edge_latency": 8,  # cycles from an edge-channel pin changing to the stamp
        "irq_latency": 8,  # cycles from the IRQ output changing at the pin to the stamp
        "board": Array(8, 16),  # board name, ASCII, NUL-padded
        "link_clock_hz": 32,  # link clock (UART, commands, encoder); absent from older replies
        # Stamp units from a trigger event's stamp to the IRQ edge at delay 0 (version 3;
        # absent from older replies); 0: no trigger (a board's bring-up build).
        "trigger_latency": 8,
    },
)
STATUS_REPLY = Fields(
    "StatusReply",
    {
        "capturing": 1,  # 1 while a capture runs
        # The clock-phase probe of an iCE40 gearbox (ClockCheck bits); 0: the gateware has
        # none (other boards, the simulations, gateware before it: the byte's upper bits
        # were 0).
        "clock_check": 7,
        "events": 32,  # events written to the FIFO since START (mod 2**32)
        "lost": 32,  # events lost since START (mod 2**32)
        "fifo_max": 16,  # FIFO high-water mark since START
        "irq_edges": 32,  # asserting IRQ edges since START (mod 2**32)
    },
)

#: Each command's argument layout (as Amaranth structs: ``COMMAND_ARGS``).
COMMAND_ARG_FIELDS: dict[Command, Fields | None] = {
    Command.IDENTIFY: None,
    Command.START: START_ARGS,
    Command.STOP: None,
    Command.IRQ_CONFIG: IRQ_CONFIG,
    Command.STATUS: None,
    Command.ECHO: ECHO_PATTERN,
    Command.TRIGGER_CONFIG: TRIGGER_CONFIG,
}
#: The layouts of the replies with a payload (as Amaranth structs: ``REPLY_LAYOUTS``).
REPLY_FIELDS: dict[Command, Fields] = {
    Command.IDENTIFY: IDENTIFY_REPLY,
    Command.STATUS: STATUS_REPLY,
    Command.ECHO: ECHO_REPLY,
}

#: Every layout above by the name of its Amaranth struct, which ``__getattr__`` builds.
_STRUCTS: dict[str, Fields] = {
    fields.name: fields
    for fields in (
        LOSS_VALUE,
        IRQ_VALUE,
        TALLY_PAYLOAD,
        HOLE_VALUE,
        SHORT_MARKER_LEAD,
        SHORT_BUS_LEAD,
        SHORT_EDGE_LEAD,
        IRQ_FLAGS,
        IRQ_CONFIG,
        TRIGGER_FLAGS,
        TRIGGER_CONFIG,
        START_ARGS,
        ECHO_PATTERN,
        ECHO_REPLY,
        IDENTIFY_REPLY,
        STATUS_REPLY,
    )
}


def __getattr__(name: str) -> Any:
    """The Amaranth side of the layouts, built on first use (PEP 562), so that importing this
    module does not import Amaranth: ``LossValue``, ``IrqValue``, ``Tally`` ... (each
    layout's struct, by the name in ``_STRUCTS``), and the tables keyed or valued by them:
    ``SHORT_LEADS``, ``SHORT_VALUE_SOURCES``, ``COMMAND_ARGS``, ``REPLY_LAYOUTS``."""
    value: Any
    if name in _STRUCTS:
        value = _STRUCTS[name].struct()
    elif name == "SHORT_LEADS":
        value = {layout.struct(): kind for layout, kind in SHORT_LEAD_KINDS.items()}
    elif name == "SHORT_VALUE_SOURCES":
        value = {layout.struct(): source for layout, source in SHORT_VALUE_LEADS.items()}
    elif name == "COMMAND_ARGS":
        value = {c: f and f.struct() for c, f in COMMAND_ARG_FIELDS.items()}
    elif name == "REPLY_LAYOUTS":
        value = {c: f.struct() for c, f in REPLY_FIELDS.items()}
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


#: Payload sizes of replies from older gateware that the host still reads: the IDENTIFY
#: reply before ``link_clock_hz`` (single-clock gateware) and before ``trigger_latency``
#: (version 2); the fields they have are the same.
OLDER_REPLY_SIZES: dict[Command, tuple[int, ...]] = {Command.IDENTIFY: (35, 39)}


def reply_sizes(opcode: int) -> tuple[int, ...]:
    """The payload sizes a reply to ``opcode`` may have: the current layout's first, then
    those of older gateware (``OLDER_REPLY_SIZES``)."""
    layout = REPLY_FIELDS.get(Command(opcode))
    size = 0 if layout is None else layout.size // 8
    return (size, *OLDER_REPLY_SIZES.get(Command(opcode), ()))


def encode_command(opcode: int, args: "data.Const | None" = None) -> bytes:
    """The bytes of one command: the opcode, then ``args`` (a ``COMMAND_ARGS`` layout const)."""
    layout = COMMAND_ARG_FIELDS[Command(opcode)]
    message = bytes([opcode])
    if layout is not None:
        if args is None:
            raise ValueError(f"{Command(opcode).name} takes arguments")
        message += args.as_bits().to_bytes(layout.size // 8, "little")
    return message


# --- Reference encoder ----------------------------------------------------------------------


class StreamEncoder:
    """Encodes events exactly as the gateware's encoder does (same segment rules, same bytes).

    Used by tests to check the gateware byte for byte, and by benchmarks to make streams.
    Events must come in non-decreasing stamp order. ``version=1`` to ``3`` write the old
    formats (for tests of old capture files; the gateware writes ``GATEWARE_VERSION``);
    version 3's segments are version 2's (only the IRQ record's value is wider:
    :class:`IrqValue`), version 4's are version 3's with short records.

    Version 4 writes an event as a short record where one applies and is not longer than
    the long record (docs/protocol.md, "Short records"): a marker or bus write whose value
    repeats or steps by one from one of the segment's last ``HISTORY`` values of its source
    (:func:`short_reference`), an edge of EDGE0 .. EDGE6, an IRQ edge of the periodic
    generator (``triggered`` 0). ``short_records=False`` writes version 4 with long records
    only, as a board built without them does (``ApplianceConfig.short_records``).

    ``flush_after`` models the device's age rule (a segment is closed once it is that many
    cycles old): the segment is flushed before an event that comes ``flush_after`` or more
    cycles after the segment's first event. The device decides by the time the event leaves
    its FIFO, so under back-pressure its segments can differ; benchmarks use this model for
    byte counts, byte-exact tests leave it off (None).

    ``sent`` is the device's count of event records sent since power-up (a TALLY carries it);
    :meth:`start` begins a capture as START does (the ``captured`` count restarts)."""

    def __init__(
        self,
        marker_width: int = 16,
        flush_after: int | None = None,
        *,
        version: int = VERSION,
        sent: int = 0,
        short_records: bool = True,
    ) -> None:
        if version not in VERSIONS:
            raise ValueError(f"unknown protocol version {version}")
        self.marker_width = marker_width
        self.flush_after = flush_after
        self.version = version
        self.short_records = short_records
        self.sent = sent
        self.captured = 0
        self._out = bytearray()
        self._segment_crc = 0
        self._segment_events = 0
        self._segment_first = 0  # stamp of the open segment's first event (once it has one)
        self._open = False  # a segment is open (version 2)
        self._base: int | None = (
            None  # stamp the next delta is counted from; None before the first SYNC
        )
        # The open segment's values of MARKER and BUS records (version 4), oldest first.
        self._history: dict[int, list[int]] = {}

    def _emit(self, source: int, payload: int) -> None:
        self._put(source, encode_record(source, payload, self.version))

    def _put(self, source: int, record: bytes) -> None:
        self._out += record
        if self.version == 1:
            self._segment_crc = crc16(record, self._segment_crc)
        elif source != Source.SEAL:
            self._segment_crc = crc32(record, self._segment_crc)

    def start(self) -> None:
        """A new capture (the device's START): the open segment is left unclosed, as the
        device leaves it, and the capture's event count restarts."""
        self._open = False
        self._base = None
        self._segment_events = 0
        self.captured = 0
        if self.version == 1:
            self._segment_crc = 0

    def sync(self, stamp: int) -> None:
        """Start a new segment whose time base is ``stamp`` (closing the open one)."""
        if self.version == 1:
            crc, self._segment_crc = self._segment_crc, 0
            self._emit(Source.SYNC, sync_payload(stamp, crc))
        else:
            if self._open:
                self.seal()
            self._segment_crc = 0
            self._emit(Source.SYNC, sync_payload(stamp))
            self._open = True
        self._segment_events = 0
        self._history = {source: [] for source in SHORT_VALUE_LEADS.values()}
        self._base = stamp

    def seal(self) -> None:
        """Close the open segment (version 2): its TALLY and SEAL."""
        self._emit(Source.TALLY, tally_payload(self._segment_events, self.sent, self.captured))
        self._emit(Source.SEAL, self._segment_crc)
        self._open = False
        self._segment_events = 0

    def event(self, stamp: int, source: int, value: int) -> None:
        if (
            self.flush_after is not None
            and self._segment_events
            and stamp - self._segment_first >= self.flush_after
        ):
            self.flush()
        if (
            self._base is None
            or self._segment_events >= SEGMENT_MAX_EVENTS
            or stamp - self._base >= (1 << DELTA_BITS)
            or (self.version >= 2 and not self._open)
        ):
            self.sync(stamp)
        base = self._base
        assert base is not None  # sync() set it
        if stamp < base:
            raise ValueError(f"stamp {stamp} before {base}")
        payload = event_payload(source, stamp - base, value, self.marker_width, self.version)
        record = encode_record(source, payload, self.version)
        if self.version >= 4 and self.short_records:
            short = self._short(stamp - base, source, value)
            if short is not None and len(short) <= len(record):
                record = short
            if source in self._history:
                self._history[source] = [*self._history[source][1 - HISTORY :], value]
        self._put(source, record)
        if not self._segment_events:
            self._segment_first = stamp
        self._base = stamp
        self._segment_events += 1
        self.sent += 1
        self.captured += 1

    def _short(self, delta: int, source: int, value: int) -> bytes | None:
        """The short record of an event, if one applies (version 4)."""
        if source in self._history:
            width = value_width(source, self.marker_width, self.version)
            reference = short_reference(value, self._history[source], width)
            return None if reference is None else encode_short_value(source, *reference, delta)
        if source in SHORT_EDGE_SOURCES and value <= 1:  # an IRQ edge: not triggered
            return encode_short_edge(source, value, delta)
        return None

    def flush(self) -> None:
        """Close the open segment (as the gateware does when idle or on STOP)."""
        if self.version == 1:
            if self._base is not None and self._segment_events:
                self.sync(self._base)
        elif self._open:
            self.seal()

    def take(self) -> bytes:
        out, self._out = bytes(self._out), bytearray()
        return out


# --- SUMP / Openbench Logic Sniffer device mode ---------------------------------------------
#
# The appliance also speaks the SUMP protocol that sigrok's ``ols`` driver and PulseView use
# (docs/protocol.md, "SUMP device mode"). A SUMP command is one byte (bit 7 clear) or, with
# bit 7 set, one opcode byte and 4 argument bytes (a 32-bit little-endian value). The SUMP
# opcodes the link listens for in latscope mode (RESET, ID) are none of latscope's opcodes.


class SumpCommand(IntEnum):
    RESET = 0x00  #: abort; the ols driver sends it 5 times to resynchronise
    RUN = 0x01  #: arm: sample, wait for the trigger, read back
    ID = 0x02  #: reply SUMP_ID_REPLY
    METADATA = 0x04  #: reply sump_metadata(...)
    XON = 0x11  #: ignored (no flow control)
    XOFF = 0x13  #: ignored
    SET_DIVIDER = 0x80  #: sample rate = SUMP_REFERENCE_HZ / (divider + 1); 24 bits
    SET_READ_DELAY = 0x81  #: bits 0..15: read count / 4 - 1; bits 16..31: delay count / 4 - 1
    SET_FLAGS = 0x82  #: SumpFlags
    TRIGGER_MASK0 = 0xC0  #: stage 0: channels that take part
    TRIGGER_VALUE0 = 0xC1  #: stage 0: their levels
    TRIGGER_CONFIG0 = 0xC2  #: stage 0: delay, level, start (accepted, not used)


#: Opcodes with this bit set are long commands: 4 argument bytes follow.
SUMP_LONG_COMMAND = 0x80
SUMP_ARG_BYTES = 4
#: The SUMP reset: these bytes, arriving where latscope expects an opcode (none of them is
#: one), put the link in SUMP mode, and nothing shorter does (one stray byte on the line must
#: not stop a capture). sigrok's ols driver sends them before every probe and acquisition.
SUMP_MODE_ENTRY = bytes([SumpCommand.RESET] * 5)
#: Reply to ID: what the ols driver looks for ("1ALS" = SUMP logic analyzer).
SUMP_ID_REPLY = b"1ALS"
#: The divider counts periods of this clock (the original OLS's), whatever the capture clock:
#: the ols driver computes it as 100 MHz / rate - 1.
SUMP_REFERENCE_HZ = 100_000_000
#: Channels per channel group; a sample travels as one byte per enabled group.
SUMP_GROUP_BITS = 8
SUMP_MAX_GROUPS = 4
SUMP_PROTOCOL_VERSION = 2


class SumpFlags(IntEnum):
    """Bits of the SET_FLAGS argument that the appliance honours (others are ignored)."""

    GROUP_DISABLE_SHIFT = 2  #: bits 2..5: channel group n is disabled (not sent) if set
    RLE = 1 << 8  #: run-length encoding


class SumpMetadataKey(IntEnum):
    """Metadata keys: the top 3 bits give the type (0: NUL-terminated string, 1: 32-bit
    big-endian integer, 2: 8-bit integer)."""

    END = 0x00
    DEVICE_NAME = 0x01
    FPGA_VERSION = 0x02
    PROBES = 0x20
    SAMPLE_MEMORY = 0x21  #: bytes
    MAX_SAMPLE_RATE = 0x23  #: Hz
    PROTOCOL_VERSION = 0x24


def sump_metadata(
    *, name: str, version: str, probes: int, memory_bytes: int, max_rate_hz: int
) -> bytes:
    """The METADATA reply: every key, then END."""

    def string(key: int, text: str) -> bytes:
        return bytes([key]) + text.encode("ascii") + b"\0"

    def u32(key: int, value: int) -> bytes:
        return bytes([key]) + value.to_bytes(4, "big")

    return (
        string(SumpMetadataKey.DEVICE_NAME, name)
        + string(SumpMetadataKey.FPGA_VERSION, version)
        + u32(SumpMetadataKey.PROBES, probes)
        + u32(SumpMetadataKey.SAMPLE_MEMORY, memory_bytes)
        + u32(SumpMetadataKey.MAX_SAMPLE_RATE, max_rate_hz)
        + u32(SumpMetadataKey.PROTOCOL_VERSION, SUMP_PROTOCOL_VERSION)
        + bytes([SumpMetadataKey.END])
    )
