"""The shipped netlist, simulated: each board's post-synthesis netlist (the Yosys output
nextpnr places, with the cell models Yosys ships, plus latscope's models of the ECP5 cells
Yosys ships only as black boxes; the PLLs bypassed by the testbench's clocks) runs one
scripted session end to end, under Verilator (``LATSCOPE_NETLIST_SIM=icarus``: Icarus).

A scripted DUT drives the board's pins at known times: markers and edge-channel changes in
every half of a clock cycle (DDR half-cycle stamps; every quarter with the HX8K's and the
ULX3S's 1:4 gearboxes), the IRQ generator runs, and a burst of edges overruns the event FIFO.
The host commands go into the UART RX pin bit by bit; the bytes of the UART TX pin are
decoded from the testbench's log and given to the host's parser. The host must see exactly
the scripted events, at exactly the scripted half (quarter) cycles (one time origin for every
source, after the pin latencies of the IDENTIFY reply), and every event of the burst either
delivered exactly or counted in a LOSS record.

The loopback test runs the self-test's jumper (IRQ output to EDGE0 and the strobe) on the
same compiled netlist, judged by the host's own ``selftest.loopback_result``. The trigger test
fires the IRQ at a sweep of delays after scripted markers (issue 26): each edge at the pin
exactly its delay and the documented latency after its marker, to the stamp unit.

Cost per board (measured, docs/tests.md): Yosys 12-15 s (the board's synthesis of the run,
the ``synthesized`` fixture, shared with its bitstream test), Verilator's compile 65-90 s,
the simulations seconds.
"""

import os
import random
from dataclasses import dataclass

import numpy as np
import pytest

from latscope.events import Events
from latscope.link.device import IrqSettings, TriggerSettings
from latscope.link.identity import Identity
from latscope.link.parser import StreamParser
from latscope.link.selftest import (
    EXPECTED_SAMPLE,
    LOOPBACK_IRQ,
    clock_phase_result,
    format_results,
    loopback_result,
)
from latscope_boards import BOARDS as ALL_BOARDS
from latscope_boards import recorded_builds
from latscope_boards.clocking import POWER_ON_RESET_SECONDS
from latscope_boards.netlist_sim import (
    SIMULATORS,
    Stimulus,
    clock_periods_ps,
    compile_netlist,
    decode_uart,
)
from latscope_defs.markers import Point, Test, encode
from latscope_defs.protocol import (
    GATEWARE_VERSION,
    MAX_CONT,
    Command,
    Source,
    StartArgs,
    StatusReply,
    encode_command,
    event_payload,
    fixed_length,
    irq_delay,
    irq_level,
    irq_triggered,
    memory_bus_write,
    record_length,
    reply_sizes,
)

pytestmark = pytest.mark.netlist

#: The IRQ generator's settings for a link of 6 or fewer capture cycles a UART bit; slower
#: links get a proportionally longer period (``Script.pace``).
IRQ = IrqSettings(period=1500, jitter_mask=0x3F, width=40)
BURST_EXTRA = 400  # cycles of EDGE1 burst beyond the FIFO's depth


def crystal_hz(board):
    """The frequency of the board's crystal (the platform's default clock), the PLL's input."""
    platform = board.platform()
    return int(platform.lookup(platform.default_clk).clock.frequency)


