"""Time-stamper, merge, FIFO and loss accounting, across the capture/link clock boundary.

The write side (:class:`EntryWriter`: stamps, entries, loss counts) runs in the capture clock
domain, the read side (the encoder's end of :class:`CaptureFifo`, and :class:`EntryStatus`)
in the link domain; :class:`EventCapture` puts them together around the asynchronous FIFO
(:class:`CaptureFifo`).
Loss counts are kept where events are dropped (the write side) and cross the boundary inside
FIFO entries (their LOSS fields), so they stay exact whatever the two clocks are; STATUS's
totals are counted there too and cross as consistent snapshots (:class:`StatusSnapshot`)."""

import operator
from functools import reduce

from amaranth.hdl import *
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

from latscope_defs.protocol import LOSS_COUNT_BITS, STAMP_BITS, Source

from .arithmetic import carry_select_add

__all__ = [
    "entry_layout",
    "EventCapture",
    "EntryWriter",
    "CaptureFifo",
    "WriteStatus",
    "StatusSnapshot",
    "FreeRunningCounter",
]


def _gray(value):
    return value ^ (value >> 1)


def _from_gray(gray):
    """Gray code to binary: bit i is the XOR of the Gray bits from i up."""
    return Cat(gray[i:].xor() for i in range(len(gray)))


def entry_layout(sources):
    """Layout of one FIFO entry: everything that happened in one cycle.

    ``sources`` maps :class:`Source` to value width. All events of a cycle share one entry and
    therefore one stamp; at most one LOSS record rides along, and it is emitted before the
    events of that entry.

    An IRQ event's value is its level (``value.IRQ``) and, where it is wider (an
    :class:`~latscope_defs.protocol.IrqValue`: the trigger's firing), the rest of it
    (``triggered`` first), which shares ``detail`` with the LOSS record's count:
    :class:`EntryWriter` never puts a LOSS record and a triggered IRQ edge in one entry, and
    an IRQ edge's rest is 0 in an entry with a LOSS record (and of an untriggered edge, the
    periodic generator's, the rest is 0). So the trigger's delay costs the
    FIFO no width (the iCE40 boards' block RAMs are all but used)."""
    irq_rest = sources.get(Source.IRQ, 1) - 1
    detail = {"loss_count": LOSS_COUNT_BITS} | ({"irq": irq_rest} if irq_rest else {})
    if irq_rest > LOSS_COUNT_BITS:
        raise ValueError(f"an IRQ value of {irq_rest + 1} bits does not fit in an entry")
    return data.StructLayout(
        {
            "stamp": STAMP_BITS,
            "present": data.StructLayout({source.name: 1 for source in sources}),
            "value": data.StructLayout(
                {
                    source.name: 1 if source == Source.IRQ else width
                    for source, width in sources.items()
                }
            ),
            "loss_valid": 1,
            "loss_source": 4,
            "detail": data.UnionLayout(detail),
        }
    )


