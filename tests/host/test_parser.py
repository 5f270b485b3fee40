"""StreamParser: exact round trips through the reference encoder, damage that costs whole
segments and never yields a wrong event, replies, gap() and finish()."""

import dataclasses
import random
from itertools import cycle

import numpy as np
import pytest

from latscope.events import Events
from latscope.link import parser as parser_module
from latscope.link.parser import StreamParser
from latscope_defs.protocol import (
    DELTA_BITS,
    HOLE_SOURCE,
    SEGMENT_MAX_EVENTS,
    SEQUENCE_BITS,
    STAMP_BITS,
    UNKNOWN_COMMAND_REPLY,
    VERSION,
    Command,
    HoleCount,
    Source,
    StreamEncoder,
    encode_record,
    hole_count,
    hole_kind,
    hole_value,
    lead_bytes,
    lead_source,
    loss_count,
    loss_source,
    loss_value,
    value_width,
)
from support.damage import damage
from support.synthetic_suite import LATENCY

EVENT_SOURCES = [Source.MARKER, Source.BUS, Source.IRQ, Source.LOSS, *range(4, 12)]
SYNC_LEAD = lead_bytes(Source.SYNC)[0]


# --- helpers ------------------------------------------------------------------------------


def random_events(
    rng, count, *, start=1000, marker_width=16, gaps=(0, 1, 2, 100, 5000), version=VERSION
):
    """``count`` events in stamp order: every source, extreme and random values (of the
    protocol ``version``'s widths)."""
    events, stamp = [], start
    for _ in range(count):
        stamp += rng.choice(gaps)
        source = rng.choice(EVENT_SOURCES)
        width = value_width(source, marker_width, version)
        value = rng.choice([0, (1 << width) - 1, rng.getrandbits(width)])
        if source == Source.LOSS:  # of a real source: lost-source 0xF marks a hole
            value = value & ~0xF | rng.randrange(12)
        events.append((stamp, int(source), value))
    return events


def encode(events, marker_width=16, encoder=None):
    encoder = encoder or StreamEncoder(marker_width)
    for stamp, source, value in events:
        encoder.event(stamp, source, value)
    encoder.flush()
    return encoder.take()


def pieces(data, rng, largest):
    at = 0
    while at < len(data):
        size = rng.randint(1, largest)
        yield data[at : at + size]
        at += size


def parse(chunks, parser=None, **options):
    parser = parser or StreamParser(**options)
    parts = [parser.feed(chunk) for chunk in chunks]
    parts.append(parser.finish())
    return list(Events.concatenate(parts)), parser


def reply_records(opcode, payload):
    message = bytes([opcode, len(payload)]) + bytes(payload)
    return [encode_record(Source.REPLY, byte) for byte in message]


def segments_of(data, version=VERSION):
    """Byte offsets of the SYNC records of a clean stream, and the number of event records
    of the segment each opens."""
    syncs, counts = [], []
    for offset, byte in enumerate(data):
        if byte & 0x80:
            if lead_source(byte, version) == Source.SYNC:
                syncs.append(offset)
                counts.append(0)
            elif lead_source(byte, version) < Source.TALLY:
                counts[-1] += 1
    return syncs, counts


# --- round trips --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_round_trip_in_random_pieces(seed):
    rng = random.Random(seed)
    events = random_events(
        rng, 3000, gaps=(0, 0, 1, 3, 100, 5000, (1 << DELTA_BITS) - 1, 1 << DELTA_BITS, 1 << 40)
    )
    data = encode(events)
    whole, parser = parse([data])
    assert whole == events
    assert parser.stats.events_delivered == len(events)
    assert parser.stats.bytes_received == len(data)
    assert (
        parser.stats.bytes_skipped,
        parser.stats.segments_bad,
        parser.stats.records_dropped,
    ) == (0, 0, 0)
    for largest in (1000, 17, 2):
        assert parse(pieces(data, rng, largest))[0] == events


