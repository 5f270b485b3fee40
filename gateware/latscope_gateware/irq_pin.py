"""The IRQ output's pin: :func:`show_irq`, the pin and its event loaded at one clock edge from
the periodic generator's level or the trigger's, and the pin stage of a two-clock build: the
pin and its event in the capture domain, for an IRQ generator that runs in the link domain.

With two clocks, the IRQ generator's timing (interval draws, countdowns, LFSR, settings) runs
in the link domain, which has the slack for its 33-bit adds, and only this stage runs at the
capture clock. It takes the generator's logical level and its pin level through a two-stage
synchronizer, waits until the pair has been the same for two capture cycles, and loads the
pin flip-flop and the event (``valid``: the level changed) at the same capture clock edge, so
an IRQ edge's stamp is the capture cycle in which the pin first shows the new level: exact
(pin-to-stamp latency 0), whatever the crossing's latency.

That latency, from the link clock edge at which the generator's level changes to the capture
cycle in which the pin shows it, is fixed when the two clocks come from one PLL in phase (the
iCE40's GENCLK / GENCLK_HALF pair, the ECP5's CLKOP / CLKOS): a change launched at a link edge,
which is a capture edge too, is taken by the synchronizer's first flip-flop one capture cycle
later (its path is one net, far shorter than a capture cycle), so the pin shows it
:data:`LINK_TO_PIN` capture cycles after the link edge, every time; an interval of *I* link
cycles is then exactly *I* x (capture clock / link clock) capture cycles on the pin and in the
stamps. (Should that net ever take longer than a capture cycle, the first flip-flop samples
the change a cycle later: a metastability-safe crossing still, every edge still one event at
its exact stamp, only that edge a capture cycle late.)
"""

from amaranth.hdl import *
from amaranth.lib import stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

from latscope_defs.protocol import IrqValue

from .irq_trigger import firing_layout

__all__ = ["LINK_TO_PIN", "show_irq", "IrqPinStage"]

#: Capture cycles from the link clock edge that changes the generator's level to the capture
#: cycle in which the pin shows it (PLL clocks in phase): two synchronizer flip-flops, the
#: stability check's and the pin's.
LINK_TO_PIN = 4


def show_irq(m, domain, *, level, active_low, firing, pin, pin_next, events):
    """The IRQ pin and its event, loaded at one clock edge of ``domain`` (so an edge's stamp
    is the cycle the pin first shows it: latency 0): the logical level ``level`` (the
    periodic generator's, for the next cycle) or, while ``firing.active``, the trigger's
    ``firing.level``; the pin is that level with the polarity ``active_low``. ``events``
    (an :class:`~latscope_defs.protocol.IrqValue` stream): ``valid`` where the level
    changes, with the firing's delay while the trigger drives the pin (``triggered``).
    ``pin_next`` is what ``pin`` takes at the next clock edge (its flip-flop's input): a
    board loads the I/O cell's output register from it, at the same edge of ``domain``,
    so the pad changes at the edge that stamps the event, plus the cell's clock-to-pad
    delay and nothing that depends on placement (docs/boards.md, "Pad delays")."""
    shown = Mux(firing.active, firing.level, level)
    m.d.comb += pin_next.eq(shown ^ active_low)
    m.d[domain] += [
        pin.eq(pin_next),
        events.valid.eq(shown != events.payload.level),
        events.payload.level.eq(shown),
        events.payload.triggered.eq(firing.active),
        events.payload.delay.eq(Mux(firing.active, firing.delay, 0)),
    ]


class IrqPinStage(wiring.Component):
    """The IRQ pin and its events in ``capture_domain``, from a generator in ``sync``, or
    from the trigger.

    Ports
    -----
    level : In(1)
        ``sync``: the generator's logical output level (its ``events.payload.level``, a
        flip-flop).
    pin : In(1)
        ``sync``: the generator's pin (``level`` with its polarity, a flip-flop).
    firing : In(:data:`.irq_trigger.firing_layout`)
        ``capture_domain``: the trigger's level and delay, shown instead of ``level`` while
        ``firing.active`` (:func:`show_irq`), with the generator's polarity.
    irq : Out(1)
        ``capture_domain``: the pin, from a flip-flop.
    irq_next : Out(1)
        ``capture_domain``: what ``irq`` takes at the next clock edge (for the I/O cell's
        output register, :func:`show_irq`).
    events : Out(stream.Signature(IrqValue, always_ready=True))
        ``capture_domain``: ``valid`` for one cycle per change of the level shown, in the
        cycle the pin shows it (``latency`` 0); ``payload`` the new level (1: asserting edge)
        and the firing's delay.
    rise : Out(1)
        ``capture_domain``: one cycle per asserting edge of the generator's own level (shown
        or not), :data:`LINK_TO_PIN` capture cycles after it: the trigger's arming edge.
    """

    #: Cycles from the pin showing a new level to ``events.valid``: both change together.
    latency = 0

    def __init__(self, *, capture_domain="capture"):
        self._domain = capture_domain
        super().__init__(
            {
                "level": In(1),
                "pin": In(1),
                "firing": In(firing_layout),
                "irq": Out(1),
                "irq_next": Out(1),
                "events": Out(stream.Signature(IrqValue, always_ready=True)),
                "rise": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        sampled = Signal(2)  # (level, pin) out of the synchronizer
        previous = Signal(2)
        m.submodules.synchronizer = FFSynchronizer(
            Cat(self.level, self.pin), sampled, o_domain=self._domain, stages=2
        )
        level, pin = sampled[0], sampled[1]
        # The two bits change together at a link edge, but each crosses on its own: where
        # that edge is not a capture edge too (the ULX3S's 125/50 MHz) or a net is slow, one
        # bit may arrive a capture cycle before the other. A pair is taken only once it has
        # been the same for two capture cycles (the bits then belong to one link edge: they
        # change at most once per link cycle, which is two capture cycles or more), so the
        # pin never shows a level its event does not say, nor a mixed pair (a glitch).
        stable = sampled == previous
        # The generator's level and polarity as last taken; a pair is taken where stable.
        taken_level = Signal()
        taken_active_low = Signal()
        m.d[self._domain] += [
            previous.eq(sampled),
            self.rise.eq(stable & level & ~taken_level),
        ]
        with m.If(stable):
            m.d[self._domain] += [taken_level.eq(level), taken_active_low.eq(level ^ pin)]
        show_irq(
            m,
            self._domain,
            level=Mux(stable, level, taken_level),
            active_low=Mux(stable, level ^ pin, taken_active_low),
            firing=self.firing,
            pin=self.irq,
            pin_next=self.irq_next,
            events=self.events,
        )
        return m
