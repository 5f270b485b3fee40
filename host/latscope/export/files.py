"""A capture as logic signals, for sigrok and PulseView, in any of the export formats
(:mod:`latscope.export.formats`: a session file ``.sr`` with the PulseView setup ``.pvs``
beside it, a VCD).

The signals are those of :class:`latscope_defs.channels.Layout` (bit n of a sample word =
channel n: D0..D15, STROBE, IRQ, EDGE0.., LOSS, HOLE, and the second marker lane STROBE2,
D2_0..D2_15 when two markers share a cycle), their levels made by
:class:`latscope.export.levels.LevelTracker`; so the ``latscope_marker`` decoder (sample
delay 0) sees every marker at its stamp and ``latscope_latency`` pairs them exactly as
:func:`latscope.analysis.pairing.analyze` does. One sample is one stamp unit (a capture
clock cycle, or a half or quarter of one on DDR and gearbox boards); sample 0 is stamp
``origin`` (a few before the first event); :class:`ExportInfo` gives it.
"""

import contextlib
import itertools
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from latscope_defs.channels import EXPORT_DATA_BITS, Layout
from latscope_defs.markers import Point, decode
from latscope_defs.protocol import Source, irq_triggered

from ..analysis.pairing import analyze
from ..analysis.spans import LossSpans, merge_spans
from ..capture.batches import BATCH_BYTES, CaptureBatches
from ..capture.conditions import Conditions
from ..capture.file import Capture
from ..events import Events
from .formats import writer_for
from .levels import HOLDBACK, MARGIN, LevelTracker
from .sigrok import condition_options
from .writer import ExportError, Signals, writing

__all__ = ["ExportInfo", "export_capture", "export_windows"]

#: The initial PulseView view: this many seconds per pixel (a 2 us latency is 100 pixels,
#: wide enough for "IL-a-1 2.000 us"), from this long before the first latency sample.
VIEW_SCALE = 20e-9
VIEW_LEAD_SECONDS = 2e-6

#: After the last event the export also shows this long: the marker decoder's annotation
#: of the last marker extends this far (its HOLD_SECONDS) when no marker follows.
TAIL_SECONDS = 10e-6


@dataclass
class ExportInfo:
    layout: Layout
    origin: int  # cycle of sample 0
    samples: int  # samples written
    stamp_hz: int  # samples per second: one per stamp unit
    changes: int  # sample words that differ from the previous one
    markers_dropped: int = 0  # second marker of a cycle
    edges_stretched: int = 0  # repeated levels shown with a one-cycle opposite pulse
    edges_dropped: int = 0  # repeated levels that could not be shown
    context: int = 0  # START / PARAM markers from before the window, repeated
    holes_late: int = 0  # HOLE toggles after an event from before the hole (LevelTracker)
    files: list = field(default_factory=list)
    conditions: Conditions = field(default_factory=Conditions)  # the capture's load, caches

    def summary(self):
        text = (
            f"sample 0 = stamp {self.origin}, {self.samples} samples at "
            f"{self.stamp_hz / 1e6:g} MHz, {self.changes} changes"
        )
        if self.context:
            text += (
                f"; {self.context} marker(s) of the open test (START, PARAM) from before "
                f"the window repeated at samples 1..{self.context}"
            )
        if self.markers_dropped:
            text += f"; {self.markers_dropped} second marker(s) of a cycle not shown"
        if self.edges_stretched or self.edges_dropped:
            text += (
                f"; {self.edges_stretched} edge(s) that repeat a level (the opposite "
                f"edge is not in the capture) shown after a one-cycle pulse, "
                f"{self.edges_dropped} not shown"
            )
        if self.holes_late:
            text += (
                f"; {self.holes_late} hole(s) shown after an event from before them (within "
                "the pin-latency spread)"
            )
        return text

    def as_dict(self):
        """What was written, JSON-ready (``latscope export --json``)."""
        return {
            "files": self.files,
            "origin": self.origin,
            "samples": self.samples,
            "samplerate": self.stamp_hz,
            "changes": self.changes,
            "markers_dropped": self.markers_dropped,
            "edges_stretched": self.edges_stretched,
            "edges_dropped": self.edges_dropped,
            "holes_late": self.holes_late,
            "decoders": self.decoder_stack(),
        }

    def decoder_stack(self):
        """sigrok-cli's ``-P`` for the latscope decoders on the export, latscope_latency
        told what the capture was measured under."""
        return self.layout.decoder_stack(condition_options(self.conditions))

    def decode_command(self, writer):
        """The sigrok-cli command that decodes ``writer``'s file of this export, as it runs
        from the working directory (the decoders' directory given where sigrok would not
        find them: :func:`latscope.hints.sigrok_decoders_prefix`)."""
        from ..hints import sigrok_decoders_prefix

        return (
            f"{sigrok_decoders_prefix()}sigrok-cli -i {writer.path}"
            f"{f' -I {writer.sigrok_input}' if writer.sigrok_input else ''} "
            f"-P {self.decoder_stack()} -A latscope_latency"
        )


