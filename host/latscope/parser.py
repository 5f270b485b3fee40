"""Incremental parser of the device-to-host stream (the records of ``latscope.protocol``).

:class:`StreamParser` takes the bytes of the link in pieces of any size and returns the events
of every *segment* whose closing SYNC record verified it (CRC-16 over the segment's bytes).
It never returns an event it could not verify, and it never raises on bad stream bytes: it
finds the next record by the lead-byte flag, trusts nothing until the next SYNC, and counts
what it threw away in :class:`ParserStats`.

Parsing is vectorised with numpy over each buffer: find the lead bytes, measure the records,
decode payloads of up to 8 bytes with a few word-wide operations on big-endian windows,
cumulate deltas, then one ``binascii.crc_hqx`` call per segment. Only REPLY records and SYNC
records are looked at one by one in Python.

Time. An event's stamp is the 64-bit cycle number of the capture clock: the 48-bit stamp of
the SYNC that opened its segment, unwrapped against the previous verified SYNC (time only goes
forward; a jump of 2**48 cycles or more, or a device that restarted its counter, cannot be
told from a wrap), plus the deltas of the segment up to the event, minus the pin-to-stamp
latency of the event's source (``latency`` argument; clamped so that a stamp never goes below
0). After that correction events of *different* sources may be out of stamp order by up to the
difference of their latencies (a few cycles); events are always returned in stream order, and
within one source the order is exact.

Replies. REPLY records (one byte of a command reply each) can sit anywhere between records and
are assembled into messages (opcode, length, payload) in :attr:`StreamParser.replies`, whether
or not a segment is open. A reply byte of value 0 or 1 is sent as a lone lead byte, which looks
the same as the first byte of a two-byte REPLY record; when such a byte ends a feed the parser
takes it as complete only if it completes a reply message (the usual case: a zero length byte
of an acknowledgement, a zero last byte of a status), otherwise it waits for the next byte. If
the next feed then starts with that record's continuation byte, the delivered reply was wrong
and ``stats.reply_errors`` counts it.
"""

import binascii
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from .protocol import (CONT_BITS, CRC_BITS, DELTA_BITS, LEAD_FLAG, LEAD_PAYLOAD_BITS, MAX_CONT,
                       REPLY_LAYOUTS, SEGMENT_MAX_EVENTS, STAMP_BITS, SYNC_CONT,
                       UNKNOWN_COMMAND_REPLY, Command, Source, value_width)

__all__ = ["Events", "ParserStats", "StreamParser"]

_STAMP_MASK = (1 << STAMP_BITS) - 1
_U64 = 1 << 64
_SYNC_LENGTH = 1 + SYNC_CONT
_MAX_LENGTH = 1 + MAX_CONT
#: Event sources: every source below REPLY except the reserved 12 and 13.
_EVENT_SOURCES = (Source.MARKER, Source.BUS, Source.IRQ, Source.LOSS,
                  *(Source(Source.EDGE0 + n) for n in range(8)))
#: Payload mask of a record of n bytes (n <= 8), indexed by n.
_PAYLOAD_MASK = np.array([0] + [(1 << (LEAD_PAYLOAD_BITS + CONT_BITS * (n - 1))) - 1
                                for n in range(1, 9)], dtype=np.uint64)


