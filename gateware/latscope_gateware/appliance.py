"""The latscope appliance: front ends, time-stamper, IRQ generator, link; two clock domains.

The capture domain (``capture``) holds everything that decides a stamp: the input
synchronizers (and DDR registers), the marker port and edge channels, the bus snoop, the IRQ
output's pin stage, the stamp counter, event selection and the FIFO's write side. The link
domain (``sync``) holds the rest: the FIFO's read side, encoder, serializer, UART, commands,
SUMP mode and the IRQ generator's timing. A single-clock build
(``ApplianceConfig.link_clock_hz`` None: simulation, tests) runs both parts in ``sync`` and
pays for no crossing: a synchronous FIFO, and direct signals where two clocks need
synchronizers or Gray counters.

The IRQ output's edges are events with exact stamps: its pin and its event come from
flip-flops loaded at the same capture clock edge (latency 0, ``irq_latency`` in IDENTIFY).
With one clock those are the IRQ generator's own. With two, the generator (its 33-bit interval
draws and countdowns, which limited the capture clock) runs in the link domain and only
:class:`.irq_pin.IrqPinStage` (a synchronizer, the pin flip-flop and the event) in the capture
domain: the stamps stay exact, and the IRQ periods and widths count link clock cycles
(docs/protocol.md, IRQ_CONFIG).

The IRQ trigger (:class:`.irq_trigger.IrqTrigger`) runs in the capture domain on every build,
on the front ends' events, and while enabled drives the pin in place of the periodic
generator, whose asserting edges may arm it: its delays are exact to the capture cycle
(``trigger_latency`` in IDENTIFY; docs/protocol.md, "Triggered IRQs").
"""

from amaranth.hdl import *
from amaranth.lib import wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out, connect

from latscope_defs.protocol import (
    GATEWARE_VERSION,
    MAGIC,
    SUMP_MODE_ENTRY,
    TRIGGER_SOURCES,
    Command,
    IdentifyReply,
    IrqValue,
    Source,
)

from .bus_write import BusWriteSnoop
from .capture_control import CaptureControl
from .capture_pipeline import CapturePipeline
from .commands import CommandProcessor
from .ddr_edges import stamp_shift_of
from .edge_channels import EdgeChannels
from .irq_generator import IrqGenerator
from .irq_pin import LINK_TO_PIN, IrqPinStage
from .irq_trigger import IrqTrigger
from .marker_port import MarkerPort
from .memory_bus import MemoryBusPort
from .spi_target import SpiBus, SpiTarget
from .stream_register import StreamRegister
from .sump import SumpEngine
from .uart import UARTRx, UARTTx

__all__ = ["ApplianceConfig", "Appliance"]


