"""The worst samples of every table, explained: what happened in and around each.

The tables (:class:`latscope.analysis.statistics.TableAccumulator`) keep their largest samples and
flag the samples that are not typical (the first, cold one; those the kernel's tick
overlaps). :func:`worst_samples` reads the capture once more and gives each of the ``n``
worst samples of every table the events from :data:`CONTEXT_MARGIN_S` before its start to
as long after its end: IRQ edges, the kernel's tick and handler markers, the tests' own
markers, losses. Results documents carry them (``tables[].worst``, docs/results-schema.md)
and the reports show them, so that a reader sees why the maximum is the maximum.
"""

from collections.abc import Mapping
from os import PathLike

import numpy as np

from latscope_defs.markers import KERNEL_HANDLER, KERNEL_POINT_NAMES, Point, Test, decode
from latscope_defs.protocol import (
    HOLE_SOURCE,
    Source,
    irq_delay,
    irq_level,
    irq_triggered,
    loss_count,
    loss_source,
)

from ..capture.batches import CaptureBatches
from ..capture.file import Capture
from .statistics import TableAccumulator, Worst, WorstEvent

__all__ = [
    "WORST_SHOWN",
    "CONTEXT_MARGIN_S",
    "CONTEXT_EVENTS",
    "worst_samples",
    "describe_event",
    "events_text",
    "flags_text",
]

#: Worst samples per table in reports (at most statistics.WORST_KEPT).
WORST_SHOWN = 3
#: Events shown before a worst sample's start and after its end, in seconds.
CONTEXT_MARGIN_S = 5e-6
#: Events listed per worst sample at most (the nearest to it, those in it first; the rest
#: are counted).
CONTEXT_EVENTS = 40


def describe_event(source: int, value: int) -> str:
    """A short name of an event: "IRQ rise", "tick entry", "handler 0", "IL_A ISR_ENTRY 3",
    "EDGE2 1", "LOSS 4 MARKER", "hole"."""
    if source in (Source.MARKER, Source.BUS):
        test, point, arg = (int(x) for x in decode(int(value) & 0xFFFF))
        if test == Test.KERNEL and point in KERNEL_POINT_NAMES:
            name = KERNEL_POINT_NAMES[Point(point)]
            return f"{name} {arg}" if point == KERNEL_HANDLER else name
        try:
            test_name = Test(test).name
        except ValueError:
            test_name = f"test{test}"
        return f"{test_name} {Point(point).name} {arg}"
    if source == Source.IRQ:
        value = int(value)
        edge = "IRQ rise" if irq_level(value) else "IRQ fall"
        # A trigger's firing names its delay (capture cycles; docs/protocol.md).
        return f"{edge} delay {irq_delay(value)}" if irq_triggered(value) else edge
    if source == Source.LOSS:
        lost = loss_source(int(value))
        if lost == HOLE_SOURCE:
            return "hole"
        try:
            lost_name = Source(lost).name
        except ValueError:
            lost_name = str(lost)
        return f"LOSS {loss_count(int(value))} {lost_name}"
    return f"{Source(source).name} {int(value)}"


def worst_samples(
    capture: Capture | str | PathLike[str],
    tables: Mapping[str, TableAccumulator],
    n: int = WORST_SHOWN,
    *,
    margin_s: float = CONTEXT_MARGIN_S,
    first_stamp: int | None = None,
) -> dict[str, list[Worst]]:
    """``{table name: [worst sample]}``: the ``n`` worst samples of every table
    (``TableAccumulator.worst``: ``index``, ``start``, ``end``, ``value``, ``ns``, ``cold``,
    ``tick``), each with ``rank`` (1: the largest), ``time_s`` (from ``first_stamp``, the
    capture's first event), ``events`` (from ``margin_s`` before the start to as long after
    the end, in time order: ``stamp``, ``offset_ns`` from the start, ``where``: before /
    inside / after, ``source``, ``event``: :func:`describe_event`; at most
    :data:`CONTEXT_EVENTS`, the nearest) and ``events_omitted`` (the others). ``capture``: a
    capture file's path (read once more, in batches) or a loaded :class:`Capture`."""
    read = capture if isinstance(capture, Capture) else CaptureBatches(capture)
    hz = read.stamp_hz
    margin = int(round(margin_s * hz))
    chosen = {name: table.worst(n) for name, table in tables.items()}
    windows = [
        (entry["start"] - margin, entry["end"] + margin, entry)
        for entries in chosen.values()
        for entry in entries
    ]
    found: list[list[tuple[int, int, int]]] = [[] for _ in windows]  # (stamp, source, value)
    batches = [read.events] if isinstance(read, Capture) else read
    for events in batches:
        if not len(events) or not windows:
            continue
        stamp = events.stamp.astype(np.int64)
        low, high = int(stamp.min()), int(stamp.max())
        for (first, last, _), into in zip(windows, found):
            if last < low or first > high:
                continue  # most batches hold no worst sample
            at = np.flatnonzero(
                (stamp >= first) & (stamp <= last) & (events.source <= Source.EDGE7)
            )
            into += zip(stamp[at].tolist(), events.source[at].tolist(), events.value[at].tolist())
    origin = first_stamp if first_stamp is not None else 0
    for (_, _, entry), into in zip(windows, found):
        # The events nearest the sample (those in it first), then in time order (stable:
        # stream order within a stamp).
        start, end = entry["start"], entry["end"]
        near = sorted(into, key=lambda event: max(start - event[0], event[0] - end, 0))
        kept = sorted(near[:CONTEXT_EVENTS], key=lambda event: event[0])
        entry["time_s"] = (start - origin) / hz
        entry["events"] = [
            _context(stamp, source, value, entry, hz) for stamp, source, value in kept
        ]
        entry["events_omitted"] = len(into) - len(kept)
    for entries in chosen.values():
        for rank, entry in enumerate(entries, 1):
            entry["rank"] = rank
    return chosen


def _context(stamp: int, source: int, value: int, entry: Worst, hz: float) -> WorstEvent:
    where = "before" if stamp < entry["start"] else "after" if stamp > entry["end"] else "inside"
    return {
        "stamp": stamp,
        "offset_ns": (stamp - entry["start"]) * 1e9 / hz,
        "where": where,
        "source": Source(source).name,
        "event": describe_event(source, value),
    }


def flags_text(entry: Worst) -> str:
    """ "cold, tick", "cold", "tick" or "" for a worst sample."""
    return ", ".join(flag for flag, on in (("cold", entry["cold"]), ("tick", entry["tick"])) if on)


def events_text(entry: Worst) -> str:
    """A worst sample's events in one line, ns from its start, the sample's own span in
    brackets: "-1230 tick entry, [0 IRQ rise, 830 tick exit, 5140 IL_A ISR_ENTRY 0], ...".
    """
    parts = [f"{event['offset_ns']:.0f} {event['event']}" for event in entry["events"]]
    inside = [n for n, event in enumerate(entry["events"]) if event["where"] == "inside"]
    if inside:
        parts[inside[0]] = "[" + parts[inside[0]]
        parts[inside[-1]] += "]"
    more = f" (+{entry['events_omitted']} more)" if entry["events_omitted"] else ""
    return ", ".join(parts) + more
