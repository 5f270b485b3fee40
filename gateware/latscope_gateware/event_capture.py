"""Time-stamper, merge, FIFO and loss accounting."""

import operator
from functools import reduce

from amaranth.hdl import *
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from latscope.protocol import LOSS_COUNT_BITS, STAMP_BITS, Source

__all__ = ["entry_layout", "EventCapture", "EntryFifo", "FreeRunningCounter"]


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
    FIFO, which the encoder drains. Events are registered (with their stamp) before they are
    taken, so they are taken in the cycle after they come; the status counters (``events``,
    ``lost``, ``fifo_max``) count a cycle's events three cycles after it (registered for
    timing).

    The FIFO (:class:`EntryFifo`) holds ``fifo_depth`` entries, like a ``SyncFIFOBuffered`` of
    that depth, and says whether it has room from a flip-flop; an entry reaches ``entries``
    four cycles after the cycle it was taken in, five after its events came (the stamp is that
    of the events' cycle, so this latency shows nowhere in the stream).

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
        m.submodules.fifo = fifo = EntryFifo(self._layout.size, self._fifo_depth)
        m.submodules.counter = counter = FreeRunningCounter(STAMP_BITS)
        m.d.comb += self.now.eq(counter.value)

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
        # A cycle's events are registered with that cycle's count before anything else looks
        # at them, so the front ends' and the enable's paths end here; the stamp is still the
        # count of the cycle the event came in.
        incoming = {source: Signal(name=f"in_{source.name.lower()}") for source in sources}
        values = Signal.like(entry.value)
        now = Signal.like(self.now)
        half = Signal(len(sources))
        m.d.sync += [
            values.eq(Cat(ports[source].payload for source in sources)),
            now.eq(self.now),
        ]
        m.d.comb += entry.value.eq(values)
        for source in sources:
            m.d.sync += incoming[source].eq(ports[source].valid & self.enable)
        if self._stamp_shift:
            m.d.sync += half.eq(self.half)
            # The entry's half bit is 1 only if every event in it came in the later half.
            late = Const(1)
            for index, source in enumerate(sources):
                late = late & (~entry.present[source.name] | half[index])
            m.d.comb += entry.stamp.eq(Cat(late & (entry.present.as_value() != 0), now))
        else:
            m.d.comb += entry.stamp.eq(now)

        # The source whose loss is reported in this cycle's entry: the lowest with a count,
        # `picked` in the cycle before (a flip-flop per source, set from the next loss flags).
        # Everything that decides which events may be written comes from flip-flops (the loss
        # flags and the FIFO's room), so only the events themselves are late in the cycle.
        picked = {source: Signal(name=f"picked_{source.name.lower()}") for source in sources}
        flushing = {source: Signal(name=f"flush_{source.name.lower()}") for source in sources}
        for source in sources:
            m.d.comb += flushing[source].eq(fifo.w_rdy & picked[source])
        # At most one source flushes: its fields, as an AND-OR rather than a priority mux.
        def selected(values):
            return reduce(operator.or_, [Mux(flushing[source], value, 0)
                                         for source, value in values])

        m.d.comb += [
            entry.loss_valid.eq(Cat(flushing[source] for source in sources).any()),
            entry.loss_source.eq(selected((source, Const(source, 4)) for source in sources)),
            entry.loss_count.eq(selected((source, counts[source]) for source in sources)),
        ]

        def saturating_increment(count):
            return Mux(count.all(), count, count + 1)

        dropped = {}
        has_loss_next = {}
        for source in sources:
            # An event may go into the FIFO only if its source has no unreported loss, or if
            # that loss is reported in the same entry (ahead of it).
            may_write = Signal(name=f"may_write_{source.name.lower()}")
            m.d.comb += may_write.eq(fifo.w_rdy & (~has_loss[source] | flushing[source]))
            m.d.comb += entry.present[source.name].eq(incoming[source] & may_write)
            dropped[source] = Signal(name=f"dropped_{source.name.lower()}")
            m.d.comb += dropped[source].eq(incoming[source] & ~may_write)
            has_loss_next[source] = Signal(name=f"has_lost_next_{source.name.lower()}")
            m.d.comb += has_loss_next[source].eq(
                ~self.clear & (dropped[source] | (has_loss[source] & ~flushing[source])))
            m.d.sync += has_loss[source].eq(has_loss_next[source])
            with m.If(self.clear):
                m.d.sync += counts[source].eq(0)
            with m.Elif(dropped[source]):
                m.d.sync += counts[source].eq(saturating_increment(counts[source]))
            with m.Elif(flushing[source]):
                m.d.sync += counts[source].eq(0)
        for index, source in enumerate(sources):
            lower = Cat(has_loss_next[other] for other in sources[:index])
            m.d.sync += picked[source].eq(has_loss_next[source] & ~lower.any()
                                          if index else has_loss_next[source])

        any_loss = Cat(has_loss[source] for source in sources).any()
        m.d.comb += fifo.w_en.eq(fifo.w_rdy & ((entry.present.as_value() != 0) | any_loss))

        # Status: events accepted, events lost, FIFO high-water mark.
        # A cycle's accepted and dropped events are registered as they are, counted in the
        # next cycle and added in the one after, so the event decisions, the bit counts and
        # the 32-bit adders are three separate paths; `clear` discards the counts of its own
        # cycle and of the one before, exactly as if they were taken at once.
        accepted_bits = Signal(len(sources))
        dropped_bits = Signal(len(sources))
        cleared = Signal()               # `clear` was high in the cycle before
        accepted = Signal(range(len(sources) + 1))
        dropped_now = Signal(range(len(sources) + 1))
        level = Signal.like(self.fifo_max)   # the FIFO's level (an adder's output), registered
        m.d.sync += [
            accepted_bits.eq(entry.present.as_value()),
            dropped_bits.eq(Cat(dropped[source] for source in sources)),
            cleared.eq(self.clear),
        ]
        with m.If(self.clear):
            m.d.sync += [self.events.eq(0), self.lost.eq(0), self.fifo_max.eq(0),
                         accepted.eq(0), dropped_now.eq(0), level.eq(0)]
        with m.Else():
            m.d.sync += [
                accepted.eq(Mux(cleared, 0, sum(accepted_bits))),
                dropped_now.eq(Mux(cleared, 0, sum(dropped_bits))),
                self.events.eq(self.events + accepted),
                self.lost.eq(self.lost + dropped_now),
                level.eq(fifo.level),
            ]
            with m.If(level > self.fifo_max):
                m.d.sync += self.fifo_max.eq(level)
        return m


class FreeRunningCounter(wiring.Component):
    """``value`` counts clock cycles from 0 (wrapping at ``2 ** width``), exactly, without a
    ``width``-bit carry chain: the low and the high half count separately, and the high half
    steps in the cycle after the low half was all ones minus one, which a flip-flop
    remembers, i.e. in the very cycle the low half wraps to 0."""

    def __init__(self, width):
        self._width = width
        super().__init__({"value": Out(width)})

    def elaborate(self, platform):
        m = Module()
        low_width = self._width // 2
        low = Signal(low_width)
        high = Signal(self._width - low_width)
        low_wraps = Signal()       # `low` is all ones: the high half steps at this clock edge
        m.d.sync += [low.eq(low + 1), low_wraps.eq(low == (1 << low_width) - 2)]
        with m.If(low_wraps):
            m.d.sync += high.eq(high + 1)
        m.d.comb += self.value.eq(Cat(low, high))
        return m


class EntryFifo(wiring.Component):
    """The capture's FIFO: ``depth`` entries in block RAM, with registers on both sides.

    Same ports, capacity and room as ``amaranth.lib.fifo.SyncFIFOBuffered(width, depth)``:
    ``w_rdy`` is 0 when ``depth`` entries are held (or, for a cycle or two, one or two fewer,
    while they are on their way out of the block RAM), ``level`` counts the entries held.
    What differs is latency, for timing: a write is registered on its way into the block RAM,
    so the logic that decides it drives flip-flops only, not the block RAMs' write enables and
    the pointers; and the block RAM's output goes into a register of its own before ``r_data``
    (an ECP5 block RAM takes about 6 ns to show its data). An entry written in cycle *c* is
    on ``r_data`` from *c* + 4 at the earliest (*c* + 2 for ``SyncFIFOBuffered``); ``w_rdy``
    comes from a flip-flop.
    """

    def __init__(self, width, depth):
        if depth < 3:
            raise ValueError(f"depth must be at least 3, not {depth!r}")
        self._width = width
        self._depth = depth
        super().__init__({
            "w_data": In(width),
            "w_en": In(1),
            "w_rdy": Out(1, init=1),
            "r_data": Out(width),
            "r_en": In(1),
            "r_rdy": Out(1),
            "level": Out(range(depth + 1)),
        })

    def elaborate(self, platform):
        m = Module()
        # The block RAM holds all but two: one in its output latch, one in `r_data`.
        capacity = self._depth - 2
        rows = 1 << (capacity - 1).bit_length() if capacity > 1 else 2
        m.submodules.storage = storage = memory.Memory(shape=self._width, depth=rows, init=[])
        write = storage.write_port()
        read = storage.read_port(domain="sync")
        produce = Signal(range(rows))              # pointers wrap with the power-of-two rows
        consume = Signal(range(rows))

        # The write of this cycle, registered: it reaches the block RAM in the next cycle.
        pending = Signal()
        pending_data = Signal(self._width)
        do_write = self.w_en & self.w_rdy
        m.d.sync += [pending.eq(do_write), pending_data.eq(self.w_data)]
        m.d.comb += [write.addr.eq(produce), write.data.eq(pending_data), write.en.eq(pending)]
        with m.If(pending):
            m.d.sync += produce.eq(produce + 1)

        # Read side: the block RAM's output (`latched`: it holds an entry not yet moved on;
        # the read port keeps its data while not enabled) moves into `r_data` when that is
        # free or being read, and a new read is started when the latch is free or moving.
        stored = Signal(range(capacity + 1))       # entries in block RAM, not yet read out
        latched = Signal()
        move = Signal()
        do_read = Signal()
        m.d.comb += [
            move.eq(latched & (~self.r_rdy | self.r_en)),
            do_read.eq((stored != 0) & (~latched | move)),
            read.addr.eq(consume),
            read.en.eq(do_read),
        ]
        with m.If(do_read):
            m.d.sync += consume.eq(consume + 1)
        m.d.sync += [
            latched.eq(do_read | (latched & ~move)),
            self.r_rdy.eq(move | (self.r_rdy & ~self.r_en)),
            stored.eq(stored + pending - do_read),
        ]
        # The data register needs no reset, and without one there is a term less in front of
        # it: it takes the block RAM's output, which an ECP5 shows about 6 ns after the clock.
        data = Signal(self._width, reset_less=True)
        m.d.comb += self.r_data.eq(data)
        with m.If(move):
            m.d.sync += data.eq(read.data)

        # Room: the entries of block RAM and the pending write (`stored + pending`) after this
        # cycle's write and read must stay below `capacity`. The compares are of flip-flops,
        # so `w_en` only selects among them.
        held = stored + pending                    # entries bound for the block RAM
        one_below = Signal()                       # held == capacity - 1
        m.d.comb += one_below.eq(Mux(pending, stored == capacity - 2, stored == capacity - 1))
        with m.If(do_write & ~do_read):
            m.d.sync += self.w_rdy.eq(~one_below)
        with m.Elif(do_read & ~do_write):
            m.d.sync += self.w_rdy.eq(1)
        m.d.comb += self.level.eq(held + latched + self.r_rdy)
        return m