class Events:
    """Events in stream order: ``stamp`` (uint64 cycles), ``source`` (uint8), ``value`` (uint64).

    Indexing with a slice, mask or index array gives an :class:`Events`; iterating gives
    ``(stamp, source, value)`` tuples of Python ints."""

    __slots__ = ("stamp", "source", "value")

    def __init__(self, stamp, source, value):
        self.stamp = np.asarray(stamp, dtype=np.uint64)
        self.source = np.asarray(source, dtype=np.uint8)
        self.value = np.asarray(value, dtype=np.uint64)
        if not len(self.stamp) == len(self.source) == len(self.value):
            raise ValueError("stamp, source and value must have the same length")

    @classmethod
    def empty(cls):
        return cls(np.empty(0, np.uint64), np.empty(0, np.uint8), np.empty(0, np.uint64))

    @classmethod
    def concatenate(cls, parts):
        """One :class:`Events` of ``parts`` in order (an empty list gives no events)."""
        parts = [part for part in parts if len(part)]
        if not parts:
            return cls.empty()
        if len(parts) == 1:
            return parts[0]
        return cls(np.concatenate([part.stamp for part in parts]),
                   np.concatenate([part.source for part in parts]),
                   np.concatenate([part.value for part in parts]))

    def of(self, *sources):
        """The events of the given sources, in stream order."""
        return self[np.isin(self.source, np.array([int(s) for s in sources], np.uint8))]

    def __len__(self):
        return len(self.stamp)

    def __getitem__(self, index):
        return Events(self.stamp[index], self.source[index], self.value[index])

    def __iter__(self):
        return zip(self.stamp.tolist(), self.source.tolist(), self.value.tolist())

    def __eq__(self, other):
        if not isinstance(other, Events):
            return NotImplemented
        return (np.array_equal(self.stamp, other.stamp)
                and np.array_equal(self.source, other.source)
                and np.array_equal(self.value, other.value))

    __hash__ = None

    def __repr__(self):
        return f"<Events: {len(self)}>"


@dataclass
class ParserStats:
    """What the parser saw. Byte counts are of the stream; record counts are of event records.

    ``bytes_skipped``: bytes not used: everything (except replies) before the first SYNC and
    after a :meth:`StreamParser.gap` until the next SYNC, stray continuation bytes, malformed
    records, a partial record thrown away by ``gap()``. ``records_dropped``: event records in
    segments that failed their CRC or were left unclosed (``gap()``, ``finish()``).
    ``restarts``: empty segments closed by a SYNC with CRC 0, which is how the device starts a
    new capture (START clears its CRC); they lose nothing. ``lost``: events the device reported
    lost (LOSS records of verified segments), per source."""
    bytes_received: int = 0
    bytes_skipped: int = 0
    segments_ok: int = 0
    segments_bad: int = 0
    restarts: int = 0
    records_dropped: int = 0
    events_delivered: int = 0
    replies: int = 0
    reply_errors: int = 0
    lost: dict = field(default_factory=dict)     # source number -> events lost

    @property
    def lost_total(self):
        return sum(self.lost.values())

    def as_dict(self):
        info = {name: getattr(self, name) for name in self.__dataclass_fields__}
        info["lost"] = {_source_name(source): count for source, count in self.lost.items()}
        return info

    def __str__(self):
        lost = ", ".join(f"{_source_name(s).lower()} {n}" for s, n in self.lost.items()) or "0"
        return (f"{self.bytes_received} bytes ({self.bytes_skipped} skipped), "
                f"segments {self.segments_ok} ok / {self.segments_bad} bad, "
                f"{self.events_delivered} events, {self.records_dropped} records dropped, "
                f"lost {lost}")


def _source_name(source):
    try:
        return Source(source).name
    except ValueError:
        return str(source)


def _reply_sizes():
    sizes = {int(command): 0 for command in Command}
    sizes.update({int(command): layout.as_shape().size // 8
                  for command, layout in REPLY_LAYOUTS.items()})
    sizes[UNKNOWN_COMMAND_REPLY] = 1
    return sizes


