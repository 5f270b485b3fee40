"""The shipped netlist, simulated: the default board's post-synthesis netlist (the Yosys output
nextpnr places, with Yosys's iCE40 cell models, under Icarus Verilog; the PLL bypassed by the
testbench's clock) runs one scripted session end to end.

A scripted DUT drives the board's pins at known times: markers and edge-channel changes in
both halves of a clock cycle (DDR half-cycle stamps), the IRQ generator runs, and a burst of
edges overruns the 1024-entry FIFO. The host commands go into the UART RX pin bit by bit; the
bytes of the UART TX pin are decoded from the testbench's log and given to the host's
parser. The host must see exactly the scripted events, at exactly the scripted half cycles
(one time origin for every source, after the pin latencies of the IDENTIFY reply), and every
event of the burst either delivered exactly or counted in a LOSS record.

Cost (measured): Yosys 12 s (none when the bitstream test of the same run already wrote the
netlist), compiling 2 s, and 95 700 clock cycles of gate-level simulation in 109 s.
"""

import os
import random
from dataclasses import dataclass

import numpy as np
import pytest

from latscope.device import Identity, IrqSettings
from latscope.parser import Events, StreamParser
from latscope.protocol import Command, Source, StartArgs, StatusReply, encode_command
from latscope_boards import DEFAULT_BOARD, get_board
from latscope_boards.netlist_sim import CLOCK_PERIOD_PS, Stimulus, decode_uart, run
from latscope_boards.toolchain import NETLIST_NAME, synthesize

P = CLOCK_PERIOD_PS
HALF = P // 2
EARLY, LATE = P // 4, 3 * P // 4      # pin changes a quarter cycle before / after a rising edge
IRQ = IrqSettings(period=1500, jitter_mask=0x3f, width=40)
BURST_CYCLES = 1400                    # EDGE1 toggles every cycle: > 1024 FIFO entries


def half_index(time):
    """Index of the first clock edge (rising or falling) after ``time``: what a DDR input
    register samples it on. Edges are at every multiple of HALF."""
    return time // HALF + 1


