# amaranth: UnusedElaboratable=no
"""Edge-channel front end: exact latency, independent channels, one-cycle pulses, levels."""

import random

import pytest
from amaranth.hdl import ClockDomain, Module

from latscope_gateware.edge_channels import EdgeChannels
from support.gateware_sim import run


def simulate(dut, changes, cycles):
    """Drives ``pins`` and returns the events as [(cycle, channel, level)], in cycle then
    channel order. ``changes`` maps a cycle to the pins' levels, set right after clock edge
    ``cycle`` (present during that cycle) and held until the next change."""
    events = []

    async def testbench(ctx):
        for cycle in range(cycles):
            if cycle in changes:
                ctx.set(dut.pins, changes[cycle])
            for channel, port in enumerate(dut.events):
                if ctx.get(port.valid):
                    events.append((cycle, channel, ctx.get(port.payload)))
            await ctx.tick()

    run(dut, testbench)
    return events


def test_default_latency_is_two_cycles():
    dut = EdgeChannels()
    assert dut.latency == 2 and dut.count == 4 and len(dut.events) == 4
    assert simulate(dut, {10: 0b0001, 20: 0b0000}, cycles=30) == [(12, 0, 1), (22, 0, 0)]


@pytest.mark.parametrize("sync_stages", [2, 3, 4])
def test_latency_follows_sync_stages(sync_stages):
    dut = EdgeChannels(count=2, sync_stages=sync_stages)
    assert dut.latency == sync_stages
    events = simulate(dut, {10: 0b10, 20: 0b00}, cycles=30)
    assert events == [(10 + sync_stages, 1, 1), (20 + sync_stages, 1, 0)]


def test_simultaneous_edges_give_simultaneous_events():
    dut = EdgeChannels()
    events = simulate(dut, {10: 0b1011, 20: 0b0110}, cycles=30)
    assert events == [
        (12, 0, 1),
        (12, 1, 1),
        (12, 3, 1),  # three rising edges at once
        (22, 0, 0),
        (22, 2, 1),
        (22, 3, 0),  # falling and rising mixed; channel 1 stays high
    ]


def test_one_cycle_pulses_give_an_event_per_edge():
    dut = EdgeChannels()
    # Channel 2: a single one-cycle pulse. Channel 0: toggles every cycle for four cycles.
    changes = {10: 0b0100, 11: 0b0000, 20: 0b0001, 21: 0b0000, 22: 0b0001, 23: 0b0000}
    events = simulate(dut, changes, cycles=30)
    assert events == [(12, 2, 1), (13, 2, 0), (22, 0, 1), (23, 0, 0), (24, 0, 1), (25, 0, 0)]


def test_steady_levels_give_no_events():
    dut = EdgeChannels()
    # Pins go high and then stay high (rewritten every cycle with the same value).
    changes = {cycle: 0b1111 for cycle in range(10, 40)}
    assert simulate(dut, changes, cycles=50) == [(12, n, 1) for n in range(4)]


def test_random_pins_match_a_reference_model():
    rng = random.Random(3)
    count, cycles = 8, 500
    levels = [0] * cycles
    for cycle in range(1, cycles):
        levels[cycle] = levels[cycle - 1] ^ rng.choice([0, 0, 0, rng.getrandbits(count)])
    dut = EdgeChannels(count=count)
    events = simulate(dut, dict(enumerate(levels)), cycles=cycles)
    expected = [
        (c + dut.latency, n, (levels[c] >> n) & 1)
        for c in range(1, cycles - dut.latency)
        for n in range(count)
        if ((levels[c] ^ levels[c - 1]) >> n) & 1
    ]
    assert len(expected) > 200
    assert events == expected


def test_parameters_are_checked():
    with pytest.raises(ValueError):
        EdgeChannels(count=0)
    with pytest.raises(ValueError):
        EdgeChannels(sync_stages=1)


def test_a_reset_makes_up_no_edge():
    # Pins stay high through a reset of ``sync``: the detector keeps tracking them.
    dut = EdgeChannels()
    m = Module()
    m.domains.sync = sync = ClockDomain()
    m.submodules.dut = dut
    events = []

    async def testbench(ctx):
        for cycle in range(50):
            ctx.set(dut.pins, 0b0011 if 10 <= cycle < 40 else 0)
            ctx.set(sync.rst, 20 <= cycle < 25)
            for channel, port in enumerate(dut.events):
                if ctx.get(port.valid):
                    events.append((cycle, channel, ctx.get(port.payload)))
            await ctx.tick()

    run(m, testbench)
    assert events == [(12, 0, 1), (12, 1, 1), (42, 0, 0), (42, 1, 0)]