class EventCapture(wiring.Component):
    """Stamps events with one free-running counter and queues them in cycle order, for a
    reader in another clock domain.

    Parameters
    ----------
    sources : dict of :class:`Source` to int
        The event sources and their value widths. For each, the component has an input port
        named after the source in lower case (``marker``, ``irq``, ``edge0``...) of signature
        ``stream.Signature(width, always_ready=True)``.
    front_end_losses : dict of :class:`Source` to int
        Sources whose front ends lose events themselves, and the most they lose in a cycle:
        an input port ``<source>_lost`` each, see :class:`EntryWriter`.
    fifo_depth : int, a power of two
        Entries of the block-RAM FIFO (:class:`CaptureFifo`). An entry holds one cycle's
        events.
    stamp_shift : 0, 1 or 2
        See :class:`EntryWriter`.
    write_domain, read_domain : str
        The capture clock domain (events, ``enable``, ``clear``, ``now``, ``phase``) and the
        link clock domain (``entries`` and the status counters). They may be the same domain
        (a single-clock build): then the FIFO is synchronous and the counters are read
        directly, with no synchronizer.

    Behaviour
    ---------
    See :class:`EntryWriter` for stamps, entries and loss accounting, :class:`CaptureFifo` for
    the FIFO, :class:`WriteStatus` for the status counters (``events``, ``lost``,
    ``fifo_max``: counted on the write side as events are written or dropped, cleared by
    ``clear``), which reach the read side through :class:`StatusSnapshot`.
    """

    def __init__(
        self,
        sources,
        *,
        front_end_losses=None,
        fifo_depth=512,
        stamp_shift=0,
        write_domain="sync",
        read_domain="sync",
    ):
        self._writer = EntryWriter(
            sources, front_end_losses=front_end_losses, stamp_shift=stamp_shift
        )
        self._layout = self._writer.layout
        self._fifo = CaptureFifo(
            self._layout.size, fifo_depth, w_domain=write_domain, r_domain=read_domain
        )
        self._status = WriteStatus(
            len(self._writer.sources),
            fifo_depth,
            front_end_lost=self._writer.front_end_lost.shape(),
        )
        self._status_layout = data.StructLayout(
            {"events": 32, "lost": 32, "fifo_max": range(fifo_depth + 1)}
        )
        self._write_domain = write_domain
        self._read_domain = read_domain
        members = {
            "enable": In(1),
            "clear": In(1),
            "now": Out(STAMP_BITS),
            "entries": Out(stream.Signature(self._layout)),
            # status counters (since the last `clear`), in the read domain
            "events": Out(32),
            "lost": Out(32),
            "fifo_max": Out(range(fifo_depth + 1)),
        }
        members |= self.event_ports()
        if stamp_shift:
            members["phase"] = In(self._writer.phase.shape())
        super().__init__(members)

    @property
    def layout(self):
        return self._layout

    def event_ports(self):
        return self._writer.event_ports()

    def loss_port_names(self):
        return self._writer.loss_port_names()

    def elaborate(self, platform):
        m = Module()
        writer, fifo, status = self._writer, self._fifo, self._status
        m.submodules.writer = DomainRenamer(self._write_domain)(writer)
        m.submodules.fifo = fifo
        m.submodules.status = DomainRenamer(self._write_domain)(status)
        same = self._write_domain == self._read_domain
        snapshot = StatusSnapshot(
            self._status_layout.size, i_domain="sync" if same else self._write_domain
        )
        m.submodules.status_snapshot = (
            DomainRenamer(self._read_domain)(snapshot) if self._read_domain != "sync" else snapshot
        )
        taken = data.View(self._status_layout, snapshot.o)
        for source in writer.sources:
            name = source.name.lower()
            wiring.connect(m, wiring.flipped(getattr(self, name)), getattr(writer, name))
        for name in writer.loss_port_names():
            m.d.comb += getattr(writer, name).eq(getattr(self, name))
        if "phase" in self.signature.members:
            m.d.comb += writer.phase.eq(self.phase)
        m.d.comb += [
            writer.enable.eq(self.enable),
            writer.clear.eq(self.clear),
            self.now.eq(writer.now),
            fifo.w_data.eq(writer.w_data),
            fifo.w_en.eq(writer.w_en),
            writer.w_rdy.eq(fifo.w_rdy),
            # The reader's end: entries out.
            self.entries.payload.eq(fifo.entries.payload),
            self.entries.valid.eq(fifo.entries.valid),
            fifo.entries.ready.eq(self.entries.ready),
            # STATUS: counted where events are written and dropped, snapshots to the reader.
            status.accepted.eq(writer.w_data.present.as_value()),  # only ever written
            status.dropped.eq(writer.dropped),
            status.front_end_lost.eq(writer.front_end_lost),
            status.level.eq(fifo.w_level),
            status.clear.eq(self.clear),
            snapshot.i.eq(Cat(status.events, status.lost, status.fifo_max)),
            self.events.eq(taken.events),
            self.lost.eq(taken.lost),
            self.fifo_max.eq(taken.fifo_max),
        ]
        return m


