"""Incremental parser of the device-to-host stream (the records of
``latscope_defs.protocol``): bytes of the link in, verified :class:`~latscope.events.Events`
out, with a *hole* where it dropped data (docs/protocol.md, "What a reader guarantees").
"""

import binascii
import functools
import re
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from latscope_defs.protocol import (
    CONT_BITS,
    CRC_BITS,
    DELTA_BITS,
    LEAD_FLAG,
    MAX_CONT,
    SEGMENT_MAX_EVENTS,
    SEQUENCE_BITS,
    SHORT_EDGE_LEAD,
    SHORT_MARKER_LEAD,
    SHORT_VALUE_LEADS,
    TALLY_PAYLOAD,
    UNKNOWN_COMMAND_REPLY,
    VERSION,
    VERSIONS,
    Command,
    HoleCount,
    Source,
    crc32,
    fixed_length,
    hole_value,
    lead_bytes,
    lead_payload_bits,
    lead_source,
    loss_count,
    loss_source,
    reply_sizes,
    short_delta_bits,
    short_lead,
    value_width,
)

from ..events import Events
from . import record_loop
from .chain import OLD, REFUSED, STAMP_MASK, Damage, Hole, Mark, Placed, SegmentChain

__all__ = ["ParserStats", "StreamParser"]

_Bools = npt.NDArray[np.bool_]
# Record fields: uint64 (or uint8) at run time, as numpy keeps an array's dtype with a Python
# int operand (NEP 50); numpy's stubs type that arithmetic as any integer.
_Words = npt.NDArray[np.integer]
_Indices = npt.NDArray[np.intp]
_SEQUENCE_MASK = (1 << SEQUENCE_BITS) - 1
#: Bit offsets of the TALLY fields in its payload.
_TALLY_AT = {name: field.offset for name, field in TALLY_PAYLOAD}
_MAX_LENGTH = 1 + MAX_CONT
_NO_INDICES: _Indices = np.empty(0, np.intp)
# The byte format record_loop.c's word packing is written for.
assert CONT_BITS == 7 and LEAD_FLAG == 0x80, "record_loop.c needs updating"
#: The byte-at-a-time CRC-32 table of ``protocol.crc32`` (the register after one byte, without
#: the initial and final inversions), from which ``record_loop.clean_run`` checks SEALs.
_CRC_TABLE = np.array(
    [crc32(bytes([byte]), 0xFFFFFFFF) ^ 0xFFFFFFFF for byte in range(256)], np.uint32
)


@functools.cache
def _completing_lead(version: int) -> "re.Pattern[bytes]":
    """Lead bytes of the records that can complete a reply or a segment: REPLY, SYNC, and
    SEAL from version 2 on."""
    sources = (Source.REPLY, Source.SYNC) + ((Source.SEAL,) if version >= 2 else ())
    leads = sorted(lead for source in sources for lead in lead_bytes(source, version))
    return re.compile(b"[" + b"".join(re.escape(bytes([lead])) for lead in leads) + b"]")


_EDGE_LEVEL = SHORT_EDGE_LEAD["level"]
#: The ``back`` field's mask (the same width in every short value record's layout).
_BACK_MASK = SHORT_MARKER_LEAD.mask("back")


@dataclass(frozen=True)
class _Leads:
    """What every lead byte means in one protocol version, as tables indexed by the byte:
    the record's source (16: an unused lead byte, a malformed record), the payload bits the
    lead byte holds (as a mask), whether it starts a short value record (MARKER, BUS) or a
    short edge record, and where a short value record's ``back`` and ``step`` fields are."""

    source: npt.NDArray[np.uint8]
    payload_mask: npt.NDArray[np.uint64]
    short_value: _Bools
    short_edge: _Bools
    back_at: npt.NDArray[np.uint8]
    step_at: npt.NDArray[np.uint8]

    @classmethod
    @functools.cache
    def of(cls, version: int) -> "_Leads":
        """The tables of ``version`` (made when a parser of that version is first made)."""
        leads = range(256)
        sources = [lead_source(lead, version) if lead >= LEAD_FLAG else None for lead in leads]
        layouts = [short_lead(lead, version) if lead >= LEAD_FLAG else None for lead in leads]
        bits = [
            short_delta_bits(layout)
            if layout is not None
            else lead_payload_bits(source if source is not None else Source.MARKER, version)
            for source, layout in zip(sources, layouts)
        ]

        def offset(field: str) -> npt.NDArray[np.uint8]:
            return np.array(
                [layout[field].offset if layout in SHORT_VALUE_LEADS else 0 for layout in layouts],
                np.uint8,
            )

        return cls(
            np.array([16 if x is None else x for x in sources], np.uint8),
            np.array([(1 << n) - 1 for n in bits], np.uint64),
            np.array([layout in SHORT_VALUE_LEADS for layout in layouts]),
            np.array([layout is SHORT_EDGE_LEAD for layout in layouts]),
            offset("back"),
            offset("step"),
        )


