"""The 8N1 UART: exact transmit timing, loopback at full rate, receive tolerance and errors."""

import gc
import math
import random
from fractions import Fraction

import pytest
from amaranth.hdl import Elaboratable, Module

from latscope_gateware.uart import UARTRx, UARTTx
from support.cases import parametrize_first_fast
from support.gateware_sim import run


def frame(byte):
    """Line levels of one 8N1 frame: start, data LSB first, stop."""
    return [0, *((byte >> bit) & 1 for bit in range(8)), 1]


# --- Transmitter ------------------------------------------------------------------------------


def transmit(divisor, schedule, cycles):
    """Offers the bytes of ``schedule`` ([(cycle the byte is offered from, byte), ...], in
    order) to a UARTTx; returns (tx level in each cycle, [(cycle taken, byte), ...])."""
    dut = UARTTx(divisor)
    line, taken = [], []

    async def testbench(ctx):
        queue = list(schedule)
        for cycle in range(cycles):
            offering = bool(queue) and queue[0][0] <= cycle
            ctx.set(dut.data.valid, offering)
            if offering:
                ctx.set(dut.data.payload, queue[0][1])
            line.append(ctx.get(dut.tx))
            if offering and ctx.get(dut.data.ready):
                taken.append((cycle, queue.pop(0)[1]))
            await ctx.tick()

    run(dut, testbench)
    return line, taken


def expected_line(divisor, taken, cycles):
    """The documented waveform: a byte taken in cycle T has frame bit k on the line during
    cycles T + 1 + k * divisor .. T + (k + 1) * divisor; idle high otherwise."""
    line = [1] * cycles
    for start, byte in taken:
        for k, level in enumerate(frame(byte)):
            for cycle in range(start + 1 + k * divisor, start + 1 + (k + 1) * divisor):
                line[cycle] = level
    return line


