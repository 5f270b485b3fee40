"""The capture/link clock-domain crossing: events stamped in one clock domain, encoded and sent
in another, across the asynchronous FIFO, with unrelated clock periods.

Randomized, in Amaranth's simulator: for several period ratios (link slower, faster, nearly
equal) and phase offsets, events come in random capture cycles (so over a run they meet the
link clock at every phase); the bytes that come out are parsed by the host's parser and
compared with the events as the testbench applied them. Without overflow every event arrives
exactly once, in order, with its stamp; with the FIFO overflowing, every event that arrives is
one applied (in order, none twice), and the LOSS records and STATUS count the rest exactly.
"""

import itertools
import random

import pytest
from amaranth.hdl import ClockDomain, Elaboratable, Module
from amaranth.sim import Simulator
from test_irq_generator import reference_draws

from latscope.events import Events
from latscope.link.parser import StreamParser
from latscope_defs.protocol import GATEWARE_VERSION, Source
from latscope_gateware.capture_control import CaptureControl, GrayCountCrossing
from latscope_gateware.capture_pipeline import CapturePipeline
from latscope_gateware.irq_generator import MIN_INTERVAL, IrqGenerator
from latscope_gateware.irq_pin import LINK_TO_PIN, IrqPinStage
from support.cases import parametrize_first_fast
from support.gateware_sim import byte_collector, lost_per_source

SOURCES = {Source.MARKER: 16, Source.IRQ: 1, Source.EDGE0: 1, Source.EDGE1: 1}
CAPTURE_NS = 10.0

#: (link period / capture period, capture clock phase / its period, link clock phase / its
#: period): link slower (an odd ratio), faster, nearly equal, the same with a phase offset.
CLOCKS = [(2.37, 0.0, 0.31), (0.61, 0.45, 0.0), (1.013, 0.2, 0.7), (1.0, 0.0, 0.5)]


class _Bench(Elaboratable):
    """The pipeline, with the two domains it needs: ``capture`` and the link's ``sync``."""

    def __init__(self, pipeline):
        self.pipeline = pipeline

    def elaborate(self, platform):
        m = Module()
        m.domains.capture = ClockDomain()
        m.domains.sync = ClockDomain()
        m.submodules.pipeline = self.pipeline
        return m


def _simulate(ratio, capture_phase, link_phase, *, seed, cycles, rate, fifo_depth, link_every):
    """Events in ``rate`` of ``cycles`` capture cycles (random sources, unique marker values);
    the link takes a byte every ``link_every`` link cycles. Returns the events applied
    (stamp, source, value), the bytes out, STATUS's counters after the drain and, for every
    link cycle until the events stop, whether the link took a byte and whether one was
    offered."""
    rng = random.Random(seed)
    dut = CapturePipeline(
        SOURCES, fifo_depth=fifo_depth, flush_after=1 << 20, capture_domain="capture"
    )
    applied, out, status, slots = [], [], {}, []
    done = []

    async def capture(ctx):
        # START reaches the capture domain after the link domain (as through the appliance's
        # synchronizer): a few capture cycles after the link's start pulse.
        await ctx.tick("capture").repeat(8)
        ctx.set(dut.clear, 1)
        await ctx.tick("capture")
        ctx.set(dut.clear, 0)
        ctx.set(dut.enable, 1)
        for cycle in range(cycles):
            now = ctx.get(dut.now)
            for source, width in SOURCES.items():
                port = getattr(dut, source.name.lower())
                fires = rng.random() < rate
                ctx.set(port.valid, fires)
                if fires:
                    value = cycle & 0xFFFF if source == Source.MARKER else rng.getrandbits(width)
                    ctx.set(port.payload, value)
                    applied.append((now, source, value))
            await ctx.tick("capture")
        for source in SOURCES:
            ctx.set(getattr(dut, source.name.lower()).valid, 0)
        ctx.set(dut.enable, 0)
        await ctx.tick("capture").repeat(4)
        done.append(True)

    async def link(ctx):
        ctx.set(dut.start, 1)
        await ctx.tick()
        ctx.set(dut.start, 0)
        while not done:
            await ctx.tick()
        ctx.set(dut.stopping, 1)  # STOP: the FIFO drains, the segment is sealed
        idle = 0
        while idle < 400:  # until the link has been quiet for a while
            before = len(out)
            await ctx.tick()
            idle = idle + 1 if len(out) == before else 0
        status.update(
            events=ctx.get(dut.events), lost=ctx.get(dut.lost), fifo_max=ctx.get(dut.fifo_max)
        )

    async def slot_sampler(ctx):
        async for _clk, _rst, ready, valid in ctx.tick().sample(dut.bytes.ready, dut.bytes.valid):
            if done:
                return
            slots.append((bool(ready), bool(valid)))

    sim = Simulator(_Bench(dut))
    sim.add_clock(CAPTURE_NS * 1e-9, phase=capture_phase * CAPTURE_NS * 1e-9, domain="capture")
    link_ns = ratio * CAPTURE_NS
    sim.add_clock(link_ns * 1e-9, phase=link_phase * link_ns * 1e-9, domain="sync")
    sim.add_testbench(capture)
    sim.add_testbench(link)
    sim.add_process(byte_collector(dut.bytes, out, lambda cycle: cycle % link_every == 0))
    sim.add_process(slot_sampler)
    sim.run()
    return applied, bytes(out), status, slots