def test_round_trip_one_byte_at_a_time():
    rng = random.Random(5)
    events = random_events(rng, 400, gaps=(0, 1, 70, 1 << 23, 1 << DELTA_BITS))
    data = encode(events)
    assert parse([data[i : i + 1] for i in range(len(data))])[0] == events


@pytest.mark.parametrize("marker_width", [1, 8, 16, 24, 32])
def test_marker_widths(marker_width):
    rng = random.Random(marker_width)
    events = [
        (1000 + 3 * n, int(Source.MARKER), v)
        for n, v in enumerate(
            [0, (1 << marker_width) - 1] + [rng.getrandbits(marker_width) for _ in range(300)]
        )
    ]
    assert parse([encode(events, marker_width)], marker_width=marker_width)[0] == events


def test_extreme_records():
    """Largest deltas with the widest values give the 9- and 10-byte records."""
    top = (1 << DELTA_BITS) - 1
    events, stamp = [], 5
    for source in EVENT_SOURCES:
        width = value_width(source)
        for value in (0, (1 << width) - 1):
            stamp += top
            events.append((stamp, int(source), value))
    data = encode(events)
    assert len(encode_record(Source.LOSS, top << 36 | (1 << 36) - 1)) == 10
    assert parse([data])[0] == events


def test_long_segments_and_same_cycle_events():
    """Runs of more than 255 events in one cycle and at one-cycle spacing."""
    events = [(7777, int(Source.EDGE0 + n % 8), n & 1) for n in range(600)]
    events += [(8000 + n, int(Source.MARKER), n) for n in range(2 * SEGMENT_MAX_EVENTS + 3)]
    data = encode(events)
    got, parser = parse([data])
    assert got == events
    assert parser.stats.segments_ok == len(segments_of(data)[0]) >= 5


def test_stamp_wrap_at_48_bits():
    wrap = 1 << STAMP_BITS
    events = [(wrap - 300 + 37 * n, int(Source.IRQ), n & 1) for n in range(40)]
    # Unwrapping needs a SYNC at least every 2**48 cycles; long gaps are up to 2**47 here.
    events += [(wrap + (1 << 47) + n, int(Source.MARKER), n) for n in range(3)]
    events += [(2 * wrap + 11, int(Source.MARKER), 1), (2 * wrap + 20, int(Source.MARKER), 2)]
    got = parse([encode(events)])[0]
    assert got == events
    assert got[-1][0] > 2 * wrap


def test_latency_is_subtracted_per_source_and_stream_order_kept():
    events = [
        (1000, int(Source.IRQ), 1),
        (1001, int(Source.MARKER), 5),
        (1003, int(Source.EDGE0), 1),
        (1003, int(Source.MARKER), 6),
        (1004, int(Source.BUS), 9),
    ]
    latency = {Source.MARKER: 4, Source.IRQ: 1, Source.EDGE0: 2, Source.BUS: 0}
    got, _ = parse([encode(events)], latency=latency)
    assert got == [(999, 2, 1), (997, 0, 5), (1001, 4, 1), (999, 0, 6), (1004, 1, 9)]


def test_loss_records_are_events_and_counted():
    events = [
        (100, int(Source.LOSS), 7 << 4 | Source.MARKER),
        (100, int(Source.MARKER), 1),
        (150, int(Source.LOSS), 3 << 4 | Source.IRQ),
        (160, int(Source.LOSS), 5 << 4 | Source.MARKER),
    ]
    got, parser = parse([encode(events)])
    assert got == events
    assert parser.stats.lost == {Source.MARKER: 12, Source.IRQ: 3}
    assert parser.stats.lost_total == 15
    assert parser.stats.as_dict()["lost"] == {"MARKER": 12, "IRQ": 3}


def test_loss_value_is_count_above_the_source():
    """docs/protocol.md: a LOSS record's value is count << 4 | lost source."""
    for source, count in ((Source.MARKER, 7), (Source.EDGE7, (1 << 32) - 1)):
        value = loss_value(source, count)
        assert value == count << 4 | int(source)
        assert (loss_source(value), loss_count(value)) == (source, count)
    values = np.array([3 << 4 | 2, 9 << 4 | 11], np.int64)
    assert loss_source(values).tolist() == [2, 11] and loss_count(values).tolist() == [3, 9]


