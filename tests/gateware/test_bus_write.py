# amaranth: UnusedElaboratable=no
"""Bus write snoop: window decode, reads and unacked cycles ignored, wait states, exact latency."""

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from latscope_gateware.bus_write import BusWriteSnoop, WishboneObservation
from support.gateware_sim import run

BASE, WORDS = 0x100, 0x10


def write(adr, data, *, ack=1, sel=0xF):
    """Bus levels of one cycle of a write (acked unless told otherwise)."""
    return {"cyc": 1, "stb": 1, "we": 1, "ack": ack, "adr": adr, "dat_w": data, "sel": sel}


def read(adr, *, ack=1):
    return {"cyc": 1, "stb": 1, "we": 0, "ack": ack, "adr": adr, "dat_w": 0x5555_5555, "sel": 0xF}


def simulate(cycles_of_bus, *, cycles=30, base=BASE, words=WORDS, addr_width=30):
    """Drives the bus and returns the events as [(cycle, payload)]. ``cycles_of_bus`` maps a
    cycle to the bus levels present during that cycle; any other cycle is idle (all zero)."""
    dut = BusWriteSnoop(addr_width=addr_width, window_base=base, window_words=words)
    idle = {name: 0 for name in ("cyc", "stb", "we", "ack", "adr", "dat_w", "sel")}
    events = []

    async def testbench(ctx):
        for cycle in range(cycles):
            for name, value in {**idle, **cycles_of_bus.get(cycle, {})}.items():
                ctx.set(getattr(dut.bus, name), value)
            if ctx.get(dut.events.valid):
                events.append((cycle, ctx.get(dut.events.payload)))
            await ctx.tick()

    run(dut, testbench)
    return events


def test_single_write_in_window_one_cycle_later():
    assert BusWriteSnoop.latency == 1
    assert simulate({5: write(BASE + 3, 0xDEAD_BEEF)}) == [(6, 0xDEAD_BEEF)]


def test_writes_outside_the_window_and_at_its_edges():
    bus = {
        3: write(BASE - 1, 0x1),  # just below
        5: write(BASE, 0x2),  # first word
        7: write(BASE + WORDS - 1, 0x3),  # last word
        9: write(BASE + WORDS, 0x4),  # just above
        11: write(0, 0x5),
        13: write(2**30 - 1, 0x6),
        15: write(BASE | 1 << 20, 0x7),  # an alias that only a partial decode would hit
    }
    assert simulate(bus) == [(6, 0x2), (8, 0x3)]


def test_reads_and_incomplete_cycles_are_ignored():
    bus = {
        3: read(BASE),
        5: {**write(BASE, 0x1), "cyc": 0},  # stb without cyc
        7: {**write(BASE, 0x2), "stb": 0},  # ack without stb
        9: write(BASE, 0x3, ack=0),  # never acked
        11: write(BASE + 1, 0x4),  # the one real write
    }
    assert simulate(bus) == [(12, 0x4)]


def test_back_to_back_acked_writes_every_cycle():
    bus = {5 + n: write(BASE + n, 0x1000 + n) for n in range(6)}
    assert simulate(bus) == [(6 + n, 0x1000 + n) for n in range(6)]


def test_wait_states_give_one_event_for_the_ack_cycle():
    bus = {cycle: write(BASE + 2, 0xCAFE_F00D, ack=0) for cycle in range(5, 9)}
    bus[9] = write(BASE + 2, 0xCAFE_F00D)
    # A second write with one wait state follows right away, then a read with wait states.
    bus[10] = write(BASE + 4, 0x0BAD_CAFE, ack=0)
    bus[11] = write(BASE + 4, 0x0BAD_CAFE)
    bus.update({cycle: read(BASE, ack=cycle == 14) for cycle in range(12, 15)})
    assert simulate(bus) == [(10, 0xCAFE_F00D), (12, 0x0BAD_CAFE)]


def test_partial_writes_report_the_whole_word():
    assert simulate({5: write(BASE, 0x1234_5678, sel=0b0001)}) == [(6, 0x1234_5678)]


def test_window_at_the_top_of_the_address_space():
    top = 2**30
    bus = {3: write(top - 5, 0x1), 5: write(top - 4, 0x2), 7: write(top - 1, 0x3)}
    assert simulate(bus, base=top - 4, words=4) == [(6, 0x2), (8, 0x3)]


def test_window_must_fit_the_address_space():
    with pytest.raises(ValueError):
        BusWriteSnoop(addr_width=8, window_base=0xF0, window_words=0x11)
    with pytest.raises(ValueError):
        BusWriteSnoop(addr_width=8, window_base=0x10, window_words=0)
    with pytest.raises(ValueError):
        WishboneObservation(addr_width=30, data_width=12)


def test_a_top_level_can_pass_its_bus_pins_through():
    # As the appliance does: a port of the flipped snoop signature, connected to the snoop.
    snoop = BusWriteSnoop(addr_width=30, window_base=BASE, window_words=WORDS)
    assert snoop.bus.signature.flip() == WishboneObservation(addr_width=30, data_width=32)

    class Top(wiring.Component):
        bus: In(snoop.bus.signature.flip())
        events: Out(snoop.events.signature)

        def elaborate(self, platform):
            m = Module()
            m.submodules.snoop = snoop
            wiring.connect(m, wiring.flipped(self.bus), snoop.bus)
            wiring.connect(m, wiring.flipped(self.events), snoop.events)
            return m

    top = Top()
    events = []

    async def testbench(ctx):
        for cycle in range(8):
            for name, value in (write(BASE, 0x77) if cycle == 3 else {"cyc": 0}).items():
                ctx.set(getattr(top.bus, name), value)
            if ctx.get(top.events.valid):
                events.append((cycle, ctx.get(top.events.payload)))
            await ctx.tick()

    run(top, testbench)
    assert events == [(4, 0x77)]
