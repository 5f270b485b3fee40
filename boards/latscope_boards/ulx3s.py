"""The Radiona ULX3S (ECP5 LFE5U-12F/25F/45F/85F, CABGA381) as a latscope board: its clocks,
input gearboxes, pins and host link.

The marker strobe and the edge channels go through IDDRX2F input gearboxes: each pin is
sampled on both edges of a 250 MHz edge clock, four samples per 125 MHz capture cycle, so
stamps are quarter cycles, 2.0 ns (``stamp_shift`` 2; issue 12's goal: 2 ns). Clocks from the
25 MHz crystal through the EHXPLLL: CLKOP 250 MHz -> ECLKSYNCB -> the edge clock of bank 7;
CLKDIVF (DIV 2.0) -> the 125 MHz capture (fabric) clock; CLKOS the 50 MHz link clock. (Without
the gearbox the capture domain falls far short of 250 MHz: docs/boards.md.)
Edge clocks and the IDDRX2F exist only in the left and right banks (2, 3, 6, 7): the strobe
and the edges are on J1's GP8-GP10/GN8-GN9, which are bank 7 (left side), as are IRQ (GN10)
and the spares GP11-GP13/GN11-GN13. The marker data D0-D15 (GP0-GP7/GN0-GN7, bank 0, top) stay
single-rate: they are sampled ``sample_delay`` cycles after the strobe edge, so their timing
within a cycle carries nothing, and 16 more gearboxes would need the other side's banks
(J1 has 12 bank-7 pins, J2 16 in banks 2 and 3), hence a second edge clock and divider,
which only the memory bus build has.
Host link on the FT231X at 2 Mbaud: the FT231X makes 3 MHz / n (n = 1, 1.5, 2, 2.125, ...),
and of its rates above 1 Mbaud only 2 Mbaud divides the even-MHz clocks (25 link cycles per
bit at 50 MHz).
Appliance pins are on header J1: GP0..GP10 and GN0..GN10.

The memory bus build (``VARIANT=membus``, an 85F) takes the markers from a DUT's external
memory bus instead of the marker port, every bus pin through a gearbox. J1 and J2 have 28
gearbox pins (iodb of prjtrellis: GP8-GP13/GN8-GN13 bank 7, left side; GP14-GP17/GN14-GN17
bank 3 and GP18-GP21/GN18-GN21 bank 2, right side; the rest banks 0 and 1, top), and the
bus's 22 (16 data, write strobe, chip select, four address lines) and the four edges are
26: more than either side has (12 left, 16 right), so the build has a second edge clock and
divider on the right (:class:`.clocking.Ecp5Pll`, ``second_edge_clock``). The right side's
16 pins (J2) take the write strobe, the chip select and D0-D13; D14, D15 and A0-A3 are on
the left (J1) with the edges and IRQ, as shipped. The bus's logic then spans the 85F's die:
with any net with logic on it crossing the die in one cycle the build missed 125 MHz
(6.0-8.8 ns of routing alone, 82.0-92.8 MHz over four pin maps and pipelines), so the
write's detection, made beside the strobe's pins, crosses to the left through registers
only (``MemoryBusPort(far_lines=, crossing_stages=)``, ``CROSSING_STAGES``), and D14, D15
and A0-A3 are taken there from their own samples, delayed beside their pins as long.
"""

from amaranth.build import Attrs
from amaranth_boards import ulx3s as _platforms

from .board import FT231X_USB_ID, Board, Pin, PinMap, fmc_sram_bus
from .clocking import Ecp5Pll, ecp5_pll_settings
from .pad_delays import ECP5_SPEED_6_LVCMOS33

__all__ = ["VARIANTS", "DEFAULT_VARIANT", "board"]

CRYSTAL_HZ = 25_000_000
#: The capture (fabric) clock: the edge clock (twice this) divided by 2.
CLOCK_HZ = 125_000_000
#: Issue 12's goal for the ULX3S: 250 MHz, or 2 ns stamps, which the gearbox gives at 125 MHz.
GOAL_HZ = 250_000_000
#: The link clock (CLKOS): 2 Mbaud is 25 cycles per bit.
LINK_HZ = 50_000_000

#: ECP5 size on the board -> its amaranth-boards platform. A bitstream only loads on the size
#: it was built for.
VARIANTS = {
    "12F": _platforms.ULX3S_12F_Platform,
    "25F": _platforms.ULX3S_25F_Platform,
    "45F": _platforms.ULX3S_45F_Platform,
    "85F": _platforms.ULX3S_85F_Platform,
    # The memory bus build (an 85F; see the module docstring).
    "MEMBUS": _platforms.ULX3S_85F_Platform,
}
DEFAULT_VARIANT = "85F"


def _gp(n):
    return Pin(("gpio", 0), f"{n}+", f"GP{n}")


def _gn(n):
    return Pin(("gpio", 0), f"{n}-", f"GN{n}")


def _pll(board):
    if board.edge_clock_hz:
        return Ecp5Pll(
            ecp5_pll_settings(CRYSTAL_HZ, board.edge_clock_hz, board.link_hz),
            clock_resource="clk25",
            edge_clock=True,
            second_edge_clock=bool(board.second_edge_pins),
        )
    return Ecp5Pll(
        ecp5_pll_settings(CRYSTAL_HZ, board.clock_hz, board.link_hz), clock_resource="clk25"
    )


