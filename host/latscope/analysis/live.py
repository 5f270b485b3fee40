"""Statistics of a capture while it runs, in bounded memory, for overnight runs: the rules of
:func:`latscope.analysis.pairing.analyze` applied to events as they arrive
(:class:`StreamingAnalyzer`, a :class:`StreamingTable` per table).
"""

from dataclasses import dataclass, field

import numpy as np

from latscope_defs.markers import Point, Test, decode

from ..events import Events
from .pairing import analyze
from .rules import MARKER_SOURCES, RULES
from .spans import is_hole
from .statistics import percentile_supported
from .windows import windows_of_test

__all__ = ["StreamingTable", "StreamingAnalyzer"]


@dataclass
class StreamingTable:
    """Running statistics of one sample table (samples in stamp units, ``stamp_hz`` per
    second).

    Per table, :class:`StreamingTable` keeps exact count, min, max, sum and sum of squares
    (Python integers: mean and standard deviation are exact), a histogram in clock ticks and the
    maximum per interval of capture time (e.g. per minute: the worst case that comes once an
    hour). The histogram starts one tick per bin and doubles its bin width when a sample would
    need more than ``max_bins`` bins, so it stays bounded too.
    """
    name: str
    stamp_hz: float
    interval_stamps: int                 # width of one max-over-time interval, in stamp units
    max_bins: int = 4096
    count: int = 0
    discarded: int = 0
    min: int = None
    max: int = None
    total: int = 0
    total_squares: int = 0
    bin_width: int = 1                   # ticks per histogram bin (a power of two)
    histogram: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    interval_max: dict = field(default_factory=dict)   # interval index -> max sample (stamp units)
    parameters: dict = field(default_factory=dict)
    origin: int = None                   # stamp intervals are counted from

    def add(self, samples, starts):
        """Adds samples (stamp units) with the stamps they started at."""
        samples = np.asarray(samples, np.int64)
        if not len(samples):
            return
        self.count += len(samples)
        low, high = int(samples.min()), int(samples.max())
        self.min = low if self.min is None else min(self.min, low)
        self.max = high if self.max is None else max(self.max, high)
        self.total += int(samples.sum())
        # Squares can pass 2**63 in a long run: sum them as Python integers, per piece.
        self.total_squares += sum(int(v) * int(v) for v in samples.tolist()) \
            if high >= 1 << 31 else int(np.dot(samples, samples))
        self._histogram(samples, high)
        self._intervals(samples, np.asarray(starts, np.int64))

    def _histogram(self, samples, high):
        while high // self.bin_width >= self.max_bins:
            pairs = np.zeros(2 * ((len(self.histogram) + 1) // 2), np.int64)
            pairs[:len(self.histogram)] = self.histogram
            self.histogram = pairs.reshape(-1, 2).sum(axis=1)
            self.bin_width *= 2
        counts = np.bincount(samples // self.bin_width)
        if len(counts) > len(self.histogram):
            counts[:len(self.histogram)] += self.histogram
            self.histogram = counts
        else:
            self.histogram[:len(counts)] += counts

    def _intervals(self, samples, starts):
        if self.origin is None:
            self.origin = int(starts[0])
        index = (starts - self.origin) // self.interval_stamps
        for slot in np.unique(index).tolist():
            worst = int(samples[index == slot].max())
            if worst > self.interval_max.get(slot, -1):
                self.interval_max[slot] = worst

    # --- results ----------------------------------------------------------------------

    def _ns(self, stamps):
        return stamps * 1e9 / self.stamp_hz

    @property
    def mean(self):
        return self.total / self.count if self.count else None

    def stats(self):
        """count/min/max/avg/std in ns, as ``SampleTable.stats`` has them (no percentiles:
        those need the histogram, see :meth:`percentile_ns`)."""
        if not self.count:
            return {"samples": 0, "discarded": self.discarded}
        variance = self.total_squares / self.count - self.mean ** 2
        return {"samples": self.count, "min_ns": self._ns(self.min),
                "max_ns": self._ns(self.max), "avg_ns": self._ns(self.mean),
                "std_ns": self._ns(max(variance, 0.0) ** 0.5),
                "p99_ns": self.percentile_ns(99) if percentile_supported(99, self.count)
                else None, "discarded": self.discarded}

    def percentile_ns(self, q):
        """Percentile from the histogram: the upper edge of the bin it falls in (exact when
        bins are one tick wide)."""
        if not self.count:
            return None
        rank = np.searchsorted(np.cumsum(self.histogram), self.count * q / 100.0)
        upper = min((int(rank) + 1) * self.bin_width - 1, self.max)
        return self._ns(upper)

    def max_over_time(self):
        """(interval seconds, max latency ns per interval; NaN where no sample)."""
        slots = max(self.interval_max) + 1 if self.interval_max else 0
        maxima = np.full(slots, np.nan)
        for slot, cycles in self.interval_max.items():
            maxima[slot] = self._ns(cycles)
        return self.interval_stamps / self.stamp_hz, maxima


_RULES_PER_TEST = {}
_HANDLER_RULES_PER_TEST = {}          # rules that need the kernel's handler-entry markers
for _rule in RULES:
    _RULES_PER_TEST[_rule.test] = _RULES_PER_TEST.get(_rule.test, 0) + 1
    if "handler" in (_rule.start, _rule.end):
        _HANDLER_RULES_PER_TEST[_rule.test] = _HANDLER_RULES_PER_TEST.get(_rule.test, 0) + 1


class StreamingAnalyzer:
    """Feeds events in order; keeps :class:`StreamingTable` per table name in ``tables``.

    ``interval``: seconds per max-over-time interval; ``max_pending``: most events held
    between two feeds (see the module doc).

    :class:`StreamingAnalyzer` takes events in pieces as they arrive (``feed``) and applies the
    very rules of :func:`latscope.analysis.pairing.analyze` to them: it analyses the events it
    holds, takes the samples that are new, and keeps only what later samples can still need: the
    events after each running table's last sample (a start event waiting for its end) and the
    START and PARAM markers of the test windows still open. So memory does not grow with the
    capture, and each piece is analysed once (with the events held from before): a sample or
    discarded pair is new when it starts after the last one counted.

    If a table never completes a sample (a broken test, a stuck DUT), the events held for it
    would grow without end: past ``max_pending`` events the oldest are let go and counted in
    ``events_released`` (samples spanning them are lost, never wrong).
    """

    def __init__(self, stamp_hz, *, interval=60.0, max_bins=4096, max_pending=1 << 21):
        self.stamp_hz = stamp_hz
        self.interval_stamps = max(1, int(interval * stamp_hz))
        self.max_bins = max_bins
        self.max_pending = max_pending
        self.tables = {}
        self.events_seen = 0
        self.events_released = 0
        self.running = set()                  # test names whose window is open
        self._held = Events.empty()
        self._last_start = {}                 # table -> stamp of its last counted sample
        self._last_discarded = {}             # table -> start of its last counted discarded pair
        self._handler_tables = False          # the kernel's markers came: ILH tables exist

    def feed(self, events):
        """Adds the next events (a parser ``Events``, in stamp order)."""
        if not len(events):
            return
        self.events_seen += len(events)
        buffer = Events.concatenate([self._held, events])
        tables = analyze(buffer, self.stamp_hz)
        self._handler_tables |= any(name.startswith("ILH-") for name in tables)
        for name, table in tables.items():
            self._count(name, table)
        self._hold(buffer, tables)

    def _count(self, name, table):
        state = self.tables.get(name)
        if state is None:
            state = self.tables[name] = StreamingTable(
                name, self.stamp_hz, self.interval_stamps, self.max_bins,
                parameters=dict(table.parameters))
        last = self._last_start.get(name, -1)
        new = table.starts > last
        state.add(table.samples[new], table.starts[new])
        if new.any():
            self._last_start[name] = int(table.starts[new][-1])
        dropped = table.discarded_starts > self._last_discarded.get(name, -1)
        state.discarded += int(np.count_nonzero(dropped))
        if dropped.any():
            self._last_discarded[name] = int(table.discarded_starts[dropped][-1])

    def _open_windows(self, buffer):
        """{test: buffer indices of its open window's START marker (and of the PARAM marker
        after it, if any)}. A window is open while no END (or next START) of its test has
        come: the windows of :func:`latscope.analysis.windows.windows_of_test`."""
        marker_at = np.flatnonzero(np.isin(buffer.source, [int(s) for s in MARKER_SOURCES]))
        tests, points, args = decode(buffer.value[marker_at].astype(np.int32) & 0xffff)
        stamps = buffer.stamp.astype(np.int64)[marker_at]
        open_at = {}
        for test in np.unique(tests).tolist():
            mine = np.flatnonzero(tests == test)
            windows = windows_of_test(stamps[mine], points[mine], args[mine])
            if len(windows.start) and windows.stop[-1] == len(mine):
                start = int(windows.start[-1])
                param = start + 1 < len(mine) and points[mine[start + 1]] == Point.PARAM
                open_at[test] = marker_at[mine[start:start + 1 + param]].tolist()
        return open_at

    def _hold(self, buffer, tables):
        """Keeps what later samples can need: events after the earliest open table's last
        sample, and the START (+ PARAM) markers of open windows."""
        windows = self._open_windows(buffer)
        self.running = {Test(test).name for test in windows}
        stamps = buffer.stamp.astype(np.int64)
        keep_from = int(stamps[-1]) + 1 if len(stamps) else 0
        pinned = []
        for test, markers in windows.items():
            start_stamp = int(stamps[markers[0]])
            pinned += markers
            mine = [t for t in tables.values() if t.parameters.get("test") == Test(test).name
                    and len(t.starts) and t.starts[-1] > start_stamp]
            rules = _RULES_PER_TEST.get(test, 0)
            if not self._handler_tables:       # analyze makes no ILH table without them
                rules -= _HANDLER_RULES_PER_TEST.get(test, 0)
            if len(mine) < rules:
                keep_from = min(keep_from, start_stamp + 1)   # a table has no sample yet
            for table in mine:
                keep_from = min(keep_from, int(table.starts[-1] + table.samples[-1]))
        if pinned:
            # A hole after an open window's START ends what that window attributes: the
            # next analysis must see it, or events after it would join the window.
            holes = np.flatnonzero(is_hole(buffer.source, buffer.value))
            pinned += holes[holes > min(pinned)].tolist()
        keep = stamps >= keep_from
        keep[np.asarray(pinned, np.int64)] = True
        if np.count_nonzero(keep) > self.max_pending:
            tail = np.flatnonzero(keep)[-self.max_pending:]
            self.events_released += int(np.count_nonzero(keep)) - len(tail)
            keep[:] = False
            keep[tail] = True
            keep[np.asarray(pinned, np.int64)] = True
        self._held = buffer[keep]

    def summary(self):
        """{table: stats} of every table so far."""
        return {name: table.stats() for name, table in self.tables.items()}

    @property
    def held(self):
        """Events currently held for samples to come (bounded by ``max_pending``)."""
        return len(self._held)