def _parse(out):
    parser = StreamParser(latency={}, version=GATEWARE_VERSION)
    events = [
        (int(stamp), int(source), int(value))
        for stamp, source, value in Events.concatenate([parser.feed(out), parser.finish()])
    ]
    stats = parser.stats
    assert (stats.segments_bad, stats.holes, stats.bytes_skipped) == (0, 0, 0)
    return events


@parametrize_first_fast("ratio, capture_phase, link_phase", CLOCKS)
def test_every_event_crosses_once_in_order(ratio, capture_phase, link_phase):
    applied, out, status, _ = _simulate(
        ratio,
        capture_phase,
        link_phase,
        seed=int(ratio * 1000),
        cycles=3000,
        rate=0.012,
        fifo_depth=256,
        link_every=1,
    )
    events = _parse(out)
    # One entry per cycle, its events in source order: the order the stream must have.
    expected = sorted(applied, key=lambda event: (event[0], event[1]))
    assert len(expected) > 40
    assert events == [(stamp, int(source), value) for stamp, source, value in expected]
    assert status["events"] == len(expected) and status["lost"] == 0


@parametrize_first_fast("ratio, capture_phase, link_phase", CLOCKS)
def test_overflow_loss_counts_are_exact(ratio, capture_phase, link_phase):
    applied, out, status, _ = _simulate(
        ratio,
        capture_phase,
        link_phase,
        seed=int(ratio * 77),
        cycles=2500,
        rate=0.3,
        fifo_depth=8,
        link_every=3,
    )
    events = _parse(out)
    lost = lost_per_source(events)
    assert sum(lost.values()) > 0  # it did overflow
    delivered = [event for event in events if event[1] != Source.LOSS]
    for source in SOURCES:
        sent = [(stamp, value) for stamp, s, value in applied if s == source]
        got = [(stamp, value) for stamp, s, value in delivered if s == source]
        # In order, none twice, none made up: `got` is a subsequence of `sent`.
        position = 0
        for event in got:
            position = sent.index(event, position) + 1
        assert len(got) + lost.get(source, 0) == len(sent), source
    assert status["lost"] == sum(lost.values())
    assert status["events"] == len(delivered)
    assert status["fifo_max"] == 8  # every block-RAM row (docs/protocol.md)


@pytest.mark.slow
@pytest.mark.parametrize("ratio, capture_phase, link_phase", CLOCKS[:2])
def test_the_crossing_never_keeps_the_link_waiting(ratio, capture_phase, link_phase):
    """Under overload the link is the only limit: from the first byte until the events stop,
    a byte is offered in every cycle the link takes one. So the event rates a link sustains
    (bench/link_efficiency.py: bytes per event at the UART's rate) hold with two clocks.
    The link takes a byte every 30 link cycles, the shortest of the boards' UARTs (divisor 3,
    10 bits a byte, the iCEBreaker)."""
    _, _, _, slots = _simulate(
        ratio,
        capture_phase,
        link_phase,
        seed=5,
        cycles=4000,
        rate=0.05,
        fifo_depth=16,
        link_every=30,
    )
    first = next(n for n, (ready, valid) in enumerate(slots) if ready and valid)
    taken = [valid for ready, valid in slots[first:] if ready]
    assert len(taken) > 20
    assert all(taken), f"{taken.count(False)} of {len(taken)} byte slots found no byte"


