"""Sub-cycle stamping with DDR input registers (ECP5 boards): half-cycle bits, end to end.

The pins are driven at arbitrary instants between clock edges; the IDDRX1F is simulated by
``IddrModel``. Every stamp, less the latency the IDENTIFY reply states, must name the half
cycle in which the pin changed.
"""

import random

from amaranth.hdl import *
from amaranth.sim import Simulator

from latscope.protocol import Source
from latscope_gateware.appliance import Appliance, ApplianceConfig
from latscope_gateware.ddr_edges import IddrModel, ddr_stamp_latency
from latscope_gateware.edge_channels import EdgeChannels
from latscope_gateware.event_capture import EventCapture
from latscope_gateware.marker_port import MarkerPort
from latscope_gateware.synchronizer import PinChangeDetector

PERIOD_NS = 5.0          # 200 MHz, the ULX3S capture clock
HALF_NS = PERIOD_NS / 2
#: First rising edge of the simulated clock. The time-stamper's counter is 0 in the cycle
#: before it, so stamp units count from one period earlier: that is where half cycle 0 (and,
#: for a single-rate front end, cycle 0) begins.
FIRST_EDGE_NS = PERIOD_NS / 2
ORIGIN_NS = FIRST_EDGE_NS - PERIOD_NS


def _run(dut, testbench):
    sim = Simulator(dut)
    sim.add_clock(PERIOD_NS * 1e-9, phase=FIRST_EDGE_NS * 1e-9)
    sim.add_testbench(testbench)
    sim.run()


def test_detector_flags_the_half_that_first_shows_the_new_level():
    dut = PinChangeDetector(1, ddr=True)
    # (early, late) pairs, one per cycle, and the (changed, half, level) expected `latency`
    # cycles later.
    pairs = [(0, 0), (0, 1), (1, 1), (0, 0), (0, 0), (1, 0), (0, 0), (1, 1), (1, 1)]
    expected = [(0, 0, 0), (1, 1, 1), (0, 0, 1), (1, 0, 0), (0, 0, 0),
                # a pulse inside one cycle (1 in the early sample only) is no change of level
                (0, 1, 0), (0, 0, 0), (1, 0, 1), (0, 0, 1)]
    seen = []

    async def testbench(ctx):
        for early, late in pairs + [(1, 1)] * dut.latency:
            ctx.set(dut.pins, early | late << 1)
            await ctx.tick()
            seen.append((ctx.get(dut.changed), ctx.get(dut.changed) and ctx.get(dut.half),
                         ctx.get(dut.level)))

    _run(dut, testbench)
    got = seen[dut.latency - 1:dut.latency - 1 + len(pairs)]
    assert [(c, h if c else 0, lv) for c, h, lv in got] == \
        [(c, h if c else 0, lv) for c, h, lv in expected]


class _EdgeBench(Elaboratable):
    """Pins -> IDDRX1F model -> DDR edge channels -> time-stamper (stamp_shift 1), or, with
    ``ddr=False``, pins -> single-rate edge channels -> time-stamper, as on the iCE40 boards."""

    def __init__(self, count, ddr=True):
        self.ddr = ddr
        self.pins = Signal(count)
        self.iddr = IddrModel(count) if ddr else None
        self.edges = EdgeChannels(count, ddr=ddr)
        sources = {Source(Source.EDGE0 + n): 1 for n in range(count)}
        self.capture = EventCapture(sources, fifo_depth=64, stamp_shift=int(ddr))
        self.sources = list(sources)
        self.latency = self.edges.stamp_latency

    def elaborate(self, platform):
        m = Module()
        m.submodules.edges = self.edges
        m.submodules.capture = capture = self.capture
        m.d.comb += capture.enable.eq(1)
        if self.ddr:
            m.submodules.iddr = self.iddr
            m.d.comb += [self.iddr.pin.eq(self.pins), self.edges.pins.eq(self.iddr.q),
                         capture.half.eq(self.edges.half)]
        else:
            m.d.comb += self.edges.pins.eq(self.pins)
        for n, source in enumerate(self.sources):
            port = getattr(capture, source.name.lower())
            m.d.comb += [port.valid.eq(self.edges.events[n].valid),
                         port.payload.eq(self.edges.events[n].payload)]
        return m


class _MarkerBench(Elaboratable):
    """Strobe -> IDDRX1F model -> DDR marker port -> time-stamper; the data lines go to the
    port directly (single rate)."""

    def __init__(self):
        self.pins = Signal()
        self.data = Signal(16)
        self.iddr = IddrModel(1)
        self.marker = MarkerPort(ddr=True)
        self.capture = EventCapture({Source.MARKER: 16}, fifo_depth=64, stamp_shift=1)
        self.latency = self.marker.stamp_latency

    def elaborate(self, platform):
        m = Module()
        m.submodules.iddr = self.iddr
        m.submodules.marker = marker = self.marker
        m.submodules.capture = capture = self.capture
        m.d.comb += [
            capture.enable.eq(1),
            self.iddr.pin.eq(self.pins),
            marker.strobe.eq(self.iddr.q),
            marker.data.eq(self.data),
            capture.half.eq(marker.half),
            capture.marker.valid.eq(marker.events.valid),
            capture.marker.payload.eq(marker.events.payload),
        ]
        return m