class ApplianceConfig:
    """Build-time parameters of an appliance; the identify reply reports them.

    ``clock_hz`` is the capture clock (stamps count its cycles);
    ``link_clock_hz`` the link clock (UART, commands, encoder, SUMP, IRQ periods and widths),
    or None for a single-clock build, where the capture logic runs in ``sync`` too. With a link
    clock the appliance needs a ``capture`` clock domain from its parent (a board's PLL).
    ``uart_divisor`` is link-clock cycles per UART bit (120 MHz / 10 = 12 Mbaud).
    ``bus_window`` is ``(base word address, words)`` of the snooped Wishbone window, or None
    for a board without a bus front end. ``memory_bus``: the other BUS front end, the
    appliance as a memory on the DUT's asynchronous bus (:class:`.MemoryBusPort`, at
    ``input_phases`` samples a cycle), as its bus's parameters (``data_width``,
    ``address_bits``, ``cs_active_low``, ``we_active_low``), or None; a build has one BUS
    source, so at most one of the two. ``input_phases``: samples per cycle of the marker
    strobe and the edge channels, 1, 2 (DDR input registers) or 4 (the ECP5's IDDRX2F
    gearbox); with more than one, ports ``marker_strobe`` and ``edges`` are that many times
    as wide, ``Cat(s_0, ..., s_{N-1})`` earliest first (see :mod:`.ddr_edges`), and stamps
    count 1/N cycles (``stamp_shift`` log2 N). ``ddr_inputs=True`` is ``input_phases=2``.
    ``sump_depth``: samples of the SUMP device mode's memory (a power of
    two; see :mod:`.sump`), 0 for an appliance without SUMP mode. ``word_xor``: the two XOR
    networks, the IRQ generator's LFSR leap and the stream's CRC, written as word operations
    (:class:`.IrqGenerator` ``word_leap``, :class:`.records.WordCrc32`): the same logic, in a
    form that Verilator, which evaluates every signal every cycle, computes cheaply (the
    Verilator export with --word-xor; measured no faster in the full system, sim/README.md
    "Speed"); boards keep the bit-level XOR networks (False, the default). ``irq_trigger``:
    build the IRQ trigger (IDENTIFY ``trigger_latency`` 0 without it, which the host reads as
    "no trigger"); only a board's bring-up build leaves it out, for room.
    ``short_records``: the encoder may send short records (:class:`.short_form.ShortForm`);
    False: long records only, in version 4's layout (the iCEBreaker, for want of cells).
    ``spi_link``: the SPI link's target (:class:`.spi_target.SpiTarget`, docs/spi-link.md)
    on port ``spi``: the stream's bytes go there instead of to the UART while the host
    has selected it.
    """

    def __init__(
        self,
        *,
        clock_hz,
        uart_divisor,
        board="sim",
        marker_width=16,
        edge_count=4,
        bus_window=None,
        bus_addr_width=30,
        memory_bus=None,
        fifo_depth=512,
        sample_delay=2,
        flush_after=None,
        command_timeout=None,
        ddr_inputs=False,
        sump_depth=512,
        link_clock_hz=None,
        input_phases=None,
        word_xor=False,
        short_records=True,
        irq_trigger=True,
        spi_link=False,
    ):
        self.clock_hz = clock_hz
        self.link_clock_hz = link_clock_hz if link_clock_hz is not None else clock_hz
        #: The domain of the capture logic: ``capture``, or ``sync`` in a single-clock build.
        self.capture_domain = "sync" if link_clock_hz is None else "capture"
        self.uart_divisor = uart_divisor
        self.board = board
        self.marker_width = marker_width
        self.edge_count = edge_count
        self.bus_window = bus_window
        self.bus_addr_width = bus_addr_width
        if memory_bus is not None and bus_window is not None:
            raise ValueError("a build has one BUS source: a bus window or a memory bus, not both")
        self.memory_bus = dict(memory_bus) if memory_bus is not None else None
        self.fifo_depth = fifo_depth
        self.sample_delay = sample_delay
        self.input_phases = input_phases or (2 if ddr_inputs else 1)
        stamp_shift_of(self.input_phases)  # 1, 2 or 4
        # SUMP device mode's sample memory (block RAM): 512 samples of 24 bits are 3 of an
        # iCE40's 4-kbit RAMs.
        self.sump_depth = sump_depth
        self.word_xor = word_xor
        # Short records (protocol version 4, docs/protocol.md) cost the encoder a history of
        # four values per MARKER and BUS with their comparators; a board without the cells
        # for them sends long records only, still version 4 (the host reads both).
        self.short_records = short_records
        self.irq_trigger = irq_trigger
        self.spi_link = spi_link
        # Close a segment once it is about 1 ms old, so an event reaches the host (which can
        # verify it only when its segment is closed) within about 1 ms at any event rate.
        # (The encoder counts link cycles.)
        self.flush_after = (
            flush_after if flush_after is not None else max(64, self.link_clock_hz // 1000)
        )
        # A command that stalls for 64 byte times is abandoned.
        self.command_timeout = command_timeout or 64 * 10 * uart_divisor


class Appliance(wiring.Component):
    """Everything between the pins and the host link.

    Pins: ``marker_data``/``marker_strobe`` (trace port), ``edges`` (edge channels), ``bus``
    (snooped Wishbone, when a window is configured), ``membus_cs``, ``membus_we``,
    ``membus_address``, ``membus_data`` (the memory bus's pins, each with its
    ``input_phases`` samples as the marker strobe, when a memory bus is configured),
    ``irq`` (to the DUT, from a flip-flop in the capture domain), ``irq_next`` (what
    ``irq`` takes at the next capture clock edge: a board registers it in the pin's I/O cell
    instead, :func:`.irq_pin.show_irq`) and
    ``irq_oe`` (its output enable: off until the first IRQ_CONFIG, :meth:`_irq_drive`),
    ``uart_tx`` / ``uart_rx`` (the host link), ``capturing`` (high while a capture runs:
    from the cycle after START's execution to STOP; the simulation harness starts the DUT's
    CPU a fixed number of cycles after it rises, a board may show it on an LED).

    START also restarts the IRQ generator with its settings in force and its LFSR reseeded
    (docs/protocol.md), so the IRQ sequence of a capture is fixed relative to its START.
    """

    def __init__(self, config):
        self.config = config
        #: Stamp units per cycle, as a shift: 1 (half cycles) with DDR inputs, 2 (quarter
        #: cycles) with the IDDRX2F gearbox.
        self.stamp_shift = stamp_shift_of(config.input_phases)
        self._marker = MarkerPort(
            data_width=config.marker_width,
            sample_delay=config.sample_delay,
            phases=config.input_phases,
        )
        self._edges = EdgeChannels(count=config.edge_count, phases=config.input_phases)
        self._irq = IrqGenerator(word_leap=config.word_xor)
        #: The BUS source's front end: the bus snoop, the memory bus port or None.
        self._bus = None
        if config.memory_bus is not None:
            self._bus = MemoryBusPort(**config.memory_bus, phases=config.input_phases)
        if config.bus_window is not None:
            base, words = config.bus_window
            self._bus = BusWriteSnoop(
                addr_width=config.bus_addr_width,
                data_width=32,
                window_base=base,
                window_words=words,
            )
        self._trigger = None
        if config.irq_trigger:
            self._trigger = IrqTrigger(
                {
                    source: width
                    for source, width in self.sources().items()
                    if source in TRIGGER_SOURCES
                }
            )
        members = {
            "marker_data": In(config.marker_width),
            # One sample per pin, or a cycle's samples of each, as the front ends take them.
            "marker_strobe": In(len(self._marker.strobe)),
            "edges": In(len(self._edges.pins)),
            "irq": Out(1),
            "irq_next": Out(1),
            "irq_oe": Out(1),
            "capturing": Out(1),
            "uart_tx": Out(1, init=1),
            "uart_rx": In(1, init=1),
            # The board's clock-phase probe (protocol.ClockCheck bits, in the capture
            # domain); 0: none.
            "clock_check": In(7),
        }
        if isinstance(self._bus, BusWriteSnoop):
            members["bus"] = In(self._bus.bus.signature.flip())
        if config.spi_link:
            members["spi"] = Out(SpiBus())  # from and to the pins, as SpiBus says
        if isinstance(self._bus, MemoryBusPort):
            members |= {
                f"membus_{pins}": In(len(getattr(self._bus, pins)))
                for pins in ("cs", "we", "address", "data")
            }
        super().__init__(members)

    def sump_channels(self):
        """SUMP channels, channel 0 first: marker data, strobe, IRQ output, edge channels."""
        return (
            [f"D{n}" for n in range(self.config.marker_width)]
            + ["STROBE", "IRQ"]
            + [f"EDGE{n}" for n in range(self.config.edge_count)]
        )

    def sources(self):
        """Event sources of this build and their value widths, in stream order."""
        sources = {Source.MARKER: self.config.marker_width}
        if self._bus is not None:
            sources[Source.BUS] = 32
        sources[Source.IRQ] = IrqValue.as_shape().size
        for n in range(self.config.edge_count):
            sources[Source(Source.EDGE0 + n)] = 1
        return sources

    def identify(self):
        """The IDENTIFY reply payload of this build."""
        board = self.config.board.encode("ascii")[:16].ljust(16, b"\0")
        return IdentifyReply.const(
            {
                "magic": int.from_bytes(MAGIC, "little"),
                "version": GATEWARE_VERSION,
                "clock_hz": self.config.clock_hz,
                "link_clock_hz": self.config.link_clock_hz,
                "stamp_shift": self.stamp_shift,
                "marker_width": self.config.marker_width,
                "edge_count": self.config.edge_count,
                "bus_width": self._bus_width(),
                "fifo_depth": self.config.fifo_depth,
                **self._latencies(),
                "board": list(board),
                # 0: no trigger (protocol.IdentifyReply).
                "trigger_latency": (
                    self._trigger.latency << self.stamp_shift if self._trigger is not None else 0
                ),
            }
        )

    def _bus_width(self):
        """IDENTIFY's ``bus_width``: the data bits of the BUS source's front end, 0 without
        one (the bus window snoops 32-bit words)."""
        if isinstance(self._bus, MemoryBusPort):
            return self._bus.data_width
        return 32 if self._bus is not None else 0

    def _latencies(self):
        """Pin-to-stamp latencies in stamp units (1/``input_phases`` cycle)."""
        # The bus window and the IRQ output change on clock edges: their latencies are whole
        # cycles; the memory bus's pins are sampled as the marker strobe is.
        if isinstance(self._bus, MemoryBusPort):
            bus_latency = self._bus.stamp_latency
        else:
            bus_latency = (self._bus.latency if self._bus is not None else 0) << self.stamp_shift
        return {
            "marker_latency": self._marker.stamp_latency,
            "bus_latency": bus_latency,
            "edge_latency": self._edges.stamp_latency,
            "irq_latency": self._irq.latency << self.stamp_shift,
        }

    def elaborate(self, platform):
        config = self.config
        m = Module()
        # The parts (the bus snoop, the link's register slices and the SUMP engine are added
        # with their wiring, below).
        m.submodules.marker = self._in_capture(marker := self._marker)
        m.submodules.edges = self._in_capture(edges := self._edges)
        generator, irq = self._irq_output(m)
        m.submodules.streamer = streamer = CapturePipeline(
            self.sources(),
            front_end_losses=self._front_end_losses(),
            marker_width=config.marker_width,
            fifo_depth=config.fifo_depth,
            flush_after=config.flush_after,
            stamp_shift=self.stamp_shift,
            capture_domain=config.capture_domain,
            word_crc=config.word_xor,
            short_records=config.short_records,
        )
        m.submodules.commands = commands = CommandProcessor(
            self.identify(), timeout=config.command_timeout
        )
        m.submodules.control = control = CaptureControl(capture_domain=config.capture_domain)
        m.submodules.uart_tx = uart_tx = UARTTx(divisor=config.uart_divisor)
        m.submodules.uart_rx = uart_rx = UARTRx(divisor=config.uart_divisor)

        self._connect_pins(m, marker, edges, irq, uart_tx, uart_rx)
        self._connect_phases(m, marker, edges, streamer)
        bus = self._bus_front_end(m)
        self._trigger_irq(m, marker, edges, bus, irq, control)
        self._gate_events(m, marker, edges, irq, bus, streamer, control)
        entering_sump = Signal()  # from _link_modes, a cycle late: the capture stops
        capturing = self._capture_state(m, commands, control, irq, entering_sump)
        self._host_link(m, uart_tx, uart_rx, commands, streamer, entering_sump)
        self._drive_capture(m, streamer, generator, commands, control, capturing)
        self._irq_drive(m, commands)
        self._report_status(m, commands, streamer, control, capturing)
        return m

    def _front_end_losses(self):
        """The most events each front end that counts losses loses in a cycle, by source:
        the marker port's, and the memory bus port's where it can lose any."""
        losses = {Source.MARKER: self._marker.most_lost}
        if isinstance(self._bus, MemoryBusPort) and self._bus.most_lost:
            losses[Source.BUS] = self._bus.most_lost
        return losses

    def _in_capture(self, part):
        """``part`` in the capture domain (its ``sync`` renamed, in a two-clock build)."""
        domain = self.config.capture_domain
        return DomainRenamer(domain)(part) if domain != "sync" else part

    def _irq_output(self, m):
        """The IRQ generator and what drives the pin and the events: the generator's timing
        runs in the link domain; its pin and events come from the generator itself with one
        clock, else from a pin stage in the capture domain (the module docstring says why).
        Returns the generator and the part whose ``irq`` and ``events`` are the output's
        (and which takes the trigger's ``firing`` and gives its arming edges, ``rise``)."""
        domain = self.config.capture_domain
        m.submodules.irq_generator = generator = self._irq
        irq = generator
        if domain != "sync":
            m.submodules.irq_pin = irq = IrqPinStage(capture_domain=domain)
            m.d.comb += [irq.level.eq(generator.events.payload.level), irq.pin.eq(generator.irq)]
        return generator, irq

    def _trigger_irq(self, m, marker, edges, bus, irq, control):
        """The IRQ trigger, in the capture domain: it watches the front ends' events (before
        the capture's gate: it fires whether or not a capture runs, as the generator does),
        drives the pin through the part that shows it, and is armed by that part's record
        of the generator's asserting edges; TRIGGER_CONFIG and START restart it. Without it
        the output's ``firing`` stays 0: the generator alone drives the pin."""
        if self._trigger is None:
            return
        m.submodules.irq_trigger = trigger = self._in_capture(self._trigger)
        for source, events in self._front_end_events(marker, edges, bus).items():
            port = getattr(trigger, source.name.lower())
            m.d.comb += [port.valid.eq(events.valid), port.payload.eq(events.payload)]
        m.d.comb += [
            trigger.config.eq(control.capture_trigger_config),
            trigger.apply.eq(control.trigger_restart),
            trigger.arm.eq(irq.rise),
            irq.firing.eq(trigger.firing),
        ]

    def _connect_pins(self, m, marker, edges, irq, uart_tx, uart_rx):
        """The appliance's pins to and from the parts that take or drive them."""
        m.d.comb += [
            marker.data.eq(self.marker_data),
            marker.strobe.eq(self.marker_strobe),
            edges.pins.eq(self.edges),
            self.irq.eq(irq.irq),
            self.irq_next.eq(irq.irq_next),
            self.uart_tx.eq(uart_tx.tx),
            uart_rx.rx.eq(self.uart_rx),
        ]

    def _connect_phases(self, m, marker, edges, streamer):
        """Where stamps count 1/2 or 1/4 cycles, each source's phase (the sample of its cycle
        an event showed in) to the streamer, in stream order; the IRQ output and the bus
        window change on the rising clock edge, at phase 0."""
        if "phase" not in streamer.signature.members:
            return
        phase = {Source.MARKER: marker.phase}
        if isinstance(self._bus, MemoryBusPort):
            phase[Source.BUS] = self._bus.phase
        phase |= {Source(Source.EDGE0 + n): edges.phase[n] for n in range(self.config.edge_count)}
        m.d.comb += [
            streamer.phase[index].eq(phase.get(source, 0))
            for index, source in enumerate(self.sources())
        ]

    def _bus_front_end(self, m):
        """The BUS source's front end on its pins (the bus snoop on the ``bus`` port, the
        memory bus port on the ``membus_*`` pins), if this build has one; else None."""
        if self._bus is None:
            return None
        m.submodules.bus = bus = self._in_capture(self._bus)
        if isinstance(self._bus, BusWriteSnoop):
            connect(m, wiring.flipped(self.bus), bus.bus)
        else:
            m.d.comb += [
                getattr(bus, pins).eq(getattr(self, f"membus_{pins}"))
                for pins in ("cs", "we", "address", "data")
            ]
        return bus

    def _gate_events(self, m, marker, edges, irq, bus, streamer, control):
        """Each source's events to the streamer, only if START enabled that source (the mask
        as the capture domain took it at START)."""
        outputs = self._front_end_events(marker, edges, bus) | {Source.IRQ: irq.events}
        for source, events in outputs.items():
            port = getattr(streamer, source.name.lower())
            m.d.comb += [
                port.valid.eq(events.valid & control.sources_enabled.sources[int(source)]),
                port.payload.eq(events.payload),
            ]
        # The front ends' own losses (strobe edges, bus writes too close together) count
        # with them.
        lost = {Source.MARKER: marker.lost}
        if Source.BUS in self._front_end_losses():
            lost[Source.BUS] = bus.lost
        for source, count in lost.items():
            m.d.comb += getattr(streamer, f"{source.name.lower()}_lost").eq(
                Mux(control.sources_enabled.sources[int(source)], count, 0)
            )

    def _front_end_events(self, marker, edges, bus):
        """The event streams of the front ends (markers, bus writes, edge channels), by
        source."""
        outputs = {Source.MARKER: marker.events}
        if bus is not None:
            outputs[Source.BUS] = bus.events
        for n in range(self.config.edge_count):
            outputs[Source(Source.EDGE0 + n)] = edges.events[n]
        return outputs

    def _capture_state(self, m, commands, control, irq, entering_sump):
        """Whether the capture runs, in both domains: START and STOP (or the switch to SUMP
        mode) as the link domain sees them, and through :class:`.CaptureControl` as the
        capture domain does. Returns the link domain's flag."""
        # The capture runs, as the link domain sees it (STATUS, the encoder's flush at stop,
        # the SUMP mode switch) ...
        capturing = Signal()
        with m.If(commands.start):
            m.d.sync += capturing.eq(1)
        with m.If(commands.stop | entering_sump):
            m.d.sync += capturing.eq(0)
        # ... and as the capture domain does, a synchronizer's latency later: it takes the
        # events and drives the `capturing` pin from the same pulse. The IRQ generator
        # restarts in the link domain a cycle after START (with one clock: in the cycle
        # `capture_start` is high); with two clocks from one PLL in phase both crossings have
        # fixed latencies, so a capture's IRQ edges keep fixed times relative to its start.
        m.d.comb += [
            control.start.eq(commands.start),
            control.stop.eq(commands.stop | entering_sump),
            control.irq_apply.eq(commands.irq_apply),
            control.sources.eq(commands.sources),
            control.irq_edge.eq(control.capturing & irq.events.valid & irq.events.payload.level),
            control.trigger_apply.eq(commands.trigger_apply),
            control.trigger_config.eq(commands.trigger_config),
        ]
        return capturing

    def _host_link(self, m, uart_tx, uart_rx, commands, streamer, entering_sump):
        """The bytes between the UART and the parts: the replies go into the event stream,
        the stream's bytes (or SUMP's, :meth:`_link_modes`) to the transmitter, or to the
        SPI link's target while the host has selected it."""
        connect(m, commands.replies, streamer.replies)
        # The bytes to send reach the transmitter through a register slice, so that the
        # handshake with it is not one path with the serializer's and the mode switch's.
        m.submodules.tx_register = tx_register = StreamRegister(8)
        if self.config.spi_link:
            self._spi_or_uart(m, tx_register.o, uart_tx.data)
        else:
            connect(m, tx_register.o, uart_tx.data)
        self._link_modes(m, uart_rx, tx_register.i, commands, streamer, entering_sump)

    def _spi_or_uart(self, m, tx_bytes, uart_bytes):
        """The bytes to send go to the SPI link's target while the host has selected it
        (docs/spi-link.md), else to the UART; each byte's handshake is with one of them."""
        m.submodules.spi = spi = SpiTarget()
        connect(m, wiring.flipped(self.spi), spi.bus)
        for sink, chosen in ((spi.data, spi.selected), (uart_bytes, ~spi.selected)):
            m.d.comb += [sink.valid.eq(tx_bytes.valid & chosen), sink.payload.eq(tx_bytes.payload)]
        m.d.comb += tx_bytes.ready.eq(Mux(spi.selected, spi.data.ready, uart_bytes.ready))

    def _drive_capture(self, m, streamer, generator, commands, control, capturing):
        """The streamer and the IRQ generator follow the capture's START and STOP and the
        IRQ settings; the ``capturing`` pin shows the capture as the capture domain runs it."""
        m.d.comb += [
            streamer.start.eq(commands.start),
            streamer.stopping.eq(~capturing),
            streamer.enable.eq(control.capturing),
            streamer.clear.eq(control.capture_start),
            # IRQ_CONFIG applies new settings; START applies the settings in force again,
            # from the seed: the first edge is I0 = period + (seed & mask) after START. The
            # settings are the link domain's registers, stable since before the pulse.
            generator.config.eq(commands.irq_config),
            generator.apply.eq(control.generator_apply),  # IRQ_CONFIG or START
            generator.reseed.eq(control.generator_reseed),
            self.capturing.eq(control.capturing),
        ]

    def _irq_drive(self, m, commands):
        """``irq_oe``: the IRQ pin is left undriven (to the DUT's pull resistor, at its
        inactive level, docs/boards.md) from power-up until the first IRQ_CONFIG says which
        level is inactive, and driven from then on. The generator applies the command in the
        cycle after it (``generator_apply``) and its pin shows the polarity a cycle later;
        the flag is set at that same link clock edge, then crosses to the capture domain and
        waits :data:`.irq_pin.LINK_TO_PIN` capture cycles more there, by when the pin, which
        takes that long from the link edge, shows the configured polarity: the driver turns
        on at the inactive level (``tests/gateware/test_irq_drive.py``)."""
        domain = self.config.capture_domain
        applying = Signal()  # the generator applies an IRQ_CONFIG in this cycle
        configured = Signal()  # the generator's pin shows an IRQ_CONFIG's polarity
        m.d.sync += applying.eq(commands.irq_apply)
        with m.If(applying):
            m.d.sync += configured.eq(1)
        delayed = configured
        if domain != "sync":
            delayed = Signal()
            m.submodules.irq_oe_sync = FFSynchronizer(configured, delayed, o_domain=domain)
        for stage in range(LINK_TO_PIN):
            later = Signal(name=f"irq_oe_in_{LINK_TO_PIN - stage - 1}")
            m.d[domain] += later.eq(delayed)
            delayed = later
        m.d.comb += self.irq_oe.eq(delayed)

    def _report_status(self, m, commands, streamer, control, capturing):
        """What STATUS reports: the link domain's capture flag, the streamer's and the
        capture control's counters, and the board's clock-phase probe (sticky bits, set once
        after the power-on reset: a two-flip-flop synchronizer suffices)."""
        clock_check = self.clock_check
        if self.config.capture_domain != "sync":
            clock_check = Signal.like(self.clock_check)
            m.submodules.clock_check_sync = FFSynchronizer(self.clock_check, clock_check)
        m.d.comb += [
            commands.status.capturing.eq(capturing),
            commands.status.clock_check.eq(clock_check),
            commands.status.events.eq(streamer.events),
            commands.status.lost.eq(streamer.lost),
            commands.status.fifo_max.eq(streamer.fifo_max),
            commands.status.irq_edges.eq(control.irq_edges),
        ]

    def _link_modes(self, m, uart_rx, tx_bytes, commands, streamer, entering_sump):
        """The host link carries latscope's protocol or, in SUMP mode, SUMP's.

        The SUMP reset (:data:`SUMP_MODE_ENTRY`, five RESET bytes) arriving between latscope
        commands switches to SUMP mode: the capture stops, the event stream is dropped and
        the link carries the SUMP engine's bytes only. A RESET byte there is no opcode: it
        is counted, never given to the command processor; any byte that is given to it
        starts the count again. latscope's IDENTIFY, arriving between SUMP commands,
        switches back.
        """
        config = self.config
        if not config.sump_depth:
            connect(m, uart_rx.data, commands.rx)
            connect(m, streamer.bytes, tx_bytes)
            return
        names = self.sump_channels()
        m.submodules.sump = sump = SumpEngine(
            channels=len(names),
            depth=config.sump_depth,
            clock_hz=config.link_clock_hz,
            version=str(GATEWARE_VERSION),
        )
        # The pins as SUMP sees them, through a synchronizer of their own; the IRQ output
        # goes through it too, so that every channel shows its pin with the same delay. Of a
        # cycle's samples the first (the rising edge's) is taken.
        strobe, edges = self.marker_strobe[0], self.edges[: config.edge_count]
        m.submodules.sump_synchronizer = FFSynchronizer(
            Cat(self.marker_data, strobe, self.irq, edges), sump.sample, stages=2
        )

        sump_mode = Signal()
        byte = uart_rx.data
        (reset_code,) = set(SUMP_MODE_ENTRY)
        resets = Signal(range(len(SUMP_MODE_ENTRY)))  # RESET bytes in a row, in latscope mode
        counted = ~sump_mode & commands.idle & (byte.payload == reset_code)
        entering = counted & (resets == len(SUMP_MODE_ENTRY) - 1)
        to_sump = Mux(sump_mode, ~(sump.idle & (byte.payload == Command.IDENTIFY)), entering)
        m.d.comb += [
            sump.rx.valid.eq(byte.valid & to_sump),
            sump.rx.payload.eq(byte.payload),
            commands.rx.valid.eq(byte.valid & ~to_sump & ~counted),
            commands.rx.payload.eq(byte.payload),
        ]
        m.d.sync += entering_sump.eq(byte.valid & entering)
        with m.If(byte.valid):
            m.d.sync += [
                sump_mode.eq(to_sump),
                resets.eq(Mux(counted & ~entering, resets + 1, 0)),
            ]

        # The SUMP engine's bytes come through a register slice of their own (its reply ROM
        # and readback multiplexers are slow), as the streamer's come from a register.
        m.submodules.sump_tx = sump_tx = StreamRegister(8)
        connect(m, sump.tx, sump_tx.i)
        with m.If(sump_mode):
            m.d.comb += [
                tx_bytes.valid.eq(sump_tx.o.valid),
                tx_bytes.payload.eq(sump_tx.o.payload),
                sump_tx.o.ready.eq(tx_bytes.ready),
                streamer.bytes.ready.eq(1),  # the stopped capture's last bytes are dropped
            ]
        with m.Else():
            m.d.comb += [
                tx_bytes.valid.eq(streamer.bytes.valid),
                tx_bytes.payload.eq(streamer.bytes.payload),
                streamer.bytes.ready.eq(tx_bytes.ready),
            ]
