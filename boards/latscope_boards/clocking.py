"""PLL settings and the clocks/resets of a board's two clock domains.

The appliance runs in two clock domains: ``capture`` (front ends, stamps, the FIFO's write
side) and ``sync`` (the link: FIFO read side, encoder, UART, commands). On a board both come
from one FPGA PLL fed by the board's crystal: the capture clock on the PLL's main output,
the link clock on a second output (iCE40: the same VCO, halved, ``GENCLK_HALF``; ECP5: CLKOS
with a divider of its own). Both domains are held in reset until the PLL has locked and,
after that, for a fixed time (iCE40 block RAMs read as zeros for ~3 us after configuration,
and a PLL's first cycles after lock are best not trusted either), each released through a
reset synchronizer of its own. The two clocks are treated as unrelated: every signal that
crosses between them goes through a synchronizer or the asynchronous FIFO (see
``latscope_gateware.appliance``), so the build tells nextpnr to ignore paths between them.

:data:`CLOCK_DOMAINS` names the domains a board design has and which PLL output drives
each; the netlist simulation drives the same domains from testbench clocks.

The settings are computed here rather than copied from a vendor tool, from the ranges in the
parts' data sheets; :func:`ice40_pll_settings` and :func:`ecp5_pll_settings` return settings
that produce *exactly* the requested frequency, or raise.
"""

from dataclasses import dataclass
from fractions import Fraction

from amaranth.hdl import *
from amaranth.lib import io
from amaranth.lib.cdc import ResetSynchronizer

__all__ = [
    "Ice40PllSettings",
    "Ecp5PllSettings",
    "ice40_pll_settings",
    "ecp5_pll_settings",
    "Ice40Pll",
    "Ecp5Pll",
    "Ecp5GearboxStart",
    "GEARBOX_START_STEP_CYCLES",
    "CrystalClock",
    "POWER_ON_RESET_SECONDS",
    "CLOCK_DOMAINS",
]

#: The clock domains of a two-clock board design, fastest first: (domain, what drives it).
CLOCK_DOMAINS = (
    ("capture", "the PLL's main output (capture clock)"),
    ("sync", "the PLL's second output (link clock)"),
)

#: Time ``sync`` stays in reset after the PLL reports lock (> 3 us iCE40 BRAM wake-up, x5).
POWER_ON_RESET_SECONDS = 15e-6

_MHZ = 1_000_000


@dataclass(frozen=True)
class Ice40PllSettings:
    """SB_PLL40 parameters, feedback path SIMPLE: ``f_out = f_in * (divf + 1) / (divr + 1) /
    2 ** divq``."""

    f_in: int
    divr: int
    divf: int
    divq: int

    @property
    def f_pfd(self):
        return Fraction(self.f_in, self.divr + 1)

    @property
    def f_vco(self):
        return self.f_pfd * (self.divf + 1)

    @property
    def f_out(self):
        return self.f_vco / 2**self.divq

    @property
    def filter_range(self):
        # Loop filter setting by phase detector frequency (iCE40 sysCLOCK PLL design guide).
        for limit, setting in ((17, 1), (26, 2), (44, 3), (66, 4), (101, 5)):
            if self.f_pfd < limit * _MHZ:
                return setting
        return 6


def ice40_pll_settings(f_in, f_out):
    """The SB_PLL40 settings for exactly ``f_out`` Hz from ``f_in`` Hz (SIMPLE feedback).

    Ranges: PFD 10..133 MHz, VCO 533..1066 MHz, output 16..275 MHz; DIVR 0..15, DIVF 0..127,
    DIVQ 1..6. Among exact solutions the one with the highest PFD frequency is taken (least
    jitter). Raises :class:`ValueError` if there is none.
    """
    if not 16 * _MHZ <= f_out <= 275 * _MHZ:
        raise ValueError(f"iCE40 PLL output {f_out} Hz is outside 16..275 MHz")
    for divr in range(16):
        f_pfd = Fraction(f_in, divr + 1)
        if not 10 * _MHZ <= f_pfd <= 133 * _MHZ:
            continue
        for divq in range(1, 7):
            f_vco = Fraction(f_out) * 2**divq
            if not 533 * _MHZ <= f_vco <= 1066 * _MHZ:
                continue
            multiplier = f_vco / f_pfd
            if multiplier.denominator == 1 and 1 <= multiplier <= 128:
                return Ice40PllSettings(f_in=f_in, divr=divr, divf=int(multiplier) - 1, divq=divq)
    raise ValueError(f"no iCE40 PLL setting gives exactly {f_out} Hz from {f_in} Hz")


