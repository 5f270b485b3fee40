"""Interrupt generator: an edge-triggered IRQ output for the DUT whose edges are capture events."""

from amaranth.hdl import *
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from latscope.protocol import IrqConfig

__all__ = ["LFSR_POLYNOMIAL", "LFSR_SEED", "MIN_INTERVAL", "lfsr_leap", "IrqGenerator"]

#: Characteristic polynomial of the jitter LFSR, x^32 + x^22 + x^2 + x + 1 (primitive, so the
#: register runs through all 2**32 - 1 non-zero states), as an integer with bit n for x^n.
LFSR_POLYNOMIAL = (1 << 32) | (1 << 22) | (1 << 2) | (1 << 1) | 1
#: LFSR state after reset; any non-zero value works, this one has well-mixed bits.
LFSR_SEED = 0x9E3779B9
#: Shortest interval between asserting edges: one cycle asserted, one released.
MIN_INTERVAL = 2

_LFSR_WIDTH = 32
_LFSR_TAPS = [n for n in range(_LFSR_WIDTH) if (LFSR_POLYNOMIAL >> n) & 1]


def _lfsr_step(state):
    # Bit i of the state is sequence bit a[n + i]; a step shifts a[n + 32] in at the top, with
    # a[n + 32] = XOR of a[n + t] over the taps t (the polynomial's terms below x^32).
    feedback = 0
    for tap in _LFSR_TAPS:
        feedback ^= (state >> tap) & 1
    return (state >> 1) | (feedback << (_LFSR_WIDTH - 1))


def lfsr_leap(state):
    """The LFSR state one draw later: 32 steps, so consecutive draws are disjoint 32-bit windows
    of the maximal-length sequence rather than shifted copies of each other."""
    for _ in range(_LFSR_WIDTH):
        state = _lfsr_step(state)
    return state


def _leap_rows():
    # The leap is linear over GF(2): output bit i is the XOR of the state bits in rows[i].
    columns = [lfsr_leap(1 << j) for j in range(_LFSR_WIDTH)]
    return [sum(((column >> i) & 1) << j for j, column in enumerate(columns))
            for i in range(_LFSR_WIDTH)]


