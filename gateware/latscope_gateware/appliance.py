"""The latscope appliance: front ends, time-stamper, IRQ generator, link; one clock domain."""

from amaranth.hdl import *
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out, connect

from amaranth.lib.cdc import FFSynchronizer

from latscope.protocol import MAGIC, SUMP_MODE_ENTRY, VERSION, Command, IdentifyReply, Source

from .bus_write import BusWriteSnoop
from .commands import CommandProcessor
from .edge_channels import EdgeChannels
from .irq_generator import IrqGenerator
from .marker_port import MarkerPort
from .stream_register import StreamRegister
from .streamer import EventStreamer
from .sump import SumpEngine
from .uart import UARTRx, UARTTx

__all__ = ["ApplianceConfig", "Appliance"]


class ApplianceConfig:
    """Build-time parameters of an appliance; the identify reply reports them.

    ``uart_divisor`` is capture-clock cycles per UART bit (120 MHz / 10 = 12 Mbaud).
    ``bus_window`` is ``(base word address, words)`` of the snooped Wishbone window, or None
    for a board without a bus front end. ``ddr_inputs``: the marker strobe and the edge
    channels come as DDR sample pairs (ports ``marker_strobe`` and ``edges`` twice as wide,
    ``Cat(early, late)``; see :mod:`.ddr_edges`) and stamps count half cycles
    (``stamp_shift`` 1). ``sump_depth``: samples of the SUMP device mode's memory (a power of
    two; see :mod:`.sump`), 0 for an appliance without SUMP mode.
    """

    def __init__(self, *, clock_hz, uart_divisor, board="sim", marker_width=16, edge_count=4,
                 bus_window=None, bus_addr_width=30, fifo_depth=512, sample_delay=2,
                 flush_after=None, command_timeout=None, ddr_inputs=False, sump_depth=512):
        self.clock_hz = clock_hz
        self.uart_divisor = uart_divisor
        self.board = board
        self.marker_width = marker_width
        self.edge_count = edge_count
        self.bus_window = bus_window
        self.bus_addr_width = bus_addr_width
        self.fifo_depth = fifo_depth
        self.sample_delay = sample_delay
        self.ddr_inputs = ddr_inputs
        # SUMP device mode's sample memory (block RAM): 512 samples of 24 bits are 3 of an
        # iCE40's 4-kbit RAMs.
        self.sump_depth = sump_depth
        # Close a segment once it is about 1 ms old, so an event reaches the host (which can
        # verify it only when its segment is closed) within about 1 ms at any event rate.
        self.flush_after = flush_after if flush_after is not None else max(64, clock_hz // 1000)
        # A command that stalls for 64 byte times is abandoned.
        self.command_timeout = command_timeout or 64 * 10 * uart_divisor


class Appliance(wiring.Component):
    """Everything between the pins and the host link.

    Pins: ``marker_data``/``marker_strobe`` (trace port), ``edges`` (edge channels), ``bus``
    (snooped Wishbone, when a window is configured), ``irq`` (to the DUT), ``uart_tx`` /
    ``uart_rx`` (the host link).
    """

    def __init__(self, config):
        self.config = config
        #: Stamp units per cycle, as a shift: 1 (half cycles) with DDR inputs.
        self.stamp_shift = int(config.ddr_inputs)
        self._marker = MarkerPort(data_width=config.marker_width,
                                  sample_delay=config.sample_delay, ddr=config.ddr_inputs)
        self._edges = EdgeChannels(count=config.edge_count, ddr=config.ddr_inputs)
        self._irq = IrqGenerator()
        self._bus = None
        if config.bus_window is not None:
            base, words = config.bus_window
            self._bus = BusWriteSnoop(addr_width=config.bus_addr_width, data_width=32,
                                      window_base=base, window_words=words)
        members = {
            "marker_data": In(config.marker_width),
            # One sample per pin, or a DDR sample pair, as the front ends take them.
            "marker_strobe": In(len(self._marker.strobe)),
            "edges": In(len(self._edges.pins)),
            "irq": Out(1),
            "uart_tx": Out(1, init=1),
            "uart_rx": In(1, init=1),
        }
        if self._bus is not None:
            members["bus"] = In(self._bus.bus.signature.flip())
        super().__init__(members)

    def sump_channels(self):
        """SUMP channels, channel 0 first: marker data, strobe, IRQ output, edge channels."""
        return ([f"D{n}" for n in range(self.config.marker_width)] + ["STROBE", "IRQ"]
                + [f"EDGE{n}" for n in range(self.config.edge_count)])

    def sources(self):
        """Event sources of this build and their value widths, in stream order."""
        sources = {Source.MARKER: self.config.marker_width}
        if self._bus is not None:
            sources[Source.BUS] = 32
        sources[Source.IRQ] = 1
        for n in range(self.config.edge_count):
            sources[Source(Source.EDGE0 + n)] = 1
        return sources

    def identify(self):
        """The IDENTIFY reply payload of this build."""
        board = self.config.board.encode("ascii")[:16].ljust(16, b"\0")
        return IdentifyReply.const({
            "magic": int.from_bytes(MAGIC, "little"),
            "version": VERSION,
            "clock_hz": self.config.clock_hz,
            "stamp_shift": self.stamp_shift,
            "marker_width": self.config.marker_width,
            "edge_count": self.config.edge_count,
            "bus_width": 32 if self._bus is not None else 0,
            "fifo_depth": self.config.fifo_depth,
            **self._latencies(),
            "board": list(board),
        })

    def _latencies(self):
        """Pin-to-stamp latencies in stamp units (cycles, or half cycles with DDR inputs)."""
        # The bus and the IRQ output change on clock edges: their latencies are whole cycles.
        return {
            "marker_latency": self._marker.stamp_latency,
            "bus_latency": (self._bus.latency if self._bus is not None else 0)
                           << self.stamp_shift,
            "edge_latency": self._edges.stamp_latency,
            "irq_latency": self._irq.latency << self.stamp_shift,
        }

    def elaborate(self, platform):
        config = self.config
        m = Module()
        entering_sump = Signal()         # from _link_modes, a cycle late: the capture stops
        sources = self.sources()
        m.submodules.marker = marker = self._marker
        m.submodules.edges = edges = self._edges
        m.submodules.irq_generator = irq = self._irq
        m.submodules.streamer = streamer = EventStreamer(
            sources, marker_width=config.marker_width, fifo_depth=config.fifo_depth,
            flush_after=config.flush_after, stamp_shift=self.stamp_shift)
        m.submodules.commands = commands = CommandProcessor(
            self.identify(), timeout=config.command_timeout)
        m.submodules.uart_tx = uart_tx = UARTTx(divisor=config.uart_divisor)
        m.submodules.uart_rx = uart_rx = UARTRx(divisor=config.uart_divisor)

        m.d.comb += [
            marker.data.eq(self.marker_data),
            marker.strobe.eq(self.marker_strobe),
            edges.pins.eq(self.edges),
            self.irq.eq(irq.irq),
            self.uart_tx.eq(uart_tx.tx),
            uart_rx.rx.eq(self.uart_rx),
        ]
        if "half" in streamer.signature.members:        # stamps count half cycles
            # Half bits in stream order; the IRQ output and the bus change on clock edges.
            half = {Source.MARKER: marker.half}
            half |= {Source(Source.EDGE0 + n): edges.half[n] for n in range(config.edge_count)}
            m.d.comb += streamer.half.eq(Cat(half.get(source, Const(0)) for source in sources))
        if self._bus is not None:
            m.submodules.bus = bus = self._bus
            connect(m, wiring.flipped(self.bus), bus.bus)

        # Each source's events reach the streamer only if START enabled that source.
        outputs = {Source.MARKER: marker.events, Source.IRQ: irq.events}
        if self._bus is not None:
            outputs[Source.BUS] = bus.events
        for n in range(config.edge_count):
            outputs[Source(Source.EDGE0 + n)] = edges.events[n]
        for source, events in outputs.items():
            port = getattr(streamer, source.name.lower())
            m.d.comb += [
                port.valid.eq(events.valid & commands.sources.sources[int(source)]),
                port.payload.eq(events.payload),
            ]

        capturing = Signal()
        with m.If(commands.start):
            m.d.sync += capturing.eq(1)
        with m.If(commands.stop | entering_sump):
            m.d.sync += capturing.eq(0)

        irq_edges = Signal(32)
        with m.If(commands.start):
            m.d.sync += irq_edges.eq(0)
        with m.Elif(capturing & irq.events.valid & irq.events.payload):
            m.d.sync += irq_edges.eq(irq_edges + 1)

        connect(m, commands.replies, streamer.replies)
        # The bytes to send reach the transmitter through a register slice, so that the
        # handshake with it is not one path with the serializer's and the mode switch's.
        m.submodules.tx_register = tx_register = StreamRegister(8)
        connect(m, tx_register.o, uart_tx.data)
        self._link_modes(m, uart_rx, tx_register.i, commands, streamer, entering_sump)
        m.d.comb += [
            streamer.start.eq(commands.start),
            streamer.capturing.eq(capturing),
            irq.config.eq(commands.irq_config),
            irq.apply.eq(commands.irq_apply),
            commands.status.capturing.eq(capturing),
            commands.status.events.eq(streamer.events),
            commands.status.lost.eq(streamer.lost),
            commands.status.fifo_max.eq(streamer.fifo_max),
            commands.status.irq_edges.eq(irq_edges),
        ]
        return m

    def _link_modes(self, m, uart_rx, tx_bytes, commands, streamer, entering_sump):
        """The host link carries latscope's protocol or, in SUMP mode, SUMP's.

        A SUMP RESET or ID byte that arrives between latscope commands switches to SUMP mode:
        the capture stops, the event stream is dropped and the link carries the SUMP engine's
        bytes only. latscope's IDENTIFY, arriving between SUMP commands, switches back.
        """
        config = self.config
        if not config.sump_depth:
            connect(m, uart_rx.data, commands.rx)
            connect(m, streamer.bytes, tx_bytes)
            return
        names = self.sump_channels()
        m.submodules.sump = sump = SumpEngine(channels=len(names), depth=config.sump_depth,
                                             clock_hz=config.clock_hz, version=str(VERSION))
        # The pins as SUMP sees them, through a synchronizer of their own; the IRQ output
        # goes through it too, so that every channel shows its pin with the same delay. Of a
        # DDR sample pair the early (rising-edge) sample is taken.
        strobe, edges = self.marker_strobe[0], self.edges[:config.edge_count]
        m.submodules.sump_synchronizer = FFSynchronizer(
            Cat(self.marker_data, strobe, self.irq, edges), sump.sample, stages=2)

        sump_mode = Signal()
        byte = uart_rx.data
        is_entry = Cat(byte.payload == code for code in SUMP_MODE_ENTRY).any()
        to_sump = Mux(sump_mode, ~(sump.idle & (byte.payload == Command.IDENTIFY)),
                      commands.idle & is_entry)
        m.d.comb += [
            sump.rx.valid.eq(byte.valid & to_sump),
            sump.rx.payload.eq(byte.payload),
            commands.rx.valid.eq(byte.valid & ~to_sump),
            commands.rx.payload.eq(byte.payload),
        ]
        m.d.sync += entering_sump.eq(byte.valid & to_sump & ~sump_mode)
        with m.If(byte.valid):
            m.d.sync += sump_mode.eq(to_sump)

        # The SUMP engine's bytes come through a register slice of their own (its reply ROM
        # and readback multiplexers are slow), as the streamer's come from a register.
        m.submodules.sump_tx = sump_tx = StreamRegister(8)
        connect(m, sump.tx, sump_tx.i)
        with m.If(sump_mode):
            m.d.comb += [
                tx_bytes.valid.eq(sump_tx.o.valid),
                tx_bytes.payload.eq(sump_tx.o.payload),
                sump_tx.o.ready.eq(tx_bytes.ready),
                streamer.bytes.ready.eq(1),     # the stopped capture's last bytes are dropped
            ]
        with m.Else():
            m.d.comb += [
                tx_bytes.valid.eq(streamer.bytes.valid),
                tx_bytes.payload.eq(streamer.bytes.payload),
                streamer.bytes.ready.eq(tx_bytes.ready),
            ]
