"""The IRQ trigger, exact to the cycle: the whole appliance in Amaranth's simulator (one clock,
and the ULX3S's two: a 125 MHz capture clock, a 50 MHz link clock, in phase), commands shifted
into its UART, a DUT that changes the trigger's pins (a marker's strobe and data, a bus-window
write, an edge channel) at chosen cycles, and the IRQ pin watched cycle by cycle.

Every IRQ edge must come exactly where docs/protocol.md ("Triggered IRQs") puts it: the
asserting edge ``delay`` + the trigger source's pin latency + ``trigger_latency`` (IDENTIFY)
capture cycles after the trigger's pin changed, the release ``width`` later, for every delay
0..65 of a sweep and for each kind of trigger; triggers while the trigger is busy, events that
do not match, and all but every N-th trigger are ignored; the sweep wraps; and with ``arm``
the periodic generator's asserting edges (found in a run without the trigger, whose timing
after START is the same) each arm one firing, while the pin never shows the generator's own
edges. The model below is the documented rule, written out independently of the gateware.
Then the stream: the host's IRQ events carry each edge's delay, and the IRQ edge's stamp is
its trigger's stamp plus the delay and ``Identity.trigger_offset``.
"""

import itertools
import random

import pytest

from latscope.events import Events
from latscope.link.device import IrqSettings, TriggerSettings
from latscope.link.identity import Identity
from latscope_defs.markers import Point, Test, encode
from latscope_defs.protocol import (
    Command,
    IdentifyReply,
    Source,
    StartArgs,
    encode_command,
    irq_delay,
    irq_level,
    irq_triggered,
)
from latscope_gateware.appliance import ApplianceConfig
from latscope_gateware.sim_device import ScriptedDut, ScriptedLink, SimulatedDevice
from support.cases import parametrize_first_fast

#: The bus window (word address, words) of the simulated appliance.
WINDOW = (0x1000, 16)
ONE_CLOCK = dict(clock_hz=100_000_000, uart_divisor=2)
#: The ULX3S's clocks; the link's UART as fast as it goes (2 link cycles a bit).
TWO_CLOCKS = dict(clock_hz=125_000_000, link_clock_hz=50_000_000, uart_divisor=2)
#: Capture cycles between commands (the longest, TRIGGER_CONFIG, takes 15 bytes: 750 capture
#: cycles at 2 link cycles a bit with two clocks).
COMMAND_GAP = 1000
#: The marker port takes markers at least this many cycles apart (docs/markers.md).
MARKER_SPACING = 3


def config(clocks, **options):
    return ApplianceConfig(**clocks, bus_window=WINDOW, fifo_depth=512, flush_after=2000, **options)


class TriggerBench(SimulatedDevice):
    """The appliance with a DUT that makes ``changes`` ({capture cycle: [(source, value)]}:
    a marker, a bus-window write of that value, an edge channel's new level) and a host that
    sends ``commands`` ([(capture cycle, bytes)])."""

    def __init__(self, config, changes, commands, cycles):
        super().__init__(config, ScriptedDut(), link=ScriptedLink(commands), max_cycles=cycles)
        self.changes = changes

    async def dut_process(self, ctx):
        app = self.appliance
        strobe, levels = 0, 0
        ctx.set(app.bus.sel, 0xF)
        while True:
            await ctx.tick(self.domain)
            now = ctx.get(self.bench.cycle)
            for name in ("cyc", "stb", "we", "ack"):
                ctx.set(getattr(app.bus, name), 0)
            for source, value in self.changes.get(now, ()):
                if source == Source.MARKER:
                    strobe ^= 1
                    ctx.set(app.marker_data, value)
                    ctx.set(app.marker_strobe, strobe)
                elif source == Source.BUS:  # one write, acked in this cycle
                    for name in ("cyc", "stb", "we", "ack"):
                        ctx.set(getattr(app.bus, name), 1)
                    ctx.set(app.bus.adr, WINDOW[0] + value % WINDOW[1])
                    ctx.set(app.bus.dat_w, value)
                else:
                    bit = 1 << (source - Source.EDGE0)
                    levels = (levels | bit) if value else (levels & ~bit)
                    ctx.set(app.edges, levels)
                self.log(ctx, source, value)


