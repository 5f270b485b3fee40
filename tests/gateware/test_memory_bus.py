# amaranth: UnusedElaboratable=no
"""Memory bus front end, driven by a bus-functional model of an FMC-style write cycle.

The model (support.membus_model) works in sample slots, here 1/phases of a capture cycle.
The pins reach the front end as the input registers present them
(:mod:`latscope_gateware.ddr_edges`: in cycle c, sample k is the level of slot
``phases*(c-1) + k - 1``; single-rate pins directly), so an end edge in slot j must be
stamped ``j + stamp_latency``.
"""

import random

import pytest

from latscope_defs.protocol import memory_bus_write
from latscope_gateware.memory_bus import MemoryBusPort
from support.gateware_sim import run
from support.membus_model import ADDRESS_BITS, BusModel, first_in_each_cycle, pins_in_cycle


def simulate(dut, model, *, phases, cs_active_low, we_active_low, tail=20):
    """Drives the model's timeline into ``dut``; returns ([(stamp, payload)], writes lost)."""
    cycles = len(model.slots) // phases + tail
    events, lost = [], 0

    async def testbench(ctx):
        nonlocal lost
        for cycle in range(cycles):
            pins = pins_in_cycle(
                model.slots,
                cycle,
                phases=phases,
                address_bits=ADDRESS_BITS,
                data_width=model.data_width,
                cs_active_low=cs_active_low,
                we_active_low=we_active_low,
            )
            for name, value in pins.items():
                ctx.set(getattr(dut, name), value)
            if ctx.get(dut.events.valid):
                events.append((phases * cycle + ctx.get(dut.phase), ctx.get(dut.events.payload)))
                lost += ctx.get(dut.lost)
            else:
                assert ctx.get(dut.lost) == 0
            await ctx.tick()

    run(dut, testbench)
    return events, lost


def expected(dut, model, writes=None):
    layout = memory_bus_write(model.data_width, ADDRESS_BITS)
    return [
        (end + dut.stamp_latency, layout.const({"data": data, "address": address}).as_bits())
        for end, address, data in (model.writes if writes is None else writes)
    ]


def make(phases, data_width, cs_active_low, we_active_low, output_stages=0, **crossing):
    dut = MemoryBusPort(
        data_width=data_width,
        address_bits=ADDRESS_BITS,
        cs_active_low=cs_active_low,
        we_active_low=we_active_low,
        phases=phases,
        output_stages=output_stages,
        **crossing,
    )
    return dut, dict(phases=phases, cs_active_low=cs_active_low, we_active_low=we_active_low)


BUSES = pytest.mark.parametrize(
    "phases, data_width, cs_active_low, we_active_low",
    [
        (phases, width, cs, we)
        for phases in (1, 2, 4)
        for width in (8, 16)
        for cs, we in ((True, True), (False, False), (True, False))
    ],
)


@BUSES
def test_every_write_is_one_event_stamped_at_its_strobe_end(
    phases, data_width, cs_active_low, we_active_low
):
    dut, options = make(phases, data_width, cs_active_low, we_active_low)
    model = BusModel(data_width, seed=phases * 100 + data_width)
    rng = random.Random(phases)
    model.idle(5)
    for _ in range(40):
        addset, datast, hold = rng.randrange(4), rng.randrange(1, 5), rng.randrange(3)
        # At least one idle slot, and end edges at least a cycle apart (lossless).
        gap = max(1, phases - (addset + datast + hold)) + rng.randrange(3)
        model.write(
            rng.randrange(1 << ADDRESS_BITS),
            rng.randrange(1 << data_width),
            addset=addset,
            datast=datast,
            setup=1,
            hold=hold,
        )
        model.idle(gap)
    events, lost = simulate(dut, model, **options)
    assert events == expected(dut, model)
    assert lost == 0


@BUSES
def test_reads_and_other_banks_writes_make_nothing(
    phases, data_width, cs_active_low, we_active_low
):
    dut, options = make(phases, data_width, cs_active_low, we_active_low)
    model = BusModel(data_width, seed=7)
    model.idle(5)
    model.read(0x12, slots=3)
    model.idle(phases + 1)
    model.other_bank_write(0x13, 0x55)
    model.idle(phases + 1)
    model.write(0x14, 0xA5, addset=1, datast=2)  # the only write to this bank
    model.idle(phases + 1)
    model.read(0x15, slots=1)
    model.idle(phases + 1)
    events, lost = simulate(dut, model, **options)
    assert len(model.writes) == 1
    assert events == expected(dut, model)
    assert lost == 0


@BUSES
def test_writes_at_the_minimum_spacing_all_arrive(phases, data_width, cs_active_low, we_active_low):
    # End edges one cycle apart (one slot of strobe and the rest idle), or two slots where a
    # cycle is one slot: the strobe must be seen active and inactive.
    dut, options = make(phases, data_width, cs_active_low, we_active_low)
    model = BusModel(data_width, seed=3)
    spacing = max(phases, 2)
    model.idle(3)
    for n in range(30):
        model.write(n * 3 + 1, (n * 37) % (1 << data_width), datast=1)
        model.idle(spacing - 1)
    events, lost = simulate(dut, model, **options)
    assert events == expected(dut, model)
    assert lost == 0


def far_lines(data_width):
    """The far lines of the ULX3S's bus build, as a mask of the payload's bits (data low,
    address above): the top two data lines and the address lines, on the 85F's other side
    than the write strobe."""
    return (0b11 << data_width - 2) | ((1 << ADDRESS_BITS) - 1) << data_width


@pytest.mark.parametrize(
    "output_stages, crossing",
    [
        (0, {}),
        (1, {}),
        (2, {}),
        (0, {"crossing_stages": 0}),
        (1, {"crossing_stages": 2}),
    ],
)
@pytest.mark.parametrize("spacing", [2, 3])
@pytest.mark.parametrize("data_width", [8, 16])
def test_closer_writes_are_counted_lost(spacing, data_width, output_stages, crossing):
    # With four samples a cycle two writes can end in one cycle: the first is delivered, the
    # second counted, so that delivered + lost = writes. Registers after the detection
    # (output_stages) delay every output alike, by as many cycles as the latency, and so the
    # stamps, says; so do the crossing's to far lines (the ULX3S's bus build), which take
    # those lines' samples where the detection arrives, each write's own.
    if crossing:
        crossing = dict(crossing, far_lines=far_lines(data_width))
    dut, options = make(4, data_width, True, True, output_stages, **crossing)
    crossed = crossing["crossing_stages"] + 1 if crossing else 0
    assert dut.latency == 3 + output_stages + crossed
    model = BusModel(data_width, seed=spacing)
    model.idle(4)
    for n in range(40):
        model.write(n + 1, n * 5 + 1, datast=1)
        model.idle(spacing - 1)
    events, lost = simulate(dut, model, **options)
    assert lost > 0
    assert len(events) + lost == len(model.writes)
    # Each delivered write is the first to end in its cycle, exactly as it was.
    assert events == expected(dut, model, first_in_each_cycle(model.writes, 4))


def test_value_is_data_low_and_address_above():
    # The layout's definition, spelled out: 16-bit data 0xBEEF at address 0x12.
    assert memory_bus_write(16, 10).const({"data": 0xBEEF, "address": 0x12}).as_bits() == 0x12BEEF
    # An 8-bit bus carries a marker's high byte on the address lines.
    assert memory_bus_write(8, 8).const({"data": 0x34, "address": 0x12}).as_bits() == 0x1234
    with pytest.raises(ValueError):
        memory_bus_write(16, 17)
