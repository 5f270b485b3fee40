"""The SPI link's target: the stream's bytes to the host over the configuration-flash pins,
read by the FT2232H's MPSSE as SPI master (docs/spi-link.md).

SCK (up to 30 MHz) is too fast to sample with the appliance clocks (84 MHz on the HX8K, 36 MHz
on the iCEBreaker: finding its edges would take at least three samples per half period), so
the target's logic is clocked by SCK itself, in three local clock domains:

* ``spi_rise`` (rising edges, reset while CS# is high): the bit counter, the opcode's bits and
  the transaction's phase; a transaction's state starts afresh at each CS# fall;
* ``spi_hold`` (rising edges, never reset): whether the stream goes to the SPI link, which
  outlives transactions;
* ``spi_fall`` (falling edges, never reset): the output shift register, the bytes left in the
  current chunk, and the asynchronous FIFO's read side; the byte loaded at the falling edge
  that ends a transaction's last byte waits there for the next READ transaction.

Mode 0: CIPO changes after SCK's falling edge and the host samples it at the next rising
edge, so the first bit of a byte must be on CIPO before its first rising edge; it is (the
shift register holds the whole byte from the previous byte's last falling edge).
"""

from amaranth.hdl import *
from amaranth.lib import enum, stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.fifo import AsyncFIFO
from amaranth.lib.wiring import In, Out

from latscope_defs.spi_link import MAX_CHUNK, READ, RELEASE

__all__ = ["SpiBus", "SpiTarget"]


class SpiBus(wiring.Signature):
    """The SPI bus as the target sees it: ``sck`` (a clock), ``cs_n``, ``copi`` in, ``cipo``
    and its output enable ``cipo_oe`` out."""

    def __init__(self):
        super().__init__(
            {
                "sck": In(1),
                "cs_n": In(1, init=1),
                "copi": In(1),
                "cipo": Out(1),
                "cipo_oe": Out(1),
            }
        )


class _Phase(enum.Enum, shape=2):
    OPCODE = 0  #: the opcode byte is arriving
    READ = 1  #: a READ transaction: the target drives CIPO
    OTHER = 2  #: a RELEASE, or the flash's transaction: the target keeps off CIPO


class SpiTarget(wiring.Component):
    """SPI mode 0 target sending the stream's bytes in chunks (docs/spi-link.md).

    Ports
    -----
    data : In(stream.Signature(8))
        The stream's bytes, in the ``sync`` (link) domain; taken while the FIFO has room.
    selected : Out(1)
        ``sync`` domain: the host has selected the SPI link (a READ transaction since the
        last RELEASE), through a synchronizer.
    bus : Out(SpiBus())
        The bus, straight from the pins (``sck`` is a clock); ``cipo_oe`` is on only in a
        READ transaction after its opcode.

    ``fifo_depth``: bytes between the link domain and SCK's, a power of two; the chunk's
    length byte gives what the FIFO holds, up to :data:`MAX_CHUNK`, so a depth of 256 makes
    the chunks of a busy stream full (one length byte in 256).
    """

    def __init__(self, fifo_depth=256):
        self.fifo_depth = fifo_depth
        super().__init__(
            {
                "data": In(stream.Signature(8)),
                "selected": Out(1),
                "bus": Out(SpiBus()),  # the members keep the directions SpiBus gives
            }
        )

    def elaborate(self, platform):
        m = Module()
        bus = self.bus
        m.domains.spi_rise = rise = ClockDomain(async_reset=True, local=True)
        m.domains.spi_hold = hold = ClockDomain(reset_less=True, local=True)
        # Falling edges as the rising edges of SCK inverted: the FIFO's reset synchronizer
        # takes only a rising-edge domain (yosys folds the inversion into the flip-flops).
        m.domains.spi_fall = fall = ClockDomain(reset_less=True, local=True)
        m.d.comb += [
            rise.clk.eq(bus.sck),
            rise.rst.eq(bus.cs_n),
            hold.clk.eq(bus.sck),
            fall.clk.eq(~bus.sck),
        ]

        m.submodules.fifo = fifo = AsyncFIFO(
            width=8, depth=self.fifo_depth, w_domain="sync", r_domain="spi_fall"
        )
        wiring.connect(m, wiring.flipped(self.data), fifo.w_stream)

        # Rising edges: the transaction's bit count, opcode and phase.
        bits = Signal(3)  # rising edges of this transaction, modulo 8
        opcode = Signal(7)  # the opcode's bits so far, the first one highest
        phase = Signal(_Phase)
        byte_end = Signal()  # this rising edge ended a byte of a READ transaction
        last_bit = bits == 7
        byte = Cat(bus.copi, opcode)
        m.d.spi_rise += [
            bits.eq(bits + 1),
            opcode.eq(byte[:7]),
            byte_end.eq(last_bit & (phase == _Phase.READ)),
        ]
        with m.If(last_bit & (phase == _Phase.OPCODE)):
            m.d.spi_rise += phase.eq(Mux(byte == READ, _Phase.READ, _Phase.OTHER))

        selected = Signal()
        with m.If(last_bit & (phase == _Phase.OPCODE) & ~bus.cs_n):
            with m.If(byte == READ):
                m.d.spi_hold += selected.eq(1)
            with m.Elif(byte == RELEASE):
                m.d.spi_hold += selected.eq(0)
        m.submodules.selected_sync = FFSynchronizer(selected, self.selected)

        # Falling edges: shift the byte out, and load the next one at the falling edge after
        # a byte's last rising edge (``byte_end``): a length byte, or the chunk's next byte.
        # A length promises only bytes the FIFO holds already, so every one is there.
        shifter = Signal(8)  # the high bit is on CIPO
        left = Signal(range(MAX_CHUNK + 1))  # the current chunk's bytes still to load
        with m.If(byte_end):
            with m.If(left == 0):
                length = Mux(fifo.r_level > MAX_CHUNK, MAX_CHUNK, fifo.r_level)
                m.d.spi_fall += [shifter.eq(length), left.eq(length)]
            with m.Else():
                m.d.comb += fifo.r_en.eq(1)
                m.d.spi_fall += [shifter.eq(fifo.r_data), left.eq(left - 1)]
        with m.Elif((phase == _Phase.READ) & (bits != 0)):
            m.d.spi_fall += shifter.eq(shifter << 1)

        m.d.comb += [
            bus.cipo.eq(shifter[7]),
            bus.cipo_oe.eq(~bus.cs_n & (phase == _Phase.READ)),
        ]
        return m
