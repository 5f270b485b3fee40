"""Which event records go out as short records (protocol version 4, docs/protocol.md, "Short
records"), and their lead bytes: the encoder's part that ``protocol.StreamEncoder._short``
is in the reference encoder.

A MARKER or BUS record is short when its value repeats, or steps by one from, one of the
last ``HISTORY`` values of its source in the segment (:class:`ValueHistory`: the values of
the records sent since the segment's SYNC); an edge of ``SHORT_EDGE_SOURCES`` (an IRQ edge
of the periodic generator: value 0 or 1) is short unless its long record is shorter (an
EDGE's long record holds one bit more of delta in its lead byte). Each source's decision
(short or not, and its lead byte) is worked out from registers and the loaded entry a cycle
before the encoder prepares the record (its ``phase`` 2, while it picks the record) and
registered, so that the cycle that prepares it (``phase`` 1) only picks the chosen source's:
the comparisons are off the path into the record on offer (on the iCEBreaker's 36 MHz they
were on it, and too long). The entry's values minus one are registered while the delta is
made, so a step is an equality test like a repeat.
"""

import operator
from functools import reduce

from amaranth.hdl import *
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from latscope_defs.protocol import (
    DELTA_BITS,
    GATEWARE_VERSION,
    HISTORY,
    SHORT_EDGE_SOURCES,
    SHORT_LEADS,
    SHORT_VALUE_SOURCES,
    STAMP_BITS,
    ShortEdgeLead,
    Source,
    lead_payload_bits,
)

__all__ = ["ValueHistory", "ShortForm", "long_is_shorter"]


