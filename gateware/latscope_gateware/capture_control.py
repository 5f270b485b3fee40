"""The commands' effects across the link/capture clock boundary.

The command processor and the IRQ generator's timing run in the link domain (``sync``); the
capture (front ends, the IRQ pin stage, time-stamper) in the capture domain.
:class:`CaptureControl` carries START and STOP over as pulses
(``amaranth.lib.cdc.PulseSynchronizer``: a toggle through a two-flip-flop synchronizer) and
takes the START source mask into the capture domain at that pulse: the link domain wrote it
before it sent the pulse and keeps it until the next command, so it is stable when the capture
domain reads it. The IRQ generator's strobes (IRQ_CONFIG, and START, which applies the
settings in force) stay in the link domain. The IRQ trigger runs in the capture domain:
TRIGGER_CONFIG crosses as a pulse too, and its settings (held by the link domain from before
the pulse until the next command) are copied at it. The count of asserting IRQ edges (the pin
stage's, in the capture domain) comes back as a small Gray-coded counter
(:class:`GrayCountCrossing`).
"""

from amaranth.hdl import *
from amaranth.lib import wiring
from amaranth.lib.cdc import FFSynchronizer, PulseSynchronizer
from amaranth.lib.wiring import In, Out

from latscope_defs.protocol import StartArgs, TriggerConfig

from .arithmetic import carry_select_add

__all__ = ["CaptureControl", "GrayCountCrossing"]


def _gray(value):
    return value ^ (value >> 1)


class GrayCountCrossing(wiring.Component):
    """Counts ``step`` pulses of the ``i_domain`` into ``count`` (32 bits) of ``sync``.

    The ``i_domain`` side is a ``bits``-wide counter, registered in Gray code (one bit
    changes per step) and synchronized into ``sync``, which adds the difference from the last
    value it saw to ``count``. That is exact as long as ``sync`` samples the Gray counter at
    least once per ``2 ** bits - 1`` steps (the IRQ generator's asserting edges are at least
    two capture cycles apart: 6 bits allow a link clock 31 times slower than the capture
    clock). ``clear`` (``sync``) zeroes ``count``; the small counter itself never restarts,
    so no step is lost or made up at a clear. With ``i_domain`` ``"sync"`` (one clock) the
    steps are counted directly.
    """

    def __init__(self, *, i_domain, bits=6):
        self._i_domain = i_domain
        self._bits = bits
        super().__init__({"step": In(1), "clear": In(1), "count": Out(32)})

    def elaborate(self, platform):
        m = Module()
        if self._i_domain == "sync":  # one clock: count directly
            with m.If(self.clear):
                m.d.sync += self.count.eq(0)
            with m.Else():
                m.d.sync += self.count.eq(self.count + self.step)
            return m
        bits = self._bits
        binary = Signal(bits)
        gray = Signal(bits)
        # The step is registered first: it is decided late in its cycle (the IRQ pin stage's
        # event and `capturing`), and the add and the Gray code behind it made the
        # iCEBreaker's slowest capture path (51.5 MHz, seed 2).
        step = Signal()
        m.d[self._i_domain] += [
            step.eq(self.step),
            binary.eq(binary + step),
            gray.eq(_gray(binary + step)),
        ]
        synced = Signal(bits)
        m.submodules.gray_sync = FFSynchronizer(gray, synced, o_domain="sync")
        # Gray to binary: bit i is the XOR of the Gray bits from i up.
        seen = Signal(bits)
        last = Signal(bits)
        # The steps since the last cycle, registered, then added by a carry-select adder: the
        # decode, the subtraction and a 32-bit carry chain in one cycle were the iCEBreaker's
        # slowest link-domain path (36.0 MHz at 36 MHz).
        delta = Signal(bits)
        m.d.comb += seen.eq(Cat(synced[i:].xor() for i in range(bits)))
        m.d.sync += [last.eq(seen), delta.eq((seen - last)[:bits])]
        with m.If(self.clear):
            m.d.sync += self.count.eq(0)
        with m.Else():
            m.d.sync += self.count.eq(carry_select_add(self.count, delta, width=32, split=16))
        return m


