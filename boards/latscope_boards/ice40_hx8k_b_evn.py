"""The Lattice iCE40-HX8K-B-EVN breakout board (iCE40HX8K-CT256) as a latscope board, the
default one: its clocks, input gearbox, pins and host link.

The marker strobe and the edge channels go through a 1:4 input gearbox
(:func:`.gearbox.ice40_gearbox_inputs`): each pin's SB_IO samples it on both edges of a
168 MHz edge clock, four samples per 84 MHz capture cycle, so stamps count quarter cycles,
2.98 ns (issue 12's goal: 150 MHz with DDR inputs, 3.4 ns). Both clocks come from the 12 MHz
crystal through one SB_PLL40_2F: the edge clock on output A, the appliance's one clock (capture
and link) on output B at half of it (GENCLK_HALF). Host link on the FT2232H's channel B UART
at 12 Mbaud (7 cycles per bit; the appliance clock must be a multiple of 12 MHz).

``board(gearbox=False)`` builds the previous front end instead: DDR inputs on a 120 MHz capture
clock (4.17 ns) with a 60 MHz link clock (two clock domains), which falls short of the 150 MHz
that 3.4 ns would take (what nextpnr reached: docs/boards.md, "Timing against the goals").

All appliance pins are on header J2 (FPGA bank 1), which nothing else on the board uses.

The memory bus build (``board(variant="membus")``, :data:`VARIANTS`) takes the markers from
a DUT's external memory bus instead of the marker port (docs/membus.md): the bus's data
lines on the marker data's pins, its write strobe on the strobe's, its chip select and four
address lines on J2's last free pins, every one through the gearbox.

J2 (2 x 20, pin 1 marked): pins 7, 8, 15, 16, 23, 24, 31, 32, 39, 40 are ground; pins 1 and 3
carry the 1.2 V core supply and pin 2 the bank's VCCIO (3.3 V): never connect those three.
"""

from amaranth.build import Attrs
from amaranth_boards.ice40_hx8k_b_evn import ICE40HX8KBEVNPlatform

from .board import (
    FT2232H_BAUDS,
    FT2232H_USB_ID,
    Board,
    Pin,
    PinMap,
    fastest_baud,
    fmc_sram_bus,
)
from .clocking import Ice40Pll
from .pad_delays import ICE40HX8K

__all__ = ["VARIANTS", "DEFAULT_VARIANT", "MEMORY_BUS", "board"]

#: The builds (``make bitstream BOARD=ice40-hx8k-b-evn VARIANT=membus``): the appliance with
#: the marker port, as shipped, and the memory bus build. J2 has 27 signal pins, 22 of them
#: the shipped build's: the bus's 18 (data, write strobe, chip select) and four address lines
#: take the marker port's 17 and the 5 free ones, so the bus replaces the marker port rather
#: than joining it, in a build of its own; the shipped build (at 84 MHz with little margin)
#: stays as it is. Without the marker port's pins the bus build has no SUMP mode either
#: (its channels are the marker port's pins).
VARIANTS = ("full", "membus")
DEFAULT_VARIANT = "full"
#: The memory bus build's bus (address lines A0..A3).
MEMORY_BUS = fmc_sram_bus(4)

CRYSTAL_HZ = 12_000_000
#: The appliance clock with the gearbox (its edge clock: twice this).
CLOCK_HZ = 84_000_000
#: The capture clock of the DDR front end (``gearbox=False``), its link clock half of it.
DDR_CLOCK_HZ = 120_000_000
#: The SPI link's clock: the FT2232H MPSSE's fastest (60 MHz / 2).
SPI_HZ = 30_000_000
GOAL_HZ = 150_000_000


def _j2(number):
    return Pin(("j", 2), str(number), f"J2-{number}")


def _pll(board):
    return Ice40Pll.for_board(board, CRYSTAL_HZ, clock_resource="clk12")


#: J2's signal pins of the marker data, D0..D15 (the bus build's data lines).
_DATA_PINS = (4, 5, 6, 9, 10, 11, 12, 13, 14, 17, 18, 19, 20, 21, 22, 25)


