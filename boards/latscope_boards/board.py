"""What a board is to latscope: a platform, a capture and a link clock, a pin map and a host
link.

A board module (``ice40_hx8k_b_evn``, ``ulx3s``, ``icebreaker``) builds one :class:`Board`;
everything else (the top-level design, the build, the pin-out tables of the docs) works from
that description, so a pin or a clock is stated in exactly one place.
"""

from dataclasses import dataclass, field

from amaranth.build import Attrs, Clock, Pins, Resource, Subsignal
from amaranth.hdl import *
from amaranth.lib import io

from latscope_gateware.appliance import Appliance, ApplianceConfig

from .gearbox import Ice40PhaseProbe, ecp5_gearbox_inputs, ice40_gearbox_inputs
from .irq_output import registered_irq_output
from .pad_delays import PadDelays

__all__ = [
    "FT2232H_USB_ID",
    "FT231X_USB_ID",
    "Pin",
    "PinMap",
    "Board",
    "BoardTop",
    "fastest_baud",
    "fmc_sram_bus",
    "FT2232H_BAUDS",
    "FT2232H_SPI_HZ",
    "MARKER_RESOURCE",
    "EDGES_RESOURCE",
    "IRQ_RESOURCE",
    "MEMBUS_RESOURCE",
]

#: Names of the resources a board adds to its platform for the appliance's pins.
MARKER_RESOURCE = "latscope_marker"
EDGES_RESOURCE = "latscope_edges"
IRQ_RESOURCE = "latscope_irq"
SPI_RESOURCE = "latscope_spi"
MEMBUS_RESOURCE = "latscope_membus"
#: The number of the host link's UART resource (``uart``; 0 is the platform's own).
LINK_UART = 1


#: USB IDs of the boards' serial chips (FTDI's vendor ID; the FT2232H's and FT231X's default
#: product IDs, FTDI's AN_104 / the chips' datasheets).
FT2232H_USB_ID = "0403:6010"
FT231X_USB_ID = "0403:6015"


#: FT2232H UART rates that latscope uses: 12 Mbaud (its maximum, 120 MHz / 10) and the exact
#: integer fractions of it.
FT2232H_BAUDS = (12_000_000, 6_000_000, 4_000_000, 3_000_000, 2_000_000, 1_000_000)
#: The SPI link's clock on the iCE40 boards' FT2232H channel A: its MPSSE's fastest
#: (60 MHz / 2; docs/spi-link.md).
FT2232H_SPI_HZ = 30_000_000


def fastest_baud(clock_hz, rates, min_divisor=3):
    """The fastest of ``rates`` that ``clock_hz`` divides into a whole UART divisor of at
    least ``min_divisor`` (the receiver samples mid-bit; divisor 3 still gives it +-3 %)."""
    for baud in sorted(rates, reverse=True):
        if clock_hz % baud == 0 and clock_hz // baud >= min_divisor:
            return baud
    raise ValueError(f"no UART rate of {rates} suits a {clock_hz} Hz clock")


@dataclass(frozen=True)
class Pin:
    """One header pin: an amaranth-boards connector pin, and the name printed on the board."""

    connector: tuple  # (name, number) of an amaranth-boards Connector
    pin: str  # the connector's pin name
    label: str  # what a person looks for on the board, e.g. "J2-4" or "GP0"


