# amaranth: UnusedElaboratable=no
"""The memory bus port in the whole appliance: a DUT's bus writes go through the front end,
the time-stamper, the encoder and the UART, and the host's parser gives them back as BUS
events, each with its address and data and stamped at its strobe's end edge; writes closer
than the front end takes are LOSS records of the BUS source and STATUS ``lost``; reads make
nothing (docs/membus.md).

The bus-functional model's slots are the samples of the 1:4 gearbox (the HX8K's and the
ULX3S's); a marker strobe edge at a known slot ties the bus's stamps to the marker port's,
whose latency the other tests check: both must give ``stamp - slot`` the same.
"""

from latscope.events import Events
from latscope.link.identity import Identity
from latscope.link.parser import StreamParser
from latscope_defs.protocol import (
    Command,
    Source,
    StartArgs,
    StatusReply,
    encode_command,
    memory_bus_write,
)
from latscope_gateware.appliance import ApplianceConfig
from latscope_gateware.sim_device import ScriptedDut, ScriptedLink, SimulatedDevice
from support.gateware_sim import lost_per_source
from support.membus_model import (
    ADDRESS_BITS,
    BusModel,
    first_in_each_cycle,
    pins_in_cycle,
    slot_of_sample,
)

PHASES = 4
BUS = dict(data_width=16, address_bits=ADDRESS_BITS, cs_active_low=True, we_active_low=True)
FIRST_CYCLE = 5000  # the capture cycle of slot 0 (START is at 4000)
MARKER_SLOT = 6  # the slot of the marker strobe's rising edge
MARKER = 0x1357

# The fastest FMC write (docs/membus.md: ADDSET 0, DATAST 1, 2 HCLK = 11.1 ns at 180 MHz, NWE
# low 5.6 ns, data driven throughout) in slots of the HX8K's sample period (2.98 ns): the
# strobe 2 slots with the data valid in both, then 1 or 2 slots of hold, alternately (3.5
# slots a write on average, 10.4 ns: a little faster than the FMC can).
FAST_STROBE, FAST_HOLDS = 2, (1, 2)
# The lossless spacing (docs/membus.md, a cycle and a sample: 5 slots): strobe 2, hold 1,
# 2 idle.
SPACED_GAP = 2


def _timeline():
    """The bus's slots: writes at the lossless spacing with a read and another bank's write
    between them, then back-to-back writes at the fastest FMC timing."""
    model = BusModel(BUS["data_width"], seed=32)
    model.idle(16)
    for n in range(6):
        model.write(0x100 + n, 0xA000 + n, datast=FAST_STROBE, setup=FAST_STROBE, hold=1)
        model.idle(SPACED_GAP)
        if n % 2:
            model.read(0x200 + n)
            model.idle(1)
            model.other_bank_write(0x300 + n, 0xDEAD)
            model.idle(SPACED_GAP)
    spaced = len(model.writes)
    model.idle(8)
    for n in range(16):
        hold = FAST_HOLDS[n % 2]
        model.write(0x40 + n, 0xB000 + n, datast=FAST_STROBE, setup=FAST_STROBE, hold=hold)
    model.idle(8)
    return model, spaced


class _BusDevice(SimulatedDevice):
    """The appliance with the memory bus port and the gearbox's four samples a cycle, a host
    that starts a capture of the marker and bus sources, stops it and asks STATUS, and a DUT
    that strobes one marker and writes ``model``'s timeline on the bus."""

    def __init__(self, model):
        sources = (1 << Source.MARKER) | (1 << Source.BUS)
        script = [
            (100, encode_command(Command.IDENTIFY)),
            (4000, encode_command(Command.START, StartArgs.const({"sources": sources}))),
            (9000, encode_command(Command.STOP)),
            (11000, encode_command(Command.STATUS)),
        ]
        config = ApplianceConfig(
            clock_hz=100_000_000,
            uart_divisor=4,
            fifo_depth=64,
            sump_depth=0,
            input_phases=PHASES,
            memory_bus=BUS,
        )
        super().__init__(config, ScriptedDut(), link=ScriptedLink(script), max_cycles=13000)
        self.model = model

    async def dut_process(self, ctx):
        app = self.appliance
        ctx.set(app.marker_data, MARKER)
        while True:
            await ctx.tick(self.domain)
            cycle = ctx.get(self.bench.cycle) - FIRST_CYCLE
            pins = pins_in_cycle(self.model.slots, cycle, phases=PHASES, **BUS)
            for name, value in pins.items():
                ctx.set(getattr(app, f"membus_{name}"), value)
            strobe = [slot_of_sample(cycle, k, PHASES) >= MARKER_SLOT for k in range(PHASES)]
            ctx.set(app.marker_strobe, sum(level << k for k, level in enumerate(strobe)))


def test_bus_writes_reach_the_host_as_bus_events_stamped_at_the_strobe_end():
    model, spaced = _timeline()
    device = _BusDevice(model)
    device.run()
    received = bytes(device.link.received)
    probe = StreamParser()
    probe.feed(received)
    identity = Identity.from_reply(dict(probe.replies)[Command.IDENTIFY])
    assert Source.BUS in identity.sources and identity.bus_width == BUS["data_width"]
    parser = identity.parser()
    events = Events.concatenate([parser.feed(received), parser.finish()])
    status = StatusReply.from_bits(int.from_bytes(dict(parser.replies)[Command.STATUS], "little"))

    (marker_stamp,) = [stamp for stamp, source, _ in events if source == Source.MARKER]
    # The stamp of slot 0: the marker's, less its slot.
    origin = marker_stamp - MARKER_SLOT
    layout = memory_bus_write(BUS["data_width"], BUS["address_bits"])
    delivered = first_in_each_cycle(model.writes, PHASES)
    assert delivered[:spaced] == model.writes[:spaced]  # the lossless spacing loses none
    expected = [
        (origin + end, layout.const({"data": data, "address": address}).as_bits())
        for end, address, data in delivered
    ]
    got = [(stamp, value) for stamp, source, value in events if source == Source.BUS]
    assert got == expected
    lost = len(model.writes) - len(delivered)
    assert lost > 0  # the fastest timing is closer than the front end takes
    assert lost_per_source(events) == {Source.BUS: lost}
    assert status.lost == lost and status.events == len(expected) + 1