def _pins(variant):
    """The pin map of a variant: the marker port's pins, or the memory bus's."""
    common = dict(
        edges=tuple(_j2(n) for n in (27, 28, 29, 30)),
        irq=_j2(33),
        ground=tuple(f"J2-{n}" for n in (7, 8, 15, 16, 23, 24, 31, 32, 39, 40)),
        avoid=("J2-1 (1.2 V)", "J2-2 (VCCIO 3.3 V)", "J2-3 (1.2 V)"),
    )
    if variant == "membus":
        return PinMap(
            marker_data=(),
            marker_strobe=None,
            bus_we=_j2(26),
            bus_cs=_j2(34),
            bus_data=tuple(_j2(n) for n in _DATA_PINS),
            bus_address=tuple(_j2(n) for n in (35, 36, 37, 38)),
            **common,
        )
    return PinMap(marker_data=tuple(_j2(n) for n in _DATA_PINS), marker_strobe=_j2(26), **common)


def board(clock_hz=None, ddr_inputs=True, gearbox=True, variant=DEFAULT_VARIANT):
    """The HX8K board: the gearbox on one appliance clock (84 MHz), or with ``gearbox=False``
    DDR inputs on a capture clock (120 MHz) and a link clock at half of it; ``variant`` one
    of :data:`VARIANTS`."""
    variant = variant.lower()
    if variant not in VARIANTS:
        raise ValueError(f"unknown HX8K variant {variant!r}; variants: {', '.join(VARIANTS)}")
    membus = variant == "membus"
    gearbox = gearbox and ddr_inputs
    clock_hz = clock_hz or (CLOCK_HZ if gearbox else DDR_CLOCK_HZ)
    link_hz = 0 if gearbox else clock_hz // 2
    return Board(
        name="ice40-hx8k-b-evn",
        title="Lattice iCE40-HX8K-B-EVN" + (" (memory bus)" if membus else ""),
        identify_name="ice40-hx8k-b-evn",
        platform_class=ICE40HX8KBEVNPlatform,
        family="ice40",
        clock_hz=clock_hz,
        goal_hz=GOAL_HZ,
        baud=fastest_baud(link_hz or clock_hz, FT2232H_BAUDS),
        link_hz=link_hz,
        # 32 block RAMs of 4 kbit; a 112-bit entry x 1024 takes 28 of them (the FIFO holds
        # one more entry in its output register).
        fifo_depth=1024,
        # Seeds 1-3 give 96.14 / 90.09 / 90.95 MHz at 84 MHz (docs/boards.md).
        seed=1,
        pins=_pins(variant),
        memory_bus=MEMORY_BUS if membus else (),
        sump_depth=0 if membus else 512,
        # The bus build sends long records only: with the encoder's value history on BUS
        # values its short-record choice was the capture clock's critical path (76.14 MHz
        # at 84 MHz, seed 1, entry_record in the encoder).
        short_records=not membus,
        # Pull-ups keep unconnected inputs quiet (an open marker line reads as 1).
        io_attrs=Attrs(IO_STANDARD="SB_LVCMOS", PULLUP=1),
        make_pll=_pll,
        # FT2232H channel A drives the SPI flash (jumpers J6/J7 in their flash position, as
        # shipped); the FPGA boots from the flash after programming.
        program=("openFPGALoader", "-b", "ice40_generic", "{bitstream}"),
        bitstream_suffix=".bin",
        ddr_inputs=ddr_inputs,
        input_phases=4 if gearbox else 0,
        link="FT2232H channel B (second serial port of the board, e.g. /dev/ttyUSB1)",
        serial_port="/dev/ttyUSB1",
        # The SPI link on channel A (docs/spi-link.md): the MPSSE's fastest clock.
        spi_hz=SPI_HZ,
        usb_id=FT2232H_USB_ID,
        pad_delays=ICE40HX8K,
        notes=("Other programmer: `iceprog {bitstream}` (Debian package fpga-icestorm).",),
    )