@dataclass(frozen=True)
class PinMap:
    """The appliance's pins on a board's headers.

    ``marker_data`` is D0..D15 in order. ``ground`` and ``avoid`` are header pins for the
    wiring guide: ground pins to run a return wire from, and pins that must stay unconnected
    (supply pins of another voltage). A bus build (``Board.memory_bus``) has the memory bus's
    pins in place of the marker port's (no ``marker_data``, ``marker_strobe`` None):
    ``bus_we``, ``bus_cs``, ``bus_data`` (D0 first) and ``bus_address`` (A0 first).
    """

    marker_data: tuple
    marker_strobe: Pin | None
    edges: tuple
    irq: Pin
    ground: tuple = ()
    avoid: tuple = ()
    bus_we: Pin | None = None
    bus_cs: Pin | None = None
    bus_data: tuple = ()
    bus_address: tuple = ()

    def signals(self):
        """(signal name, Pin, direction) of every appliance pin, in documentation order:
        the marker port's (or the memory bus's), the edge channels, the IRQ output."""
        rows = [(f"D{n}", pin, "in") for n, pin in enumerate(self.marker_data)]
        if self.marker_strobe is not None:
            rows.append(("STROBE", self.marker_strobe, "in"))
        else:
            rows += [("WE", self.bus_we, "in"), ("CS", self.bus_cs, "in")]
            rows += [(f"D{n}", pin, "in") for n, pin in enumerate(self.bus_data)]
            rows += [(f"A{n}", pin, "in") for n, pin in enumerate(self.bus_address)]
        rows += [(f"EDGE{n}", pin, "in") for n, pin in enumerate(self.edges)]
        rows.append(("IRQ", self.irq, "out"))
        return rows


