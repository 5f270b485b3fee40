"""The appliance gateware in Amaranth's simulator, reachable as a serial port.

The simulated appliance's UART pins are bridged bit by bit to a pseudo-terminal, so the host
talks to it with exactly the code it uses for a board. A small scripted DUT drives the
appliance's pins with the markers of the suite's IL_A test (docs/tests.md): it answers
every asserting IRQ edge with an "ISR" (an ISR_ENTRY marker, an ISR_EXIT marker, a pin high
in between on edge channel 0) after which its thread marks THREAD, starts a new IL_A window
(START) every 4 ISRs and writes a PARAM marker every few thousand cycles as a heartbeat, so
a capture of it has IL-a-1 and IDL-a-1 tables. It keeps the marker port's spacing rule
(docs/markers.md). Every pin change it makes and every IRQ edge it
sees is logged with its cycle (``--truth``), so tests can check the appliance's stamps
against what really happened.

Run ``python -m latscope_gateware.sim_device --help``.
"""

import argparse
import json
import os
import random
import sys
import tty

from amaranth.hdl import ClockDomain, Elaboratable, Module, Signal
from amaranth.sim import Simulator

from latscope_defs.markers import Point, Test, encode
from latscope_defs.protocol import Source

from .appliance import Appliance, ApplianceConfig

__all__ = ["ScriptedDut", "PtyLink", "ScriptedLink", "SimulatedDevice", "main"]

#: ISRs per IL_A window of the scripted DUT (a START marker begins each; a capture of a
#: few ISRs still holds a window).
WINDOW = 4
#: Capture cycles the scripted DUT leaves between two markers: the marker port's sample
#: delay + 1 (docs/markers.md).
MARKER_SPACING = 3


def _il(point, arg=0):
    return encode(Test.IL_A, point, arg)


class ScriptedDut:
    """A deterministic stand-in for a DUT's pins: the IL_A test's markers around each IRQ,
    heartbeat markers, optional bursts that overrun the FIFO."""

    def __init__(
        self,
        *,
        seed=1,
        isr_delay=(20, 60),
        isr_length=(10, 30),
        thread_delay=(5, 25),
        background=2000,
        burst_every=0,
        burst_length=0,
    ):
        self.rng = random.Random(seed)
        self.isr_delay = isr_delay
        self.isr_length = isr_length
        self.thread_delay = thread_delay
        self.background = background
        self.burst_every = burst_every
        self.burst_length = burst_length
        self.truth = []  # (cycle the pin changed, source name, value)


async def _ticks(ctx, count, domain="sync"):
    # Not `ctx.tick().repeat(count)`: when the simulation ends, a background testbench
    # suspended inside `repeat` makes Python report an ignored exception at shutdown.
    for _ in range(count):
        await ctx.tick(domain)


class PtyLink:
    """The host end of the UART is a pseudo-terminal (non-blocking master fd)."""

    def __init__(self, fd):
        self.fd = fd

    def send(self, byte):
        try:
            os.write(self.fd, bytes([byte]))
        except OSError:
            pass  # host went away; keep simulating

    def receive(self, cycle):
        try:
            return os.read(self.fd, 64)
        except (BlockingIOError, OSError):
            return b""


class ScriptedLink:
    """The host end of the UART is a script: command bytes due at given cycles, and a buffer
    that collects everything the appliance sent. Deterministic, for tests."""

    def __init__(self, script):
        self.script = sorted(script, key=lambda item: item[0])  # [(cycle, bytes)]
        self.received = bytearray()

    def send(self, byte):
        self.received.append(byte)

    def receive(self, cycle):
        data = b""
        while self.script and self.script[0][0] <= cycle:
            data += self.script.pop(0)[1]
        return data


class _Bench(Elaboratable):
    """The appliance and the bench's own count of capture cycles, independent of the
    gateware's; with two clocks, the link's (``sync``) and the capture clock's domains, as a
    board's PLL gives them."""

    def __init__(self, appliance):
        self.appliance = appliance
        self.cycle = Signal(64)

    def elaborate(self, platform):
        m = Module()
        domain = self.appliance.config.capture_domain
        if domain != "sync":
            m.domains.sync = ClockDomain()
            m.domains.capture = ClockDomain(domain)
        m.submodules.appliance = self.appliance
        m.d[domain] += self.cycle.eq(self.cycle + 1)
        return m


