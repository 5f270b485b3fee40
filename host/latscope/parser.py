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
import re
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from .protocol import (CRC_BITS, DELTA_BITS, LEAD_FLAG, LEAD_PAYLOAD_BITS, MAX_CONT,
                       REPLY_LAYOUTS, SEGMENT_MAX_EVENTS, STAMP_BITS, SYNC_CONT,
                       UNKNOWN_COMMAND_REPLY, Command, Source, loss_count, loss_source,
                       value_width)

__all__ = ["Events", "ParserStats", "StreamParser"]

_STAMP_MASK = (1 << STAMP_BITS) - 1
#: Lead bytes of REPLY and SYNC records: only they can complete a reply or a segment.
_REPLY_OR_SYNC_LEAD = re.compile(rb"[\xf0-\xff]")
_SYNC_LENGTH = 1 + SYNC_CONT
_MAX_LENGTH = 1 + MAX_CONT
#: Event sources: every source below REPLY except the reserved 12 and 13.
_EVENT_SOURCES = (Source.MARKER, Source.BUS, Source.IRQ, Source.LOSS,
                  *(Source(Source.EDGE0 + n) for n in range(8)))


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
        self.skipping = False      # bytes are being skipped after an error (counted once)
        self.reset()

    def reset(self):
        self.opcode = None
        self.length = None
        self.payload = bytearray()

    def abort(self):
        """A reply byte was lost here: abandon the message (one error per broken run)."""
        if self.opcode is not None:
            self.stats.reply_errors += 1
            self.skipping = True
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
                self.skipping = False
            elif not self.skipping:
                self.stats.reply_errors += 1
                self.skipping = True
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