class _ReplyAssembler:
    """Builds reply messages (opcode, length, payload) from REPLY bytes.

    An opcode the protocol does not define, or a length that differs from the size the
    protocol gives for that opcode, is a lost or mangled byte: the message is abandoned and
    counted, and the next byte is taken as an opcode. That is how assembly resynchronises."""

    SIZES = _reply_sizes()

    def __init__(self, stats, out):
        self.stats = stats
        self.out = out
        self.reset()

    def reset(self):
        self.opcode = None
        self.length = None
        self.payload = bytearray()

    def abort(self):
        """A reply byte was lost here."""
        if self.opcode is not None:
            self.stats.reply_errors += 1
        self.reset()

    def completes(self, byte):
        """Whether ``byte`` would be the last byte of the message being assembled."""
        if self.opcode is None:
            return False
        if self.length is None:
            return byte == 0 and self.SIZES[self.opcode] == 0
        return len(self.payload) + 1 == self.length

    def push(self, byte):
        if self.opcode is None:
            if byte in self.SIZES:
                self.opcode = byte
            else:
                self.stats.reply_errors += 1
            return
        if self.length is None:
            if byte != self.SIZES[self.opcode]:
                self.abort()
                return
            self.length = byte
        else:
            self.payload.append(byte)
        if len(self.payload) == self.length:
            self.out.append((self.opcode, bytes(self.payload)))
            self.stats.replies += 1
            self.reset()


@dataclass
class _OpenSegment:
    """The segment after the last trusted SYNC, waiting for the SYNC that closes it."""
    stamp: int          # 48-bit time base from the opening SYNC
    crc: int            # CRC-16 of its bytes so far (REPLY records excluded)
    bad: bool = False   # a malformed record or too many events: cannot verify
    count: int = 0      # event records so far
    parts: list = field(default_factory=list)   # (source, value, delta) arrays while not bad

    def add(self, source, value, delta, bad):
        self.count += len(source)
        self.bad = self.bad or bad or self.count > SEGMENT_MAX_EVENTS
        if self.bad:
            self.parts = []
        elif len(source):
            self.parts.append((source, value, delta))

    def columns(self):
        if not self.parts:
            return (np.empty(0, np.uint8), np.empty(0, np.uint64), np.empty(0, np.uint64))
        return tuple(np.concatenate(column) for column in zip(*self.parts))


