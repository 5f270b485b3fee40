"""The SPI link's target against a bus-functional model of the FT2232H's MPSSE as master:
SPI mode 0 at 30 MHz, with gaps between transactions and between bytes as a real FT2232H
leaves them, on a board's real link clock (docs/spi-link.md)."""

import random

import pytest
from amaranth.sim import Simulator

from latscope.link.parser import StreamParser
from latscope_defs.protocol import GATEWARE_VERSION, Source
from latscope_defs.spi_link import MAX_CHUNK, READ, RELEASE, Dechunker
from latscope_gateware.spi_target import SpiTarget
from support.marker_stream import marker_capture

SCK_HZ = 30_000_000  # the MPSSE's fastest clock (60 MHz / 2)
HALF = 1 / SCK_HZ / 2
#: The link clocks of the iCE40 boards: the HX8K's one appliance clock, the iCEBreaker's.
HX8K_LINK_HZ = 84_000_000
ICEBREAKER_LINK_HZ = 36_000_000


class MpsseMaster:
    """The MPSSE as SPI master, mode 0, MSB first: COPI changes after SCK's falling edge
    (the MPSSE's "out on -ve edge"), CIPO is sampled at the rising edge ("in on +ve edge").
    It checks that the target drives CIPO exactly when it should. ``bus``: the target's
    ``SpiBus``."""

    def __init__(self, bus, rng):
        self.bus, self.rng = bus, rng

    async def transaction(self, ctx, opcode, count, byte_gaps=False):
        """CS# low, ``opcode``, ``count`` bytes read with COPI low, CS# high; returns them."""
        dut = self.bus
        ctx.set(dut.cs_n, 0)
        await ctx.delay(HALF)
        read = bytearray()
        for index, out in enumerate([opcode] + [0] * count):
            byte = 0
            for bit in range(8):
                ctx.set(dut.copi, out >> (7 - bit) & 1)
                await ctx.delay(HALF)
                # What the target drives: nothing during the opcode, CIPO after READ's.
                assert ctx.get(dut.cipo_oe) == (index > 0 and opcode == READ)
                byte = byte << 1 | ctx.get(dut.cipo)
                ctx.set(dut.sck, 1)
                await ctx.delay(HALF)
                ctx.set(dut.sck, 0)
            if index:
                read.append(byte)
            if byte_gaps and self.rng.random() < 0.05:  # the MPSSE pauses between bytes
                await ctx.delay(self.rng.randint(1, 8) * 2 * HALF)
        await ctx.delay(HALF)
        ctx.set(dut.cs_n, 1)
        await ctx.delay(self.rng.uniform(0.2e-6, 2e-6))  # between USB transfers
        return bytes(read)


def simulate(link_hz, stream, reads, opcodes=()):
    """Offers ``stream`` to a SpiTarget at one byte per link cycle while the master runs
    the ``opcodes`` transactions (opcode, bytes) and then READ transactions of ``reads``
    bytes until the stream is through; returns (the bytes of the READ transactions in order,
    what each of ``opcodes`` read, ``selected`` after each transaction)."""
    dut = SpiTarget()
    rng = random.Random(7)
    master = MpsseMaster(dut.bus, rng)
    got, others, selected = Dechunker(), [], []
    raw = bytearray()
    received = bytearray()

    async def writer(ctx):
        for byte in stream:
            ctx.set(dut.data.valid, 1)
            ctx.set(dut.data.payload, byte)
            await ctx.tick().until(dut.data.ready)
        ctx.set(dut.data.valid, 0)

    async def host(ctx):
        for opcode, count in opcodes:
            others.append(await master.transaction(ctx, opcode, count))
            await ctx.delay(4 / link_hz)  # the synchronizer's latency, in link cycles
            selected.append(ctx.get(dut.selected))
        while len(received) < len(stream):
            data = await master.transaction(ctx, READ, reads, byte_gaps=True)
            raw.extend(data)
            received.extend(got.feed(data))
            await ctx.delay(4 / link_hz)
            selected.append(ctx.get(dut.selected))

    sim = Simulator(dut)
    sim.add_clock(1 / link_hz)
    sim.add_testbench(writer, background=True)
    sim.add_testbench(host)
    sim.run()
    return bytes(raw), bytes(received), others, selected


