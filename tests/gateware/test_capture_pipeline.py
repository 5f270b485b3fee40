"""The time-stamper, FIFO, encoder and serializer produce exactly the reference encoder's bytes."""

import random

import pytest
from amaranth.hdl import Module
from amaranth.lib.crc import catalog

from latscope.events import Events
from latscope.link.parser import StreamParser
from latscope_defs.protocol import (
    GATEWARE_VERSION,
    IRQ_DELAY_BITS,
    SEGMENT_MAX_EVENTS,
    Source,
    StreamEncoder,
    irq_triggered,
    irq_value,
    value_width,
)
from latscope_gateware.capture_pipeline import CapturePipeline
from latscope_gateware.records import WordCrc32
from support.gateware_sim import byte_collector, run, start_pipeline

#: The IRQ value at its full width: an IrqValue, whose random values here are triggered edges
#: with delays (the trigger's firing, beyond the level, shares the FIFO entry's loss field).
SOURCES = {
    Source.MARKER: 16,
    Source.BUS: 32,
    Source.IRQ: value_width(Source.IRQ),
    Source.EDGE0: 1,
    Source.EDGE1: 1,
}


def simulate(
    script,
    *,
    cycles,
    fifo_depth=64,
    flush_after=1 << 16,
    ready=lambda cycle: True,
    drain=3000,
    word_crc=False,
):
    """Runs ``script`` ({cycle offset: [(source, value), ...]}) through the pipeline; returns
    (the stamped events as the testbench applied them, the bytes that came out)."""
    dut = CapturePipeline(
        SOURCES, fifo_depth=fifo_depth, flush_after=flush_after, word_crc=word_crc
    )
    applied, out = [], []

    async def testbench(ctx):
        await start_pipeline(ctx, dut)
        for offset in range(cycles):
            now = ctx.get(dut.now)
            for source in SOURCES:
                ctx.set(getattr(dut, source.name.lower()).valid, 0)
            for source, value in script.get(offset, []):
                port = getattr(dut, source.name.lower())
                ctx.set(port.valid, 1)
                ctx.set(port.payload, value)
                applied.append((now, source, value))
            await ctx.tick()
        for source in SOURCES:
            ctx.set(getattr(dut, source.name.lower()).valid, 0)
        if drain:  # stop, and let the encoder drain the FIFO and close the segment
            ctx.set(dut.enable, 0)
            ctx.set(dut.stopping, 1)
            await ctx.tick().repeat(drain)

    run(dut, testbench, processes=[byte_collector(dut.bytes, out, ready)])
    return applied, bytes(out)


def random_value(rng, source):
    """A random value of ``source``; of IRQ an edge's IrqValue: a trigger's, with a delay, or
    the periodic generator's (its level alone: an untriggered edge has delay 0)."""
    if source != Source.IRQ:
        return rng.getrandbits(SOURCES[source])
    triggered = rng.random() < 0.7
    return irq_value(
        rng.getrandbits(1), triggered, rng.getrandbits(IRQ_DELAY_BITS) if triggered else 0
    )


def reference(applied):
    encoder = StreamEncoder(version=GATEWARE_VERSION)
    for stamp, source, value in applied:
        encoder.event(stamp, source, value)
    encoder.flush()
    return encoder.take()


def test_simultaneous_events_share_a_stamp_in_source_order():
    script = {
        3: [(Source.IRQ, 1), (Source.MARKER, 0xBEEF), (Source.EDGE1, 1)],
        4: [(Source.BUS, 0xDEADBEEF)],
        10: [(Source.IRQ, 0)],
    }
    applied, out = simulate(script, cycles=12)
    applied.sort(key=lambda event: (event[0], event[1]))  # one entry: emitted in source order
    assert out == reference(applied)


@pytest.mark.slow
@pytest.mark.parametrize("word_crc", [False, True], ids=["amaranth-crc", "word-crc"])
def test_random_events_match_reference_byte_for_byte(word_crc):
    rng = random.Random(1)
    script = {}
    for offset in range(1, 4000):
        if rng.random() < 0.08:  # sparse enough that the byte link keeps up: no loss here
            sources = rng.sample(list(SOURCES), rng.randint(1, 3))
            script[offset] = [(source, random_value(rng, source)) for source in sources]
    applied, out = simulate(script, cycles=4000, drain=3000, flush_after=1 << 16, word_crc=word_crc)
    applied.sort(key=lambda event: (event[0], event[1]))
    assert len(applied) > 2 * SEGMENT_MAX_EVENTS  # spans several segments
    assert sum(irq_triggered(value) for _, source, value in applied if source == Source.IRQ) > 20
    assert out == reference(applied)


def test_old_segment_is_closed_without_stop():
    # The capture keeps running; flush_after cycles after its event the segment is closed.
    script = {2: [(Source.MARKER, 7)]}
    applied, out = simulate(script, cycles=2 + 120, flush_after=50, drain=0)
    assert out == reference(applied)


