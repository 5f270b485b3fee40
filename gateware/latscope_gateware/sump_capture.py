"""SUMP device mode, the capture side: sample ticks, the trigger and post-trigger count, and
the sample memory with its run-length encoder (see :mod:`.sump` for the engine).

Samples pass in two stages: stage 1 (:class:`SumpSampler`), in a sample tick, registers the
sample, whether it equals the previous one (RLE) and whether it matches the trigger; stage 2,
the next cycle, triggers (:class:`SumpTrigger`) and writes memory (:class:`SumpRecorder`).
Only registers feed stage 2's decisions, which keeps the paths short.
"""

import enum

from amaranth.hdl import *
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from latscope_defs.protocol import SUMP_GROUP_BITS, SUMP_REFERENCE_HZ

from .arithmetic import carry_select_add
from .sump_commands import settings_layout

__all__ = ["DIVIDER_FRACTION_BITS", "SumpSampler", "SumpTrigger", "SumpRecorder"]

#: Fractional bits of the sample-time accumulator that turns the 100 MHz-based divider into
#: capture-clock cycles (rate error below 2**-12 of a cycle per sample).
DIVIDER_FRACTION_BITS = 12


class SumpSampler(wiring.Component):
    """Sample ticks and stage 1: the sample, whether it repeats, whether it triggers.

    Ports
    -----
    sample : In(width)
        The pins, synchronised (``width`` = 8 bits per group).
    sampling : In(1)
        Ticks come while this is high; it restarts the tick count when it rises.
    set_divider, settings : In(1), In(settings_layout(groups))
        From :class:`.sump_commands.SumpConfiguration`; the sampler reads the divider, the
        value mask and trigger stage 0.
    sampled : Out(1)
        A tick was in the previous cycle: ``value``, ``same`` and ``match`` are its.
    value : Out(width)
        The sample, masked to ``value_mask``.
    same : Out(1)
        ``value`` equals the previous tick's.
    match : Out(1)
        ``(value ^ trigger_value) & trigger_mask`` is 0.

    Sample ticks: the divider counts periods of ``SUMP_REFERENCE_HZ``, as sigrok computes it,
    so a tick comes every ``(divider + 1) * clock_hz / SUMP_REFERENCE_HZ`` cycles on average
    (exactly every ``divider + 1`` cycles at 100 MHz), at most one per cycle, the first in
    the first cycle of ``sampling``.
    """

    def __init__(self, groups, *, clock_hz):
        self._clock_hz = clock_hz
        width = groups * SUMP_GROUP_BITS
        super().__init__(
            {
                "sample": In(width),
                "sampling": In(1),
                "set_divider": In(1),
                "settings": In(settings_layout(groups)),
                "sampled": Out(1),
                "value": Out(width),
                "same": Out(1),
                "match": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        # `until` = reference time to the next sample tick minus one unit, in 2**-F reference
        # periods; a tick comes when it is negative. Every cycle advances `step` units.
        frac = DIVIDER_FRACTION_BITS
        step = round((SUMP_REFERENCE_HZ << frac) / self._clock_hz)
        settings = self.settings
        until = Signal(signed(len(settings.divider) + frac + 3))
        after_tick = Signal.like(until)  # period - step (0 if faster than the clock)
        divider_set = Signal()  # from the divider register, a cycle later
        m.d.sync += divider_set.eq(self.set_divider)
        with m.If(divider_set):
            period = (settings.divider + 1) << frac
            m.d.sync += after_tick.eq(Mux(period < step, 0, period - step))

        tick = until < 0
        with m.If(self.sampling):
            # A carry select keeps the 39-bit add off one long chain.
            m.d.sync += until.eq(
                carry_select_add(
                    until, Mux(tick, after_tick, -step), width=len(until), split=len(until) // 2
                )
            )
        with m.Else():
            m.d.sync += until.eq(-1)

        masked = self.sample & settings.value_mask
        m.d.sync += self.sampled.eq(self.sampling & tick)
        with m.If(self.sampling & tick):
            m.d.sync += [
                self.value.eq(masked),
                self.same.eq(masked == self.value),
                self.match.eq(((masked ^ settings.trigger_value) & settings.trigger_mask) == 0),
            ]
        return m


class _Phase(enum.Enum):
    IDLE = 0
    ARMED = 1  # sampling into the ring, waiting for the trigger
    TRIGGERED = 2  # sampling the post-trigger entries
    FLUSH = 3  # RLE: write the entry still held back; then the readback


class SumpTrigger(wiring.Component):
    """The capture's course: armed, triggered, the post-trigger entries, flushed.

    Ports
    -----
    run, reset : In(1)
        RUN arms (from any phase); RESET stops.
    sampled, match : In(1)
        Stage 1's outputs (:class:`SumpSampler`).
    writes : In(1)
        The sample being taken writes an entry (:class:`SumpRecorder`).
    filled, full : In(range(depth + 1)), In(1)
        Entries written since RUN; the memory is full.
    settings : In(settings_layout(groups))
        From :class:`.sump_commands.SumpConfiguration`: the trigger reads ``pre_trigger``,
        ``post_entries`` and ``post_entries_after``.
    sampling : Out(1)
        Armed or triggered: sample ticks run.
    taking : Out(1)
        Stage 2 takes a sample (it is stored unless RLE extends a run).
    flush : Out(1)
        One cycle after the last post-trigger entry: the recorder writes what it holds back,
        then the readback starts.

    The trigger counts only once the entries to be read back before it are in memory (or
    the memory is full), so that a readback always holds its pre-trigger part. (``armed``
    lags a stored entry by two cycles: at most two more entries before the trigger.) The
    trigger sample's own entry, if written, is the first post-trigger entry.
    """

    def __init__(self, groups, depth):
        super().__init__(
            {
                "run": In(1),
                "reset": In(1),
                "sampled": In(1),
                "match": In(1),
                "writes": In(1),
                "filled": In(range(depth + 1)),
                "full": In(1),
                "settings": In(settings_layout(groups)),
                "sampling": Out(1),
                "taking": Out(1),
                "flush": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        settings = self.settings
        phase = Signal(_Phase)
        armed = Signal()
        post_left = Signal.like(settings.post_entries)  # entries still to write after it
        post_more = Signal()  # post_left != 0
        m.d.sync += armed.eq((self.filled >= settings.pre_trigger) | self.full)
        m.d.comb += [
            self.sampling.eq((phase == _Phase.ARMED) | (phase == _Phase.TRIGGERED)),
            self.taking.eq(
                self.sampled & ((phase == _Phase.ARMED) | ((phase == _Phase.TRIGGERED) & post_more))
            ),
            self.flush.eq(phase == _Phase.FLUSH),
        ]
        with m.Switch(phase):
            with m.Case(_Phase.ARMED):
                with m.If(self.sampled & self.match & armed):
                    m.d.sync += [
                        phase.eq(_Phase.TRIGGERED),
                        post_more.eq(1),
                        post_left.eq(
                            Mux(self.writes, settings.post_entries_after, settings.post_entries)
                        ),
                    ]
            with m.Case(_Phase.TRIGGERED):
                with m.If(~post_more):
                    m.d.sync += phase.eq(_Phase.FLUSH)
                with m.Elif(self.writes):
                    m.d.sync += [post_left.eq(post_left - 1), post_more.eq(post_left != 1)]
            with m.Case(_Phase.FLUSH):
                m.d.sync += phase.eq(_Phase.IDLE)
        with m.If(self.run):
            m.d.sync += phase.eq(_Phase.ARMED)
        with m.If(self.reset):
            m.d.sync += phase.eq(_Phase.IDLE)
        return m


class SumpRecorder(wiring.Component):
    """The sample memory (a ring) and the run-length encoder in front of it.

    Ports
    -----
    run : In(1)
        RUN: the memory counts as empty, no run is open.
    taking : In(1)
        Stage 2 takes ``value`` (with ``same``: it equals the previous sample).
    flush : In(1)
        Write the value held back or the count of the open run.
    settings : In(settings_layout(groups))
        From :class:`.sump_commands.SumpConfiguration`: the recorder reads ``rle``,
        ``count_max``, ``count_last``, ``rank`` and ``last``.
    writes : Out(1)
        ``taking`` stores an entry (it depends on flip-flops only).
    writing : Out(1)
        An entry is written in this cycle.
    filled, full : Out(range(depth + 1)), Out(1)
        Entries written since RUN (saturating at ``depth``); ``filled == depth``.
    write_addr : Out(range(depth))
        Where the next entry goes.
    read_addr, read_data : In(range(depth)), Out(width)
        The memory's read port: data in the cycle after the address.

    RLE: the top channel of the highest enabled group becomes the count flag, as in the
    original OLS; an entry with it set is a count ``n``: the value next to it in the readback
    (the older one) lasted ``n + 1`` samples. Counts saturate at what the enabled groups hold
    (a longer run is split). A run's value is written when the run starts and its count when
    it ends; when one sample does both, the value is held back one sample (``held``), so
    there is never more than one write per cycle.
    """

    def __init__(self, groups, depth):
        self._groups = groups
        self._depth = depth
        width = groups * SUMP_GROUP_BITS
        super().__init__(
            {
                "run": In(1),
                "taking": In(1),
                "flush": In(1),
                "value": In(width),
                "same": In(1),
                "settings": In(settings_layout(groups)),
                "writes": Out(1),
                "writing": Out(1),
                "filled": Out(range(depth + 1)),
                "full": Out(1),
                "write_addr": Out(range(depth)),
                "read_addr": In(range(depth)),
                "read_data": Out(width),
            }
        )

    def elaborate(self, platform):
        m = Module()
        width = self._groups * SUMP_GROUP_BITS
        m.submodules.memory = mem = memory.Memory(shape=width, depth=self._depth, init=[])
        write = mem.write_port()
        read = mem.read_port()
        # An entry to write (`store`) is written in the next cycle, from flip-flops: the
        # decision has inputs enough without the address and fill counters behind it.
        store = Signal()
        store_data = Signal(width)
        m.d.sync += [write.en.eq(store), write.data.eq(store_data)]
        m.d.comb += [
            write.addr.eq(self.write_addr),
            self.writing.eq(write.en),
            read.addr.eq(self.read_addr),
            self.read_data.eq(read.data),
        ]
        with m.If(write.en):
            m.d.sync += self.write_addr.eq(self.write_addr + 1)
            with m.If(~self.full):
                m.d.sync += [
                    self.filled.eq(self.filled + 1),
                    self.full.eq(self.filled == self._depth - 1),
                ]
        self._encode(m, store, store_data)
        with m.If(self.run):
            m.d.sync += [self.filled.eq(0), self.full.eq(0)]
        return m

    def _encode(self, m, store, store_data):
        """What ``taking`` and ``flush`` store: the sample, or with RLE a run's value or
        count."""
        groups = self._groups
        width = groups * SUMP_GROUP_BITS
        settings = self.settings
        value, rle = self.value, settings.rle
        have_previous = Signal()
        run_length = Signal(width - 1)  # samples of the current run after its first
        run_counted = Signal()  # run_length != 0
        run_full = Signal()  # run_length == count_max
        held = Signal(width)
        holding = Signal()
        count_entry = Signal(width)
        count_bytes = Array(
            run_length.word_select(n, 8) if 8 * (n + 1) <= len(run_length) else run_length[8 * n :]
            for n in range(groups)
        )
        m.d.comb += count_entry.eq(
            Cat(
                count_bytes[settings.rank[g]] | Mux(settings.last[g], 0x80, 0)
                for g in range(groups)
            )
        )

        def write(entry):
            m.d.comb += [store.eq(1), store_data.eq(entry)]

        # Whether a sample writes depends on flip-flops only (the trigger's post-trigger
        # count depends on it): every sample writes, except one that extends a run while no
        # value is held back.
        extends = have_previous & self.same & ~run_full
        m.d.comb += self.writes.eq(self.taking & (~rle | ~extends | holding))
        with m.If(self.taking):
            with m.If(~rle):
                write(value)
            with m.Elif(extends):
                m.d.sync += [
                    run_length.eq(run_length + 1),
                    run_counted.eq(1),
                    run_full.eq(run_length == settings.count_last),
                ]
                with m.If(holding):
                    write(held)
                    m.d.sync += holding.eq(0)
            with m.Else():
                m.d.sync += [
                    have_previous.eq(1),
                    run_length.eq(0),
                    run_counted.eq(0),
                    run_full.eq(settings.count_max == 0),
                ]
                with m.If(have_previous & run_counted):
                    # `holding` is clear: a run longer than one sample wrote its value.
                    write(count_entry)
                    m.d.sync += [held.eq(value), holding.eq(1)]
                with m.Elif(holding):
                    write(held)
                    m.d.sync += held.eq(value)
                with m.Else():
                    write(value)
        with m.If(self.flush):
            # The value held back or the count of the open run; never both (a held value
            # starts a run of one).
            with m.If(rle & holding):
                write(held)
            with m.Elif(rle & have_previous & run_counted):
                write(count_entry)
        with m.If(self.run):
            m.d.sync += [have_previous.eq(0), holding.eq(0), run_length.eq(0), run_counted.eq(0)]