def export_capture(capture, outputs, *, start=None, stop=None, batch_bytes=BATCH_BYTES):
    """Exports a capture to ``outputs``: export writers
    (:class:`latscope.export.writer.ExportWriter`, e.g. ``SigrokWriter(path, pvs=False)``)
    or paths (the format by the suffix: :func:`latscope.export.formats.writer_for`).
    ``capture``: a capture file's path, read twice in batches (``batch_bytes`` of stream
    each) in bounded memory, or a loaded :class:`latscope.capture.file.Capture`.
    ``start``/``stop``: only the events of cycles ``[start, stop)`` (levels before the first
    of them are taken as low); the START marker of a test whose window is open at ``start``
    and its PARAM marker (the test context the decoders need to pair what the window holds)
    are repeated at samples 1, 2, ... of the export. Returns :class:`ExportInfo`; raises
    :class:`ExportError` naming the capture or the output file.

    The first pass finds what the levels need from the whole capture (the first and last
    stamps, the loss spans, each channel's level before its first edge), the second makes
    the changes batch by batch and writes them as they come: the files are those of the
    whole capture at once."""
    capture, batches = _batches(capture, batch_bytes)
    _check_window(capture, start, stop)
    survey = _Survey(Layout.for_identity(capture.identity))
    before = OpenWindows()
    for events in batches():
        if start is not None:
            before.feed(BatchMarkers(events), start)
        survey.feed(between(events, start, stop))
    return _write(capture, batches, survey, before, start, stop, outputs)


def export_windows(capture, windows, *, batch_bytes=BATCH_BYTES):
    """Exports many windows of one capture, each as ``export_capture(capture, outputs,
    start=, stop=)`` would (the same files), reading the capture once: ``windows`` is a list
    of dicts with ``start``, ``stop`` and ``outputs``. The events of every window are kept
    in memory until the end of the read (windows are short: a worst sample and its
    context). Returns the :class:`ExportInfo` of each window, in order."""
    capture, batches = _batches(capture, batch_bytes)
    for window in windows:
        _check_window(capture, window["start"], window["stop"])
    layout = Layout.for_identity(capture.identity)
    before = [OpenWindows() for _ in windows]
    pieces = [[] for _ in windows]
    for events in batches():
        if not len(events):
            continue
        stamp = events.stamp.astype(np.int64)
        low, high = int(stamp.min()), int(stamp.max())
        markers = BatchMarkers(events) if any(low < w["start"] for w in windows) else None
        for window, context, into in zip(windows, before, pieces):
            if low < window["start"]:
                context.feed(markers, window["start"])
            if low < window["stop"] and high >= window["start"]:
                into.append(between(events, window["start"], window["stop"]))
    infos = []
    for window, context, into in zip(windows, before, pieces):
        events = Events.concatenate(into) if into else Events.empty()
        survey = _Survey(layout)
        survey.feed(events)
        infos.append(
            _write(
                capture,
                lambda events=events: iter([events]),
                survey,
                context,
                window["start"],
                window["stop"],
                window["outputs"],
            )
        )
    return infos


def _batches(capture, batch_bytes):
    """(the capture, a function that gives an iterator over its events in batches)."""
    if isinstance(capture, Capture):
        return capture, lambda: iter([capture.events])
    capture = CaptureBatches(capture, batch_bytes=batch_bytes)
    return capture, lambda: iter(capture)


def _check_window(capture, start, stop):
    if int(capture.stamp_hz or 0) <= 0:
        raise ExportError(f"{capture.path}: metadata has no capture clock (identity.clock_hz)")
    if start is not None and start < 0:
        raise ExportError(f"--start {start}: a stamp is 0 or more")
    if start is not None and stop is not None and stop <= start:
        raise ExportError(f"--stop {stop} is not after --start {start}: nothing to export")