def test_steady_trickle_is_delivered_within_flush_after():
    # An event every 40 cycles never leaves the encoder idle; segments must still close
    # about every flush_after cycles so the host can verify and deliver their events.
    script = {offset: [(Source.MARKER, offset)] for offset in range(0, 2000, 40)}
    applied, out = simulate(script, cycles=2000, flush_after=100, drain=200)
    parser = StreamParser(latency={}, version=GATEWARE_VERSION)
    events = Events.concatenate([parser.feed(out), parser.finish()])
    assert [(stamp, value) for stamp, _, value in applied] == list(
        zip(events.stamp.tolist(), events.value.tolist())
    )
    assert parser.stats.segments_bad == 0
    # Each segment holds the events of at most flush_after cycles (plus the one in flight).
    assert parser.stats.segments_ok >= len(applied) // 4


def test_long_gaps_and_stamp_wrap_through_encoder():
    """Deltas of 2**24 and more, and the 48-bit stamp wrap, need entries far apart in time:
    drive the encoder directly with such entries."""
    from amaranth.hdl import Module
    from amaranth.lib.wiring import connect

    from latscope_gateware.encoder import EventEncoder
    from latscope_gateware.event_capture import entry_layout
    from latscope_gateware.records import RecordSerializer

    layout = entry_layout(SOURCES)
    encoder = EventEncoder(layout, SOURCES, flush_after=1 << 16)
    serializer = RecordSerializer()
    m = Module()
    m.submodules.encoder, m.submodules.serializer = encoder, serializer
    connect(m, encoder.records, serializer.records)
    wrap = 1 << 48
    stamps = [5, 5 + (1 << 24) - 1, 5 + 2 * (1 << 24), 5 + 2 * (1 << 24) + 1, wrap - 3, wrap + 2]
    out = []

    async def testbench(ctx):
        ctx.set(encoder.start, 1)
        await ctx.tick()
        ctx.set(encoder.start, 0)
        for index, stamp in enumerate(stamps):
            ctx.set(
                encoder.entries.payload,
                {
                    "stamp": stamp % wrap,
                    "present": {"MARKER": 1},
                    "value": {"MARKER": index},
                    "loss_valid": 0,
                    "loss_source": 0,
                    "detail": {"loss_count": 0},
                },
            )
            ctx.set(encoder.entries.valid, 1)
            await ctx.tick().until(encoder.entries.ready)
            ctx.set(encoder.entries.valid, 0)
        ctx.set(encoder.stopping, 1)
        await ctx.tick().repeat(200)

    run(m, testbench, processes=[byte_collector(serializer.bytes, out)])
    expected = StreamEncoder(version=GATEWARE_VERSION)
    for index, stamp in enumerate(stamps):
        # The reference works on 64-bit stamps; the wire carries them modulo 2**48.
        expected.event(stamp, Source.MARKER, index)
    expected.flush()
    assert bytes(out) == expected.take()


@pytest.mark.slow
def test_back_pressure_loses_nothing_silently():
    """A slow link fills the FIFO: the stream must still decode to every event, except
    those counted in LOSS records, and the capture goes on."""
    from latscope.link.parser import StreamParser

    script = {offset: [(Source.MARKER, offset & 0xFFFF)] for offset in range(1, 600, 2)}
    script.update({offset: [(Source.IRQ, offset // 7 & 1)] for offset in range(1, 600, 7)})
    applied, out = simulate(
        script, cycles=600, fifo_depth=4, ready=lambda cycle: cycle % 8 == 0, drain=30000
    )
    parser = StreamParser(version=GATEWARE_VERSION)
    events = parser.feed(out)
    events = (
        events.concatenate([events, parser.finish()]) if hasattr(events, "concatenate") else events
    )
    delivered = [
        (int(t), int(s), int(v)) for t, s, v in zip(events.stamp, events.source, events.value)
    ]
    losses = {}
    for _, source, value in delivered:
        if source == Source.LOSS:
            losses[value & 0xF] = losses.get(value & 0xF, 0) + (value >> 4)
    for source in (Source.MARKER, Source.IRQ):
        sent = [event for event in applied if event[1] == source]
        got = [event for event in delivered if event[1] == source]
        assert losses.get(source, 0) > 0
        assert len(got) + losses[source] == len(sent)
        assert set(got) <= set(sent)  # every delivered event is exact
    # Capture went on: events from the end of the script still arrived.
    assert max(event[0] for event in delivered) >= applied[-1][0] - 20


def test_word_crc_unit_matches_amaranths_cycle_for_cycle():
    """The word-form CRC unit (word_crc) against Amaranth's, on random bytes with
    random valid and start strobes (start alone, and start with a byte), every cycle."""
    m = Module()
    m.submodules.reference = reference = catalog.CRC32_ISO_HDLC(8).create()
    m.submodules.word = word = WordCrc32()
    rng = random.Random(14)
    pairs = []

    async def testbench(ctx):
        for _ in range(3000):
            start, valid, byte = rng.random() < 0.02, rng.random() < 0.7, rng.getrandbits(8)
            for unit in (reference, word):
                ctx.set(unit.start, start)
                ctx.set(unit.valid, valid)
                ctx.set(unit.data, byte)
            pairs.append((ctx.get(reference.crc), ctx.get(word.crc)))
            await ctx.tick()

    run(m, testbench)
    assert len({crc for crc, _ in pairs}) > 1000
    assert all(crc == word_crc for crc, word_crc in pairs)
