"""Radiona ULX3S (ECP5 LFE5U-12F/25F/45F/85F, CABGA381).

Capture clock goal 200 MHz (5 ns) from the 25 MHz crystal through the EHXPLLL; host link on
the FT231X at 2 Mbaud. The FT231X's rates are 3 MHz / n (with n = 1, 1.5, 2, 2.5, ...): 3
Mbaud would need a divisor of 66.7 at 200 MHz, while 2 Mbaud is exactly 100, so the link is
exact at 200 MHz. Appliance pins are on header J1: GP0..GP10 and GN0..GN10.
"""

from amaranth.build import Attrs
from amaranth_boards import ulx3s as _platforms

from .board import Board, Pin, PinMap
from .clocking import Ecp5Pll, ecp5_pll_settings

__all__ = ["VARIANTS", "board"]

CRYSTAL_HZ = 25_000_000
CLOCK_HZ = 200_000_000

#: ECP5 size on the board -> (amaranth-boards platform, block RAM bits: DP16KD x 18 kbit).
VARIANTS = {
    "12F": (_platforms.ULX3S_12F_Platform, 32 * 18432),
    "25F": (_platforms.ULX3S_25F_Platform, 56 * 18432),
    "45F": (_platforms.ULX3S_45F_Platform, 108 * 18432),
    "85F": (_platforms.ULX3S_85F_Platform, 208 * 18432),
}


def _gp(n):
    return Pin(("gpio", 0), f"{n}+", f"GP{n}")


def _gn(n):
    return Pin(("gpio", 0), f"{n}-", f"GN{n}")


def _pll(board):
    return Ecp5Pll(ecp5_pll_settings(CRYSTAL_HZ, board.clock_hz), clock_resource="clk25")


def board(variant="25F", clock_hz=CLOCK_HZ):
    platform_class, block_ram_bits = VARIANTS[variant]
    return Board(
        name="ulx3s",
        title=f"Radiona ULX3S ({variant})",
        identify_name=f"ulx3s-{variant.lower()}",
        platform_class=platform_class,
        family="ecp5",
        crystal=("clk25", CRYSTAL_HZ),
        clock_hz=clock_hz,
        baud=2_000_000,
        # A 112-bit entry x 4096 takes 28 DP16KD (4096 x 4 each): fits even the 12F's 32.
        fifo_depth=4096,
        block_ram_bits=block_ram_bits,
        pins=PinMap(
            marker_data=tuple(_gp(n) for n in range(8)) + tuple(_gn(n) for n in range(8)),
            marker_strobe=_gp(8),
            edges=(_gn(8), _gp(9), _gn(9), _gp(10)),
            irq=_gn(10),
        ),
        io_attrs=Attrs(IO_TYPE="LVCMOS33", PULLMODE="UP"),
        make_pll=_pll,
        # SRAM: lost at power-off. Add --write-flash to keep it.
        program=("openFPGALoader", "-b", "ulx3s", "{bitstream}"),
        bitstream_suffix=".bit",
        link="FT231X (the board's only USB serial port, e.g. /dev/ttyUSB0), 2 Mbaud",
        notes=(
            "To keep the bitstream across power cycles: "
            "`openFPGALoader -b ulx3s --write-flash {bitstream}`.",
        ),
    )
