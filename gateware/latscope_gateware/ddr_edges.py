"""DDR inputs: pins sampled on both clock edges, the half-cycle bit and its stamp latency.

On an ECP5 the marker strobe and the edge channels can go through DDR input registers
(``IDDRX1F``, what Amaranth's ``io.DDRBuffer`` becomes there; an iCE40's SB_IO likewise).
Each cycle they deliver two samples of a pin, half a cycle apart; the front ends
(:class:`.marker_port.MarkerPort`, :class:`.edge_channels.EdgeChannels` with ``ddr=True``,
through :class:`.synchronizer.PinChangeDetector`) tell in which of the two a new level first
showed, and the time-stamper puts that half-cycle bit below the cycle count
(``stamp_shift`` 1: one stamp unit is half a cycle, 2.5 ns at 200 MHz).

Sample convention (the IDDRX1F's, modelled by :class:`IddrModel`): during cycle *c* the DDR
register presents ``(early, late) = (pin at rising edge c-1, pin at falling edge c-1/2)``,
packed as ``Cat(early, late)`` (a front end's ``pins`` or ``strobe`` port). Numbering half
cycles from 0 at the first rising edge, a pin that changes in half cycle *j* (the
open-closed interval ``(j/2, (j+1)/2]`` in cycles) is first seen in cycle
``c = (j + 3) // 2``, in the late sample if *j* is even and in the early one if *j* is odd.
:func:`ddr_stamp_latency` turns the front end's latency in cycles into the pin-to-stamp
latency in stamp units that the IDENTIFY reply carries, so that ``stamp - latency = j``
exactly.
"""

from amaranth.hdl import *

__all__ = ["IDDR_HALF_CYCLES", "ddr_stamp_latency", "IddrModel"]

#: Stamp units the DDR input register adds: a change in half cycle j is presented in cycle
#: c = (j + 3) // 2 with half bit 1 - j % 2, i.e. at stamp 2c + half = j + 3 (see
#: :func:`ddr_stamp_latency`).
IDDR_HALF_CYCLES = 3


def ddr_stamp_latency(cycles):
    """Pin-to-stamp latency in half-cycle stamp units of a DDR front end whose events come
    ``cycles`` cycles after the DDR register presents the samples.

    A change in half cycle *j* is presented in cycle ``c = (j + 3) // 2`` with half bit
    ``h = 1 - j % 2`` (late sample for even *j*), gives an event in cycle ``c + cycles`` and
    the stamp ``2 * (c + cycles) + h = j + 2 * cycles + 3``.
    """
    return 2 * cycles + IDDR_HALF_CYCLES


class IddrModel(Elaboratable):
    """Simulation model of ECP5 ``IDDRX1F`` input registers on ``width`` pins (for tests:
    Amaranth's DDR buffers do not simulate). ``pin`` is sampled at every rising and falling
    edge of ``sync``; during cycle *c*, ``q = Cat(pin at rising edge c-1, pin at falling edge
    c-1/2)``, the convention of this module."""

    def __init__(self, width):
        self.pin = Signal(width)
        self.q = Signal(2 * width)

    def elaborate(self, platform):
        m = Module()
        m.domains.fall = ClockDomain("fall", clk_edge="neg", local=True, reset_less=True)
        m.d.comb += ClockSignal("fall").eq(ClockSignal("sync"))
        at_rise = Signal.like(self.pin, reset_less=True)
        at_fall = Signal.like(self.pin, reset_less=True)
        q = Signal.like(self.q, reset_less=True)
        m.d.sync += at_rise.eq(self.pin)
        m.d.fall += at_fall.eq(self.pin)
        # Both samples of a pair are handed on together at the next rising edge.
        m.d.sync += q.eq(Cat(at_rise, at_fall))
        m.d.comb += self.q.eq(q)
        return m