@dataclass(frozen=True)
class Ecp5PllSettings:
    """EHXPLLL parameters, feedback from CLKOP: ``f_out = f_in * clkfb_div / clki_div`` and
    ``f_vco = f_out * clkop_div``."""

    f_in: int
    clki_div: int
    clkfb_div: int
    clkop_div: int
    clkos_div: int = 0  # 0: no secondary output

    @property
    def f_pfd(self):
        return Fraction(self.f_in, self.clki_div)

    @property
    def f_secondary(self):
        return self.f_vco / self.clkos_div if self.clkos_div else None

    @property
    def f_out(self):
        return self.f_pfd * self.clkfb_div

    @property
    def f_vco(self):
        return self.f_out * self.clkop_div


def ecp5_pll_settings(f_in, f_out, f_secondary=None):
    """The EHXPLLL settings for exactly ``f_out`` Hz from ``f_in`` Hz (CLKOP feedback) and,
    with ``f_secondary``, exactly that on CLKOS (``clkos_div``: the VCO over it).

    Ranges: input 8..400 MHz, PFD 3.125..400 MHz, VCO 400..800 MHz, output 3.125..400 MHz;
    CLKI_DIV 1..128, CLKFB_DIV 1..80, CLKOP_DIV 1..128. The VCO is put as close to the middle
    of its range (600 MHz) as possible, and the PFD as high as possible. Raises
    :class:`ValueError` if there is no exact solution.
    """
    if not 8 * _MHZ <= f_in <= 400 * _MHZ:
        raise ValueError(f"ECP5 PLL input {f_in} Hz is outside 8..400 MHz")
    if not Fraction(3125, 1000) * _MHZ <= f_out <= 400 * _MHZ:
        raise ValueError(f"ECP5 PLL output {f_out} Hz is outside 3.125..400 MHz")
    best = None
    for clki_div in range(1, 129):
        f_pfd = Fraction(f_in, clki_div)
        if f_pfd < Fraction(3125, 1000) * _MHZ:
            break
        clkfb_div = Fraction(f_out) / f_pfd
        if clkfb_div.denominator != 1 or not 1 <= clkfb_div <= 80:
            continue
        for clkop_div in range(1, 129):
            f_vco = f_out * clkop_div
            clkos_div = 0
            if f_secondary is not None:
                clkos_div = Fraction(f_vco) / f_secondary
                if clkos_div.denominator != 1 or not 1 <= clkos_div <= 128:
                    continue
            if 400 * _MHZ <= f_vco <= 800 * _MHZ:
                candidate = Ecp5PllSettings(
                    f_in=f_in,
                    clki_div=clki_div,
                    clkfb_div=int(clkfb_div),
                    clkop_div=clkop_div,
                    clkos_div=int(clkos_div),
                )
                key = (abs(f_vco - 600 * _MHZ), clki_div)
                if best is None or key < best[0]:
                    best = (key, candidate)
    if best is None:
        also = f" and {f_secondary} Hz" if f_secondary is not None else ""
        raise ValueError(f"no ECP5 PLL setting gives exactly {f_out} Hz{also} from {f_in} Hz")
    return best[1]


def _crystal(m, platform, resource):
    """The input buffer of the crystal's pin (its resource carries the clock constraint)."""
    m.submodules.crystal = crystal = io.Buffer("i", platform.request(resource, dir="-"))
    return crystal