def long_is_shorter(width, bits):
    """Whether an event of value ``width`` bits whose delta has bit length ``bits`` takes
    fewer bytes as a long record than as a short edge record (delta all in the continuation
    bytes): the encoder's rule "short unless longer"."""
    lead = lead_payload_bits(Source.EDGE0, GATEWARE_VERSION)
    long_cont = max(0, -(-(bits + width - lead) // 7))
    short_cont = -(-bits // 7)
    return long_cont < short_cont


class ValueHistory(wiring.Component):
    """The last ``HISTORY`` values of one source in the open segment (``values[0]`` the
    newest; ``valid[i]``: there are more than i). ``push`` shifts ``value`` in; ``clear``
    (a SYNC sent, START) empties it, and wins."""

    def __init__(self, width):
        self._width = width
        super().__init__(
            {
                "value": In(width),
                "push": In(1),
                "clear": In(1),
                "values": Out(width).array(HISTORY),
                "valid": Out(HISTORY),
            }
        )

    def elaborate(self, platform):
        m = Module()
        with m.If(self.clear):
            m.d.sync += self.valid.eq(0)
        with m.Elif(self.push):
            m.d.sync += self.valid.eq(Cat(C(1, 1), self.valid[:-1]))
            m.d.sync += self.values[0].eq(self.value)
            for i in range(1, HISTORY):
                m.d.sync += self.values[i].eq(self.values[i - 1])
        return m


class ShortForm(wiring.Component):
    """For the record ``choice`` of ``entry`` (as :class:`.encoder.RecordFormat` takes them)
    with ``delta``: whether it goes out short (``short``) and its lead byte (``lead``, the
    delta bits 0). ``sent_event``: the chosen record was sent (its value joins its source's
    history); ``clear``: a SYNC was sent or START came (the histories empty).

    ``sources``: the entry's sources with their value widths, in entry order; ``value_of``:
    a function (entry, source) -> that source's event value in the entry.

    ``short`` and ``lead`` are of the inputs as they were in the previous cycle (each
    source's decision is registered; only the pick by ``choice`` is not): the encoder holds
    the entry, its delta and the histories from ``phase`` 2 to 1, and a record is sent
    (``sent_event``, ``clear``) only in ``phase`` 0 or by a START, after which it prepares a
    SYNC, which ignores them. ``enabled=False``
    builds nothing (no histories, no comparators): ``short`` stays 0 and every record is
    long, still in version 4's layout (a board without room for them, the iCEBreaker)."""

    def __init__(self, layout, sources, value_of, *, enabled=True):
        self._sources = list(sources)
        self._value_of = value_of
        self._enabled = enabled
        super().__init__(
            {
                "entry": In(layout),
                "choice": In(1 + len(self._sources)),
                "delta": In(STAMP_BITS),
                "sent_event": In(1),
                "clear": In(1),
                "short": Out(1),
                "lead": Out(8),
            }
        )

    def elaborate(self, platform):
        m = Module()
        if GATEWARE_VERSION < 4 or not self._enabled:
            return m  # no short records: ``short`` stays 0
        chosen = {source: self.choice[1 + i] for i, source in enumerate(self._sources)}
        layouts = {source: layout for layout, source in SHORT_VALUE_SOURCES.items()}
        cases = []  # (this source chosen and short, its lead byte)
        for source in self._sources:
            value = self._value_of(self.entry, source)
            if source in layouts:
                short, lead = self._value_record(m, source, layouts[source], value, chosen[source])
            elif source in SHORT_EDGE_SOURCES:
                short, lead = self._edge_record(m, source, value)
            else:
                continue
            # Registered: the cycle that uses them only picks the chosen source's.
            short_registered = Signal(name=f"short_{source.name.lower()}")
            lead_registered = Signal(8, name=f"lead_{source.name.lower()}")
            m.d.sync += [short_registered.eq(short), lead_registered.eq(lead)]
            cases.append((chosen[source] & short_registered, lead_registered))
        m.d.comb += [
            self.short.eq(Cat(short for short, _ in cases).any()),
            self.lead.eq(reduce(operator.or_, [Mux(short, lead, 0) for short, lead in cases], 0)),
        ]
        return m

    def _value_record(self, m, source, layout, value, chosen):
        """A MARKER's or BUS write's: its value against its source's history."""
        width = len(value)
        history = ValueHistory(width)
        m.submodules[f"history_{source.name.lower()}"] = history
        minus_one = Signal(width)
        m.d.sync += minus_one.eq(value - 1)  # the entry is loaded a cycle before phase 2
        m.d.comb += [
            history.value.eq(value),
            history.push.eq(self.sent_event & chosen),
            history.clear.eq(self.clear),
        ]
        lead = Signal(layout)
        short = Signal()
        m.d.comb += lead.kind.eq(SHORT_LEADS[layout])
        # The first match, back 0 to 3, a repeat before a step (protocol.short_reference).
        matches = [
            (back, step, history.valid[back] & (test == history.values[back]))
            for back in range(HISTORY)
            for step, test in ((0, value), (1, minus_one))
        ]
        for index, (back, step, match) in enumerate(matches):
            with (m.Elif if index else m.If)(match):
                m.d.comb += [short.eq(1), lead.back.eq(back), lead.step.eq(step)]
        return short, lead.as_value()

    def _edge_record(self, m, source, value):
        """An edge's: short if its value is a level (an IRQ edge of the periodic generator)
        and its long record is not shorter."""
        lead = Signal(ShortEdgeLead)
        m.d.comb += [
            lead.kind.eq(SHORT_LEADS[ShortEdgeLead]),
            lead.code.eq(SHORT_EDGE_SOURCES.index(source)),
            lead.level.eq(value[0]),
        ]
        delta = self.delta[:DELTA_BITS]
        width = len(value)
        # The delta's bit length, one-hot: the lengths at which the long record is shorter.
        longer = [
            delta[bits - 1] & (delta[bits:] == 0)
            for bits in range(1, DELTA_BITS + 1)
            if long_is_shorter(width, bits)
        ]
        short = Signal()
        m.d.comb += short.eq((value[1:] == 0) & ~Cat(*longer).any() if longer else value[1:] == 0)
        return short, lead.as_value()
