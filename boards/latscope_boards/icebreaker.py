"""The 1BitSquared iCEBreaker (iCE40UP5K-SG48) as a latscope board: its clocks, input gearbox,
pins and host link.

The marker strobe and the edge channels go through the iCE40 1:4 input gearbox
(:func:`.gearbox.ice40_gearbox_inputs`, as on the HX8K): each pin's SB_IO samples it on both
edges of a 72 MHz edge clock, four samples per 36 MHz appliance cycle, so stamps count
quarter cycles, 6.94 ns (issue 12's goal: 72 MHz with DDR inputs, 7 ns). Both clocks come from
the 12 MHz crystal through the PLL (the crystal drives pin 35, the PLL's own input pad, hence
SB_PLL40_2F_PAD): the edge clock on output A, the appliance's one clock (capture
and link) on output B at half of it (GENCLK_HALF). Host link on the FT2232H's channel B UART
at 12 Mbaud, 3 cycles per bit.

The UP5K is the slowest of the three parts, and the gearbox meets the edge clock's
half-period paths from the SB_IOs only with room to spare beside the I/O tiles (the builds,
full and less full: docs/boards.md, "Timing against the goals"). ``board(gearbox=False)``
builds the previous front end instead: DDR inputs on the 36 MHz clock (13.9 ns stamps), or a
72 MHz capture clock with the link at half of it (``board(gearbox=False, two_clocks=True)``),
which nextpnr does not reach (docs/boards.md).

The bring-up build (``board(variant="bringup")``, :data:`VARIANTS`) adds the clock-phase
probe of the gearbox, for which the full build has no room, and leaves out the IRQ trigger.
The memory bus build (``board(variant="membus")``) takes the markers from a DUT's external
memory bus instead of the marker port (docs/membus.md): the bus's data lines on the marker
data's pins, its write strobe on the strobe's, its chip select and one address line on
PMOD2's last two, every one through the gearbox; it too leaves out the IRQ trigger.
The SPI-link build (``board(variant="spi")``) is the full build with the SPI link
(docs/spi-link.md) in place of the IRQ trigger, for which the full build has no room, and
with short records, for which it has.

Marker data on PMOD1A (D0..D7) and PMOD1B (D8..D15); strobe, edge channels and IRQ on PMOD2,
whose pins the snap-off LED/button section also uses: snap it off first. On every Pmod, pins
5 and 11 are ground and pins 6 and 12 are 3.3 V.
"""

from amaranth.build import Attrs
from amaranth_boards.icebreaker import ICEBreakerPlatform

from .board import (
    FT2232H_BAUDS,
    FT2232H_SPI_HZ,
    FT2232H_USB_ID,
    Board,
    Pin,
    PinMap,
    fastest_baud,
    fmc_sram_bus,
)
from .clocking import CrystalClock, Ice40Pll
from .pad_delays import ICE40UP5K

__all__ = ["VARIANTS", "DEFAULT_VARIANT", "MEMORY_BUS", "board"]

#: The builds (``make bitstream BOARD=icebreaker VARIANT=bringup``): the full appliance, the memory
#: bus build (below), and the bring-up build, which has room for the clock-phase probe of the
#: gearbox (:class:`.gearbox.Ice40PhaseProbe`) because it leaves out the IRQ trigger. The full build
#: has no room for the probe: with it nextpnr found no legal placement (4769 of 5280 cells before
#: it, seed 3). Bring-up does not need the trigger: the checks of docs/boards.md's checklist (the
#: clock phase, the loopback) use the periodic IRQ generator, and the trigger is the same
#: capture-domain logic on every board, proven in the gateware simulation and the full build's
#: netlist. The front ends, the gearbox (its placement too), the clocks, the FIFO and the link are
#: the full build's, so what the probe judges is what the full build runs.
#: The memory bus build (``VARIANT=membus``) replaces the marker port with the bus, as the
#: HX8K's does: the three Pmods' 24 signal pins take the bus's 18 (data, write strobe, chip
#: select), the four edges, the IRQ and one address line (A0), so a DUT has two marker
#: addresses. It leaves out the IRQ trigger for room, as the bring-up build does: with it
#: (5099 of 5280 cells) nextpnr found no legal placement at seed 1; without it, 4733. The
#: full build takes its marker data through plain DDR inputs, the bus its 16 data lines,
#: chip select and A0 through the gearbox too.
#: The SPI-link build (``VARIANT=spi``, ``--link spi``) is the full build with the SPI link and
#: without the IRQ trigger: with both, 4986 of 5280 cells, and nextpnr found no legal
#: placement (seed 1). The trigger costs 371 cells (4986 with it, 4615 without: nextpnr's
#: packed cells of the two designs); a 512-entry FIFO instead of 1024 would free 14 block RAMs
#: but only 6 cells (4609), and the SUMP mode is not in any iCEBreaker build. Without the
#: trigger it places and meets timing at seed 1, with short records too (5012 cells, 36.73
#: MHz at 36: the short form's comparisons registered a cycle early). It names itself in IDENTIFY
#: (``icebreaker-spi``), so that the host knows before it tries whether the link is there.
VARIANTS = ("full", "bringup", "membus", "spi")
DEFAULT_VARIANT = "full"
#: The memory bus build's bus (one address line, A0).
MEMORY_BUS = fmc_sram_bus(1)

