"""A capture file analysed in bounded memory: its events read in batches, its tables
accumulated (:mod:`latscope.batch_analysis`), and what the reports say about the run.

:class:`CaptureBatches` reads a capture file's events in batches of about ``batch_events``
(each iteration reads the file again, as the second pass of the analysis needs);
:func:`analyze_capture` gives a :class:`CaptureSummary` (the run without its events) and the
tables as :class:`~latscope.accumulate.TableAccumulator`. Memory does not grow with the
number of events: one batch, the pending events of the analysis, and per table its value
counts, first samples and envelope.
"""

import multiprocessing
from dataclasses import dataclass, field

import numpy as np

from .batch_analysis import analyze_batches
from .capture_file import (CHUNK_OVERHEAD, GAP, Capture, CaptureFileError, CaptureReader,
                           _FILE_HEADER, parser_for)
from .parser import Events

__all__ = ["BATCH_EVENTS", "CaptureBatches", "CaptureSummary", "analyze_capture",
           "latency_skew"]

#: Events per batch (about 6 MB of arrays).
BATCH_EVENTS = 1 << 18


def latency_skew(identity):
    """The most an event's (pin-latency corrected) stamp can fall below an earlier event's:
    the spread of the pin latencies, LOSS records (not corrected) counting as 0."""
    cycles = [int(c) for c in identity.latency.values()] + [0]
    return max(cycles) - min(cycles)


class CaptureBatches:
    """The events of a capture file in batches, in stream order (iterable again and again).
    After an iteration: ``parser_stats``, ``file_stats`` and ``end`` as in ``Capture``.

    ``background``: read and parse in a helper process, so that parsing (about half the
    work of an analysis) runs on another core while the caller works on the previous batch;
    at most two batches are on their way at a time."""

    def __init__(self, path, *, batch_events=BATCH_EVENTS, background=False):
        self.path = str(path)
        self.batch_events = batch_events
        self.background = background
        reader = CaptureReader(path)
        reader.close()
        self.metadata = reader.metadata
        self.parser_stats = self.file_stats = self.end = None
        self.stamp_hz = CaptureSummary(self.path, self.metadata, None, None).stamp_hz

    def _parser(self):
        try:
            return parser_for(self.metadata)
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise CaptureFileError(self.path, _FILE_HEADER.size + CHUNK_OVERHEAD,
                                   f"METADATA identity unusable: {error!r}") from None

    def __iter__(self):
        if self.background:
            return self._from_helper()
        return self._read()

    def _read(self):
        parser = self._parser()
        reader = CaptureReader(self.path)
        parts, count = [], 0
        try:
            for item in reader:
                if item is GAP:
                    parser.gap()
                    continue
                events = parser.feed(item)
                if len(events):
                    parts.append(events)
                    count += len(events)
                if count >= self.batch_events:
                    yield Events.concatenate(parts)
                    parts, count = [], 0
            parts.append(parser.finish())
            last = Events.concatenate(parts)
            if len(last):
                yield last
        finally:
            reader.close()
        self.parser_stats, self.file_stats, self.end = parser.stats, reader.stats, reader.end

    def _from_helper(self):
        """Batches from a helper process that runs :meth:`_read` (over a pipe: the three
        arrays of a batch as bytes, then the statistics, or the reading error)."""
        receive, send = multiprocessing.get_context("fork").Pipe(duplex=False)
        helper = multiprocessing.get_context("fork").Process(
            target=self._serve, args=(send,), daemon=True)
        helper.start()
        send.close()
        try:
            while True:
                kind = receive.recv()
                if kind == "batch":
                    stamp, source, value = (receive.recv_bytes() for _ in range(3))
                    yield Events(np.frombuffer(stamp, np.uint64),
                                 np.frombuffer(source, np.uint8),
                                 np.frombuffer(value, np.uint64))
                elif kind == "error":
                    raise CaptureFileError(*receive.recv())
                else:
                    self.parser_stats, self.file_stats, self.end = receive.recv()
                    return
        finally:
            receive.close()
            if helper.is_alive():
                helper.kill()
            helper.join()

    def _serve(self, send):
        try:
            for events in self._read():
                send.send("batch")
                for column in (events.stamp, events.source, events.value):
                    send.send_bytes(np.ascontiguousarray(column))
            send.send("done")
            send.send((self.parser_stats, self.file_stats, self.end))
        except CaptureFileError as error:
            send.send("error")
            send.send((error.path, error.offset, error.reason))
        except (BrokenPipeError, KeyboardInterrupt):
            pass                               # the reader stopped early
        finally:
            send.close()

    def summary(self, event_count):
        """``Capture.summary``'s line after an iteration that read ``event_count`` events."""
        return CaptureSummary(self.path, self.metadata, self.parser_stats, self.file_stats,
                              self.end, event_count).summary()


@dataclass
class CaptureSummary:
    """A capture without its events: what ``Capture`` says about the run (``metadata``,
    ``parser_stats``, ``file_stats``, ``end``, and ``identity``, ``clock_hz``, ``stamp_hz``)
    plus ``event_count`` and the first and last stamps."""
    path: str
    metadata: dict
    parser_stats: object
    file_stats: object
    end: dict = None
    event_count: int = 0
    stamp_min: int = None
    stamp_max: int = None
    passes: int = 1                      # file reads the analysis needed
    _capture: Capture = field(default=None, repr=False)

    def __post_init__(self):
        self._capture = Capture(self.path, self.metadata, Events.empty(), self.parser_stats,
                                self.file_stats, self.end)

    @classmethod
    def of_capture(cls, capture):
        stamps = capture.events.stamp
        return cls(capture.path, capture.metadata, capture.parser_stats, capture.file_stats,
                   capture.end, len(stamps), int(stamps.min()) if len(stamps) else None,
                   int(stamps.max()) if len(stamps) else None, 0)

    summary = Capture.summary                  # the same line, from the counts
    identity = property(lambda self: self._capture.identity)
    clock_hz = property(lambda self: self._capture.clock_hz)
    stamp_hz = property(lambda self: self._capture.stamp_hz)

    @property
    def duration_s(self):
        """Seconds from the first to the last event (0 with fewer than two)."""
        if self.event_count < 2 or not self.stamp_hz:
            return 0.0
        return float(self.stamp_max - self.stamp_min) / self.stamp_hz


def analyze_capture(path, *, interval_s=60.0, batch_events=BATCH_EVENTS, background=True):
    """``(CaptureSummary, {name: TableAccumulator})`` of a capture file, in bounded memory;
    the tables keep their maximum per ``interval_s`` seconds (None: not kept).
    ``background``: parse in a helper process (:class:`CaptureBatches`)."""
    batches = CaptureBatches(path, batch_events=batch_events, background=background)
    probe = CaptureSummary(batches.path, batches.metadata, None, None)
    stamp_hz = probe.stamp_hz
    if not stamp_hz:
        raise CaptureFileError(path, _FILE_HEADER.size + CHUNK_OVERHEAD,
                               "METADATA has no capture clock (identity clock_hz)")
    interval = max(1, int(interval_s * stamp_hz)) if interval_s else None
    reads = []

    def read():
        reads.append(1)
        return iter(batches)

    analysis = analyze_batches(read, stamp_hz, skew=latency_skew(probe.identity),
                               interval_stamps=interval)
    summary = CaptureSummary(batches.path, batches.metadata, batches.parser_stats,
                             batches.file_stats, batches.end, analysis.events,
                             analysis.stamp_min, analysis.stamp_max, len(reads))
    return summary, analysis.ordered_tables()

