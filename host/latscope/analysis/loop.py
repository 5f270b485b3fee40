"""The IRQ loop method: interrupt latency with no latscope code on the DUT.

The appliance fires its IRQ; the DUT's own interrupt handler toggles a GPIO that is wired to
one of the appliance's edge channels (the *loop channel*). A sample runs from an asserting
IRQ edge to the next change of the loop channel (:func:`loop_table`; docs/tests.md, "The IRQ
loop").
"""

from collections.abc import Iterable, Sequence

import numpy as np

from latscope_defs.markers import decode
from latscope_defs.protocol import EDGE_SOURCES, Source, irq_level, loss_source

from ..events import Events
from .pairing import SampleTable
from .rules import TableParameters, is_marker, is_tick, tick_overlaps
from .spans import (
    Mask,
    Sources,
    Stamps,
    Values,
    hole_spans,
    is_hole,
    lossy_spans,
    merged,
    overlaps,
)

__all__ = ["LOOP_PREFIX", "loop_source", "loop_table_name", "loop_table", "parse_loop"]

LOOP_PREFIX = "LOOP"


def parse_loop(text: str | int) -> str:
    """The loop channel's name (``EDGE0`` .. ``EDGE7``) from ``EDGE2``, ``edge2`` or ``2``;
    ValueError with a one-line message otherwise."""
    name = str(text).strip().upper()
    if name.isdigit():
        name = f"EDGE{name}"
    if name not in {source.name for source in EDGE_SOURCES}:
        raise ValueError(f"loop channel {text!r}: not an edge channel (EDGE0 .. EDGE7)")
    return name


def loop_source(channel: str | int) -> Source:
    """The event source of a loop channel name."""
    return Source[parse_loop(channel)]


def loop_table_name(channel: str | int) -> str:
    return f"{LOOP_PREFIX}-{parse_loop(channel)}"


def _relevant_losses(source: Sources, value: Values, loop: Source) -> Mask:
    """Mask of the events the loss spans of the loop are computed from: the IRQ and loop
    channel events and the LOSS records of those two sources (holes are taken apart)."""
    mask = (source == Source.IRQ) | (source == loop)
    is_loss = (source == Source.LOSS) & ~is_hole(source, value)
    lost = loss_source(value[is_loss].astype(np.int64))
    mask[np.flatnonzero(is_loss)[(lost == Source.IRQ) | (lost == loop)]] = True
    return mask


