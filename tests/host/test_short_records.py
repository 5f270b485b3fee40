"""Protocol version 4's short records (docs/protocol.md, "Short records"): their bytes as
specified, exact round trips through the reference encoder and the parser for streams full of
them (long gaps, 48-bit stamp wraps, losses), damage inside them that never yields a wrong
event, and a version 3 capture file, written by the version 3 code, still read to the same
events."""

import json
import random
from pathlib import Path

import pytest
from test_parser import check_damaged, encode, parse, segments_of

from latscope.capture.file import load_capture
from latscope_defs.markers import Point, Test
from latscope_defs.markers import encode as marker
from latscope_defs.protocol import (
    SHORT_EDGE_SOURCES,
    STAMP_BITS,
    Source,
    StreamEncoder,
    crc32,
    encode_record,
    encode_short_edge,
    encode_short_value,
    irq_value,
    lead_source,
    loss_value,
    short_lead,
)

DATA = Path(__file__).parent / "data"
#: The sources of ``values_stream``'s events, as often as they come there.
SOURCES = (
    [Source.MARKER] * 8 + [Source.BUS] * 2 + [Source.IRQ] * 2 + [Source.LOSS, Source.EDGE7]
) + list(SHORT_EDGE_SOURCES[1:])


def values_stream(rng, count, *, start=1000, gaps=(0, 1, 2, 3, 75, 127, 128, 331, 511, 512, 5000)):
    """``count`` events in stamp order, as a DUT makes them: markers and bus writes that
    repeat or step one of their recent values (and some that do not), edges, IRQ edges of the
    periodic generator and of a trigger, losses."""
    recent = {Source.MARKER: [marker(Test.TSL_A, Point.T1, 0)], Source.BUS: [0x4100]}
    events, stamp = [], start
    for _ in range(count):
        stamp += rng.choice(gaps)
        source = rng.choice(SOURCES)
        if source in recent:
            width = 16 if source == Source.MARKER else 32
            if rng.random() < 0.85:
                value = (rng.choice(recent[source][-5:]) + rng.choice((0, 0, 1, 2))) % (1 << width)
            else:
                value = rng.choice([0, (1 << width) - 1, rng.getrandbits(width)])
            recent[source].append(value)
        elif source == Source.IRQ:
            value = rng.choice([0, 1, 1, irq_value(1, 1, rng.getrandbits(14))])
        elif source == Source.LOSS:
            value = loss_value(rng.randrange(12), rng.getrandbits(32))
        else:
            value = rng.getrandbits(1)
        events.append((stamp, int(source), value))
    return events


def short_records(data):
    return sum(1 for byte in data if byte & 0x80 and short_lead(byte) is not None)


def test_short_record_bytes():
    """The layouts of the spec's table, byte for byte."""
    assert encode_short_edge(Source.IRQ, 1, 0) == bytes([0b1110_000_1])
    assert encode_short_edge(Source.EDGE6, 0, 100) == bytes([0b1110_111_0, 100])
    assert encode_short_edge(Source.EDGE0, 1, 128) == bytes([0b1110_001_1, 1, 0])
    assert encode_short_value(Source.MARKER, 0, 1, 3) == bytes([0b110_00_1_11])
    assert encode_short_value(Source.MARKER, 3, 0, 511) == bytes([0b110_11_0_11, 0x7F])
    assert encode_short_value(Source.MARKER, 2, 1, 512) == bytes([0b110_10_1_00, 0b100, 0])
    assert encode_short_value(Source.BUS, 1, 1, 0) == bytes([0b11111_01_1])
    assert encode_short_value(Source.BUS, 0, 0, 66) == bytes([0b11111_00_0, 66])
    assert {lead_source(lead) for lead in range(0xC0, 0xE0)} == {Source.MARKER}
    assert [lead_source(lead) for lead in range(0xE0, 0xF0, 2)] == list(SHORT_EDGE_SOURCES)
    assert {lead_source(lead) for lead in range(0xF8, 0x100)} == {Source.BUS}
    assert {lead_source(lead) for lead in range(0xF0, 0xF8)} == {Source.REPLY}