@dataclass(frozen=True)
class Board:
    """A board latscope builds for.

    name : CLI name (``make bitstream BOARD=<name>``).
    title : the board's full name.
    identify_name : what the IDENTIFY reply says (at most 16 ASCII characters).
    platform_class : its amaranth-boards platform.
    family : ``"ice40"`` or ``"ecp5"`` (selects the YoWASP tools).
    clock_hz : the capture clock; the build fails if nextpnr's Fmax is below it.
    goal_hz : the capture clock issue 12 aims at for this board (docs and bench compare),
        with DDR inputs: half its period is the resolution goal, which a gearbox board
        (``input_phases`` 4) reaches at half that clock.
    baud : host link rate; ``link_hz / baud`` must be a whole number, the UART divisor.
    fifo_depth : entries of the event FIFO (block RAM).
    pins : the :class:`PinMap`.
    io_attrs : platform attributes of the appliance's input pins (I/O standard, pull-ups).
    make_pll : callable(board) -> Elaboratable that drives the clocks and resets of the
        ``capture`` and ``sync`` (link) domains (only ``sync`` when ``link_hz`` is 0).
    program : argv of the programming command; ``{bitstream}`` is replaced by the file.
    bitstream_suffix : ``.bin`` (iCE40) or ``.bit`` (ECP5).
    link : one line on the USB-serial chip, for the docs.
    serial_port : the appliance's serial port on a Linux host with no other USB serial
        adapter (the docs' command lines; the host's ``--board`` presets).
    usb_id : ``vendor:product`` of the board's USB serial chip (the udev rule,
        ``scripts/99-latscope.rules``).
    ddr_inputs : sample the marker strobe and edge channels on both clock edges (ECP5
        IDDRX1F); stamps then carry a half-cycle bit (identify ``stamp_shift`` 1).
    input_phases : 4 for a 1:4 input gearbox on the marker strobe and edge channels
        (:mod:`.gearbox`; four samples a capture cycle, on both edges of an edge clock at
        twice the capture clock; quarter-cycle stamps, ``stamp_shift`` 2; ``make_pll`` must
        then drive the ``eclk`` domain too); 0: from ``ddr_inputs`` (2 or 1).
    sump_depth : samples of the SUMP device mode's memory (block RAM); 0: no SUMP mode.
    seed : the nextpnr placement seed of the shipped build (``make bitstream`` without
        ``SEED``; the one recorded in boards/results and docs/boards.md). Placement decides
        Fmax on the fullest boards: a board whose seed 1 misses its clock ships another.
    link_hz : the link clock (UART, commands, encoder, SUMP); 0: one clock for everything
        (the capture clock), as before the two clock domains.
    pad_delays : the :class:`.pad_delays.PadDelays` of the FPGA's I/O cells (vendor timing
        data): the IRQ output's clock-to-pad delay, which the host adds to IRQ stamps, and
        the inputs' pad-to-register delay (docs/boards.md, "Pad delays").
    gearbox_placement : iCE40 gearbox only: where its flip-flops go, as pairs (pin label,
        placement of that pin) for :class:`.gearbox.Ice40Gearbox`; pins not named (and an
        empty tuple) are left to nextpnr.
    phase_probe : iCE40 gearbox only: build its clock-phase probe
        (:class:`.gearbox.Ice40PhaseProbe`, STATUS ``clock_check``, ``latscope selftest``).
    short_records : the encoder sends short records where they apply
        (``ApplianceConfig.short_records``; docs/protocol.md, "Short records"); False: long
        records only, for a board without the cells for the encoder's value histories.
    irq_trigger : build the appliance's IRQ trigger (False: an iCEBreaker build other than
        the shipped one, for room).
    spi_hz : the SPI link's clock (docs/spi-link.md): the appliance is an SPI target on the
        configuration-flash pins (the platform's ``spi_flash`` resource), which the host's
        MPSSE clocks at this rate; 0: no SPI link.
    memory_bus : a bus build's memory bus (``ApplianceConfig.memory_bus``, as (parameter,
        value) pairs), whose pins (``PinMap.bus_*``) take the marker port's: sampled as the
        strobe is, ``sample_phases`` a cycle; () for the marker port.
    second_edge_pins : ECP5 gearbox only: the labels of the pins in the other side's banks
        than the edge clock's, sampled on the second edge clock and its divider
        (:class:`.clocking.Ecp5Pll`, ``second_edge_clock``); () for one side.
    """

    name: str
    title: str
    identify_name: str
    platform_class: type
    family: str
    clock_hz: int
    goal_hz: int
    baud: int
    fifo_depth: int
    pins: PinMap
    io_attrs: Attrs
    make_pll: object
    program: tuple
    bitstream_suffix: str
    link: str
    serial_port: str
    usb_id: str
    pad_delays: PadDelays
    ddr_inputs: bool = False
    input_phases: int = 0
    sump_depth: int = 512
    seed: int = 1
    link_hz: int = 0
    gearbox_placement: tuple = ()
    phase_probe: bool = True
    short_records: bool = True
    irq_trigger: bool = True
    spi_hz: int = 0
    memory_bus: tuple = ()
    second_edge_pins: tuple = ()
    notes: tuple = field(default=())

    def __post_init__(self):
        if len(self.identify_name.encode("ascii")) > 16:
            raise ValueError(
                f"{self.name}: identify name {self.identify_name!r} is longer "
                f"than the 16 bytes of the IDENTIFY reply"
            )
        # Fails at definition, not at build, when the baud rate is not a whole divisor.
        _ = self.uart_divisor

    @property
    def sample_phases(self):
        """Samples of the strobe and edge pins per capture cycle: 1, 2 (DDR) or 4 (gearbox)."""
        return self.input_phases or (2 if self.ddr_inputs else 1)

    @property
    def edge_clock_hz(self):
        """The gearbox's edge clock (twice the capture clock), or 0 without one."""
        return 2 * self.clock_hz if self.sample_phases == 4 else 0

    @property
    def link_clock_hz(self):
        """The clock of the link domain: ``link_hz``, or the capture clock."""
        return self.link_hz or self.clock_hz

    @property
    def uart_divisor(self):
        divisor, remainder = divmod(self.link_clock_hz, self.baud)
        if remainder:
            raise ValueError(
                f"{self.name}: {self.baud} baud is not a whole divisor of {self.link_clock_hz} Hz"
            )
        return divisor

    def appliance_config(self):
        # Only DDR boards name the option, so single-rate boards build the same appliance as
        # every other user of ApplianceConfig.
        ddr = {"input_phases": self.sample_phases} if self.sample_phases > 1 else {}
        link = {"link_clock_hz": self.link_hz} if self.link_hz else {}
        bus = {"memory_bus": dict(self.memory_bus)} if self.memory_bus else {}
        return ApplianceConfig(
            clock_hz=self.clock_hz,
            uart_divisor=self.uart_divisor,
            board=self.identify_name,
            fifo_depth=self.fifo_depth,
            sump_depth=self.sump_depth,
            short_records=self.short_records,
            irq_trigger=self.irq_trigger,
            spi_link=bool(self.spi_hz),
            **ddr,
            **link,
            **bus,
        )

    def resources(self, platform):
        """The appliance's pins as platform resources, on the FPGA balls the header pins are
        wired to (looked up in the platform's own connector table)."""
        pins = self.pins
        output_attrs = Attrs(
            **{
                key: value
                for key, value in self.io_attrs.items()
                if key not in ("PULLUP", "PULLMODE")
            }
        )
        return [
            self._trace_resource(platform),
            Resource(
                EDGES_RESOURCE, 0, Pins(self.balls(platform, pins.edges), dir="i"), self.io_attrs
            ),
            Resource(
                IRQ_RESOURCE, 0, Pins(self.balls(platform, [pins.irq]), dir="o"), output_attrs
            ),
            self.link_resource(platform),
            *([self.spi_resource(platform)] if self.spi_hz else []),
        ]

    def spi_resource(self, platform):
        """The SPI link's pins (``latscope_spi`` 0): the platform's configuration-flash pins
        (``spi_flash_1x`` 0), in the directions of a target, CS# as it is on the wire. SCK
        carries its clock constraint, ``spi_hz``, so that nextpnr times the target's domains
        (it takes a constraint on the pin's net through the SB_IO; one on a net inside the
        design it did not find, yosys having renamed it)."""
        flash = {signal.name: signal.ios[0] for signal in platform.resources["spi_flash_1x", 0].ios}
        lines = {"sck": "clk", "cs_n": "cs", "copi": "copi", "cipo": "cipo"}
        return Resource(
            SPI_RESOURCE,
            0,
            *(
                Subsignal(
                    name,
                    Pins(" ".join(flash[wire].names), dir="o" if name == "cipo" else "i"),
                    *([Clock(self.spi_hz)] if name == "sck" else []),
                )
                for name, wire in lines.items()
            ),
            platform.resources["spi_flash_1x", 0].attrs,
        )

    def _trace_resource(self, platform):
        """The pins the markers come on: the marker port's, or a bus build's memory bus."""
        pins = self.pins

        def subsignal(name, header_pins):
            return Subsignal(name, Pins(self.balls(platform, header_pins), dir="i"))

        if pins.marker_strobe is None:
            return Resource(
                MEMBUS_RESOURCE,
                0,
                subsignal("we", [pins.bus_we]),
                subsignal("cs", [pins.bus_cs]),
                subsignal("data", pins.bus_data),
                subsignal("address", pins.bus_address),
                self.io_attrs,
            )
        return Resource(
            MARKER_RESOURCE,
            0,
            subsignal("data", pins.marker_data),
            subsignal("strobe", [pins.marker_strobe]),
            self.io_attrs,
        )

    def link_resource(self, platform):
        """The host link's UART (the platform's ``uart`` 0, as ``uart`` :data:`LINK_UART`)
        with a pull-up on RX, the appliance inputs' own (``io_attrs``): an open or idle line
        reads 1, a stop bit's level, never a stream of 0x00 bytes (docs/protocol.md, the
        SUMP mode switch). Not every platform pulls it up (the ULX3S's does not)."""
        uart = platform.resources["uart", 0]
        pull = {key: value for key, value in self.io_attrs.items() if key in ("PULLUP", "PULLMODE")}
        lines = {
            signal.name: Subsignal(
                signal.name,
                *signal.ios,
                Attrs(**signal.attrs, **(pull if signal.name == "rx" else {})),
            )
            for signal in uart.ios
            if signal.name in ("tx", "rx")
        }
        return Resource("uart", LINK_UART, lines["tx"], lines["rx"], uart.attrs)

    @staticmethod
    def balls(platform, pins):
        """The FPGA package pins (space separated) that header ``pins`` are wired to."""
        return " ".join(platform.connectors[pin.connector].mapping[pin.pin] for pin in pins)

    def platform(self):
        """A platform instance with the appliance's resources added."""
        platform = self.platform_class()
        platform.add_resources(self.resources(platform))
        return platform