@pytest.mark.parametrize("divisor", [2, 3, 10])
def test_tx_bit_timing_is_exact(divisor):
    data = [0x55, 0x00, 0xFF, 0xA5, 0x01, 0x80]
    byte_time = 10 * divisor
    # three bytes back to back from cycle 3, then a pause, then three more offered late
    later = 3 + 3 * byte_time + 7
    schedule = [(3, b) for b in data[:3]] + [(later, b) for b in data[3:]]
    cycles = later + 4 * byte_time
    line, taken = transmit(divisor, schedule, cycles)

    assert taken == (
        [(3 + j * byte_time, b) for j, b in enumerate(data[:3])]
        + [(later + j * byte_time, b) for j, b in enumerate(data[3:])]
    )
    # every bit centre, the way a receiver would look at it
    for start, byte in taken:
        for k, level in enumerate(frame(byte)):
            assert line[start + 1 + k * divisor + divisor // 2] == level
    # and every cycle: bit edges exactly on the grid, idle high between frames
    assert line == expected_line(divisor, taken, cycles)


def test_tx_ready_rises_only_in_the_last_stop_bit_cycle():
    divisor = 4
    dut = UARTTx(divisor)
    ready = []

    async def testbench(ctx):
        ctx.set(dut.data.valid, 1)
        ctx.set(dut.data.payload, 0x3C)
        await ctx.tick()  # taken in cycle 0
        ctx.set(dut.data.valid, 0)
        for _ in range(10 * divisor + 2):  # cycles 1 ..
            ready.append(ctx.get(dut.data.ready))
            await ctx.tick()

    run(dut, testbench)
    assert ready == [0] * (10 * divisor - 1) + [1, 1, 1]


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")
def test_bad_parameters_are_rejected():
    for component in (UARTTx, UARTRx):
        with pytest.raises(ValueError, match="divisor"):
            component(1)
    with pytest.raises(ValueError, match="sync_stages"):
        UARTRx(10, sync_stages=1)
    gc.collect()  # the half-built components die here, under this test's warning filter


# --- Receiver ---------------------------------------------------------------------------------


def sender(data, bit_time, phase=0):
    """Line level per cycle of a sender whose bit time is ``bit_time`` cycles (a Fraction) and
    whose first start bit begins at time ``phase`` (0 <= phase < 1 puts the start edge inside
    clock cycle 0): the line shows a bit from the first cycle at or after the bit's start.
    Frames follow each other with no idle time. Returns the levels, idle high at the end."""
    edges, levels = [], []
    for index, byte in enumerate(data):
        origin = phase + index * 10 * bit_time
        for k, level in enumerate(frame(byte)):
            edges.append(origin + k * bit_time)
            levels.append(level)
    end = math.ceil(edges[-1] + bit_time) + 1

    def level_at(cycle):
        current = 1
        for edge, level in zip(edges, levels):
            if edge > cycle:
                break
            current = level
        return current

    return [level_at(cycle) for cycle in range(end)]


def receive(dut, line):
    """Drives ``line`` (a level per cycle, idle high after it) into the UARTRx ``dut`` and
    returns [(cycle, "byte", value) or (cycle, "error", None), ...]."""
    tail = 2 * dut.latency
    seen = []

    async def testbench(ctx):
        for cycle in range(len(line) + tail):
            ctx.set(dut.rx, line[cycle] if cycle < len(line) else 1)
            if ctx.get(dut.data.valid):
                seen.append((cycle, "byte", ctx.get(dut.data.payload)))
            if ctx.get(dut.framing_error):
                seen.append((cycle, "error", None))
            await ctx.tick()

    run(dut, testbench)
    return seen


def received_bytes(seen):
    return [value for _, kind, value in seen if kind == "byte"]


def errors(seen):
    return [cycle for cycle, kind, _ in seen if kind == "error"]


@pytest.mark.parametrize("divisor, offset, stages", [(2, 1, 2), (3, 1, 2), (10, 4, 2), (10, 4, 3)])
def test_rx_delivers_each_byte_at_the_documented_cycle(divisor, offset, stages):
    rx = UARTRx(divisor, sync_stages=stages)
    assert rx.sample_offset == offset
    assert rx.latency == stages + offset + 9 * divisor + 1
    data = [0x00, 0xFF, 0x5A, 0x81]
    start = 5
    line = [1] * start + sender(data, Fraction(divisor))
    seen = receive(rx, line)
    frame_cycles = 10 * divisor
    assert seen == [(start + j * frame_cycles + rx.latency, "byte", b) for j, b in enumerate(data)]


def phases():
    return [Fraction(n, 8) for n in range(8)]


@parametrize_first_fast("divisor", [3, 10])
@pytest.mark.parametrize("mismatch", [Fraction(-2, 100), Fraction(2, 100)])
def test_rx_tolerates_two_percent_rate_mismatch(divisor, mismatch):
    rng = random.Random(divisor)
    data = [rng.randrange(256) for _ in range(12)] + [0x00, 0xFF, 0x55, 0xAA]
    bit_time = divisor * (1 + mismatch)
    for phase in phases():
        seen = receive(UARTRx(divisor), [1] * 3 + sender(data, bit_time, phase))
        assert received_bytes(seen) == data and not errors(seen), (phase, seen)


def test_rx_tolerance_limits_at_divisor_10_are_as_documented():
    # documented window for divisor 10: bit times 9.5 .. 10 + 4/9 cycles, any phase
    data = [0x00, 0xFF, 0x0F, 0xF0]
    for bit_time in (Fraction(95, 10), Fraction(94, 9)):
        for phase in phases():
            seen = receive(UARTRx(10), [1] * 3 + sender(data, bit_time, phase))
            assert received_bytes(seen) == data and not errors(seen), (bit_time, phase)
    # just outside it, the worst phase breaks frames: a slow sender whose start edge lands
    # right on a clock edge (the stop bit is sampled in data bit 7), a fast one whose start
    # edge lands just after one (the stop bit is sampled in the next frame's start bit)
    for bit_time, phase in (
        (Fraction(1045, 100), Fraction(0)),
        (Fraction(949, 100), Fraction(1, 100)),
    ):
        seen = receive(UARTRx(10), [1] * 3 + sender([0x00, 0x00], bit_time, phase))
        assert errors(seen), (bit_time, phase, seen)


def test_rx_framing_error_drops_the_byte_and_recovers():
    divisor = 10
    rx = UARTRx(divisor)
    start = 4
    bad = [0, *frame(0x3C)[1:9], 0]  # stop bit 0
    line = [1] * start + [level for level in bad for _ in range(divisor)]
    line += [1] * (2 * divisor)
    second = len(line)
    line += sender([0xC3], Fraction(divisor))
    seen = receive(rx, line)
    assert seen == [(start + rx.latency, "error", None), (second + rx.latency, "byte", 0xC3)]


def test_rx_break_gives_one_error_and_a_glitch_gives_nothing():
    divisor = 10
    rx = UARTRx(divisor)
    start = 4
    line = [1] * start + [0] * (30 * divisor) + [1] * (3 * divisor)
    # a low pulse shorter than the start-bit sample offset is not a start bit
    line += [0] * rx.sample_offset + [1] * (2 * divisor)
    good = len(line)
    line += sender([0x7E], Fraction(divisor))
    seen = receive(rx, line)
    assert seen == [(start + rx.latency, "error", None), (good + rx.latency, "byte", 0x7E)]


# --- Loopback ---------------------------------------------------------------------------------


class Loopback(Elaboratable):
    def __init__(self, divisor):
        self.tx = UARTTx(divisor)
        self.rx = UARTRx(divisor)

    def elaborate(self, platform):
        m = Module()
        m.submodules.tx = self.tx
        m.submodules.rx = self.rx
        m.d.comb += self.rx.rx.eq(self.tx.tx)
        return m


@parametrize_first_fast("divisor", [2, 3, 10])
def test_loopback_of_all_byte_values_back_to_back(divisor):
    dut = Loopback(divisor)
    data = list(range(256))
    got, taken = [], []

    async def testbench(ctx):
        ctx.set(dut.tx.data.valid, 1)
        cycle = 0
        queue = list(data)
        while len(got) < len(data):
            if queue:
                ctx.set(dut.tx.data.payload, queue[0])
            ctx.set(dut.tx.data.valid, bool(queue))
            if queue and ctx.get(dut.tx.data.ready):
                taken.append(cycle)
                queue.pop(0)
            if ctx.get(dut.rx.data.valid):
                got.append((cycle, ctx.get(dut.rx.data.payload)))
            assert not ctx.get(dut.rx.framing_error)
            assert cycle < 12 * divisor * len(data)
            await ctx.tick()
            cycle += 1

    run(dut, testbench)
    byte_time = 10 * divisor
    assert [value for _, value in got] == data
    # full rate: one byte per 10 bit times in both directions, no idle gap
    assert taken == [j * byte_time for j in range(len(data))]
    # the start bit is on the line one cycle after the byte is taken
    assert [cycle for cycle, _ in got] == [
        1 + j * byte_time + dut.rx.latency for j in range(len(data))
    ]
