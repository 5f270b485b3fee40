"""The HX8K's capture path at the SPI link's real rate (docs/spi-link.md): its encoder and
event FIFO (``CapturePipeline`` with the board's FIFO depth, segment age and short records)
feeding a ``SpiTarget``, on the board's link clock, read by a bus-functional model of the
FT2232H's MPSSE at the board's ``spi_hz`` in the READ transactions the host queues
(``latscope.link.spi_link``), with the pause between them that the queue leaves
(``latscope.link.mpsse``: its commands executed without clocking, at the assumed bound per
command).

Differences from the appliance: markers go straight into the pipeline's marker port (no
pins, synchronizers or gearbox, so stamps count link clock cycles), and the pipeline's bytes
go straight to the target (the appliance has a one-byte register slice between them).
"""

from dataclasses import dataclass

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.sim import Simulator

from latscope.link.mpsse import ASSUMED_COMMAND_S, transaction_commands
from latscope.link.parser import StreamParser
from latscope.link.spi_link import READ_BYTES
from latscope_boards import get_board
from latscope_defs.protocol import GATEWARE_VERSION, Source
from latscope_defs.spi_link import READ, Dechunker
from latscope_gateware.capture_pipeline import CapturePipeline
from latscope_gateware.spi_target import SpiTarget

from .gateware_sim import start_pipeline

BOARD = get_board("ice40-hx8k-b-evn")
#: The pause between queued READ transactions: the commands the MPSSE executes without
#: clocking (bench/link_efficiency.py derives the duty from the same).
PAUSE_S = len(transaction_commands(READ, READ_BYTES)) * ASSUMED_COMMAND_S


#: Bytes in a row that bring no stream byte once the capture has stopped: empty chunks, the
#: stream is through (the simulation ends there, inside the READ transaction).
THROUGH = 16


@dataclass
class Result:
    sent: list  # (stamp, source, value) of the markers applied
    received: list  # the events the host's parser decoded, LOSS records excluded
    lost: dict  # {source: events} the parser's loss counts say
    segments_bad: int
    stream_bytes: int  # the stream's bytes the host took (the chunks' length bytes not)
    levels: list  # each chunk's length: the SPI target's FIFO level then (at most 255)
    fifo_max: int  # the event FIFO's highest level
    sim_s: float  # simulated seconds, the stream read through


def run(events, *, sources=None, read_bytes=READ_BYTES, pause_s=PAUSE_S, fifo_depth=None):
    """Applies ``events`` ((cycle, source, value) triples, cycles rising, one event of a
    source per cycle) to the HX8K's capture path while the MPSSE model reads it, then stops
    the capture and reads until the stream is through (:data:`THROUGH`); returns a :class:`Result`.
    ``sources``: {source: value width} of the pipeline, if not the HX8K's marker port alone;
    ``fifo_depth``: the event FIFO's, if not the board's."""
    config = BOARD.appliance_config()
    link_hz, sck_hz = config.link_clock_hz, BOARD.spi_hz
    half = 1 / sck_hz / 2
    m = Module()
    m.submodules.pipeline = pipeline = CapturePipeline(
        sources or {Source.MARKER: config.marker_width},
        fifo_depth=fifo_depth or config.fifo_depth,
        flush_after=config.flush_after,
        short_records=config.short_records,
    )
    m.submodules.target = target = SpiTarget()
    wiring.connect(m, pipeline.bytes, target.data)
    bus = target.bus
    sent, stream, chunks, levels = [], bytearray(), Dechunker(), []
    state = {"applying": True, "fifo_max": 0, "sim_s": 0.0}

    async def apply(ctx):
        await start_pipeline(ctx, pipeline)
        cycle, ports = 0, []
        for at, source, value in events:
            if at > cycle:
                if ports:  # the events of this cycle are taken at its tick
                    await ctx.tick()
                    cycle += 1
                    for port in ports:
                        ctx.set(port.valid, 0)
                    ports = []
                if at > cycle:
                    await ctx.tick().repeat(at - cycle)
                cycle = at
            port = getattr(pipeline, Source(source).name.lower())
            ctx.set(port.valid, 1)
            ctx.set(port.payload, value)
            ports.append(port)
            sent.append((ctx.get(pipeline.now), source, value))
        await ctx.tick()
        for port in ports:
            ctx.set(port.valid, 0)
        ctx.set(pipeline.enable, 0)
        ctx.set(pipeline.stopping, 1)
        state["fifo_max"] = ctx.get(pipeline.fifo_max)
        state["applying"] = False

    async def mpsse(ctx):
        # Mode 0: the MPSSE changes COPI after SCK's falling edge and takes CIPO at the next
        # one (AN_108's 0x24, as latscope.link.mpsse reads): the bit the target shifted out
        # at the previous falling edge, sampled here just before this one.
        idle = 0  # bytes in a row that brought no stream byte
        while True:
            ctx.set(bus.cs_n, 0)
            await ctx.delay(half)
            for index in range(1 + read_bytes):
                out = READ if index == 0 else 0
                byte = 0
                for bit in range(8):
                    ctx.set(bus.copi, out >> (7 - bit) & 1)
                    await ctx.delay(half)
                    ctx.set(bus.sck, 1)
                    await ctx.delay(half)
                    byte = byte << 1 | ctx.get(bus.cipo)
                    ctx.set(bus.sck, 0)
                state["sim_s"] += 16 * half
                if index:
                    brought = chunks.feed(bytes([byte]))
                    stream.extend(brought)
                    if not brought:  # a length byte: what the target's FIFO held
                        levels.append(byte)
                    idle = 0 if brought else idle + 1
                    if idle >= THROUGH and not state["applying"]:
                        ctx.set(bus.cs_n, 1)
                        return
            ctx.set(bus.cs_n, 1)
            await ctx.delay(pause_s)
            state["sim_s"] += half + pause_s

    sim = Simulator(m)
    sim.add_clock(1 / link_hz)
    sim.add_testbench(apply, background=True)
    sim.add_testbench(mpsse)
    sim.run()
    parser = StreamParser(version=GATEWARE_VERSION)
    events = parser.feed(bytes(stream))
    received = [
        event
        for event in zip(events.stamp.tolist(), events.source.tolist(), events.value.tolist())
        if event[1] != Source.LOSS
    ]
    return Result(
        sent=sorted(sent, key=lambda event: event[:2]),  # same-cycle events in source order
        received=received,
        lost=dict(parser.stats.lost),
        segments_bad=parser.stats.segments_bad,
        stream_bytes=len(stream),
        levels=levels,
        fifo_max=state["fifo_max"],
        sim_s=state["sim_s"],
    )


def every(count, rate_hz, values, source=Source.MARKER):
    """``count`` events of ``source`` at ``rate_hz`` on the link clock, their values from
    ``values`` in turn: (cycle, source, value) triples."""
    link_hz = BOARD.appliance_config().link_clock_hz
    return [(round(n * link_hz / rate_hz), source, values[n % len(values)]) for n in range(count)]