class SimulatedDevice:
    """Builds the simulator for an appliance, a scripted DUT and a byte bridge.

    With two clocks (``config.link_clock_hz``) both run from time 0 in phase, as from one
    PLL; cycle numbers (the truth log's, ``max_cycles``, a :class:`ScriptedLink`'s) count
    capture cycles. Another DUT: a subclass's :meth:`dut_process`."""

    def __init__(
        self, config, dut, *, link, corrupt=(), max_cycles=None, truth=None, loopback=False
    ):
        self.config = config
        self.appliance = Appliance(config)
        self.bench = _Bench(self.appliance)
        self.truth = truth  # open text file for the JSON-lines log, or None
        self.dut = dut
        self.link = link
        self.corrupt = set(corrupt)  # indices of device->host bytes to corrupt
        self.max_cycles = max_cycles
        self.sent = 0
        self.cycle = 0
        # The self-test's jumper (docs/boards.md): the IRQ output wired to EDGE0 and to the
        # marker strobe, in place of the scripted DUT on those pins.
        self.loopback = loopback

    # Cycle numbers come from the bench's counter: pins set by a testbench right after clock
    # edge k are present during cycle k, when the counter reads k.

    @property
    def domain(self):
        """The domain of the pins' clock (the capture clock)."""
        return self.config.capture_domain

    async def ticks(self, ctx, count):
        """Waits ``count`` capture cycles."""
        await _ticks(ctx, count, self.domain)

    def log(self, ctx, source, value):
        """Logs a pin change of the DUT (or of the IRQ output) in the current cycle."""
        entry = (ctx.get(self.bench.cycle), source.name, value)
        self.dut.truth.append(entry)
        if self.truth is not None:
            self.truth.write(json.dumps(entry) + "\n")
            self.truth.flush()

    async def _clock(self, ctx):
        while self.max_cycles is None or self.cycle < self.max_cycles:
            await ctx.tick(self.domain)
            self.cycle += 1

    async def _uart_to_host(self, ctx):
        divisor = self.config.uart_divisor
        tx = self.appliance.uart_tx
        while True:
            await ctx.negedge(tx)  # start bit
            await _ticks(ctx, divisor // 2)  # middle of the start bit (of 2 cycles: the last)
            value = 0
            for bit in range(8):
                await _ticks(ctx, divisor)
                value |= ctx.get(tx) << bit
            await _ticks(ctx, divisor)  # stop bit
            if self.sent in self.corrupt:
                value ^= 0x24  # flip two bits on the "wire"
            self.sent += 1
            self.link.send(value)

    async def _host_to_uart(self, ctx):
        divisor = self.config.uart_divisor
        rx = self.appliance.uart_rx
        ctx.set(rx, 1)
        while True:
            await _ticks(ctx, 8 * divisor)
            for byte in self.link.receive(ctx.get(self.bench.cycle)):
                for level in [0, *((byte >> bit) & 1 for bit in range(8)), 1]:
                    ctx.set(rx, level)
                    await _ticks(ctx, divisor)

    async def dut_process(self, ctx):
        """The DUT: the scripted IL_A test (:class:`ScriptedDut`)."""
        app, dut = self.appliance, self.dut
        strobe, last = 0, -MARKER_SPACING

        async def marker(value):
            nonlocal strobe, last
            wait = last + MARKER_SPACING - ctx.get(self.bench.cycle)
            if wait > 0:
                await self.ticks(ctx, wait)
            strobe ^= 1
            ctx.set(app.marker_data, value)
            ctx.set(app.marker_strobe, strobe)
            self.log(ctx, Source.MARKER, value)
            last = ctx.get(self.bench.cycle)

        next_background = dut.background
        next_burst = dut.burst_every or None
        count = 0
        await marker(_il(Point.START, 1))
        while True:
            await ctx.tick(self.domain)
            if self._irq_pending:
                self._irq_pending = False
                await self.ticks(ctx, dut.rng.randint(*dut.isr_delay))
                await marker(_il(Point.ISR_ENTRY, count))
                ctx.set(app.edges, 1)
                self.log(ctx, Source.EDGE0, 1)
                await self.ticks(ctx, dut.rng.randint(*dut.isr_length))
                await marker(_il(Point.ISR_EXIT, count))
                ctx.set(app.edges, 0)
                self.log(ctx, Source.EDGE0, 0)
                await self.ticks(ctx, dut.rng.randint(*dut.thread_delay))
                await marker(_il(Point.THREAD))
                count += 1
                if count % WINDOW == 0:
                    await marker(_il(Point.START, 1))
            now = ctx.get(self.bench.cycle)
            if next_burst is not None and now >= next_burst:
                for n in range(dut.burst_length):
                    await marker(_il(Point.PARAM, n))
                    await self.ticks(ctx, 4)  # the marker port's minimum spacing
                next_burst = ctx.get(self.bench.cycle) + dut.burst_every
            if now >= next_background:
                await marker(_il(Point.PARAM, 0x7F))
                next_background = now + dut.background

    async def _jumper(self, ctx):
        # A wire: the IRQ pin's level reaches EDGE0 and the strobe in the cycle it changes.
        app = self.appliance
        while True:
            await ctx.tick(self.domain)
            level = ctx.get(app.irq)
            ctx.set(app.edges, level)
            ctx.set(app.marker_strobe, level)

    async def _irq_watch(self, ctx):
        # Logs every IRQ pin edge in the cycle it appears and tells the DUT about asserting
        # ones (the DUT may be busy; its reaction time is its own business).
        level = 0
        while True:
            await ctx.tick(self.domain)
            new = ctx.get(self.appliance.irq)
            if new != level:
                level = new
                self.log(ctx, Source.IRQ, new)
                if new:
                    self._irq_pending = True

    def run(self):
        self._irq_pending = False
        sim = Simulator(self.bench)
        if self.domain == "sync":
            sim.add_clock(1 / self.config.clock_hz)
        else:  # in phase, from time 0
            sim.add_clock(1 / self.config.link_clock_hz, phase=0)
            sim.add_clock(1 / self.config.clock_hz, phase=0, domain=self.domain)
        sim.add_testbench(self._clock)
        dut = self._jumper if self.loopback else self.dut_process
        for testbench in (self._uart_to_host, self._host_to_uart, dut, self._irq_watch):
            sim.add_testbench(testbench, background=True)
        sim.run()


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m latscope_gateware.sim_device",
        description="Run the latscope appliance gateware in simulation behind a pseudo-terminal.",
    )
    parser.add_argument("--clock-hz", type=int, default=100_000_000)
    parser.add_argument("--uart-divisor", type=int, default=4)
    parser.add_argument("--fifo-depth", type=int, default=64)
    parser.add_argument("--cycles", type=int, default=None, help="stop after this many cycles")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--burst-every",
        type=int,
        default=0,
        help="cycles between marker bursts that overrun the FIFO (0: none)",
    )
    parser.add_argument("--burst-length", type=int, default=0)
    parser.add_argument(
        "--background", type=int, default=2000, help="cycles between the DUT's background markers"
    )
    parser.add_argument(
        "--corrupt", default="", help="comma-separated indices of device-to-host bytes to corrupt"
    )
    parser.add_argument("--truth", help="write the DUT's pin changes here (JSON lines)")
    parser.add_argument(
        "--loopback",
        action="store_true",
        help="no DUT: the IRQ output is jumpered to EDGE0 and the marker strobe "
        "(the self-test's loopback wiring)",
    )
    args = parser.parse_args(argv)

    master, slave = os.openpty()
    tty.setraw(slave)
    os.set_blocking(master, False)
    print(f"PTY {os.ttyname(slave)}", flush=True)

    config = ApplianceConfig(
        clock_hz=args.clock_hz,
        uart_divisor=args.uart_divisor,
        fifo_depth=args.fifo_depth,
        flush_after=2000,
        command_timeout=100 * args.uart_divisor * 10,
    )
    dut = ScriptedDut(
        seed=args.seed,
        background=args.background,
        burst_every=args.burst_every,
        burst_length=args.burst_length,
    )
    corrupt = [int(index) for index in args.corrupt.split(",") if index]
    truth = open(args.truth, "w") if args.truth else None
    device = SimulatedDevice(
        config,
        dut,
        link=PtyLink(master),
        corrupt=corrupt,
        max_cycles=args.cycles,
        truth=truth,
        loopback=args.loopback,
    )
    try:
        device.run()
    except KeyboardInterrupt:
        pass
    print(f"simulated {device.cycle} cycles", file=sys.stderr)


if __name__ == "__main__":
    main()
