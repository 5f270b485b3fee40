"""StreamRegister, at full and at half rate: every payload comes out once, in order, under
random valid/ready."""

import random

import pytest
from amaranth.sim import Simulator

from latscope_gateware.stream_register import StreamRegister


def _run(in_rate, out_rate, count=300, seed=1, full_rate=True):
    rng = random.Random(seed)
    dut = StreamRegister(16, full_rate=full_rate)
    sent = [rng.randrange(1 << 16) for _ in range(count)]
    received = []
    cycles = []

    async def testbench(ctx):
        index = 0
        cycle = 0
        while len(received) < count and cycle < 20 * count:
            offer = index < count and rng.random() < in_rate
            take = rng.random() < out_rate
            ctx.set(dut.i.valid, offer)
            ctx.set(dut.i.payload, sent[index] if offer else 0)
            ctx.set(dut.o.ready, take)
            # Registered outputs: i.ready and o.valid must not depend on this cycle's inputs.
            i_ready, o_valid, o_payload = (
                ctx.get(dut.i.ready),
                ctx.get(dut.o.valid),
                ctx.get(dut.o.payload),
            )
            await ctx.tick()
            if offer and i_ready:
                index += 1
            if take and o_valid:
                received.append(o_payload)
            cycle += 1
        cycles.append(cycle)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(testbench)
    sim.run()
    assert received == sent
    return cycles[0]


@pytest.mark.parametrize("full_rate", [True, False])
def test_order_and_no_loss_under_random_stalls(full_rate):
    for seed in range(4):
        _run(0.7, 0.5, seed=seed, full_rate=full_rate)
        _run(0.3, 0.9, seed=seed, full_rate=full_rate)


def test_full_throughput_when_never_stalled():
    # One transfer per cycle plus one cycle of latency.
    assert _run(1.0, 1.0, count=100) == 101


def test_half_rate_when_never_stalled():
    # A transfer every other cycle: the payload must leave before the next comes in.
    assert _run(1.0, 1.0, count=100, full_rate=False) == 200
