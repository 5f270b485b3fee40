"""Sub-cycle stamping with multi-phase input registers, end to end: DDR (2 samples a cycle,
IDDRX1F or SB_IO) and the IDDRX2F gearbox (4 samples a cycle, the ULX3S).

The pins are driven at arbitrary instants between sampling instants; the input registers are
simulated by ``IddrModel`` (for 4 phases on an edge clock at twice the capture clock, as the
ECP5's ECLK). Every stamp, less the latency the IDENTIFY reply states, must name the slot
(1/2 or 1/4 cycle) in which the pin changed, computed here from the instant alone.
"""

import random

import pytest
from amaranth.hdl import *
from amaranth.sim import Simulator

from latscope_defs.protocol import Source
from latscope_gateware.appliance import Appliance, ApplianceConfig
from latscope_gateware.ddr_edges import IddrModel, ddr_stamp_latency, sampled_stamp_latency
from latscope_gateware.edge_channels import EdgeChannels
from latscope_gateware.event_capture import EventCapture
from latscope_gateware.marker_port import MarkerPort
from latscope_gateware.synchronizer import PinChangeDetector

PERIOD_NS = 5.0  # 200 MHz, the ULX3S capture clock
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


def _clock(sim, phases):
    """The capture clock and, for 4 phases, the edge clock: twice as fast, rising with it."""
    sim.add_clock(PERIOD_NS * 1e-9, phase=FIRST_EDGE_NS * 1e-9)
    if phases == 4:
        sim.add_clock(PERIOD_NS / 2 * 1e-9, phase=FIRST_EDGE_NS * 1e-9, domain="eclk")


def test_detector_flags_the_half_that_first_shows_the_new_level():
    dut = PinChangeDetector(1, phases=2)
    # (early, late) pairs, one per cycle, and the (changed, half, level) expected `latency`
    # cycles later.
    pairs = [(0, 0), (0, 1), (1, 1), (0, 0), (0, 0), (1, 0), (0, 0), (1, 1), (1, 1)]
    expected = [
        (0, 0, 0),
        (1, 1, 1),
        (0, 0, 1),
        (1, 0, 0),
        (0, 0, 0),
        # a pulse inside one cycle (1 in the early sample only) is no change of level
        (0, 1, 0),
        (0, 0, 0),
        (1, 0, 1),
        (0, 0, 1),
    ]
    seen = []

    async def testbench(ctx):
        for early, late in pairs + [(1, 1)] * dut.latency:
            ctx.set(dut.pins, early | late << 1)
            await ctx.tick()
            seen.append(
                (
                    ctx.get(dut.changed),
                    ctx.get(dut.changed) and ctx.get(dut.phase[0]),
                    ctx.get(dut.level),
                )
            )

    _run(dut, testbench)
    got = seen[dut.latency - 1 : dut.latency - 1 + len(pairs)]
    assert [(c, h if c else 0, lv) for c, h, lv in got] == [
        (c, h if c else 0, lv) for c, h, lv in expected
    ]


def test_detector_flags_the_first_of_four_samples_that_shows_the_new_level():
    """The gearbox's four samples a cycle: the phase is the first sample that differs from the
    previous cycle's level (the last sample of the previous cycle)."""
    dut = PinChangeDetector(1, phases=4)
    # (s0, s1, s2, s3) per cycle, and the (changed, phase, level) expected.
    words = [
        (0, 0, 0, 0),
        (1, 1, 1, 1),
        (1, 1, 1, 1),
        (0, 0, 0, 0),
        (0, 1, 1, 1),
        (0, 0, 0, 0),
        (0, 0, 1, 1),
        (1, 1, 1, 0),
        (0, 0, 0, 1),
        (1, 0, 0, 0),
        # a pulse within a cycle is no change; several changes in a cycle are one,
        # at the first sample that differs
        (0, 1, 1, 0),
        (1, 0, 1, 1),
        (1, 1, 1, 1),
    ]
    expected = [
        (0, 0, 0),
        (1, 0, 1),
        (0, 0, 1),
        (1, 0, 0),
        (1, 1, 1),
        (1, 0, 0),
        (1, 2, 1),
        (1, 3, 0),
        (1, 3, 1),
        (1, 1, 0),
        (0, 0, 0),
        (1, 0, 1),
        (0, 0, 1),
    ]
    seen = []

    async def testbench(ctx):
        for word in words + [(1, 1, 1, 1)] * dut.latency:
            ctx.set(dut.pins, sum(bit << k for k, bit in enumerate(word)))
            await ctx.tick()
            changed = ctx.get(dut.changed)
            seen.append((changed, ctx.get(dut.phase[0]) if changed else 0, ctx.get(dut.level)))

    _run(dut, testbench)
    assert seen[dut.latency - 1 : dut.latency - 1 + len(words)] == expected


