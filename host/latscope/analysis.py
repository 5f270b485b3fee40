"""The rules that turn stamped events into latency samples, and the sample tables.

One module, described in ``docs/tests.md``; the CLI, the reports and the sigrok decoder all use
it. Everything is vectorised over numpy arrays of stamps (cycles, pin-corrected).

A test runs between its START and END markers (a second START before the END, whose END
was lost, ends the window instead). Inside that window a *pairing rule* makes one
sample from an event A and the first event B after it, when no other A comes between them (an
A with no B is dropped) and no lost event can lie between them: a sample is either exact or
absent, never wrong.

Where lost events can lie: a LOSS record of source X says that events of X were lost after
X's previous record in the stream and before the LOSS record itself (the appliance emits it
when its FIFO has room again, at the latest together with X's next event). Event stamps are
corrected for their source's pin delay and the LOSS record's is not, so an event stamped in
the very cycle of the LOSS record comes out a few cycles *before* it: the span that may hold
lost events is therefore taken from X's previous event to the LOSS record's stamp, and a pair
that overlaps any such span is discarded.

Holes: where the host dropped or could not verify stream data (a segment that failed its
check, a gap in a capture file, a resync), the parser emits a LOSS record whose lost-source
nibble is :data:`HOLE` (0xF): events of *any* source may be missing there. A hole is a loss
span for every source, from the previous delivered event of any source (none: from the
start) to the hole's stamp. A hole may also have swallowed a test's END or its next START
(and a PARAM): so a window takes start events (A) only from before the first hole inside
it. After a hole, the test's markers up to its next START or END form a window of unknown
parameter: its samples go to the tables whose name does not depend on the parameter, and
to no table otherwise (docs/tests.md, rules 4 to 6).
"""

from dataclasses import dataclass, field

import numpy as np

from latscope_defs.markers import ARG_BITS, KERNEL_TICK_ENTRY, KERNEL_TICK_EXIT, Point, Test, decode
from latscope_defs.protocol import HOLE_SOURCE, Source, loss_count, loss_source

__all__ = ["RULES", "Rule", "SampleTable", "HOLE", "Hole", "analyze", "holes_of", "is_hole",
           "windows_of_test", "is_tick", "tick_overlaps"]

#: Marker values reach the host from the trace port (MARKER) or the bus window (BUS).
MARKER_SOURCES = (Source.MARKER, Source.BUS)
#: Lost-source nibble of a LOSS record that stands for a hole: events of any source may be
#: missing (the parser's interface, docs/protocol.md).
HOLE = HOLE_SOURCE


@dataclass(frozen=True)
class Rule:
    """One sample table of a test: ``name`` (``{n}`` = the START marker's argument), the
    event that starts a sample and the event that ends it. An event is ``"irq"`` (an
    asserting IRQ edge), ``"handler"`` (the kernel's KERNEL/ISR_ENTRY marker: it is about
    to call an interrupt handler) or a marker :class:`Point` of the test."""
    test: Test
    name: str
    start: object
    end: object