class BoardTop(Elaboratable):
    """The appliance on a board: PLL clock domains (capture and link), pins, host link.

    Single-rate inputs go straight to the appliance's synchronizers (no I/O register), so the
    pin-to-stamp latencies in the identify reply hold as the gateware states them. With
    ``ddr_inputs`` the strobe and edge pins go through DDR input registers instead (the
    IDDRX1F of an ECP5, the SB_IO's DDR input registers of an iCE40), clocked by the capture
    clock: the first synchronizer stage of the sub-cycle front end. With ``input_phases`` 4
    they go through 1:4 input gearboxes (:mod:`.gearbox`: the ECP5's IDDRX2F, or the iCE40's
    SB_IO DDR registers on an edge clock and a shift register).
    """

    def __init__(self, board):
        self.board = board
        self.appliance = Appliance(board.appliance_config())

    def elaborate(self, platform):
        m = Module()
        # The clock domains belong to the top; the clocking module drives them.
        m.domains.sync = ClockDomain("sync")
        capture = "sync"
        if self.board.link_hz:
            m.domains.capture = ClockDomain("capture")
            capture = "capture"
        if self.board.edge_clock_hz:
            # The ECP5's gearboxes have a reset (the edge clock's start-up, Ecp5Pll's); the
            # iCE40's sampling flip-flops none.
            m.domains.eclk = ClockDomain("eclk", reset_less=self.board.family != "ecp5")
        if self.board.second_edge_pins:
            m.domains.eclk_east = ClockDomain("eclk_east")
            m.domains.capture_east = ClockDomain("capture_east", reset_less=True)
        m.submodules.clocking = self.board.make_pll(self.board)
        m.submodules.appliance = appliance = self.appliance

        def buffer(name, direction, port, kind=io.Buffer):
            """An I/O buffer (``kind``) of the pins ``port``, added as submodule ``name``."""
            options = {"i_domain": capture} if kind is io.DDRBuffer else {}
            m.submodules[name] = buffered = kind(direction, port, **options)
            return buffered

        registered_irq_output(
            m,
            platform.request(IRQ_RESOURCE, 0, dir="-"),
            family=self.board.family,
            domain=capture,
            o=appliance.irq_next,
            oe=appliance.irq_oe,
        )
        uart = platform.request("uart", LINK_UART, dir="-")
        uart_tx = buffer("uart_tx_buffer", "o", uart.tx)
        uart_rx = buffer("uart_rx_buffer", "i", uart.rx)
        m.d.comb += [uart_tx.o.eq(appliance.uart_tx), appliance.uart_rx.eq(uart_rx.i)]
        if self.board.spi_hz:
            self._spi_link(m, platform, buffer)
        placed = dict(self.board.gearbox_placement)

        def sampled(name, port, header_pins):
            """The samples of the pins ``port`` as the appliance's front ends take them:
            through 1:4 gearboxes (the ECP5's IDDRX2F, the iCE40's SB_IO DDR registers on
            the edge clock and a shift register), DDR input registers (Cat(Q0, Q1): the
            rising-edge, earlier, sample first) or plain input buffers."""
            if self.board.sample_phases == 4:
                if self.board.family == "ecp5":
                    return self._ecp5_sampled(m, name, port, header_pins)
                places = [placed.get(pin.label) for pin in header_pins]
                return ice40_gearbox_inputs(m, name, port, capture, places)
            kind = io.DDRBuffer if self.board.ddr_inputs else io.Buffer
            return buffer(f"{name}_buffer", "i", port, kind).i

        pins = self.board.pins
        if pins.marker_strobe is None:
            bus = platform.request(MEMBUS_RESOURCE, 0, dir="-")
            edges = platform.request(EDGES_RESOURCE, 0, dir="-")
            for name, header_pins in (
                ("we", [pins.bus_we]),
                ("cs", [pins.bus_cs]),
                ("data", pins.bus_data),
                ("address", pins.bus_address),
            ):
                samples = sampled(f"membus_{name}", getattr(bus, name), header_pins)
                m.d.comb += getattr(appliance, f"membus_{name}").eq(samples)
        else:
            marker = platform.request(MARKER_RESOURCE, 0, dir="-")
            edges = platform.request(EDGES_RESOURCE, 0, dir="-")
            marker_data = buffer("marker_data_buffer", "i", marker.data)
            m.d.comb += appliance.marker_data.eq(marker_data.i)
            strobe = sampled("marker_strobe", marker.strobe, [pins.marker_strobe])
        edge_samples = sampled("edges", edges, pins.edges)
        if self.board.edge_clock_hz and self.board.family == "ice40" and self.board.phase_probe:
            # The check of the gearbox's clock phase (STATUS, `latscope selftest`).
            m.submodules.phase_probe = probe = Ice40PhaseProbe(capture)
            m.d.comb += appliance.clock_check.eq(probe.check)
        if pins.marker_strobe is not None:
            m.d.comb += appliance.marker_strobe.eq(strobe)
        m.d.comb += appliance.edges.eq(edge_samples)
        return m

    def _ecp5_sampled(self, m, name, port, header_pins):
        """The samples of ``port`` through ECP5 gearboxes, each run of its pins on one side
        on that side's edge clock (the second one's for ``Board.second_edge_pins``), the
        runs' samples put back in the pins' order: ``Cat(s_0 .. s_3)`` of the whole port."""
        east = [pin.label in self.board.second_edge_pins for pin in header_pins]
        runs, start = [], 0
        for n in range(1, len(east) + 1):
            if n == len(east) or east[n] != east[start]:
                runs.append((start, n))
                start = n
        if len(runs) == 1:
            return ecp5_gearbox_inputs(m, name, port, *self._ecp5_clocks(east[0]))
        parts = [
            ecp5_gearbox_inputs(
                m, f"{name}_{start}", port[start:stop], *self._ecp5_clocks(east[start])
            )
            for start, stop in runs
        ]
        # Each part is Cat(s_0 .. s_3) of its pins; sample k of the port is every part's k.
        return Cat(
            Cat(
                part[k * (stop - start) : (k + 1) * (stop - start)]
                for part, (start, stop) in zip(parts, runs)
            )
            for k in range(4)
        )

    @staticmethod
    def _ecp5_clocks(east):
        """(capture domain, edge-clock domain) of the gearboxes of one side."""
        return ("capture_east", "eclk_east") if east else ("capture", "eclk")

    def _spi_link(self, m, platform, buffer):
        """The SPI link's pins to the appliance (SCK's clock constraint is its pin's,
        :meth:`Board.spi_resource`)."""
        appliance = self.appliance
        pins = platform.request(SPI_RESOURCE, 0, dir="-")
        sck = buffer("spi_sck_buffer", "i", pins.sck)
        cs_n = buffer("spi_cs_n_buffer", "i", pins.cs_n)
        copi = buffer("spi_copi_buffer", "i", pins.copi)
        cipo = buffer("spi_cipo_buffer", "o", pins.cipo)
        m.d.comb += [
            appliance.spi.sck.eq(sck.i),
            appliance.spi.cs_n.eq(cs_n.i),
            appliance.spi.copi.eq(copi.i),
            cipo.o.eq(appliance.spi.cipo),
            cipo.oe.eq(appliance.spi.cipo_oe),
        ]


def fmc_sram_bus(address_bits):
    """A bus build's memory bus (``Board.memory_bus``): the STM32 FMC's 16-bit SRAM/NOR mode
    (NE1, NWE active low) or the Pi's SMI (docs/duts), with ``address_bits`` address lines."""
    return (
        ("data_width", 16),
        ("address_bits", address_bits),
        ("cs_active_low", True),
        ("we_active_low", True),
    )
