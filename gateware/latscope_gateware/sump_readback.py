"""SUMP device mode, the readback: the captured entries, newest first, as bytes of the enabled
channel groups (see :mod:`.sump` for the engine)."""

import enum

from amaranth.hdl import *
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from latscope.protocol import SUMP_GROUP_BITS, SUMP_MAX_GROUPS

from .sump_commands import settings_layout

__all__ = ["SumpReadback"]


class _Step(enum.Enum):
    IDLE = 0
    START = 1       # how many entries, from where (once the last entry is written)
    FETCH = 2       # address the next entry
    LOAD = 3        # the entry leaves the block RAM
    SEND = 4        # its bytes, one per enabled channel group


class SumpReadback(wiring.Component):
    """Reads the newest ``min(read_entries, filled)`` entries back, newest first, each as the
    bytes of its enabled groups, channel group 0 first.

    Ports
    -----
    start : In(1)
        The capture is over; the readback starts when no entry is being written.
    stop : In(1)
        RUN or RESET: a readback under way ends.
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
        super().__init__({
            "start": In(1),
            "stop": In(1),
            "writing": In(1),
            "filled": In(range(depth + 1)),
            "write_addr": In(range(depth)),
            "settings": In(settings_layout(groups)),
            "read_addr": Out(range(depth)),
            "read_data": In(groups * SUMP_GROUP_BITS),
            "tx": Out(stream.Signature(8)),
        })
        self._depth = depth

    def elaborate(self, platform):
        m = Module()
        step = Signal(_Step)
        entry = Signal(SUMP_MAX_GROUPS * SUMP_GROUP_BITS)
        group = Signal(range(SUMP_MAX_GROUPS))
        # At most what the memory holds, and at most the largest read count, 4 << 16.
        read_left = Signal(range(max(self._depth, 4 << 16) + 1))
        read_entries = self.settings.read_entries
        group_enabled = self.settings.enabled.bit_select(group, 1)
        with m.Switch(step):
            with m.Case(_Step.START):
                with m.If(~self.writing):
                    m.d.sync += [
                        read_left.eq(Mux(read_entries < self.filled, read_entries,
                                         self.filled)),
                        self.read_addr.eq(self.write_addr - 1),
                        step.eq(_Step.FETCH),
                    ]
            with m.Case(_Step.FETCH):
                with m.If(read_left == 0):
                    m.d.sync += step.eq(_Step.IDLE)
                with m.Else():
                    m.d.sync += step.eq(_Step.LOAD)
            with m.Case(_Step.LOAD):
                m.d.sync += [entry.eq(self.read_data), group.eq(0), step.eq(_Step.SEND)]
            with m.Case(_Step.SEND):
                m.d.comb += [self.tx.valid.eq(group_enabled),
                             self.tx.payload.eq(entry.word_select(group, 8))]
                with m.If(~group_enabled | self.tx.ready):
                    m.d.sync += group.eq(group + 1)
                    with m.If(group == SUMP_MAX_GROUPS - 1):
                        m.d.sync += [read_left.eq(read_left - 1),
                                     self.read_addr.eq(self.read_addr - 1),
                                     step.eq(_Step.FETCH)]
        with m.If(self.start):
            m.d.sync += step.eq(_Step.START)
        with m.If(self.stop):
            m.d.sync += step.eq(_Step.IDLE)
        return m
