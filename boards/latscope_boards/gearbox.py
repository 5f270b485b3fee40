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

__all__ = [
    "ecp5_gearbox_inputs",
    "ice40_gearbox_inputs",
    "gather_samples",
    "Ice40Gearbox",
    "Ice40PhaseProbe",
]


def ecp5_gearbox_inputs(m, name, port, capture, edge="eclk"):
    """Input buffers of the pins ``port``, each into an ECP5 IDDRX2F (the 1:4 input gearbox):
    the pin is sampled at every rising and falling edge of the edge clock (``eclk``, twice
    the capture clock), and the four samples of a capture cycle come out together on Q0..Q3,
    Q0 the earliest, clocked by the capture clock (the edge clock divided by 2 in CLKDIVF,
    see :class:`.clocking.Ecp5Pll`). Returns the samples as the appliance's front ends take
    them: ``Cat(s_0, s_1, s_2, s_3)``, each as wide as ``port``. ``edge``: the edge clock's
    domain (``eclk_east`` and ``capture_east`` for pins on the right side's banks, whose
    edge clock is the second one, :class:`.clocking.Ecp5Pll`)."""
    m.submodules[f"{name}_buffer"] = pins = io.Buffer("i", port)
    width = len(port)
    samples = [Signal(width, name=f"{name}_q{k}") for k in range(4)]
    for n in range(width):
        m.submodules[f"{name}_gearbox_{n}"] = Instance(
            "IDDRX2F",
            p_GSR="DISABLED",
            i_D=pins.i[n],
            i_SCLK=ClockSignal(capture),
            i_ECLK=ClockSignal(edge),
            # Reset with the divider while the edge clock is stopped (clocking.Ecp5Pll's
            # start-up): the four samples' grouping starts with the divided clock's.
            i_RST=ResetSignal(edge),
            # ALIGNWD (word slip) stays unconnected: nextpnr routes it to the IOLOGIC's SLIP,
            # which not every PIO of a pair has a wire for ("No wire found for port SLIP").
            **{f"o_Q{k}": samples[k][n] for k in range(4)},
        )
    return Cat(*samples)


#: SB_IO PIN_TYPE: PIN_INPUT_DDR (input registered on both edges of INPUT_CLK: D_IN_0 at the
#: rising edge, D_IN_1 at the falling edge), PIN_NO_OUTPUT.
_SB_IO_INPUT_DDR = 0b000000


def ice40_gearbox_inputs(m, name, port, capture, placement=None):
    """The pins ``port`` through a 1:4 gearbox built of iCE40 parts (:class:`Ice40Gearbox`,
    added to ``m`` as ``<name>_gearbox``; ``placement`` as it takes it); returns their
    samples as :func:`ecp5_gearbox_inputs` does."""
    m.submodules[f"{name}_gearbox"] = gearbox = Ice40Gearbox(port, capture, placement)
    return gearbox.samples