@pytest.mark.parametrize("ratio", [0.37, 1.0, 3.1, 9.7])
def test_gray_count_crossing_counts_every_step(ratio):
    """The IRQ edge count's crossing: steps (at most one every other cycle of the stepping
    domain, as asserting IRQ edges are) all arrive in the other domain's count."""
    rng = random.Random(int(ratio * 10))
    crossing = GrayCountCrossing(i_domain="capture")
    m = Module()
    m.domains.capture = ClockDomain()
    m.domains.sync = ClockDomain()
    m.submodules.crossing = crossing
    steps = []

    async def stepper(ctx):
        for cycle in range(3000):
            step = cycle % 2 == 0 and rng.random() < 0.6
            ctx.set(crossing.step, step)
            steps.append(step)
            await ctx.tick("capture")
        ctx.set(crossing.step, 0)
        await ctx.tick("capture").repeat(10)

    async def reader(ctx):
        await ctx.tick().repeat(int(3100 / ratio) + 10)
        assert ctx.get(crossing.count) == sum(steps)

    sim = Simulator(m)
    sim.add_clock(CAPTURE_NS * 1e-9, domain="capture")
    sim.add_clock(ratio * CAPTURE_NS * 1e-9, phase=0.3 * ratio * CAPTURE_NS * 1e-9, domain="sync")
    sim.add_testbench(stepper)
    sim.add_testbench(reader)
    sim.run()


# --- The IRQ output across the clocks: generator in the link domain, pin stage at capture ----


class _IrqBench(Elaboratable):
    """The IRQ path of a two-clock appliance, wired as ``Appliance`` wires it: the command
    side's pulses through :class:`CaptureControl`, the IRQ generator in the link domain
    (``sync``), its pin stage, the time-stamper and the edge count in ``capture``."""

    def __init__(self):
        self.control = CaptureControl(capture_domain="capture")
        self.generator = IrqGenerator()
        self.pin = IrqPinStage(capture_domain="capture")
        self.pipeline = CapturePipeline(
            {Source.IRQ: 1}, fifo_depth=64, flush_after=1 << 20, capture_domain="capture"
        )

    def elaborate(self, platform):
        m = Module()
        m.domains.capture = ClockDomain()
        m.domains.sync = ClockDomain()
        m.submodules.control = control = self.control
        m.submodules.generator = generator = self.generator
        m.submodules.pin = pin = self.pin
        m.submodules.pipeline = pipeline = self.pipeline
        enabled = control.capturing & control.sources_enabled.sources[int(Source.IRQ)]
        m.d.comb += [
            pin.level.eq(generator.events.payload.level),
            pin.pin.eq(generator.irq),
            generator.apply.eq(control.generator_apply),
            generator.reseed.eq(control.generator_reseed),
            pipeline.irq.valid.eq(pin.events.valid & enabled),
            pipeline.irq.payload.eq(pin.events.payload),
            control.irq_edge.eq(control.capturing & pin.events.valid & pin.events.payload.level),
            pipeline.enable.eq(control.capturing),
            pipeline.clear.eq(control.capture_start),
            pipeline.start.eq(control.start),
        ]
        return m


def _simulate_irq(ratio, link_phase, settings, *, link_cycles):
    """IRQ_CONFIG with ``settings``, START, ``link_cycles`` link cycles, STOP. Returns the
    capture cycles as sampled ((now, pin, valid, payload, capturing) each), the events the
    host parses from the bytes, and STATUS's IRQ edge count."""
    bench = _IrqBench()
    control, pipeline = bench.control, bench.pipeline
    cycles, out, status = [], [], {}
    done = []

    async def link(ctx):
        ctx.set(bench.generator.config, settings)
        await ctx.tick().repeat(4)
        for pulse in (control.irq_apply, control.start):  # IRQ_CONFIG, then START
            if pulse is control.start:
                ctx.set(control.sources, {"sources": 1 << Source.IRQ})
            ctx.set(pulse, 1)
            await ctx.tick()
            ctx.set(pulse, 0)
            await ctx.tick().repeat(30)
        await ctx.tick().repeat(link_cycles)
        ctx.set(control.stop, 1)
        await ctx.tick()
        ctx.set(control.stop, 0)
        ctx.set(pipeline.stopping, 1)
        await ctx.tick().repeat(600)
        status["irq_edges"] = ctx.get(control.irq_edges)
        done.append(True)

    async def monitor(ctx):
        signals = (
            pipeline.now,
            bench.pin.irq,
            bench.pin.events.valid,
            bench.pin.events.payload.level,
            control.capturing,
        )
        async for _clk, _rst, *values in ctx.tick("capture").sample(*signals):
            cycles.append(tuple(values))
            if done:
                return

    sim = Simulator(bench)
    sim.add_clock(CAPTURE_NS * 1e-9, phase=0, domain="capture")
    link_ns = ratio * CAPTURE_NS
    sim.add_clock(link_ns * 1e-9, phase=link_phase * link_ns * 1e-9, domain="sync")
    sim.add_testbench(link)
    sim.add_process(monitor)
    sim.add_process(byte_collector(pipeline.bytes, out))
    sim.run()
    return cycles, _parse(bytes(out)), status


