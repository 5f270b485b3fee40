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

Cost: synthesis (~20 s of Yosys, or none when the bitstream test of the same run already
wrote the netlist), compiling (~5 s) and ~80 000 clock cycles of gate-level simulation
(about 2 minutes).
"""

import random
from pathlib import Path

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
        self.bit_ps = board.uart_divisor * P
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
    script = Script(board)
    rng = random.Random(12)
    # Like the host, each command waits for the previous one's reply (bytes that come during
    # a reply are ignored, and a zero byte among them would even switch to SUMP mode).
    cycle = script.command(1500, Command.IDENTIFY)
    cycle = script.command(cycle + 6000, Command.IRQ_CONFIG, IRQ.encode())
    cycle = script.command(cycle + 300, Command.START, StartArgs.const({"sources": 0xffff}))
    # Clean part: markers and edges in both halves of their cycles, never two sources in one
    # cycle (events of one cycle share one stamp, the earliest half's).
    cycle += 200
    for n in range(24):
        script.marker(cycle * P + (EARLY, LATE)[n % 2], rng.randrange(1 << 16))
        cycle += rng.randrange(40, 160)
        script.edge(cycle * P + (LATE, EARLY)[n % 2], n % 4)
        cycle += rng.randrange(40, 160)
    # Overflow: EDGE1 changes every cycle, alternating halves.
    cycle += 300
    burst = (cycle, cycle + BURST_CYCLES)
    for n in range(BURST_CYCLES):
        script.edge((cycle + n) * P + (EARLY, LATE)[n % 2], 1)
    cycle += BURST_CYCLES + 500
    # Capture goes on: markers while the FIFO drains.
    for n in range(6):
        script.marker(cycle * P + (EARLY, LATE)[n % 2], rng.randrange(1 << 16))
        cycle += 700
    cycle = script.command(cycle + 200, Command.STOP)
    script.command(cycle + 1000, Command.STATUS)
    return script, burst


@pytest.fixture(scope="module")
def session(tmp_path_factory, default_board_build):
    board = get_board(DEFAULT_BOARD)
    netlist = default_board_build / NETLIST_NAME
    if not netlist.exists():          # the bitstream test did not run: synthesize only
        netlist = synthesize(board, tmp_path_factory.mktemp("synth"))
    script, burst = scripted_session(board)
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
    irq_pin = [(time, level) for time, pin, level in log if pin == "I"]
    return board, identity, events, parser.stats, status, script, burst, irq_pin


def delivered(events, source):
    mask = events.source == source
    return list(zip(events.stamp[mask].tolist(), events.value[mask].tolist()))


def test_identify_reply_of_the_netlist(session):
    board, identity = session[:2]
    assert identity.board == board.identify_name and identity.clock_hz == board.clock_hz
    assert identity.stamp_shift == 1 and identity.fifo_depth == board.fifo_depth


def test_every_scripted_event_at_its_half_cycle(session):
    board, identity, events, stats, status, script, burst, _ = session
    assert stats.segments_bad == 0 and stats.bytes_skipped == 0 and stats.holes == 0
    # One time origin for every source: the first marker's fixes it.
    first_time, _, _ = script.truth[0]
    origin = half_index(first_time) - delivered(events, Source.MARKER)[0][0]
    clean = [(half_index(time) - origin, int(source), value)
             for time, source, value in script.truth
             if not burst[0] * P <= time < burst[1] * P]
    got = [(stamp, int(source), value) for stamp, source, value in
           zip(events.stamp.tolist(), events.source.tolist(), events.value.tolist())
           if source != Source.IRQ and source != Source.LOSS
           and not (Source(source) == Source.EDGE1
                    and burst[0] * 2 - origin <= stamp < burst[1] * 2 + 2 - origin)]
    assert sorted(got) == sorted(clean)
    # Both halves of a cycle were exercised, for markers and for edges.
    for source in (Source.MARKER, Source.EDGE0):
        assert {stamp % 2 for stamp, _ in delivered(events, source)} == {0, 1}


def test_irq_output_stamps_match_its_pin(session):
    """The IRQ generator's events carry the stamps of its pin's changes, as the testbench
    saw them, with the same origin as the inputs' (whole cycles: the output changes on
    rising edges)."""
    board, identity, events, stats, status, script, burst, irq_pin = session
    first_time, _, _ = script.truth[0]
    origin = half_index(first_time) - delivered(events, Source.MARKER)[0][0]
    got = delivered(events, Source.IRQ)
    assert len(got) >= 10
    # A change on a rising edge is sampled, by an input at the same moment, on that edge.
    pin = [(time // HALF - origin, level) for time, level in irq_pin]
    first, last = got[0][0], got[-1][0]
    assert got == [(stamp, level) for stamp, level in pin if first <= stamp <= last]
    assert status.irq_edges == sum(level for _, level in got)


def test_overflow_losses_are_exactly_accounted(session):
    board, identity, events, stats, status, script, burst, _ = session
    first_time, _, _ = script.truth[0]
    origin = half_index(first_time) - delivered(events, Source.MARKER)[0][0]
    scripted = [(half_index(time) - origin, value) for time, source, value in script.truth
                if source == Source.EDGE1 and burst[0] * P <= time < burst[1] * P]
    window = (scripted[0][0], scripted[-1][0])
    got = [(stamp, value) for stamp, value in delivered(events, Source.EDGE1)
           if window[0] <= stamp <= window[1]]
    losses = events.value[events.source == Source.LOSS].astype(np.int64)
    lost_edge1 = int(sum(value >> 4 for value in losses if value & 0xf == Source.EDGE1))
    assert lost_edge1 > 0 and len(got) > board.fifo_depth // 2
    assert set(got) <= set(scripted)          # every delivered event is exact
    assert len(got) + lost_edge1 == len(scripted)
    assert status.lost == int(sum(value >> 4 for value in losses)) == lost_edge1
    assert status.fifo_max == board.fifo_depth
    assert status.capturing == 0
    # The markers after the overflow all arrived.
    assert delivered(events, Source.MARKER)[-1][1] == script.truth[-1][2]
