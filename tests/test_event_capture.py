"""The capture's pipelined parts: the split time-stamp counter and the entry FIFO."""

import random

import pytest

from latscope_gateware.event_capture import EntryFifo, FreeRunningCounter

from gateware_sim import run


def test_split_counter_counts_every_cycle_through_wraps():
    dut = FreeRunningCounter(8)          # halves of 4 bits: the high half steps every 16
    seen = []

    async def testbench(ctx):
        for _ in range(600):
            seen.append(ctx.get(dut.value))
            await ctx.tick()

    run(dut, testbench)
    assert seen == [cycle % 256 for cycle in range(600)]


@pytest.mark.parametrize("depth", [4, 5, 16])
def test_entry_fifo_keeps_order_and_room(depth):
    rng = random.Random(depth)
    dut = EntryFifo(12, depth)
    written, read = [], []

    async def testbench(ctx):
        # First with no reads at all: exactly `depth` entries fit.
        accepted = 0
        ctx.set(dut.w_en, 1)
        for value in range(3 * depth):
            ctx.set(dut.w_data, value)
            if ctx.get(dut.w_rdy):
                written.append(value)
                accepted += 1
            await ctx.tick()
        ctx.set(dut.w_en, 0)
        assert accepted == depth
        assert ctx.get(dut.level) == depth and not ctx.get(dut.w_rdy)
        # Then random writes and reads; level and room follow the entries held.
        for cycle in range(4000):
            write, take = rng.random() < 0.5, rng.random() < (0.3 if cycle < 2000 else 0.7)
            value = rng.randrange(1 << 12)
            ctx.set(dut.w_en, write)
            ctx.set(dut.w_data, value)
            ctx.set(dut.r_en, take)
            level, w_rdy = ctx.get(dut.level), ctx.get(dut.w_rdy)
            assert level == len(written) - len(read)
            # No room means full, or nearly so while entries move out of the block RAM.
            assert level <= depth - 1 if w_rdy else level >= depth - 2
            if write and w_rdy:
                written.append(value)
            if take and ctx.get(dut.r_rdy):
                read.append(ctx.get(dut.r_data))
            await ctx.tick()
        ctx.set(dut.w_en, 0)
        ctx.set(dut.r_en, 1)
        for _ in range(depth + 4):
            if ctx.get(dut.r_rdy):
                read.append(ctx.get(dut.r_data))
            await ctx.tick()

    run(dut, testbench)
    assert read == written
    assert len(written) > 1000