def _pin_edges(cycles):
    """(capture cycle, new level) of every cycle in which the pin shows a new level."""
    return [(n, cycles[n][1]) for n in range(1, len(cycles)) if cycles[n][1] != cycles[n - 1][1]]


def _check_every_edge_is_one_exact_event(cycles, events, status):
    edges = _pin_edges(cycles)
    # The event comes in the very cycle the pin first shows the new level, and only then.
    assert [(n, cycles[n][3]) for n in range(len(cycles)) if cycles[n][2]] == edges
    # Every edge while capturing reaches the host once, stamped with that cycle's stamp.
    captured = [(cycles[n][0], level) for n, level in edges if cycles[n][4]]
    assert len(captured) > 20
    assert events == [(stamp, int(Source.IRQ), level) for stamp, level in captured]
    assert status["irq_edges"] == sum(level for _, level in captured)
    return edges


@parametrize_first_fast("link_phase", [0.0, 0.5])
def test_irq_two_clocks_exact_from_one_pll(link_phase):
    """Link clock half the capture clock, its rising edges on capture rising edges (phase 0:
    the iCE40 PLL's GENCLK / GENCLK_HALF) or on the other capture edges (0.5): every IRQ edge is
    one event at its exact stamp, and the intervals and widths, drawn in link cycles, are exactly
    twice as many capture cycles: those of the documented LFSR from START's reseed on."""
    period, mask, width = 9, 0x1F, 4
    settings = {
        "period": period,
        "jitter_mask": mask,
        "width": width,
        "flags": {"enable": 1, "one_shot": 0, "active_low": 0},
    }
    cycles, events, status = _simulate_irq(2, link_phase, settings, link_cycles=1500)
    edges = _check_every_edge_is_one_exact_event(cycles, events, status)
    start = next(n for n, sample in enumerate(cycles) if sample[4])  # capturing rises
    after = [(n, level) for n, level in edges if n >= start]
    rising = [n for n, level in after if level]
    falling = [n for n, level in after if not level]
    draws = [
        max(MIN_INTERVAL, period + (draw & mask))
        for draw in itertools.islice(reference_draws(), len(rising) + 1)
    ]
    # Draw 0 (from the seed, at START) places the first edge; each edge draws the next.
    assert [b - a for a, b in itertools.pairwise(rising)] == [2 * i for i in draws[1 : len(rising)]]
    assert all(f - r == 2 * min(width, i - 1) for r, f, i in zip(rising, falling, draws[1:]))
    # The first edge after START: a fixed time (the crossings' latencies are fixed), the
    # same whatever the phase of the link edges among the capture edges: START's crossing,
    # draw 0's link cycles, and the pin stage's documented latency (LINK_TO_PIN).
    assert rising[0] - start == 2 * draws[0] + LINK_TO_PIN - 4


def test_irq_pin_stage_takes_no_mixed_pair():
    """The level and the pin cross on separate synchronizer bits; where one arrives a capture
    cycle before the other (a link edge between capture edges, a slow net), the stage must
    show neither a pin without its event nor a glitch. Driven here bit by bit: the pin bit
    one capture cycle late at every change."""
    stage = IrqPinStage(capture_domain="sync")
    shown = []

    async def testbench(ctx):
        level = 0
        for _ in range(12):
            level ^= 1
            ctx.set(stage.level, level)
            await ctx.tick()
            ctx.set(stage.pin, level)  # the pin bit a cycle after the level
            for _ in range(5):
                await ctx.tick()
                shown.append(
                    (
                        ctx.get(stage.irq),
                        ctx.get(stage.events.valid),
                        ctx.get(stage.events.payload.level),
                    )
                )

    sim = Simulator(stage)
    sim.add_clock(CAPTURE_NS * 1e-9)
    sim.add_testbench(testbench)
    sim.run()
    pin_changes = [n for n in range(1, len(shown)) if shown[n][0] != shown[n - 1][0]]
    events = [n for n in range(len(shown)) if shown[n][1]]
    assert len(events) == 12 and pin_changes == events
    # The pin always shows the level of the last event: never a mixed pair.
    assert all(pin == payload for pin, _, payload in shown)


def test_irq_two_clocks_unrelated_every_edge_exact():
    """Unrelated clocks (a ratio of 2.37): the synchronizer's latency varies by a capture
    cycle, but every IRQ edge is still one event, in order, at its exact stamp, and the edge
    count is exact."""
    settings = {
        "period": 6,
        "jitter_mask": 0x7,
        "width": 2,
        "flags": {"enable": 1, "one_shot": 0, "active_low": 0},
    }
    cycles, events, status = _simulate_irq(2.37, 0.31, settings, link_cycles=700)
    _check_every_edge_is_one_exact_event(cycles, events, status)
