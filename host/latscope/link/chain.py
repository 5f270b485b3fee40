"""Which verified segments are new data: the chain of sequence numbers and stamps that links
each delivered segment to the one before it (docs/protocol.md, "What a reader guarantees").

The parser (:mod:`latscope.link.parser`) checks a segment's structure, count and CRC; then
:meth:`SegmentChain.place` decides what the segment is, from its TALLY's sequence numbers
and its SYNC's stamp alone:

* **linked**: it follows the last delivered segment with no event record missing;
* **after a hole**: records are missing before it, as many as its sequence number says
  (:class:`HoleCount`: exactly, or a bound where the sequence may have wrapped);
* **a device reset**: the device's first segment since power-up (below), which starts a new
  *run*: its stamps and sequence numbers count from 0 again, so it continues the time line
  right after the last delivered stamp, with a hole that says the device restarted;
* **old**: behind what was delivered (a replayed or reordered segment, a stream sent twice):
  never new data, rejected and counted, and so is every segment that continues such a run of
  old segments;
* **refused**: ahead in sequence but its stamp 2**47 units or more ahead of the time base: it
  waits for a linked successor to confirm it (its own events count as lost).

A device reset on the wire: power-up clears the device's counters, and the host must send
START before any event, so the first segment after it has ``sent == captured == count`` (no
event record since power-up before it, and none since START). A copy of a run's first segment
looks the same; so the first segments of the runs delivered so far are remembered (the last
:data:`OPENINGS_KEPT` of them) and a copy of one is old, not a reset.
"""

from collections import deque
from dataclasses import dataclass
from typing import Final, Literal, NamedTuple

from latscope_defs.protocol import SEQUENCE_BITS, STAMP_BITS, HoleCount

__all__ = [
    "MAX_RECORDS_PER_STAMP",
    "OPENINGS_KEPT",
    "Damage",
    "Hole",
    "Mark",
    "Placed",
    "SegmentChain",
    "OLD",
    "REFUSED",
]

STAMP_MASK = (1 << STAMP_BITS) - 1
HALF_STAMP = 1 << (STAMP_BITS - 1)
SEQUENCE_MASK = (1 << SEQUENCE_BITS) - 1
HALF_SEQUENCE = 1 << (SEQUENCE_BITS - 1)
#: The most event records one stamp unit can hold: the device takes at most one FIFO entry
#: per cycle, and an entry holds at most one record per event source (11) and one LOSS record.
MAX_RECORDS_PER_STAMP = 12
#: First segments of runs remembered, to tell a copy of one from a device reset (a few
#: dozen bytes each).
OPENINGS_KEPT = 4096


class Mark(NamedTuple):
    """A point of the chain: the sequence number ``sent`` after a segment (None in version
    1) and the segment's last stamp, as the device counts it (48 bits) and on the host's
    64-bit time line (the two differ by a constant within a run, not across a reset)."""

    sent: int | None
    stamp48: int
    stamp64: int


@dataclass
class Damage:
    """Stream data dropped since the last delivered segment: ``dropped_bytes`` (bytes the
    parser threw away, replies aside), ``missing_bytes`` (bytes ``gap()`` said never came;
    None: an unknown number), ``gapped`` (``gap()`` was called)."""

    damaged: bool = False
    gapped: bool = False
    dropped_bytes: int = 0
    missing_bytes: int | None = 0

    def bytes_bound(self) -> int | None:
        """The most event records the dropped and missing bytes can have held (each record
        has a byte of its own); None if bytes went missing in unknown number."""
        return None if self.missing_bytes is None else self.dropped_bytes + self.missing_bytes

    def clear(self) -> None:
        self.damaged = self.gapped = False
        self.dropped_bytes = self.missing_bytes = 0


class Hole(NamedTuple):
    """A hole before a delivered segment: ``count`` event records lost, how exact
    (``kind``, :class:`HoleCount`), and whether the device restarted there."""

    # The field shadows tuple.count (the method), which nothing calls on a Hole.
    count: int  # type: ignore[assignment]
    kind: HoleCount
    restart: bool = False


class Placed(NamedTuple):
    """A segment delivered: the 64-bit stamp of its SYNC and the hole before it (or None)."""

    base: int
    hole: Hole | None


#: Verdicts of :meth:`SegmentChain.place` for a segment that is not delivered.
OLD: Final = "old"
REFUSED: Final = "refused"


def counted(lost: int, bound: int | None) -> tuple[int, HoleCount]:
    """(count, kind) of a hole whose sequence numbers say ``lost`` modulo 2**24 and which can
    have held at most ``bound`` event records (None: nothing bounds it)."""
    if bound is None:
        return lost, HoleCount.AT_LEAST
    if bound < lost + (1 << SEQUENCE_BITS):
        return lost, HoleCount.EXACT
    return lost + ((bound - lost) >> SEQUENCE_BITS << SEQUENCE_BITS), HoleCount.AT_MOST


def time_bound(span: int) -> int:
    """The most event records ``span`` stamp units can hold."""
    return MAX_RECORDS_PER_STAMP * (max(span, 0) + 1)