def _write(capture, batches, survey, before, start, stop, outputs):
    """The second pass of an export: the levels of the events ``batches()`` gives (those
    in ``[start, stop)`` are taken), ``survey`` fed with them all, and the context markers
    of ``before`` (an :class:`OpenWindows` fed with everything before ``start``), written
    to every output."""
    stamp_hz = int(capture.stamp_hz)  # one sample per stamp unit
    writers = [writer_for(output) for output in outputs]
    layout = survey.layout
    if survey.shared_cycles or survey.triggered:  # the lanes the capture needs
        layout = survey.layout = Layout(
            layout.edge_count, second_lane=survey.shared_cycles, delay_lane=survey.triggered
        )
    origin, samples = extent(survey.first, survey.last, stamp_hz, start, stop)
    context = before.context(start, origin) if start is not None else Events.empty()
    view, pending = None, context
    tracker = LevelTracker(layout, spans=survey.spans, initial=survey.initial())
    signals = Signals(
        layout,
        stamp_hz,
        origin,
        tracker.initial,
        comment=f"latscope export of {Path(capture.path).name}: sample 0 = "
        f"stamp {origin}, {stamp_hz} samples/s",
        conditions=Conditions.of_metadata(capture.metadata),
    )
    with contextlib.ExitStack() as stack:
        for writer in writers:
            stack.callback(writer.close)  # closed whatever happens
            with writing(writer.path):
                writer.begin(signals)
        changes = 0
        for events in itertools.chain(batches(), [None]):
            if events is not None:
                events = between(events, start, stop)
                if pending is not None:  # the context comes before the window
                    events, pending = Events.concatenate([pending, events]), None
                if view is None and len(events):  # the first batch with events (a
                    view = _initial_view(events, stamp_hz, origin, samples)  # megabyte)
            piece = tracker.finish() if events is None else tracker.feed(events)
            changes += len(piece)
            for writer in writers:
                with writing(writer.path):
                    writer.add(piece)
        view = view or _initial_view(Events.empty(), stamp_hz, origin, samples)
        for writer in writers:
            with writing(writer.path):
                writer.finish(origin + samples, view)
    info = ExportInfo(
        layout,
        origin,
        samples,
        stamp_hz,
        changes,
        tracker.markers_dropped,
        tracker.edges_stretched,
        tracker.edges_dropped,
        len(context),
        tracker.holes_late,
        conditions=signals.conditions,
    )
    info.files = [path for writer in writers for path in writer.files]
    return info


class _Survey:
    """What the levels need to know of the whole capture before the first change: the
    first and last stamps, the loss spans (:class:`LossSpans`), the first level of every
    1-bit channel (IRQ, edges), whether two markers share a cycle (``shared_cycles``:
    then the layout needs its second marker lane) and whether an IRQ edge is a trigger's
    (``triggered``: then it needs the delay lane). Markers of one source come in stamp
    order and the sources are at most ``holdback`` cycles apart (as ``LevelTracker``
    assumes), so a batch's markers are compared with the previous batches' markers of the
    last ``holdback`` cycles only."""

    def __init__(self, layout, holdback=HOLDBACK):
        self.layout = layout
        self.holdback = holdback
        self.shared_cycles = False
        self.triggered = False
        self._recent_markers = np.empty(0, np.int64)
        self.first = self.last = None
        self.spans = (np.empty(0, np.int64), np.empty(0, np.int64))
        self.first_level = {}  # source -> level of its first event
        self._losses = LossSpans()

    def feed(self, events):
        if not len(events):
            return
        stamp = events.stamp.astype(np.int64)
        low, high = int(stamp.min()), int(stamp.max())
        self.first = low if self.first is None else min(self.first, low)
        self.last = high if self.last is None else max(self.last, high)
        markers = np.concatenate(
            [self._recent_markers, stamp[np.isin(events.source, (Source.MARKER, Source.BUS))]]
        )
        if not self.shared_cycles:
            self.shared_cycles = len(np.unique(markers)) < len(markers)
        self._recent_markers = markers[markers >= self.last - self.holdback]
        if not self.triggered:
            irq = events.value[events.source == Source.IRQ].astype(np.int64)
            self.triggered = bool(irq_triggered(irq).any())
        spans, _ = self._losses.feed(events)
        if len(spans[0]):
            self.spans = merge_spans(self.spans, spans)
        for source in [Source.IRQ] + [
            Source(Source.EDGE0 + n) for n in range(self.layout.edge_count)
        ]:
            if source not in self.first_level:
                at = np.flatnonzero(events.source == source)
                if len(at):
                    self.first_level[source] = int(events.value[at[0]]) & 1

    def initial(self):
        """The levels before the first change, as ``LevelTracker`` sets them when it is fed
        everything at once: each 1-bit channel opposite to its first level, LOSS high if a
        span began before any event."""
        word = 0
        bits = {Source.IRQ: self.layout.bit("IRQ")}
        bits.update(
            {
                Source(Source.EDGE0 + n): self.layout.bit(f"EDGE{n}")
                for n in range(self.layout.edge_count)
            }
        )
        for source, level in self.first_level.items():
            word |= (1 - level) << bits[source]
        if len(self.spans[0]) and self.spans[0][0] == np.iinfo(np.int64).min:
            word |= 1 << self.layout.bit("LOSS")
        return word