class IrqGenerator(wiring.Component):
    """Edge-triggered interrupt output with pseudo-random spacing.

    Ports
    -----
    config : In(:class:`latscope.protocol.IrqConfig`)
        Settings, taken only in a cycle with ``apply`` high.
    apply : In(1)
        One-cycle strobe: load ``config`` and restart the timing.
    irq : Out(1)
        The pin, straight from a flip-flop. Low after reset (released, active high).
    enabled : Out(1)
        The generator is running (``flags.enable`` of the last apply, cleared by one-shot).
    events : Out(stream.Signature(1, always_ready=True))
        ``valid`` for one cycle per edge of the output, in the same cycle the pin shows the new
        level (``latency`` = 0); ``payload`` is 1 for an asserting and 0 for a releasing edge
        (the logical level, whatever the polarity).

    Timing (cycle *A* is the one with ``apply`` high; "edge at cycle *c*" means the pin first
    shows the new level in cycle *c*, which is also the cycle ``events.valid`` is high)
    ----------------------------------------------------------------------------------------
    * Interval draw: ``I = max(2, period + (lfsr & jitter_mask))`` (33-bit sum, no overflow).
      ``lfsr`` is a 32-bit Fibonacci LFSR with polynomial :data:`LFSR_POLYNOMIAL`
      (x^32 + x^22 + x^2 + x + 1) that is :data:`LFSR_SEED` after reset and is advanced by
      32 steps (:func:`lfsr_leap`) at each draw, so the k-th draw since reset (k = 0, 1, ...)
      uses ``lfsr_leap^k(LFSR_SEED)``. Only reset reseeds it; draws happen at an apply with
      enable and at every asserting edge.
    * With ``flags.enable``: the first asserting edge is at ``A + I0`` (I0 drawn in cycle A with
      the new config), and an asserting edge at cycle *E* draws the next interval I1 so the
      following one is at ``E + I1``, and so on.
    * Pulse width: the asserting edge at *E* is released at ``E + W``, with
      ``W = min(max(width, 1), I1 - 1)`` and I1 the interval drawn at *E*: width 0 acts as 1,
      and a width >= I1 leaves the output released for exactly one cycle before the next
      asserting edge.
    * ``flags.one_shot``: one pulse; at its release ``enabled`` falls in the same cycle and
      nothing more happens until the next apply. (The interval I1 is still drawn at its
      asserting edge and still bounds its width.)
    * ``flags.active_low``: the pin is the logical level inverted. Changing the polarity moves
      the idle level of the pin at ``A + 1``; that is not an edge of the logical output and
      produces no event.
    * Every apply first ends a pulse in progress: if the output is asserted during cycle *A*,
      it is released at ``A + 1`` (a releasing event), whether the new config enables or not.
      Apply with enable = 0 stops the generator (``enabled`` low from ``A + 1``).
    * ``apply`` wins over an edge that was due in the same cycle: that edge does not happen.
    """

    #: Cycles from the pin showing a new level to ``events.valid``: both change together.
    latency = 0

    def __init__(self):
        super().__init__({
            "config": In(IrqConfig),
            "apply": In(1),
            "irq": Out(1),
            "enabled": Out(1),
            "events": Out(stream.Signature(1, always_ready=True)),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config

        # Settings in force, captured at apply so ``config`` may change afterwards.
        period = Signal(32)
        jitter_mask = Signal(32)
        width = Signal(32)
        one_shot = Signal()
        active_low = Signal()

        lfsr = Signal(_LFSR_WIDTH, init=LFSR_SEED)
        lfsr_next = Signal(_LFSR_WIDTH)
        m.d.comb += lfsr_next.eq(Cat((lfsr & row).xor() for row in _leap_rows()))

        asserted = Signal()          # logical output level, as the pin shows it
        countdown = Signal(33)       # edge due at the end of the cycle in which this is 1
        hold = Signal(32)            # release due at the end of the cycle in which this is 1

        # One interval draw, shared by apply (new settings) and asserting edges (settings in
        # force): only one of the two can happen in a cycle.
        draw_period = Mux(self.apply, config.period, period)
        draw_mask = Mux(self.apply, config.jitter_mask, jitter_mask)
        raw_interval = Signal(33)
        interval = Signal(33)
        m.d.comb += [
            raw_interval.eq(draw_period + (lfsr & draw_mask)),
            interval.eq(Mux(raw_interval < MIN_INTERVAL, MIN_INTERVAL, raw_interval)),
        ]
        # Width of the pulse that starts now: at least 1, and released before the next edge.
        min_width = Mux(width == 0, 1, width)
        pulse_width = Signal(32)
        m.d.comb += pulse_width.eq(Mux(min_width < interval, min_width, interval - 1))

        next_asserted = Signal()
        next_active_low = Signal()
        m.d.comb += [next_asserted.eq(asserted), next_active_low.eq(active_low)]

        with m.If(self.apply):
            m.d.sync += [
                period.eq(config.period),
                jitter_mask.eq(config.jitter_mask),
                width.eq(config.width),
                one_shot.eq(config.flags.one_shot),
                active_low.eq(config.flags.active_low),
                self.enabled.eq(config.flags.enable),
            ]
            m.d.comb += [next_asserted.eq(0), next_active_low.eq(config.flags.active_low)]
            with m.If(config.flags.enable):
                # Counting from the apply cycle itself: the edge is I0 cycles after it.
                m.d.sync += [countdown.eq(interval - 1), lfsr.eq(lfsr_next)]
        with m.Elif(self.enabled):
            m.d.sync += countdown.eq(countdown - 1)
            with m.If(asserted):
                m.d.sync += hold.eq(hold - 1)
                with m.If(hold == 1):
                    m.d.comb += next_asserted.eq(0)
                    with m.If(one_shot):
                        m.d.sync += self.enabled.eq(0)
            with m.Elif(countdown == 1):
                m.d.comb += next_asserted.eq(1)
                # Counting from the edge cycle (the next one): the next edge is I1 after it.
                m.d.sync += [countdown.eq(interval), hold.eq(pulse_width), lfsr.eq(lfsr_next)]

        # Pin and event come from flip-flops loaded at the same clock edge: latency 0.
        m.d.sync += [
            asserted.eq(next_asserted),
            self.irq.eq(next_asserted ^ next_active_low),
            self.events.valid.eq(next_asserted != asserted),
            self.events.payload.eq(next_asserted),
        ]
        return m