RULES = [
    Rule(Test.IL_A, "IL-a-1", "irq", Point.ISR_ENTRY),
    Rule(Test.IL_A, "ILH-a-1", "irq", "handler"),
    Rule(Test.IL_A, "IDL-a-1", Point.ISR_EXIT, Point.THREAD),
    Rule(Test.IDL_B, "IL-b-{n}", "irq", Point.ISR_ENTRY),
    Rule(Test.IDL_B, "ILH-b-{n}", "irq", "handler"),
    Rule(Test.IDL_B, "IDL-b-{n}", Point.ISR_EXIT, Point.T2),
    Rule(Test.TSL_A, "TSL-a-{n}", Point.T1, Point.T2),
    Rule(Test.TF_A, "TF-a-1", Point.T1, Point.T2),
    Rule(Test.TF_B, "TF-b-1", Point.T1, Point.T2),
    Rule(Test.TF_C, "TF-c-2", Point.T1, Point.T2),
    Rule(Test.SEO_A, "SEO-a-1", Point.T1, Point.T2),
    Rule(Test.SEO_B, "SEO-b-1", Point.T1, Point.T2),
    Rule(Test.SEO_C, "SEO-c-1", Point.T1, Point.T2),
    Rule(Test.SEO_D, "SEO-d-1", Point.T1, Point.T2),
    Rule(Test.SEO_E, "SEO-e-1", Point.T1, Point.T2),
    Rule(Test.SEO_F, "SEO-f-{n}", Point.T1, Point.T2),
    Rule(Test.SEO_G, "SEO-g-3", Point.T1, Point.T2),
    Rule(Test.MQ, "MQ-a-1", Point.T1, Point.T2),
    Rule(Test.CLOCK_ISR, "CLK-a-1", Point.T1, Point.T2),
]


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
        deviation and percentiles, in ns: :func:`latscope.accumulate.stats_of_counts` (the
        method the bounded analysis uses too)."""
        from .accumulate import stats_of_counts
        values, counts = np.unique(self.samples, return_counts=True)
        return stats_of_counts(values, counts, self.stamp_hz, self.discarded,
                               self.discarded_by_holes)


def is_tick(tests, points):
    """Mask of the kernel's tick markers (KERNEL/TICK_ENTRY, KERNEL/TICK_EXIT) among
    decoded markers."""
    return (tests == Test.KERNEL) & ((points == KERNEL_TICK_ENTRY) | (points == KERNEL_TICK_EXIT))


def tick_overlaps(starts, lengths, ticks):
    """Which samples (first stamp ``starts``, ``lengths``) overlap the kernel's tick: a tick
    marker (entry or exit, sorted stamps ``ticks``) lies in [start, start + length]. Code
    runs in no sample's end while the tick's work runs (interrupts are off), so a sample
    the tick's work delayed holds its entry or exit marker, or both."""
    ends = starts + lengths
    return np.searchsorted(ticks, starts, side="left") < np.searchsorted(ticks, ends, side="right")


def _overlaps(spans, a, end):
    """Which pairs (a, end) overlap one of the sorted, disjoint ``spans`` (low, high)."""
    low, high = spans
    # The first span that ends after A; the pair is lossy if that span starts before B.
    first = np.searchsorted(high, a, side="right")
    lossy = first < len(high)
    lossy[lossy] = low[first[lossy]] < end[lossy]
    return lossy


def _pair(a, a_window, b, b_window, lossy_spans, hole_spans):
    """Samples from each stamp in ``a`` to the first stamp in ``b`` after it in the same
    window, when no other ``a`` comes in between and the pair overlaps no span of
    :func:`_lossy_spans`. Stamps are sorted and so are their window numbers. Returns, over
    ``a``: the mask of kept samples, the mask of pairs discarded for a loss between them,
    the mask of those discarded for a hole (``hole_spans``, a subset of ``lossy_spans``),
    and every A's length to its B (meaningful where one of the masks is set)."""
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
    lossy = paired & _overlaps(lossy_spans, a, end)
    return paired & ~lossy, lossy, lossy & _overlaps(hole_spans, a, end), end - a


def _lossy_spans(stamp, source, value, extra, holes=None):
    """Sorted, disjoint stamp spans (low, high) in which lost events may lie: for every LOSS
    record of source X, from the stamp of X's previous event in the stream (none: from the
    start) to the LOSS record's stamp; for every hole (:data:`HOLE`), the span of
    :func:`_hole_spans` (``holes``: those spans, if known); plus a point span for every
    stamp in ``extra``. A lost event's
    stamp t satisfies low < t < high; a pair (A, B) is lossy when some span has low < B
    and high > A."""
    is_loss = (source == Source.LOSS) & ~is_hole(source, value)
    at = np.flatnonzero(is_loss)
    lost_source = loss_source(value[is_loss].astype(np.int64))
    low = np.full(len(at), np.iinfo(np.int64).min, np.int64)
    for lost in np.unique(lost_source):
        of_source = np.flatnonzero(source == lost)
        if not len(of_source):
            continue                  # no event of that source yet: lost from the start
        mine = lost_source == lost
        previous = np.searchsorted(of_source, at[mine]) - 1
        low[mine] = np.where(previous >= 0, stamp[of_source[np.maximum(previous, 0)]], low[mine])
    high = stamp[at]
    hole_low, hole_high = _hole_spans(stamp, source, value) if holes is None else holes
    extra = np.asarray(extra if extra is not None else [], np.int64)
    return _merged(np.concatenate([low, hole_low, extra]),
                   np.concatenate([high, hole_high, extra]))


def _merged(low, high):
    """Spans sorted by start, overlapping ones merged."""
    if not len(low):
        return low, high
    # Sorted by start, a span joins the previous group unless it starts after everything
    # before it has ended.
    order = np.argsort(low, kind="stable")
    low, high = low[order], np.maximum.accumulate(high[order])
    starts = np.flatnonzero(np.append(True, low[1:] > high[:-1]))
    ends = np.append(starts[1:], len(low)) - 1
    return low[starts], high[ends]