def _drive_and_collect(bench, changes, stop_ns):
    """Applies ``changes`` [(time ns, pin mask)] to the pins (and, for a marker bench, the
    change's number, from 1, to the data lines at the same instant) and returns the FIFO
    entries as (stamp, present bits, values)."""
    entries = []

    async def driver(ctx):
        now = 0.0
        level = 0
        for number, (at, mask) in enumerate(changes, 1):
            await ctx.delay((at - now) * 1e-9)
            now = at
            level ^= mask
            ctx.set(bench.pins, level)
            if hasattr(bench, "data"):
                ctx.set(bench.data, number)
        await ctx.delay((stop_ns - now) * 1e-9)

    async def reader(ctx):
        ctx.set(bench.capture.entries.ready, 1)
        async for _clk, _rst, valid, payload in ctx.tick().sample(
                bench.capture.entries.valid, bench.capture.entries.payload):
            if valid:
                entries.append((payload.stamp, payload.present.as_value().value,
                                payload.value.as_value().value))

    sim = Simulator(bench)
    sim.add_clock(PERIOD_NS * 1e-9, phase=FIRST_EDGE_NS * 1e-9)
    sim.add_testbench(driver)
    sim.add_process(reader)
    sim.run_until(stop_ns * 1e-9)
    return entries


def _random_changes(seed, count=60):
    """Edge instants several cycles apart (one event per cycle at most), none within 50 ps of
    a sampling instant (the order of a pin change and a clock edge at one instant is a race)."""
    rng = random.Random(seed)
    changes, at = [], 20.0
    for _ in range(count):
        at += rng.choice([3, 4, 5, 7]) * PERIOD_NS + rng.uniform(0.1, PERIOD_NS - 0.1)
        offset = (at - ORIGIN_NS) / HALF_NS
        if abs(offset - round(offset)) < 0.02:
            at += 0.3
        changes.append((at, 1))
    return changes


def test_edge_stamps_name_the_half_cycle_of_the_change():
    """Edges at random instants on one pin: stamp - latency = the half cycle of the edge."""
    changes = _random_changes(6)
    bench = _EdgeBench(1)
    entries = _drive_and_collect(bench, changes, changes[-1][0] + 20 * PERIOD_NS)
    assert len(entries) == len(changes)
    for (time_ns, _), (stamp, present, value) in zip(changes, entries):
        half_cycle = int((time_ns - ORIGIN_NS) // HALF_NS)
        assert stamp - bench.latency == half_cycle, (time_ns, stamp)
    # Both halves occur, so the half bit is really exercised.
    assert {stamp & 1 for stamp, _, _ in entries} == {0, 1}
    # Levels alternate: 1, 0, 1, ...
    assert [value for _, _, value in entries] == [(n + 1) % 2 for n in range(len(changes))]


def test_marker_stamps_name_the_half_cycle_of_the_strobe_edge():
    """The DDR marker port: stamp - latency = the half cycle of each strobe edge, and the data
    that changed with the strobe is the payload."""
    changes = _random_changes(8)
    bench = _MarkerBench()
    entries = _drive_and_collect(bench, changes, changes[-1][0] + 20 * PERIOD_NS)
    assert len(entries) == len(changes)
    for number, ((time_ns, _), (stamp, _, value)) in enumerate(zip(changes, entries), 1):
        assert stamp - bench.latency == int((time_ns - ORIGIN_NS) // HALF_NS), (time_ns, stamp)
        assert value == number
    assert {stamp & 1 for stamp, _, _ in entries} == {0, 1}


def test_ddr_and_single_rate_stamps_share_one_time_base():
    """The same edges through the single-rate front end: its corrected stamps (cycles) are the
    DDR ones (half cycles) halved, so DDR sources line up with the IRQ output's stamps."""
    changes = _random_changes(7)
    stop = changes[-1][0] + 20 * PERIOD_NS
    ddr_bench, plain_bench = _EdgeBench(1), _EdgeBench(1, ddr=False)
    ddr = [stamp - ddr_bench.latency for stamp, _, _ in
           _drive_and_collect(ddr_bench, changes, stop)]
    plain = [stamp - plain_bench.latency for stamp, _, _ in
             _drive_and_collect(plain_bench, changes, stop)]
    assert len(ddr) == len(plain) == len(changes)
    assert plain == [stamp // 2 for stamp in ddr]


def test_simultaneous_edges_share_the_earlier_half():
    """Two pins change in the two halves of one sample pair: one entry, stamped at the earlier
    half (the later event is rounded down by half a cycle, to the single-rate resolution)."""
    bench = _EdgeBench(2)
    # A pair holds half cycles 2c - 3 and 2c - 2: 21 (50..52.5 ns) and 22 (52.5..55 ns).
    entries = _drive_and_collect(bench, [(51.0, 1), (53.5, 2)], 120.0)
    assert len(entries) == 1
    stamp, present, _ = entries[0]
    assert present == 0b11
    assert stamp - bench.latency == 21


def test_appliance_reports_half_cycle_stamps_and_latencies():
    """The IDENTIFY reply of a DDR build says stamp_shift 1 and latencies in half cycles;
    a single-rate build is unchanged."""
    ddr = Appliance(ApplianceConfig(clock_hz=200_000_000, uart_divisor=100, ddr_inputs=True))
    plain = Appliance(ApplianceConfig(clock_hz=200_000_000, uart_divisor=100))
    reply, plain_reply = ddr.identify(), plain.identify()
    assert reply.stamp_shift == 1 and plain_reply.stamp_shift == 0
    assert reply.edge_latency == ddr_stamp_latency(2) == 7
    assert reply.marker_latency == ddr_stamp_latency(2 + 2) == 11
    assert reply.irq_latency == 2 * plain_reply.irq_latency
    assert plain_reply.edge_latency == 2 and plain_reply.marker_latency == 4
    # A DDR build takes a sample pair per strobe and edge pin, a single-rate build one sample.
    assert len(ddr.edges) == 2 * len(plain.edges) == 2 * 4
    assert len(ddr.marker_strobe) == 2 and len(plain.marker_strobe) == 1
    for build in (ddr, plain):          # and both elaborate
        Fragment.get(build, None)