class StreamParser:
    """Incremental parser: :meth:`feed` bytes, get verified :class:`Events`.

    ``marker_width``: value bits of MARKER events (identify reply). ``latency``: mapping
    Source -> cycles from the pin to the stamp, subtracted from that source's stamps.

    Attributes: ``stats`` (:class:`ParserStats`), ``replies`` (deque of complete reply
    messages ``(opcode, payload_bytes)``, oldest first; the caller pops them).

    Between feeds the parser keeps the bytes of the open segment, from its opening SYNC on
    (at most a few KiB), and parses them again with the next data: a segment is checked and
    decoded in one piece when its closing SYNC has arrived. Replies and skipped bytes in the
    kept part are not counted twice.
    """

    #: An open segment longer than this cannot be one the device sent (255 events of at most
    #: 10 bytes, plus the replies to a few commands): it is dropped as bad.
    MAX_SEGMENT_BYTES = 16 * 1024
    #: New bytes without a SYNC or REPLY lead are parsed once this many have come.
    MAX_UNPARSED = 4096

    def __init__(self, marker_width=16, latency=None):
        self.marker_width = marker_width
        # Value width per source; 64 for the others, so that their delta is 0.
        self._width = np.full(16, 64, np.uint64)
        for source in _EVENT_SOURCES:
            self._width[source] = value_width(source, marker_width)
        self._latency = np.zeros(16, np.uint64)
        for source, cycles in (latency or {}).items():
            self._latency[int(source)] = cycles
        self.latency = {Source(s): int(c) for s, c in enumerate(self._latency) if c}
        self.stats = ParserStats()
        self.replies = deque()
        self._assembler = _ReplyAssembler(self.stats, self.replies)
        self._carry = b""            # the open segment from its SYNC on, or a partial record
        self._seen = 0               # bytes at the start of _carry already accounted for
        self._open_events = None     # event records of the open segment; None: no trusted SYNC
        self._eager_reply = False    # the last feed ended with a lone REPLY lead taken as whole
        self._pending_lead = None    # offset in _carry of an unfinished SYNC or REPLY record
        self._pending_needs = 0      # bytes from there that can finish it
        self._last_stamp = None      # 64-bit stamp of the last verified SYNC (unwrap anchor)

    # --- public interface ---------------------------------------------------------------

    def feed(self, data):
        """Parses ``data``; returns the events of every segment it completed and verified."""
        data = bytes(data)
        self.stats.bytes_received += len(data)
        if not data:
            return Events.empty()
        if self._eager_reply and data[0] < LEAD_FLAG:
            # The REPLY record taken as one byte had a continuation byte: its value was wrong.
            self.stats.reply_errors += 1
        self._eager_reply = False
        self._carry += data
        # Only a SYNC or REPLY record can complete anything; small pieces without one wait
        # (this keeps one-byte-at-a-time feeding cheap).
        pending = self._pending_lead
        if ((pending is not None and len(self._carry) - pending >= self._pending_needs)
                or len(self._carry) - self._seen > self.MAX_UNPARSED
                or _REPLY_OR_SYNC_LEAD.search(data)):
            return self._parse(self._carry, final=False)
        return Events.empty()

    def gap(self):
        """Bytes are missing here: drop the open segment and trust nothing until a SYNC."""
        if len(self._carry) > self._seen:
            # Count the records that came since the last parse (none can complete anything).
            self._parse(self._carry, final=False)
        self.stats.bytes_skipped += len(self._carry) - self._seen
        self._drop_open()
        self._eager_reply = False
        self._assembler.abort()

    def finish(self):
        """End of data: parses what is left; an unclosed segment is dropped and counted (a
        segment without event records, as after the device's final SYNC, loses nothing)."""
        events = self._parse(self._carry, final=True) if self._carry else Events.empty()
        if self._open_events == 0:
            self._open_events = None
        self._drop_open()
        self._eager_reply = False
        self._assembler.abort()
        return events

    # --- internals ----------------------------------------------------------------------

    def _drop_open(self):
        if self._open_events is not None:
            self.stats.segments_bad += 1
            self.stats.records_dropped += self._open_events
        self._open_events = None
        self._carry = b""
        self._seen = 0
        self._pending_lead = None

    def _parse(self, buf, final):
        """Parses ``buf`` (the kept bytes and new data); keeps the open segment's bytes."""
        arr = np.frombuffer(buf, np.uint8)
        starts = np.flatnonzero(arr >= LEAD_FLAG)
        span = np.empty_like(starts)                     # bytes up to the next lead byte
        np.subtract(starts[1:], starts[:-1], out=span[:-1])
        span[-1:] = len(buf) - starts[-1:]

        # The last record may still grow, unless it is a full SYNC, a REPLY that cannot have
        # (more) continuation bytes, or already too long to be a record.
        committed = len(buf)        # records and CRC domain end here
        lone_reply = None
        if len(starts) and not final:
            last = int(arr[starts[-1]])
            last_source, last_bits = (last >> LEAD_PAYLOAD_BITS) & 0xf, last & 0x7
            last_span = int(span[-1])
            if last_source == Source.REPLY and last_span == 1 and last_bits < 2:
                lone_reply = last_bits      # a byte 0/1, or the lead of a two-byte record
            if lone_reply is not None or not (
                    last_span > _MAX_LENGTH
                    or (last_source == Source.SYNC and last_span >= _SYNC_LENGTH)
                    or (last_source == Source.REPLY and (last_span > 1 or last_bits >= 2))):
                committed = int(starts[-1])
                starts, span = starts[:-1], span[:-1]
        processed = committed       # bytes whose replies and skips have been counted

        r = self._decode(buf, starts, span)
        new_replies = r.replies[r.starts[r.replies] >= self._seen]
        for byte, ok in zip(r.payload[new_replies].tolist(),
                            r.well_formed[new_replies].tolist()):
            if ok:
                self._assembler.push(byte)
            else:
                self._assembler.abort()
        if lone_reply is not None and committed >= self._seen \
                and self._assembler.completes(lone_reply):
            self._assembler.push(lone_reply)
            self._eager_reply = True
            processed = len(buf)

        events, open_start = self._segments(arr[:committed], r)
        if open_start is None:
            self._carry, self._seen = buf[processed:], 0
        else:
            self._carry, self._seen = buf[open_start:], processed - open_start
        self._pending_lead = None
        if _REPLY_OR_SYNC_LEAD.match(buf, processed):
            self._pending_lead = len(self._carry) - (len(buf) - processed)
            self._pending_needs = _SYNC_LENGTH if buf[processed] >> 3 & 0xf == Source.SYNC else 2
        self.stats.events_delivered += len(events)
        return events

    def _decode(self, buf, starts, span):
        """Source, payload and well-formedness of every record (as :class:`_Records`).

        A record of up to 8 bytes is read as the big-endian 64-bit word at its start; masking
        off the flag bits and the source and shifting out the bytes after the record leaves
        7-bit groups 8 bits apart, which three shift-and-mask steps pack together. The few
        longer records (SYNC, big LOSS and BUS payloads) get their last bytes added by
        :func:`_decode_long`."""
        # Padding with lead bytes makes a one-byte record at the end look like any other.
        padded = buf + bytes([LEAD_FLAG]) * 8
        windows = np.ndarray((len(buf),), dtype=">u8", buffer=padded, strides=(1,))
        words = np.take(windows, starts).astype(np.uint64)
        source = (words >> 59).astype(np.uint8) & 0xf
        short = np.minimum(span, 8).astype(np.uint8)
        x = (words & 0x077f7f7f7f7f7f7f) >> (64 - 8 * short)
        x -= (x >> 1) & 0x3f803f803f803f80                               # 14 bits, 16 apart
        x = (x & 0x00003fff00003fff) | ((x >> 2) & 0x0fffc0000fffc000)   # 28 bits, 32 apart
        payload = (x & 0x000000000fffffff) | ((x >> 4) & 0x00fffffff0000000)

        is_event = source < len(_EVENT_SOURCES)
        width = np.take(self._width, source, mode="clip")
        ok = (span <= _MAX_LENGTH) & ((source & 0xe) != 12)    # 12 and 13 are reserved
        # The sender uses the fewest continuation bytes: the top 10 payload bits are not 0
        # (the second byte's flag keeps a one-byte record in: the next lead byte follows it).
        ok &= ((words >> 48) & 0x07ff) != 0
        special = np.flatnonzero(source >= Source.REPLY)
        syncs = special[source[special] == Source.SYNC]
        replies = special[source[special] == Source.REPLY]
        if len(syncs):
            # Fixed length 10, so no minimality; continuation bytes after the 10th are strays.
            ok[syncs] = span[syncs] >= _SYNC_LENGTH
        long_records = np.flatnonzero(span > 8)
        if len(long_records):
            _decode_long(np.frombuffer(padded, np.uint8), starts, span, source, payload, ok,
                         long_records)
        delta = payload >> width                    # 0 for SYNC and REPLY: width 64
        value = payload ^ (delta << width)
        ok &= (delta >> DELTA_BITS) == 0
        if len(replies):
            ok[replies] &= (span[replies] <= 2) & (payload[replies] <= 0xff)
        return _Records(starts, span, source, payload, delta, value, ok, is_event & ok,
                        replies, syncs)

    def _segments(self, committed, r):
        """Splits the records at the well-formed SYNCs, checks every segment that is closed,
        returns the events of the verified ones and where the open segment starts (None if
        it cannot be trusted).

        Segment k is records ``bounds[k] .. bounds[k + 1] - 1``: segment 0 comes before the
        first SYNC (nothing there can be verified: the kept bytes start with the open
        segment's SYNC), segment k >= 1 starts with its opening SYNC, the last one is open."""
        stats = self.stats
        seen = self._seen
        count = len(r.starts)
        # CRC domain: the committed bytes without REPLY records.
        if len(r.replies):
            edges = np.zeros(len(committed) + 1, np.int64)
            np.add.at(edges, r.starts[r.replies], 1)
            np.add.at(edges, r.starts[r.replies] + r.span[r.replies], -1)
            excluded = np.cumsum(edges[:-1]) > 0
            crc_bytes = committed[~excluded]
            excluded_before = np.concatenate(([0], np.cumsum(excluded)))
            crc_position = r.starts - excluded_before[r.starts]
            bad_replies = r.replies[~r.well_formed[r.replies] & (r.starts[r.replies] >= seen)]
            stats.bytes_skipped += int(r.span[bad_replies].sum())
        else:
            crc_bytes = committed
            crc_position = r.starts
        view = memoryview(crc_bytes)

        syncs = r.syncs[r.well_formed[r.syncs]]
        nsync = len(syncs)
        bounds = np.concatenate(([0], syncs, [count]))
        # Per segment: event records, and malformed records (which make a segment bad).
        others = np.flatnonzero(~r.is_event)
        event_count = np.diff(bounds) - np.diff(np.searchsorted(others, bounds))
        bad = others[~r.well_formed[others] & (r.source[others] != Source.REPLY)]
        bad_count = np.diff(np.searchsorted(bad, bounds))

        # Skipped: the bytes before the first SYNC, and in later segments stray continuation
        # bytes (after a SYNC's tenth byte) and malformed records not counted before.
        positions = crc_position[syncs]
        stats.bytes_skipped += int(positions[0]) if nsync else len(crc_bytes)
        first = syncs[0] if nsync else count
        bad_new = bad[(bad >= first) & (r.starts[bad] >= seen)]
        stray = syncs[(r.span[syncs] > _SYNC_LENGTH) & (r.starts[syncs] >= seen)]
        stats.bytes_skipped += int(r.span[bad_new].sum() + (r.span[stray] - _SYNC_LENGTH).sum())

        # Deltas of malformed records are not 0, but no verified segment holds one and the
        # time bases are written relative to this same sum, so they cancel out.
        delta = r.delta
        verified = self._verify(view, positions, r.payload[syncs], event_count, bad_count,
                                delta, bounds)
        if verified is not None:
            stamp = np.cumsum(delta)       # with the time bases added in at the SYNCs
            if verified.all():
                chosen = np.flatnonzero(r.is_event[syncs[0]:syncs[-1]]) + syncs[0]
            else:
                mask = np.repeat(np.concatenate(([False], verified, [False])), np.diff(bounds))
                chosen = np.flatnonzero(r.is_event & mask)
            source = np.take(r.source, chosen)
            events = Events(self._correct(np.take(stamp, chosen), source), source,
                            np.take(r.value, chosen))
            self._count_losses(events)
        else:
            events = Events.empty()

        # The open segment: kept unless it already cannot be verified.
        self._open_events = None
        if not nsync:
            return events, None
        self._open_events = int(event_count[-1])
        if (bad_count[-1] or event_count[-1] > SEGMENT_MAX_EVENTS
                or len(committed) - r.starts[syncs[-1]] > self.MAX_SEGMENT_BYTES):
            self._drop_open()
            return events, None
        return events, int(r.starts[syncs[-1]])

    def _verify(self, view, positions, sync_fields, event_count, bad_count, delta, bounds):
        """Checks the closed segments 1 .. nsync-1 and writes their time bases into ``delta``
        at their SYNC records, so that ``cumsum(delta)`` is every event's stamp. Returns which
        segments verified (None if no segment was closed)."""
        stats = self.stats
        closed = len(positions) - 1
        if closed <= 0:
            return None
        positions = positions.tolist()
        crc = np.array([binascii.crc_hqx(view[a:b], 0)
                        for a, b in zip(positions, positions[1:])], np.uint64)
        expected = sync_fields[1:] & ((1 << CRC_BITS) - 1)
        events = event_count[1:-1]
        clean = (bad_count[1:-1] == 0) & (events <= SEGMENT_MAX_EVENTS)
        ok = clean & (crc == expected)
        # START clears the device's CRC: the first SYNC of a capture closes the previous
        # capture's final, empty segment with CRC 0. Nothing is lost there.
        restart = clean & ~ok & (events == 0) & (expected == 0)
        failed = ~ok & ~restart
        stats.segments_ok += int(ok.sum())
        stats.restarts += int(restart.sum())
        stats.segments_bad += int(failed.sum())
        stats.records_dropped += int(events[failed].sum())
        if not ok.any():
            return ok

        # Time bases: unwrap the 48-bit SYNC stamps against the previous verified one.
        stamp48 = sync_fields[:-1][ok] >> CRC_BITS
        anchor = int(stamp48[0]) if self._last_stamp is None else self._last_stamp
        previous = np.concatenate((np.array([anchor & _STAMP_MASK], np.uint64), stamp48[:-1]))
        base = anchor + np.cumsum((stamp48 - previous) & _STAMP_MASK)
        self._last_stamp = int(base[-1])
        # cumsum(delta) must equal the base at each verified segment's SYNC record: add there
        # the base minus what the sum would be without it (wrapping uint64 arithmetic).
        sync_at = bounds[1:-1]
        segment_sum = np.add.reduceat(delta, sync_at)          # segments 1 .. nsync
        sum_at_sync = np.cumsum(segment_sum) - segment_sum + delta[:sync_at[0]].sum()
        adjust = base - sum_at_sync[:-1][ok]
        sync_at = sync_at[:-1][ok]
        adjust[1:] -= adjust[:-1].copy()
        delta[sync_at] = adjust
        return ok

    def _correct(self, stamp, source):
        """Stamps minus the pin-to-stamp latency of their sources (never below 0)."""
        if not self.latency:
            return stamp
        latency = np.take(self._latency, source, mode="clip")
        return np.maximum(stamp, latency) - latency

    def _count_losses(self, events):
        is_loss = events.source == Source.LOSS
        if not is_loss.any():
            return
        losses = events.value[is_loss]
        for value in losses.tolist():
            lost = loss_source(value)
            self.stats.lost[lost] = self.stats.lost.get(lost, 0) + loss_count(value)