class _EdgeBench(Elaboratable):
    """Pins -> input register model -> edge channels -> time-stamper, with ``phases`` samples
    a cycle (2: IDDRX1F, stamp_shift 1; 4: IDDRX2F, stamp_shift 2), or with ``phases`` 1,
    pins -> single-rate edge channels -> time-stamper, as on the iCE40 boards."""

    def __init__(self, count, phases=2):
        self.phases = phases
        self.pins = Signal(count)
        self.iddr = IddrModel(count, phases) if phases > 1 else None
        self.edges = EdgeChannels(count, phases=phases)
        sources = {Source(Source.EDGE0 + n): 1 for n in range(count)}
        self.capture = EventCapture(sources, fifo_depth=64, stamp_shift=phases.bit_length() - 1)
        self.sources = list(sources)
        self.latency = self.edges.stamp_latency

    def elaborate(self, platform):
        m = Module()
        m.submodules.edges = self.edges
        m.submodules.capture = capture = self.capture
        m.d.comb += capture.enable.eq(1)
        if self.phases == 4:
            m.domains.eclk = ClockDomain("eclk", reset_less=True)
        if self.iddr is not None:
            m.submodules.iddr = self.iddr
            m.d.comb += [
                self.iddr.pin.eq(self.pins),
                self.edges.pins.eq(self.iddr.q),
                capture.phase.eq(self.edges.phase),
            ]
        else:
            m.d.comb += self.edges.pins.eq(self.pins)
        for n, source in enumerate(self.sources):
            port = getattr(capture, source.name.lower())
            m.d.comb += [
                port.valid.eq(self.edges.events[n].valid),
                port.payload.eq(self.edges.events[n].payload),
            ]
        return m


class _MarkerBench(Elaboratable):
    """Strobe -> input register model (``phases`` samples a cycle) -> marker port ->
    time-stamper; the data lines go to the port directly (single rate)."""

    def __init__(self, phases=2):
        self.phases = phases
        self.pins = Signal()
        self.data = Signal(16)
        self.iddr = IddrModel(1, phases)
        self.marker = MarkerPort(phases=phases)
        self.capture = EventCapture(
            {Source.MARKER: 16}, fifo_depth=64, stamp_shift=phases.bit_length() - 1
        )
        self.latency = self.marker.stamp_latency

    def elaborate(self, platform):
        m = Module()
        if self.phases == 4:
            m.domains.eclk = ClockDomain("eclk", reset_less=True)
        m.submodules.iddr = self.iddr
        m.submodules.marker = marker = self.marker
        m.submodules.capture = capture = self.capture
        m.d.comb += [
            capture.enable.eq(1),
            self.iddr.pin.eq(self.pins),
            marker.strobe.eq(self.iddr.q),
            marker.data.eq(self.data),
            capture.phase[0].eq(marker.phase),
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
            bench.capture.entries.valid, bench.capture.entries.payload
        ):
            if valid:
                entries.append(
                    (
                        payload.stamp,
                        payload.present.as_value().value,
                        payload.value.as_value().value,
                    )
                )

    sim = Simulator(bench)
    _clock(sim, getattr(bench, "phases", 1))
    sim.add_testbench(driver)
    sim.add_process(reader)
    sim.run_until(stop_ns * 1e-9)
    return entries


