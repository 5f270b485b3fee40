"""SUMP / Openbench Logic Sniffer device mode: a small logic analyzer on the appliance's pins.

Stock sigrok-cli and PulseView (driver ``ols``) talk to it over the appliance's serial link;
``docs/protocol.md`` ("SUMP device mode") describes the subset, ``latscope.protocol`` holds
its opcodes and metadata keys.
"""

import enum

from amaranth.hdl import *
from amaranth.lib import memory, stream, wiring
from amaranth.lib.wiring import In, Out

from latscope.protocol import (SUMP_ARG_BYTES, SUMP_GROUP_BITS, SUMP_ID_REPLY,
                               SUMP_LONG_COMMAND, SUMP_MAX_GROUPS, SUMP_REFERENCE_HZ,
                               SumpCommand, SumpFlags, sump_metadata)

from .arithmetic import carry_select_add

__all__ = ["SumpEngine", "DIVIDER_FRACTION_BITS"]

#: Fractional bits of the sample-time accumulator that turns the 100 MHz-based divider into
#: capture-clock cycles (rate error below 2**-12 of a cycle per sample).
DIVIDER_FRACTION_BITS = 12
DIVIDER_BITS = 24


class _State(enum.Enum):
    IDLE = 0
    ARMED = 1       # sampling into the ring, waiting for the trigger
    TRIGGERED = 2   # sampling the post-trigger entries
    FLUSH = 3       # RLE: write the entry still held back
    READBACK = 4    # readback: how many entries, from where
    FETCH = 5       # readback: address the next entry
    LOAD = 6        # readback: the entry leaves the block RAM
    SEND = 7        # readback: its bytes, one per enabled channel group


