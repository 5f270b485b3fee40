"""The I/O cells' own delays between a pad and its register, from the vendor timing data
that the open tools carry: what no nextpnr report contains (its timing ends at the I/O cell)
and what the pins' stamps do not see.

- **Output** (the IRQ pin): from the capture clock edge at the I/O cell's output register
  (:mod:`.irq_output`) to the pad: the register's clock-to-output and the output buffer.
  An IRQ edge reaches the pad this long after its stamp; the host adds it to IRQ stamps
  (``latscope.link.pad_delay``).
- **Input** (the marker strobe and the edge channels, sampled in the I/O cell by the
  gearboxes' DDR registers): from the pad to the register's data input, plus the register's
  setup time: a pin change is sampled at a clock edge when it reaches the pad at least this
  long before it. Recorded, not corrected (the stamps' resolution is a quarter cycle).

Figures are typical (the middle of the data's min:typ:max), in ns, rising and falling pad
edge. Each names the file and entry it comes from. They leave out what lies outside the
chip's I/O cell: the clock network's arrival at the I/O tile (the same global clock as
the stamping logic's), the board's trace and the DUT's load.

- iCE40: icestorm's timing database, ``icefuzz/timings_hx8k.txt`` and
  ``icefuzz/timings_up5k.txt`` (YosysHQ/icestorm 3cdcf4b, 2025-04-01; built into
  ``icetime``, Debian package fpga-icestorm), cells ``PRE_IO`` (the SB_IO's registers) and
  ``IO_PAD`` (its buffer), ``IOPATH`` (delay) and ``SETUP`` entries, picoseconds.
- ECP5: Project Trellis's timing database, ``ECP5/timing/speed_6/cells.json``
  (YosysHQ/prjtrellis-db 4dda149, 2023-09-28; the ULX3S's LFE5U parts are speed grade 6),
  cells ``IOLOGIC:MODE=...`` and ``PIO:IOTYPE=LVCMOS33``, picoseconds.
"""

from dataclasses import dataclass

__all__ = ["Delay", "PadDelays", "ICE40HX8K", "ICE40UP5K", "ECP5_SPEED_6_LVCMOS33"]


@dataclass(frozen=True)
class Delay:
    """One step of a pad delay: ns for a rising and a falling pad edge, and its source (the
    database file and entry)."""

    rise_ns: float
    fall_ns: float
    source: str


@dataclass(frozen=True)
class PadDelays:
    """The output and input pad delays of a device's I/O cells, each the sum of its steps."""

    output: tuple[Delay, ...]
    inputs: tuple[Delay, ...]

    @staticmethod
    def _total(steps):
        return (
            round(sum(step.rise_ns for step in steps), 4),
            round(sum(step.fall_ns for step in steps), 4),
        )

    @property
    def output_ns(self):
        """(rising, falling) ns from the output register's clock edge to the pad."""
        return self._total(self.output)

    @property
    def input_ns(self):
        """(rising, falling) ns a pad change must precede the input register's clock edge."""
        return self._total(self.inputs)

    @property
    def irq_output_ns(self):
        """The one figure the host adds to IRQ stamps: the mean of the rising and falling
        output delays (they differ by less than 0.15 ns, far below a stamp unit)."""
        return round(sum(self.output_ns) / 2, 4)

    def irq_stamp_units(self, stamp_hz):
        """:attr:`irq_output_ns` in whole stamp units of a device stamping ``stamp_hz``
        times a second, the nearest (0 under half a unit): what the host adds to IRQ stamps
        (``latscope.link.pad_delay``)."""
        return round(self.irq_output_ns * stamp_hz / 1e9)


_TRELLIS = "ECP5/timing/speed_6/cells.json"


def _ice40(timings, clock_to_out, setup):
    """An iCE40's pad delays from its icestorm timing file ``timings``: the SB_IO's
    registers' clock-to-output and input setup, (rise, fall) ns, with its buffer's (the same
    in every part's file)."""
    return PadDelays(
        output=(
            Delay(*clock_to_out, f"{timings}, PRE_IO: IOPATH posedge:OUTPUTCLK PADOUT"),
            Delay(2.2915, 2.3532, f"{timings}, IO_PAD: IOPATH DIN PACKAGEPIN"),
        ),
        inputs=(
            Delay(0.590, 0.540, f"{timings}, IO_PAD: IOPATH PACKAGEPIN DOUT"),
            Delay(
                *setup,
                f"{timings}, PRE_IO: SETUP posedge:PADIN / negedge:PADIN posedge:INPUTCLK",
            ),
        ),
    )


#: iCE40HX8K (the HX8K-B-EVN's iCE40HX8K-CT256).
ICE40HX8K = _ice40("icefuzz/timings_hx8k.txt", (0.0997, 0.1247), (1.6820, 1.6757))
#: iCE40UP5K (the iCEBreaker's iCE40UP5K-SG48).
ICE40UP5K = _ice40("icefuzz/timings_up5k.txt", (0.9172, 0.9903), (2.7150, 2.7046))

#: ECP5 LFE5U, speed grade 6, LVCMOS33 pins (the ULX3S's, every size).
ECP5_SPEED_6_LVCMOS33 = PadDelays(
    output=(
        Delay(1.200, 1.200, f"{_TRELLIS}, IOLOGIC:MODE=OREG: IOPath CLK IOLDO"),
        Delay(2.331, 2.331, f"{_TRELLIS}, PIO:IOTYPE=LVCMOS33: IOPath PADDO PAD"),
    ),
    inputs=(
        Delay(1.065, 1.065, f"{_TRELLIS}, PIO:IOTYPE=LVCMOS33: IOPath PAD PADDI"),
        Delay(0.445, 0.445, f"{_TRELLIS}, IOLOGIC:MODE=IDDRX2F: SetupHold DI posedge:ECLK"),
    ),
)