def test_events_helpers():
    events = Events([5, 6, 7], [0, 2, 0], [1, 1, 2])
    assert list(events.of(Source.MARKER)) == [(5, 0, 1), (7, 0, 2)]
    assert list(events.of(Source.IRQ, Source.MARKER)) == list(events)
    both = Events.concatenate([events, Events.empty(), events[1:]])
    assert list(both) == list(events) + [(6, 2, 1), (7, 0, 2)]
    assert both.stamp.dtype == np.uint64 and both.source.dtype == np.uint8
    assert len(Events.concatenate([])) == 0


# --- damage ---------------------------------------------------------------------------------


def small_stream(version=VERSION):
    """Five segments (long gaps force SYNCs), every record size, about 250 bytes."""
    rng = random.Random(11)
    events = []
    for segment in range(5):
        start = (segment + 1) << 30
        events += [
            (stamp + start, source, value)
            for stamp, source, value in random_events(rng, 6, start=0, version=version)
        ]
    data = encode(events, encoder=StreamEncoder(version=version))
    assert len(segments_of(data, version)[0]) == 5 + (version == 1)
    return events, data


def is_hole(event):
    return event[1] == Source.LOSS and event[2] & 0xF == HOLE_SOURCE


def check_holes(truth, got, *, exact):
    """The delivered events are true events, in order and unaltered, and every true event
    that is missing is covered by holes between the delivered events around it: a hole
    stamped at or after it (or the end-of-stream hole), with counts that add up to at least
    the missing events (``exact``: exactly, for the holes before a delivered event)."""
    delivered = [event for event in got if not is_hole(event)]
    it = iter(truth)
    assert all(event in it for event in delivered), "invented or altered event"
    at, holes = 0, []
    for event in got + [None]:
        if event is not None and is_hole(event):
            holes.append(event)
            continue
        end = truth.index(event, at) if event is not None else len(truth)
        missing = truth[at:end]
        count = sum(hole_count(hole[2]) for hole in holes)
        if missing:
            assert holes, f"{len(missing)} events missing without a hole"
            assert event is None or holes[-1][0] >= missing[-1][0], "hole stamped too early"
            assert count >= len(missing)
        if exact and event is not None:
            assert count == len(missing)
            assert all(hole_kind(hole[2]) == HoleCount.EXACT for hole in holes)
        at, holes = end + 1, []


def check_damaged(events, data, damaged, position, version=VERSION):
    """Only events of the segments next to the damage may go missing, every missing one is
    covered by a hole, and the statistics agree with the holes."""
    got, parser = parse([damaged], version=version)
    check_holes(events, got, exact=version >= 2)
    syncs, counts = segments_of(data, version)
    segment = max(0, sum(1 for s in syncs if s <= position) - 1)
    first = sum(counts[: max(segment - 1, 0)])
    last = sum(counts[: segment + 1])
    missing = [event for event in events if event not in got]
    assert all(first <= events.index(event) < last for event in missing), position
    holes = [event for event in got if is_hole(event)]
    assert parser.stats.holes == len(holes)
    assert parser.stats.records_dropped == sum(hole_count(hole[2]) for hole in holes)
    if not missing:
        assert [event for event in got if not is_hole(event)] == events
    return parser


def test_every_bit_flip():
    events, data = small_stream()
    unnoticed = set()
    for position in range(len(data)):
        for bit in range(8):
            damaged = bytearray(data)
            damaged[position] ^= 1 << bit
            parser = check_damaged(events, data, bytes(damaged), position)
            if not (parser.stats.segments_bad or parser.stats.bytes_skipped):
                unnoticed.add((position, bit))
    # Version 2: the CRC-32 covers every bit of a segment up to its SEAL, the SEAL is
    # compared whole: no flip goes unnoticed.
    assert unnoticed == set()


def test_every_byte_deletion():
    events, data = small_stream()
    for position in range(len(data)):
        check_damaged(events, data, data[:position] + data[position + 1 :], position)