CRYSTAL_HZ = 12_000_000
CLOCK_HZ = 36_000_000
GOAL_HZ = 72_000_000

_PMOD_NAMES = {0: "PMOD1A", 1: "PMOD1B", 2: "PMOD2"}
_PMOD_SIGNAL_PINS = (1, 2, 3, 4, 7, 8, 9, 10)

#: Where the gearbox's flip-flops go (:class:`.gearbox.Ice40Gearbox` ``placement``): in the
#: logic tiles beside each pin's I/O tile. Left to itself, nextpnr placed some far from their
#: pins at some seeds (seed 3: the crossing 8.08 ns of 6.94). The I/O tiles are those nextpnr's
#: packer assigns the package pins (`nextpnr-ice40 --up5k --package sg48 --pack-only
#: --write`, as tests/boards/test_boards.py checks); column 19 is block RAM, hence column 20 for
#: pin 25, whose D_IN_1 (a path into the capture clock, unconstrained) gets the nearer tile.
_GEARBOX_PLACEMENT = (
    ("PMOD2-1", ((18, 30), (17, 30), 0)),  # strobe, pin 27: I/O tile (18, 31)
    ("PMOD2-7", ((18, 30), (17, 30), 1)),  # EDGE3, pin 26: (18, 31)
    ("PMOD2-2", ((20, 29), (20, 30), 0)),  # EDGE0, pin 25: (19, 31)
    ("PMOD2-3", ((18, 1), (17, 1), 0)),  # EDGE1, pin 21: (18, 0)
    ("PMOD2-4", ((21, 1), (22, 1), 0)),  # EDGE2, pin 19: (21, 0)
)


def _pmod(number, pin):
    return Pin(("pmod", number), str(pin), f"{_PMOD_NAMES[number]}-{pin}")


def _pins(variant):
    """The pin map of a variant: the marker port's pins, or the memory bus's."""
    data = tuple(_pmod(0, pin) for pin in _PMOD_SIGNAL_PINS) + tuple(
        _pmod(1, pin) for pin in _PMOD_SIGNAL_PINS
    )
    common = dict(
        edges=tuple(_pmod(2, pin) for pin in (2, 3, 4, 7)),
        irq=_pmod(2, 8),
        ground=tuple(f"{name}-{pin}" for name in _PMOD_NAMES.values() for pin in (5, 11)),
        avoid=tuple(f"{name}-{pin} (3.3 V)" for name in _PMOD_NAMES.values() for pin in (6, 12)),
    )
    if variant == "membus":
        return PinMap(
            marker_data=(),
            marker_strobe=None,
            bus_we=_pmod(2, 1),
            bus_cs=_pmod(2, 9),
            bus_data=data,
            bus_address=(_pmod(2, 10),),
            **common,
        )
    return PinMap(marker_data=data, marker_strobe=_pmod(2, 1), **common)


def _pll(board):
    if board.clock_hz == CRYSTAL_HZ:  # the PLL cannot output less than 16 MHz
        return CrystalClock(board.clock_hz, clock_resource="clk12")
    return Ice40Pll.for_board(board, CRYSTAL_HZ, clock_resource="clk12", pad=True)


