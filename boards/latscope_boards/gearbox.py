"""1:4 input gearboxes: the marker strobe and the edge pins sampled four times a capture cycle.

A gearbox samples each pin on both edges of an edge clock (``eclk``) at twice the capture
clock and hands the four samples of a capture cycle to the capture domain together, in the
convention of :mod:`latscope_gateware.ddr_edges` (``phases`` 4): during capture cycle *c*
the samples are the pin at ``c - 1``, ``c - 3/4``, ``c - 1/2`` and ``c - 1/4`` (in capture
cycles from its rising edges), packed ``Cat(s_0, s_1, s_2, s_3)``, earliest first. Both
gearboxes need the capture clock's rising edges on rising edges of the edge clock (a divider
of it), which their boards' clocking provides (:mod:`.clocking`).

- ECP5 (:func:`ecp5_gearbox_inputs`): the IDDRX2F cell does it all in the I/O logic.
- iCE40 (:func:`ice40_gearbox_inputs`): there is no gearbox cell, so one is built from the
  SB_IO's DDR input registers on the edge clock and a small shift register in the fabric.
"""

from amaranth.hdl import *
from amaranth.lib import io

__all__ = ["ecp5_gearbox_inputs", "ice40_gearbox_inputs", "Ice40Gearbox"]


def ecp5_gearbox_inputs(m, name, port, capture):
    """Input buffers of the pins ``port``, each into an ECP5 IDDRX2F (the 1:4 input gearbox):
    the pin is sampled at every rising and falling edge of the edge clock (``eclk``, twice
    the capture clock), and the four samples of a capture cycle come out together on Q0..Q3,
    Q0 the earliest, clocked by the capture clock (the edge clock divided by 2 in CLKDIVF,
    see :class:`.clocking.Ecp5Pll`). Returns the samples as the appliance's front ends take
    them: ``Cat(s_0, s_1, s_2, s_3)``, each as wide as ``port``."""
    m.submodules[f"{name}_buffer"] = pins = io.Buffer("i", port)
    width = len(port)
    samples = [Signal(width, name=f"{name}_q{k}") for k in range(4)]
    for n in range(width):
        m.submodules[f"{name}_gearbox_{n}"] = Instance(
            "IDDRX2F", p_GSR="DISABLED",
            i_D=pins.i[n], i_SCLK=ClockSignal(capture), i_ECLK=ClockSignal("eclk"),
            i_RST=Const(0),
            # ALIGNWD (word slip) stays unconnected: nextpnr routes it to the IOLOGIC's SLIP,
            # which not every PIO of a pair has a wire for ("No wire found for port SLIP").
            **{f"o_Q{k}": samples[k][n] for k in range(4)})
    return Cat(*samples)


#: SB_IO PIN_TYPE: PIN_INPUT_DDR (input registered on both edges of INPUT_CLK: D_IN_0 at the
#: rising edge, D_IN_1 at the falling edge), PIN_NO_OUTPUT.
_SB_IO_INPUT_DDR = 0b000000


def ice40_gearbox_inputs(m, name, port, capture):
    """The pins ``port`` through a 1:4 gearbox built of iCE40 parts (:class:`Ice40Gearbox`,
    added to ``m`` as ``<name>_gearbox``); returns their samples as
    :func:`ecp5_gearbox_inputs` does."""
    m.submodules[f"{name}_gearbox"] = gearbox = Ice40Gearbox(port, capture)
    return gearbox.samples


class Ice40Gearbox(Elaboratable):
    """A 1:4 input gearbox of iCE40 parts on the pins ``port``; ``samples`` in the capture
    domain ``capture``, ``Cat(s_0, s_1, s_2, s_3)`` as the module docstring says.

    Each pin's SB_IO samples it in DDR mode on the edge clock ``eclk`` (twice the capture
    clock, the PLL's output A; the capture clock is its output B, ``GENCLK_HALF``): D_IN_0 at
    every rising edge, D_IN_1 at every falling edge. In edge-clock periods, with capture edge
    *c* at edge-clock rising edge 2*c*, the four samples of capture cycle *c* are the pin at
    2*c* - 2, - 3/2, - 1 and - 1/2. At each *falling* edge of ``eclk`` three fabric flip-flops
    per pin take D_IN_0 (the rising edge's sample just before), D_IN_1 (still the previous
    falling edge's) and the first of them one edge earlier; at the falling edge 2*c* - 1/2
    that is the pin at 2*c* - 1, - 3/2 and - 2, while D_IN_1 takes the pin at 2*c* - 1/2. The
    capture register takes the three flip-flops and D_IN_1 at capture edge *c*.

    Why the falling edge: all four change half an edge-clock period away from every capture
    edge, so the paths from one clock to the other (flip-flop or D_IN_1 to the capture
    register, no logic between) have half an edge-clock period of setup and of hold time,
    whatever the skew between the PLL's two global clocks within that margin. nextpnr times
    every path inside the edge clock (the half-period ones from D_IN_0 too) and reports the
    crossing, which the build checks against half an edge-clock period
    (:attr:`.toolchain.BuildResult.crossing_budget_ns`).
    """

    def __init__(self, port, capture):
        if any(port.invert):
            raise ValueError("the iCE40 gearbox does not invert pins")
        self.port = port
        self.capture = capture
        self.samples = Signal(4 * len(port))

    def elaborate(self, platform):
        m = Module()
        port, width = self.port, len(self.port)
        rise, fall = Signal(width), Signal(width)
        for n in range(width):
            attrs = port.io.metadata[n].attrs
            m.submodules[f"ddr_{n}"] = Instance(
                "SB_IO", ("p", "PIN_TYPE", Const(_SB_IO_INPUT_DDR, 6)),
                *(("p", key, value) for key, value in attrs.items() if key != "GLOBAL"),
                io_PACKAGE_PIN=port.io[n], i_INPUT_CLK=ClockSignal("eclk"),
                o_D_IN_0=rise[n], o_D_IN_1=fall[n])
        m.domains.eclk_fall = ClockDomain("eclk_fall", clk_edge="neg", local=True,
                                          reset_less=True)
        m.d.comb += ClockSignal("eclk_fall").eq(ClockSignal("eclk"))
        # At falling edge 2c - 1/2: the pin at 2c - 2, 2c - 3/2 and 2c - 1 (edge-clock periods).
        oldest, middle, newest = (Signal(width, name=name, reset_less=True)
                                  for name in ("oldest", "middle", "newest"))
        m.d.eclk_fall += [oldest.eq(newest), middle.eq(fall), newest.eq(rise)]
        samples = Signal.like(self.samples, reset_less=True)
        m.d[self.capture] += samples.eq(Cat(oldest, middle, newest, fall))
        m.d.comb += self.samples.eq(samples)
        return m
