"""The IRQ trigger: fires the IRQ output a chosen number of capture cycles after an event of
the DUT (a marker, a bus-window write, an edge-channel edge), with the delay swept.

It runs in the capture domain on every build, beside the front ends whose events it watches,
so that the delay is exact to the capture cycle; the pin takes its level at the same clock
edge as the periodic generator's (:func:`.irq_pin.show_irq`).
"""

from amaranth.hdl import *
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from latscope_defs.protocol import IRQ_DELAY_BITS, TRIGGER_SOURCES, TriggerConfig

__all__ = ["MATCH_BITS", "firing_layout", "IrqTrigger"]

#: Value bits a trigger event is compared on (``TriggerConfig.match``, ``mask``).
MATCH_BITS = TriggerConfig.as_shape()["match"].width

#: What the trigger gives the IRQ pin: whether it drives the pin (``active``, the trigger is
#: enabled), the level it drives and the delay of the firing that level belongs to.
firing_layout = data.StructLayout({"active": 1, "level": 1, "delay": IRQ_DELAY_BITS})


class IrqTrigger(wiring.Component):
    """Fires the IRQ output ``delay`` capture cycles after a trigger event.

    Parameters
    ----------
    sources : dict of :class:`Source` to int
        The front ends' event streams the trigger may watch (those of
        :data:`~latscope_defs.protocol.TRIGGER_SOURCES` the build has) and their value widths;
        a port named after each source (``marker``, ``bus``, ``edge0``, ...).

    Ports
    -----
    config : In(:class:`~latscope_defs.protocol.TriggerConfig`)
        The settings; stable from ``apply`` on (the command's register, or its copy in the
        capture domain).
    apply : In(1)
        One cycle: (re)start with ``config`` (TRIGGER_CONFIG, and START): the delay is
        ``start`` again, the count of triggers restarts, a firing in progress ends (the pin
        shows its release at once), and the trigger is ready (with ``arm``: waits for an
        arming edge).
    arm : In(1)
        One cycle per asserting edge of the periodic generator (its own level, whether or
        not the pin shows it).
    firing : Out(:data:`firing_layout`)
        For the pin: ``active`` (``config.flags.enable``), ``level`` and ``delay``, from
        flip-flops.

    Timing (cycle *c* is the one in which a trigger event is ``valid``: the cycle its stamp
    counts, before the host subtracts its source's pin latency)
    -----------------------------------------------------------------------------------
    * A trigger event is a ``valid`` event of ``config.source`` whose value ``v`` (its low
      :data:`MATCH_BITS` bits, zero-extended) has ``(v ^ match) & mask == 0``.
    * It is *taken* if the trigger is ready in cycle *c* + 1. Every ``every``-th taken
      trigger (``every`` 0 acts as 1; the count restarts at ``apply`` and at each firing)
      fires: the pin shows the asserting edge in cycle *c* + :attr:`latency` + *d*, *d* the
      delay in force, and the releasing edge ``1 + hold`` cycles later.
    * From the cycle after it takes the firing's trigger the trigger is not ready; it is
      ready again in the cycle the pin shows the release (so an event of the cycle before
      the release is taken), or with ``flags.arm`` only from the cycle after the next arming
      edge (arming edges while not waiting for one are ignored). Triggers while not ready are
      ignored (not counted).
    * The delay steps in the cycle after the release: ``d + step``, or ``start`` where that
      would be ``stop`` or more (``range(start, stop, step)``, over and over; ``step`` 0 or
      ``start >= stop`` keep ``start``).
    * Both edges of a firing carry its delay (``firing.delay``, stable from before the
      asserting edge until after the releasing edge).
    """

    #: Capture cycles from a trigger event's cycle to the pin's asserting edge at delay 0:
    #: the match registered, the decision (the delay loaded into the counter), the counter's
    #: zero taking the level, the pin's flip-flop.
    latency = 4

    def __init__(self, sources):
        unknown = set(sources) - set(TRIGGER_SOURCES)
        if unknown:
            raise ValueError(f"no trigger on {', '.join(source.name for source in unknown)}")
        self._sources = dict(sources)
        members = {
            "config": In(TriggerConfig),
            "apply": In(1),
            "arm": In(1),
            "firing": Out(firing_layout),
        }
        for source, width in self._sources.items():
            members[source.name.lower()] = In(stream.Signature(width, always_ready=True))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        state = _TriggerState()
        hit = self._match(m)
        m.d.comb += [
            self.firing.active.eq(self.config.flags.enable),
            self.firing.level.eq(state.asserted),
            self.firing.delay.eq(state.delay),
        ]
        # The next delay, ready long before a firing's end needs it (the delay stays the
        # same from one firing's step to the next's, at least three cycles).
        m.d.sync += state.stepped.eq(state.delay + self.config.step)
        with m.If(self.apply):
            self._restart(m, state)
        with m.Elif(state.ready):
            with m.If(hit):
                self._take(m, state)
        with m.Elif(state.counting):
            self._count_delay(m, state)
        with m.Elif(state.asserted):
            self._count_width(m, state)
        with m.Elif(state.stepping):
            self._step(m, state)
        with m.Elif(self.arm & self.config.flags.arm):
            m.d.sync += state.ready.eq(self.config.flags.enable)
        return m

    def _match(self, m):
        """``hit``: in the cycle before, the source chosen had an event whose value matches.
        The choice of source is registered from the (stable) config, so the path from the
        front ends is the value compare, an AND and an OR into one flip-flop."""
        config = self.config
        hit = Signal()
        hits = []
        for source in self._sources:
            port = getattr(self, source.name.lower())
            chosen = Signal(name=f"chosen_{source.name.lower()}")
            m.d.sync += chosen.eq(config.source == source)
            value = Signal(MATCH_BITS, name=f"value_{source.name.lower()}")
            m.d.comb += value.eq(port.payload[:MATCH_BITS])  # zero-extended
            hits.append(port.valid & chosen & (((value ^ config.match) & config.mask) == 0))
        m.d.sync += hit.eq(Cat(hits).any())
        return hit

    def _restart(self, m, state):
        config = self.config
        m.d.sync += [
            state.delay.eq(config.start),
            state.ready.eq(config.flags.enable & ~config.flags.arm),
            state.counting.eq(0),
            state.asserted.eq(0),
            state.stepping.eq(0),
            state.taken.eq(0),
            state.last.eq(config.every <= 1),
        ]

    def _take(self, m, state):
        """A trigger taken: the every-``every``-th fires (the delay into the counter), the
        others are counted."""
        config = self.config
        with m.If(state.last):
            m.d.sync += [
                state.ready.eq(0),
                state.counting.eq(1),
                state.taken.eq(0),
                state.last.eq(config.every <= 1),
            ]
            state.load(m, state.delay)
        with m.Else():
            # `taken` + 1 triggers are counted now; the next is the last if that makes
            # every - 1 (every >= 2 here).
            m.d.sync += [
                state.taken.eq(state.taken + 1),
                state.last.eq(state.taken + 2 == config.every),
            ]

    def _count_delay(self, m, state):
        """The delay counts down; at its end the level rises and the width counts."""
        config = self.config
        with m.If(state.zero):
            m.d.sync += [state.counting.eq(0), state.asserted.eq(1)]
            state.load(m, config.hold)
        with m.Else():
            state.decrement(m)

    def _count_width(self, m, state):
        with m.If(state.zero):
            m.d.sync += [state.asserted.eq(0), state.stepping.eq(1)]
        with m.Else():
            state.decrement(m)

    def _step(self, m, state):
        """The cycle after the release: the delay steps (the release's event took the old
        one), and the trigger is ready again, or waits to be armed."""
        config = self.config
        m.d.sync += [
            state.stepping.eq(0),
            state.delay.eq(Mux(state.stepped >= config.stop, config.start, state.stepped)),
            state.ready.eq(config.flags.enable & ~config.flags.arm),
        ]


class _TriggerState:
    """:class:`IrqTrigger`'s registers. One of ``ready``, ``counting`` (the delay),
    ``asserted`` (the width), ``stepping`` is set, or none (waiting to be armed, or
    disabled). One counter serves the delay and the width: ``zero`` is ``counter == 0``,
    kept in a flip-flop beside it."""

    def __init__(self):
        self.delay = Signal(IRQ_DELAY_BITS)  # the delay of the next firing
        self.stepped = Signal(IRQ_DELAY_BITS + 1)  # delay + step
        self.ready = Signal()
        self.counting = Signal()
        self.asserted = Signal()
        self.stepping = Signal()
        self.taken = Signal(TriggerConfig.as_shape()["every"].width)
        self.last = Signal()  # the next trigger taken fires
        self.counter = Signal(IRQ_DELAY_BITS)
        self.zero = Signal()

    def load(self, m, value):
        m.d.sync += [self.counter.eq(value), self.zero.eq(value == 0)]

    def decrement(self, m):
        m.d.sync += [self.counter.eq(self.counter - 1), self.zero.eq(self.counter == 1)]