def is_hole(source, value):
    """Mask of the hole records (LOSS records of lost source :data:`HOLE`)."""
    mask = source == Source.LOSS
    mask[mask] = loss_source(value[mask].astype(np.int64)) == HOLE    # few: LOSS records only
    return mask


def _hole_spans(stamp, source, value, at=None):
    """(low, high) of every hole, in stream order: from the previous delivered event of any
    source (LOSS records, whose stamps are not pin-corrected, do not count; none: from the
    start) to the hole's stamp, both widened by one stamp so that a lost event in the very
    stamp of either end counts as inside.

    Why the previous event is low enough: a lost event followed that event in the stream,
    so within one source its stamp is later; from another source it can be earlier by at
    most the difference of the two pin delays, and the rules' end events (B) are markers,
    whose lost fellows share B's source. So no lost event that could change a pair lies
    below it. ``at``: the holes' indices, if known."""
    at = np.flatnonzero(is_hole(source, value)) if at is None else at
    low = np.full(len(at), np.iinfo(np.int64).min, np.int64)
    if len(at):
        delivered = np.flatnonzero(source != Source.LOSS)
        previous = np.searchsorted(delivered, at) - 1
        has = previous >= 0
        low[has] = stamp[delivered[previous[has]]] - 1
    return low, stamp[at] + 1


@dataclass(frozen=True)
class Hole:
    """A hole in the events: ``index`` in the stream, ``stamp`` (the first verified stamp
    after it), ``after`` (the stamp of the previous delivered event, None: from the start)
    and ``lost``: event records lost there (exact, or a bound never below the truth)."""
    index: int
    stamp: int
    after: object
    lost: int


def holes_of(events):
    """The holes (:class:`Hole`) of a parser ``Events``, in stream order."""
    stamp = events.stamp.astype(np.int64, copy=False)
    low, _ = _hole_spans(stamp, events.source, events.value)
    at = np.flatnonzero(is_hole(events.source, events.value))
    return [Hole(int(i), int(stamp[i]), None if lo == np.iinfo(np.int64).min else int(lo) + 1,
                 loss_count(int(events.value[i])))
            for i, lo in zip(at.tolist(), low.tolist())]


@dataclass
class _Windows:
    """The windows of one test, in order: marker positions (within the test's markers) of
    START (or of the first marker after a hole) and of the window's end, stamps of both,
    the parameter, the window's epoch (holes in the stream before it), whether its
    parameter is certain, and ``outer``: the window it lies in (itself, or for a window a
    hole opened inside another, that one: pairs are made within it, so that a pair across
    the hole is seen and discarded)."""
    start: np.ndarray
    stop: np.ndarray
    first: np.ndarray
    last: np.ndarray
    parameter: np.ndarray
    epoch: np.ndarray
    certain: np.ndarray
    outer: np.ndarray

    def of_markers(self, positions):
        """The window of each marker position (-1: in none)."""
        window = np.searchsorted(self.start, positions, side="right") - 1
        inside = (window >= 0) & (positions < self.stop[np.maximum(window, 0)])
        return np.where(inside, window, -1)

    def of_stamps(self, stamps):
        """The window of each (sorted) stamp strictly between a START and its end (-1: none):
        an IRQ edge in the very cycle of a START or an END is in no window."""
        window = np.searchsorted(self.first, stamps, side="left") - 1
        inside = (window >= 0) & (stamps < self.last[np.maximum(window, 0)])
        return np.where(inside, window, -1)


def _markers_in_time_order(stamp, source):
    """Positions of the marker events (trace port and bus window) in stamp order; two in
    one cycle in the order trace port, bus window. (The stream is in stamp order within a
    source; after the pin-delay correction a trace-port marker can follow a later bus
    marker there.)"""
    at = np.flatnonzero((source == Source.MARKER) | (source == Source.BUS))
    kinds = source[at]
    if np.any(kinds == Source.BUS) and np.any(kinds == Source.MARKER):
        at = at[np.lexsort((kinds, stamp[at]))]
    return at


