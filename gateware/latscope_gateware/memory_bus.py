"""Asynchronous memory bus front end: the appliance as a memory on the DUT's external bus.

A static-memory controller (the STM32 FMC/FSMC in NOR/SRAM mode, the Raspberry Pi's SMI, any
MCU's external bus) writes with a chip select, a write strobe, address and data lines; a
memory takes address and data at the strobe's end edge, where the controller guarantees
them (docs/membus.md has the setup and hold it needs against the FMC's and the SMI's
timing). :class:`MemoryBusPort` does the same and makes every write a BUS event, the
source of the simulated SoC's bus window, stamped at that edge.
"""

from amaranth.hdl import *
from amaranth.lib import data, stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

from latscope_defs.protocol import BUS_VALUE_BITS, memory_bus_write

from .ddr_edges import stamp_shift_of
from .synchronizer import check_phases, check_sync_stages, stamp_latency

__all__ = ["MemoryBusPort"]


class MemoryBusPort(wiring.Component):
    """Takes every write of an asynchronous memory bus at the write strobe's end edge.

    Every pin is sampled ``phases`` times a cycle, all through the same input registers and
    synchronizer, so the samples of one instant stay together. A write ends where the write
    strobe is seen inactive after a sample in which it was active with the chip select
    active; address and data are those of that last active sample, the instant just before
    the end edge (the controller holds them past it, and its data setup time, unlike its hold
    time, is programmable: docs/membus.md). A read moves the read strobe (NOE, SOE) and never
    the write strobe, so it makes nothing, and the read strobe needs no pin; nor does a write
    to another chip select (the FMC's banks share NWE).

    Parameters
    ----------
    data_width : 8 or 16
        Data lines.
    address_bits : int, >= 0
        Address lines taken (the low ones of the bus); ``data_width + address_bits`` <= 32.
    cs_active_low, we_active_low : bool
        Polarities of the chip select and of the write strobe. A bus without a chip select
        (the SMI) ties ``cs`` to its active level.
    sync_stages : int, >= 2
        Flip-flops of the synchronizer (the input register, with ``phases`` > 1, the first).
    phases : 1, 2 or 4
        Samples per pin and cycle (see :mod:`.ddr_edges`); each port is
        ``Cat(s_0, ..., s_{N-1})``, earliest first, each sample as wide as the pins.
    output_stages : int, >= 0
        Registers after the write's detection, all outputs alike, each a cycle more of
        :attr:`latency`: room for a route, where the bus's logic and the time-stamper's are
        far apart on the die.
    far_lines : int
        The payload's bits (a mask: data low, address above) whose pins are far from the
        chip select's and the write strobe's, on the time-stamper's side of the die (the
        ULX3S's bus build: its pins on both sides of the 85F); 0 for none.
    crossing_stages : int, >= 0
        With ``far_lines``: the registers the write's detection (and the payload's other
        bits, taken beside it) passes on its way to the far lines, so that it crosses the
        die in ``crossing_stages + 1`` hops with no logic but the last's. The far lines'
        samples wait beside their pins as long, and are taken with the detection where it
        arrives: the crossing carries the write's phase, not the far lines' samples, and
        no net with logic on it crosses; nor does the domain's reset, which reaches the
        detection through as many registers. ``crossing_stages + 1`` cycles more of
        :attr:`latency`.

    Ports
    -----
    cs, we : In(phases)
        Chip select and write strobe: their samples.
    address : In(phases * address_bits)
    data : In(phases * data_width)
    events : Out(stream.Signature(32, always_ready=True))
        One per write, ``payload`` = :func:`~latscope_defs.protocol.memory_bus_write` (data
        low, address above): the BUS source's value.
    phase : Out(log2(phases))
        With ``events.valid``: the first sample that shows the write strobe inactive (its end
        edge's phase, as :class:`.synchronizer.PinChangeDetector` gives an edge's).
    lost : Out(range(most_lost + 1))
        Writes that ended in the same cycle after the one delivered (with ``phases`` 4 two
        writes can: a sample active, one inactive, again): they cannot be stamped, so they
        are counted, for the BUS source's loss count, in the cycle of ``events.valid``.

    Timing
    ------
    :attr:`latency` = ``sync_stages + 1 + output_stages`` (``+ crossing_stages + 1`` with
    ``far_lines``): an end edge first present in the
    samples of cycle *k* gives ``valid`` during cycle *k* + ``latency``; :attr:`stamp_latency`
    is the pin-to-stamp latency in stamp units, as the marker port's. A write is seen if its
    strobe is active in at least one sample and inactive in at least one between writes; one
    write per cycle is delivered, so writes whose end edges are at least a cycle and a sample
    apart all arrive (docs/membus.md).

    The synchronizer starts at the idle levels (no chip select, no strobe), so configuration
    makes no write.
    """

    def __init__(
        self,
        *,
        data_width=16,
        address_bits=16,
        cs_active_low=True,
        we_active_low=True,
        sync_stages=2,
        phases=1,
        output_stages=0,
        far_lines=0,
        crossing_stages=0,
    ):
        if data_width not in (8, 16):
            raise ValueError(f"data_width must be 8 or 16, not {data_width!r}")
        if not isinstance(address_bits, int) or address_bits < 0:
            raise ValueError(f"address_bits must be an int >= 0, not {address_bits!r}")
        self._layout = memory_bus_write(data_width, address_bits)
        self._data_width = data_width
        self._address_bits = address_bits
        self._cs_active_low = bool(cs_active_low)
        self._we_active_low = bool(we_active_low)
        self._sync_stages = check_sync_stages(sync_stages)
        if not isinstance(output_stages, int) or output_stages < 0:
            raise ValueError(f"output_stages must be an int >= 0, not {output_stages!r}")
        self._output_stages = output_stages
        if not isinstance(crossing_stages, int) or crossing_stages < 0:
            raise ValueError(f"crossing_stages must be an int >= 0, not {crossing_stages!r}")
        if not isinstance(far_lines, int) or not 0 <= far_lines < 1 << self._layout.size:
            raise ValueError(f"far_lines must be a mask of the payload's bits, not {far_lines!r}")
        self._far_lines = far_lines
        self._crossing_stages = crossing_stages if far_lines else 0
        self._phases = check_phases(phases)
        super().__init__(
            {
                "cs": In(phases),
                "we": In(phases),
                "address": In(phases * address_bits),
                "data": In(phases * data_width),
                "events": Out(stream.Signature(BUS_VALUE_BITS, always_ready=True)),
                "phase": Out(stamp_shift_of(phases)),
                "lost": Out(range(self.most_lost + 1)),
            }
        )

    @property
    def layout(self):
        """The payload's layout (:func:`~latscope_defs.protocol.memory_bus_write`)."""
        return self._layout

    @property
    def data_width(self):
        return self._data_width

    @property
    def most_lost(self):
        """The most writes lost in one cycle: of the ``phases + 1`` samples an end edge is
        looked for in (the cycle's and the last before it), every other one can end a write,
        and all but the first are lost; 0 below 4 samples a cycle."""
        return max(self._phases // 2 - 1, 0)

    @property
    def latency(self):
        crossing = self._crossing_stages + 1 if self._far_lines else 0
        return self._sync_stages + 1 + crossing + self._output_stages

    @property
    def stamp_latency(self):
        return stamp_latency(self.latency, self._phases)

    def _payload(self, **lines):
        """The payload's bits from the lines of its fields, in the layout's order."""
        fields = sorted(self._layout, key=lambda field: field[1].offset)
        return Cat(lines[name] for name, _ in fields)

    def _sample_layout(self):
        """One sample of every pin, the chip select and the strobe as their active levels."""
        return data.StructLayout({"selected": 1, "writing": 1, "write": self._layout})

    def elaborate(self, platform):
        m = Module()
        phases = self._phases
        sample = self._sample_layout()
        # Idle on the pins: chip select and strobe at their inactive levels.
        idle_cs, idle_strobe = int(self._cs_active_low), int(self._we_active_low)

        def pins(port, width):
            return [port[k * width : (k + 1) * width] for k in range(phases)]

        # A sample's bits: chip select, strobe, then data and address in the payload's order.
        raw = Cat(
            Cat(cs, we, self._payload(data=data_pins, address=address_pins))
            for cs, we, data_pins, address_pins in zip(
                pins(self.cs, 1),
                pins(self.we, 1),
                pins(self.data, self._data_width),
                pins(self.address, self._address_bits),
            )
        )
        width = len(raw) // phases
        idle = sum((idle_cs | idle_strobe << 1) << (k * width) for k in range(phases))
        synced = Signal(len(raw))
        m.submodules.synchronizer = FFSynchronizer(raw, synced, stages=self._sync_stages, init=idle)

        samples = []
        for k, pin in enumerate(pins(synced, width)):
            view = Signal(sample, name=f"sample_{k}")
            m.d.comb += [
                view.selected.eq(pin[0] ^ idle_cs),
                view.writing.eq(pin[1] ^ idle_strobe),
                view.write.eq(pin[2:]),
            ]
            samples.append(view)
        # The last sample of the cycle before, for an edge between cycles (phase 0).
        before = Signal(sample, name="previous_sample", reset_less=True)
        m.d.sync += before.eq(samples[-1])

        ends = []  # a write ends between sample k - 1 and sample k
        taken = []  # its address and data: sample k - 1's
        for now in samples:
            ends.append(before.writing & before.selected & ~now.writing)
            taken.append(before.write)
            before = now
        ends = Cat(ends)

        first = Const(phases - 1, stamp_shift_of(phases))
        write = taken[-1]
        for k in reversed(range(phases - 1)):
            first = Mux(ends[k], k, first)
            write = Mux(ends[k], taken[k], write)
        more = sum(ends) - 1
        # The detected write, then output_stages registers of it: the outputs are the last.
        # With far lines, first the crossing's registers and the one the far lines are taken
        # into (the far lines' bits of the registers before it are unused, and left out).
        # Those before it are reset_less: the domain's reset would be a net across the die.
        crossing = self._crossing_stages + 1 if self._far_lines else 0
        stages = [
            [
                Signal.like(port, name=f"{port.name}_{n}", reset_less=n < crossing)
                for port in self._outputs()
            ]
            for n in range(crossing + self._output_stages)
        ] + [self._outputs()]
        valid, phase, lost, payload = stages[0]
        m.d.sync += [
            valid.eq(ends.any()),
            phase.eq(first),
            lost.eq(Mux(ends.any(), more, 0)),
        ]
        with m.If(ends.any()):  # the payload keeps the last write between events
            m.d.sync += payload.eq(write)
        if crossing:
            # The reset crosses to the detection through registers as well, and holds it
            # (and so the crossing after it) empty until the registers after the crossing,
            # which have the domain's reset, have left theirs.
            reset = ResetSignal(allow_reset_less=True)
            for n in range(crossing):
                later = Signal(init=1, reset_less=True, name=f"crossing_reset_{n}")
                m.d.sync += later.eq(reset)
                reset = later
            with m.If(reset):
                m.d.sync += [valid.eq(0), lost.eq(0)]
        for n, (earlier, later) in enumerate(zip(stages, stages[1:])):
            if n == crossing - 1:
                self._take_far_lines(m, taken, crossing, earlier, later)
            else:
                m.d.sync += [port.eq(source) for port, source in zip(later, earlier)]
        return m

    def _take_far_lines(self, m, taken, delay, arrived, stage):
        """``stage`` from ``arrived``, the far lines' payload bits the write's, which
        ``arrived`` (``delay`` cycles after the samples ``taken``) detected: their samples,
        delayed beside their pins as long, at the write's phase (``taken[phase]``, as the
        write's); the other bits as they arrived."""
        bits = range(self._layout.size)
        far = [n for n in bits if self._far_lines >> n & 1]
        waited = Cat(Cat(sample.as_value()[n] for n in far) for sample in taken)
        for n in range(delay):
            later = Signal(len(waited), name=f"far_lines_{n}", reset_less=True)
            m.d.sync += later.eq(waited)
            waited = later
        samples = [waited[k * len(far) : (k + 1) * len(far)] for k in range(len(taken))]
        valid, phase, lost, payload = arrived
        chosen = samples[-1]
        for k in reversed(range(len(taken) - 1)):
            chosen = Mux(phase == k, samples[k], chosen)
        m.d.sync += [port.eq(source) for port, source in zip(stage[:3], (valid, phase, lost))]
        m.d.sync += [stage[3][n].eq(payload[n]) for n in bits if n not in far]
        with m.If(valid):  # as the payload, the far lines keep the last write's
            m.d.sync += [stage[3][n].eq(bit) for n, bit in zip(far, chosen)]

    def _outputs(self):
        return [self.events.valid, self.phase, self.lost, self.events.payload]