def gather_samples(m, suffix, rise, fall, samples, capture, edge_cells=None, capture_cells=None):
    """The fabric half of the iCE40 gearbox (:class:`Ice40Gearbox`) for one pin: its
    samples ``rise`` (taken at every rising edge of ``eclk``, D_IN_0) and ``fall`` (at every
    falling edge, D_IN_1) into ``samples`` (4 bits, ``Cat(s_0 .. s_3)``) in the domain
    ``capture``: three flip-flops on the falling edge of ``eclk``, four on ``capture``.
    ``edge_cells`` / ``capture_cells``: their BEL attributes (:meth:`Ice40Gearbox._cells`)."""
    edge_cells = edge_cells or [{}] * 3
    capture_cells = capture_cells or [{}] * 4
    # At falling edge 2c - 1/2: the pin at 2c - 2, 2c - 3/2 and 2c - 1 (edge-clock periods).
    oldest, middle, newest = (
        Signal(name=f"{name}{suffix}") for name in ("oldest", "middle", "newest")
    )
    for flop, (q, d) in enumerate(((oldest, newest), (middle, fall), (newest, rise))):
        m.submodules[f"fall_flop{suffix}_{flop}"] = Instance(
            "SB_DFFN", i_C=ClockSignal("eclk"), i_D=d, o_Q=q, **edge_cells[flop]
        )
    for flop, d in enumerate((oldest, middle, newest, fall)):
        m.submodules[f"capture_flop{suffix}_{flop}"] = Instance(
            "SB_DFF", i_C=ClockSignal(capture), i_D=d, o_Q=samples[flop], **capture_cells[flop]
        )


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

    nextpnr does not weigh the crossing when it places, so on a full device it may put these
    flip-flops far from their pins. ``placement`` pins them down: a list with an entry per
    pin, None (nextpnr's choice) or ``((x, y), (x, y), half)``: the logic tile of its three
    edge-clock flip-flops, that of its four capture-register flip-flops, and which half of
    each tile's eight logic cells (0: cells 0-3, 1: cells 4-7) they take; the tiles should be
    beside the pin's I/O tile. No list: all pins left to nextpnr.
    """

    def __init__(self, port, capture, placement=None):
        if any(port.invert):
            raise ValueError("the iCE40 gearbox does not invert pins")
        if placement is not None and len(placement) != len(port):
            raise ValueError(f"placement names {len(placement)} pins, the port has {len(port)}")
        self.port = port
        self.capture = capture
        self.placement = placement
        self.samples = Signal(4 * len(port))

    def elaborate(self, platform):
        m = Module()
        port, width = self.port, len(self.port)
        samples = [Signal(4, name=f"samples_{n}") for n in range(width)]
        for n in range(width):
            attrs = port.io.metadata[n].attrs
            rise, fall = Signal(name=f"rise_{n}"), Signal(name=f"fall_{n}")
            m.submodules[f"ddr_{n}"] = Instance(
                "SB_IO",
                ("p", "PIN_TYPE", Const(_SB_IO_INPUT_DDR, 6)),
                *(("p", key, value) for key, value in attrs.items() if key != "GLOBAL"),
                io_PACKAGE_PIN=port.io[n],
                i_INPUT_CLK=ClockSignal("eclk"),
                o_D_IN_0=rise,
                o_D_IN_1=fall,
            )
            edge_cells, capture_cells = self._cells(n)
            gather_samples(
                m, f"_{n}", rise, fall, samples[n], self.capture, edge_cells, capture_cells
            )
        # Per pin Cat(s_0 .. s_3); the appliance takes each sample of every pin together.
        m.d.comb += self.samples.eq(Cat(Cat(samples[n][k] for n in range(width)) for k in range(4)))
        return m

    def _cells(self, n):
        """The BEL attributes of pin ``n``'s three edge-clock and four capture flip-flops."""
        if self.placement is None or self.placement[n] is None:
            return [{}] * 3, [{}] * 4
        (ex, ey), (cx, cy), half = self.placement[n]
        return (
            [{"a_BEL": f"X{ex}/Y{ey}/lc{4 * half + k}"} for k in range(3)],
            [{"a_BEL": f"X{cx}/Y{cy}/lc{4 * half + k}"} for k in range(4)],
        )


class Ice40PhaseProbe(Elaboratable):
    """Checks the one assumption of the iCE40 gearbox that no build can: that the capture
    clock (the PLL's output B, ``GENCLK_HALF``) rises on *rising* edges of the edge clock
    (output A). Were it to rise on falling edges, every pin sample would be grouped half an
    edge-clock period off and every strobe and edge stamp would be a quarter cycle off,
    consistently, which no loopback sees (its round trip would only read a quarter longer
    or shorter).

    The probe is the gearbox of one pin whose "pin" is a flip-flop of the capture domain
    that toggles at every capture clock edge: two fabric flip-flops sample it at the rising
    and the falling edges of ``eclk`` (where a pin's SB_IO DDR registers would) and
    :func:`gather_samples` groups the samples as for every pin. The toggle changes just
    after a capture edge, so the first sample to show it is the first sampling edge after
    that capture edge: sample 1 of the next cycle (the falling edge half an edge-clock
    period after it) when the clocks are as assumed, sample 2 (or 0, by the sub-nanosecond
    races of two coincident edges) when the capture clock rises on the edge clock's falling
    edges. ``check`` (capture domain) accumulates, from the fourth cycle after reset, which
    sample showed the change (:class:`latscope_defs.protocol.ClockCheck`); STATUS reports
    it and ``latscope selftest`` judges it.

    Timing: the toggle's paths to the two samplers are crossings like the gearbox's (to
    the falling-edge one half an edge-clock period, to the rising-edge one a full period
    or, at the coincident edge, a hold race that the toggle's clock-to-out wins, as in any
    synchronous path); nextpnr reports them with the gearbox's.
    """

    #: Capture cycles after reset before the probe records: the samplers and the gathering
    #: flip-flops hold samples from before reset for three cycles.
    SETTLE_CYCLES = 4

    def __init__(self, capture):
        self.capture = capture
        self.check = Signal(7)

    def elaborate(self, platform):
        m = Module()
        capture = m.d[self.capture]
        toggle = Signal()
        capture += toggle.eq(~toggle)
        rise, fall = Signal(), Signal()
        m.submodules.rise_sampler = Instance(
            "SB_DFF", i_C=ClockSignal("eclk"), i_D=toggle, o_Q=rise
        )
        m.submodules.fall_sampler = Instance(
            "SB_DFFN", i_C=ClockSignal("eclk"), i_D=toggle, o_Q=fall
        )
        samples = Signal(4)
        gather_samples(m, "_probe", rise, fall, samples, self.capture)
        # Which sample differs from the one before it (the last of the previous cycle for
        # sample 0): one-hot in a regular cycle.
        last = Signal()
        capture += last.eq(samples[3])
        changed = samples ^ Cat(last, samples[:3])
        settle = Signal(range(self.SETTLE_CYCLES + 1))
        with m.If(settle < self.SETTLE_CYCLES):
            capture += settle.eq(settle + 1)
        with m.Elif((changed != 0) & ((changed & (changed - 1)) == 0)):
            capture += self.check[:4].eq(self.check[:4] | changed)
        with m.Else():
            capture += self.check[4].eq(1)
        return m