#: Event sources: every source below TALLY.
_EVENT_SOURCES = (
    Source.MARKER,
    Source.BUS,
    Source.IRQ,
    Source.LOSS,
    *(Source(Source.EDGE0 + n) for n in range(8)),
)


@dataclass
class ParserStats:
    """What the parser saw. Byte counts are of the stream; record counts are of event records.

    ``bytes_skipped``: bytes outside any segment (except replies): before the first SYNC,
    after a :meth:`StreamParser.gap` until the next SYNC, between segments, malformed
    replies, a partial record thrown away by ``gap()``. ``segments_bad``: segments that
    failed a check or were left unclosed. ``holes``: hole events delivered (LOSS events of
    source ``HOLE_SOURCE``), ``records_dropped``: the sum of their counts (event records lost,
    see docs/protocol.md), ``holes_not_exact``: holes whose count is a bound, not exact.
    ``segments_old``, ``records_old``: verified segments behind what was delivered (replayed
    or reordered: no new data), rejected, and their event records. ``resets``: places where
    the device's sequence starts anew (a device reset, or a second capture in the stream).
    ``events_delivered``: events, holes not included. ``restarts`` (version 1): empty
    segments closed by a SYNC with CRC 0, which is how a version 1 device started a new
    capture; they lose nothing. ``lost``: events the device reported lost (its LOSS
    records), per source."""

    bytes_received: int = 0
    bytes_skipped: int = 0
    segments_ok: int = 0
    segments_bad: int = 0
    restarts: int = 0
    records_dropped: int = 0
    events_delivered: int = 0
    replies: int = 0
    reply_errors: int = 0
    holes: int = 0
    holes_not_exact: int = 0
    segments_old: int = 0
    records_old: int = 0
    resets: int = 0
    lost: dict[int, int] = field(default_factory=dict)  # source number -> events lost

    @property
    def lost_total(self) -> int:
        return sum(self.lost.values())

    def as_dict(self) -> dict[str, int | dict[str, int]]:
        info: dict[str, int | dict[str, int]] = {
            name: getattr(self, name) for name in self.__dataclass_fields__
        }
        info["lost"] = {_source_name(source): count for source, count in self.lost.items()}
        return info

    def __str__(self) -> str:
        lost = ", ".join(f"{_source_name(s).lower()} {n}" for s, n in self.lost.items()) or "0"
        old = (
            f" / {self.segments_old} old ({self.records_old} records replayed or out of "
            f"order, rejected)"
            if self.segments_old
            else ""
        )
        resets = f", {self.resets} device reset(s)" if self.resets else ""
        bounds = f" ({self.holes_not_exact} holes only bounded)" if self.holes_not_exact else ""
        return (
            f"{self.bytes_received} bytes ({self.bytes_skipped} skipped), "
            f"segments {self.segments_ok} ok / {self.segments_bad} bad{old}, "
            f"{self.events_delivered} events, {self.holes} holes, "
            f"{self.records_dropped} records dropped{bounds}{resets}, "
            f"lost {lost}"
        )


def _source_name(source: int) -> str:
    try:
        return Source(source).name
    except ValueError:
        return str(source)


def _reply_sizes() -> dict[int, tuple[int, ...]]:
    sizes = {int(command): reply_sizes(command) for command in Command}
    sizes[UNKNOWN_COMMAND_REPLY] = (1,)
    return sizes


class _ReplyAssembler:
    """Builds reply messages (opcode, length, payload) from REPLY bytes.

    An opcode the protocol does not define, or a length that differs from the sizes the
    protocol gives for that opcode (``protocol.reply_sizes``: older gateware's too), is a lost or
    mangled byte: the message is abandoned and counted, and the next byte is taken as an opcode.
    That is how assembly resynchronises."""

    SIZES = _reply_sizes()

    def __init__(self, stats: ParserStats, out: deque[tuple[int, bytes]]) -> None:
        self.stats = stats
        self.out = out
        self.skipping = False  # bytes are being skipped after an error (counted once)
        self.reset()

    def reset(self) -> None:
        self.opcode: int | None = None
        self.length: int | None = None
        self.payload = bytearray()

    def abort(self) -> None:
        """A reply byte was lost here: abandon the message (one error per broken run)."""
        if self.opcode is not None:
            self.stats.reply_errors += 1
            self.skipping = True
        self.reset()

    def completes(self, byte: int) -> bool:
        """Whether ``byte`` would be the last byte of the message being assembled."""
        if self.opcode is None:
            return False
        if self.length is None:
            return byte == 0 and 0 in self.SIZES[self.opcode]
        return len(self.payload) + 1 == self.length

    def push(self, byte: int) -> None:
        if self.opcode is None:
            if byte in self.SIZES:
                self.opcode = byte
                self.skipping = False
            elif not self.skipping:
                self.stats.reply_errors += 1
                self.skipping = True
            return
        if self.length is None:
            if byte not in self.SIZES[self.opcode]:
                self.abort()
                return
            self.length = byte
        else:
            self.payload.append(byte)
        if len(self.payload) == self.length:
            self.out.append((self.opcode, bytes(self.payload)))
            self.stats.replies += 1
            self.reset()


