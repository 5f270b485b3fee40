"""The gateware's encoder and serializer write protocol version 4's short records exactly as
the reference encoder does (docs/protocol.md, "Short records"): random FIFO entries whose
markers and bus writes repeat or step recent values, edges and IRQ edges (periodic and
triggered), LOSS records, same-cycle events, gaps beyond a delta (new segments), a 48-bit
stamp wrap, a segment closed at 255 records, and a link that is not always ready: the bytes
must be the reference encoder's, byte for byte. Built without short records (a board's
``short_records=False``), the encoder writes the reference's long records only."""

import random

from amaranth.hdl import Fragment, Module
from amaranth.lib.wiring import connect

from latscope_defs.protocol import (
    DELTA_BITS,
    GATEWARE_VERSION,
    SEGMENT_MAX_EVENTS,
    STAMP_BITS,
    Source,
    StreamEncoder,
    Tally,
    fixed_length,
    irq_value,
    lead_payload_bits,
    lead_source,
    loss_value,
    short_lead,
)
from latscope_gateware.encoder import EventEncoder, RecordFormat
from latscope_gateware.event_capture import entry_layout
from latscope_gateware.records import RecordSerializer
from latscope_gateware.short_form import ShortForm, long_is_shorter
from support.gateware_sim import byte_collector, run

SOURCES = {
    Source.MARKER: 16,
    Source.BUS: 32,
    Source.IRQ: 16,
    Source.EDGE0: 1,
    Source.EDGE6: 1,
    Source.EDGE7: 1,
}
FLUSH_AFTER = 3000


def random_entries(rng, count):
    """FIFO entries as (stamp, loss or None, {source: value}); their events, in the order the
    device sends them, as (stamp, source, value)."""
    recent = {Source.MARKER: [0x0E00], Source.BUS: [0x4100]}
    stamp, entries, events = 1, [], []
    for index in range(count):
        # No gap beyond a delta for a while: a segment of 255 records.
        far = [] if count // 4 <= index < count // 2 else [1 << DELTA_BITS]
        stamp += rng.choice([1, 2, 3, 100, 127, 128, 200, 511, 512, 5000, *far])
        if index == count // 2:
            stamp = (1 << STAMP_BITS) - 300  # the wrap comes a few entries later
        values = {}
        for source in rng.sample(list(SOURCES), rng.choice([1, 1, 1, 2, 3])):
            if source in recent:
                width = SOURCES[source]
                if rng.random() < 0.8:
                    value = (rng.choice(recent[source][-5:]) + rng.choice([0, 1, 2])) % (1 << width)
                else:
                    value = rng.getrandbits(width)
                recent[source].append(value)
            elif source == Source.IRQ:
                value = rng.choice([0, 1, irq_value(rng.getrandbits(1), 1, rng.getrandbits(14))])
            else:
                value = rng.getrandbits(1)
            values[source] = value
        # A LOSS record rides with no triggered IRQ edge (event_capture.entry_layout).
        loss = None
        if rng.random() < 0.1 and values.get(Source.IRQ, 0) <= 1:
            loss = (rng.choice(list(SOURCES)), rng.randrange(1, 1 << 32))
            events.append((stamp, Source.LOSS, loss_value(*loss)))
        events += [(stamp, source, values[source]) for source in sorted(values)]
        entries.append((stamp, loss, values))
    return entries, events


def entry_of(stamp, loss, values):
    irq = values.get(Source.IRQ, 0)
    return {
        "stamp": stamp % (1 << STAMP_BITS),
        "present": {source.name: int(source in values) for source in SOURCES},
        "value": {
            source.name: values.get(source, 0) & (1 if source == Source.IRQ else -1)
            for source in SOURCES
        },
        "loss_valid": loss is not None,
        "loss_source": loss[0] if loss else 0,
        "detail": {"loss_count": loss[1]} if loss else {"irq": irq >> 1},
    }


def tally_counts(data):
    """The ``count`` of every TALLY record in ``data``."""
    bits = lead_payload_bits(Source.TALLY)
    counts = []
    for at, byte in enumerate(data):
        if byte & 0x80 and lead_source(byte) == Source.TALLY:
            payload = byte & ((1 << bits) - 1)
            for cont in data[at + 1 : at + fixed_length(Source.TALLY)]:
                payload = payload << 7 | cont
            counts.append(payload >> Tally.as_shape()["count"].offset)
    return counts


def encode_in_gateware(entries, ready, short_records=True):
    layout = entry_layout(SOURCES)
    encoder = EventEncoder(layout, SOURCES, flush_after=FLUSH_AFTER, short_records=short_records)
    serializer = RecordSerializer()
    m = Module()
    m.submodules.encoder, m.submodules.serializer = encoder, serializer
    connect(m, encoder.records, serializer.records)
    out = []

    async def testbench(ctx):
        ctx.set(encoder.start, 1)
        await ctx.tick()
        ctx.set(encoder.start, 0)
        for entry in entries:
            ctx.set(encoder.entries.payload, entry_of(*entry))
            ctx.set(encoder.entries.valid, 1)
            await ctx.tick().until(encoder.entries.ready)
            ctx.set(encoder.entries.valid, 0)
        ctx.set(encoder.stopping, 1)
        await ctx.tick().repeat(400)

    run(m, testbench, processes=[byte_collector(serializer.bytes, out, ready)])
    return bytes(out)


def encode_in_reference(events, short_records=True):
    reference = StreamEncoder(version=GATEWARE_VERSION, short_records=short_records)
    for event in events:
        reference.event(*event)
    reference.flush()
    return reference.take()


def short_records_in(data):
    return sum(1 for byte in data if byte & 0x80 and short_lead(byte) is not None)


def test_short_records_match_the_reference_byte_for_byte():
    rng = random.Random(4)
    entries, events = random_entries(rng, 700)
    # The entries come as fast as the encoder takes them: no age flush in between (the
    # reference's age rule is by stamps, the device's by cycles).
    out = encode_in_gateware(entries, ready=lambda cycle: cycle % 3 != 1)
    expected = encode_in_reference(events)
    assert short_records_in(expected) > 400
    assert SEGMENT_MAX_EVENTS in tally_counts(expected)
    assert out == expected


def test_without_short_records_the_bytes_are_the_references_long_records():
    """``short_records=False`` (the iCEBreaker): on entries where short records would
    apply, every record is long, byte for byte the reference's with short records off."""
    rng = random.Random(5)
    entries, events = random_entries(rng, 300)
    out = encode_in_gateware(entries, ready=lambda cycle: cycle % 3 != 1, short_records=False)
    expected = encode_in_reference(events, short_records=False)
    assert short_records_in(encode_in_reference(events)) > 150  # they would apply
    assert short_records_in(expected) == 0
    assert out == expected


def test_without_short_records_no_history_is_built():
    """The value histories and their comparators are the short form's cells: with
    ``enabled=False`` none is built."""
    layout = entry_layout(SOURCES)

    def parts(enabled):
        short = ShortForm(layout, SOURCES, RecordFormat._value, enabled=enabled)
        return [name for _, name, _ in Fragment.get(short, None).subfragments]

    assert parts(True) == ["history_marker", "history_bus"]
    assert parts(False) == []


def test_an_edge_takes_the_shorter_form():
    """Where an edge's long record is a byte shorter (delta of bit length 1, 8, 15, 22:
    the long record's lead byte holds one bit of it), the encoder writes it long."""
    assert [bits for bits in range(1, DELTA_BITS + 1) if long_is_shorter(1, bits)] == [1, 8, 15, 22]
    assert not any(long_is_shorter(16, bits) for bits in range(DELTA_BITS + 1))