class Script:
    """The DUT's pin changes and the host's commands, with the truth log."""

    def __init__(self, board):
        self.board = board
        # The UART runs on the link clock: uart_divisor link cycles of (capture clock / link
        # clock) capture periods each.
        self.bit_ps = board.uart_divisor * P * board.clock_hz // board.link_clock_hz
        self.stimulus = Stimulus()
        self.truth = []               # (time of the pin change, Source, value)
        self.strobe = 1
        self.levels = {n: 1 for n in range(4)}

    def command(self, cycle, opcode, args=None):
        return self.stimulus.uart(cycle * P, encode_command(opcode, args), self.bit_ps) // P + 1

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
    rng = random.Random(12)
    # Like the host, each command waits for the previous one's reply (bytes that come during
    # a reply are ignored, and a zero byte among them would even switch to SUMP mode).
    cycle = script.command(1500, Command.IDENTIFY)
    cycle = script.command(cycle + 6000, Command.IRQ_CONFIG, IRQ.encode())
    cycle = script.command(cycle + 300, Command.START, StartArgs.const({"sources": 0xffff}))
    started = cycle
    # Before the overflow: markers and edges in both halves of their cycles, never two
    # sources in one cycle (events of one cycle share one stamp, the earliest half's).
    cycle += 200
    for n in range(24):
        script.marker(cycle * P + (EARLY, LATE)[n % 2], rng.randrange(1 << 16))
        cycle += rng.randrange(40, 160)
        script.edge(cycle * P + (LATE, EARLY)[n // 4 % 2], n % 4)
        cycle += rng.randrange(40, 160)
    # Overflow: EDGE1 changes every cycle, alternating halves; then markers while the FIFO
    # drains (some find it full: they are lost and counted, like the IRQ's edges then).
    cycle += 300
    burst = cycle
    for n in range(BURST_CYCLES):
        script.edge((cycle + n) * P + (EARLY, LATE)[n % 2], 1)
    cycle += BURST_CYCLES + 500
    for n in range(6):
        script.marker(cycle * P + (EARLY, LATE)[n % 2], rng.randrange(1 << 16))
        cycle += 700
    # (STOP is sent where the IRQ output does not change: see Session.expected.)
    stopped = script.command(cycle + 800, Command.STOP)
    script.command(stopped + 1000, Command.STATUS)
    return script, (started, burst, stopped)


#: Boards whose netlists run: the default board in CI; more (iCE40 boards: the cell models
#: and the PLL bypass are iCE40's) with LATSCOPE_NETLIST_BOARDS=ice40-hx8k-b-evn,icebreaker.
BOARDS = os.environ.get("LATSCOPE_NETLIST_BOARDS", DEFAULT_BOARD).split(",")


@pytest.fixture(scope="module", params=BOARDS)
def session(request, tmp_path_factory, default_board_build):
    board = get_board(request.param)
    netlist = default_board_build / NETLIST_NAME
    if board.name != DEFAULT_BOARD or not netlist.exists():
        # Not the netlist of the bitstream test of this run: synthesize only.
        netlist = synthesize(board, tmp_path_factory.mktemp("synth"))
    script, marks = scripted_session(board)
    log = run(netlist, script.stimulus, tmp_path_factory.mktemp("netlist_sim"),
              end_ps=400_000 * P, quiet_ps=3000 * P)
    received = decode_uart(log, script.bit_ps)
    probe = StreamParser()
    probe.feed(received)
    identity = Identity.from_reply(dict(probe.replies)[Command.IDENTIFY])
    parser = identity.parser()
    events = Events.concatenate([parser.feed(received), parser.finish()])
    status = StatusReply.from_bits(
        int.from_bytes(dict(parser.replies)[Command.STATUS], "little"))
    # The IRQ output's changes, as the testbench saw them, are scripted events too.
    irq_pin = [(time, Source.IRQ, level) for time, pin, level in log if pin == "I"]
    origin = half_index(script.truth[0][0]) - delivered(events, Source.MARKER)[0][0]
    truth = sorted(script.truth + irq_pin, key=lambda change: change[0])
    return Session(board, identity, events, parser.stats, status,
                   entry_stamps(truth, origin, identity.latency), marks, origin)


def entry_stamps(truth, origin, latency):
    """(time, source, value, stamp) of each scripted change: stamped with the first clock edge
    after it (``half_index``; the IRQ output, which changes on rising edges, with the next
    falling one), less ``origin``. Changes that reach the time-stamper in the same cycle
    (after their pin latencies) share one FIFO entry, whose stamp is the earliest half of
    theirs (docs/protocol.md); e.g. an IRQ edge with an edge-channel change in the late half
    of the same cycle."""
    raw = [half_index(time) - origin + latency[source] for time, source, _ in truth]
    earliest = {}
    for stamp in raw:
        earliest[stamp >> 1] = min(earliest.get(stamp >> 1, stamp), stamp)
    return [(time, source, value, earliest[stamp >> 1] - latency[source])
            for (time, source, value), stamp in zip(truth, raw)]


@dataclass
class Session:
    board: object
    identity: object
    events: object
    stats: object
    status: object
    truth: list           # (time of the pin change, Source, value, stamp), the IRQ's too
    marks: tuple          # cycles: capture started, burst started, STOP sent
    origin: int           # half_index() of stamp 0: fixed by the first marker

    def expected(self, source, first_cycle, last_cycle):
        """(stamp, value) of the scripted changes of ``source`` stamped between the cycles.
        A change is stamped with the first clock edge after it (the IRQ output, which
        changes on rising edges, with the next falling one). Where the capture starts or
        stops, no change may fall within 16 cycles: the command's exact cycle is not known
        from outside."""
        changes = [(time, value, stamp) for time, name, value, stamp in self.truth
                   if name == source]
        for edge in {first_cycle, last_cycle} & {self.marks[0], self.marks[2]}:
            assert not any(abs(time - edge * P) < 16 * P for time, _, _ in changes), source
        first, last = (2 * cycle - self.origin for cycle in (first_cycle, last_cycle))
        return [(stamp, value) for _, value, stamp in changes if first <= stamp < last]

    def delivered(self, source, first_cycle, last_cycle):
        first, last = (2 * cycle - self.origin for cycle in (first_cycle, last_cycle))
        return [(stamp, value) for stamp, value in delivered(self.events, source)
                if first <= stamp < last]

    def lost(self, source):
        losses = self.events.value[self.events.source == Source.LOSS].astype(np.int64)
        return int(sum(value >> 4 for value in losses if value & 0xf == source))


def delivered(events, source):
    mask = events.source == source
    return list(zip(events.stamp[mask].tolist(), events.value[mask].tolist()))


SOURCES = (Source.MARKER, Source.IRQ, Source.EDGE0, Source.EDGE1, Source.EDGE2, Source.EDGE3)


def test_identify_reply_of_the_netlist(session):
    identity, board = session.identity, session.board
    assert identity.board == board.identify_name and identity.clock_hz == board.clock_hz
    assert identity.stamp_shift == 1 and identity.fifo_depth == board.fifo_depth


def test_every_scripted_event_at_its_half_cycle(session):
    """From START to the overflow: every change of every pin, at exactly its half cycle."""
    started, burst, _ = session.marks
    assert session.stats.segments_bad == session.stats.bytes_skipped == 0
    assert session.stats.holes == 0
    for source in SOURCES:
        assert session.delivered(source, started, burst) == \
            session.expected(source, started, burst), source
        assert len(session.expected(source, started, burst)) >= 5, source
    # Both halves of a cycle were exercised, for markers and for each edge channel.
    for source in SOURCES[:1] + SOURCES[2:]:
        assert {stamp % 2 for stamp, _ in session.delivered(source, started, burst)} == {0, 1}


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
    assert session.delivered(Source.MARKER, burst, stopped)[-1] == \
        session.expected(Source.MARKER, burst, stopped)[-1]