class EntryWriter(wiring.Component):
    """The capture side: stamps events with one free-running counter and writes them, a
    cycle's events per entry, to a FIFO in cycle order, counting what it cannot write.

    Parameters
    ----------
    sources : dict of :class:`Source` to int
        As :class:`EventCapture`'s: an input port per source.

    Behaviour
    ---------
    ``now`` counts cycles from reset (48 bits, wrapping). An event whose ``valid`` is high in
    cycle *c* while ``enable`` is high is stamped with ``now`` of cycle *c*; every event of
    that cycle goes into one FIFO entry, so simultaneous events share their stamp and entries
    are in cycle order by construction (no comparators needed).

    Nothing is dropped silently. When the FIFO cannot take an entry, each source that had an
    event counts it as lost. In a later cycle with room and no triggered IRQ edge (whose
    value beyond its level shares the LOSS count's field, :func:`entry_layout`), the
    lowest-numbered source with a non-zero count gets a LOSS record (count, source) in that
    cycle's entry, ahead of that cycle's events. While a source's count waits its turn, its
    new events are counted too, so a LOSS record always means "this many events of this
    source were lost between its previous record and this one". Counts saturate at 2**32 - 1
    (about 43 s of a 100 MHz source lost with no room at all).

    A source named in ``front_end_losses`` (its front end's most per cycle) has a port
    ``<source>_lost``: events its front end lost in this cycle, taken with ``enable`` as
    events are and counted with its FIFO losses, so its LOSS records carry both. Its front
    end must report a loss no later than the cycle of the next event it delivers (a loss and
    an event of one cycle: the loss is the older), so the LOSS record goes ahead of that event.

    ``clear`` (one cycle, e.g. on START) zeroes the loss counts; it does not touch the FIFO,
    which the encoder drains. Events are registered (with their stamp) before they are taken,
    so they are taken in the cycle after they come.

    The FIFO side: ``w_data`` is written when ``w_en`` is high (only ever with ``w_rdy``),
    ``w_rdy`` says the FIFO has room for this cycle's entry (:class:`CaptureFifo` gives it
    from a flip-flop). The stamp is that of the events' cycle, so the FIFO's latency shows
    nowhere in the stream.

    With ``stamp_shift`` 1 or 2 (front ends with 2 or 4 samples a cycle, see
    :mod:`.ddr_edges`) the stamp counts 1/2 or 1/4 cycles: ``now << stamp_shift | phase``,
    where ``phase`` (``stamp_shift`` bits per source, in source order, read with ``valid``)
    says in which sample of its cycle an event showed. Events of one cycle share their
    entry's stamp, which takes the earliest of their phases (a source without a phase, the
    IRQ output or the bus, gives 0).
    """

    def __init__(self, sources, *, front_end_losses=None, stamp_shift=0):
        if stamp_shift not in (0, 1, 2):
            raise ValueError(f"stamp_shift must be 0, 1 or 2, not {stamp_shift!r}")
        self._sources = dict(sources)
        self._front_end_losses = dict(front_end_losses or {})
        if not set(self._front_end_losses) <= set(self._sources):
            raise ValueError("front_end_losses names a source that is not among sources")
        self._stamp_shift = stamp_shift
        self._layout = entry_layout(self._sources)
        members = {
            "enable": In(1),
            "clear": In(1),
            "now": Out(STAMP_BITS),
            "w_data": Out(self._layout),
            "w_en": Out(1),
            "w_rdy": In(1),
            "dropped": Out(len(self._sources)),  # per source: this cycle's event dropped
            # the front ends' losses of a cycle (enabled), the cycle after: a total for STATUS
            "front_end_lost": Out(range(sum(self._front_end_losses.values()) + 1)),
        }
        members |= self.event_ports()
        if stamp_shift:
            members["phase"] = In(data.ArrayLayout(stamp_shift, len(self._sources)))
        super().__init__(members)

    @property
    def layout(self):
        return self._layout

    @property
    def sources(self):
        return self._sources

    def event_ports(self):
        """The input members for the sources' events and their front ends' losses."""
        ports = {
            source.name.lower(): In(stream.Signature(width, always_ready=True))
            for source, width in self._sources.items()
        }
        for name, (_, most) in zip(self.loss_port_names(), self._front_end_losses.items()):
            ports[name] = In(range(most + 1))
        return ports

    def loss_port_names(self):
        """The ``<source>_lost`` ports, in the order of ``front_end_losses``."""
        return [f"{source.name.lower()}_lost" for source in self._front_end_losses]

    def elaborate(self, platform):
        m = Module()
        self._stamp_counter(m)
        entry = Signal(self._layout)
        m.d.comb += [
            self.w_data.eq(entry),  # w_data, w_en and w_rdy are the FIFO's write port
        ]
        incoming, irq_rest = self._take_events(m, entry)
        front_lost = self._take_front_end_losses(m)
        losses = _Losses(self._sources)
        # The FIFO has room for this cycle's entry, a bit per source.
        room = self.w_rdy.replicate(len(self._sources))
        triggered = self._report_loss(m, entry, losses, room, incoming, irq_rest)
        dropped, has_loss_next = self._admit_events(m, entry, incoming, losses, room, front_lost)
        self._count_losses(m, losses, dropped, front_lost)
        self._pick_next_loss(m, losses, has_loss_next)
        m.d.comb += self.dropped.eq(dropped)
        # An entry holds events or a LOSS record (which a triggered IRQ edge makes wait,
        # _report_loss): an empty entry is never written. (A loss is reported wherever there
        # is one, room and no such edge: `picked` is never empty then.)
        m.d.comb += self.w_en.eq(
            self.w_rdy & ((entry.present.as_value() != 0) | (losses.has_loss.any() & ~triggered))
        )
        return m

    def _stamp_counter(self, m):
        """``now``: the free-running stamp counter."""
        m.submodules.counter = counter = FreeRunningCounter(STAMP_BITS)
        m.d.comb += self.now.eq(counter.value)

    def _take_events(self, m, entry):
        """A cycle's events are registered with that cycle's count before anything else looks
        at them, so the front ends' and the enable's paths end here; the stamp is still the
        count of the cycle the event came in. Their values and stamp go into ``entry``;
        returns the registered valid bits (with ``enable``), a bit per source, and the rest
        of the IRQ event's value beyond its level (None where it has none), registered too,
        for ``detail`` (:meth:`_report_loss`)."""
        sources = list(self._sources)
        ports = {source: getattr(self, source.name.lower()) for source in sources}
        incoming = Signal(len(sources))
        values = Signal.like(entry.value)
        now = Signal.like(self.now)
        phase = Signal.like(self.phase) if self._stamp_shift else None
        m.d.sync += [
            # (Of an IRQ event its level: the rest goes to `irq_rest`.)
            values.eq(
                Cat(ports[source].payload[: len(entry.value[source.name])] for source in sources)
            ),
            now.eq(self.now),
            incoming.eq(
                Cat(ports[source].valid for source in sources) & self.enable.replicate(len(sources))
            ),
        ]
        irq_rest = None
        if "irq" in self._layout["detail"].shape.members:
            irq_rest = Signal(self._layout["detail"].shape.members["irq"], name="irq_rest")
            m.d.sync += irq_rest.eq(ports[Source.IRQ].payload[1:])
        m.d.comb += entry.value.eq(values)
        if self._stamp_shift:
            m.d.sync += phase.eq(self.phase)
            m.d.comb += entry.stamp.eq(Cat(self._earliest(m, entry, phase), now))
        else:
            m.d.comb += entry.stamp.eq(now)
        return incoming, irq_rest

    def _take_front_end_losses(self, m):
        """The front ends' losses of a cycle, registered with ``enable`` as events are (so
        with the events of their cycle); also their total, ``front_end_lost``. Returns them
        by source, 0 for a source whose front end loses nothing."""
        lost = {source: C(0, 1) for source in self._sources}
        for name, source in zip(self.loss_port_names(), self._front_end_losses):
            port = getattr(self, name)
            lost[source] = Signal.like(port, name=f"{name}_taken")
            m.d.sync += lost[source].eq(Mux(self.enable, port, 0))
        m.d.comb += self.front_end_lost.eq(sum(lost[source] for source in self._front_end_losses))
        return lost

    def _report_loss(self, m, entry, losses, room, incoming, irq_rest):
        """The LOSS fields of this cycle's entry: the source ``picked`` in the cycle before
        (the lowest with a count), if the FIFO has room (``flushing``) and no triggered IRQ
        edge came, whose value beyond its level (``irq_rest``, ``triggered`` its first bit)
        then goes into ``detail`` (entry_layout). A loss that waits a cycle for that loses
        nothing (the waiting source's events are counted) and never waits long: a trigger's
        edges leave two free cycles in every four at least (:class:`.irq_trigger.IrqTrigger`),
        and the periodic generator's edges, untriggered, share an entry with a LOSS record.
        Returns whether such an edge came (from flip-flops)."""
        flushing = losses.flushing
        # Both from flip-flops: the IRQ event's valid and its rest, registered.
        triggered = C(0, 1)
        if irq_rest is not None:
            triggered = incoming[list(self._sources).index(Source.IRQ)] & irq_rest[0]
        m.d.comb += flushing.eq(room & losses.picked & (~triggered).replicate(len(self._sources)))

        # At most one source flushes: its fields, as an AND-OR rather than a priority mux.
        def selected(values):
            return reduce(
                operator.or_, [Mux(flushing[index], value, 0) for index, value in enumerate(values)]
            )

        m.d.comb += [
            entry.loss_valid.eq(flushing.any()),
            entry.loss_source.eq(selected(Const(source, 4) for source in self._sources)),
        ]
        loss_count = selected(losses.counts[source] for source in self._sources)
        if irq_rest is None:
            m.d.comb += entry.detail.loss_count.eq(loss_count)
        else:
            # One more term of the AND-OR: never with a flushing one.
            m.d.comb += entry.detail.eq(loss_count | Mux(triggered, irq_rest, 0))
        return triggered

    def _admit_events(self, m, entry, incoming, losses, room, front_lost):
        """Which of the incoming events go into the entry and which are dropped: an event may
        go into the FIFO only if its source has no unreported loss, or if that loss is
        reported in the same entry (ahead of it). Returns the dropped events and the loss
        flags of the next cycle (a front end's loss makes one too), a bit per source each."""
        count = len(self._sources)
        has_loss, flushing = losses.has_loss, losses.flushing
        may_write = Signal(count)
        dropped = Signal(count)
        has_loss_next = Signal(count)
        m.d.comb += [
            may_write.eq(room & (~has_loss | flushing)),
            entry.present.as_value().eq(incoming & may_write),
            dropped.eq(incoming & ~may_write),
            has_loss_next.eq(
                ~self.clear.replicate(count)
                & (
                    dropped
                    | (has_loss & ~flushing)
                    | Cat(lost != 0 for lost in front_lost.values())
                )
            ),
        ]
        m.d.sync += has_loss.eq(has_loss_next)
        return dropped, has_loss_next

    def _count_losses(self, m, losses, dropped, front_lost):
        """Each source's count of lost events, saturating: zeroed by ``clear``, and when
        reported (flushed) restarted from its front end's losses of that cycle; else the
        event dropped (one, decided late in the cycle) and its front end's losses (from a
        flip-flop) added. Every add is of flip-flops only: the late ``dropped`` picks a sum."""
        ones = (1 << LOSS_COUNT_BITS) - 1
        for index, source in enumerate(self._sources):
            count, full = losses.counts[source], losses.saturated[source]
            front = front_lost[source]
            if source in self._front_end_losses:
                # Steps of several: a carry out of the count saturates it (a count of all
                # ones carries out at its next step), no compare needed.
                sums = [
                    carry_select_add(
                        count, step, width=LOSS_COUNT_BITS + 1, split=LOSS_COUNT_BITS // 2
                    )
                    for step in (front, front + 1)
                ]
                total = Mux(dropped[index], sums[1], sums[0])
                saturating = total[:LOSS_COUNT_BITS] | total[LOSS_COUNT_BITS].replicate(
                    LOSS_COUNT_BITS
                )
                with m.If(self.clear):
                    m.d.sync += count.eq(0)
                with m.Elif(losses.flushing[index]):
                    m.d.sync += count.eq(front)
                with m.Elif(dropped[index] | (front != 0)):
                    m.d.sync += count.eq(saturating)
                continue
            # One at a time: the saturation flag is set as the count steps to all ones.
            step = carry_select_add(
                count, Const(1, LOSS_COUNT_BITS), width=LOSS_COUNT_BITS, split=LOSS_COUNT_BITS // 2
            )
            with m.If(self.clear):
                m.d.sync += [count.eq(0), full.eq(0)]
            with m.Elif(dropped[index]):
                m.d.sync += [
                    count.eq(Mux(full, count, step)),
                    full.eq(full | (count == ones - 1)),
                ]
            with m.Elif(losses.flushing[index]):
                m.d.sync += [count.eq(0), full.eq(0)]

    def _pick_next_loss(self, m, losses, has_loss_next):
        """``picked``: the lowest source with a loss in the next cycle, decided a cycle ahead
        from the next loss flags, so that what decides which events may be written comes
        from flip-flops."""
        m.d.sync += losses.picked.eq(
            Cat(
                has_loss_next[index] & ~has_loss_next[:index].any() if index else has_loss_next[0]
                for index in range(len(self._sources))
            )
        )

    def _earliest(self, m, entry, phase):
        """The earliest phase of the events present in ``entry`` (0 for none): phase *p* is
        below the minimum unless some present source came at *p* or earlier, so the minimum
        is the count of thresholds no source reached (a few LUTs, no comparator chain)."""
        sources = list(self._sources)
        reached = []
        for threshold in range((1 << self._stamp_shift) - 1):
            reached.append(
                Cat(
                    entry.present[source.name] & (phase[index] <= threshold)
                    for index, source in enumerate(sources)
                ).any()
            )
        earliest = Signal(self._stamp_shift)
        # `reached` is a thermometer code (reaching p means reaching every later threshold).
        value = Const((1 << self._stamp_shift) - 1, self._stamp_shift)
        for threshold in reversed(range(len(reached))):
            value = Mux(reached[threshold], threshold, value)
        m.d.comb += earliest.eq(Mux(entry.present.as_value() != 0, value, 0))
        return earliest


