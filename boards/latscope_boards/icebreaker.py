"""1BitSquared iCEBreaker (iCE40UP5K-SG48).

Capture clock from the 12 MHz crystal, through the SB_PLL40 for clocks above it (the
crystal drives pin 35, the PLL's own input pad, hence SB_PLL40_PAD): 36 MHz, one clock for
both the capture and the link domain. The marker strobe and the edge channels go through the
SB_IO's DDR input registers: stamps count half cycles, 13.9 ns. Host link on the FT2232H's
channel B UART at 12 Mbaud, 3 cycles per bit.

The UP5K is the slowest of the three parts and this design fills 93 % of it, so issue 12's
goal (72 MHz with DDR inputs, 7 ns) is not reached (docs/boards.md, "Timing against the
goals"): with a 72 MHz capture clock and the link at half of it
(``board(two_clocks=True)``) the capture domain reached 47.95 and 51.16 MHz (nextpnr seeds
2 and 3; seed 1 does not place); with the HX8K's iCE40 gearbox on a 72 MHz edge clock
(``board(gearbox=True)``, 6.94 ns stamps at 36 MHz) nextpnr placed it at one of six seeds (93-94 %
full), and there the edge clock's half-period paths from the I/O registers (8.5 ns of 6.94)
and its crossing into the capture clock (7.11 ns of 6.94) miss.

Marker data on PMOD1A (D0..D7) and PMOD1B (D8..D15); strobe, edge channels and IRQ on PMOD2,
whose pins the snap-off LED/button section also uses: snap it off first. On every Pmod, pins
5 and 11 are ground and pins 6 and 12 are 3.3 V.
"""

from amaranth.build import Attrs
from amaranth_boards.icebreaker import ICEBreakerPlatform

from .board import FT2232H_BAUDS, Board, Pin, PinMap, fastest_baud
from .clocking import CrystalClock, Ice40Pll, ice40_pll_settings

__all__ = ["board"]

CRYSTAL_HZ = 12_000_000
CLOCK_HZ = 36_000_000
GOAL_HZ = 72_000_000

_PMOD_NAMES = {0: "PMOD1A", 1: "PMOD1B", 2: "PMOD2"}
_PMOD_SIGNAL_PINS = (1, 2, 3, 4, 7, 8, 9, 10)


def _pmod(number, pin):
    return Pin(("pmod", number), str(pin), f"{_PMOD_NAMES[number]}-{pin}")


def _pll(board):
    if board.clock_hz == CRYSTAL_HZ:      # the PLL cannot output less than 16 MHz
        return CrystalClock(board.clock_hz, clock_resource="clk12")
    if board.edge_clock_hz:
        # Output A the edge clock, output B (GENCLK_HALF) the appliance clock.
        return Ice40Pll(ice40_pll_settings(CRYSTAL_HZ, board.edge_clock_hz),
                        clock_resource="clk12", pad=True, edge_clock=True)
    # The link clock is the PLL's second output, half the capture clock (GENCLK_HALF).
    return Ice40Pll(ice40_pll_settings(CRYSTAL_HZ, board.clock_hz), clock_resource="clk12",
                    pad=True, link_half=bool(board.link_hz))


def board(clock_hz=CLOCK_HZ, ddr_inputs=True, two_clocks=False, gearbox=False):
    # One clock for the appliance: with two (72/36 MHz) the capture domain reaches 51.16 MHz
    # at best (nextpnr seeds 1-3; routing on a 93 % full device), and the iCE40's second PLL
    # output is half the first, so a slower capture clock would cost the 12 Mbaud link
    # (docs/boards.md). The gearbox (not shipped: it misses timing, see the module's
    # docstring) takes the PLL's second output for its edge clock.
    gearbox = gearbox and ddr_inputs and not two_clocks
    link_hz = clock_hz // 2 if two_clocks else 0
    return Board(
        name="icebreaker",
        title="1BitSquared iCEBreaker",
        identify_name="icebreaker",
        platform_class=ICEBreakerPlatform,
        family="ice40",
        clock_hz=clock_hz,
        goal_hz=GOAL_HZ,
        baud=fastest_baud(link_hz or clock_hz, FT2232H_BAUDS),
        link_hz=link_hz,
        # 30 block RAMs of 4 kbit; a 112-bit entry x 1024 takes 28 of them.
        fifo_depth=1024,
        # No SUMP device mode: it needs 3 more block RAMs and about 1500 logic cells.
        sump_depth=0,
        # 93 % full (4896 cells): seed 5 gives 36.35 MHz at 36 MHz. (Before the two clock
        # domains, 89 % full, seeds 1 and 2 gave 35.09 and 35.81 MHz: the command
        # processor's decode, since the ECHO command.)
        seed=5,
        pins=PinMap(
            marker_data=(tuple(_pmod(0, pin) for pin in _PMOD_SIGNAL_PINS)
                         + tuple(_pmod(1, pin) for pin in _PMOD_SIGNAL_PINS)),
            marker_strobe=_pmod(2, 1),
            edges=tuple(_pmod(2, pin) for pin in (2, 3, 4, 7)),
            irq=_pmod(2, 8),
            ground=tuple(f"{name}-{pin}" for name in _PMOD_NAMES.values() for pin in (5, 11)),
            avoid=tuple(f"{name}-{pin} (3.3 V)" for name in _PMOD_NAMES.values()
                        for pin in (6, 12)),
        ),
        io_attrs=Attrs(IO_STANDARD="SB_LVCMOS", PULLUP=1),
        make_pll=_pll,
        program=("openFPGALoader", "-b", "ice40_generic", "{bitstream}"),
        bitstream_suffix=".bin",
        ddr_inputs=ddr_inputs,
        input_phases=4 if gearbox else 0,
        link="FT2232H channel B (second serial port of the board, e.g. /dev/ttyUSB1)",
        notes=(
            "Other programmer: `iceprog {bitstream}` (Debian package fpga-icestorm).",
            "PMOD2 is shared with the snap-off LED/button section: snap it off before "
            "connecting a target (its buttons would pull edge channels, its LEDs load them).",
        ),
    )