def loop_table(
    events: Events,
    stamp_hz: float,
    channel: str | int,
    *,
    losses: Sequence[int] | Stamps | None = None,
) -> SampleTable:
    """The ``LOOP-<channel>`` :class:`~latscope.analysis.pairing.SampleTable` of a parser ``Events``
    (``channel``: ``EDGE0`` .. ``EDGE7``). ``losses``: extra stamps where data is known to
    be missing. ``parameters`` holds ``channel``, ``irq_edges``, ``unanswered`` (IRQ edges
    with no change of the channel before the next) and ``extra_edges``.

    Pairing (one rule, over the whole capture: there are no test windows without markers):

    1. B is the first change of the loop channel (either level) strictly after A and strictly
       before the next asserting IRQ edge. An A with no such B is *unanswered* (counted: the DUT
       missed the interrupt, or took longer than the IRQ period); further changes of the channel
       before the next A are *extra* (counted, not paired).
    2. A pair is discarded (and counted) when an event that could change it may have been lost
       between A and B: a LOSS record of the IRQ source or of the loop channel (the span from
       that source's previous event to the LOSS record, as
       :func:`latscope.analysis.pairing.analyze` takes it), or a hole (lost source 0xF: any
       source, from the previous delivered event of any source). Losses of other sources
       (markers of a suite running beside the loop) do not touch loop pairs. A sample is exact
       or absent, never wrong.

    This rule is paired here, through the public span functions of
    :mod:`latscope.analysis.spans`, not by the batch analysis of the marker tests
    (:mod:`latscope.analysis.batch`): it has no test windows, its B must come strictly before
    the next A (a marker rule's B in the cycle of the next A still ends the previous A), only
    the losses of two sources count, and it counts unanswered and extra edges. Each would be
    a special case in the batch analysis for this one table.

    The table is named ``LOOP-<channel>`` (``LOOP-EDGE2``) and is a
    :class:`~latscope.analysis.pairing.SampleTable` like the marker tests' tables, so the
    reports, plots and statistics treat it alike; its samples are flagged where one of the
    kernel's tick markers lies in [A, B] (:func:`~latscope.analysis.rules.tick_overlaps`,
    as the marker tests' samples), when the DUT writes them.
    """
    loop = loop_source(channel)
    stamp = events.stamp.astype(np.int64, copy=False)
    source, value = events.source, events.value
    a = stamp[(source == Source.IRQ) & (irq_level(value) == 1)]
    b = stamp[source == loop]
    # The B of each A: the first loop change after it, if it comes before the next A.
    index = np.searchsorted(b, a, side="right")
    next_a = np.append(a[1:], np.iinfo(np.int64).max)
    end = np.full(len(a), np.iinfo(np.int64).max)
    if len(b):
        end = np.where(index < len(b), b[np.minimum(index, len(b) - 1)], end)
    answered = end < next_a
    # Loop changes that are no A's first answer (before the first A, or a second one).
    firsts = np.count_nonzero(answered)
    extra = len(b) - firsts
    holes = hole_spans(stamp, source, value)
    mine = _relevant_losses(source, value, loop)
    spans = lossy_spans(stamp[mine], source[mine], value[mine], losses, holes)
    a, end = a[answered], end[answered]
    marker = is_marker(source)
    ticks = stamp[marker][is_tick(*decode(value[marker].astype(np.int64) & 0xFFFF)[:2])]
    lossy = overlaps(spans, a, end)
    by_hole = lossy & overlaps(merged(*holes), a, end)
    keep = ~lossy
    name = loop_table_name(channel)
    parameters: TableParameters = {
        "test": LOOP_PREFIX,
        "n": None,
        "channel": parse_loop(channel),
        "irq_edges": int(len(next_a)),
        "unanswered": int(len(next_a) - firsts),
        "extra_edges": int(extra),
    }
    return SampleTable(
        name,
        stamp_hz,
        (end - a)[keep],
        a[keep],
        int(np.count_nonzero(lossy)),
        parameters,
        a[lossy],
        int(np.count_nonzero(by_hole)),
        tick_overlaps(a[keep], (end - a)[keep], np.sort(ticks)),
    )


def tables_with_loop(
    events: Events, stamp_hz: float, tables: dict[str, SampleTable], loop: str | int | None
) -> dict[str, SampleTable]:
    """``tables`` (``analyze``'s) with the ``LOOP-<loop>`` table first (``loop`` None: as
    they are)."""
    if not loop:
        return tables
    table = loop_table(events, stamp_hz, loop)
    return {table.name: table, **tables}


def loop_events(batches: Iterable[Events], channel: str | int) -> Events:
    """The events :func:`loop_table` needs from a capture read in batches (an iterable of
    parser ``Events``, e.g. ``CaptureBatches``): the IRQ and loop channel events, every LOSS
    record, the kernel's tick markers (the samples' flags) and the delivered event right
    before each hole (its stamp is the low end of the hole's span). A small part of the
    stream: about three records per interrupt."""
    loop = loop_source(channel)
    parts: list[Events] = []
    last: Events | None = None  # last: the previous batch's last delivered event
    for events in batches:
        source = events.source
        keep = (source == Source.IRQ) | (source == loop) | (source == Source.LOSS)
        marker = np.flatnonzero(is_marker(source))
        keep[marker] = is_tick(*decode(events.value[marker].astype(np.int64) & 0xFFFF)[:2])
        delivered = np.flatnonzero(source != Source.LOSS)
        holes = np.flatnonzero(is_hole(source, events.value))
        before = np.searchsorted(delivered, holes) - 1
        keep[delivered[before[before >= 0]]] = True
        if (
            np.any(before < 0)
            and last is not None
            and int(last.source[0]) not in (int(Source.IRQ), int(loop))
        ):
            parts.append(last)  # a hole at the batch's start: its low end
        parts.append(events[keep])
        if len(delivered):
            last = events[delivered[-1:]]
    return Events.concatenate(parts)