class _Losses:
    """:class:`EntryWriter`'s loss accounting: a count per source and the flags that decide
    which count is reported next. The per-source flags are vectors, bit i for source i: the
    same logic bit for bit as one signal per source, but a simulator that evaluates every
    signal every cycle (Verilator) handles each vector in one operation."""

    def __init__(self, sources):
        # The counts and their saturation flags take no domain reset: `clear` zeroes them at
        # every START, before a capture can count anything, and they are 0 from power-up.
        # With the reset, its high-fan-out net ran into each count's enable (the HX8K's
        # slowest capture path at 144 MHz: 118.99 MHz, seed 1).
        self.counts = {
            source: Signal(LOSS_COUNT_BITS, name=f"lost_{source.name.lower()}", reset_less=True)
            for source in sources
        }
        # Whether a count is all ones (saturated) is kept in a flip-flop beside it, set as it
        # steps there, so the wide compare feeds that flip-flop only and not the count's
        # enable (the path that limited the HX8K's capture clock to 99.8 MHz). The increment
        # is a carry-select add: a 32-bit carry chain limited the iCEBreaker's capture clock
        # to 51.2 MHz once the IRQ generator had left the capture domain.
        self.saturated = {
            source: Signal(name=f"lost_saturated_{source.name.lower()}", reset_less=True)
            for source in sources
        }
        # `has_loss[i]` is `counts[i] != 0`, kept in a flip-flop so that the wide compares are
        # off the path that picks the reported source and the events that may be written.
        self.has_loss = Signal(len(sources))
        # The source whose loss is reported in this cycle's entry: the lowest with a count,
        # `picked` in the cycle before (a flip-flop per source, set from the next loss flags),
        # and `flushing` when the FIFO has room for it. Everything that decides which events
        # may be written comes from flip-flops (the loss flags and the FIFO's room), so only
        # the events themselves are late in the cycle.
        self.picked = Signal(len(sources))
        self.flushing = Signal(len(sources))


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
        low_wraps = Signal()  # `low` is all ones: the high half steps at this clock edge
        m.d.sync += [low.eq(low + 1), low_wraps.eq(low == (1 << low_width) - 2)]
        with m.If(low_wraps):
            m.d.sync += high.eq(high + 1)
        m.d.comb += self.value.eq(Cat(low, high))
        return m


