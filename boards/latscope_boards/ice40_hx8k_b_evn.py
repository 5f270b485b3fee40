"""Lattice iCE40-HX8K-B-EVN breakout board (iCE40HX8K-CT256): the default board.

Two clocks from the 12 MHz crystal through one SB_PLL40_2F: the capture clock, 120 MHz, and
the link clock at half of it, 60 MHz (the PLL's GENCLK_HALF output). The marker strobe and
the edge channels go through the SB_IO's DDR input registers, so stamps count half cycles:
4.17 ns. At 120 MHz nextpnr seeds 1-3 give 112.38 / 135.85 / 130.87 MHz (seed 2 ships); asked
for 144 MHz (the next multiple of 24 MHz) the capture domain reached 120.45-129.17 MHz
(goal: 150 MHz, 3.4 ns; see docs/boards.md). Host link
on the FT2232H's channel B UART at 12 Mbaud (5 link cycles per bit; the link clock must be a
multiple of 12 MHz, so the capture clock is one of 24 MHz). All appliance pins are on header J2 (FPGA
bank 1), which nothing else on the board uses.

J2 (2 x 20, pin 1 marked): pins 7, 8, 15, 16, 23, 24, 31, 32, 39, 40 are ground; pins 1 and 3
carry the 1.2 V core supply and pin 2 the bank's VCCIO (3.3 V): never connect those three.
"""

from amaranth.build import Attrs
from amaranth_boards.ice40_hx8k_b_evn import ICE40HX8KBEVNPlatform

from .board import FT2232H_BAUDS, Board, Pin, PinMap, fastest_baud
from .clocking import Ice40Pll, ice40_pll_settings

__all__ = ["board"]

CRYSTAL_HZ = 12_000_000
CLOCK_HZ = 120_000_000
GOAL_HZ = 150_000_000


def _j2(number):
    return Pin(("j", 2), str(number), f"J2-{number}")


def _pll(board):
    # The link clock is the PLL's second output, half the capture clock (GENCLK_HALF).
    return Ice40Pll(ice40_pll_settings(CRYSTAL_HZ, board.clock_hz), clock_resource="clk12",
                    link_half=True)


def board(clock_hz=CLOCK_HZ, ddr_inputs=True):
    return Board(
        name="ice40-hx8k-b-evn",
        title="Lattice iCE40-HX8K-B-EVN",
        identify_name="ice40-hx8k-b-evn",
        platform_class=ICE40HX8KBEVNPlatform,
        family="ice40",
        clock_hz=clock_hz,
        goal_hz=GOAL_HZ,
        baud=fastest_baud(clock_hz // 2, FT2232H_BAUDS),
        link_hz=clock_hz // 2,
        # 32 block RAMs of 4 kbit; a 112-bit entry x 1024 takes 28 of them (the FIFO holds
        # one more entry in its output register).
        fifo_depth=1024,
        # Seed 1 of this gateware misses 120 MHz (112.38 MHz: a loss count's saturation
        # compare); seeds 2 and 3 meet it (135.85, 130.87 MHz).
        seed=2,
        pins=PinMap(
            marker_data=tuple(_j2(n) for n in (4, 5, 6, 9, 10, 11, 12, 13, 14, 17, 18, 19, 20,
                                               21, 22, 25)),
            marker_strobe=_j2(26),
            edges=tuple(_j2(n) for n in (27, 28, 29, 30)),
            irq=_j2(33),
            ground=tuple(f"J2-{n}" for n in (7, 8, 15, 16, 23, 24, 31, 32, 39, 40)),
            avoid=("J2-1 (1.2 V)", "J2-2 (VCCIO 3.3 V)", "J2-3 (1.2 V)"),
        ),
        # Pull-ups keep unconnected inputs quiet (an open marker line reads as 1).
        io_attrs=Attrs(IO_STANDARD="SB_LVCMOS", PULLUP=1),
        make_pll=_pll,
        # FT2232H channel A drives the SPI flash (jumpers J6/J7 in their flash position, as
        # shipped); the FPGA boots from the flash after programming.
        program=("openFPGALoader", "-b", "ice40_generic", "{bitstream}"),
        bitstream_suffix=".bin",
        ddr_inputs=ddr_inputs,
        link="FT2232H channel B (second serial port of the board, e.g. /dev/ttyUSB1)",
        notes=(
            "Other programmer: `iceprog {bitstream}` (Debian package fpga-icestorm).",
        ),
    )
