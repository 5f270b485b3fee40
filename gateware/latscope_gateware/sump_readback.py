"""SUMP device mode, the readback: the captured entries, newest first, as bytes of the enabled
channel groups (see :mod:`.sump` for the engine)."""

import enum

from amaranth.hdl import *
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from latscope_defs.protocol import SUMP_GROUP_BITS, SUMP_MAX_GROUPS

from .sump_commands import settings_layout

__all__ = ["SumpReadback"]


class _Step(enum.Enum):
    IDLE = 0
    START = 1  # how many entries, from where (once the last entry is written)
    FETCH = 2  # address the next entry
    LOAD = 3  # the entry leaves the block RAM
    SEND = 4  # its bytes, one per enabled channel group
    COUNT = 5  # the samples the entry stands for; stop once the read count is reached


class SumpReadback(wiring.Component):
    """Reads entries back, newest first, each as the bytes of its enabled groups, channel
    group 0 first, until the samples sent reach the read count (``read_entries``) or the
    memory's ``filled`` entries are sent.

    Samples, as a host counts them (sigrok's ols driver stops reading there): without RLE an
    entry is one sample; with RLE a count entry ``n`` (flag: top bit of the last byte sent)
    adds ``n + 1`` samples to the value entry sent after it, and a value entry without one is
    one sample. The readback ends after the entry whose samples reach the read count, so a
    host that stops at the count it asked for leaves nothing unread. A read count equal to
    the memory size sigrok computes (``depth * groups`` bytes over the enabled groups) is
    its cap, not its count (it still counts its own, possibly larger, sample limit): then
    every entry goes.

    Ports
    -----
    start : In(1)
        The capture is over; the readback starts when no entry is being written.
    stop : In(1)
        RUN or RESET: a readback under way ends. (``start`` and ``stop`` are taken a cycle
        late, from flip-flops: they come from the command parser and the trigger, and their
        paths on into the readback's state, about 12 ns, held the HX8K's 84 MHz appliance
        clock at 79.43 MHz, nextpnr seed 2.)
    writing : In(1)
        The recorder writes an entry in this cycle.
    filled, write_addr : In(range(depth + 1)), In(range(depth))
        Entries in memory; where the next one would go (the newest is just before it).
    settings : In(settings_layout(groups))
        From :class:`.sump_commands.SumpConfiguration`: the readback reads ``read_entries``
        and ``enabled`` (the channel groups sent).
    read_addr, read_data : Out(range(depth)), In(width)
        The memory's read port (data in the cycle after the address).
    tx : Out(stream.Signature(8))
        The bytes.
    """

    def __init__(self, groups, depth):
        super().__init__(
            {
                "start": In(1),
                "stop": In(1),
                "writing": In(1),
                "filled": In(range(depth + 1)),
                "write_addr": In(range(depth)),
                "settings": In(settings_layout(groups)),
                "read_addr": Out(range(depth)),
                "read_data": In(groups * SUMP_GROUP_BITS),
                "tx": Out(stream.Signature(8)),
            }
        )
        self._depth = depth
        self._groups = groups

    def elaborate(self, platform):
        m = Module()
        step = Signal(_Step)
        entry = Signal(SUMP_MAX_GROUPS * SUMP_GROUP_BITS)
        group = Signal(range(SUMP_MAX_GROUPS))
        # At most what the memory holds, and at most the largest read count, 4 << 16.
        read_left = Signal(range(max(self._depth, 4 << 16) + 1))
        read_entries = self.settings.read_entries
        group_enabled = self.settings.enabled.bit_select(group, 1)
        # The entry as the host assembles it (sent bytes little-endian, the flag cleared),
        # its flag, the samples the next value entry stands for, the samples still to send.
        sent = Signal(range(SUMP_MAX_GROUPS + 1))
        word = Signal(SUMP_MAX_GROUPS * SUMP_GROUP_BITS)
        is_count = Signal()
        samples_left = Signal(len(read_left))
        counting = Signal()  # the read count is not sigrok's cap
        enabled_count = sum(self.settings.enabled[: self._groups])
        caps = Array(self._depth * self._groups // n if n else 0 for n in range(self._groups + 1))
        next_samples = Signal(len(read_left) + 1, init=1)
        count_bits = len(next_samples) - 1
        group_last = self.settings.last.bit_select(group, 1)
        # Registered ahead of COUNT (its inputs change only in START and COUNT, at least 6
        # cycles apart), which keeps the comparison's carry chain off the stop decision.
        reached = Signal()
        samples_after = Signal.like(samples_left)
        m.d.sync += [
            reached.eq(next_samples >= samples_left),
            samples_after.eq(samples_left - next_samples),
        ]
        with m.Switch(step):
            with m.Case(_Step.START):
                with m.If(~self.writing):
                    m.d.sync += [
                        read_left.eq(Mux(read_entries < self.filled, read_entries, self.filled)),
                        samples_left.eq(read_entries),
                        counting.eq(read_entries != caps[enabled_count]),
                        next_samples.eq(1),
                        self.read_addr.eq(self.write_addr - 1),
                        step.eq(_Step.FETCH),
                    ]
            with m.Case(_Step.FETCH):
                with m.If(read_left == 0):
                    m.d.sync += step.eq(_Step.IDLE)
                with m.Else():
                    m.d.sync += step.eq(_Step.LOAD)
            with m.Case(_Step.LOAD):
                m.d.sync += [
                    entry.eq(self.read_data),
                    group.eq(0),
                    sent.eq(0),
                    word.eq(0),
                    is_count.eq(0),
                    step.eq(_Step.SEND),
                ]
            with m.Case(_Step.SEND):
                payload = entry.word_select(group, 8)
                m.d.comb += [self.tx.valid.eq(group_enabled), self.tx.payload.eq(payload)]
                with m.If(group_enabled & self.tx.ready):
                    flag = self.settings.rle & group_last & payload[7]
                    m.d.sync += [
                        sent.eq(sent + 1),
                        is_count.eq(flag),
                        word.word_select(sent, 8).eq(Mux(flag, payload & 0x7F, payload)),
                    ]
                with m.If(~group_enabled | self.tx.ready):
                    m.d.sync += group.eq(group + 1)
                    with m.If(group == SUMP_MAX_GROUPS - 1):
                        m.d.sync += [
                            read_left.eq(read_left - 1),
                            self.read_addr.eq(self.read_addr - 1),
                            step.eq(_Step.COUNT),
                        ]
            with m.Case(_Step.COUNT):
                with m.If(is_count):
                    # n + 1 samples, saturated above any read count.
                    saturated = word[count_bits:] != 0
                    m.d.sync += [
                        next_samples.eq(Mux(saturated, 1 << count_bits, word[:count_bits] + 1)),
                        step.eq(_Step.FETCH),
                    ]
                with m.Elif(counting & reached):
                    m.d.sync += step.eq(_Step.IDLE)
                with m.Else():
                    m.d.sync += [
                        samples_left.eq(samples_after),
                        next_samples.eq(1),
                        step.eq(_Step.FETCH),
                    ]
        start, stop = Signal(), Signal()
        m.d.sync += [start.eq(self.start), stop.eq(self.stop)]
        with m.If(start):
            m.d.sync += step.eq(_Step.START)
        with m.If(stop):
            m.d.sync += step.eq(_Step.IDLE)
        return m