def run(clocks, changes, commands, cycles):
    """Runs the bench; (identity, truth log [(cycle, source name, value)], bytes received)."""
    bench = TriggerBench(config(clocks), changes, commands, cycles)
    bench.run()
    reply = bench.appliance.identify()
    identity = Identity.from_reply(
        reply.as_bits().to_bytes(IdentifyReply.as_shape().size // 8, "little")
    )
    return identity, bench.dut.truth, bytes(bench.link.received)


#: The periodic generator off: the trigger alone drives the pin.
NO_PERIODIC = IrqSettings(enable=False)


def session(trigger, irq=NO_PERIODIC, sources=(), *, disable_at=None):
    """TRIGGER_CONFIG, IRQ_CONFIG, START (capturing ``sources``): [(cycle, bytes)] and the
    cycle after which the DUT may begin; with ``disable_at``, a TRIGGER_CONFIG that turns the
    trigger off at that cycle."""
    mask = sum(1 << source for source in sources)
    commands = [
        (100, encode_command(Command.TRIGGER_CONFIG, trigger.encode())),
        (100 + COMMAND_GAP, encode_command(Command.IRQ_CONFIG, irq.encode())),
        (100 + 2 * COMMAND_GAP, encode_command(Command.START, StartArgs.const({"sources": mask}))),
    ]
    if disable_at is not None:
        off = TriggerSettings(enable=False)
        commands.append((disable_at, encode_command(Command.TRIGGER_CONFIG, off.encode())))
    return commands, 100 + 3 * COMMAND_GAP


# --- The documented rule ----------------------------------------------------------------------


def matches(settings, value):
    return ((value & 0xFFFF) ^ settings.match) & settings.mask == 0


def expected_firings(settings, events, latency, *, arms=None):
    """The firings the documented rule gives for the trigger ``events`` ([(cycle, value)]:
    the cycles their pins changed) of a trigger with ``settings``: [(asserting edge's cycle,
    releasing edge's cycle, delay)]. ``latency``: pin to IRQ edge at delay 0 (the source's pin
    latency and trigger_latency, capture cycles). ``arms``: the periodic generator's
    asserting edges (with ``settings.arm``)."""
    delays = itertools.cycle(settings.delays())
    arms = sorted(arms or ())

    def armed_after(cycle):
        # Ready in the cycle after the first arming edge from `cycle` on.
        return next((arm + 1 for arm in arms if arm >= cycle), float("inf"))

    ready = armed_after(0) if settings.arm else 0
    taken, firings = 0, []
    for pin_cycle, value in events:
        # The event's own cycle (its stamp) is its pin latency after the pin; it is taken
        # if the trigger is ready in the cycle after: the same as pin_cycle + latency - L
        # + 1 >= ready, with L the trigger's own part of `latency`.
        event_cycle = pin_cycle + latency - TRIGGER_LATENCY
        if not matches(settings, value) or event_cycle + 1 < ready:
            continue
        taken += 1
        if taken < settings.every:
            continue
        taken = 0
        delay = next(delays)
        rise = pin_cycle + latency + delay
        release = rise + settings.width
        firings.append((rise, release, delay))
        # Ready again in the cycle the pin shows the release, or armed from it on.
        ready = armed_after(release) if settings.arm else release
    return firings


#: The trigger's own latency (IrqTrigger.latency, capture cycles): docs/protocol.md states 4.
TRIGGER_LATENCY = 4
#: Pin to stamp, capture cycles (docs/tests.md, one sample a cycle): the marker port's
#: synchronizer and sample delay, the registered bus snoop, the edge channel's synchronizer.
PIN_LATENCY = {Source.MARKER: 4, Source.BUS: 1, Source.EDGE1: 2}


def irq_edges(truth):
    """(cycle, level) of every IRQ pin change the bench saw."""
    return [(cycle, value) for cycle, name, value in truth if name == "IRQ"]


def check(truth, firings, identity, source):
    """The IRQ pin's edges are exactly the firings', and the latency is the one IDENTIFY
    reports."""
    assert (
        identity.trigger_offset(source) >> identity.stamp_shift
        == PIN_LATENCY[source] + TRIGGER_LATENCY
    )
    expected = [edge for rise, release, _ in firings for edge in ((rise, 1), (release, 0))]
    assert irq_edges(truth) == expected


# --- Scripts ----------------------------------------------------------------------------------


def other(rng):
    """A marker value that a trigger on IL_A THREAD, argument 5 under mask 7, does not take:
    another point, test or argument."""
    return rng.choice(
        [
            encode(Test.IL_A, Point.ISR_ENTRY, 5),
            encode(Test.IDL_B, Point.THREAD, 5),
            encode(Test.IL_A, Point.THREAD, 6),
            encode(Test.IL_A, Point.THREAD, 13),
        ]
    )


def sweep_script(settings, source, first, firings, *, rng, noise=True):
    """Trigger events for ``firings`` firings of ``settings`` (every one taken, the
    ``every``-th fires), from cycle ``first``; between them, while the trigger is busy,
    events it must ignore (matching ones, and ones that do not match), and the next taken
    one at the first cycle it may come or a few cycles later. Returns {cycle: [(source,
    value)]} and the cycle after the last."""
    latency = PIN_LATENCY[source] + TRIGGER_LATENCY
    delays = itertools.cycle(settings.delays())
    edge = source not in (Source.MARKER, Source.BUS)
    # Markers and bus writes: the bits the trigger does not look at are random.
    taken_value = settings.match | (0 if edge else rng.getrandbits(16) & ~settings.mask)
    changes, cycle, level = {}, first, 0

    def add(at, value):
        nonlocal level
        if edge and not settings.mask:
            value = 1 - level  # a trigger on both edges: the next edge
        elif edge and value == level:
            changes[at - 3] = [(source, 1 - value)]  # a fall before a rise, or the reverse
        changes[at] = [(source, value)]
        level = value

    for _ in range(firings):
        for _ in range(settings.every):
            add(cycle, taken_value)
            last = cycle
            cycle += MARKER_SPACING + 3
        delay = next(delays)
        release = last + latency + delay + settings.width
        if noise:
            # While busy: matching events (an edge channel's next rising edge needs a fall
            # first, so some cycles apart) and, for markers and bus writes, others.
            busy = range(cycle + 3, release - latency + TRIGGER_LATENCY - 2, 7)
            for at in busy:
                if source in (Source.MARKER, Source.BUS) and rng.random() < 0.5:
                    add(at, other(rng))
                else:
                    add(at, taken_value)
        # The next trigger: the first cycle its event is taken (its stamp one cycle before
        # the release's), or a few later.
        cycle = max(cycle, release - latency + TRIGGER_LATENCY - 1 + rng.choice([0, 0, 1, 4]))
        cycle = max(cycle, max(changes) + MARKER_SPACING + 3)
    return changes, cycle


def trigger_events(truth, source):
    return [(cycle, value) for cycle, name, value in truth if name == source.name]


# --- Tests ------------------------------------------------------------------------------------

SWEEP = dict(start=0, stop=66, step=1, width=3)
KINDS = {
    Source.MARKER: TriggerSettings.on_marker(Test.IL_A, Point.THREAD, arg=5, arg_mask=7, **SWEEP),
    Source.BUS: TriggerSettings.on_marker(
        Test.IL_A, Point.THREAD, arg=5, arg_mask=7, bus=True, **SWEEP
    ),
    Source.EDGE1: TriggerSettings.on_edge(1, level=1, **SWEEP),
}


@parametrize_first_fast(
    "clocks, source",
    [
        (ONE_CLOCK, Source.MARKER),
        (ONE_CLOCK, Source.BUS),
        (ONE_CLOCK, Source.EDGE1),
        (TWO_CLOCKS, Source.MARKER),
    ],
    ids=["marker", "bus", "edge", "marker-two-clocks"],
)
def test_every_delay_of_a_sweep_exact_to_the_cycle(clocks, source):
    """Delays 0..65 one after the other and the wrap to 0, each firing exactly where the
    documented rule puts it; busy-time and non-matching triggers ignored."""
    settings = KINDS[source]
    commands, begin = session(settings)
    changes, end = sweep_script(settings, source, begin, 66 + 4, rng=random.Random(source))
    identity, truth, _ = run(clocks, changes, commands, end + 200)
    firings = expected_firings(
        settings, trigger_events(truth, source), PIN_LATENCY[source] + TRIGGER_LATENCY
    )
    check(truth, firings, identity, source)
    delays = [delay for _, _, delay in firings]
    assert delays == list(range(66)) + [0, 1, 2, 3]  # every delay, then the wrap


@pytest.mark.slow
def test_every_nth_trigger_and_a_sweep_that_wraps_from_its_start():
    """every = 3 on both edges of an edge channel: two triggers in three are counted and
    ignored; delays 5, 9, .., 37 and back to 5 (stop 40 is never reached)."""
    settings = TriggerSettings.on_edge(1, every=3, start=5, stop=40, step=4, width=7)
    commands, begin = session(settings)
    changes, end = sweep_script(settings, Source.EDGE1, begin, 12, rng=random.Random(3))
    identity, truth, _ = run(ONE_CLOCK, changes, commands, end + 200)
    firings = expected_firings(
        settings, trigger_events(truth, Source.EDGE1), PIN_LATENCY[Source.EDGE1] + TRIGGER_LATENCY
    )
    check(truth, firings, identity, Source.EDGE1)
    assert [delay for _, _, delay in firings] == [5, 9, 13, 17, 21, 25, 29, 33, 37, 5, 9, 13]
    assert len(trigger_events(truth, Source.EDGE1)) > 3 * len(firings)


@pytest.mark.slow
@pytest.mark.parametrize("clocks", [ONE_CLOCK, TWO_CLOCKS], ids=["one-clock", "two-clocks"])
def test_the_periodic_generator_arms_the_trigger_and_never_shows(clocks):
    """The periodic generator (every 400 + 0..63 capture cycles) arms the trigger: each of its
    asserting edges (those of a run without the trigger, the same from START on) arms the
    first trigger after it, markers come every 10 cycles, and the pin shows the firings
    only; a TRIGGER_CONFIG that turns the trigger off gives the pin back to the generator."""
    link = clocks.get("link_clock_hz", clocks["clock_hz"])
    irq = IrqSettings(period=400 * link // clocks["clock_hz"], jitter_mask=0x3F, width=20)
    settings = TriggerSettings.on_marker(
        Test.IL_A, Point.THREAD, arm=True, start=0, stop=30, step=3, width=5
    )
    disable_at = 100 + 3 * COMMAND_GAP + 6000
    end = disable_at + COMMAND_GAP + 3000
    value = encode(Test.IL_A, Point.THREAD)
    # Markers every 10 cycles, and now and then one that does not match.
    rng = random.Random(7)
    begin = 100 + 3 * COMMAND_GAP
    # (None in the last 500 cycles before the turn-off: every firing is over by then.)
    changes = {
        cycle: [(Source.MARKER, value if rng.random() < 0.8 else other(rng))]
        for cycle in range(begin, disable_at - 500, 10)
    }
    commands, _ = session(TriggerSettings(enable=False), irq)
    _, periodic, _ = run(clocks, changes, commands, end)
    commands, _ = session(settings, irq, disable_at=disable_at)
    identity, truth, _ = run(clocks, changes, commands, end)

    arms = [cycle for cycle, level in irq_edges(periodic) if level]
    firings = expected_firings(
        settings,
        trigger_events(truth, Source.MARKER),
        PIN_LATENCY[Source.MARKER] + TRIGGER_LATENCY,
        arms=arms,
    )
    assert len(firings) >= 10
    # Up to the turn-off, the firings and nothing else; after it (once it has had time to
    # arrive), the generator's own edges again.
    arrived = disable_at + COMMAND_GAP
    check([entry for entry in truth if entry[0] < disable_at], firings, identity, Source.MARKER)
    assert [edge for edge in irq_edges(truth) if edge[0] >= arrived] == [
        edge for edge in irq_edges(periodic) if edge[0] >= arrived
    ]
    assert any(edge[0] >= arrived for edge in irq_edges(periodic))


@pytest.mark.slow
@pytest.mark.parametrize("clocks", [ONE_CLOCK, TWO_CLOCKS], ids=["one-clock", "two-clocks"])
def test_the_stream_carries_each_edges_delay(clocks):
    """Captured (IRQ and markers), the host's IRQ events carry the firing's delay on both
    edges, and each asserting edge's stamp is its trigger marker's stamp plus the delay and
    the offset IDENTIFY gives (Identity.trigger_offset)."""
    settings = TriggerSettings.on_marker(Test.IL_A, Point.THREAD, start=0, stop=70, step=7, width=4)
    commands, begin = session(settings, sources=(Source.IRQ, Source.MARKER))
    changes, end = sweep_script(
        settings, Source.MARKER, begin, 12, rng=random.Random(11), noise=False
    )
    commands.append((end + 100, encode_command(Command.STOP)))
    identity, truth, received = run(clocks, changes, commands, end + 12000)
    parser = identity.parser()
    events = Events.concatenate([parser.feed(received), parser.finish()])
    assert parser.stats.segments_bad == parser.stats.holes == 0
    irq = events.of(Source.IRQ)
    markers = events.of(Source.MARKER)
    delays = settings.delays()
    expected = [delays[n % len(delays)] for n in range(12)]
    assert irq_delay(irq.value).tolist() == [d for d in expected for _ in (1, 0)]
    assert irq_level(irq.value).tolist() == [1, 0] * 12
    assert irq_triggered(irq.value).tolist() == [1] * 24
    # One marker per firing here (no noise): the n-th marker triggered the n-th firing.
    rises = irq.stamp[::2].astype(int)
    offset = identity.trigger_offset(Source.MARKER)
    assert (rises - markers.stamp.astype(int)).tolist() == [
        (delay << identity.stamp_shift) + offset for delay in expected
    ]
    # The host's stamps are the pins' cycles (the bench's, less one origin).
    pins = [cycle for cycle, level in irq_edges(truth)]
    origin = pins[0] - int(irq.stamp[0])
    assert [stamp + origin for stamp in irq.stamp.tolist()] == pins
