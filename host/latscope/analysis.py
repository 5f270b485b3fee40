"""The rules that turn stamped events into latency samples, and the sample tables.

One module, described in ``docs/tests.md``; the CLI, the reports and the sigrok decoder all use
it. Everything is vectorised over numpy arrays of stamps (cycles, pin-corrected).

A test runs between its START and END markers. Inside that window a *pairing rule* makes one
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
from .protocol import Source

__all__ = ["RULES", "Rule", "SampleTable", "analyze", "tables_as_rows"]

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
    """Samples of one table, in cycles, in capture order, with their start stamps."""
    name: str
    clock_hz: float
    samples: np.ndarray                     # int64 cycles
    starts: np.ndarray                      # int64 stamp of each sample's first event
    discarded: int = 0                      # pairs dropped because of a loss between them
    parameters: dict = field(default_factory=dict)

    def ns(self):
        return self.samples * (1e9 / self.clock_hz)

    def stats(self):
        """Number of samples, min / max / average (the reference report's table), standard
        deviation and percentiles, in ns."""
        ns = self.ns()
        if not len(ns):
            return {"samples": 0, "discarded": self.discarded}
        return {
            "samples": int(len(ns)),
            "min_ns": float(ns.min()),
            "max_ns": float(ns.max()),
            "avg_ns": float(ns.mean()),
            "std_ns": float(ns.std()),
            "p50_ns": float(np.percentile(ns, 50)),
            "p99_ns": float(np.percentile(ns, 99)),
            "p999_ns": float(np.percentile(ns, 99.9)),
            "discarded": self.discarded,
        }


def _pair(a, b, lossy_spans):
    """Samples from each stamp in ``a`` to the first stamp in ``b`` after it, when no other
    ``a`` comes in between and the pair overlaps no span of :func:`_lossy_spans`. Returns
    (start stamps, samples, discarded count)."""
    if not len(a) or not len(b):
        return np.empty(0, np.int64), np.empty(0, np.int64), 0
    index = np.searchsorted(b, a, side="right")
    has_end = index < len(b)
    end = np.where(has_end, b[np.minimum(index, len(b) - 1)], 0)
    next_a = np.append(a[1:], np.iinfo(np.int64).max)
    # An A in the very cycle of B does not steal B (ties are impossible within one source).
    paired = has_end & (end <= next_a)
    low, high = lossy_spans
    # The first span that ends after A; the pair is lossy if that span starts before B.
    first = np.searchsorted(high, a, side="right")
    lossy = first < len(high)
    lossy[lossy] = low[first[lossy]] < end[lossy]
    keep = paired & ~lossy
    return a[keep], (end - a)[keep], int(np.count_nonzero(paired & lossy))


def _lossy_spans(stamp, source, value, extra):
    """Sorted, disjoint stamp spans (low, high) in which lost events may lie: for every LOSS
    record of source X, from the stamp of X's previous event in the stream (none: from the
    start) to the LOSS record's stamp; plus a point span for every stamp in ``extra``. A
    lost event's stamp t satisfies low < t < high; a pair (A, B) is lossy when some span
    has low < B and high > A."""
    is_loss = source == Source.LOSS
    at = np.flatnonzero(is_loss)
    lost_source = (value[is_loss] & 0xF).astype(np.int64)
    low = np.full(len(at), np.iinfo(np.int64).min, np.int64)
    for lost in np.unique(lost_source):
        of_source = np.flatnonzero(source == lost)
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


def _windows(stamps, tests, points, args):
    """(test, parameter, first stamp, last stamp) of every START..END window.

    The parameter is the START marker's argument; a parameter of 128 or more (IDL-b-128,
    SEO-f-255) continues in a PARAM marker that is the test's very next marker, whose
    argument holds the parameter's bits 7 and up."""
    windows = []
    starts = np.flatnonzero(points == Point.START)
    ends = np.flatnonzero(points == Point.END)
    for start in starts:
        test = tests[start]
        later = ends[(ends > start) & (tests[ends] == test)]
        stop = stamps[later[0]] if len(later) else np.iinfo(np.int64).max
        parameter = int(args[start])
        following = np.flatnonzero(tests[start + 1:] == test)
        if len(following) and points[start + 1 + following[0]] == Point.PARAM:
            parameter |= int(args[start + 1 + following[0]]) << ARG_BITS
        windows.append((int(test), parameter, int(stamps[start]), int(stop)))
    return windows


def analyze(events, clock_hz, *, losses=None):
    """Sample tables of every test found in ``events`` (a parser ``Events``), by name.

    ``losses``: extra stamps where data is known to be missing (added to the LOSS records)."""
    stamp = events.stamp.astype(np.int64)
    source = events.source
    is_marker = np.isin(source, [int(s) for s in MARKER_SOURCES])
    m_stamp = stamp[is_marker]
    tests, points, args = decode(events.value[is_marker].astype(np.int64) & 0xffff)
    irq = np.sort(stamp[(source == Source.IRQ) & (events.value == 1)])
    lossy_spans = _lossy_spans(stamp, source, events.value.astype(np.int64), losses)

    tables = {}
    for test, parameter, first, last in _windows(m_stamp, tests, points, args):
        inside = (m_stamp > first) & (m_stamp < last) & (tests == test)

        def stamps_of(kind):
            if kind == "irq":
                return irq[(irq > first) & (irq < last)]
            return m_stamp[inside & (points == kind)]

        for rule in RULES:
            if rule.test != test:
                continue
            name = rule.name.format(n=parameter)
            begin, samples, discarded = _pair(stamps_of(rule.start), stamps_of(rule.end),
                                             lossy_spans)
            table = tables.get(name)
            if table is None:
                tables[name] = SampleTable(name, clock_hz, samples, begin, discarded,
                                           {"test": Test(test).name, "n": parameter})
            else:
                table.samples = np.concatenate([table.samples, samples])
                table.starts = np.concatenate([table.starts, begin])
                table.discarded += discarded
    return tables


def tables_as_rows(tables):
    """Rows for text/CSV/JSON output: one dict per table."""
    return [{"test": name, **table.stats()} for name, table in tables.items()]