def between(events, start, stop):
    """The events of cycles ``[start, stop)`` (None: unbounded)."""
    if start is None and stop is None:
        return events
    stamp = events.stamp.astype(np.int64)
    inside = np.ones(len(events), bool)
    if start is not None:
        inside &= stamp >= start
    if stop is not None:
        inside &= stamp < stop
    return events[inside]


class BatchMarkers:
    """The markers of a batch, decoded once for every window that needs them: ``stamp``,
    ``source``, ``value``, ``points`` and ``by_test`` ([(test, positions in stream
    order)])."""

    def __init__(self, events):
        markers = events.of(Source.MARKER, Source.BUS)
        self.stamp = markers.stamp.astype(np.int64)
        self.source, self.value = markers.source, markers.value
        tests, self.points, _ = decode(self.value.astype(np.int64) & ((1 << EXPORT_DATA_BITS) - 1))
        order = np.argsort(tests, kind="stable")
        edges = np.flatnonzero(np.diff(tests[order], prepend=-1))
        self.by_test = [
            (int(tests[order[begin]]), order[begin:end])
            for begin, end in zip(edges, np.append(edges[1:], len(order)))
        ]


class OpenWindows:
    """Collects, batch by batch, the markers a window from cycle ``start`` needs from before
    it: per test whose window is open there (its last START before ``start`` has no END
    after it), that START and, if the test's next marker is a PARAM (a parameter of 128 or
    more, docs/markers.md), that PARAM."""

    def __init__(self):
        self.open = {}  # test -> [START (stamp, source, value), PARAM or None,
        #          the next marker may still be its PARAM]

    def feed(self, markers, start):
        """Takes the markers of a batch (:class:`BatchMarkers`) that lie before ``start``."""

        def marker(index):
            return (
                int(markers.stamp[index]),
                int(markers.source[index]),
                int(markers.value[index]),
            )

        # Per test, vectorised (every window of export_windows is fed every batch before
        # it): its last START, whether an END follows it, whether the marker right after it
        # is a PARAM.
        for test, group in markers.by_test:
            at = group[markers.stamp[group] < start]
            mine = markers.points[at]
            starts = np.flatnonzero(mine == Point.START)
            if len(starts):
                self.open[test] = [marker(at[starts[-1]]), None, True]
                at, mine = at[starts[-1] + 1 :], mine[starts[-1] + 1 :]
            state = self.open.get(test)
            if state is None or not len(mine):
                continue
            if mine[0] == Point.PARAM and state[2]:
                state[1] = marker(at[0])
            state[2] = False
            if np.any(mine == Point.END):
                del self.open[test]  # that window closed before the export

    def context(self, start, origin):
        """The collected markers, in stream order, placed at cycles ``origin + 1``, ... (sample
        0 shows no edge), before any event of the window (``extent`` leaves ``MARGIN``
        cycles)."""
        kept = sorted(
            marker
            for start_marker, param, _ in self.open.values()
            for marker in (start_marker, param)
            if marker is not None
        )
        if len(kept) >= MARGIN:
            raise ExportError(
                f"--start {start}: {len(kept)} context markers do not fit before the window"
            )
        return Events(
            origin + 1 + np.arange(len(kept), dtype=np.uint64),
            np.array([m[1] for m in kept], np.uint8),
            np.array([m[2] for m in kept], np.uint64),
        )


def _initial_view(events, stamp_hz, origin, samples):
    """PulseView's first view: zoomed in on the first latency sample of ``events`` (the
    export's first batch), so that its annotation is readable (VIEW_SCALE); the whole
    export, fitted into about 1500 pixels, if it has none."""
    starts = [
        int(table.starts[0]) for table in analyze(events, stamp_hz).values() if len(table.starts)
    ]
    if not starts:
        return {"scale": samples / stamp_hz / 1500, "offset": 0}
    lead = (min(starts) - origin) / stamp_hz - VIEW_LEAD_SECONDS
    return {"scale": VIEW_SCALE, "offset": max(0.0, lead)}


def extent(first, last, stamp_hz, start, stop):
    """(origin, samples): the cycles exported, a margin around the events (stamps
    ``first`` to ``last``; None: no events) unless given."""
    if first is not None:
        origin = first - MARGIN if start is None else min(start, first - MARGIN)
        tail = MARGIN + math.ceil(TAIL_SECONDS * stamp_hz)
        end = last + tail if stop is None else stop
    else:
        origin = start or 0
        end = stop if stop is not None else origin + 2 * MARGIN
    return origin, max(end - origin, 1)