def test_every_byte_duplication():
    events, data = small_stream()
    for position in range(len(data)):
        check_damaged(events, data, data[: position + 1] + data[position:], position)


@pytest.mark.parametrize("inserted", [0x00, 0x55, 0x7F, 0x80, 0xA9, 0xE8, SYNC_LEAD, 0xF0, 0xFF])
def test_every_byte_insertion(inserted):
    events, data = small_stream()
    for position in range(len(data) + 1):
        check_damaged(events, data, data[:position] + bytes([inserted]) + data[position:], position)


@pytest.mark.parametrize("seed", range(4))
def test_many_damages_in_a_long_stream(seed):
    """Flips, drops, duplicates and bursts at random places of a long stream, fed in random
    pieces: still only true events, every missing one in a hole of exact count."""
    rng = random.Random(seed)
    events = random_events(rng, 3000, gaps=(0, 1, 3, 100, 5000, 1 << 25))
    data = bytearray(encode(events))
    for _ in range(25):
        at = rng.randrange(len(data))
        kind = rng.choice(["flip", "drop", "duplicate", "burst"])
        if kind == "flip":
            data[at] ^= 1 << rng.randrange(8)
        elif kind == "drop":
            del data[at]
        elif kind == "duplicate":
            data[at:at] = data[at : at + 1]
        else:
            data[at : at + 8] = bytes(rng.getrandbits(8) for _ in range(8))
    got, parser = parse(pieces(bytes(data), rng, 500))
    check_holes(events, got, exact=True)
    assert parser.stats.holes >= 1


def test_version_1_damage_never_alters_an_event():
    """Old captures: the same damage, read with the version 1 rules (holes bounded by the
    time they span, so not exact)."""
    events, data = small_stream(version=1)
    for position in range(len(data)):
        for bit in (0, 3, 7):
            damaged = bytearray(data)
            damaged[position] ^= 1 << bit
            check_damaged(events, data, bytes(damaged), position, version=1)
        check_damaged(events, data, data[:position] + data[position + 1 :], position, 1)
        check_damaged(events, data, data[: position + 1] + data[position:], position, 1)


def test_damage_costs_exactly_the_damaged_segment():
    events, data = small_stream()
    syncs, counts = segments_of(data)
    damaged = bytearray(data)
    damaged[syncs[2] + 12] ^= 0x10  # inside an event record of segment 2
    got, parser = parse([bytes(damaged)])
    hole = (events[sum(counts[:3])][0], int(Source.LOSS), hole_value(counts[2]))
    assert got == events[: sum(counts[:2])] + [hole] + events[sum(counts[:3]) :]
    assert parser.stats.segments_bad == 1
    assert (parser.stats.holes, parser.stats.records_dropped) == (1, counts[2])
    assert parser.stats.segments_ok == 4


def test_a_lost_segment_is_a_hole_by_its_sequence_number():
    """Cut out exactly one whole segment: no byte is damaged, the sequence shows it."""
    events, data = small_stream()
    syncs, counts = segments_of(data)
    got, parser = parse([data[: syncs[1]] + data[syncs[2] :]])
    hole = (events[sum(counts[:2])][0], int(Source.LOSS), hole_value(counts[1]))
    assert got == events[: counts[0]] + [hole] + events[sum(counts[:2]) :]
    assert (parser.stats.segments_bad, parser.stats.bytes_skipped) == (0, 0)


def test_bytes_before_the_first_sync_are_skipped():
    events, data = small_stream()
    syncs, counts = segments_of(data)
    got, parser = parse([data[syncs[1] - 7 :]])  # starts inside segment 0's last records
    # The first verified segment's TALLY says how many events of the capture came before.
    assert (
        got
        == [(events[counts[0]][0], int(Source.LOSS), hole_value(counts[0]))] + events[counts[0] :]
    )
    assert parser.stats.bytes_skipped == 7
    assert parser.stats.segments_bad == 0