#: Link-clock cycles between the steps of the ECP5 edge clock's start-up
#: (:class:`Ecp5GearboxStart`). FPGA-TN-02035 gives the order of the steps, not their
#: spacing; 8 cycles of the 50 MHz link clock are 160 ns, 40 cycles of the 250 MHz edge
#: clock: far more than the two ECLKI falling edges the ECLKSYNCB takes to stop or restart
#: its output, and than a reset's propagation through the bank's CLKDIVF and IDDRX2Fs.
GEARBOX_START_STEP_CYCLES = 8


class Ecp5GearboxStart(Elaboratable):
    """The start-up of an ECP5 x2 gearbox's clocks, as Lattice documents it for the generic
    x2 interfaces (FPGA-TN-02035 "ECP5 and ECP5-5G High-Speed I/O Interface", formerly TN1265;
    its GDDRX2 interfaces' clock synchronization, which Lattice's IP does in a small state
    machine after the PLL locks): with the edge clock stopped at the ECLKSYNCB (``stop``),
    reset the clock divider (CLKDIVF) and the gearboxes (IDDRX2F) together (``reset``),
    release the reset, then restart the edge clock. The divider and every gearbox then count
    edge-clock cycles from the same first edge, so the four samples of a capture cycle are
    grouped the same at every power-up and after every loss of lock (the words' boundaries
    on the divided clock's rising edges); with the reset released straight from the PLL's
    lock, as before, the divider started at whichever edge-clock phase the lock came.

    Runs on the ``por`` domain (the link clock, reset while the PLL is unlocked: see
    :func:`_power_on_reset`): ``stop`` and ``reset`` are high from configuration and
    through any loss of lock; after lock, ``reset`` falls a step later and ``stop`` two
    steps later (:data:`GEARBOX_START_STEP_CYCLES` apart); ``done`` then."""

    def __init__(self):
        self.stop = Signal(init=1)
        self.reset = Signal(init=1)
        self.done = Signal()

    def elaborate(self, platform):
        m = Module()
        steps = Signal(range(3 * GEARBOX_START_STEP_CYCLES + 1))
        with m.If(~self.done):
            m.d.por += steps.eq(steps + 1)
        with m.If(steps == GEARBOX_START_STEP_CYCLES):
            m.d.por += self.reset.eq(0)
        with m.If(steps == 2 * GEARBOX_START_STEP_CYCLES):
            m.d.por += self.stop.eq(0)
        with m.If(steps == 3 * GEARBOX_START_STEP_CYCLES):
            m.d.por += self.done.eq(1)
        return m


def _power_on_reset(m, locked, clock_hz, domains=("sync",), after=None):
    """Holds ``domains`` in reset until ``locked`` has been high for POWER_ON_RESET_SECONDS
    (and ``after``, a signal of the ``por`` domain, is high: the ECP5 edge clock's start-up).

    The timer runs on the ``sync`` clock (``clock_hz``); its counter is reset asynchronously
    (ResetSynchronizer) while the PLL is unlocked, so a loss of lock restarts the wait. Each
    domain leaves reset through its own ResetSynchronizer, in step with its own clock."""
    delay = max(1, round(POWER_ON_RESET_SECONDS * clock_hz))
    m.domains.por = ClockDomain("por", local=True)
    m.d.comb += ClockSignal("por").eq(ClockSignal("sync"))
    m.submodules.lock_sync = ResetSynchronizer(~locked, domain="por")
    timer = Signal(range(delay + 1))
    ready = Signal()
    with m.If(timer == delay):
        m.d.por += ready.eq(1 if after is None else after)
    with m.Else():
        m.d.por += timer.eq(timer + 1)
    for domain in domains:
        name = "reset_sync" if domain == "sync" else f"reset_sync_{domain}"
        m.submodules[name] = ResetSynchronizer(~ready, domain=domain)


