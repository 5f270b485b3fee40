"""The IRQ pin is undriven from power-up until the first IRQ_CONFIG (the DUT's pull resistor
holds it at its inactive level, docs/boards.md "Electrical"), then driven, at its inactive
level, by one clock and by two."""

import pytest

from latscope.link.device import IrqSettings
from latscope_defs.protocol import Command, encode_command
from latscope_gateware.appliance import ApplianceConfig
from latscope_gateware.sim_device import ScriptedDut, ScriptedLink, SimulatedDevice

CONFIG_AT = 500  # capture cycle the IRQ_CONFIG command is due
CYCLES = 7000  # the first IRQ edge: a period (2000 link cycles) after the command


class _PinWatch(SimulatedDevice):
    """The appliance with a host that sends ``IRQ_CONFIG`` with ``settings`` and, in place of
    a DUT, a watch of the IRQ pin: ``pin`` is its (output enable, level) in every capture
    cycle."""

    def __init__(self, config, settings):
        script = [(CONFIG_AT, encode_command(Command.IRQ_CONFIG, settings.encode()))]
        super().__init__(config, ScriptedDut(), link=ScriptedLink(script), max_cycles=CYCLES)
        self.pin = []

    async def dut_process(self, ctx):
        app = self.appliance
        while True:
            await ctx.tick(self.domain)
            self.pin.append((ctx.get(app.irq_oe), ctx.get(app.irq)))


@pytest.mark.parametrize(
    "clocks",
    [
        dict(clock_hz=100_000_000, uart_divisor=4),
        dict(clock_hz=125_000_000, link_clock_hz=50_000_000, uart_divisor=2),
    ],
    ids=["one clock", "two clocks"],
)
@pytest.mark.parametrize("active_low", [False, True])
def test_irq_pin_is_undriven_until_irq_config_then_inactive(clocks, active_low):
    settings = IrqSettings(period=2000, width=100, active_low=active_low)
    device = _PinWatch(ApplianceConfig(**clocks, fifo_depth=16, sump_depth=0), settings)
    device.run()
    enables = [enable for enable, _ in device.pin]
    driven_from = enables.index(1)
    # Undriven from the first cycle to the command (and its bytes' time on the line), then
    # driven for good.
    assert driven_from > CONFIG_AT and all(enables[driven_from:])
    inactive = int(active_low)
    # Driven at the inactive level, which it keeps until the first IRQ a period later.
    first_edge = next(
        cycle
        for cycle, (_, level) in enumerate(device.pin)
        if cycle >= driven_from and level != inactive
    )
    assert first_edge - driven_from > settings.period // 2
    assert device.pin[driven_from][1] == inactive