def test_garbage_never_raises():
    rng = random.Random(3)
    garbage = bytes(rng.getrandbits(8) for _ in range(50000))
    got, parser = parse(pieces(garbage, rng, 3000))
    assert all(is_hole(event) for event in got)
    events, data = small_stream()
    got = parse([garbage, data])[0]
    assert [event for event in got if not is_hole(event)] == events
    assert parser.stats.bytes_received == len(garbage)


def test_a_stamp_far_ahead_after_a_hole_waits_for_confirmation():
    """No event for 2**47 stamp units or more across a hole: the first segment after it is
    refused (its stamp could be one behind the time base), the next one, linked to it,
    confirms it and the time base jumps there. (A device reset is another thing:
    tests/test_replay_and_resets.py.)"""
    far = 5_000_000 + (1 << 47) + (1 << 30)
    before = [(5_000_000 + n, int(Source.MARKER), n) for n in range(3)]
    lost = [(5_000_000 + (1 << 27), int(Source.MARKER), 7)]
    after = [(far + (1 << 25) * n, int(Source.IRQ), n & 1) for n in range(3)]
    data = encode(before + lost + after)
    syncs, counts = segments_of(data)
    assert counts == [3, 1, 1, 1, 1]
    got, parser = parse([data[: syncs[1]] + data[syncs[2] :]])  # segment 1 cut out
    assert got == before + [(after[1][0], int(Source.LOSS), hole_value(2))] + after[1:]
    assert parser.stats.segments_bad == 1 and parser.stats.resets == 0


# --- gap(), finish(), versions ------------------------------------------------------------------


def test_gap_drops_the_open_segment_and_waits_for_a_sync():
    events, data = small_stream()
    syncs, counts = segments_of(data)
    leads = [n for n in range(syncs[2] + 8, syncs[3]) if data[n] & 0x80]
    cut = leads[2] + 1  # two whole event records and one byte of the third
    resume = syncs[3] + 4  # the bytes in between are lost
    lost = sum(counts[2:4])
    for missing, count in ((resume - cut, lost), (None, None)):
        parser = StreamParser()
        first = list(parser.feed(data[:cut]))
        parser.gap(missing)
        rest, _ = parse([data[resume:]], parser)
        assert first == events[: sum(counts[:2])]
        assert rest[1:] == events[sum(counts[:4]) :]
        stamp, source, value = rest[0]
        assert (stamp, source, value & 0xF) == (events[sum(counts[:4])][0], Source.LOSS, 0xF)
        if count is not None:  # few bytes missing: exact
            assert (hole_count(value), hole_kind(value)) == (count, HoleCount.EXACT)
        else:  # unknown: as often more as the sequence can wrap
            assert hole_count(value) >= lost and hole_count(value) % (1 << SEQUENCE_BITS) == lost
        assert (parser.stats.segments_bad, parser.stats.records_dropped) == (1, hole_count(value))
        assert parser.stats.bytes_skipped == 1 + syncs[4] - resume


def test_finish_drops_an_unclosed_segment():
    events, data = small_stream()
    syncs, counts = segments_of(data)
    parser = StreamParser()
    got = list(parser.feed(data[: syncs[4] + 12]))
    end = list(parser.finish())
    assert got == events[: sum(counts[:4])]
    # The end-of-stream hole: after the last delivered event, bounded by the bytes dropped.
    assert end == [
        (events[sum(counts[:4]) - 1][0] + 1, int(Source.LOSS), hole_value(12, HoleCount.AT_MOST))
    ]
    assert parser.stats.segments_bad == 1
    assert (
        parser.stats.records_dropped
        == 12
        >= sum(1 for b in data[syncs[4] + 8 : syncs[4] + 12] if b & 0x80)
    )


def test_finish_after_a_clean_end_loses_nothing():
    events, data = small_stream()
    parser = StreamParser()
    assert list(parser.feed(data)) == events
    assert len(parser.finish()) == 0
    assert (parser.stats.segments_bad, parser.stats.records_dropped, parser.stats.holes) == (
        0,
        0,
        0,
    )


