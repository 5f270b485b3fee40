"""What a board is to latscope: a platform, a capture clock, a pin map and a host link.

A board module (``ice40_hx8k_b_evn``, ``ulx3s``, ``icebreaker``) builds one :class:`Board`;
everything else (the top-level design, the build, the docs) works from that description, so a
pin or a clock is stated in exactly one place.
"""

from dataclasses import dataclass, field

from amaranth.build import Attrs, Pins, Resource, Subsignal
from amaranth.hdl import *

from latscope_gateware.appliance import Appliance, ApplianceConfig
from latscope_gateware.event_capture import entry_layout

__all__ = ["Pin", "PinMap", "Board", "BoardTop", "MARKER_RESOURCE", "EDGES_RESOURCE",
           "IRQ_RESOURCE"]

#: Names of the resources a board adds to its platform for the appliance's pins.
MARKER_RESOURCE = "latscope_marker"
EDGES_RESOURCE = "latscope_edges"
IRQ_RESOURCE = "latscope_irq"


@dataclass(frozen=True)
class Pin:
    """One header pin: an amaranth-boards connector pin, and the name printed on the board."""
    connector: tuple      # (name, number) of an amaranth-boards Connector
    pin: str              # the connector's pin name
    label: str            # what a person looks for on the board, e.g. "J2 pin 4" or "GP0"


@dataclass(frozen=True)
class PinMap:
    """The appliance's pins on a board's headers.

    ``marker_data`` is D0..D15 in order; ``ground`` lists header pins that are ground, for the
    wiring guide (a ground wire next to the signals keeps the loop area small).
    """
    marker_data: tuple
    marker_strobe: Pin
    edges: tuple
    irq: Pin
    ground: tuple = ()

    def signals(self):
        """(signal name, Pin, direction) of every appliance pin, in documentation order."""
        rows = [(f"D{n}", pin, "in") for n, pin in enumerate(self.marker_data)]
        rows.append(("STROBE", self.marker_strobe, "in"))
        rows += [(f"EDGE{n}", pin, "in") for n, pin in enumerate(self.edges)]
        rows.append(("IRQ", self.irq, "out"))
        return rows



@dataclass(frozen=True)
class Board:
    """A board latscope builds for.

    Attributes
    ----------
    name : CLI name (``hx8k``, ``ulx3s``, ``icebreaker``).
    title : the board's full name.
    platform_class : its amaranth-boards platform.
    family : ``"ice40"`` or ``"ecp5"``.
    crystal : (resource name, frequency in Hz) of the PLL's reference.
    clock_hz : the capture clock; the build fails if nextpnr's Fmax is below it.
    baud : host link rate (the ``--baud`` to give ``latscope``); ``clock_hz / baud`` must be a
        whole number, the UART divisor.
    fifo_depth : entries of the event FIFO (block RAM).
    block_ram_bits : block RAM of the part, in bits (for the FIFO fit check).
    pins : the :class:`PinMap`.
    io_attrs : platform attributes of the appliance's pins (I/O standard, pull-ups).
    make_pll : callable(board) -> Elaboratable that creates ``sync``.
    program : argv of the programming command, ``{bitstream}`` replaced by the file.
    bitstream_suffix : ``.bin`` (iCE40) or ``.bit`` (ECP5).
    link : one line on the USB-serial chip, for the docs.
    """
    name: str
    title: str
    identify_name: str
    platform_class: type
    family: str
    crystal: tuple
    clock_hz: int
    baud: int
    fifo_depth: int
    block_ram_bits: int
    pins: PinMap
    io_attrs: Attrs
    make_pll: object
    program: tuple
    bitstream_suffix: str
    link: str
    notes: tuple = field(default=())

    @property
    def uart_divisor(self):
        divisor, remainder = divmod(self.clock_hz, self.baud)
        if remainder:
            raise ValueError(f"{self.name}: {self.baud} baud is not a whole divisor of "
                             f"{self.clock_hz} Hz")
        return divisor

    def appliance_config(self):
        return ApplianceConfig(clock_hz=self.clock_hz, uart_divisor=self.uart_divisor,
                               board=self.identify_name, fifo_depth=self.fifo_depth)

    def fifo_bits(self):
        """Block RAM bits the event FIFO needs (entry width x depth)."""
        appliance = Appliance(self.appliance_config())
        return entry_layout(appliance.sources()).size * self.fifo_depth

    def resources(self, platform):
        """The appliance's pins as platform resources, on the FPGA balls the header pins are
        wired to (resolved through the platform's own connector table)."""
        def balls(pins):
            return " ".join(platform.connectors[pin.connector].mapping[pin.pin] for pin in pins)

        pins = self.pins
        return [
            Resource(MARKER_RESOURCE, 0,
                     Subsignal("data", Pins(balls(pins.marker_data), dir="i")),
                     Subsignal("strobe", Pins(balls([pins.marker_strobe]), dir="i")),
                     self.io_attrs),
            Resource(EDGES_RESOURCE, 0, Pins(balls(pins.edges), dir="i"), self.io_attrs),
            Resource(IRQ_RESOURCE, 0, Pins(balls([pins.irq]), dir="o"),
                     Attrs(**{key: value for key, value in self.io_attrs.items()
                              if key not in ("PULLUP", "PULLMODE")})),
        ]

    def platform(self):
        """A platform instance with the appliance's resources added."""
        platform = self.platform_class()
        platform.add_resources(self.resources(platform))
        return platform

    def ball_of(self, platform, pin):
        return platform.connectors[pin.connector].mapping[pin.pin]


class BoardTop(Elaboratable):
    """The appliance on a board: PLL clock domain, pins, link.

    Every input pin goes straight to the appliance's synchronizers (no I/O register), so the
    pin-to-stamp latencies in the identify reply hold as the gateware states them.
    """

    def __init__(self, board):
        self.board = board
        self.appliance = Appliance(board.appliance_config())

    def elaborate(self, platform):
        m = Module()
        m.submodules.clocking = self.board.make_pll(self.board)
        m.submodules.appliance = appliance = self.appliance

        marker = platform.request(MARKER_RESOURCE, 0)
        edges = platform.request(EDGES_RESOURCE, 0)
        irq = platform.request(IRQ_RESOURCE, 0)
        uart = platform.request("uart", 0)
        m.d.comb += [
            appliance.marker_data.eq(marker.data.i),
            appliance.marker_strobe.eq(marker.strobe.i),
            appliance.edges.eq(edges.i),
            irq.o.eq(appliance.irq),
            uart.tx.o.eq(appliance.uart_tx),
            appliance.uart_rx.eq(uart.rx.i),
        ]
        return m
