"""Radiona ULX3S (ECP5 LFE5U-12F/25F/45F/85F, CABGA381).

Two clocks from the 25 MHz crystal through the EHXPLLL: the capture clock on CLKOP, 120 MHz,
and the link clock on CLKOS, 50 MHz (the capture domain gives 122.9-137.7 MHz over nextpnr
seeds 1-3 when built for 125 MHz). Asked for 250 MHz (the goal) the capture domain reaches
about 142 MHz (seed 1), limited by the IRQ generator's edge logic (docs/boards.md).
DDR input registers (IDDRX1F) on the marker strobe and the edge channels make stamps carry a
half-cycle bit: 4.17 ns at 120 MHz. Host link on the FT231X at 2 Mbaud: the FT231X makes
3 MHz / n (n = 1, 1.5, 2, 2.125, ...), and of its rates above 1 Mbaud only 2 Mbaud divides
the even-MHz clocks (25 link cycles per bit at 50 MHz).
Appliance pins are on header J1: GP0..GP10 and GN0..GN10.
"""

from amaranth.build import Attrs
from amaranth_boards import ulx3s as _platforms

from .board import Board, Pin, PinMap
from .clocking import Ecp5Pll, ecp5_pll_settings

__all__ = ["VARIANTS", "DEFAULT_VARIANT", "board"]

CRYSTAL_HZ = 25_000_000
CLOCK_HZ = 120_000_000
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
}
DEFAULT_VARIANT = "85F"


def _gp(n):
    return Pin(("gpio", 0), f"{n}+", f"GP{n}")


def _gn(n):
    return Pin(("gpio", 0), f"{n}-", f"GN{n}")


def _pll(board):
    return Ecp5Pll(ecp5_pll_settings(CRYSTAL_HZ, board.clock_hz, board.link_hz),
                   clock_resource="clk25")


def board(variant=DEFAULT_VARIANT, clock_hz=CLOCK_HZ, ddr_inputs=True, link_hz=LINK_HZ):
    variant = variant.upper()
    if variant not in VARIANTS:
        raise ValueError(f"unknown ULX3S variant {variant!r}; variants: {', '.join(VARIANTS)}")
    return Board(
        name="ulx3s",
        title=f"Radiona ULX3S ({variant})",
        identify_name=f"ulx3s-{variant.lower()}",
        platform_class=VARIANTS[variant],
        family="ecp5",
        clock_hz=clock_hz,
        goal_hz=GOAL_HZ,
        baud=2_000_000,
        link_hz=link_hz,
        # A 112-bit entry x 2048 takes 13 DP16KD (2048 x 9 each). (4096 entries would take
        # two banks of them and a multiplexer behind the block RAMs' slow output.)
        fifo_depth=2048,
        pins=PinMap(
            marker_data=tuple(_gp(n) for n in range(8)) + tuple(_gn(n) for n in range(8)),
            marker_strobe=_gp(8),
            edges=(_gn(8), _gp(9), _gn(9), _gp(10)),
            irq=_gn(10),
            ground=("any J1 pin marked GND",),
            avoid=("J1 pins marked 3V3, 5V or 2V5",),
        ),
        io_attrs=Attrs(IO_TYPE="LVCMOS33", PULLMODE="UP"),
        make_pll=_pll,
        # SRAM: lost at power-off. `-f` writes the flash instead.
        program=("openFPGALoader", "-b", "ulx3s", "{bitstream}"),
        bitstream_suffix=".bit",
        link="FT231X (the board's USB serial port, e.g. /dev/ttyUSB0), 2 Mbaud",
        ddr_inputs=ddr_inputs,
        notes=(
            "To keep the bitstream across power cycles: "
            "`openFPGALoader -b ulx3s -f {bitstream}`.",
            "Give the variant of your board: a bitstream only loads on the ECP5 size it was "
            "built for (`make bitstream BOARD=ulx3s VARIANT=12F`).",
        ),
    )