def _random_changes(seed, count=60):
    """Edge instants several cycles apart (one event per cycle at most), none within 50 ps of
    a sampling instant, an eighth of a cycle apart (the order of a pin change and a clock edge
    at one instant is a race)."""
    rng = random.Random(seed)
    changes, at = [], 20.0
    eighth = PERIOD_NS / 8
    for _ in range(count):
        at += rng.choice([3, 4, 5, 7]) * PERIOD_NS + rng.uniform(0.1, PERIOD_NS - 0.1)
        offset = (at - ORIGIN_NS) / eighth
        if abs(offset - round(offset)) < 0.1:
            at += 0.15
        changes.append((at, 1))
    return changes


def _slot(time_ns, phases):
    """The slot (1/``phases`` cycle from the origin) an instant falls in: the independent
    expectation of ``stamp - latency``."""
    return int((time_ns - ORIGIN_NS) // (PERIOD_NS / phases))


@pytest.mark.parametrize("phases", [2, 4])
def test_edge_stamps_name_the_slot_of_the_change(phases):
    """Edges at random instants on one pin: stamp - latency = the half or quarter cycle of
    the edge, and every phase occurs."""
    changes = _random_changes(6)
    bench = _EdgeBench(1, phases)
    entries = _drive_and_collect(bench, changes, changes[-1][0] + 20 * PERIOD_NS)
    assert len(entries) == len(changes)
    for (time_ns, _), (stamp, _, _) in zip(changes, entries):
        assert stamp - bench.latency == _slot(time_ns, phases), (time_ns, stamp)
    # Every phase occurs, so each sample's path is really exercised.
    assert {stamp % phases for stamp, _, _ in entries} == set(range(phases))
    # Levels alternate: 1, 0, 1, ...
    assert [value for _, _, value in entries] == [(n + 1) % 2 for n in range(len(changes))]


@pytest.mark.parametrize("phases", [2, 4])
def test_marker_stamps_name_the_slot_of_the_strobe_edge(phases):
    """The marker port: stamp - latency = the half or quarter cycle of each strobe edge, and
    the data that changed with the strobe is the payload."""
    changes = _random_changes(8)
    bench = _MarkerBench(phases)
    entries = _drive_and_collect(bench, changes, changes[-1][0] + 20 * PERIOD_NS)
    assert len(entries) == len(changes)
    for number, ((time_ns, _), (stamp, _, value)) in enumerate(zip(changes, entries), 1):
        assert stamp - bench.latency == _slot(time_ns, phases), (time_ns, stamp)
        assert value == number
    assert {stamp % phases for stamp, _, _ in entries} == set(range(phases))


def test_all_sample_rates_share_one_time_base():
    """The same edges through the single-rate, DDR and gearbox front ends: their corrected
    stamps (cycles, half cycles, quarter cycles) agree, so every source lines up with the
    IRQ output's stamps whatever the board."""
    changes = _random_changes(7)
    stop = changes[-1][0] + 20 * PERIOD_NS
    corrected = {}
    for phases in (1, 2, 4):
        bench = _EdgeBench(1, phases)
        corrected[phases] = [
            stamp - bench.latency for stamp, _, _ in _drive_and_collect(bench, changes, stop)
        ]
        assert len(corrected[phases]) == len(changes)
    assert corrected[1] == [stamp // 4 for stamp in corrected[4]]
    assert corrected[2] == [stamp // 2 for stamp in corrected[4]]


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


@pytest.mark.parametrize("quarters", [(3, 1, 2), (2, 3, 1), (1, 2, 0), (3, 3, 2)])
def test_simultaneous_edges_share_the_earliest_quarter(quarters):
    """Three pins change in quarters of one sample word (the gearbox's four samples): one
    entry, stamped at the earliest quarter, whichever pin (source) it came from."""
    bench = _EdgeBench(3, phases=4)
    # The word of cycle c holds quarters 4c - 5 .. 4c - 2: for c = 12, 43..46, which begin
    # at ORIGIN + 43 * 1.25 ns = 51.25 ns.
    base = ORIGIN_NS + 43 * PERIOD_NS / 4
    changes = [
        (base + (quarter + 0.5) * PERIOD_NS / 4, 1 << pin) for pin, quarter in enumerate(quarters)
    ]
    entries = _drive_and_collect(bench, sorted(changes), 120.0)
    assert len(entries) == 1
    stamp, present, _ = entries[0]
    assert present == 0b111
    assert stamp - bench.latency == 43 + min(quarters)


def test_entry_stamp_takes_the_earliest_phase_of_its_events():
    """The time-stamper alone, stamp_shift 2: random events with random phases on six
    sources; each entry's stamp is the cycle's count with the smallest phase of the events
    present in it (computed here from the inputs)."""
    sources = {
        Source.MARKER: 16,
        Source.IRQ: 1,
        Source.EDGE0: 1,
        Source.EDGE1: 1,
        Source.EDGE2: 1,
        Source.EDGE3: 1,
    }
    dut = EventCapture(sources, fifo_depth=64, stamp_shift=2)
    ports = [getattr(dut, source.name.lower()) for source in sources]
    rng = random.Random(3)
    # (Events in every third cycle: the FIFO and its reader keep up without losses.)
    cycles = [
        [(n % 3 == 0 and rng.random() < 0.4, rng.randrange(4)) for _ in sources] for n in range(600)
    ]
    got = []

    async def driver(ctx):
        ctx.set(dut.enable, 1)
        for cycle in cycles:
            for index, (valid, phase) in enumerate(cycle):
                ctx.set(ports[index].valid, valid)
                ctx.set(dut.phase[index], phase)
            await ctx.tick()
        for port in ports:
            ctx.set(port.valid, 0)
        await ctx.tick().repeat(20)

    async def reader(ctx):
        ctx.set(dut.entries.ready, 1)
        async for _clk, _rst, valid, payload in ctx.tick().sample(
            dut.entries.valid, dut.entries.payload
        ):
            if valid:
                got.append(payload.stamp)

    sim = Simulator(dut)
    sim.add_clock(PERIOD_NS * 1e-9)
    sim.add_testbench(driver)
    sim.add_process(reader)
    sim.run_until((len(cycles) + 40) * PERIOD_NS * 1e-9)
    expected = [
        min(phase for valid, phase in cycle if valid)
        for cycle in cycles
        if any(valid for valid, _ in cycle)
    ]
    assert len(got) == len(expected)
    assert [stamp % 4 for stamp in got] == expected
    # Stamps grow by whole cycles between entries (the cycle count above the phase).
    assert all(later >> 2 > earlier >> 2 for earlier, later in zip(got, got[1:]))


@pytest.mark.parametrize("phases, shift", [(2, 1), (4, 2)])
def test_appliance_reports_sub_cycle_stamps_and_latencies(phases, shift):
    """The IDENTIFY reply of a DDR (gearbox) build says stamp_shift 1 (2) and latencies in
    half (quarter) cycles; a single-rate build is unchanged."""
    sampled = Appliance(
        ApplianceConfig(clock_hz=200_000_000, uart_divisor=100, input_phases=phases)
    )
    plain = Appliance(ApplianceConfig(clock_hz=200_000_000, uart_divisor=100))
    reply, plain_reply = sampled.identify(), plain.identify()
    assert reply.stamp_shift == shift and plain_reply.stamp_shift == 0
    # Events 2 (edges) and 2 + 2 (markers) cycles after the samples are presented; the
    # input register adds phases + 1 units.
    assert reply.edge_latency == sampled_stamp_latency(2, phases) == 2 * phases + phases + 1
    assert reply.marker_latency == sampled_stamp_latency(4, phases) == 4 * phases + phases + 1
    # The IRQ output changes on the rising clock edge: whole cycles, phase 0.
    assert reply.irq_latency == phases * plain_reply.irq_latency
    assert plain_reply.edge_latency == 2 and plain_reply.marker_latency == 4
    # Each strobe and edge pin comes as its samples of a cycle.
    assert len(sampled.edges) == phases * len(plain.edges) == phases * 4
    assert len(sampled.marker_strobe) == phases and len(plain.marker_strobe) == 1
    for build in (sampled, plain):  # and both elaborate
        Fragment.get(build, None)


def test_ddr_inputs_is_two_phases():
    config = ApplianceConfig(clock_hz=200_000_000, uart_divisor=100, ddr_inputs=True)
    assert config.input_phases == 2
    assert Appliance(config).identify().edge_latency == ddr_stamp_latency(2) == 7
    with pytest.raises(ValueError, match="input phases must be one of"):
        ApplianceConfig(clock_hz=200_000_000, uart_divisor=100, input_phases=3)