class CaptureFifo(wiring.Component):
    """The capture's FIFO across the clock boundary: ``depth`` entries (a power of two) in
    block RAM, written in ``w_domain`` (the capture clock), read in ``r_domain`` (the link).

    It is an asynchronous FIFO of the usual kind (Gray-coded pointers, each passed to the
    other side through a two-flip-flop synchronizer, as in ``amaranth.lib.fifo.AsyncFIFO``),
    laid out so that every path in the fast write domain runs from flip-flops to flip-flops
    through one short step: AsyncFIFO gates each write with a full flag compared from the
    synchronized pointer in the same cycle and increments the pointer behind it, a path that
    limited the iCE40 HX8K's capture clock to 91.5 MHz (nextpnr, seed 1). Here:

    * Write side: a write is registered on its way into the block RAM, so the logic that
      decides it drives flip-flops only; the write pointer counts the registered writes and
      is Gray-coded from its own register, a cycle later. ``w_rdy`` (a flip-flop) says there
      is room: it comes from the level (write pointer minus the synchronized, decoded read
      pointer, registered), which lags by up to four writes, so it is 1 only while at least
      four entries are free. A write ``w_rdy`` allows therefore always finds room; an
      unbroken burst fills all ``depth`` entries.
    * Read side: an entry is fetched from the block RAM into the output register when the
      output is free and the synchronized write pointer says one is there (``entries`` comes
      from flip-flops). One entry every three link cycles at most: the link carries each in
      far more.
    * Frees reach the write side through the read pointer's synchronizer; entries reach the
      read side through the write pointer's, after their data is in the block RAM.
    * Both domains are reset together (the boards' power-on reset asserts both at once and
      releases each through its own synchronizer): then both pointers are 0 on both sides.

    ``w_level`` (write domain, a flip-flop): the block-RAM rows in use as the write side
    sees them, entries written and not yet fetched into the output register (the read
    pointer reaches it late, so it is never below the true count); at most ``depth``. A row
    is free again once its entry is fetched, so the FIFO holds up to ``depth + 1`` entries,
    the last in the output register.

    With one domain for both sides (``w_domain == r_domain``) the pointers are read directly,
    through a register each, with no Gray code and no synchronizers.
    """

    def __init__(self, width, depth, *, w_domain="sync", r_domain="sync"):
        if depth < 4 or depth & (depth - 1):
            raise ValueError(f"depth must be a power of two >= 4, not {depth!r}")
        self._width = width
        self._depth = depth
        self._w_domain = w_domain
        self._r_domain = r_domain
        self._synchronous = w_domain == r_domain
        super().__init__(
            {
                "w_data": In(width),
                "w_en": In(1),
                "w_rdy": Out(1, init=1),
                "entries": Out(stream.Signature(width)),
                "w_level": Out(range(depth + 1)),
            }
        )

    @property
    def depth(self):
        return self._depth

    def elaborate(self, platform):
        m = Module()
        bits = self._depth.bit_length()  # pointers: address bits and a wrap bit
        m.submodules.storage = storage = memory.Memory(
            shape=self._width, depth=self._depth, init=[]
        )
        write_port = storage.write_port(domain=self._w_domain)
        read_port = storage.read_port(domain=self._r_domain)
        write, read = m.d[self._w_domain], m.d[self._r_domain]

        r_gray = Signal(bits)  # the read pointer, Gray-coded (read domain)

        # Write side.
        pending = Signal()
        pending_data = Signal(self._width)
        w_pointer = Signal(bits)
        w_gray = Signal(bits)
        write += [
            pending.eq(self.w_en & self.w_rdy),
            pending_data.eq(self.w_data),
            w_pointer.eq(w_pointer + pending),
        ]
        if not self._synchronous:
            write += w_gray.eq(_gray(w_pointer))
        m.d.comb += [
            write_port.addr.eq(w_pointer),
            write_port.data.eq(pending_data),
            write_port.en.eq(pending),
        ]
        r_pointer = Signal(bits)
        r_pointer_w = self._pointer_seen(m, r_pointer, r_gray, self._w_domain, "r", "w")
        w_level = self.w_level
        write += [
            w_level.eq(w_pointer - r_pointer_w),
            # Not yet in `w_level` when w_rdy is used: the writes of its cycle and of
            # the three before (see above).
            self.w_rdy.eq(w_level <= self._depth - 4),
        ]

        # Read side.
        w_pointer_r = self._pointer_seen(m, w_pointer, w_gray, self._r_domain, "w", "r")
        fetched = Signal()  # the block RAM shows a fetched entry
        fetch = Signal()
        m.d.comb += [
            fetch.eq((w_pointer_r != r_pointer) & ~fetched & ~self.entries.valid),
            read_port.addr.eq(r_pointer),
            read_port.en.eq(fetch),
        ]
        read += [r_pointer.eq(r_pointer + fetch), fetched.eq(fetch)]
        if not self._synchronous:
            read += r_gray.eq(_gray(r_pointer))
        with m.If(fetched):
            read += [self.entries.payload.eq(read_port.data), self.entries.valid.eq(1)]
        with m.Elif(self.entries.ready):
            read += self.entries.valid.eq(0)
        return m

    def _pointer_seen(self, m, pointer, gray, domain, side, seen_by):
        """The ``side`` ("w"/"r") pointer as a register of the other side's ``domain``: with
        one clock read directly (no Gray code, no synchronizers), else its Gray code
        ``gray`` through a synchronizer, decoded there. The signal names (``r_pointer_w``,
        ``r_gray_w``, submodule ``r_pointer_sync``, ...) are those of the netlists the boards'
        recorded builds were made from."""
        seen = Signal(len(pointer), name=f"{side}_pointer_{seen_by}")
        if self._synchronous:
            m.d[domain] += seen.eq(pointer)
        else:
            gray_seen = Signal(len(pointer), name=f"{side}_gray_{seen_by}")
            m.submodules[f"{side}_pointer_sync"] = FFSynchronizer(gray, gray_seen, o_domain=domain)
            m.d[domain] += seen.eq(_from_gray(gray_seen))
        return seen


