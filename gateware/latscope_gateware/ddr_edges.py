"""Multi-phase inputs: pins sampled N times a cycle, the sub-cycle phase and its stamp latency.

The marker strobe and the edge channels can go through input registers that sample each pin
``phases`` (N) times a capture cycle and hand the N samples on together, once a cycle:

- N = 2: DDR input registers, the ECP5's ``IDDRX1F`` (what Amaranth's ``io.DDRBuffer``
  becomes there) or an iCE40 SB_IO in DDR mode, sampling on both edges of the capture clock;
- N = 4: the ECP5's ``IDDRX2F`` gearbox, sampling on both edges of an edge clock (ECLK) at
  twice the capture clock, which is the ECLK divided by 2 (``CLKDIVF``): the ULX3S;
- N = 1: plain single-rate inputs.

The front ends (:class:`.marker_port.MarkerPort`, :class:`.edge_channels.EdgeChannels`,
through :class:`.synchronizer.PinChangeDetector`) tell in which sample a new level first
showed (its *phase*), and the time-stamper puts that phase below the cycle count
(``stamp_shift`` = log2 N: one stamp unit is 1/N cycle, 2.0 ns at 125 MHz with N = 4).

Sample convention (modelled by :class:`IddrModel`): during cycle *c* the input register
presents the samples ``s_k`` = pin at instant ``c - 1 + k/N`` (in cycles from the first
rising edge), k = 0..N-1, packed as ``Cat(s_0, ..., s_{N-1})``, earliest first (a front
end's ``pins`` or ``strobe`` port). Numbering slots of 1/N cycle from 0 at the first rising
edge, a pin that changes in slot *j* (the open-closed interval ``(j/N, (j+1)/N]`` in cycles)
is first seen by the sample at ``(j+1)/N``: in cycle ``c = (j+1) // N + 1`` as sample
``k = (j+1) % N``. Its stamp, ``N*c + k`` plus N times the front end's cycles, is
``j + N + 1 + N*cycles``: :func:`sampled_stamp_latency` is the constant the IDENTIFY reply
carries, so that ``stamp - latency = j`` exactly.

The IRQ output changes on the capture clock's rising edge, i.e. at the start of slot ``N*c``
(phase 0), and its events are stamped with phase 0: its latency is whole cycles, ``N`` stamp
units each.
"""

from amaranth.hdl import *

__all__ = [
    "PHASES",
    "IDDR_HALF_CYCLES",
    "stamp_shift_of",
    "sampled_stamp_latency",
    "ddr_stamp_latency",
    "IddrModel",
]

#: Samples per cycle the front ends take: single rate, DDR, IDDRX2 gearbox.
PHASES = (1, 2, 4)

#: Stamp units a DDR (N = 2) input register adds (see :func:`sampled_stamp_latency`).
IDDR_HALF_CYCLES = 3


def stamp_shift_of(phases):
    """``stamp_shift`` of stamps with ``phases`` phases a cycle (log2), or ValueError."""
    if phases not in PHASES:
        raise ValueError(f"input phases must be one of {PHASES}, not {phases!r}")
    return phases.bit_length() - 1


def sampled_stamp_latency(cycles, phases):
    """Pin-to-stamp latency in stamp units (1/``phases`` cycle) of a front end whose events
    come ``cycles`` cycles after the input register presents the samples.

    A change in slot *j* is presented in cycle ``c = (j + 1) // N + 1`` as sample
    ``k = (j + 1) % N``, gives an event in cycle ``c + cycles`` and the stamp
    ``N * (c + cycles) + k = j + N + 1 + N * cycles``. Single-rate inputs (N = 1) are not
    registered in an input register: their latency is ``cycles``.
    """
    stamp_shift_of(phases)
    if phases == 1:
        return cycles
    return phases * cycles + phases + 1


def ddr_stamp_latency(cycles):
    """:func:`sampled_stamp_latency` of DDR inputs (half-cycle stamps)."""
    return sampled_stamp_latency(cycles, 2)


class IddrModel(Elaboratable):
    """Simulation model of multi-phase input registers on ``width`` pins (for tests: the
    vendor cells do not simulate in Amaranth), the convention of this module: during cycle
    *c*, ``q = Cat(s_0, ..., s_{N-1})``, ``s_k`` = ``pin`` at ``c - 1 + k/N``, each ``s_k``
    ``width`` bits.

    ``phases`` 2 (ECP5 ``IDDRX1F``): ``pin`` sampled at every rising and falling edge of
    ``sync``. ``phases`` 4 (ECP5 ``IDDRX2F``): sampled at every rising and falling edge of
    the ``eclk`` domain, which the parent provides (a clock at twice ``sync``'s frequency,
    rising with it, as ``CLKDIVF`` divides the edge clock); the four samples are gathered
    at the last falling edge of ``eclk`` in the cycle and handed on at ``sync``'s next
    rising edge.
    """

    def __init__(self, width, phases=2):
        if phases not in (2, 4):
            raise ValueError(f"IddrModel models 2 or 4 phases, not {phases!r}")
        self.phases = phases
        self.pin = Signal(width)
        self.q = Signal(phases * width)

    def elaborate(self, platform):
        m = Module()
        fast = "sync" if self.phases == 2 else "eclk"
        m.domains.fall = ClockDomain("fall", clk_edge="neg", local=True, reset_less=True)
        m.d.comb += ClockSignal("fall").eq(ClockSignal(fast))
        at_rise = Signal.like(self.pin, reset_less=True)
        at_fall = Signal.like(self.pin, reset_less=True)
        q = Signal.like(self.q, reset_less=True)
        m.d[fast] += at_rise.eq(self.pin)
        m.d.fall += at_fall.eq(self.pin)
        if self.phases == 2:
            # Both samples of a pair are handed on together at the next rising edge.
            m.d.sync += q.eq(Cat(at_rise, at_fall))
        else:
            # eclk rises at c-1 and c-1/2, falls at c-3/4 and c-1/4: the first pair is kept
            # at the falling edge in the first half (sync high), the whole word gathered at
            # the one in the second half (sync low), well before sync's next rising edge.
            first = Signal(2 * len(self.pin), reset_less=True)
            word = Signal.like(self.q, reset_less=True)
            with m.If(ClockSignal("sync")):
                m.d.fall += first.eq(Cat(at_rise, self.pin))
            with m.Else():
                m.d.fall += word.eq(Cat(first, at_rise, self.pin))
            m.d.sync += q.eq(word)
        m.d.comb += self.q.eq(q)
        return m