def test_a_new_capture_continues_the_sequence():
    """START restarts the capture's count, not the device's: nothing is lost between."""
    first = [(1000 + n, int(Source.MARKER), n) for n in range(10)]
    second = [(90000 + n, int(Source.IRQ), n & 1) for n in range(10)]
    encoder = StreamEncoder()
    data = encode(first, encoder=encoder)
    encoder.start()
    data += encode(second, encoder=encoder)
    got, parser = parse([data])
    assert got == first + second
    assert (parser.stats.holes, parser.stats.segments_bad) == (0, 0)


def test_a_capture_joined_late_starts_with_a_hole():
    events = [(1000 + n, int(Source.MARKER), n) for n in range(300)]
    data = encode(events)
    syncs, counts = segments_of(data)
    got, parser = parse([data[syncs[1] :]])
    assert got == [(events[255][0], int(Source.LOSS), hole_value(255))] + events[255:]


def test_version_1_streams_still_parse():
    rng = random.Random(9)
    events = random_events(rng, 2000, gaps=(0, 1, 70, 1 << 23, 1 << DELTA_BITS), version=1)
    data = encode(events, encoder=StreamEncoder(version=1))
    for largest in (len(data), 13):
        got, parser = parse(pieces(data, rng, largest), version=1)
        assert got == events
        assert (parser.stats.segments_bad, parser.stats.holes) == (0, 0)
    # ... and a version 1 restart (START cleared the CRC) loses nothing.
    first = [(1000 + n, int(Source.MARKER), n) for n in range(10)]
    data = encode(first, encoder=StreamEncoder(version=1)) * 2
    got, parser = parse([data], version=1)
    assert got == first * 2 and parser.stats.restarts == 1


def test_version_1_hole_is_bounded_by_its_bytes_or_time_span():
    """No sequence numbers in version 1: a hole counts the event records its bytes or the
    time it spans could hold, whichever is fewer (with bytes missing in unknown number,
    only the time)."""
    events, data = small_stream(version=1)
    syncs, counts = segments_of(data, 1)
    damaged = bytearray(data)
    damaged[syncs[2] + 12] ^= 0x10
    got, parser = parse([bytes(damaged)], version=1)
    hole = got[sum(counts[:2])]
    after = events[sum(counts[:3])]
    assert hole == (after[0], int(Source.LOSS), hole_value(syncs[3] - syncs[2], HoleCount.AT_MOST))
    parser = StreamParser(version=1)
    got = list(parser.feed(data[: syncs[2] + 12]))
    parser.gap()
    got += parse([data[syncs[3] :]], parser)[0]
    before = events[sum(counts[:2]) - 1]
    assert got[sum(counts[:2])] == (
        after[0],
        int(Source.LOSS),
        hole_value(12 * (after[0] - before[0] + 1), HoleCount.AT_MOST),
    )


def test_unknown_version_is_refused():
    with pytest.raises(ValueError, match=f"version {VERSION + 1}"):
        StreamParser(version=VERSION + 1)


# --- replies ---------------------------------------------------------------------------------


def records_with_replies(events, messages, rng):
    """The encoded stream with the REPLY records of ``messages`` slipped in between records
    at random places, also inside segments."""
    encoder = StreamEncoder()
    records = []
    for stamp, source, value in events:
        encoder.event(stamp, source, value)
        records.append(encoder.take())
    encoder.flush()
    records.append(encoder.take())
    replies = [record for opcode, payload in messages for record in reply_records(opcode, payload)]
    places = sorted(rng.randrange(len(records) + 1) for _ in replies)
    out = bytearray()
    for index, record in enumerate(records):
        while places and places[0] == index:
            places.pop(0)
            out += replies.pop(0)
        out += record
    for record in replies:
        out += record
    return bytes(out)