def test_the_encoder_writes_the_shorter_form():
    """A TSL test's markers and the IRQ generator's edges: short records, the first marker of
    a segment long; an edge with delta 1 long (1 byte, as short it would be 2), a triggered
    IRQ edge long."""
    encoder = StreamEncoder()
    t1, t2 = marker(Test.TSL_A, Point.T1, 0), marker(Test.TSL_A, Point.T2, 1)
    for stamp, source, value in [
        (100, Source.MARKER, t1),  # long: nothing to refer to
        (200, Source.MARKER, t2),  # long: not t1 or t1 + 1
        (300, Source.MARKER, t1 + 1),  # back 1, step 1, delta 100
        (301, Source.EDGE0, 1),  # long, 1 byte
        (301, Source.IRQ, 1),  # short, delta 0: 1 byte
        (400, Source.IRQ, irq_value(0, 1, 5)),  # long
    ]:
        encoder.event(stamp, source, value)
    encoder.flush()
    data = encoder.take()
    assert data[8:-15] == (  # between the SYNC and the TALLY
        encode_record(Source.MARKER, t1)
        + encode_record(Source.MARKER, 100 << 16 | t2)
        + encode_short_value(Source.MARKER, 1, 1, 100)
        + bytes([0x80 | Source.EDGE0 << 2 | 0b11])  # delta 1, level 1: payload 0b11
        + encode_short_edge(Source.IRQ, 1, 0)
        + encode_record(Source.IRQ, 99 << 16 | irq_value(0, 1, 5))
    )


@pytest.mark.parametrize("seed", range(3))
def test_round_trip(seed):
    """Streams rich in short records, with gaps up to and beyond 2**24 (new segments), a
    48-bit stamp wrap and segments closed by age, fed in random pieces: every event back
    exactly."""
    rng = random.Random(seed)
    wrap = (1 << STAMP_BITS) - 3000
    events = values_stream(rng, 1500, gaps=(0, 1, 2, 100, 511, 512, 5000, 1 << 24))
    events += values_stream(rng, 1500, start=wrap)
    data = encode(events, encoder=StreamEncoder(flush_after=rng.choice([None, 2000, 100_000])))
    assert short_records(data) > len(events) / 3
    chunks, at = [], 0
    while at < len(data):
        size = rng.randint(1, 700)
        chunks.append(data[at : at + size])
        at += size
    got, parser = parse(chunks)
    assert got == events
    assert parser.stats.segments_bad == parser.stats.bytes_skipped == 0


def short_stream():
    """Five segments, mostly short records, about 200 bytes."""
    rng = random.Random(31)
    events = []
    for segment in range(5):
        events += values_stream(rng, 12, start=(segment + 1) << 30)
    data = encode(events)
    assert len(segments_of(data)[0]) == 5
    assert short_records(data) > len(events) / 2
    return events, data


def test_every_bit_flip():
    events, data = short_stream()
    for position in range(len(data)):
        for bit in range(8):
            damaged = bytearray(data)
            damaged[position] ^= 1 << bit
            parser = check_damaged(events, data, bytes(damaged), position)
            assert parser.stats.segments_bad or parser.stats.bytes_skipped, (position, bit)


def test_every_byte_deletion_and_duplication():
    events, data = short_stream()
    for position in range(len(data)):
        check_damaged(events, data, data[:position] + data[position + 1 :], position)
        check_damaged(events, data, data[: position + 1] + data[position:], position)


@pytest.mark.parametrize("inserted", [0x00, 0xB8, 0xC4, 0xE3, 0xFF])
def test_every_byte_insertion(inserted):
    """Among them lead bytes of every short record kind, and an unused one (0xB8)."""
    events, data = short_stream()
    for position in range(len(data) + 1):
        check_damaged(events, data, data[:position] + bytes([inserted]) + data[position:], position)


def test_a_reference_before_the_segment_is_malformed():
    """A short marker that refers further back than its segment has markers: the segment is
    dropped (a hole), not decoded with a value from elsewhere."""
    encoder = StreamEncoder()
    encoder.event(100, Source.MARKER, 7)
    encoder.event(200, Source.MARKER, 7)  # short: back 0
    encoder.flush()
    data = bytearray(encoder.take())
    at = data.index(encode_short_value(Source.MARKER, 0, 0, 100))
    data[at] = encode_short_value(Source.MARKER, 1, 0, 100)[0]  # back 1: no such marker
    # The CRC-32 is made right, so only the reference can tell.
    seal_at = len(data) - 6
    data[seal_at:] = encode_record(Source.SEAL, crc32(bytes(data[:seal_at])))
    got, parser = parse([bytes(data)])
    assert parser.stats.segments_bad == 1
    assert [event[1] for event in got] == [Source.LOSS]


def test_version3_capture_reads_to_the_same_events():
    """``data/version3.lsc`` was written by the version 3 code (commit bb3619c, made by
    ``data/make_version3.py``); ``version3.events.json`` holds the events it read to then."""
    capture = load_capture(DATA / "version3.lsc", correct_latency=False)
    assert capture.identity.version == 3
    got = list(
        zip(
            capture.events.stamp.tolist(),
            capture.events.source.tolist(),
            capture.events.value.tolist(),
        )
    )
    assert got == [
        tuple(event) for event in json.loads((DATA / "version3.events.json").read_text())
    ]
    assert capture.parser_stats.segments_bad == capture.parser_stats.bytes_skipped == 0
