"""The carry-select adder equals a plain add, for unsigned and signed operands."""

import random

import pytest
from amaranth.hdl import Module, Signal, signed
from amaranth.sim import Simulator

from latscope_gateware.arithmetic import carry_select_add


@pytest.mark.parametrize("width, split, sign", [(33, 16, False), (13, 6, False), (39, 19, True)])
def test_carry_select_add_wraps_like_a_register(width, split, sign):
    shape = signed(width) if sign else width
    a, b = Signal(shape), Signal(shape)
    total = Signal(shape)
    m = Module()
    m.d.comb += total.eq(carry_select_add(a, b, width=width, split=split))
    rng = random.Random(width)
    low, high = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if sign else (0, (1 << width) - 1)
    # Random pairs, and pairs whose low halves carry (or just fail to) into the high half.
    edge = (1 << split) - 1
    pairs = [(rng.randint(low, high), rng.randint(low, high)) for _ in range(500)]
    pairs += [(edge, 1), (edge, 0), (high, 1), (low, -1 if sign else 0), (edge, edge)]

    async def testbench(ctx):
        for x, y in pairs:
            ctx.set(a, x)
            ctx.set(b, y)
            expected = (x + y) % (1 << width)
            if sign and expected >= 1 << (width - 1):
                expected -= 1 << width
            assert ctx.get(total) == expected, (x, y)

    sim = Simulator(m)
    sim.add_testbench(testbench)
    sim.run()


@pytest.mark.parametrize("sign", [False, True])
def test_a_narrow_operand_carries_into_the_high_half(sign):
    """A count plus a few bits (STATUS's counters, the loss counts): the low half's carry
    reaches the high half, which a narrow operand has none of."""
    width, split = 32, 16
    a, b = Signal(width), Signal(signed(3) if sign else 3)
    total = Signal(width)
    m = Module()
    m.d.comb += total.eq(carry_select_add(a, b, width=width, split=split))
    pairs = [
        ((1 << split) - 1, 1),
        ((1 << split) - 2, 3),
        (0x1234FFFF, 2),
        (0x10000, -1 if sign else 0),
    ]
    pairs += [((1 << width) - 1, 1), (5, -3 if sign else 3)]

    async def testbench(ctx):
        for x, y in pairs:
            ctx.set(a, x)
            ctx.set(b, y)
            assert ctx.get(total) == (x + y) % (1 << width), (x, y)

    sim = Simulator(m)
    sim.add_testbench(testbench)
    sim.run()