def _decode_long(padded, starts, span, source, payload, ok, index):
    """Decodes in place the records at ``index``, which are longer than 8 bytes: their
    ``payload`` holds the 52 bits of their first 8 bytes; append the 7 bits of byte 9 and 10."""
    length = np.where(source[index] == Source.SYNC, np.minimum(span[index], _SYNC_LENGTH),
                      span[index])
    index, length = index[length <= _MAX_LENGTH], length[length <= _MAX_LENGTH]
    at = starts[index]
    ninth = (padded[at + 8] & 0x7f).astype(np.uint64)
    tenth = (padded[at + 9] & 0x7f).astype(np.uint64)
    head = payload[index]
    ten = length == _MAX_LENGTH
    payload[index] = np.where(ten, (head << 14) | (ninth << 7) | tenth, (head << 7) | ninth)
    # A 10-byte record holds 66 bits; only payloads below 2**64 are valid.
    ok[index[ten & ((head >> 50) != 0)]] = False


class _Records:
    """The complete records of one buffer, as parallel arrays (index = record number)."""
    __slots__ = ("starts", "span", "source", "payload", "delta", "value", "well_formed",
                 "is_event", "replies", "syncs")

    def __init__(self, starts, span, source, payload, delta, value, well_formed, is_event,
                 replies, syncs):
        self.starts = starts            # offset of the lead byte in the buffer
        self.span = span                # bytes up to the next lead byte (or buffer end)
        self.source = source            # uint8
        self.payload = payload          # uint64
        self.delta = delta              # payload >> value width (0 for non-event sources)
        self.value = value              # payload & value mask (meaningful for events)
        self.well_formed = well_formed
        self.is_event = is_event        # a well-formed event record
        self.replies = replies          # record numbers of REPLY records
        self.syncs = syncs              # record numbers of SYNC records, well formed or not