def windows_of_test(stamps, points, args, epochs=None, hole_after=()):
    """The windows in one test's markers. A window runs from a START marker to the test's
    next END, or to its next START when the END was lost. Its parameter is the START
    marker's argument; a parameter of 128 or more (IDL-b-128, SEO-f-255) continues in a
    PARAM marker that is the test's very next marker, whose argument holds bits 7 and up.

    ``epochs``: the number of holes in the stream before each marker; ``hole_after``: per
    hole, the stamp of the last event before it. A window's parameter is not certain when
    a hole comes right after its START (before the test's next marker, or at any time if
    none follows): a PARAM may be lost there. After a hole, the test's markers up to its
    next START or END lie in one true window whose START may be lost in the hole: they
    form a window of unknown parameter, from the hole on (first stamp: the event before
    the hole)."""
    if epochs is None:
        epochs = np.zeros(len(points), np.int64)
    holes = len(hole_after)
    is_start = points == Point.START
    start = np.flatnonzero(is_start)
    bounds = np.flatnonzero(is_start | (points == Point.END))
    after = np.searchsorted(bounds, start, side="right")
    stop = np.append(bounds, len(points))[after]
    parameter = args[start].astype(np.int64)
    following = np.minimum(start + 1, len(points) - 1)
    next_epoch = np.where(start + 1 < len(points), epochs[following], holes)
    certain = next_epoch == epochs[start]
    continued = (start + 1 < stop) & (points[following] == Point.PARAM) & certain
    parameter[continued] |= args[following[continued]].astype(np.int64) << ARG_BITS
    first = stamps[start]
    # Windows a hole opened: the first marker after a hole, unless it is a START.
    opened = np.flatnonzero(np.diff(epochs, prepend=0) != 0)
    opened = opened[~is_start[opened]]
    if len(opened):
        hole_low = np.asarray(hole_after, np.int64)[epochs[opened] - 1]
        at = np.concatenate([start, opened])
        order = np.argsort(at, kind="stable")
        start = at[order]
        stop = np.concatenate([stop, np.append(bounds, len(points))[
            np.searchsorted(bounds, opened, side="left")]])[order]
        first = np.maximum.accumulate(np.concatenate([first, hole_low])[order])
        parameter = np.concatenate([parameter, np.full(len(opened), -1)])[order]
        certain = np.concatenate([certain, np.zeros(len(opened), bool)])[order]
    last = np.append(stamps, np.iinfo(np.int64).max)[stop]
    # Windows that end at the same bound lie in the first of them (stops never decrease).
    run_start = np.flatnonzero(np.append(True, stop[1:] != stop[:-1]))
    outer = run_start[np.searchsorted(run_start, np.arange(len(start)), side="right") - 1]
    return _Windows(start, stop, first, last, parameter, epochs[start], certain, outer)


def analyze(events, stamp_hz, *, losses=None):
    """Sample tables of every test found in ``events`` (a parser ``Events``), by name, in
    the order their tests' windows first appear. ``stamp_hz``: stamp units per second
    (``Capture.stamp_hz``, ``Identity.stamp_hz``).

    ``losses``: extra stamps where data is known to be missing (added to the LOSS records)."""
    stamp = events.stamp.astype(np.int64, copy=False)
    source, value = events.source, events.value
    hole_at = np.flatnonzero(is_hole(source, value))
    holes = _hole_spans(stamp, source, value, hole_at)
    hole_after = holes[0] + 1          # the stamp of the event before each hole (or int64 min)
    marker_at = _markers_in_time_order(stamp, source)
    tests, points, args = decode(value[marker_at].astype(np.int32) & 0xffff)
    irq_at = np.flatnonzero((source == Source.IRQ) & (value == 1))
    # An event's epoch: the holes before it in the stream.
    irq, irq_epoch = stamp[irq_at], np.searchsorted(hole_at, irq_at)   # one source: in order
    # The kernel's handler-entry markers: positions among all markers, stamps, epochs.
    handler_at = np.flatnonzero((tests == Test.KERNEL) & (points == Point.ISR_ENTRY))
    handler = stamp[marker_at[handler_at]]
    handler_epoch = np.searchsorted(hole_at, marker_at[handler_at])
    ticks = stamp[marker_at[is_tick(tests, points)]]          # stamp order
    lossy_spans = _lossy_spans(stamp, source, value, losses, holes)
    hole_spans = _merged(*holes)

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
                    window = _Windows(bounds[windows.start], bounds[windows.stop],
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
            keep, lossy, by_hole, samples = _pair(a, windows.outer[a_window], b,
                                                  windows.outer[b_window], lossy_spans, hole_spans)
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