class Ice40Pll(Elaboratable):
    """Drives the ``sync`` domain (defined by the top) from an iCE40 SB_PLL40 fed by the
    board's crystal or, with ``link_half``, the ``capture`` domain from the PLL's output A and
    ``sync`` from its output B at half that frequency (SB_PLL40_2F, ``GENCLK_HALF``: the
    iCE40 PLL's only second frequency).

    With ``edge_clock`` (the iCE40 input gearbox, :func:`.gearbox.ice40_gearbox_inputs`),
    output A drives the ``eclk`` domain instead, the edge clock the strobe and edge pins are
    sampled on, and output B (``GENCLK_HALF``) ``sync``: the one clock of the appliance, both
    capture and link, whose rising edges fall on every other rising edge of the edge clock.

    ``pad`` selects SB_PLL40_PAD (the crystal's pin is the PLL's dedicated input pad, as on the
    iCE40UP5K's pin 35) instead of SB_PLL40_CORE fed from the global clock buffer.
    """

    def __init__(self, settings, *, clock_resource, pad=False, link_half=False, edge_clock=False):
        if link_half and edge_clock:
            raise ValueError("the iCE40 PLL has two outputs: a link clock or an edge clock")
        self.settings = settings
        self.clock_resource = clock_resource
        self.pad = pad
        self.link_half = link_half
        self.edge_clock = edge_clock

    @classmethod
    def for_board(cls, board, crystal_hz, *, clock_resource, pad=False):
        """The PLL of an iCE40 :class:`.board.Board`: with a gearbox, output A the edge
        clock and output B the appliance clock; else output A the capture clock and, with a
        link clock, output B at half of it."""
        if board.edge_clock_hz:
            return cls(
                ice40_pll_settings(crystal_hz, board.edge_clock_hz),
                clock_resource=clock_resource,
                pad=pad,
                edge_clock=True,
            )
        return cls(
            ice40_pll_settings(crystal_hz, board.clock_hz),
            clock_resource=clock_resource,
            pad=pad,
            link_half=bool(board.link_hz),
        )

    def elaborate(self, platform):
        m = Module()
        s = self.settings
        # No clock constraint here: nextpnr derives the PLL output's from the crystal's (the
        # Clock() of the platform resource), on a net name that survives synthesis.
        locked = Signal()
        params = dict(
            p_FEEDBACK_PATH="SIMPLE",
            p_DIVR=s.divr,
            p_DIVF=s.divf,
            p_DIVQ=s.divq,
            p_FILTER_RANGE=s.filter_range,
            i_RESETB=Const(1),
            i_BYPASS=Const(0),
            o_LOCK=locked,
        )
        if self.link_half or self.edge_clock:
            # Output A: the capture clock (link_half) or the edge clock (reset-less); output B,
            # at half of it: ``sync``.
            fast = "capture" if self.link_half else "eclk"
            params.update(
                p_PLLOUT_SELECT_PORTA="GENCLK",
                p_PLLOUT_SELECT_PORTB="GENCLK_HALF",
                o_PLLOUTGLOBALA=ClockSignal(fast),
                o_PLLOUTGLOBALB=ClockSignal("sync"),
            )
            kind, link_hz = "SB_PLL40_2F", float(s.f_out) / 2
            domains = ("capture", "sync") if self.link_half else ("sync",)
        else:
            params.update(o_PLLOUTGLOBAL=ClockSignal("sync"))
            kind, link_hz, domains = "SB_PLL40", float(s.f_out), ("sync",)
        if self.pad:
            port = platform.request(self.clock_resource, dir="-")
            m.submodules.pll = Instance(f"{kind}_PAD", io_PACKAGEPIN=port.io, **params)
        else:
            crystal = _crystal(m, platform, self.clock_resource)
            m.submodules.pll = Instance(f"{kind}_CORE", i_REFERENCECLK=crystal.i, **params)
        _power_on_reset(m, locked, link_hz, domains)
        return m


