"""The capture/link clock-domain crossing: events stamped in one clock domain, encoded and sent
in another, across the asynchronous FIFO, with unrelated clock periods.

Randomized, in Amaranth's simulator: for several period ratios (link slower, faster, nearly
equal) and phase offsets, events come in random capture cycles (so over a run they meet the
link clock at every phase); the bytes that come out are parsed by the host's parser and
compared with the events as the testbench applied them. Without overflow every event arrives
exactly once, in order, with its stamp; with the FIFO overflowing, every event that arrives is
one applied (in order, none twice), and the LOSS records and STATUS count the rest exactly.
"""

import random

import pytest
from amaranth.hdl import ClockDomain, Elaboratable, Module
from amaranth.sim import Simulator

from latscope.parser import Events, StreamParser
from latscope.protocol import Source
from latscope_gateware.capture_control import GrayCountCrossing
from latscope_gateware.capture_pipeline import CapturePipeline

from gateware_sim import byte_collector, lost_per_source

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
    dut = CapturePipeline(SOURCES, fifo_depth=fifo_depth, flush_after=1 << 20,
                          capture_domain="capture")
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
                    value = cycle & 0xffff if source == Source.MARKER else rng.getrandbits(width)
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
        ctx.set(dut.stopping, 1)             # STOP: the FIFO drains, the segment is sealed
        idle = 0
        while idle < 400:                    # until the link has been quiet for a while
            before = len(out)
            await ctx.tick()
            idle = idle + 1 if len(out) == before else 0
        status.update(events=ctx.get(dut.events), lost=ctx.get(dut.lost),
                      fifo_max=ctx.get(dut.fifo_max))

    async def slot_sampler(ctx):
        async for _clk, _rst, ready, valid in ctx.tick().sample(dut.bytes.ready,
                                                                   dut.bytes.valid):
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
    parser = StreamParser(latency={})
    events = [(int(stamp), int(source), int(value)) for stamp, source, value in
              Events.concatenate([parser.feed(out), parser.finish()])]
    stats = parser.stats
    assert (stats.segments_bad, stats.holes, stats.bytes_skipped) == (0, 0, 0)
    return events


@pytest.mark.parametrize("ratio, capture_phase, link_phase", CLOCKS)
def test_every_event_crosses_once_in_order(ratio, capture_phase, link_phase):
    applied, out, status, _ = _simulate(ratio, capture_phase, link_phase, seed=int(ratio * 1000),
                                     cycles=3000, rate=0.012, fifo_depth=256, link_every=1)
    events = _parse(out)
    # One entry per cycle, its events in source order: the order the stream must have.
    expected = sorted(applied, key=lambda event: (event[0], event[1]))
    assert len(expected) > 40
    assert events == [(stamp, int(source), value) for stamp, source, value in expected]
    assert status["events"] == len(expected) and status["lost"] == 0


@pytest.mark.parametrize("ratio, capture_phase, link_phase", CLOCKS)
def test_overflow_loss_counts_are_exact(ratio, capture_phase, link_phase):
    applied, out, status, _ = _simulate(ratio, capture_phase, link_phase, seed=int(ratio * 77),
                                     cycles=2500, rate=0.3, fifo_depth=8, link_every=3)
    events = _parse(out)
    lost = lost_per_source(events)
    assert sum(lost.values()) > 0                              # it did overflow
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
    assert status["fifo_max"] == 8               # every block-RAM row (docs/protocol.md)


@pytest.mark.parametrize("ratio, capture_phase, link_phase", CLOCKS[:2])
def test_the_crossing_never_keeps_the_link_waiting(ratio, capture_phase, link_phase):
    """Under overload the link is the only limit: from the first byte until the events stop,
    a byte is offered in every cycle the link takes one. So the event rates a link sustains
    (bench/link_efficiency.py: bytes per event at the UART's rate) hold with two clocks.
    The link takes a byte every 30 link cycles, the shortest of the boards' UARTs (divisor 3,
    10 bits a byte, the iCEBreaker)."""
    _, _, _, slots = _simulate(ratio, capture_phase, link_phase, seed=5, cycles=4000,
                               rate=0.05, fifo_depth=16, link_every=30)
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
    sim.add_clock(ratio * CAPTURE_NS * 1e-9, phase=0.3 * ratio * CAPTURE_NS * 1e-9,
                  domain="sync")
    sim.add_testbench(stepper)
    sim.add_testbench(reader)
    sim.run()
