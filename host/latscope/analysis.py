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
"""

from dataclasses import dataclass, field

import numpy as np

from .markers import ARG_BITS, Point, Test, decode
from .protocol import Source, loss_source

__all__ = ["RULES", "Rule", "SampleTable", "analyze", "windows_of_test"]

#: Marker values reach the host from the trace port (MARKER) or the bus window (BUS).
MARKER_SOURCES = (Source.MARKER, Source.BUS)


@dataclass(frozen=True)
class Rule:
    """One sample table of a test: ``name`` (``{n}`` = the START marker's argument), the
    event that starts a sample and the event that ends it. An event is ``"irq"`` (an
    asserting IRQ edge) or a marker :class:`Point`."""
    test: Test
    name: str
    start: object
    end: object


RULES = [
    Rule(Test.IL_A, "IL-a-1", "irq", Point.ISR_ENTRY),
    Rule(Test.IL_A, "IDL-a-1", Point.ISR_EXIT, Point.THREAD),
    Rule(Test.IDL_B, "IL-b-{n}", "irq", Point.ISR_ENTRY),
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

    def ns(self):
        return self.samples * (1e9 / self.stamp_hz)

    def stats(self):
        """Number of samples, min / max / average (the reference report's table), standard
        deviation and percentiles, in ns: :func:`latscope.accumulate.stats_of_counts` (the
        method the bounded analysis uses too)."""
        from .accumulate import stats_of_counts
        values, counts = np.unique(self.samples, return_counts=True)
        return stats_of_counts(values, counts, self.stamp_hz, self.discarded)


def _pair(a, a_window, b, b_window, lossy_spans):
    """Samples from each stamp in ``a`` to the first stamp in ``b`` after it in the same
    window, when no other ``a`` comes in between and the pair overlaps no span of
    :func:`_lossy_spans`. Stamps are sorted and so are their window numbers. Returns, over
    ``a``: the mask of kept samples, the mask of pairs discarded for a loss between them,
    and every A's length to its B (meaningful where one of the masks is set)."""
    none = np.zeros(len(a), bool)
    if not len(a) or not len(b):
        return none, none, np.zeros(len(a), np.int64)
    index = np.searchsorted(b, a, side="right")
    clipped = np.minimum(index, len(b) - 1)
    has_end = (index < len(b)) & (b_window[clipped] == a_window)
    end = np.where(has_end, b[clipped], 0)
    same_window_next = np.append(a_window[1:] == a_window[:-1], False)
    next_a = np.where(same_window_next, np.append(a[1:], 0), np.iinfo(np.int64).max)
    # An A in the very cycle of B does not steal B (ties are impossible within one source).
    paired = has_end & (end <= next_a)
    low, high = lossy_spans
    # The first span that ends after A; the pair is lossy if that span starts before B.
    first = np.searchsorted(high, a, side="right")
    lossy = first < len(high)
    lossy[lossy] = low[first[lossy]] < end[lossy]
    return paired & ~lossy, paired & lossy, end - a


def _lossy_spans(stamp, source, value, extra):
    """Sorted, disjoint stamp spans (low, high) in which lost events may lie: for every LOSS
    record of source X, from the stamp of X's previous event in the stream (none: from the
    start) to the LOSS record's stamp; plus a point span for every stamp in ``extra``. A
    lost event's stamp t satisfies low < t < high; a pair (A, B) is lossy when some span
    has low < B and high > A."""
    is_loss = source == Source.LOSS
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
    extra = np.asarray(extra if extra is not None else [], np.int64)
    low, high = np.concatenate([low, extra]), np.concatenate([high, extra])
    if not len(low):
        return low, high
    # Merge overlapping spans: sorted by start, a span joins the previous group unless it
    # starts after everything before it has ended.
    order = np.argsort(low, kind="stable")
    low, high = low[order], np.maximum.accumulate(high[order])
    starts = np.flatnonzero(np.append(True, low[1:] > high[:-1]))
    ends = np.append(starts[1:], len(low)) - 1
    return low[starts], high[ends]


@dataclass
class _Windows:
    """The START windows of one test, in order: marker positions (within the test's
    markers) of START and of the window's end, stamps of both, and the parameter."""
    start: np.ndarray
    stop: np.ndarray
    first: np.ndarray
    last: np.ndarray
    parameter: np.ndarray

    def of_markers(self, positions):
        """The window of each marker position (-1: in none)."""
        window = np.searchsorted(self.start, positions, side="right") - 1
        inside = (window >= 0) & (positions < self.stop[np.maximum(window, 0)])
        return np.where(inside, window, -1)

    def of_stamps(self, stamps):
        """The window of each (sorted) stamp strictly between a START and its end (-1: none)."""
        window = np.searchsorted(self.first, stamps, side="right") - 1
        inside = (window >= 0) & (stamps < self.last[np.maximum(window, 0)])
        return np.where(inside, window, -1)


def windows_of_test(stamps, points, args):
    """The windows in one test's markers. A window runs from a START marker to the test's
    next END, or to its next START when the END was lost. Its parameter is the START
    marker's argument; a parameter of 128 or more (IDL-b-128, SEO-f-255) continues in a
    PARAM marker that is the test's very next marker, whose argument holds bits 7 and up."""
    start = np.flatnonzero(points == Point.START)
    bounds = np.flatnonzero((points == Point.START) | (points == Point.END))
    after = np.searchsorted(bounds, start, side="right")
    stop = np.append(bounds, len(points))[after]
    last = np.append(stamps, np.iinfo(np.int64).max)[stop]
    parameter = args[start].astype(np.int64)
    following = np.minimum(start + 1, len(points) - 1)
    continued = (start + 1 < stop) & (points[following] == Point.PARAM)
    parameter[continued] |= args[following[continued]].astype(np.int64) << ARG_BITS
    return _Windows(start, stop, stamps[start], last, parameter)


def analyze(events, stamp_hz, *, losses=None):
    """Sample tables of every test found in ``events`` (a parser ``Events``), by name, in
    the order their tests' windows first appear. ``stamp_hz``: stamp units per second
    (``Capture.stamp_hz``, ``Identity.stamp_hz``).

    ``losses``: extra stamps where data is known to be missing (added to the LOSS records)."""
    stamp = events.stamp.astype(np.int64, copy=False)
    source, value = events.source, events.value
    marker_at = np.flatnonzero((source == Source.MARKER) | (source == Source.BUS))
    tests, points, args = decode(value[marker_at].astype(np.int32) & 0xffff)
    irq = stamp[(source == Source.IRQ) & (value == 1)]          # one source: in stamp order
    lossy_spans = _lossy_spans(stamp, source, value, losses)

    # The markers of each test, in stream order (a radix sort on the small test number).
    order = np.argsort(tests.astype(np.uint8), kind="stable")
    test_of = tests[order]
    edges = np.flatnonzero(np.append(True, test_of[1:] != test_of[:-1]))[:len(order)]
    found = []                            # (first START position, rule index, name, table)
    for begin, end in zip(edges, np.append(edges[1:], len(order))):
        test = int(test_of[begin])
        rules = [(index, rule) for index, rule in enumerate(RULES) if rule.test == test]
        mine = order[begin:end]
        m_stamp, m_points = stamp[marker_at[mine]], points[mine]
        windows = windows_of_test(m_stamp, m_points, args[mine])
        if not rules or not len(windows.start):
            continue
        of_point = {}                     # point -> (stamps, windows), computed once

        def stamps_of(kind):
            """Stamps of an event kind inside the windows, and their window numbers."""
            if kind == "irq":
                window = windows.of_stamps(irq)
                return irq[window >= 0], window[window >= 0]
            if kind not in of_point:
                at = np.flatnonzero(m_points == kind)
                window = windows.of_markers(at)
                of_point[kind] = m_stamp[at[window >= 0]], window[window >= 0]
            return of_point[kind]

        for index, rule in rules:
            (a, a_window), (b, b_window) = stamps_of(rule.start), stamps_of(rule.end)
            keep, lossy, samples = _pair(a, a_window, b, b_window, lossy_spans)
            names = np.array([rule.name.format(n=int(n)) for n in windows.parameter])
            distinct = dict.fromkeys(names.tolist())
            for name in distinct:
                of_name = np.flatnonzero(names == name)
                in_table = keep if len(distinct) == 1 else keep & np.isin(a_window, of_name)
                lost = lossy if len(distinct) == 1 else lossy & np.isin(a_window, of_name)
                table = SampleTable(name, stamp_hz, samples[in_table], a[in_table],
                                    int(np.count_nonzero(lost)),
                                    {"test": Test(test).name,
                                     "n": int(windows.parameter[of_name[0]])}, a[lost])
                found.append((int(mine[windows.start[of_name[0]]]), index, name, table))
    # Every name is one test's (its rules' names differ), so each table was made whole.
    return {name: table for _, _, name, table in sorted(found, key=lambda item: item[:2])}

