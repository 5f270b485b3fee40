"""The whole-capture analysis: the pairing rules applied to a capture's events at once,
vectorised over numpy arrays of stamps (cycles, pin-corrected), giving a :class:`SampleTable`
per table (:func:`analyze`); ``docs/tests.md`` describes the rules."""

from dataclasses import dataclass, field

import numpy as np

from latscope_defs.markers import Point, Test, decode
from latscope_defs.protocol import Source

from .rules import RULES, is_tick, tick_overlaps
from .spans import hole_spans, is_hole, lossy_spans, merged, overlaps
from .windows import Windows, markers_in_time_order, windows_of_test

__all__ = ["SampleTable", "analyze", "pair"]

@dataclass
class SampleTable:
    """Samples of one table, in stamp units (``stamp_hz`` per second: capture clock
    cycles, or half cycles with DDR inputs), in capture order, with their start stamps."""
    name: str
    stamp_hz: float
    samples: np.ndarray                     # int64 stamp units
    starts: np.ndarray                      # int64 stamp of each sample's first event
    discarded: int = 0                      # pairs dropped because of a loss between them
    parameters: dict = field(default_factory=dict)
    #: int64 stamps of the first events of the discarded pairs (live statistics count the
    #: pairs they have not seen by these)
    discarded_starts: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    discarded_by_holes: int = 0             # of ``discarded``: those with a hole between them
    #: bool per sample: a tick marker lies in it (:func:`tick_overlaps`; empty: none known)
    ticked: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))

    def ns(self):
        return self.samples * (1e9 / self.stamp_hz)

    def stats(self):
        """Number of samples, min / max / average (the reference report's table), standard
        deviation and percentiles, in ns: :func:`latscope.analysis.statistics.stats_of_counts` (the
        method the bounded analysis uses too)."""
        from .statistics import stats_of_counts
        values, counts = np.unique(self.samples, return_counts=True)
        return stats_of_counts(values, counts, self.stamp_hz, self.discarded,
                               self.discarded_by_holes)

def pair(a, a_window, b, b_window, loss_spans, hole_only):
    """Samples from each stamp in ``a`` to the first stamp in ``b`` after it in the same
    window, when no other ``a`` comes in between and the pair overlaps no span of
    ``loss_spans`` (:func:`~latscope.analysis.spans.lossy_spans`). Stamps are sorted and so
    are their window numbers. Returns, over ``a``: the mask of kept samples, the mask of
    pairs discarded for a loss between them, the mask of those discarded for a hole
    (``hole_only``: the merged hole spans, a subset of ``loss_spans``), and every A's length
    to its B (meaningful where one of the masks is set)."""
    none = np.zeros(len(a), bool)
    if not len(a) or not len(b):
        return none, none, none, np.zeros(len(a), np.int64)
    index = np.searchsorted(b, a, side="right")
    clipped = np.minimum(index, len(b) - 1)
    has_end = (index < len(b)) & (b_window[clipped] == a_window)
    end = np.where(has_end, b[clipped], 0)
    same_window_next = np.append(a_window[1:] == a_window[:-1], False)
    next_a = np.where(same_window_next, np.append(a[1:], 0), np.iinfo(np.int64).max)
    # An A in the very cycle of B does not steal B (ties are impossible within one source).
    paired = has_end & (end <= next_a)
    lossy = paired & overlaps(loss_spans, a, end)
    return paired & ~lossy, lossy, lossy & overlaps(hole_only, a, end), end - a