@pytest.mark.parametrize("link_hz", [HX8K_LINK_HZ, ICEBREAKER_LINK_HZ])
def test_a_capture_reaches_the_parser_exact_and_whole(link_hz):
    """A capture's stream, offered as fast as the link domain can (so the FIFO fills and
    the link runs at SCK's rate), read in 512-byte READ transactions: every byte arrives,
    in order, and the host's parser decodes every event exact."""
    stream, sent = marker_capture(600, link_hz, seed=31)
    raw, received, _, selected = simulate(link_hz, stream, reads=512)
    assert received == stream
    parser = StreamParser(version=GATEWARE_VERSION)
    events = parser.feed(received)
    decoded = list(zip(events.stamp.tolist(), events.source.tolist(), events.value.tolist()))
    assert [e for e in decoded if e[1] == Source.MARKER] == sent
    assert parser.stats.segments_bad == 0 and parser.stats.lost == {}
    assert all(selected)
    # A busy stream travels in full chunks, one length byte in 256: every chunk before the
    # stream's last byte is full but the first few (the FIFO was empty at the first READ).
    lengths = chunk_lengths(raw, len(stream))
    assert len(lengths) > 8
    assert lengths[3:-1] == [MAX_CHUNK] * (len(lengths) - 4)


def chunk_lengths(raw, through):
    """The lengths of the chunks in ``raw`` until ``through`` stream bytes are in them."""
    lengths, at, carried = [], 0, 0
    while carried < through:
        lengths.append(raw[at])
        carried += raw[at]
        at += 1 + raw[at]
    return lengths


def test_an_idle_target_sends_empty_chunks_and_other_transactions_leave_cipo_alone():
    """Before anything is selected the flash's transactions (deep power-down, release, a
    read of its ID) find CIPO undriven and select nothing; READ selects the link, and with
    nothing to send it reads as empty chunks (zeros); RELEASE gives the stream back."""
    _, received, others, selected = simulate(
        HX8K_LINK_HZ,
        b"",
        reads=16,
        opcodes=[(0xB9, 0), (0xAB, 3), (0x9F, 3), (READ, 16), (RELEASE, 2), (0xAB, 0)],
    )
    assert received == b""
    assert others[3] == bytes(16)  # 16 empty chunks
    assert selected == [0, 0, 0, 1, 0, 0]


@pytest.mark.parametrize("name", ["ice40-hx8k-b-evn", "icebreaker"])
def test_the_appliance_sends_replies_over_the_link_the_host_selected(name):
    """The appliance of each iCE40 board's SPI-link build, as that build configures it (the
    HX8K's shipped build, 84 MHz; the iCEBreaker's ``spi`` variant, 36 MHz, long records
    only, no IRQ trigger), 12 Mbaud: after a READ transaction IDENTIFY's reply (a command
    on the UART) comes over SPI, naming the build, and the UART's transmitter stays idle;
    after RELEASE the next reply goes out on the UART again."""
    from latscope.link.identity import Identity
    from latscope_boards import spi_builds
    from latscope_defs.protocol import MAGIC, Command
    from latscope_gateware.appliance import Appliance

    board = next(iter(spi_builds(name).values()))
    config = board.appliance_config()
    link_hz, baud = config.link_clock_hz, board.baud
    dut = Appliance(config)
    master = MpsseMaster(dut.spi, random.Random(3))
    dechunker, received, uart_starts = Dechunker(), bytearray(), []

    async def send_command(ctx, byte):
        for level in [0, *(byte >> bit & 1 for bit in range(8)), 1]:
            ctx.set(dut.uart_rx, level)
            await ctx.delay(1 / baud)

    async def watch_uart(ctx):
        async for _clk, _rst, tx in ctx.tick().sample(dut.uart_tx):
            if not tx:
                uart_starts.append(1)  # a start bit (the line is idle high)

    async def host(ctx):
        await master.transaction(ctx, READ, 4)
        await send_command(ctx, Command.IDENTIFY)
        for _ in range(20):
            received.extend(dechunker.feed(await master.transaction(ctx, READ, 16)))
        assert not uart_starts  # nothing on the UART while SPI is selected
        await master.transaction(ctx, RELEASE, 0)
        await ctx.delay(1e-6)
        await send_command(ctx, Command.IDENTIFY)
        await ctx.delay(20e-6)

    sim = Simulator(dut)
    sim.add_clock(1 / link_hz)
    sim.add_testbench(watch_uart, background=True)
    sim.add_testbench(host)
    sim.run()
    parser = StreamParser(version=GATEWARE_VERSION)
    parser.feed(bytes(received))
    opcode, payload = parser.replies.popleft()
    assert opcode == Command.IDENTIFY and payload[:4] == MAGIC
    # The name the host's --link spi check looks for (latscope.link.presets.use_spi_link).
    assert Identity.from_reply(payload).board == board.identify_name
    assert uart_starts  # the second reply went out on the UART