class WriteStatus(wiring.Component):
    """STATUS's counters, kept on the write side where events are taken and dropped:
    ``events`` (events written), ``lost`` (events dropped), ``fifo_max`` (the highest
    ``level``, the FIFO's block-RAM rows in use, :attr:`CaptureFifo.w_level`), since
    ``clear``. ``accepted`` and ``dropped`` have a bit per source for this cycle's events;
    ``front_end_lost`` is the events the front ends lost (:class:`EntryWriter`), counted in
    ``lost`` too.

    A cycle's bits are registered as they are, counted in the next cycle and added in the one
    after, so the event decisions, the bit counts and the 32-bit adders (carry-select, no
    chain longer than 17 bits) are separate paths;
    ``clear`` discards the counts of its own cycle and of the one before, as if they were
    taken at once.
    """

    def __init__(self, count, depth, *, front_end_lost=1):
        super().__init__(
            {
                "accepted": In(count),
                "dropped": In(count),
                "front_end_lost": In(front_end_lost),
                "level": In(range(depth + 1)),
                "clear": In(1),
                "events": Out(32),
                "lost": Out(32),
                "fifo_max": Out(range(depth + 1)),
            }
        )

    def elaborate(self, platform):
        m = Module()
        count = len(self.accepted)
        accepted_bits = Signal(count)
        dropped_bits = Signal(count)
        front_end_lost = Signal.like(self.front_end_lost)
        cleared = Signal()  # `clear` was high in the cycle before
        accepted = Signal(range(count + 1))
        dropped = Signal(range(count + 1 + (1 << len(front_end_lost))))
        level = Signal.like(self.level)
        m.d.sync += [
            accepted_bits.eq(self.accepted),
            dropped_bits.eq(self.dropped),
            front_end_lost.eq(self.front_end_lost),
            cleared.eq(self.clear),
            level.eq(self.level),
        ]
        # The high-water mark takes a level a cycle after comparing it: `higher` says that
        # `pending` (last cycle's level) exceeds the mark as it is when `pending` is taken,
        # i.e. `pending` itself if the level before it was being taken. So the compare ends
        # in a flip-flop and the mark's enable comes from one (a compare and a 3-LUT enable
        # into 11 flip-flops limited the HX8K at 144 MHz to 102.66 MHz, seed 2).
        pending = Signal.like(self.level)
        higher = Signal()
        m.d.sync += pending.eq(level)
        with m.If(self.clear):
            m.d.sync += [
                self.events.eq(0),
                self.lost.eq(0),
                self.fifo_max.eq(0),
                accepted.eq(0),
                dropped.eq(0),
                higher.eq(0),
            ]
        with m.Else():
            m.d.sync += [
                accepted.eq(Mux(cleared, 0, sum(accepted_bits))),
                dropped.eq(Mux(cleared, 0, sum(dropped_bits) + front_end_lost)),
                self.events.eq(carry_select_add(self.events, accepted, width=32, split=16)),
                self.lost.eq(carry_select_add(self.lost, dropped, width=32, split=16)),
            ]
            m.d.sync += higher.eq(Mux(higher, level > pending, level > self.fifo_max))
            with m.If(higher):
                m.d.sync += self.fifo_max.eq(pending)
        return m