class StreamParser:
    """Incremental parser: :meth:`feed` bytes, get verified :class:`Events`.

    ``marker_width``: value bits of MARKER events (identify reply). ``latency``: mapping
    Source -> cycles from the pin to the stamp, subtracted from that source's stamps (a
    negative one moves them later: the IRQ's with a loop calibration,
    :meth:`~latscope.link.identity.Identity.stamp_latency`).
    ``version``: the protocol version of the stream (identify reply, capture metadata).
    An IRQ event's value is the record's: version 3's :class:`~latscope_defs.protocol.IrqValue`
    (the level, and the delay of the trigger firing the edge belongs to: ``irq_level``,
    ``irq_triggered``, ``irq_delay``), the level alone in versions 1 and 2.

    Attributes: ``stats`` (:class:`ParserStats`), ``replies`` (deque of complete reply
    messages ``(opcode, payload_bytes)``, oldest first; the caller pops them).

    Between feeds the parser keeps the bytes of the open segment, from its opening SYNC on
    (at most a few KiB), and parses them again with the next data: a segment is checked and
    decoded in one piece when its closing record has arrived. Replies and skipped bytes in
    the kept part are not counted twice.

    :class:`StreamParser` takes the bytes of the link in pieces of any size and returns the
    events of every *segment* that passed its checks (version 2 on: structure, the TALLY's count,
    the SEAL's CRC-32 and the chain of sequence numbers and stamps; version 1: the CRC-16 in the
    next SYNC; docs/protocol.md, "What a reader guarantees"). It never returns an event it could
    not verify, and it never raises on bad stream bytes: it finds the next record by the
    lead-byte flag, trusts nothing until the next SYNC, and puts a *hole* (a LOSS event of
    lost-source ``HOLE_SOURCE``, with the number of event records lost) where it dropped data;
    what it threw away is also counted in :class:`ParserStats`.

    Parsing is vectorised with numpy over each buffer: find the lead bytes, measure the records,
    decode payloads of up to 8 bytes with a few word-wide operations on big-endian windows,
    cumulate deltas and check every segment's structure at once; then one CRC call and a few
    integer steps of the chain per segment. Only REPLY records are looked at one by one.

    Time. An event's stamp is the 64-bit cycle number of the capture clock: the 48-bit stamp of
    the SYNC that opened its segment, unwrapped against the time base (version 2: the last stamp
    of the last confirmed segment; version 1: the previous verified SYNC; time only goes
    forward, so a jump of 2**48 cycles or more cannot be told from a wrap), plus the deltas of
    the segment up to the event, minus the pin-to-stamp latency of the event's source
    (``latency`` argument; clamped so that a stamp never goes below 0). After that correction
    events of *different* sources may be out of stamp order by up to the difference of their
    latencies (a few cycles); events are always returned in stream order, and within one source
    the order is exact.

    Replies. REPLY records (one byte of a command reply each) can sit anywhere between records
    and are assembled into messages (opcode, length, payload) in :attr:`StreamParser.replies`,
    whether or not a segment is open. A reply byte of value 0 or 1 is sent as a lone lead byte,
    which looks the same as the first byte of a two-byte REPLY record; when such a byte ends a
    feed the parser takes it as complete only if it completes a reply message (the usual case: a
    zero length byte of an acknowledgement, a zero last byte of a status), otherwise it waits
    for the next byte. If the next feed then starts with that record's continuation byte, the
    delivered reply was wrong and ``stats.reply_errors`` counts it.
    """

    #: An open segment longer than this cannot be one the device sent (255 events of at most
    #: 10 bytes, plus the replies to a few commands): it is dropped as bad.
    MAX_SEGMENT_BYTES = 16 * 1024
    #: New bytes without a completing lead byte are parsed once this many have come.
    MAX_UNPARSED = 4096

    def __init__(
        self,
        marker_width: int = 16,
        latency: Mapping[Source, int] | None = None,
        version: int = VERSION,
        irq_pad_delay: int = 0,
    ) -> None:
        if version not in VERSIONS:
            raise ValueError(
                f"protocol version {version} unknown (this host reads "
                f"{', '.join(map(str, VERSIONS))})"
            )
        self.version = version
        self.marker_width = marker_width
        # Value width per source (and 16: an unused lead byte); 64 for the others, so that
        # their delta is 0.
        self._width = np.full(17, 64, np.uint64)
        for source in _EVENT_SOURCES:
            self._width[source] = value_width(source, marker_width, version)
        self._fixed = np.array(
            [fixed_length(source, version) or 0 for source in range(16)] + [0], np.int64
        )
        # Sources this version defines (16: an unused lead byte; version 1 reserves 12, 13).
        self._valid = np.array(
            [source < 16 and (version > 1 or source & 0xE != 12) for source in range(17)],
            np.uint8,
        )
        self._completing = _completing_lead(version)
        self._leads = _Leads.of(version)
        signed = np.zeros(16, np.int64)
        for source, cycles in (latency or {}).items():
            signed[int(source)] = cycles
        self.latency = {Source(s): int(c) for s, c in enumerate(signed) if c}
        # Subtracted (pin to stamp) and added (a stamp moved later), per source.
        self._latency = np.maximum(signed, 0).astype(np.uint64)
        self._later = np.maximum(-signed, 0).astype(np.uint64)
        # Stamp units added to a source's stamps: the IRQ output's pad delay (identity).
        self._pad_delay = np.zeros(16, np.uint64)
        self._pad_delay[Source.IRQ] = irq_pad_delay
        self.irq_pad_delay = irq_pad_delay
        self.stats = ParserStats()
        self.replies: deque[tuple[int, bytes]] = deque()
        self._assembler = _ReplyAssembler(self.stats, self.replies)
        self._carry = b""  # the open segment from its SYNC on, or a partial record
        self._seen = 0  # bytes at the start of _carry already accounted for
        self._open: tuple[int, int] | None = (
            None  # (bytes, event records) of the open segment, if any
        )
        self._eager_reply = False  # the last feed ended with a lone REPLY lead taken as whole
        self._pending_lead: int | None = None  # offset in _carry of an unfinished completing record
        self._pending_needs = 0  # bytes from there that can finish it
        # The chain of verified segments (docs/protocol.md, "What a reader guarantees"); a
        # device reset leaves a margin of the largest pin latency (and the IRQ's pad delay,
        # which moves IRQ stamps the other way), so time still goes forward.
        self._chain = SegmentChain(
            margin=int(self._latency.max()) + int(self._later.max()) + irq_pad_delay
        )
        self._damage = Damage()  # stream data dropped since the last delivered segment
        self._scratch: _Records | None = None  # the decoded records' arrays, reused

    # --- public interface ---------------------------------------------------------------

    def feed(self, data: bytes | bytearray | memoryview) -> Events:
        """Parses ``data``; returns the events of every segment it completed and verified,
        with a hole event before them wherever stream data was lost."""
        data = bytes(data)
        self.stats.bytes_received += len(data)
        if not data:
            return Events.empty()
        if self._eager_reply and data[0] < LEAD_FLAG:
            # The REPLY record taken as one byte had a continuation byte: its value was wrong.
            self.stats.reply_errors += 1
        self._eager_reply = False
        self._carry += data
        # Only a SYNC, SEAL or REPLY record can complete anything; small pieces without one
        # wait (this keeps one-byte-at-a-time feeding cheap).
        pending = self._pending_lead
        if (
            (pending is not None and len(self._carry) - pending >= self._pending_needs)
            or len(self._carry) - self._seen > self.MAX_UNPARSED
            or self._completing.search(data)
        ):
            return self._parse(self._carry, final=False)
        return Events.empty()

    def gap(self, missing_bytes: int | None = None) -> None:
        """Bytes are missing here (``missing_bytes`` of them, if known): drop the open segment
        and trust nothing until a SYNC. The hole shows as an event before the next verified
        segment (or at :meth:`finish`)."""
        if len(self._carry) > self._seen:
            # Count the records that came since the last parse (none can complete anything).
            self._parse(self._carry, final=False)
        partial = len(self._carry) - self._seen
        self.stats.bytes_skipped += partial
        damage = self._damage
        damage.dropped_bytes += partial
        self._drop_open()
        if missing_bytes is None or damage.missing_bytes is None:
            damage.missing_bytes = None
        else:
            damage.missing_bytes += missing_bytes
        damage.damaged = damage.gapped = True
        self._eager_reply = False
        self._assembler.abort()

    def finish(self) -> Events:
        """End of data: parses what is left; an unclosed segment is dropped, and data dropped
        after the last verified segment shows as a hole event at the end."""
        events = self._parse(self._carry, final=True) if self._carry else Events.empty()
        if self.version == 1 and self._open is not None and self._open[1] == 0:
            self._open = None  # version 1: the empty segment after the last SYNC
        self._drop_open()
        self._eager_reply = False
        self._assembler.abort()
        if self._damage.damaged:
            # No verified data follows: what was dropped is bounded only by its bytes.
            stamp, hole = self._chain.end_hole(self._damage)
            self._count_hole(hole)
            self._damage.clear()
            events = Events.concatenate(
                [events, Events([stamp], [Source.LOSS], [hole_value(*hole)])]
            )
        return events

    # --- internals ----------------------------------------------------------------------

    def _drop_open(self) -> None:
        if self._open is not None:
            self.stats.segments_bad += 1
            self._damage.dropped_bytes += self._open[0]
            self._damage.damaged = True
        self._open = None
        self._carry = b""
        self._seen = 0
        self._pending_lead = None

    def _count_hole(self, hole: Hole) -> None:
        self.stats.holes += 1
        self.stats.records_dropped += hole.count
        self.stats.holes_not_exact += hole.kind != HoleCount.EXACT
        self.stats.resets += hole.restart

    def _parse(self, buf: bytes, final: bool) -> Events:
        """Parses ``buf`` (the kept bytes and new data); keeps the open segment's bytes."""
        arr = np.frombuffer(buf, np.uint8)
        starts = np.flatnonzero(arr >= LEAD_FLAG)

        # The last record may still grow, unless it is a whole fixed-length record, a REPLY
        # that cannot have (more) continuation bytes, or already too long to be a record.
        committed = len(buf)  # records and CRC domain end here
        lone_reply = None
        if len(starts) and not final:
            last = int(arr[starts[-1]])
            last_source = int(self._leads.source[last])
            last_bits = last & int(self._leads.payload_mask[last])
            last_span, fixed = len(buf) - int(starts[-1]), int(self._fixed[last_source])
            if last_source == Source.REPLY and last_span == 1 and last_bits < 2:
                lone_reply = last_bits  # a byte 0/1, or the lead of a two-byte record
            if lone_reply is not None or not (
                last_span > _MAX_LENGTH
                or (fixed and last_span >= fixed)
                or (last_source == Source.REPLY and (last_span > 1 or last_bits >= 2))
            ):
                committed = int(starts[-1])
                starts = starts[:-1]
        processed = committed  # bytes whose replies and skips have been counted

        r = self._decode(buf, starts, committed)
        new_replies = r.replies[r.starts[r.replies] >= self._seen]
        for byte, ok in zip(r.value[new_replies].tolist(), r.well_formed[new_replies].tolist()):
            if ok:
                self._assembler.push(byte)
            else:
                self._assembler.abort()
        if (
            lone_reply is not None
            and committed >= self._seen
            and self._assembler.completes(lone_reply)
        ):
            self._assembler.push(lone_reply)
            self._eager_reply = True
            processed = len(buf)

        segments = _Segments(self, arr[:committed], r)
        events, open_start = segments.run()
        if open_start is None:
            self._carry, self._seen = buf[processed:], 0
        else:
            self._carry, self._seen = buf[open_start:], processed - open_start
        self._pending_lead = None
        if self._completing.match(buf, processed):
            self._pending_lead = len(self._carry) - (len(buf) - processed)
            self._pending_needs = int(self._fixed[self._leads.source[buf[processed]]]) or 2
        self.stats.events_delivered += len(events) - len(segments.holes)
        return events

    def _decode(self, buf: bytes, starts: _Indices, committed: int) -> "_Records":
        """Source, payload and well-formedness of every record, and the running totals the
        segment checks use (as :class:`_Records`), in one compiled pass over the records
        (``record_loop.c``, with this version's tables from ``latscope_defs.protocol``).

        A record's payload is its lead byte's payload bits followed by the 7-bit groups of its
        continuation bytes; a fixed-length record is read at its length (continuation bytes
        after it are strays, which fail the segment whose CRC domain holds them). A short
        value record's value repeats, or steps by one from, the value of the record of its
        source ``back + 1`` records before it since the last SYNC; a reference beyond that
        SYNC makes the record malformed."""
        n = len(starts)
        if self._scratch is None or len(self._scratch.source) < n:
            # Kept between feeds (as large as the largest feed's records, an eighth more so that
            # slowly growing feeds do not reallocate each time): fresh arrays each feed cost
            # as much in page faults as the decoding itself.
            self._scratch = _Records(n + n // 8)
        r = self._scratch.first(starts)
        t = self._leads
        replies, syncs, seals = record_loop.decode(
            buf,
            starts,
            committed,
            t.source,
            t.payload_mask,
            t.short_value,
            t.short_edge,
            t.back_at,
            t.step_at,
            self._fixed,
            self._width,
            self._valid,
            _MAX_LENGTH,
            DELTA_BITS,
            len(_EVENT_SOURCES),
            Source.REPLY,
            Source.SYNC,
            Source.SEAL,
            _BACK_MASK,
            _EDGE_LEVEL.offset,
            r.source,
            r.value,
            r.well_formed,
            r.is_event,
            r.events_before,
            r.delta_sum,
            r.syncs,
            r.seals,
        )
        if replies:
            r.replies = np.flatnonzero(r.source == Source.REPLY)
            ends = np.append(starts[1:], committed)
            r.reply_span = ends[r.replies] - starts[r.replies]
        r.syncs, r.seals = r.syncs[:syncs], r.seals[:seals]
        return r

    def _count_losses(self, events: Events) -> None:
        is_loss = events.source == Source.LOSS
        if not is_loss.any():
            return
        for value in events.value[is_loss].tolist():
            lost = loss_source(value)
            self.stats.lost[lost] = self.stats.lost.get(lost, 0) + loss_count(value)


class _Segments:
    """One pass over the committed records of a buffer: finds the segments, checks the
    closed ones, links them into the chain of verified segments and builds their events.

    Version 2: a segment is ``SYNC, events, TALLY, SEAL``; records outside segments (other
    than replies) are junk. Version 1: a segment runs from one SYNC to the next, which holds
    its CRC-16. Offsets in ``pos`` are in the CRC domain (the bytes without REPLY records)."""

    def __init__(
        self, parser: StreamParser, committed: npt.NDArray[np.uint8], r: "_Records"
    ) -> None:
        self.p = parser
        self.stats = parser.stats
        self.r = r
        count = len(r.starts)
        self.count = count
        # CRC domain: the committed bytes without REPLY records.
        if len(r.replies):
            edges = np.zeros(len(committed) + 1, np.int64)
            np.add.at(edges, r.starts[r.replies], 1)
            np.add.at(edges, r.starts[r.replies] + r.reply_span, -1)
            excluded = np.cumsum(edges[:-1]) > 0
            crc_bytes = committed[~excluded]
            excluded_before = np.concatenate(([0], np.cumsum(excluded)))
            position = r.starts - excluded_before[r.starts]
            bad = ~r.well_formed[r.replies] & (r.starts[r.replies] >= parser._seen)
            self.stats.bytes_skipped += int(r.reply_span[bad].sum())
        else:
            crc_bytes = committed
            position = r.starts
        self.view = crc_bytes.data  # a memoryview of the array
        self.pos_np = np.concatenate((position, [len(crc_bytes)]))
        self.pos = _Ints(self.pos_np)
        # Record numbers of the records that are not replies (None: all are).
        self.non_reply_at = np.flatnonzero(r.source != Source.REPLY) if len(r.replies) else None
        self.events_np = r.events_before
        # Records before each record that are not replies.
        self.non_reply_np: npt.NDArray[np.integer] | _Counting = (
            np.concatenate(([0], np.cumsum(r.source != Source.REPLY)))
            if len(r.replies)
            else _Counting()
        )
        self.events_before = _Ints(self.events_np)
        self.non_reply_before = (
            _Ints(self.non_reply_np) if isinstance(self.non_reply_np, np.ndarray) else _Counting()
        )
        self.delta_sum = r.delta_sum
        # The delivered segments (the first ``delivered`` entries, at most one per SYNC): their
        # SYNC records, the records after their last events, their SYNCs' 64-bit stamps.
        # (Sized in ``run``.)
        self.delivered = 0
        self.first: _Indices = _NO_INDICES
        self.end: _Indices = _NO_INDICES
        self.base: _Words = np.empty(0, np.uint64)
        # (record index the hole goes before, stamp, hole value)
        self.holes: list[tuple[int, int, int]] = []

    def run(self) -> tuple[Events, int | None]:
        """Returns the events and the offset where the kept open segment starts (or None)."""
        p, r = self.p, self.r
        sync_at = r.syncs
        self.first, self.end = np.empty(len(sync_at), np.int64), np.empty(len(sync_at), np.int64)
        self.base = np.empty(len(sync_at), np.uint64)
        syncs = sync_at.tolist()
        following = syncs[1:] + [self.count]
        if p.version == 1:
            closes = [f if f < self.count else None for f in following]
        else:
            closes = self._precheck_v2(sync_at, np.array(following, np.int64))
        done, done_byte = 0, 0  # records and CRC-domain bytes accounted for
        open_start = None
        p._open = None
        seal_length = int(p._fixed[Source.SEAL])
        k = 0
        while k < len(syncs):
            if p.version > 1 and p._chain.last is not None:
                k, done, done_byte = self._clean_run(k, done, done_byte, seal_length)
                if k == len(syncs):
                    break
            s = syncs[k]
            if s > done or self.pos[s] > done_byte:
                self._junk(done, done_byte, s)
            close = closes[k]
            if close is None and following[k] == self.count:
                open_start = self._keep_open(s)
                done, done_byte = self.count, self.pos[-1]
                break
            if close is None:  # version 2: a SYNC came before the SEAL
                self._fail(s, following[k])
                done, done_byte = following[k], self.pos[following[k]]
            elif p.version == 1:
                self._close_v1(s, close)
                done, done_byte = close, self.pos[close]
            else:
                self._close_v2(k, s, close)
                done, done_byte = close + 1, self.pos[close] + seal_length
            k += 1
        if open_start is None:
            self._junk(done, done_byte, self.count)
        return self._events(), open_start

    def _precheck_v2(self, sync_at: _Indices, following: _Indices) -> list[int | None]:
        """For every SYNC, at once: the SEAL that closes its segment (None: none before the
        next SYNC), and the checks other than the CRC and the chain, with the fields they
        need (as arrays per SYNC: read by ``record_loop.clean_run`` for the segments that follow
        on cleanly, one segment at a time by :meth:`_close_v2` for the others)."""
        r = self.r
        seals = r.seals
        at = np.searchsorted(seals, sync_at)
        close = seals[np.minimum(at, len(seals) - 1)] if len(seals) else following
        closed = (at < len(seals)) & (close < following)
        close = np.where(closed, close, following - 1)
        # The TALLY is the last record before the SEAL that is not a reply.
        if self.non_reply_at is None:
            tally = np.maximum(close - 1, 0)
        else:
            at = np.maximum(np.searchsorted(self.non_reply_at, close) - 1, 0)
            tally = self.non_reply_at[at]
        events = self.events_np[tally] - self.events_np[sync_at + 1]
        between = self.non_reply_np[tally] - self.non_reply_np[sync_at + 1]
        fields = r.value[tally]  # a TALLY's payload where ``ok``
        ok = (
            closed
            & (tally > sync_at)
            & (r.source[tally] == Source.TALLY)
            & r.well_formed[tally]
            & (between == events)
            & (events > 0)
            & (events <= SEGMENT_MAX_EVENTS)
            & ((fields >> np.uint64(_TALLY_AT["count"])) == events.astype(np.uint64))
        )
        mask = np.uint64(_SEQUENCE_MASK)
        self.sync_at = sync_at
        self.close_at = np.where(closed, close, -1)
        self.v2_ok = ok
        self.v2_fields = (
            tally,
            events,
            ((fields >> np.uint64(_TALLY_AT["sent"])) & mask).astype(np.int64),
            ((fields >> np.uint64(_TALLY_AT["captured"])) & mask).astype(np.int64),
            r.value[sync_at],
            r.value[close],
            self.delta_sum[tally] - self.delta_sum[sync_at + 1],
        )
        return [c if k else None for c, k in zip(close.tolist(), closed.tolist())]

    def _clean_run(
        self, k: int, done: int, done_byte: int, seal_length: int
    ) -> tuple[int, int, int]:
        """Delivers the segments from SYNC ``k`` on that follow the last delivered one
        cleanly, in compiled code (``record_loop.clean_run``: the usual case of
        :meth:`SegmentChain.place`); returns where the general path goes on."""
        chain = self.p._chain
        last = chain.last
        assert last is not None and last.sent is not None
        at = self.delivered
        k, done, done_byte, count, sent, stamp48, stamp64 = record_loop.clean_run(
            self.view,
            _CRC_TABLE,
            self.pos_np,
            self.sync_at,
            self.close_at,
            self.v2_ok,
            *self.v2_fields,
            k,
            done,
            done_byte,
            seal_length,
            last.sent,
            last.stamp48,
            last.stamp64,
            STAMP_MASK,
            _SEQUENCE_MASK,
            self.first[at:],
            self.end[at:],
            self.base[at:],
        )
        if count:
            # What SegmentChain.place leaves after a segment that follows on (no hole).
            chain.last = chain.anchor = Mark(sent, stamp48, stamp64)
            chain.candidate = chain.old = None
            self.p._damage.clear()
            self.stats.segments_ok += count
            self.delivered += count
        return k, done, done_byte

    def _junk(self, first: int, first_byte: int, end: int) -> None:
        """Records ``first .. end - 1`` lie outside any segment (from ``first_byte`` on)."""
        skipped = self.pos[end] - first_byte
        if skipped > 0:
            self.stats.bytes_skipped += skipped
            self.p._damage.dropped_bytes += skipped
            self.p._damage.damaged = True

    def _fail(self, first: int, end: int) -> None:
        self.stats.segments_bad += 1
        self.p._damage.dropped_bytes += self.pos[end] - self.pos[first]
        self.p._damage.damaged = True

    def _keep_open(self, s: int) -> int | None:
        """The last segment is open: keep its bytes, unless it is already too long."""
        p = self.p
        size = self.pos[-1] - self.pos[s]
        events = self.events_before[-1] - self.events_before[s + 1]
        p._open = (size, events)
        if events > SEGMENT_MAX_EVENTS or len(self.view) - self.pos[s] > p.MAX_SEGMENT_BYTES:
            p._drop_open()
            return None
        return int(self.r.starts[s])

    def _segment_sum(self, first: int, end: int) -> int:
        """Sum of the deltas of records ``first + 1 .. end - 1`` (stamp of the last event
        relative to the segment's SYNC)."""
        return int(self.delta_sum[end] - self.delta_sum[first + 1])

    def _close_v1(self, s: int, e: int) -> None:
        r = self.r
        events = self.events_before[e] - self.events_before[s + 1]
        others = self.non_reply_before[e] - self.non_reply_before[s + 1] - events
        expected = int(r.value[e]) & ((1 << CRC_BITS) - 1)
        crc = binascii.crc_hqx(self.view[self.pos[s] : self.pos[e]], 0)
        clean = others == 0 and events <= SEGMENT_MAX_EVENTS
        if clean and crc == expected:
            self._deliver_v1(s, e, int(r.value[s]) >> CRC_BITS)
        elif clean and events == 0 and expected == 0:
            # START clears the device's CRC: the first SYNC of a capture closes the previous
            # capture's final, empty segment with CRC 0. Nothing is lost there.
            self.stats.restarts += 1
        else:
            self._fail(s, e)

    def _deliver_v1(self, s: int, e: int, stamp48: int) -> None:
        segment_sum = self._segment_sum(s, e)
        self._place(s, e, self.p._chain.place_v1(stamp48, segment_sum, self.p._damage))

    def _close_v2(self, k: int, s: int, e: int) -> None:
        tally, events, sent, captured, stamp48, crc, segment_sum = (
            int(column[k]) for column in self.v2_fields
        )
        first, end = self.pos[s], self.pos[e]
        if not (self.v2_ok[k] and binascii.crc32(self.view[first:end]) == crc):
            self._fail(s, e)
            return
        placed = self.p._chain.place(
            stamp48, events, sent, captured, segment_sum, crc, self.p._damage
        )
        if isinstance(placed, Placed):
            self._place(s, tally, placed)
        elif placed is OLD:
            # Behind what was delivered: its events were delivered, or counted in a hole,
            # already. Nothing is lost by rejecting it.
            self.stats.segments_old += 1
            self.stats.records_old += events
        else:
            assert placed is REFUSED
            self._fail(s, e)

    def _place(self, s: int, end: int, placed: Placed) -> None:
        """Delivers records ``s + 1 .. end - 1`` as a segment based at ``placed.base``, after
        the hole ``placed.hole`` (if any)."""
        if placed.hole is not None:
            self.holes.append((s, placed.base, hole_value(*placed.hole)))
            self.p._count_hole(placed.hole)
        self.p._damage.clear()
        self.stats.segments_ok += 1
        at = self.delivered
        self.first[at], self.end[at], self.base[at] = s, end, placed.base
        self.delivered += 1

    def _events(self) -> Events:
        """The events of the delivered segments, with the holes before them."""
        r, p = self.r, self.p
        if not self.delivered:
            return Events.empty()
        first, end = self.first[: self.delivered], self.end[: self.delivered]
        base = self.base[: self.delivered]
        counts = self.events_np[end] - self.events_np[first + 1]
        count = int(counts.sum())
        events = Events(
            np.empty(count, np.uint64), np.empty(count, np.uint8), np.empty(count, np.uint64)
        )
        written = record_loop.gather(
            first,
            end,
            base,
            r.is_event,
            self.delta_sum,
            r.source,
            r.value,
            p._latency,
            p._later,
            p._pad_delay,
            events.stamp,
            events.source,
            events.value,
        )
        assert written == count
        p._count_losses(events)
        if not self.holes:
            return events
        # A hole goes before the events of the segment whose SYNC it names: after those of
        # the segments delivered before that one.
        events_at = np.cumsum(counts) - counts
        at = events_at[np.searchsorted(first, [h[0] for h in self.holes])]
        return Events(
            np.insert(events.stamp, at, [h[1] for h in self.holes]),
            np.insert(events.source, at, Source.LOSS),
            np.insert(events.value, at, [h[2] for h in self.holes]),
        )


class _Counting:
    """Records before each record that are not replies, where none is: the record number
    itself (an int, or an array of them)."""

    __slots__ = ()

    def __getitem__(self, index: Any) -> Any:
        return index


class _Ints:
    """Python ints out of a numpy array, one at a time (cheaper than ``tolist()`` of a whole
    buffer's records when a few are looked at)."""

    __slots__ = ("array",)

    def __init__(self, array: npt.NDArray[np.integer]) -> None:
        self.array = array

    def __getitem__(self, index: int) -> int:
        return int(self.array[index])


class _Records:
    """The complete records of one buffer, as parallel arrays (index = record number), and
    running totals over them (index = records before: one more entry), filled by
    :meth:`StreamParser._decode`."""

    __slots__ = (
        "starts",
        "source",
        "value",
        "well_formed",
        "is_event",
        "replies",
        "reply_span",
        "events_before",
        "delta_sum",
        "syncs",
        "seals",
    )

    def __init__(self, count: int) -> None:
        self.starts = _NO_INDICES  # offset of the lead byte in the buffer
        self.source: _Words = np.empty(count, np.uint8)
        # An event record's value; any other record's payload (its value width is 64).
        self.value: _Words = np.empty(count, np.uint64)
        self.well_formed = np.empty(count, np.bool_)
        self.is_event = np.empty(count, np.bool_)  # a well-formed event record
        self.replies: _Indices = _NO_INDICES  # record numbers of REPLY records
        self.reply_span: _Indices = _NO_INDICES  # their bytes up to the next lead byte
        self.events_before = np.empty(count + 1, np.int64)
        # Running sum of the records' deltas (0 for non-event records; wrapping).
        self.delta_sum: _Words = np.empty(count + 1, np.uint64)
        # Record numbers of the well-formed SYNC and SEAL records.
        self.syncs: _Indices = np.empty(count, np.intp)
        self.seals: _Indices = np.empty(count, np.intp)

    def first(self, starts: _Indices) -> "_Records":
        """The records at ``starts``: views of the first ``len(starts)`` entries."""
        n = len(starts)
        r = _Records.__new__(_Records)
        r.starts = starts
        for name in (
            "source",
            "value",
            "well_formed",
            "is_event",
            "syncs",
            "seals",
        ):
            setattr(r, name, getattr(self, name)[:n])
        for name in ("events_before", "delta_sum"):
            setattr(r, name, getattr(self, name)[: n + 1])
        r.replies = r.reply_span = _NO_INDICES
        return r