class SegmentChain:
    """The chain of delivered segments of one stream (module doc). ``margin``: stamp units
    between the last stamp before a device reset and the first after it (at least the
    largest pin latency, so that corrected stamps still go forward)."""

    def __init__(self, margin: int = 0) -> None:
        self.margin = margin
        self.last: Mark | None = None  # Mark of the last delivered segment
        self.anchor: Mark | None = None  # Mark the time base rests on (the last confirmed one)
        self.candidate: Mark | None = (
            None  # Mark of a segment refused for its stamp, until the next
        )
        self.old: int | None = None  # sequence number after the last old segment
        # (sent, stamp48, crc) of the runs' first segments
        self._openings: set[tuple[int, int, int]] = set()
        self._opening_order: deque[tuple[int, int, int]] = deque()

    # --- version 2 ---------------------------------------------------------------------

    def place(
        self,
        stamp48: int,
        count: int,
        sent: int,
        captured: int,
        segment_sum: int,
        crc: int,
        damage: Damage,
    ) -> Placed | Literal["old", "refused"]:
        """Where a verified version 2 segment goes: :class:`Placed`, :data:`OLD` or
        :data:`REFUSED` (module doc). ``segment_sum``: its last stamp minus its first;
        ``damage``: the :class:`Damage` since the last delivered segment."""
        last = self.last
        sent_before = (sent - count) & SEQUENCE_MASK
        opening = sent == count and captured == count
        candidate, self.candidate = self.candidate, None
        confirmed, hole = True, None
        if last is None:
            base = stamp48
            lost, kind = counted((captured - count) & SEQUENCE_MASK, damage.bytes_bound())
            hole = Hole(lost, kind) if lost else None
            confirmed = False
        elif sent_before == last.sent:
            base = last.stamp64 + ((stamp48 - last.stamp48) & STAMP_MASK)
        elif opening:
            if (sent, stamp48, crc) in self._openings:
                return self._old(sent)
            base = last.stamp64 + 1 + self.margin
            bound = damage.bytes_bound()
            hole = (
                Hole(0, HoleCount.AT_LEAST, True)
                if bound is None
                else Hole(bound, HoleCount.AT_MOST if bound else HoleCount.EXACT, True)
            )
        elif candidate is not None and sent_before == candidate.sent:
            # It follows a segment refused for its stamp (no event for 2**47 stamp units
            # across a hole): confirmed, the time base jumps there.
            base = candidate.stamp64 + ((stamp48 - candidate.stamp48) & STAMP_MASK)
            hole = self._hole_after(last, sent_before, base, damage)
        elif sent_before == self.old:
            return self._old(sent)
        else:
            assert last.sent is not None  # version 2: every mark has its sequence number
            if (sent_before - last.sent) & SEQUENCE_MASK >= HALF_SEQUENCE:
                return self._old(sent)
            # The time base: the last confirmed stamp, or the last unconfirmed one if none is.
            reference = self.anchor or last
            step = (stamp48 - reference.stamp48) & STAMP_MASK
            if step >= HALF_STAMP:
                end = reference.stamp64 + step + segment_sum
                self.candidate = Mark(sent, (stamp48 + segment_sum) & STAMP_MASK, end)
                return REFUSED
            base = reference.stamp64 + step
            hole = self._hole_after(last, sent_before, base, damage)
            confirmed = False
        if opening:
            self._remember(sent, stamp48, crc)
        self.old = None
        self.last = Mark(sent, (stamp48 + segment_sum) & STAMP_MASK, base + segment_sum)
        if confirmed:
            self.anchor = self.last
        return Placed(base, hole)

    @staticmethod
    def _hole_after(last: Mark, sent_before: int, base: int, damage: Damage) -> Hole | None:
        """The hole between the last delivered segment and one that starts at ``base`` with
        ``sent_before`` records sent before it: the sequence says how many modulo 2**24, the
        time span (and the bytes, when all missing bytes were counted) bound the wraps."""
        bound = time_bound(base - last.stamp64)
        bytes_bound = damage.bytes_bound()
        if bytes_bound is not None:
            bound = min(bound, bytes_bound)
        assert last.sent is not None  # version 2: every mark has its sequence number
        lost, kind = counted((sent_before - last.sent) & SEQUENCE_MASK, bound)
        return Hole(lost, kind) if lost else None

    def _old(self, sent: int) -> Literal["old"]:
        self.old = sent
        return OLD

    def _remember(self, sent: int, stamp48: int, crc: int) -> None:
        key = (sent, stamp48, crc)
        if key in self._openings:
            return
        self._openings.add(key)
        self._opening_order.append(key)
        if len(self._opening_order) > OPENINGS_KEPT:
            self._openings.discard(self._opening_order.popleft())

    # --- version 1 ---------------------------------------------------------------------

    def place_v1(self, stamp48: int, segment_sum: int, damage: Damage) -> Placed:
        """Version 1 (no sequence numbers): the time base is the last verified SYNC; a hole
        is bounded by the time it spans or by its bytes (always :class:`Placed`)."""
        anchor = self.anchor.stamp64 if self.anchor is not None else stamp48
        base = anchor + ((stamp48 - anchor) & STAMP_MASK)
        self.anchor = Mark(None, stamp48, base)
        hole = None
        if damage.damaged:
            bound = damage.bytes_bound()
            if self.last is not None:
                span = time_bound(base - self.last.stamp64)
                bound = span if bound is None else min(span, bound)
            hole = Hole(0, HoleCount.AT_LEAST) if bound is None else Hole(bound, HoleCount.AT_MOST)
        self.last = Mark(None, (stamp48 + segment_sum) & STAMP_MASK, base + segment_sum)
        return Placed(base, hole)

    # --- the end ---------------------------------------------------------------------------

    def end_hole(self, damage: Damage) -> tuple[int, Hole]:
        """(stamp, :class:`Hole`) for data dropped after the last delivered segment, when
        the stream ends: one stamp after the last delivered event (0 if none), bounded only by
        the bytes dropped and missing."""
        stamp = self.last.stamp64 + 1 if self.last is not None else 0
        bound = damage.bytes_bound()
        if bound is None:
            return stamp, Hole(0, HoleCount.AT_LEAST)
        return stamp, Hole(bound, HoleCount.AT_MOST)