def test_replies_interleaved_mid_segment():
    rng = random.Random(2)
    events = random_events(rng, 500)
    # Last bytes are 0 or 1, as in real replies: see the test after the next.
    identify = bytes(range(200, 238)) + b"\0"
    older_identify = bytes(range(200, 234)) + b"\0"  # single-clock gateware: 35 bytes
    messages = [
        (Command.STATUS, bytes([0, 1, 2, 8, 127, 128, 255, 7, 0, 0, 9, 1, 0, 0, 0])),
        (Command.START, b""),
        (Command.IDENTIFY, identify),
        (Command.IDENTIFY, older_identify),
        (UNKNOWN_COMMAND_REPLY, b"\1"),
        (Command.STOP, b""),
    ]
    data = records_with_replies(events, messages, rng)
    for largest in (len(data), 7, 1):
        parser = StreamParser()
        got, _ = parse(pieces(data, rng, largest), parser)
        assert got == events
        assert list(parser.replies) == [(int(op), payload) for op, payload in messages]
        assert (parser.stats.replies, parser.stats.reply_errors) == (len(messages), 0)
        assert parser.stats.segments_bad == 0 and parser.stats.bytes_skipped == 0


def test_identify_reply_reports_both_clocks_and_older_replies_still_read():
    from latscope.link.identity import Identity
    from latscope_defs.protocol import MAGIC, VERSION, IdentifyReply, reply_sizes

    reply = IdentifyReply.const(
        {
            "magic": int.from_bytes(MAGIC, "little"),
            "version": VERSION,
            "clock_hz": 150_000_000,
            "stamp_shift": 1,
            "link_clock_hz": 75_000_000,
            "board": list(b"b".ljust(16)),
            "trigger_latency": 8,
        }
    )
    payload = reply.as_bits().to_bytes(40, "little")
    assert reply_sizes(Command.IDENTIFY) == (40, 35, 39)
    identity = Identity.from_reply(payload)
    assert (identity.clock_hz, identity.link_clock_hz) == (150_000_000, 75_000_000)
    assert identity.trigger_latency == 8 and identity.has_trigger
    assert Identity.from_reply(payload[:39]).trigger_latency == 0  # version 2: none
    # A version 3 device without the trigger (a board's bring-up build) says so with 0.
    assert not dataclasses.replace(identity, trigger_latency=0).has_trigger
    assert identity.resolution_ns == 1e9 / 300_000_000  # stamps use the capture clock
    assert identity.irq_clock_hz == 75_000_000  # IRQ settings the link clock
    older = Identity.from_reply(payload[:35])
    assert (older.clock_hz, older.link_clock_hz, older.stamp_shift) == (150_000_000, 0, 1)
    assert older.irq_clock_hz == 150_000_000  # one clock: the capture clock
    assert Identity.from_dict(identity.as_dict()) == identity


def test_acknowledgement_completes_without_further_bytes():
    """An empty reply ends with a lone 0xF0 (length 0): it must not wait for more data."""
    parser = StreamParser()
    for record in reply_records(Command.IRQ_CONFIG, b""):
        parser.feed(record)
    assert list(parser.replies) == [(Command.IRQ_CONFIG, b"")]
    status = bytes(14) + b"\0"  # last byte 0: a lone lead byte too
    parser.feed(b"".join(reply_records(Command.STATUS, status)))
    assert parser.replies[-1] == (Command.STATUS, status)


def test_split_two_byte_reply_record_waits_for_its_continuation():
    """0xF0 then 0x23 is the length 35; the parser must not take 0xF0 alone as length 0."""
    parser = StreamParser()
    stream = b"".join(reply_records(Command.IDENTIFY, bytes(35)))
    for byte in stream:
        parser.feed(bytes([byte]))
    assert list(parser.replies) == [(Command.IDENTIFY, bytes(35))]
    assert parser.stats.reply_errors == 0


def test_last_reply_byte_split_from_its_continuation_is_counted():
    """A last reply byte of 8 or more split after its lead byte is indistinguishable from a
    lone 0 at the end of a feed: the reply is delivered with 0 and counted as an error."""
    parser = StreamParser()
    stream = b"".join(reply_records(UNKNOWN_COMMAND_REPLY, b"X"))
    parser.feed(stream[:-1])
    parser.feed(stream[-1:])
    assert parser.stats.reply_errors == 1