class StreamParser:
    """Incremental parser: :meth:`feed` bytes, get verified :class:`Events`.

    ``marker_width``: value bits of MARKER events (identify reply). ``latency``: mapping
    Source -> cycles from the pin to the stamp, subtracted from that source's stamps.

    Attributes: ``stats`` (:class:`ParserStats`), ``replies`` (deque of complete reply
    messages ``(opcode, payload_bytes)``, oldest first; the caller pops them).
    """

    def __init__(self, marker_width=16, latency=None):
        self.marker_width = marker_width
        width = np.zeros(16, np.uint64)
        for source in _EVENT_SOURCES:
            width[source] = value_width(source, marker_width)
        self._width = width
        self._value_mask = np.array([(1 << int(w)) - 1 for w in width], np.uint64)
        self._is_event = np.zeros(16, bool)
        self._is_event[list(_EVENT_SOURCES)] = True
        self._latency = np.zeros(16, np.uint64)
        for source, cycles in (latency or {}).items():
            self._latency[int(source)] = cycles
        self.latency = {Source(s): int(c) for s, c in enumerate(self._latency) if c}
        self.stats = ParserStats()
        self.replies = deque()
        self._assembler = _ReplyAssembler(self.stats, self.replies)
        self._carry = b""            # bytes of a record that may not be complete yet
        self._eager_reply = False    # the last feed ended with a lone REPLY lead taken as whole
        self._last_stamp = None      # 64-bit stamp of the last verified SYNC (unwrap anchor)
        self._open = None            # _OpenSegment, or None: waiting for a SYNC

    # --- public interface ---------------------------------------------------------------

    def feed(self, data):
        """Parses ``data``; returns the events of every segment it completed and verified."""
        data = bytes(data)
        self.stats.bytes_received += len(data)
        if not data:
            return Events.empty()
        if self._eager_reply and data[0] < LEAD_FLAG:
            # The REPLY record we took as one byte had a continuation: its value was wrong.
            self.stats.reply_errors += 1
            self.stats.bytes_skipped += 1
            data = data[1:]
        self._eager_reply = False
        return self._parse(self._carry + data, final=False)

    def gap(self):
        """Bytes are missing here: drop the open segment and trust nothing until a SYNC."""
        self.stats.bytes_skipped += len(self._carry)
        self._carry = b""
        self._eager_reply = False
        self._drop_open()
        self._assembler.abort()

    def finish(self):
        """End of data: parses what is left; an unclosed segment is dropped and counted."""
        events = self._parse(self._carry, final=True) if self._carry else Events.empty()
        self._eager_reply = False
        if self._open is not None and (self._open.count or self._open.bad):
            self._drop_open()
        self._open = None
        self._assembler.abort()
        return events

    # --- internals ----------------------------------------------------------------------

    def _drop_open(self):
        if self._open is not None:
            self.stats.segments_bad += 1
            self.stats.records_dropped += self._open.count
        self._open = None

    def _unwrap(self, stamp48):
        if self._last_stamp is None:
            return stamp48
        return self._last_stamp + ((stamp48 - self._last_stamp) & _STAMP_MASK)

    def _parse(self, buf, final):
        """Parses ``buf`` (the carried-over bytes and new data); keeps what may be incomplete."""
        arr = np.frombuffer(buf, np.uint8)
        starts = np.flatnonzero(arr >= LEAD_FLAG)
        span = np.diff(starts, append=len(buf))          # bytes up to the next lead byte
        leads = arr[starts]
        source = (leads >> LEAD_PAYLOAD_BITS) & 0xf

        # The last record may still grow, unless it is a full SYNC, a REPLY that cannot have
        # (more) continuation bytes, or already too long to be a record.
        self._carry = b""
        ambiguous_reply = False
        if len(starts) and not final:
            last_source, last_span, last_bits = source[-1], span[-1], leads[-1] & 0x7
            if last_source == Source.REPLY and last_span == 1 and last_bits < 2:
                ambiguous_reply = True       # a byte 0/1, or the lead of a two-byte record
            elif not (last_span > _MAX_LENGTH
                      or (last_source == Source.SYNC and last_span >= _SYNC_LENGTH)
                      or (last_source == Source.REPLY and (last_span > 1 or last_bits >= 2))):
                self._carry = buf[starts[-1]:]
            if ambiguous_reply or self._carry:
                starts, span, leads, source = starts[:-1], span[:-1], leads[:-1], source[:-1]
        committed = arr[:len(buf) - len(self._carry) - ambiguous_reply]

        length = np.where(source == Source.SYNC, np.minimum(span, _SYNC_LENGTH), span)
        payload, well_formed = self._decode(buf, starts, length, source)

        is_reply = source == Source.REPLY
        if is_reply.any():
            for byte, ok in zip(payload[is_reply].tolist(), well_formed[is_reply].tolist()):
                if ok:
                    self._assembler.push(byte)
                else:
                    self._assembler.abort()
        if ambiguous_reply:
            byte = int(arr[-1]) & 0x7
            if self._assembler.completes(byte):
                self._assembler.push(byte)
                self._eager_reply = True
            else:
                self._carry = buf[-1:]

        records = _Records(starts, span, length, source, payload, well_formed,
                           self._is_event[source] & well_formed)
        events = self._segments(committed, records)
        self.stats.events_delivered += len(events)
        return events

    def _decode(self, buf, starts, length, source):
        """Payload of every record and whether the record is well formed.

        Records of up to 8 bytes are read as big-endian 64-bit words at their start and their
        7-bit groups packed together with three shift-and-mask steps; the few longer ones
        (SYNC, LOSS, some BUS) go through a loop over their continuation bytes."""
        padded = np.frombuffer(buf + bytes(8), np.uint8)
        windows = np.ndarray((len(buf),), dtype=">u8", buffer=padded, strides=(1,))
        short = np.minimum(length, 8)
        x = windows[starts].astype(np.uint64) >> ((8 - short) * 8).astype(np.uint64)
        x &= 0x7f7f7f7f7f7f7f7f                     # 7-bit groups, 8 bits apart
        x = (x & 0x007f007f007f007f) | ((x >> 1) & 0x3f803f803f803f80)   # 14 bits, 16 apart
        x = (x & 0x00003fff00003fff) | ((x >> 2) & 0x0fffc0000fffc000)   # 28 bits, 32 apart
        x = (x & 0x000000000fffffff) | ((x >> 4) & 0x00fffffff0000000)   # 56 bits
        payload = x & _PAYLOAD_MASK[short]            # drops the lead's flag and source

        well_formed = (length <= _MAX_LENGTH) & ((source < 12) | (source >= Source.REPLY))
        long_records = np.flatnonzero((length > 8) & (length <= _MAX_LENGTH))
        if len(long_records):
            at = starts[long_records]
            n = length[long_records]
            lead_bits = (padded[at] & 0x7).astype(np.uint64)
            value = lead_bits
            for k in range(1, _MAX_LENGTH):
                byte = padded[np.minimum(at + k, len(padded) - 1)]
                value = np.where(n > k, (value << 7) | byte, value)
            payload[long_records] = value
            # A 10-byte record holds 66 bits; only payloads below 2**64 are valid.
            well_formed[long_records[(n == _MAX_LENGTH) & (lead_bits > 1)]] = False

        is_sync = source == Source.SYNC
        well_formed &= ~is_sync | (length == _SYNC_LENGTH)
        # The sender uses the fewest continuation bytes: the top group of a record is not 0.
        top = (LEAD_PAYLOAD_BITS + CONT_BITS * np.maximum(length - 2, 0)).astype(np.uint64)
        well_formed &= is_sync | (length == 1) | ((payload >> top) != 0)
        well_formed &= (source != Source.REPLY) | ((length <= 2) & (payload <= 0xff))
        delta = payload >> self._width[source]
        well_formed &= ~self._is_event[source] | (delta < (1 << DELTA_BITS))
        return payload, well_formed

    def _segments(self, committed, r):
        """Splits the committed records at SYNCs, checks each closed segment, returns the
        events of the verified ones and keeps the open one for the next buffer."""
        stats = self.stats
        is_reply = r.source == Source.REPLY
        # CRC domain: the committed bytes without REPLY records.
        if is_reply.any():
            edges = np.zeros(len(committed) + 1, np.int64)
            np.add.at(edges, r.starts[is_reply], 1)
            np.add.at(edges, r.starts[is_reply] + r.span[is_reply], -1)
            excluded = np.cumsum(edges[:-1]) > 0
            crc_bytes = committed[~excluded]
            excluded_before = np.concatenate(([0], np.cumsum(excluded)))
            crc_position = r.starts - excluded_before[r.starts]
            stats.bytes_skipped += int(r.span[is_reply & ~r.well_formed].sum())
        else:
            crc_bytes = committed
            crc_position = r.starts
        view = memoryview(crc_bytes)

        is_sync = (r.source == Source.SYNC) & r.well_formed
        syncs = np.flatnonzero(is_sync)
        nsync = len(syncs)
        segment = np.cumsum(is_sync)      # segment 0 was open before this buffer (or is none)
        nseg = nsync + 1
        bad_record = ~r.well_formed & ~is_reply
        event_count = np.bincount(segment[r.is_event], minlength=nseg).tolist()
        bad_count = np.bincount(segment[bad_record], minlength=nseg).tolist()
        positions = crc_position[syncs].tolist()
        sync_stamp = (r.payload[syncs] >> CRC_BITS).tolist()
        sync_crc = (r.payload[syncs] & ((1 << CRC_BITS) - 1)).tolist()

        # Skipped: bytes before the first trusted SYNC; in trusted segments, stray
        # continuation bytes and malformed records.
        lead_stray = int(r.starts[0]) if len(r.starts) else len(committed)
        junk = (r.span - r.length) + np.where(bad_record, r.length, 0)
        if self._open is None:
            stats.bytes_skipped += positions[0] if nsync else len(crc_bytes)
            junk = junk[segment > 0]
        else:
            stats.bytes_skipped += lead_stray
        stats.bytes_skipped += int(junk.sum())

        delta = np.where(r.is_event, r.payload >> self._width[r.source], 0).astype(np.uint64)
        value = r.payload & self._value_mask[r.source]
        cumulative = np.cumsum(delta, dtype=np.uint64)
        offset = np.zeros(nseg, np.uint64)     # stamp of an event = offset[its segment] + cumulative
        segment_ok = np.zeros(nseg, bool)
        parts = []
        for k in range(nsync):
            if k == 0:
                if self._open is None:
                    continue
                opened = self._open
                crc = binascii.crc_hqx(view[:positions[0]], opened.crc)
                stamp48 = opened.stamp
                bad = opened.bad or bad_count[0] > 0
                events = opened.count + event_count[0]
            else:
                crc = binascii.crc_hqx(view[positions[k - 1]:positions[k]], 0)
                stamp48, bad, events = sync_stamp[k - 1], bad_count[k] > 0, event_count[k]
            bad = bad or events > SEGMENT_MAX_EVENTS
            if not bad and crc == sync_crc[k]:
                base = self._unwrap(stamp48)
                self._last_stamp = base
                stats.segments_ok += 1
                segment_ok[k] = True
                if k == 0:
                    p_source, p_value, p_delta = opened.columns()
                    cycles = np.cumsum(p_delta, dtype=np.uint64)
                    parts.append(Events(base + cycles, p_source, p_value))
                    offset[0] = (base + int(cycles[-1] if len(cycles) else 0)) % _U64
                else:
                    offset[k] = (base - int(cumulative[syncs[k - 1]])) % _U64
            elif not bad and events == 0 and sync_crc[k] == 0:
                stats.restarts += 1           # START cleared the device's CRC: nothing lost
            else:
                stats.segments_bad += 1
                stats.records_dropped += events

        # The segment still open at the end of this buffer.
        tail = np.flatnonzero(r.is_event & (segment == nsync))
        if nsync:
            self._open = _OpenSegment(stamp=sync_stamp[-1],
                                      crc=binascii.crc_hqx(view[positions[-1]:], 0))
        elif self._open is not None:
            self._open.crc = binascii.crc_hqx(view, self._open.crc)
        if self._open is not None:
            self._open.add(r.source[tail], value[tail], delta[tail], bad_count[nsync] > 0)

        chosen = np.flatnonzero(r.is_event & segment_ok[segment])
        if len(chosen):
            parts.append(Events(offset[segment[chosen]] + cumulative[chosen],
                                r.source[chosen], value[chosen]))
        events = Events.concatenate(parts)
        if len(events):
            latency = self._latency[events.source]
            if latency.any():
                events.stamp = np.maximum(events.stamp, latency) - latency
            self._count_losses(events)
        return events

    def _count_losses(self, events):
        losses = events.value[events.source == Source.LOSS]
        for value in losses.tolist():
            lost = value & 0xf
            self.stats.lost[lost] = self.stats.lost.get(lost, 0) + (value >> 4)


class _Records:
    """The complete records of one buffer, as parallel arrays."""
    __slots__ = ("starts", "span", "length", "source", "payload", "well_formed", "is_event")

    def __init__(self, starts, span, length, source, payload, well_formed, is_event):
        self.starts = starts            # offset of the lead byte
        self.span = span                # bytes up to the next lead byte
        self.length = length            # record bytes (span, or 10 for a SYNC with strays)
        self.source = source
        self.payload = payload
        self.well_formed = well_formed
        self.is_event = is_event        # a well-formed event record