def board(
    variant=DEFAULT_VARIANT, clock_hz=CLOCK_HZ, ddr_inputs=True, two_clocks=False, gearbox=True
):
    """The iCEBreaker: the gearbox on one appliance clock (36 MHz), or with ``gearbox=False``
    DDR inputs on that clock (and with ``two_clocks`` a capture clock and a link clock at
    half of it); ``variant`` one of :data:`VARIANTS`."""
    variant = variant.lower()
    if variant not in VARIANTS:
        raise ValueError(f"unknown iCEBreaker variant {variant!r}; variants: {', '.join(VARIANTS)}")
    bringup = variant == "bringup"
    membus = variant == "membus"
    spi = variant == "spi"
    # The iCE40's second PLL output is half the first, so a slower capture clock would cost
    # the 12 Mbaud link; the gearbox takes the first output for its edge clock.
    gearbox = gearbox and ddr_inputs and not two_clocks
    link_hz = clock_hz // 2 if two_clocks else 0
    return Board(
        name="icebreaker",
        title="1BitSquared iCEBreaker"
        + (" (bring-up)" if bringup else "")
        + (" (memory bus)" if membus else "")
        + (" (SPI link)" if spi else ""),
        # The SPI-link build names itself: the host then knows whether the link is there
        # before it tries it (no field of the IDENTIFY reply says).
        identify_name="icebreaker-spi" if spi else "icebreaker",
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
        # 88 % full with the IRQ trigger (4636 cells): seeds 1-3 gave 35.40 / 35.85 / 36.15 MHz at
        # 36 MHz (only seed 3 met it; before the trigger, 4270 cells, all three did), the
        # crossing 4.38 ns at each (the gearbox's flip-flops placed). With issue 28's gateware
        # and the IRQ output in its I/O cell (4761 cells) seed 3 does not place (nextpnr:
        # "Unable to find legal placement for all cells"); seed 1 gave 36.04 MHz. With version
        # 4's long records and the memory bus port's appliance changes (4779 cells) seeds 1, 2,
        # 4, 5 and 7 do not place, seed 3 gives 35.76 MHz and seed 6 36.27 MHz: the shipped
        # build is seed 6, and so the bring-up build's (the same design but for the probe and
        # the trigger); the memory bus and SPI-link builds (other designs) place at seed 1.
        seed=1 if membus or spi else 6,
        pins=_pins(variant),
        memory_bus=MEMORY_BUS if membus else (),
        io_attrs=Attrs(IO_STANDARD="SB_LVCMOS", PULLUP=1),
        make_pll=_pll,
        program=("openFPGALoader", "-b", "ice40_generic", "{bitstream}"),
        bitstream_suffix=".bin",
        ddr_inputs=ddr_inputs,
        input_phases=4 if gearbox else 0,
        gearbox_placement=_GEARBOX_PLACEMENT if gearbox else (),
        # The clock-phase probe only in the bring-up build, the trigger only in the full one
        # (VARIANTS says why).
        phase_probe=bringup and gearbox,
        irq_trigger=variant == "full",
        # Short records only in the SPI-link build, which has the cells for them (the
        # others, long ones only, still protocol version 4: with the encoder's value
        # histories and comparators nextpnr found no legal placement, ~90 % of the 5280
        # cells). Long records cost bytes an event: 4.15 on make demo's stream, 5.08 for a
        # TSL marker every us at 144 MHz stamps (short: 2.42, 2.40; docs/protocol.md, "In the
        # gateware"), which on the SPI link's 3.75 MB/s is the rate (docs/spi-link.md, "What
        # it gains"). Before the short form registered its comparisons a cycle early, the
        # SPI-link build missed 36 MHz with them (29.64-33.58 MHz at seeds 1-8).
        short_records=spi,
        link="FT2232H channel B (second serial port of the board, e.g. /dev/ttyUSB1)",
        serial_port="/dev/ttyUSB1",
        # The SPI link (docs/spi-link.md) only in the SPI-link build (VARIANTS says why).
        spi_hz=FT2232H_SPI_HZ if spi else 0,
        usb_id=FT2232H_USB_ID,
        pad_delays=ICE40UP5K,
        notes=(
            "Other programmer: `iceprog {bitstream}` (Debian package fpga-icestorm).",
            "PMOD2 is shared with the snap-off LED/button section: snap it off before "
            "connecting a target (its buttons would pull edge channels, its LEDs load them).",
        ),
    )