class StatusSnapshot(wiring.Component):
    """``i`` of ``i_domain``, taken into ``o`` of ``sync`` as a consistent snapshot, again
    and again, by a request/acknowledge handshake: ``sync`` toggles a request, ``i_domain``
    sees it through a synchronizer, copies ``i`` into a register and toggles the
    acknowledge, which ``sync`` sees through a synchronizer of its own and then copies that
    register (stable since before the acknowledge left) into ``o`` and requests again.
    ``o`` is a few cycles of each clock old (two synchronizers and two registers), and all
    its fields are of the same ``i_domain`` cycle. Cheaper than Gray-coding 32-bit counters,
    which may step by more than one. With ``i_domain`` ``"sync"``, ``o`` is ``i``.
    """

    def __init__(self, shape, *, i_domain):
        self._i_domain = i_domain
        super().__init__({"i": In(shape), "o": Out(shape)})

    def elaborate(self, platform):
        m = Module()
        if self._i_domain == "sync":
            m.d.comb += self.o.eq(self.i)
            return m
        request, request_i = Signal(), Signal()
        acknowledge, acknowledge_o = Signal(), Signal()
        held = Signal(len(self.i))
        m.submodules.request_sync = FFSynchronizer(request, request_i, o_domain=self._i_domain)
        m.submodules.acknowledge_sync = FFSynchronizer(acknowledge, acknowledge_o)
        with m.If(request_i != acknowledge):
            m.d[self._i_domain] += [held.eq(self.i), acknowledge.eq(request_i)]
        with m.If(acknowledge_o == request):
            m.d.sync += [self.o.eq(held), request.eq(~request)]
        return m