def test_replies_resynchronise_after_a_lost_byte():
    parser = StreamParser()
    broken = reply_records(Command.IDENTIFY, bytes(35))
    del broken[1]  # the length byte is lost
    parser.feed(b"".join(broken) + b"".join(reply_records(Command.STOP, b"")))
    assert list(parser.replies) == [(Command.STOP, b"")]
    assert parser.stats.reply_errors == 1


def test_pin_latency_correction_clamps_at_zero():
    """A stamp below its source's pin latency (an event in the first cycles of a capture)
    becomes 0, not a wrapped unsigned stamp near 2**64 (the clamp of
    ``StreamParser._corrected``); stamps above it lose exactly the latency."""
    from latscope_defs.protocol import StreamEncoder

    encoder = StreamEncoder(flush_after=3000)
    for stamp, value in ((1, 0x11), (3, 0x12), (4, 0x13), (9, 0x14)):
        encoder.event(stamp, Source.MARKER, value)
    encoder.flush()
    parser = StreamParser(latency={Source.MARKER: 4})
    events = Events.concatenate([parser.feed(encoder.take()), parser.finish()])
    assert [int(s) for s in events.stamp] == [0, 0, 0, 5]
    assert [int(v) for v in events.value] == [0x11, 0x12, 0x13, 0x14]


def test_irq_pad_delay_moves_irq_stamps_later_and_nothing_else():
    """The IRQ output's pad delay (``irq_pad_delay``, latscope.link.pad_delay) is added to
    IRQ stamps, as pin latencies are subtracted from the others; the stamps of every other
    source keep their own correction."""
    from latscope_defs.protocol import StreamEncoder

    encoder = StreamEncoder(flush_after=3000)
    events_in = [(10, Source.MARKER, 0x11), (20, Source.IRQ, 1), (30, Source.EDGE0, 1)]
    for stamp, source, value in events_in:
        encoder.event(stamp, source, value)
    encoder.flush()
    parser = StreamParser(latency={Source.MARKER: 4, Source.EDGE0: 2}, irq_pad_delay=2)
    events = Events.concatenate([parser.feed(encoder.take()), parser.finish()])
    assert [(int(s), int(source)) for s, source in zip(events.stamp, events.source)] == [
        (6, Source.MARKER),
        (22, Source.IRQ),
        (28, Source.EDGE0),
    ]


def _parsed(stream, feeds, monkeypatch=None):
    """Events and statistics of ``stream`` fed in pieces of the sizes ``feeds`` cycles through;
    with ``monkeypatch``, every segment takes the general path (``SegmentChain.place`` in
    Python, ``binascii.crc32``) instead of the compiled one of ``record_loop.clean_run``."""
    if monkeypatch is not None:
        monkeypatch.setattr(
            parser_module._Segments,
            "_clean_run",
            lambda self, k, done, done_byte, _: (k, done, done_byte),
        )
    parser = StreamParser(latency=LATENCY)
    parts, at = [], 0
    for size in cycle(feeds):
        if at >= len(stream):
            break
        parts.append(parser.feed(stream[at : at + size]))
        at += size
    parts.append(parser.finish())
    return list(Events.concatenate(parts)), parser.stats.as_dict()


@pytest.mark.parametrize("kind", ["flip", "drop", "duplicate", "mixed"])
def test_compiled_segment_chain_is_the_general_one(suite, kind, monkeypatch):
    """The segments that follow on cleanly are checked and placed in compiled code (CRC-32
    from a table of ``protocol.crc32``, the chain's usual step); the general path in Python
    must give the very same events and statistics, on a clean and a damaged stream, fed in
    pieces that cut segments anywhere."""
    run, _, stream = suite
    damaged = damage(stream, 1e-3, kind, random.Random(f"compiled {kind}"))
    for data in (stream, damaged):
        compiled = _parsed(data, [4096, 1, 100, 65536])
        assert compiled[1]["segments_ok"] > 100
        assert compiled == _parsed(data, [4096, 1, 100, 65536], monkeypatch)
        monkeypatch.undo()
