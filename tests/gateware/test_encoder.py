"""The encoder's parts, each on its own: record choice, record format, segment state."""

import random

from amaranth.sim import Simulator

from latscope_defs.protocol import SEGMENT_MAX_EVENTS, Source, event_payload, value_width
from latscope_gateware.encoder import RecordChoice, RecordFormat, SegmentState
from latscope_gateware.event_capture import entry_layout
from support.gateware_sim import run

SOURCES = {Source.MARKER: 16, Source.BUS: 32, Source.IRQ: value_width(Source.IRQ), Source.EDGE0: 1}


def test_choice_gives_the_loss_record_then_events_in_source_order():
    dut = RecordChoice(4)
    picked = []

    async def testbench(ctx):
        for present, loss in ((0b1011, 1), (0b0100, 0), (0b0000, 1), (0b1111, 0)):
            ctx.set(dut.present, present)
            ctx.set(dut.loss, loss)
            ctx.set(dut.load, 1)
            await ctx.tick()
            ctx.set(dut.load, 0)
            records = []
            while True:
                ctx.set(dut.pick, 1)
                await ctx.tick()
                ctx.set(dut.pick, 0)
                records.append(ctx.get(dut.choice))
                last = ctx.get(dut.last)
                ctx.set(dut.advance, 1)
                await ctx.tick()
                ctx.set(dut.advance, 0)
                if last:
                    break
            picked.append(records)

    run(dut, testbench)
    # Bit 0: the LOSS record; bit 1 + i: source i.
    assert picked == [
        [0b00001, 0b00010, 0b00100, 0b10000],
        [0b01000],
        [0b00001],
        [0b00010, 0b00100, 0b01000, 0b10000],
    ]


def test_format_is_the_protocol_payload_of_the_chosen_record():
    layout = entry_layout(SOURCES)
    dut = RecordFormat(layout, SOURCES)
    rng = random.Random(2)
    checked = []

    async def testbench(ctx):
        for n in range(40):
            values = {source.name: rng.getrandbits(width) for source, width in SOURCES.items()}
            loss_source, loss_count = rng.randrange(12), rng.getrandbits(32)
            delta = rng.getrandbits(24)
            # The IRQ value's level is in `value`, its rest in `detail`, which an entry with
            # a LOSS record gives to the count (the IRQ's rest is 0 then).
            irq, loss_valid = values["IRQ"], n % 2
            values["IRQ"] &= 1
            detail = {"loss_count": loss_count} if loss_valid else {"irq": irq >> 1}
            ctx.set(
                dut.entry,
                {
                    "stamp": rng.getrandbits(48),
                    "present": {},
                    "value": values,
                    "loss_valid": loss_valid,
                    "loss_source": loss_source,
                    "detail": detail,
                },
            )
            ctx.set(dut.delta, delta)
            options = [(Source.LOSS, loss_count << 4 | loss_source)] if loss_valid else []
            options += [(source, values[source.name]) for source in SOURCES]
            if not loss_valid:
                options[2] = (Source.IRQ, irq)
            for index, (source, value) in enumerate(options, start=1 - loss_valid):
                ctx.set(dut.choice, 1 << index)
                await ctx.delay(1e-9)
                assert ctx.get(dut.source) == source
                assert ctx.get(dut.payload) == event_payload(source, delta, value)
                checked.append(source)

    sim = Simulator(dut)  # combinational: no clock
    sim.add_testbench(testbench)
    sim.run()
    assert len(checked) == 20 * 5 + 20 * 4


def test_segment_state_counts_and_ages():
    dut = SegmentState(flush_after=20)
    seen = {}

    async def pulse(ctx, name, stamp=0):
        ctx.set(dut.stamp, stamp)
        ctx.set(getattr(dut, name), 1)
        await ctx.tick()
        ctx.set(getattr(dut, name), 0)

    async def testbench(ctx):
        await pulse(ctx, "start")
        await pulse(ctx, "sent_sync", 1000)
        assert ctx.get(dut.opened) and not ctx.get(dut.in_segment)
        for n in range(3):
            await pulse(ctx, "sent_event", 1000 + n)
        assert ctx.get(dut.base) == 1002 and ctx.get(dut.in_segment)
        seen["tally"] = ctx.get(dut.tally)
        await pulse(ctx, "sent_tally")
        assert ctx.get(dut.tallied)
        await pulse(ctx, "sent_seal")
        assert not (ctx.get(dut.opened) or ctx.get(dut.tallied) or ctx.get(dut.in_segment))
        # A new capture: `captured` restarts, `sent` goes on; a full segment; the age.
        await pulse(ctx, "start")
        await pulse(ctx, "sent_sync", 5)
        for _ in range(SEGMENT_MAX_EVENTS):
            assert not ctx.get(dut.full)
            await pulse(ctx, "sent_event", 5)
        assert ctx.get(dut.full)
        seen["full"] = ctx.get(dut.tally)
        assert ctx.get(dut.aged)  # 255 cycles in the segment
        await pulse(ctx, "sent_seal")
        await pulse(ctx, "sent_sync", 9)
        await pulse(ctx, "sent_event", 9)
        for _ in range(25):
            seen.setdefault("aged", []).append(ctx.get(dut.aged))
            await ctx.tick()

    run(dut, testbench)
    assert (seen["tally"].count, seen["tally"].sent, seen["tally"].captured) == (3, 3, 3)
    full = seen["full"]
    assert (full.count, full.sent, full.captured) == (255, 258, 255)
    # Aged once `flush_after` cycles have passed in the segment (counted from the cycle after
    # its first event record went out).
    assert seen["aged"].index(1) == 20