class Timing:
    """The testbench's clock periods (capture clock ``P``, link clock ``link``), the stamp
    unit (``UNIT``: the time between sampling edges, half a capture cycle with DDR inputs, a
    quarter with a gearbox, whose edge clock the testbench drives: the capture clock is its
    half, from the ULX3S's CLKDIVF or the HX8K's PLL) and the pin change times within a
    capture cycle: the middle of each stamp unit (``OFFSETS``; with DDR inputs a quarter
    cycle before and after the rising edge)."""

    def __init__(self, board):
        self.phases = board.sample_phases
        self.shift = self.phases.bit_length() - 1
        if board.edge_clock_hz:
            eclk, self.link = clock_periods_ps([board.edge_clock_hz, board.link_clock_hz])
            self.P = eclk * board.edge_clock_hz // board.clock_hz
        else:
            self.P, self.link = clock_periods_ps([board.clock_hz, board.link_clock_hz])
        self.UNIT = self.P // self.phases
        self.OFFSETS = [(2 * k + 1) * self.UNIT // 2 for k in range(self.phases)]


class Script:
    """The DUT's pin changes and the host's commands, with the truth log."""

    def __init__(self, board):
        self.board = board
        self.t = Timing(board)
        # The UART runs on the link clock: uart_divisor link cycles a bit.
        self.bit_ps = board.uart_divisor * self.t.link
        self.stimulus = Stimulus()
        self.truth = []  # (time of the pin change, Source, value)
        self.strobe = 1
        self.levels = {n: 1 for n in range(4)}
        # How much slower than 6 capture cycles a bit the link is (1 on the HX8K and the
        # iCEBreaker, 10 on the ULX3S's 2 Mbaud): the script spaces its events and the IRQ
        # period by it, so that the IRQ's edges never take more of the link than it drains
        # (else no event could find room in the FIFO after the overflow).
        self.pace = max(1, self.bit_ps // (6 * self.t.P))
        self.irq = IrqSettings(
            period=IRQ.period * self.pace, jitter_mask=IRQ.jitter_mask, width=IRQ.width
        )

    def command(self, cycle, opcode, args=None):
        """Sends a command from ``cycle``; returns the cycle after its last bit."""
        P = self.t.P
        return self.stimulus.uart(cycle * P, encode_command(opcode, args), self.bit_ps) // P + 1

    def irq_interval_cycles(self, irq):
        """Capture cycles of the longest interval of ``irq``, whose settings count link
        cycles (docs/protocol.md, IRQ_CONFIG)."""
        return (irq.period + irq.jitter_mask + 1) * self.t.link // self.t.P

    def reply_cycles(self, size):
        """Capture cycles a reply of ``size`` bytes takes on the link, with a margin."""
        return size * 10 * self.bit_ps // self.t.P + 300

    def run_end(self, stopped, queued_bytes):
        """The cycle the netlist run may last to: STOP's last bit at ``stopped``, then the
        link's time for ``queued_bytes`` bytes the device may still have to send, and for
        STATUS's reply. (The run ends earlier, once the UART has been idle: netlist_sim.)"""
        return stopped + self.reply_cycles(queued_bytes) + 100_000

    def marker(self, time, value):
        for bit in range(16):
            self.stimulus.set(time, f"D{bit}", (value >> bit) & 1)
        self.strobe ^= 1
        self.stimulus.set(time, "STROBE", self.strobe)
        self.truth.append((time, Source.MARKER, value))

    def edge(self, time, channel):
        self.levels[channel] ^= 1
        self.stimulus.set(time, f"EDGE{channel}", self.levels[channel])
        self.truth.append((time, Source(Source.EDGE0 + channel), self.levels[channel]))


def scripted_session(board):
    """The script; returns it and the cycles where the capture starts, the burst starts and
    STOP's last bit ends."""
    script = Script(board)
    P, offsets = script.t.P, script.t.OFFSETS
    phases = len(offsets)
    rng = random.Random(12)
    # Like the host, each command waits for the previous one's reply (bytes that come during
    # a reply are ignored, and a zero byte among them would even switch to SUMP mode).
    # The first command once the power-on reset is over.
    cycle = script.command(round(POWER_ON_RESET_SECONDS * board.clock_hz) + 500, Command.IDENTIFY)
    cycle = script.command(cycle + script.reply_cycles(80), Command.IRQ_CONFIG, script.irq.encode())
    cycle = script.command(
        cycle + script.reply_cycles(16), Command.START, StartArgs.const({"sources": 0xFFFF})
    )
    started = cycle
    # Before the overflow: markers and edges in every half (quarter) of their cycles, never
    # two sources in one cycle (events of one cycle share one stamp, the earliest phase's).
    # Each edge channel's six changes take the quarters 1, 2, 3, 0, 1, 2 (halves 1, 0, ...).
    cycle += 200
    for n in range(24):
        script.marker(cycle * P + offsets[n % phases], rng.randrange(1 << 16))
        cycle += rng.randrange(40, 160) * script.pace
        script.edge(cycle * P + offsets[(n // 4 + 1) % phases], n % 4)
        cycle += rng.randrange(40, 160) * script.pace
    # Overflow: EDGE1 changes every cycle, in turn in each phase, for more cycles than the FIFO
    # has entries; then markers while the FIFO drains (some find it full: they are lost and
    # counted, like the IRQ's edges then).
    # (At least three IRQ periods before it: six IRQ changes at the least.)
    cycle = max(cycle, started + 3 * script.irq_interval_cycles(script.irq)) + 300
    burst = cycle
    burst_cycles = board.fifo_depth + BURST_EXTRA
    for n in range(burst_cycles):
        script.edge((cycle + n) * P + offsets[n % phases], 1)
    cycle += burst_cycles + 500
    # (Apart by the link's time for 32 bytes, some eight entries, at least 700 cycles: a write
    # needs four free entries, so each later marker finds room.)
    gap = max(700, 320 * script.bit_ps // P)
    for n in range(6):
        script.marker(cycle * P + offsets[n % phases], rng.randrange(1 << 16))
        cycle += gap
    # (STOP is sent where the IRQ output does not change: see Session.expected.) STATUS once
    # the device is idle, the FIFO drained (docs/protocol.md: its `lost` is then the LOSS
    # records' sum): the full FIFO at 2 bytes an entry (measured: 1.3 on the ULX3S).
    stopped = script.command(cycle + 800, Command.STOP)
    script.command(stopped + script.reply_cycles(2 * board.fifo_depth), Command.STATUS)
    return script, (started, burst, stopped)


#: Simulator of the netlist runs (netlist_sim.SIMULATORS).
SIMULATOR = os.environ.get("LATSCOPE_NETLIST_SIM", SIMULATORS[0])
#: Builds whose netlists run, by record name (all boards as shipped by default;
#: LATSCOPE_NETLIST_BOARDS=name,name to choose, among them the variants of BY_CHOICE and
#: the memory bus builds, MEMBUS_BUILDS).
BOARDS = os.environ.get("LATSCOPE_NETLIST_BOARDS", ",".join(ALL_BOARDS)).split(",")
#: The board of each recorded build, by record name.
BUILDS = dict(recorded_builds())
#: Variants whose netlists only the clock-phase tests run, and only when LATSCOPE_NETLIST_BOARDS
#: names them: the iCEBreaker's bring-up build (the only one with the probe on the UP5K) costs
#: its own synthesis and Verilator compile, over a minute (docs/tests.md), which CI does
#: not spend on a bitstream it does not build.
BY_CHOICE = ("icebreaker-bringup",)
#: The boards as shipped among BOARDS: every netlist test's.
SHIPPED = [board for board in BOARDS if board in ALL_BOARDS]


@dataclass
class Compiled:
    board: object
    netlist: object  # netlist_sim.CompiledNetlist


@pytest.fixture(scope="session")
def netlists(tmp_path_factory, synthesized):
    """Each build's netlist compiled once a run, by record name: a function of the name."""
    done = {}

    def compiled_build(record):
        if record not in done:
            board = BUILDS[record]
            result = compile_netlist(
                synthesized(record).netlist,
                tmp_path_factory.mktemp("netlist_sim"),
                crystal_hz=crystal_hz(board),
                family=board.family,
                simulator=SIMULATOR,
            )
            # The PLLs' parameters in the netlist give the board's capture (or edge) and link
            # clocks.
            assert {clock.hz for clock in result.clocks} == {
                board.edge_clock_hz or board.clock_hz,
                board.link_clock_hz,
            }
            done[record] = Compiled(board, result)
        return done[record]

    return compiled_build


@pytest.fixture(scope="module", params=SHIPPED)
def compiled(request, netlists):
    """The board's netlist, compiled once for the session and the loopback tests."""
    return netlists(request.param)


def simulate(compiled, script, run_dir, end_cycles, loopback=False, clock_delays=None):
    """Runs the script on the netlist; (bytes of the UART TX pin, the pin log)."""
    P = script.t.P
    result = compiled.netlist.run(
        script.stimulus,
        run_dir,
        end_ps=end_cycles * P,
        quiet_ps=3000 * P,
        loopback=loopback,
        clock_delays=clock_delays,
    )
    return decode_uart(result.log, script.bit_ps), result.log


def parse(received):
    """(identity, events, parser) of the bytes, with the identity of their IDENTIFY reply."""
    probe = StreamParser(version=GATEWARE_VERSION)
    probe.feed(received)
    identity = Identity.from_reply(dict(probe.replies)[Command.IDENTIFY])
    parser = identity.parser()
    events = Events.concatenate([parser.feed(received), parser.finish()])
    return identity, events, parser


@pytest.fixture(scope="module")
def session(compiled, tmp_path_factory):
    board = compiled.board
    script, marks = scripted_session(board)
    # Long enough for STATUS after the drain (the run ends once the UART has been idle).
    end_cycles = script.run_end(marks[2], 4 * board.fifo_depth)
    received, log = simulate(compiled, script, tmp_path_factory.mktemp("session"), end_cycles)
    identity, events, parser = parse(received)
    status = StatusReply.from_bits(int.from_bytes(dict(parser.replies)[Command.STATUS], "little"))
    # The IRQ output's changes, as the testbench saw them, are scripted events too.
    irq_pin = [(time, Source.IRQ, level) for time, pin, level in log if pin == "I"]
    timing = script.t
    origin = sample_index(script.truth[0][0], timing.UNIT) - delivered(events, Source.MARKER)[0][0]
    truth = sorted(script.truth + irq_pin, key=lambda change: change[0])
    return Session(
        board,
        timing,
        identity,
        events,
        parser.stats,
        status,
        entry_stamps(truth, origin, identity.latency, timing),
        marks,
        origin,
    )


def sample_index(time, unit):
    """Index of the first sampling edge after ``time``: what a DDR input register (a rising or
    falling capture clock edge) or the gearbox (a rising or falling edge clock edge) samples
    it on. Sampling edges are at every multiple of ``unit`` (the stamp unit)."""
    return time // unit + 1


def entry_stamps(truth, origin, latency, timing):
    """(time, source, value, stamp) of each scripted change: stamped with the first sampling
    edge after it (``sample_index``; the IRQ output, which changes on rising capture clock
    edges, with the next sampling edge, as an input wired to it would sample it), less
    ``origin``. Changes that reach the time-stamper in the same cycle (after their pin
    latencies) share one FIFO entry, whose stamp is the earliest phase of theirs
    (docs/protocol.md); e.g. an IRQ edge with an edge-channel change later in the same
    cycle."""
    shift = timing.shift
    raw = [sample_index(time, timing.UNIT) - origin + latency[source] for time, source, _ in truth]
    earliest = {}
    for stamp in raw:
        earliest[stamp >> shift] = min(earliest.get(stamp >> shift, stamp), stamp)
    return [
        (time, source, value, earliest[stamp >> shift] - latency[source])
        for (time, source, value), stamp in zip(truth, raw)
    ]


@dataclass
class Session:
    board: object
    timing: Timing
    identity: object
    events: object
    stats: object
    status: object
    truth: list  # (time of the pin change, Source, value, stamp), the IRQ's too
    marks: tuple  # cycles: capture started, burst started, STOP sent
    origin: int  # sample_index() of stamp 0: fixed by the first marker

    def expected(self, source, first_cycle, last_cycle):
        """(stamp, value) of the scripted changes of ``source`` stamped between the cycles.
        A change is stamped with the first sampling edge after it (the IRQ output, which
        changes on rising capture clock edges, with the next one). Where the capture starts or
        stops, no change may fall within 16 cycles: the command's exact cycle is not known
        from outside."""
        changes = [
            (time, value, stamp) for time, name, value, stamp in self.truth if name == source
        ]
        P = self.timing.P
        for edge in {first_cycle, last_cycle} & {self.marks[0], self.marks[2]}:
            assert not any(abs(time - edge * P) < 16 * P for time, _, _ in changes), source
        first, last = self._window(first_cycle, last_cycle)
        return [(stamp, value) for _, value, stamp in changes if first <= stamp < last]

    def _window(self, first_cycle, last_cycle):
        return [(cycle << self.timing.shift) - self.origin for cycle in (first_cycle, last_cycle)]

    def delivered(self, source, first_cycle, last_cycle):
        first, last = self._window(first_cycle, last_cycle)
        return [
            (stamp, value)
            for stamp, value in delivered(self.events, source)
            if first <= stamp < last
        ]

    def lost(self, source):
        losses = self.events.value[self.events.source == Source.LOSS].astype(np.int64)
        return int(sum(value >> 4 for value in losses if value & 0xF == source))


def delivered(events, source):
    mask = events.source == source
    return list(zip(events.stamp[mask].tolist(), events.value[mask].tolist()))


SOURCES = (Source.MARKER, Source.IRQ, Source.EDGE0, Source.EDGE1, Source.EDGE2, Source.EDGE3)


def test_identify_reply_of_the_netlist(session):
    identity, board = session.identity, session.board
    assert identity.board == board.identify_name and identity.clock_hz == board.clock_hz
    assert identity.link_clock_hz == board.link_clock_hz
    assert identity.stamp_shift == session.timing.shift and identity.fifo_depth == board.fifo_depth
    # The resolution the host shows (`latscope info`): one sampling edge to the next.
    assert identity.resolution_ns == pytest.approx(1e9 / board.clock_hz / board.sample_phases)


def test_every_scripted_event_at_its_sampling_edge(session):
    """From START to the overflow: every change of every pin, at exactly its half cycle (its
    quarter cycle with a gearbox)."""
    started, burst, _ = session.marks
    assert session.stats.segments_bad == session.stats.bytes_skipped == 0
    assert session.stats.holes == 0
    for source in SOURCES:
        assert session.delivered(source, started, burst) == session.expected(
            source, started, burst
        ), source
        assert len(session.expected(source, started, burst)) >= 5, source
    # Every phase of a cycle (both halves, all four quarters) was exercised, for markers and
    # for each edge channel.
    phases = session.timing.phases
    for source in SOURCES[:1] + SOURCES[2:]:
        residues = {stamp % phases for stamp, _ in session.delivered(source, started, burst)}
        assert residues == set(range(phases)), source


def test_overflow_losses_are_exactly_accounted(session):
    """From the burst to STOP: per source, every delivered event is a scripted one, exact,
    and delivered + LOSS-counted = scripted."""
    _, burst, stopped = session.marks
    for source in SOURCES:
        got = session.delivered(source, burst, stopped)
        expected = session.expected(source, burst, stopped)
        assert set(got) <= set(expected), source
        assert len(got) + session.lost(source) == len(expected), source
    # (On the HX8K the markers and an IRQ edge after the burst find the FIFO still full too;
    # the iCEBreaker's link drains it twice as fast.)
    assert session.lost(Source.EDGE1) > 0
    assert len(session.delivered(Source.EDGE1, burst, stopped)) > session.board.fifo_depth // 2
    status = session.status
    assert status.lost == sum(session.lost(source) for source in SOURCES)
    assert status.fifo_max == session.board.fifo_depth and status.capturing == 0
    started = session.marks[0]
    rising = [value for _, value in session.expected(Source.IRQ, started, stopped)]
    assert status.irq_edges == sum(rising)
    # Capture went on after the losses: the last marker arrived.
    assert (
        session.delivered(Source.MARKER, burst, stopped)[-1]
        == session.expected(Source.MARKER, burst, stopped)[-1]
    )


# --- Loopback: the self-test's jumper on the netlist -----------------------------------------


def loopback_script(board, irq=LOOPBACK_IRQ, edges=16):
    """IDENTIFY, IRQ_CONFIG, START (IRQ, EDGE0, MARKER), ``edges`` + 1 IRQ periods, STOP: what
    ``selftest.check_loopback`` sends. Returns the script and the cycle STOP ends."""
    script = Script(board)
    cycle = script.command(round(POWER_ON_RESET_SECONDS * board.clock_hz) + 500, Command.IDENTIFY)
    cycle = script.command(cycle + script.reply_cycles(80), Command.IRQ_CONFIG, irq.encode())
    sources = sum(1 << source for source in (Source.IRQ, Source.EDGE0, Source.MARKER))
    cycle = script.command(
        cycle + script.reply_cycles(16), Command.START, StartArgs.const({"sources": sources})
    )
    cycle += (edges + 1) * script.irq_interval_cycles(irq) + 300
    return script, script.command(cycle, Command.STOP)


@pytest.fixture(scope="module")
def loopback(compiled, tmp_path_factory):
    """The netlist with the IRQ output wired to EDGE0 and the strobe: the events, the
    identity, and the IRQ pin's changes as the testbench saw them."""
    board = compiled.board
    script, stopped = loopback_script(board)
    # Long enough to drain what the link could not send yet (on the ULX3S's 2 Mbaud link
    # the three events of an IRQ change take longer than the IRQ period; 8 bytes an event).
    end_cycles = script.run_end(stopped, 8 * 3 * 2 * 17)
    received, log = simulate(
        compiled, script, tmp_path_factory.mktemp("loopback"), end_cycles, loopback=True
    )
    identity, events, parser = parse(received)
    assert parser.stats.segments_bad == parser.stats.bytes_skipped == 0
    return identity, events, [(time, level) for time, pin, level in log if pin == "I"]


def test_loopback_selftest_agrees_with_the_documented_latencies(loopback):
    """The host's loopback check (latscope.link.selftest.loopback_result) on the netlist's bytes:
    every IRQ change arrives three times, and after the IDENTIFY reply's pin latencies the
    jumpered EDGE0 and MARKER stamps equal the IRQ's exactly (a wire with no delay: the
    inputs sample the IRQ output's change at the clock edge the IRQ source is stamped with)."""
    identity, events, irq_pin = loopback
    result = loopback_result(events, identity)
    assert result.ok, result.problems
    assert result.irq_edges >= 16
    assert result.offsets == {"EDGE0": [0], "MARKER": [0]}
    for name in ("EDGE0", "MARKER"):
        documented = result.documented_ns[name]
        assert result.delays_ns[name] == (documented, documented)
    # Every change of the IRQ pin while capturing arrived as an IRQ event, with its level.
    irq = events.of(Source.IRQ)
    assert len(irq) >= 2 * 16
    levels = [level for _, level in irq_pin]
    first = next(
        index
        for index in range(len(levels))
        if levels[index : index + len(irq)] == irq.value.tolist()
    )
    assert levels[first : first + len(irq)] == irq.value.tolist()


# --- The IRQ trigger: its delays at the netlist's pin ----------------------------------------

#: The netlist's trigger: a firing ``range(0, 12, 3)`` capture cycles (0, 3, 6, 9, again)
#: after each IL_A PARAM marker, the pin asserted 8 cycles; the generator off.
TRIGGER = TriggerSettings.on_marker(Test.IL_A, Point.PARAM, start=0, stop=12, step=3, width=8)
FIRINGS = 6


def trigger_script(board):
    """IDENTIFY, IRQ_CONFIG (off), TRIGGER_CONFIG, START (MARKER, IRQ), ``FIRINGS`` markers
    in every phase of their cycles (apart by the link's time for their three events), STOP.
    Returns the script and the cycle STOP ends."""
    script = Script(board)
    offsets = script.t.OFFSETS
    cycle = script.command(round(POWER_ON_RESET_SECONDS * board.clock_hz) + 500, Command.IDENTIFY)
    cycle = script.command(
        cycle + script.reply_cycles(80), Command.IRQ_CONFIG, IrqSettings(enable=False).encode()
    )
    cycle = script.command(
        cycle + script.reply_cycles(16), Command.TRIGGER_CONFIG, TRIGGER.encode()
    )
    sources = (1 << Source.MARKER) | (1 << Source.IRQ)
    cycle = script.command(
        cycle + script.reply_cycles(16), Command.START, StartArgs.const({"sources": sources})
    )
    cycle += 200
    for n in range(FIRINGS):
        script.marker(
            cycle * script.t.P + offsets[n % len(offsets)], encode(Test.IL_A, Point.PARAM, n)
        )
        cycle += script.reply_cycles(3 * 8)
    return script, script.command(cycle, Command.STOP)


@pytest.fixture(scope="module")
def triggered(compiled, tmp_path_factory):
    """The trigger script on the netlist: the script, the identity, the events and the IRQ
    pin's changes as the testbench saw them."""
    board = compiled.board
    script, stopped = trigger_script(board)
    end_cycles = script.run_end(stopped, 8 * 3 * FIRINGS)
    received, log = simulate(compiled, script, tmp_path_factory.mktemp("trigger"), end_cycles)
    identity, events, parser = parse(received)
    assert parser.stats.segments_bad == parser.stats.bytes_skipped == parser.stats.holes == 0
    return script, identity, events, [(time, level) for time, pin, level in log if pin == "I"]


def test_trigger_delays_are_exact_at_the_pin(triggered):
    """Every marker fires: the IRQ pin rises ``(delay << stamp_shift) + trigger_offset - p``
    stamp units after the marker's pin change (p: the marker's phase in its cycle;
    docs/protocol.md, "Triggered IRQs"), for delays 0, 3, 6 and 9 in sweep order, and stays
    up ``width`` cycles. Measured at the pin (the testbench's log, at the sampling edges
    the inputs would see) and in the stream (each IRQ record with its delay, at the pin's
    stamp)."""
    script, identity, events, irq_pin = triggered
    unit, shift, phases = script.t.UNIT, identity.stamp_shift, script.t.phases
    markers = delivered(events, Source.MARKER)
    assert [value for _, value in markers] == [value for _, _, value in script.truth]
    origin = sample_index(script.truth[0][0], unit) - markers[0][0]
    irq_pin = [(time, level) for time, level in irq_pin if time > script.truth[0][0]]
    # The stream's IRQ edges are the pin's, at the pin's stamps, with the sweep's delays.
    irq = events.of(Source.IRQ)
    value = irq.value.astype(np.int64)
    assert (irq_triggered(value) == 1).all()
    pin = [(sample_index(time, unit) - origin, level) for time, level in irq_pin]
    assert list(zip(irq.stamp.tolist(), irq_level(value).tolist())) == pin
    sweep = TRIGGER.delays()
    delays = irq_delay(value).tolist()
    assert delays == [sweep[n // 2 % len(sweep)] for n in range(2 * FIRINGS)]
    assert 0 in delays
    offset = identity.trigger_offset(Source.MARKER)
    latency = identity.latency[Source.MARKER]
    rises, falls = pin[0::2], pin[1::2]
    for (marker, _), (rise, _), (fall, _), delay in zip(markers, rises, falls, delays[0::2]):
        phase = (marker + latency) % phases
        assert rise - marker == (delay << shift) + offset - phase, (delay, rise, marker)
        assert fall - rise == TRIGGER.width << shift
    assert len(rises) == len(falls) == FIRINGS


# --- The clock-phase probe of the iCE40 gearbox ----------------------------------------------


def clock_phase_status(compiled, run_dir, clock_delays=None):
    """IDENTIFY and STATUS after the power-on reset; the self-test's clock-phase verdict on
    the STATUS reply (selftest.clock_phase_result)."""
    board = compiled.board
    script = Script(board)
    cycle = script.command(round(POWER_ON_RESET_SECONDS * board.clock_hz) + 500, Command.IDENTIFY)
    cycle = script.command(cycle + script.reply_cycles(80), Command.STATUS)
    received, _ = simulate(
        compiled,
        script,
        run_dir,
        cycle + script.reply_cycles(16) + 10_000,
        clock_delays=clock_delays,
    )
    identity, _, parser = parse(received)
    status = StatusReply.from_bits(int.from_bytes(dict(parser.replies)[Command.STATUS], "little"))
    return clock_phase_result(status.clock_check, identity)


def wrong_phase_delays(compiled):
    """The testbench's clock delays that make an iCE40 PLL's output B (GENCLK_HALF: the
    capture clock) rise on output A's (the edge clock's) falling edges: B starts half of
    A's period late."""
    outputs = {clock.port: clock.input_name for clock in compiled.netlist.clocks}
    edge_clock_period = compiled.netlist.periods[outputs["PLLOUTGLOBALA"]]
    return {outputs["PLLOUTGLOBALB"]: edge_clock_period // 2}


@pytest.fixture(
    scope="module",
    params=SHIPPED
    + [
        pytest.param(
            record,
            marks=pytest.mark.skipif(
                record not in BOARDS, reason=f"LATSCOPE_NETLIST_BOARDS={record} runs it"
            ),
        )
        for record in BY_CHOICE
    ],
)
def phase_probed(request, netlists):
    """The netlist of every board as shipped (each compiled once, as for the session), and
    of the builds of BY_CHOICE when chosen: the clock-phase tests' builds."""
    return netlists(request.param)


def test_clock_phase_probe_passes_with_the_pll_as_assumed(phase_probed, tmp_path):
    """The iCE40 gearbox's probe, as `latscope selftest` reads it: the capture clock's
    toggle first sampled at quarter 1 of its cycle, in every cycle. Boards without the
    probe (the ULX3S, whose gearbox's phase is its start-up's; the iCEBreaker, full) report
    STATUS clock_check 0, "not probed"."""
    result = clock_phase_status(phase_probed, tmp_path)
    if not (phase_probed.board.family == "ice40" and phase_probed.board.phase_probe):
        assert not result.probed and result.ok
        return
    assert result.probed and result.ok, result.problems
    assert result.seen == [EXPECTED_SAMPLE] and not result.irregular


def test_clock_phase_probe_fails_when_the_capture_clock_rises_on_falling_edges(
    phase_probed, tmp_path
):
    """The same netlist with the PLL's output B half an edge-clock period late (its rising
    edges on output A's falling ones): the probe sees the toggle at another quarter and the
    self-test fails, naming the phase and the quarter-cycle error."""
    if not (phase_probed.board.family == "ice40" and phase_probed.board.phase_probe):
        pytest.skip("only the iCE40 gearbox depends on the phase of two PLL outputs")
    result = clock_phase_status(phase_probed, tmp_path, wrong_phase_delays(phase_probed))
    assert result.probed and not result.ok
    assert result.seen and EXPECTED_SAMPLE not in result.seen
    lines = format_results(clock_phase=result)
    print("\n".join(lines))  # the self-test's report, for the record (pytest -s)
    (line,) = [line for line in lines if "FAILED" in line]
    assert "does not rise on the edge clock's (output A's) rising edges" in result.problems[0]
    assert f"{1e9 / phase_probed.board.clock_hz / 4:.2f} ns" in result.problems[0], line


# --- The ECP5 gearbox's start-up: the same quarter order at every lock time -----------------

#: Lock times of the start-up test: a quarter edge-clock period past an edge, then every
#: half period for two periods (either edge, both parities of the divider).
START_PHASES = 4


def test_ecp5_gearbox_groups_samples_the_same_whatever_the_lock_time(compiled, tmp_path):
    """The PLL's LOCK rising at edge-clock phases a half period apart (the testbench's
    ``+lock``), after a microsecond of running clocks: each time the loopback (IRQ output to
    EDGE0 and the strobe) gives offset 0, the quarter order the gearbox model and the
    IDENTIFY latencies state. Before the start-up sequence (the divider's reset released
    straight from LOCK, the gearboxes' tied low) the divider and the gearboxes' word counters
    started an odd number of edge-clock cycles apart at every other lock time, every stamp
    of the strobe and the edge pins then half a cycle off (measured: offsets 2 at two of
    the four lock times)."""
    board = compiled.board
    if board.family != "ecp5" or not board.edge_clock_hz:
        pytest.skip("only the ECP5's gearbox has a start-up sequence")
    outputs = {clock.port: clock.input_name for clock in compiled.netlist.clocks}
    eclk = compiled.netlist.periods[outputs["CLKOP"]]
    script, stopped = loopback_script(board, edges=2)
    P = script.t.P
    offsets = {}
    for phase in range(START_PHASES):
        lock_ps = 1_000_000 + eclk // 4 + phase * eclk // 2
        result = compiled.netlist.run(
            script.stimulus,
            tmp_path / str(phase),
            end_ps=(stopped + script.reply_cycles(8 * 3 * 2 * 3) + 100_000) * P,
            quiet_ps=3000 * P,
            loopback=True,
            lock_ps=lock_ps,
        )
        identity, events, _ = parse(decode_uart(result.log, script.bit_ps))
        verdict = loopback_result(events, identity)
        offsets[lock_ps] = verdict.offsets
        assert verdict.irq_edges >= 2, lock_ps
    assert all(found == {"EDGE0": [0], "MARKER": [0]} for found in offsets.values()), offsets


# --- The memory bus builds: writes at the FMC's fastest timing ---------------------------------

#: The memory bus builds the bus test runs, each when LATSCOPE_NETLIST_BOARDS names it (its
#: own Yosys run and Verilator compile, for a bitstream CI does not build).
MEMBUS_BUILDS = ("ice40-hx8k-b-evn-membus", "icebreaker-membus", "ulx3s-membus")
#: The lossless end-edge spacing, in samples: a capture cycle and a sample (docs/membus.md,
#: "lossless end-edge spacing").
LOSSLESS_SAMPLES = 5
#: The FMC's clock, HCLK, at the STM32F446's 180 MHz (docs/membus.md), in ps: its fastest
#: write (ADDSET a, DATAST d) drives NE1, the address and the data for a + d + 1 HCLK, NWE
#: low from a HCLK in for d; the end edge, NWE rising, is a + d HCLK in. The script takes the
#: least DATAST that keeps NWE low for a stamp unit, and the least ADDSET that keeps it high
#: that long between back-to-back writes (a + 1 HCLK; shorter is below what sampling can
#: see, docs/membus.md): ADDSET 0, DATAST 1 on the HX8K; ADDSET 1, DATAST 2 on the
#: iCEBreaker.
HCLK_PS = round(1e12 / 180e6)
#: A change at a sampling edge's instant could be sampled on either side of it (the netlist
#: has no delays): the script keeps every end edge at least this far from one, so that its
#: sampling edge is known.
CLEAR_PS = 50
#: Bytes of a segment's SYNC, TALLY and SEAL records.
SEGMENT_FRAMING_BYTES = sum(
    fixed_length(source) for source in (Source.SYNC, Source.TALLY, Source.SEAL)
)


class BusScript(Script):
    """A DUT's FMC writes on the memory bus build's pins, with the truth log of their end
    edges ((time, value))."""

    def __init__(self, board):
        super().__init__(board)
        self.writes = []
        self.address_bits = len(board.pins.bus_address)
        self.layout = memory_bus_write(16, self.address_bits)
        #: NWE's low time in HCLK: the least that covers a stamp unit.
        self.datast = -(-self.t.UNIT // HCLK_PS)
        #: NWE's high time before it, less the HCLK after the end edge: with that HCLK, the
        #: least that covers a stamp unit.
        self.addset = self.datast - 1
        #: From a write's start to its end edge, and its length (NE1 low).
        self.end_ps = (self.addset + self.datast) * HCLK_PS
        self.write_ps = self.end_ps + HCLK_PS

    def lines(self, time, address, data):
        for bit in range(16):
            self.stimulus.set(time, f"D{bit}", (data >> bit) & 1)
        for bit in range(self.address_bits):
            self.stimulus.set(time, f"A{bit}", (address >> bit) & 1)

    def write(self, start, address, data, selected=True):
        """One write from ``start``: NWE low for DATAST HCLK after ADDSET; the chip select
        (active low) for the whole write unless another bank's (``selected`` False); the
        address's bits beyond the build's address lines are not on the bus. Returns its
        end."""
        address &= (1 << self.address_bits) - 1
        self.lines(start, address, data)
        self.stimulus.set(start, "CS", 0 if selected else 1)
        self.stimulus.set(start + self.addset * HCLK_PS, "WE", 0)
        end_edge = start + self.end_ps
        self.stimulus.set(end_edge, "WE", 1)
        if selected:
            self.writes.append(
                (end_edge, self.layout.const({"data": data, "address": address}).as_bits())
            )
        return start + self.write_ps

    def queued_bytes(self):
        """The most bytes the writes' events can take on the link: each a record of the
        longest (a lead byte and MAX_CONT continuation bytes), in one segment (SYNC, TALLY and
        SEAL records). As many may still be queued when STOP comes: on the ULX3S's 2 Mbaud
        link a record takes over 4000 capture cycles, the writes come 60 or fewer apart."""
        return len(self.writes) * (1 + MAX_CONT) + SEGMENT_FRAMING_BYTES

    def read(self, start, address):
        """A read: the chip select and the address for a write's length, no write strobe."""
        self.lines(start, address, 0xFFFF)
        self.stimulus.set(start, "CS", 0)
        return start + self.write_ps

    def idle(self, time):
        self.stimulus.set(time, "CS", 1)


def clear_of_sampling_edges(times, unit):
    return all(CLEAR_PS <= time % unit <= unit - CLEAR_PS for time in times)


def bus_session(board):
    """Writes at the lossless spacing (end edges in every quarter of a cycle, a read and
    another bank's write between them), then back to back at the FMC's fastest the build
    takes (ADDSET + DATAST + 1 HCLK: 11.1 ns on the HX8K and the ULX3S, 22.2 on the
    iCEBreaker; closer than the HX8K's and the iCEBreaker's lossless spacing, 14.9 and 34.7
    ns, not the ULX3S's 10 ns). Returns the script, the number of spaced writes and the
    cycles where the capture starts, STOP's last bit ends and STATUS starts."""
    script = BusScript(board)
    P, unit, offsets = script.t.P, script.t.UNIT, script.t.OFFSETS
    rng = random.Random(32)
    cycle = script.command(round(POWER_ON_RESET_SECONDS * board.clock_hz) + 500, Command.IDENTIFY)
    sources = StartArgs.const({"sources": 1 << Source.BUS})
    cycle = script.command(cycle + script.reply_cycles(80), Command.START, sources)
    started = cycle
    cycle += 200
    for n in range(16):
        # The end edge in the middle of quarter n % 4.
        end_edge = cycle * P + offsets[n % 4]
        end = script.write(end_edge - script.end_ps, n, rng.randrange(1 << 16))
        script.idle(end)
        if n % 4 == 3:
            script.idle(script.read(end + 10 * P, n))
            script.idle(script.write(end + 20 * P, n, 0xDEAD, selected=False))
        cycle += 60
    spaced = len(script.writes)
    start = next(
        start
        for start in range(cycle * P, cycle * P + unit)
        if clear_of_sampling_edges(
            [start + k * script.write_ps + script.end_ps for k in range(12)], unit
        )
    )
    for n in range(12):
        start = script.write(start, 8 + n % 8, rng.randrange(1 << 16))
    script.idle(start)
    assert clear_of_sampling_edges([time for time, _ in script.writes], unit)
    stopped = script.command(start // P + 800, Command.STOP)
    # STATUS once the link has sent every write's event: on the ULX3S's 2 Mbaud link they
    # are still queued at STOP (issue 32).
    status = stopped + script.reply_cycles(script.queued_bytes())
    script.command(status, Command.STATUS)
    return script, spaced, (started, stopped, status)


@pytest.fixture(scope="module", params=MEMBUS_BUILDS)
def bus_session_run(request, netlists, tmp_path_factory):
    """The bus session on a memory bus build's netlist: (script, spaced writes, identity,
    events, STATUS)."""
    if request.param not in BOARDS:
        pytest.skip(f"LATSCOPE_NETLIST_BOARDS={request.param} runs it")
    compiled = netlists(request.param)
    script, spaced, (_, stopped, _) = bus_session(compiled.board)
    end_cycles = script.run_end(stopped, script.queued_bytes())
    received, _ = simulate(compiled, script, tmp_path_factory.mktemp("bus"), end_cycles)
    identity, events, parser = parse(received)
    status = StatusReply.from_bits(int.from_bytes(dict(parser.replies)[Command.STATUS], "little"))
    return script, spaced, identity, events, status


# Its own Yosys run and Verilator compile (the shipped boards' tests share theirs): 10 minutes
# measured on the 2-core machine under the load of other work.
@pytest.mark.timeout(1800)
def test_bus_writes_are_stamped_at_their_strobe_end_edges(bus_session_run):
    """The memory bus build's netlist: every write at the lossless spacing delivered with its
    address and data, stamped at the sampling edge after its NWE rising edge (in every
    quarter of a cycle), reads and another bank's writes making nothing; back to back at
    the FMC's fastest, each write delivered exactly or counted lost (the first to end in a
    cycle is delivered), in LOSS records and STATUS alike: some lost where that is closer
    than the board's lossless spacing (HX8K, iCEBreaker), none where it is not (ULX3S)."""
    script, spaced, identity, events, status = bus_session_run
    unit, shift = script.t.UNIT, script.t.shift
    assert identity.bus_width == 16 and identity.stamp_shift == 2
    got = delivered(events, Source.BUS)
    # Stamp 0's sampling edge, from the first write.
    origin = sample_index(script.writes[0][0], unit) - got[0][0]
    expected = [(sample_index(time, unit) - origin, value) for time, value in script.writes]
    assert got[:spaced] == expected[:spaced]
    assert {stamp % 4 for stamp, _ in got[:spaced]} == {0, 1, 2, 3}
    # Back to back: the first write to end in each capture cycle (as the time-stamper sees
    # it: the stamp before the pin latency is taken off).
    latency = identity.latency[Source.BUS]
    first = {}
    for stamp, value in expected[spaced:]:
        first.setdefault((stamp + latency) >> shift, (stamp, value))
    losses = [value for _, source, value in events if source == Source.LOSS]
    lost = sum(value >> 4 for value in losses if value & 0xF == Source.BUS)
    assert got[spaced:] == sorted(first.values())
    assert lost == len(expected) - len(got)
    assert (lost > 0) == (script.write_ps < LOSSLESS_SAMPLES * unit)
    assert status.lost == lost and status.events == len(got)


@pytest.mark.parametrize("record", MEMBUS_BUILDS)
def test_bus_session_waits_for_the_writes_events(record):
    """The bus session asks for STATUS once the link has had the time to send every write's
    event after STOP, as if none had left before (each its long BUS record, its delta the
    capture cycles from the write before), and its run lasts until it has had the time for
    them, the segment's framing and the STOP's and STATUS's replies too (a REPLY record, at
    most 2 bytes, for each reply byte: the opcode, the length, the payload). On the ULX3S's
    2 Mbaud link, 25 link cycles a bit, a 7-byte record takes 4375 capture cycles and the
    writes come 60 or fewer apart: a run that ended 140 300 cycles after STOP cut the
    segment's SEAL short, and it parsed as one hole, no BUS event (issue 32)."""
    script, _, (started, stopped, status) = bus_session(BUILDS[record])
    cycles = [started] + [time // script.t.P for time, _ in script.writes]
    records = sum(
        record_length(event_payload(Source.BUS, cycle - before, value), Source.BUS)
        for before, cycle, (_, value) in zip(cycles, cycles[1:], script.writes)
    )
    byte_cycles = 10 * script.bit_ps / script.t.P
    assert status - stopped >= records * byte_cycles
    replies = sum(2 * (2 + reply_sizes(opcode)[0]) for opcode in (Command.STOP, Command.STATUS))
    end = script.run_end(stopped, script.queued_bytes())
    assert end - stopped >= (records + SEGMENT_FRAMING_BYTES + replies) * byte_cycles