def analyze(events, stamp_hz, *, losses=None):
    """Sample tables of every test found in ``events`` (a parser ``Events``), by name, in
    the order their tests' windows first appear. ``stamp_hz``: stamp units per second
    (``Capture.stamp_hz``, ``Identity.stamp_hz``).

    ``losses``: extra stamps where data is known to be missing (added to the LOSS records).

    A test runs between its START and END markers (a second START before the END, whose END
    was lost, ends the window instead). Inside that window a *pairing rule* makes one
    sample from an event A and the first event B after it, when no other A comes between them (an
    A with no B is dropped) and no lost event can lie between them: a sample is either exact or
    absent, never wrong.
    """
    stamp = events.stamp.astype(np.int64, copy=False)
    source, value = events.source, events.value
    hole_at = np.flatnonzero(is_hole(source, value))
    holes = hole_spans(stamp, source, value, hole_at)
    hole_after = holes[0] + 1          # the stamp of the event before each hole (or int64 min)
    marker_at = markers_in_time_order(stamp, source)
    tests, points, args = decode(value[marker_at].astype(np.int32) & 0xffff)
    irq_at = np.flatnonzero((source == Source.IRQ) & (value == 1))
    # An event's epoch: the holes before it in the stream.
    irq, irq_epoch = stamp[irq_at], np.searchsorted(hole_at, irq_at)   # one source: in order
    # The kernel's handler-entry markers: positions among all markers, stamps, epochs.
    handler_at = np.flatnonzero((tests == Test.KERNEL) & (points == Point.ISR_ENTRY))
    handler = stamp[marker_at[handler_at]]
    handler_epoch = np.searchsorted(hole_at, marker_at[handler_at])
    ticks = stamp[marker_at[is_tick(tests, points)]]          # stamp order
    loss_spans = lossy_spans(stamp, source, value, losses, holes)
    merged_holes = merged(*holes)

    # The markers of each test, in stream order (a radix sort on the small test number).
    order = np.argsort(tests.astype(np.uint8), kind="stable")
    test_of = tests[order]
    edges = np.flatnonzero(np.append(True, test_of[1:] != test_of[:-1]))[:len(order)]
    found = []                            # (first START position, rule index, name, table)
    for begin, end in zip(edges, np.append(edges[1:], len(order))):
        test = int(test_of[begin])
        rules = [(index, rule) for index, rule in enumerate(RULES) if rule.test == test
                 and (len(handler) or "handler" not in (rule.start, rule.end))]
        mine = order[begin:end]
        m_stamp, m_points = stamp[marker_at[mine]], points[mine]
        m_epoch = np.searchsorted(hole_at, marker_at[mine])
        windows = windows_of_test(m_stamp, m_points, args[mine], m_epoch, hole_after)
        if not rules or not len(windows.start):
            continue
        of_kind = {}                      # kind -> (stamps, windows, epochs), computed once

        def stamps_of(kind, as_start):
            """Stamps of an event kind inside the windows, and their window numbers. Start
            events count only before the first hole of their window; end events anywhere
            in it (a pair across a hole is then discarded, and counted)."""
            if kind not in of_kind:
                if kind == "irq":
                    found_at, window, epochs = irq, windows.of_stamps(irq), irq_epoch
                elif kind == "handler":
                    # A marker of another test: in a window by its place in the marker
                    # order (the windows' bounds as positions among all markers).
                    bounds = np.append(mine, len(marker_at))
                    window = Windows(bounds[windows.start], bounds[windows.stop],
                                      *[None] * 6).of_markers(handler_at)
                    found_at, epochs = handler, handler_epoch
                else:
                    at = np.flatnonzero(m_points == kind)
                    found_at, window, epochs = m_stamp[at], windows.of_markers(at), m_epoch[at]
                inside = window >= 0
                of_kind[kind] = found_at[inside], window[inside], epochs[inside]
            found_at, window, epochs = of_kind[kind]
            if as_start and len(hole_after):
                before_hole = epochs == windows.epoch[window]
                return found_at[before_hole], window[before_hole]
            return found_at, window

        for index, rule in rules:
            (a, a_window), (b, b_window) = stamps_of(rule.start, True), stamps_of(rule.end, False)
            keep, lossy, by_hole, samples = pair(a, windows.outer[a_window], b,
                                                  windows.outer[b_window], loss_spans,
                                                  merged_holes)
            # A name with the parameter in it is known only where the parameter is.
            known = windows.certain | ("{n}" not in rule.name)
            names = np.array([rule.name.format(n=int(n)) for n in windows.parameter])
            distinct = dict.fromkeys(names[known].tolist())
            for name in distinct:
                of_name = np.flatnonzero((names == name) & known)
                # (Most tests have one name for all their windows: no lookup needed.)
                mine_a = (np.ones(len(a), bool) if len(of_name) == len(names)
                          else np.isin(a_window, of_name))
                n = windows.parameter[of_name][windows.certain[of_name]]
                kept = keep & mine_a
                table = SampleTable(name, stamp_hz, samples[kept], a[kept],
                                    int(np.count_nonzero(lossy & mine_a)),
                                    {"test": Test(test).name,
                                     "n": int(n[0]) if len(n) else None},
                                    a[lossy & mine_a], int(np.count_nonzero(by_hole & mine_a)),
                                    tick_overlaps(a[kept], samples[kept], ticks))
                found.append((int(mine[windows.start[of_name[0]]]), index, name, table))
    # Every name is one test's (its rules' names differ), so each table was made whole.
    return {name: table for _, _, name, table in sorted(found, key=lambda item: item[:2])}