#: The right side's gearbox pins (banks 3 and 2, J2): the memory bus build's WE, CS and
#: D0-D13, so that the write strobe's logic and most of the data it selects are on one side.
_RIGHT = tuple(pin for n in range(14, 22) for pin in (_gp(n), _gn(n)))


#: Registers the bus's write detection crosses the 85F's die through, from the write strobe's
#: side to the far lines' (and the time-stamper's): with none, a net with logic on it
#: crossed in one 8 ns cycle (6.0-8.8 ns of routing alone, 82.0-92.8 MHz; docs/boards.md).
CROSSING_STAGES = 3


def _memory_bus(pins):
    """The bus build's bus: its far lines (``MemoryBusPort(far_lines=)``) the payload's bits
    (D0-D15, then A0-A3) whose pins are on the left, away from the write strobe's side."""
    lines = pins.bus_data + pins.bus_address
    far = sum(1 << n for n, pin in enumerate(lines) if pin not in _RIGHT)
    return fmc_sram_bus(len(pins.bus_address)) + (
        ("far_lines", far),
        ("crossing_stages", CROSSING_STAGES),
    )


def _pins(membus):
    """The pin map of the marker port's builds, or of the memory bus build."""
    common = dict(
        edges=(_gn(8), _gp(9), _gn(9), _gp(10)),
        irq=_gn(10),
        ground=("any J1 or J2 pin marked GND",) if membus else ("any J1 pin marked GND",),
        avoid=("J1 and J2 pins marked 3V3, 5V or 2V5",)
        if membus
        else ("J1 pins marked 3V3, 5V or 2V5",),
    )
    if membus:
        return PinMap(
            marker_data=(),
            marker_strobe=None,
            bus_we=_RIGHT[0],
            bus_cs=_RIGHT[1],
            bus_data=_RIGHT[2:] + (_gp(8), _gp(11)),
            bus_address=(_gn(11), _gp(12), _gn(12), _gp(13)),
            **common,
        )
    return PinMap(
        marker_data=tuple(_gp(n) for n in range(8)) + tuple(_gn(n) for n in range(8)),
        marker_strobe=_gp(8),
        **common,
    )


def board(
    variant=DEFAULT_VARIANT,
    clock_hz=CLOCK_HZ,
    ddr_inputs=True,
    link_hz=LINK_HZ,
    gearbox=True,
):
    """The ULX3S; ``gearbox=False`` builds the IDDRX1F (DDR, half-cycle) front end with the
    capture clock straight from the PLL instead; ``variant`` an ECP5 size, or ``membus`` the
    memory bus build (an 85F)."""
    variant = variant.upper()
    if variant not in VARIANTS:
        raise ValueError(f"unknown ULX3S variant {variant!r}; variants: {', '.join(VARIANTS)}")
    membus = variant == "MEMBUS"
    size = "85F" if membus else variant
    return Board(
        name="ulx3s",
        title=f"Radiona ULX3S ({size}{', memory bus' if membus else ''})",
        # The bus build identifies as its size: same FPGA, clocks and link.
        identify_name=f"ulx3s-{size.lower()}",
        platform_class=VARIANTS[variant],
        family="ecp5",
        clock_hz=clock_hz,
        goal_hz=GOAL_HZ,
        baud=2_000_000,
        link_hz=link_hz,
        # A 112-bit entry x 2048 takes 13 DP16KD (2048 x 9 each). (4096 entries would take
        # two banks of them and a multiplexer behind the block RAMs' slow output.)
        fifo_depth=2048,
        pins=_pins(membus),
        memory_bus=_memory_bus(_pins(membus)) if membus else (),
        # The bus build leaves out the IRQ trigger, as the iCEBreaker's does: with it the
        # capture clock's critical path was the entry writer's (its registered events or the
        # trigger's edge, through the LOSS record's choice, to the FIFO's write register),
        # 111.1-120.8 MHz at 125 MHz over seeds 1-5; without it, 137.5 MHz at seed 1 (136.9
        # since the short form registers its decisions a cycle early).
        irq_trigger=not membus,
        # Without the marker port's pins the bus build has no SUMP mode (its channels).
        sump_depth=0 if membus else 512,
        second_edge_pins=tuple(pin.label for pin in _RIGHT) if membus and gearbox else (),
        io_attrs=Attrs(IO_TYPE="LVCMOS33", PULLMODE="UP"),
        make_pll=_pll,
        # SRAM: lost at power-off. `-f` writes the flash instead.
        program=("openFPGALoader", "-b", "ulx3s", "{bitstream}"),
        bitstream_suffix=".bit",
        link="FT231X (the board's USB serial port, e.g. /dev/ttyUSB0), 2 Mbaud",
        serial_port="/dev/ttyUSB0",
        usb_id=FT231X_USB_ID,
        pad_delays=ECP5_SPEED_6_LVCMOS33,
        ddr_inputs=ddr_inputs,
        input_phases=4 if gearbox else 0,
        notes=(
            "To keep the bitstream across power cycles: `openFPGALoader -b ulx3s -f {bitstream}`.",
            "Give the variant of your board: a bitstream only loads on the ECP5 size it was "
            "built for (`make bitstream BOARD=ulx3s VARIANT=12F`).",
        ),
    )