class Ecp5Pll(Elaboratable):
    """Drives the ``sync`` domain (defined by the top) from an ECP5 EHXPLLL fed by the board's
    crystal or, with a secondary output in ``settings`` (``clkos_div``), ``capture`` from
    CLKOP and ``sync`` from CLKOS.

    With ``edge_clock`` (the IDDRX2F gearbox), CLKOP is the edge clock instead: it drives the
    ``eclk`` domain (defined by the top) through an ``ECLKSYNCB`` (the bank's edge clock, which
    clocks the gearboxes' sampling), and ``capture`` is that edge clock divided by 2 in a
    ``CLKDIVF`` (``DIV "2.0"``), the fabric clock that the gearboxes hand their four samples
    to, in a fixed phase to the edge clock. The edge clock starts as Lattice documents
    (:class:`Ecp5GearboxStart`: stopped while the divider and the gearboxes leave reset);
    the gearboxes take that reset as the ``eclk`` domain's.

    With ``second_edge_clock`` as well (pins in the left and the right banks: an edge clock
    reaches its own side's banks only), a second ``ECLKSYNCB`` takes the same CLKOP to the
    ``eclk_east`` domain and a second ``CLKDIVF`` divides it to ``capture_east``, which
    clocks the second side's gearboxes. Both dividers' phases agree: both ECLKSYNCBs stop on
    the same ``stop``, both dividers (and every gearbox) are held in the same ``reset``
    while no edge reaches them, and the two ECLKSYNCBs restart on the same CLKOP edge:
    ``stop`` falls just after a link-clock edge, which is a CLKOP rising edge too (both
    outputs of the one VCO at zero phase; 250 MHz CLKOP is five times the 50 MHz CLKOS), and
    each ECLKSYNCB acts on it at CLKOP's falling edges, the first of them half a CLKOP period
    (2 ns) later, so both see it at the same falling edge as long as it reaches both within
    that half period. (nextpnr does not time STOP, a path of no clock; its two routes are the
    build's to keep short.) So both dividers count the same edges from the same first one,
    and ``capture_east`` is ``capture`` up to the edge clock bridge's delay (CLKOP reaches
    the other side's ECLKSYNCB through an ``ECLKBRIDGECS``) and the clock trees' skew: the
    second side's samples go into the capture domain as from a capture-domain register."""

    def __init__(self, settings, *, clock_resource, edge_clock=False, second_edge_clock=False):
        if second_edge_clock and not edge_clock:
            raise ValueError("a second edge clock needs the first")
        self.settings = settings
        self.clock_resource = clock_resource
        self.edge_clock = edge_clock
        self.second_edge_clock = second_edge_clock

    def elaborate(self, platform):
        m = Module()
        s = self.settings
        crystal = _crystal(m, platform, self.clock_resource)
        # nextpnr derives the clock constraint of CLKOP from the crystal's (see Ice40Pll).
        locked = Signal()
        main = "capture" if s.clkos_div else "sync"
        clkop = ClockSignal(main)
        if self.edge_clock:
            if not s.clkos_div:
                raise ValueError("an edge clock needs a link clock on CLKOS")
            clkop = Signal()
            # The edge clock's start-up sequence (its por domain: _power_on_reset's, below);
            # its reset is the eclk domain's, which the gearboxes' RST take too.
            m.submodules.gearbox_start = start = Ecp5GearboxStart()
            sides = [("", "eclk", "capture")]
            if self.second_edge_clock:
                sides.append(("_east", "eclk_east", "capture_east"))
            for suffix, edge, divided in sides:
                source = clkop
                if suffix:
                    # CLKOP has no dedicated route from the PLL's side to the other side's
                    # ECLKSYNCB (nextpnr: "Unable to route edge clock source"); the edge
                    # clock bridge is the dedicated one across the device. Both its inputs
                    # take CLKOP: they have only edge-clock routing, which a constant has not.
                    source = Signal()
                    m.submodules.eclkbridge = Instance(
                        "ECLKBRIDGECS",
                        i_CLK0=clkop,
                        i_CLK1=clkop,
                        i_SEL=Const(0),
                        o_ECSOUT=source,
                    )
                m.d.comb += ResetSignal(edge).eq(start.reset)
                m.submodules[f"eclksync{suffix}"] = Instance(
                    "ECLKSYNCB", i_ECLKI=source, i_STOP=start.stop, o_ECLKO=ClockSignal(edge)
                )
                m.submodules[f"clkdiv{suffix}"] = Instance(
                    "CLKDIVF",
                    p_DIV="2.0",
                    p_GSR="DISABLED",
                    i_CLKI=ClockSignal(edge),
                    i_RST=start.reset,
                    i_ALIGNWD=Const(0),
                    o_CDIVX=ClockSignal(divided),
                )
        secondary = {}
        if s.clkos_div:
            # CLKOS: the link clock, the VCO divided on its own (coarse phase as for CLKOP).
            secondary = dict(
                p_OUTDIVIDER_MUXB="DIVB",
                p_CLKOS_ENABLE="ENABLED",
                p_CLKOS_DIV=s.clkos_div,
                p_CLKOS_CPHASE=s.clkos_div - 1,
                p_CLKOS_FPHASE=0,
                a_FREQUENCY_PIN_CLKOS=str(float(s.f_secondary) / _MHZ),
                i_ENCLKOS=Const(0),
                o_CLKOS=ClockSignal("sync"),
            )
        m.submodules.pll = Instance(
            "EHXPLLL",
            p_PLLRST_ENA="DISABLED",
            p_INTFB_WAKE="DISABLED",
            p_STDBY_ENABLE="DISABLED",
            p_DPHASE_SOURCE="DISABLED",
            p_OUTDIVIDER_MUXA="DIVA",
            p_CLKOP_ENABLE="ENABLED",
            p_FEEDBK_PATH="CLKOP",
            p_CLKI_DIV=s.clki_div,
            p_CLKFB_DIV=s.clkfb_div,
            p_CLKOP_DIV=s.clkop_div,
            # Coarse phase of CLKOP = divider - 1: the output edge lines up with the VCO edge
            # the feedback divider counts from, i.e. zero phase shift.
            p_CLKOP_CPHASE=s.clkop_div - 1,
            p_CLKOP_FPHASE=0,
            a_FREQUENCY_PIN_CLKI=str(float(s.f_in) / _MHZ),
            a_FREQUENCY_PIN_CLKOP=str(float(s.f_out) / _MHZ),
            i_CLKI=crystal.i,
            i_CLKFB=clkop,
            i_RST=Const(0),
            i_STDBY=Const(0),
            i_PHASESEL0=Const(0),
            i_PHASESEL1=Const(0),
            i_PHASEDIR=Const(0),
            i_PHASESTEP=Const(0),
            i_PHASELOADREG=Const(0),
            i_PLLWAKESYNC=Const(0),
            i_ENCLKOP=Const(0),
            o_CLKOP=clkop,
            o_LOCK=locked,
            **secondary,
        )
        _power_on_reset(
            m,
            locked,
            float(s.f_secondary or s.f_out),
            ("capture", "sync") if s.clkos_div else ("sync",),
            after=start.done if self.edge_clock else None,
        )
        return m


class CrystalClock(Elaboratable):
    """Drives ``sync`` straight from the crystal, for a capture clock equal to it (below the
    iCE40 PLL's 16 MHz minimum output). Same power-on reset as the PLLs."""

    def __init__(self, clock_hz, *, clock_resource):
        self.clock_hz = clock_hz
        self.clock_resource = clock_resource

    def elaborate(self, platform):
        m = Module()
        crystal = _crystal(m, platform, self.clock_resource)
        m.d.comb += ClockSignal("sync").eq(crystal.i)
        _power_on_reset(m, Const(1), self.clock_hz)
        return m