class SumpEngine(wiring.Component):
    """Parses SUMP commands, captures ``sample`` into a block RAM and reads it back.

    Parameters
    ----------
    channels : int, <= 32
        Width of ``sample``; the metadata advertises this many probes.
    depth : int, power of two
        Entries of the sample memory (samples, or RLE entries).
    clock_hz : int
        The capture clock; the maximum sample rate, and the clock the divider is converted to.

    Ports
    -----
    rx : In(stream.Signature(8, always_ready=True))
        Command bytes from the host.
    sample : In(channels)
        The pins, already synchronised to the clock.
    tx : Out(stream.Signature(8))
        Reply and readback bytes.
    idle : Out(1)
        The parser is between commands (not inside a long command's argument bytes). It
        follows a byte one cycle late (bytes come at most one per UART frame).

    Behaviour
    ---------
    RUN arms: every sample tick writes ``sample`` (masked to the enabled channel groups) into
    a ring. Once ``read count - delay count`` entries (the part before the trigger) are in
    memory, the first sample that matches trigger stage 0 (``sample & mask == value & mask``;
    mask 0 matches at once) starts the post-trigger count (delay count entries, the trigger
    sample being the first); then the newest ``min(read count, entries written)`` entries go
    out newest first, each as the bytes of its enabled groups, channel group 0 first.

    Sample ticks: the divider counts periods of ``SUMP_REFERENCE_HZ``, as sigrok computes it,
    so a tick comes every ``(divider + 1) * clock_hz / SUMP_REFERENCE_HZ`` cycles on average
    (exactly every ``divider + 1`` cycles at 100 MHz), at most one per cycle.

    RLE (flag bit 8): the top channel of the highest enabled group becomes the count flag, as
    in the original OLS; an entry with it set is a count ``n``: the value next to it in the
    readback (the older one) lasted ``n + 1`` samples. Counts saturate at what the enabled
    groups hold (a longer run is split). Pre- and post-trigger counts are in entries.
    """

    def __init__(self, *, channels, depth=512, clock_hz, name="latscope", version="1"):
        if not 1 <= channels <= SUMP_MAX_GROUPS * SUMP_GROUP_BITS:
            raise ValueError(f"channels must be 1..32, not {channels!r}")
        if depth < 4 or depth & (depth - 1):
            raise ValueError(f"depth must be a power of two >= 4, not {depth!r}")
        self.channels = channels
        self.depth = depth
        self.clock_hz = clock_hz
        #: Channel groups present; a sample is stored as that many bytes.
        self.groups = -(-channels // SUMP_GROUP_BITS)
        self.metadata_reply = sump_metadata(name=name, version=version, probes=channels,
                                      memory_bytes=depth * self.groups, max_rate_hz=clock_hz)
        super().__init__({
            "rx": In(stream.Signature(8, always_ready=True)),
            "sample": In(channels),
            "tx": Out(stream.Signature(8)),
            "idle": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        groups = self.groups
        width = groups * SUMP_GROUP_BITS

        # --- Command parser -----------------------------------------------------------------
        # The bytes are registered first: what a command starts (RUN resets most of the
        # engine) then depends on a flip-flop, not on the link's mode switch in front.
        rx_valid = Signal()
        rx_byte = Signal(8)
        m.d.sync += [rx_valid.eq(self.rx.valid), rx_byte.eq(self.rx.payload)]
        opcode = Signal(8)
        args = Signal(8 * SUMP_ARG_BYTES)
        args_left = Signal(range(SUMP_ARG_BYTES + 1))
        m.d.comb += self.idle.eq(args_left == 0)
        # The argument as it is once this cycle's byte is shifted in (little-endian).
        arg = Cat(args[8:], rx_byte)

        short = Signal()      # a short command's byte arrives in this cycle
        long = Signal()       # a long command's last argument byte arrives in this cycle
        with m.If(rx_valid):
            with m.If(args_left == 0):
                with m.If(rx_byte & SUMP_LONG_COMMAND):
                    m.d.sync += [opcode.eq(rx_byte), args_left.eq(SUMP_ARG_BYTES)]
                with m.Else():
                    m.d.comb += short.eq(1)
            with m.Else():
                m.d.sync += [args.eq(arg), args_left.eq(args_left - 1)]
                m.d.comb += long.eq(args_left == 1)

        divider = Signal(DIVIDER_BITS)
        read_count = Signal(16)          # read back (read_count + 1) * 4 entries
        delay_count = Signal(16)         # capture (delay_count + 1) * 4 after the trigger
        flags = Signal(32)
        trigger_mask = Signal(width)
        trigger_value = Signal(width)
        set_divider = Signal()
        with m.If(long):
            with m.Switch(opcode):
                with m.Case(SumpCommand.SET_DIVIDER):
                    m.d.sync += divider.eq(arg[:DIVIDER_BITS])
                    m.d.comb += set_divider.eq(1)
                with m.Case(SumpCommand.SET_READ_DELAY):
                    m.d.sync += [read_count.eq(arg[:16]), delay_count.eq(arg[16:])]
                with m.Case(SumpCommand.SET_FLAGS):
                    m.d.sync += flags.eq(arg)
                with m.Case(SumpCommand.TRIGGER_MASK0):
                    m.d.sync += trigger_mask.eq(arg)
                with m.Case(SumpCommand.TRIGGER_VALUE0):
                    m.d.sync += trigger_value.eq(arg)
                # Every other long command (trigger stages 1..3, TRIGGER_CONFIG0, ...) is
                # parsed and ignored.
        reset = short & (rx_byte == SumpCommand.RESET)
        run = short & (rx_byte == SumpCommand.RUN)

        # --- Replies: ID and METADATA from one ROM ------------------------------------------
        rom = list(SUMP_ID_REPLY) + list(self.metadata_reply)
        rom_data = Array(Const(byte, 8) for byte in rom)
        rom_addr = Signal(range(len(rom)))
        rom_left = Signal(range(len(rom) + 1))
        with m.If(short):
            with m.Switch(rx_byte):
                with m.Case(SumpCommand.ID):
                    m.d.sync += [rom_addr.eq(0), rom_left.eq(len(SUMP_ID_REPLY))]
                with m.Case(SumpCommand.METADATA):
                    m.d.sync += [rom_addr.eq(len(SUMP_ID_REPLY)),
                                 rom_left.eq(len(self.metadata_reply))]
                with m.Case(SumpCommand.RESET):
                    m.d.sync += rom_left.eq(0)

        # --- Configuration derived from the flags, fixed at RUN ---------------------------------
        enabled = Signal(SUMP_MAX_GROUPS)       # channel groups sent at readback
        rle = Signal()                          # run-length encoding, as of RUN
        value_mask = Signal(width)              # sample bits kept (RLE: minus the flag bit)
        rank = Array(Signal(2, name=f"rank{g}") for g in range(groups))  # byte of a count
        last = Signal(groups)                   # one-hot: the highest enabled stored group
        count_max = Signal(width - 1)
        count_last = Signal(width - 1)          # count_max - 1: no adder before the compare
        disable_shift = int(SumpFlags.GROUP_DISABLE_SHIFT)
        rle_flag = (flags & int(SumpFlags.RLE)) != 0
        with m.If(run):
            m.d.sync += [enabled.eq(~(flags >> disable_shift)), rle.eq(rle_flag)]
            rank_so_far = Const(0, 3)
            stored = ~(flags >> disable_shift)[:groups]
            mask = []
            for g in range(groups):
                m.d.sync += rank[g].eq(rank_so_far)
                rank_so_far = rank_so_far + stored[g]
                above = stored[g + 1:] if g + 1 < groups else Const(0, 1)
                is_last = stored[g] & (above == 0)
                m.d.sync += last[g].eq(is_last)
                keep = Mux(stored[g], 0xff, 0)
                mask.append(Mux(rle_flag & is_last, keep & 0x7f, keep))
            m.d.sync += value_mask.eq(Cat(*mask))
            with m.Switch(rank_so_far):
                for n in range(1, groups + 1):
                    with m.Case(n):
                        count = (1 << (SUMP_GROUP_BITS * n - 1)) - 1
                        m.d.sync += [count_max.eq(count), count_last.eq(count - 1)]
                with m.Default():
                    m.d.sync += [count_max.eq(0), count_last.eq(0)]

        # --- Sample ticks -------------------------------------------------------------------
        # `until` = reference time to the next sample tick minus one unit, in 2**-F reference
        # periods; a tick comes when it is negative. Every cycle advances `step` units.
        frac = DIVIDER_FRACTION_BITS
        step = round((SUMP_REFERENCE_HZ << frac) / self.clock_hz)
        until = Signal(signed(DIVIDER_BITS + frac + 3))
        after_tick = Signal.like(until)         # period - step (0 if faster than the clock)
        divider_set = Signal()                  # from the divider register, a cycle later
        m.d.sync += divider_set.eq(set_divider)
        with m.If(divider_set):
            period = (divider + 1) << frac
            m.d.sync += after_tick.eq(Mux(period < step, 0, period - step))

        # --- Sample memory ------------------------------------------------------------------
        m.submodules.memory = mem = memory.Memory(shape=width, depth=self.depth, init=[])
        write = mem.write_port()
        read = mem.read_port()
        wr_addr = Signal(range(self.depth))
        rd_addr = Signal(range(self.depth))
        filled = Signal(range(self.depth + 1))          # entries written since RUN
        full = Signal()                                 # filled == depth
        # An entry to write (`store`) is written in the next cycle, from flip-flops: the
        # decision has inputs enough without the address and fill counters behind it.
        store = Signal()
        store_data = Signal(width)
        m.d.sync += [write.en.eq(store), write.data.eq(store_data)]
        m.d.comb += [write.addr.eq(wr_addr), read.addr.eq(rd_addr)]
        with m.If(write.en):
            m.d.sync += wr_addr.eq(wr_addr + 1)
            with m.If(~full):
                m.d.sync += [filled.eq(filled + 1), full.eq(filled == self.depth - 1)]

        state = Signal(_State)
        sampling = (state == _State.ARMED) | (state == _State.TRIGGERED)
        tick = until < 0
        with m.If(sampling):
            # A carry select keeps the 39-bit add off one long chain.
            m.d.sync += until.eq(carry_select_add(until, Mux(tick, after_tick, -step),
                                                  width=len(until), split=len(until) // 2))
        with m.Else():
            m.d.sync += until.eq(-1)

        # Stage 1, in a tick: the sample, whether it equals the previous one (RLE) and whether
        # it matches the trigger. Stage 2, the next cycle: trigger and memory write. Only
        # registers feed stage 2's decisions, which keeps the paths short.
        sampled = Signal()
        value = Signal(width)
        same = Signal()
        match = Signal()
        masked = self.sample & value_mask
        m.d.sync += sampled.eq(sampling & tick)
        with m.If(sampling & tick):
            m.d.sync += [
                value.eq(masked),
                same.eq(masked == value),
                match.eq(((masked ^ trigger_value) & trigger_mask) == 0),
            ]

        post_left = Signal(19)                  # entries still to write after the trigger
        post_more = Signal()                    # post_left != 0
        taking = sampled & ((state == _State.ARMED) | ((state == _State.TRIGGERED) & post_more))
        sample_writes = Signal()                # `taking` stores an entry

        # RLE: a run's value is written when the run starts and its count when it ends; when
        # one sample does both, the value is held back one sample (`held`), so there is never
        # more than one write per cycle.
        have_previous = Signal()
        run_length = Signal(width - 1)          # samples of the current run after its first
        run_counted = Signal()                  # run_length != 0
        run_full = Signal()                     # run_length == count_max
        held = Signal(width)
        holding = Signal()
        count_entry = Signal(width)
        count_bytes = Array(run_length.word_select(n, 8) if 8 * (n + 1) <= len(run_length)
                            else run_length[8 * n:] for n in range(groups))
        m.d.comb += count_entry.eq(Cat(
            count_bytes[rank[g]] | Mux(last[g], 0x80, 0) for g in range(groups)))

        # Whether a sample writes depends on flip-flops only (the trigger's post-trigger
        # count below depends on it): every sample writes, except one that extends a run
        # while no value is held back.
        extends = have_previous & same & ~run_full
        m.d.comb += sample_writes.eq(taking & (~rle | ~extends | holding))
        with m.If(taking):
            with m.If(~rle):
                m.d.comb += [store.eq(1), store_data.eq(value)]
            with m.Elif(extends):
                m.d.sync += [run_length.eq(run_length + 1), run_counted.eq(1),
                             run_full.eq(run_length == count_last)]
                with m.If(holding):
                    m.d.comb += [store.eq(1), store_data.eq(held)]
                    m.d.sync += holding.eq(0)
            with m.Else():
                m.d.sync += [have_previous.eq(1), run_length.eq(0), run_counted.eq(0),
                             run_full.eq(count_max == 0)]
                with m.If(have_previous & run_counted):
                    # `holding` is clear: a run longer than one sample wrote its value.
                    m.d.comb += [store.eq(1), store_data.eq(count_entry)]
                    m.d.sync += [held.eq(value), holding.eq(1)]
                with m.Elif(holding):
                    m.d.comb += [store.eq(1), store_data.eq(held)]
                    m.d.sync += held.eq(value)
                with m.Else():
                    m.d.comb += [store.eq(1), store_data.eq(value)]

        # --- Capture and readback sequence ------------------------------------------------
        entry = Signal(SUMP_MAX_GROUPS * SUMP_GROUP_BITS)
        group = Signal(range(SUMP_MAX_GROUPS))
        read_left = Signal(range(max(self.depth, 4 << 16) + 1))
        delay_entries = (delay_count + 1) << 2
        read_entries = (read_count + 1) << 2

        # The trigger counts only once the entries to be read back before it are in memory
        # (or the memory is full), so that a readback always holds its pre-trigger part.
        # (`armed` lags a stored entry by two cycles: at most two more entries before the
        # trigger.)
        pre_trigger = Signal(19)
        post_entries = Signal(19)
        post_entries_after = Signal(19)         # post_entries - 1
        armed = Signal()
        with m.If(run):
            m.d.sync += [pre_trigger.eq(Mux(read_entries > delay_entries,
                                            read_entries - delay_entries, 0)),
                         post_entries.eq(delay_entries),
                         post_entries_after.eq(delay_entries - 1)]
        m.d.sync += armed.eq((filled >= pre_trigger) | full)

        with m.Switch(state):
            with m.Case(_State.ARMED):
                with m.If(sampled & match & armed):
                    # The trigger sample's own entry, if written, is the first of them.
                    m.d.sync += [state.eq(_State.TRIGGERED), post_more.eq(1),
                                 post_left.eq(Mux(sample_writes, post_entries_after,
                                                  post_entries))]
            with m.Case(_State.TRIGGERED):
                with m.If(~post_more):
                    m.d.sync += state.eq(_State.FLUSH)
                with m.Elif(sample_writes):
                    m.d.sync += [post_left.eq(post_left - 1), post_more.eq(post_left != 1)]
            with m.Case(_State.FLUSH):
                # The value held back or the count of the open run; never both (a held value
                # starts a run of one).
                with m.If(rle & holding):
                    m.d.comb += [store.eq(1), store_data.eq(held)]
                with m.Elif(rle & have_previous & run_counted):
                    m.d.comb += [store.eq(1), store_data.eq(count_entry)]
                m.d.sync += state.eq(_State.READBACK)
            with m.Case(_State.READBACK):
                # How many entries to send, starting from the newest, once the last is written.
                with m.If(~write.en):
                    m.d.sync += [
                        read_left.eq(Mux(read_entries < filled, read_entries, filled)),
                        rd_addr.eq(wr_addr - 1),
                        state.eq(_State.FETCH),
                    ]
            with m.Case(_State.FETCH):
                with m.If(read_left == 0):
                    m.d.sync += state.eq(_State.IDLE)
                with m.Else():
                    m.d.sync += state.eq(_State.LOAD)
            with m.Case(_State.LOAD):
                m.d.sync += [entry.eq(read.data), group.eq(0), state.eq(_State.SEND)]
            with m.Case(_State.SEND):
                byte = entry.word_select(group, 8)
                m.d.comb += [self.tx.valid.eq(enabled.bit_select(group, 1) & (rom_left == 0)),
                             self.tx.payload.eq(byte)]
                with m.If(~enabled.bit_select(group, 1) | self.tx.ready & (rom_left == 0)):
                    m.d.sync += group.eq(group + 1)
                    with m.If(group == SUMP_MAX_GROUPS - 1):
                        m.d.sync += [read_left.eq(read_left - 1), rd_addr.eq(rd_addr - 1),
                                     state.eq(_State.FETCH)]

        with m.If(rom_left != 0):
            m.d.comb += [self.tx.valid.eq(1), self.tx.payload.eq(rom_data[rom_addr])]
            with m.If(self.tx.ready):
                m.d.sync += [rom_addr.eq(rom_addr + 1), rom_left.eq(rom_left - 1)]

        with m.If(run):
            m.d.sync += [state.eq(_State.ARMED), filled.eq(0), full.eq(0), have_previous.eq(0),
                         holding.eq(0), run_length.eq(0), run_counted.eq(0)]
        with m.If(reset):
            m.d.sync += state.eq(_State.IDLE)
        return m
