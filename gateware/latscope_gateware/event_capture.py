"""Time-stamper, merge, FIFO and loss accounting."""

from amaranth.hdl import *
from amaranth.lib import data, stream, wiring
from amaranth.lib.fifo import SyncFIFOBuffered
from amaranth.lib.wiring import In, Out

from latscope.protocol import LOSS_COUNT_BITS, STAMP_BITS, Source

__all__ = ["entry_layout", "EventCapture"]


def entry_layout(sources):
    """Layout of one FIFO entry: everything that happened in one cycle.

    ``sources`` maps :class:`Source` to value width. All events of a cycle share one entry and
    therefore one stamp; at most one LOSS record rides along, and it is emitted before the
    events of that entry."""
    return data.StructLayout({
        "stamp": STAMP_BITS,
        "present": data.StructLayout({source.name: 1 for source in sources}),
        "value": data.StructLayout({source.name: width for source, width in sources.items()}),
        "loss_valid": 1,
        "loss_source": 4,
        "loss_count": LOSS_COUNT_BITS,
    })


class EventCapture(wiring.Component):
    """Stamps events with one free-running counter and queues them in cycle order.

    Parameters
    ----------
    sources : dict of :class:`Source` to int
        The event sources and their value widths. For each, the component has an input port
        named after the source in lower case (``marker``, ``irq``, ``edge0``...) of signature
        ``stream.Signature(width, always_ready=True)``.
    fifo_depth : int
        Entries of the block-RAM FIFO. An entry holds one cycle's events.

    Behaviour
    ---------
    ``now`` counts cycles from reset (48 bits, wrapping). An event whose ``valid`` is high in
    cycle *c* while ``enable`` is high is stamped with ``now`` of cycle *c*; every event of
    that cycle goes into one FIFO entry, so simultaneous events share their stamp and entries
    are in cycle order by construction (no comparators needed).

    Nothing is dropped silently. When the FIFO cannot take an entry, each source that had an
    event counts it as lost. In a later cycle with room, the lowest-numbered source with a
    non-zero count gets a LOSS record (count, source) in that cycle's entry, ahead of that
    cycle's events. While a source's count waits its turn, its new events are counted too, so
    a LOSS record always means "this many events of this source were lost between its
    previous record and this one". Counts saturate at 2**32 - 1 (about 43 s of a
    100 MHz source lost with no room at all).

    ``clear`` (one cycle, e.g. on START) zeroes loss and status counters; it does not touch the
    FIFO, which the encoder drains. The status counters (``events``, ``lost``, ``fifo_max``)
    count a cycle's events one cycle later (registered for timing).

    With ``stamp_shift=1`` (DDR front ends, see :mod:`.ddr_edges`) the stamp counts half
    cycles: ``now * 2 + half``, where ``half`` (one bit per source, read with ``valid``) says an
    event came in the later half of its cycle. Events of one cycle share their entry's stamp,
    which takes the earliest of their halves.
    """

    def __init__(self, sources, *, fifo_depth=512, stamp_shift=0):
        if stamp_shift not in (0, 1):
            raise ValueError(f"stamp_shift must be 0 or 1, not {stamp_shift!r}")
        self._sources = dict(sources)
        self._fifo_depth = fifo_depth
        self._stamp_shift = stamp_shift
        self._layout = entry_layout(self._sources)
        members = {
            "enable": In(1),
            "clear": In(1),
            "now": Out(STAMP_BITS),
            "entries": Out(stream.Signature(self._layout)),
            # status counters (since the last clear)
            "events": Out(32),
            "lost": Out(32),
            "fifo_max": Out(range(fifo_depth + 1)),
        }
        for source, width in self._sources.items():
            members[source.name.lower()] = In(stream.Signature(width, always_ready=True))
        if stamp_shift:
            members["half"] = In(len(self._sources))
        super().__init__(members)

    @property
    def layout(self):
        return self._layout

    def elaborate(self, platform):
        m = Module()
        m.submodules.fifo = fifo = SyncFIFOBuffered(width=self._layout.size, depth=self._fifo_depth)

        m.d.sync += self.now.eq(self.now + 1)

        entry = Signal(self._layout)
        m.d.comb += [
            fifo.w_data.eq(entry),
            self.entries.payload.eq(fifo.r_data),
            self.entries.valid.eq(fifo.r_rdy),
            fifo.r_en.eq(self.entries.ready),
        ]

        sources = list(self._sources)
        ports = {source: getattr(self, source.name.lower()) for source in sources}
        counts = {source: Signal(LOSS_COUNT_BITS, name=f"lost_{source.name.lower()}")
                  for source in sources}
        # `has_loss[s]` is `counts[s] != 0`, kept in a flip-flop so that the wide compares are
        # off the path that picks the reported source and the events that may be written.
        has_loss = {source: Signal(name=f"has_lost_{source.name.lower()}") for source in sources}
        incoming = {source: Signal(name=f"in_{source.name.lower()}") for source in sources}
        for source in sources:
            m.d.comb += incoming[source].eq(ports[source].valid & self.enable)
            m.d.comb += entry.value[source.name].eq(ports[source].payload)
        if self._stamp_shift:
            # The entry's half bit is 1 only if every event in it came in the later half.
            late = Const(1)
            for index, source in enumerate(sources):
                late = late & (~entry.present[source.name] | self.half[index])
            m.d.comb += entry.stamp.eq(Cat(late & (entry.present.as_value() != 0), self.now))
        else:
            m.d.comb += entry.stamp.eq(self.now)

        # The source whose loss is reported in this cycle's entry: the lowest with a count.
        flushing = {source: Signal(name=f"flush_{source.name.lower()}") for source in sources}
        any_before = Const(0)
        for source in sources:
            m.d.comb += flushing[source].eq(fifo.w_rdy & has_loss[source] & ~any_before)
            any_before = any_before | has_loss[source]
        with m.Switch(Cat(flushing[source] for source in sources)):
            for index, source in enumerate(sources):
                with m.Case(1 << index):
                    m.d.comb += [
                        entry.loss_valid.eq(1),
                        entry.loss_source.eq(source),
                        entry.loss_count.eq(counts[source]),
                    ]

        def saturating_increment(count):
            return Mux(count.all(), count, count + 1)

        lost_now = []
        for source in sources:
            # An event may go into the FIFO only if its source has no unreported loss, or if
            # that loss is reported in the same entry (ahead of it).
            may_write = fifo.w_rdy & (~has_loss[source] | flushing[source])
            m.d.comb += entry.present[source.name].eq(incoming[source] & may_write)
            dropped = incoming[source] & ~may_write
            lost_now.append(dropped)
            with m.If(self.clear):
                m.d.sync += [counts[source].eq(0), has_loss[source].eq(0)]
            with m.Elif(dropped):
                m.d.sync += [counts[source].eq(saturating_increment(counts[source])),
                             has_loss[source].eq(1)]
            with m.Elif(flushing[source]):
                m.d.sync += [counts[source].eq(0), has_loss[source].eq(0)]

        written = Signal()
        m.d.comb += written.eq(fifo.w_rdy & ((entry.present.as_value() != 0) | entry.loss_valid))
        m.d.comb += fifo.w_en.eq(written)

        # Status: events accepted, events lost, FIFO high-water mark.
        # A cycle's counts (and FIFO level) are taken one cycle later, from flip-flops, so the
        # event decisions and the 32-bit adders are not one path; `clear` discards those of
        # its own cycle and of the one before, exactly as if they were taken at once.
        accepted = Signal(range(len(sources) + 1))
        dropped_now = Signal(range(len(sources) + 1))
        level = Signal.like(self.fifo_max)   # the FIFO's level (an adder's output), registered
        with m.If(self.clear):
            m.d.sync += [self.events.eq(0), self.lost.eq(0), self.fifo_max.eq(0),
                         accepted.eq(0), dropped_now.eq(0), level.eq(0)]
        with m.Else():
            m.d.sync += [
                accepted.eq(sum(entry.present[source.name] for source in sources)),
                dropped_now.eq(sum(lost_now)),
                self.events.eq(self.events + accepted),
                self.lost.eq(self.lost + dropped_now),
                level.eq(fifo.level),
            ]
            with m.If(level > self.fifo_max):
                m.d.sync += self.fifo_max.eq(level)
        return m