class CaptureControl(wiring.Component):
    """START and STOP into the capture domain, asserting IRQ edges out of it; the IRQ
    generator's strobes.

    Link domain (``sync``): ``start``, ``stop``, ``irq_apply`` are the command processor's
    one-cycle pulses (at least a few cycles apart: commands come a UART frame or more apart);
    ``sources`` is START's source mask, written with ``start`` and held; ``irq_edges`` counts
    the ``irq_edge`` pulses since the last ``start``. ``generator_apply`` and
    ``generator_reseed`` are the IRQ generator's ``apply`` and ``reseed``, from flip-flops, a
    cycle after ``irq_apply`` or ``start`` and after ``start`` (START applies the IRQ settings
    in force, from the seed).

    Capture domain (``capture_domain``): ``capture_start`` is the START pulse, from a
    flip-flop, 3 to 4 capture cycles after the link domain's (1 cycle when ``capture_domain``
    is ``"sync"``: one clock, no synchronizers); ``capturing`` rises in the cycle after
    ``capture_start`` and falls in the cycle after a ``stop`` arrives; ``sources_enabled`` is
    the mask taken at ``capture_start``. With one clock, ``generator_apply`` and
    ``capture_start`` come from the same cycle's pulses: the IRQ generator restarts in the
    cycle ``capture_start`` is high, as before the two clock domains.

    The trigger: ``trigger_apply`` (link) is TRIGGER_CONFIG's pulse and ``trigger_config``
    (link) its settings, held from it; ``trigger_restart`` (capture, a flip-flop) is the
    trigger's ``apply``, in the cycle of ``capture_start`` or the cycle after TRIGGER_CONFIG's
    pulse arrives (START restarts the sweep), and ``capture_trigger_config`` the settings as
    the capture domain has them: with two clocks a copy taken as the pulse arrives, with one
    the link domain's register itself.
    """

    def __init__(self, *, capture_domain):
        self._domain = capture_domain
        super().__init__(
            {
                "start": In(1),
                "stop": In(1),
                "irq_apply": In(1),
                "sources": In(StartArgs),
                "irq_edges": Out(32),
                "generator_apply": Out(1),
                "generator_reseed": Out(1),
                "capture_start": Out(1),
                "capturing": Out(1),
                "sources_enabled": Out(StartArgs),
                "irq_edge": In(1),
                "trigger_apply": In(1),
                "trigger_config": In(TriggerConfig),
                "trigger_restart": Out(1),
                "capture_trigger_config": Out(TriggerConfig),
            }
        )

    def elaborate(self, platform):
        m = Module()
        capture = m.d[self._domain]
        pulses = {}
        for name in ("start", "stop", "trigger_apply"):
            if self._domain == "sync":  # one clock: the pulses need no synchronizer
                pulses[name] = getattr(self, name)
                continue
            synchronizer = PulseSynchronizer("sync", self._domain)
            m.submodules[f"{name}_sync"] = synchronizer
            m.d.comb += synchronizer.i.eq(getattr(self, name))
            pulses[name] = synchronizer.o
        # The pulses fan out widely (the loss counts, the IRQ generator's settings and LFSR):
        # they leave from flip-flops of their own, not from the synchronizers' XOR.
        stop = Signal()
        capture += [self.capture_start.eq(pulses["start"]), stop.eq(pulses["stop"])]
        # START applies the IRQ settings in force too: one flip-flop for both, not an OR in
        # front of the IRQ generator's many loads.
        m.d.sync += self.generator_apply.eq(self.irq_apply | self.start)
        if self._domain == "sync":  # one clock: START's capture-side flip-flop is it
            m.d.comb += self.generator_reseed.eq(self.capture_start)
        else:
            m.d.sync += self.generator_reseed.eq(self.start)
        with m.If(self.capture_start):
            capture += [self.capturing.eq(1), self.sources_enabled.eq(self.sources)]
        with m.Elif(stop):
            capture += self.capturing.eq(0)

        capture += self.trigger_restart.eq(pulses["trigger_apply"] | pulses["start"])
        if self._domain == "sync":
            m.d.comb += self.capture_trigger_config.eq(self.trigger_config)
        else:
            with m.If(pulses["trigger_apply"]):
                capture += self.capture_trigger_config.eq(self.trigger_config)

        m.submodules.irq_edges = edges = GrayCountCrossing(i_domain=self._domain)
        m.d.comb += [
            edges.step.eq(self.irq_edge),
            edges.clear.eq(self.start),
            self.irq_edges.eq(edges.count),
        ]
        return m
