"""A capture as logic signals, for sigrok and PulseView: a session file (``.sr``, with the
PulseView setup ``.pvs`` beside it) and/or a VCD.

The signals are those of :class:`latscope.channels.Layout` (bit n of a sample word =
channel n: D0..D15, STROBE, IRQ, EDGE0.., LOSS), their levels made by
:class:`latscope.levels.LevelTracker`; so the ``latscope_marker`` decoder (sample delay 0)
sees every marker at its stamp and ``latscope_latency`` pairs them exactly as
:func:`latscope.analysis.analyze` does. Sample 0 is cycle ``origin`` (a few cycles before the
first event); :class:`ExportInfo` gives it.
"""

import contextlib
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .analysis import analyze
from .channels import EXPORT_DATA_BITS, Layout
from .levels import MARGIN, LevelTracker
from .markers import Point, decode
from .parser import Events
from .protocol import Source
from .sigrok_session import write_pvs, write_sr
from .vcd import VcdError, VcdWriter

__all__ = ["ExportInfo", "ExportError", "export_capture"]

#: The initial PulseView view: this many seconds per pixel (a 2 us latency is 100 pixels,
#: wide enough for "IL-a-1 2.000 us"), from this long before the first latency sample.
VIEW_SCALE = 20e-9
VIEW_LEAD_SECONDS = 2e-6

#: After the last event the export also shows this long: the marker decoder's annotation
#: of the last marker extends this far (its HOLD_SECONDS) when no marker follows.
TAIL_SECONDS = 10e-6


class ExportError(ValueError):
    """A capture that cannot be exported, or an output that cannot be written (one-line
    message naming the file)."""


@dataclass
class ExportInfo:
    layout: Layout
    origin: int                 # cycle of sample 0
    samples: int                # samples written
    stamp_hz: int               # samples per second: one per stamp unit
    changes: int                # sample words that differ from the previous one
    markers_dropped: int = 0    # second marker of a cycle
    edges_stretched: int = 0    # repeated levels shown with a one-cycle opposite pulse
    edges_dropped: int = 0      # repeated levels that could not be shown
    context: int = 0            # START / PARAM markers from before the window, repeated
    files: list = field(default_factory=list)

    def summary(self):
        text = (f"sample 0 = cycle {self.origin}, {self.samples} samples at "
                f"{self.stamp_hz / 1e6:g} MHz, {self.changes} changes")
        if self.context:
            text += (f"; {self.context} marker(s) of the open test (START, PARAM) from before "
                     f"the window repeated at samples 1..{self.context}")
        if self.markers_dropped:
            text += f"; {self.markers_dropped} second marker(s) of a cycle not shown"
        if self.edges_stretched or self.edges_dropped:
            text += (f"; {self.edges_stretched} edge(s) that repeat a level (the opposite "
                     f"edge is not in the capture) shown after a one-cycle pulse, "
                     f"{self.edges_dropped} not shown")
        return text


def export_capture(capture, *, sr=None, vcd=None, pvs=True, start=None, stop=None):
    """Exports a loaded capture (:class:`latscope.capture_file.Capture`) to a session file
    ``sr`` (and its ``.pvs`` beside it unless ``pvs`` is False) and/or a VCD file ``vcd``.
    ``start``/``stop``: only the events of cycles ``[start, stop)`` (levels before the
    first of them are taken as low); the START marker of a test whose window is open at
    ``start`` and its PARAM marker (the test context the decoders need to pair what the
    window holds) are repeated at samples 1, 2, ... of the export. Returns :class:`ExportInfo`; raises
    :class:`ExportError` naming the capture or the output file."""
    stamp_hz = int(capture.stamp_hz or 0)        # one sample per stamp unit
    if stamp_hz <= 0:
        raise ExportError(f"{capture.path}: metadata has no capture clock (identity.clock_hz)")
    if start is not None and start < 0:
        raise ExportError(f"--start {start}: a cycle number is 0 or more")
    if start is not None and stop is not None and stop <= start:
        raise ExportError(f"--stop {stop} is not after --start {start}: nothing to export")
    events = _between(capture.events, start, stop)
    layout = Layout.for_identity(capture.identity)
    origin, samples = _extent(events, stamp_hz, start, stop)
    context = _context(capture.events, start, origin) if start is not None else Events.empty()
    events = Events.concatenate([context, events])
    tracker = LevelTracker(layout)
    changes = tracker.feed(events, final=True)
    info = ExportInfo(layout, origin, samples, stamp_hz, len(changes), tracker.markers_dropped,
                      tracker.edges_stretched, tracker.edges_dropped, len(context))
    if sr is not None:
        with _writing(sr):
            write_sr(sr, layout.names, changes, stamp_hz, origin=origin, samples=samples,
                     initial=tracker.initial)
        info.files.append(str(sr))
        if pvs:
            pvs_path = Path(sr).with_suffix(".pvs")
            with _writing(pvs_path):
                write_pvs(pvs_path, sr, layout, **_initial_view(events, stamp_hz, origin,
                                                                samples),
                          marker_options={"sample_delay": 0})
            info.files.append(str(pvs_path))
    if vcd is not None:
        with _writing(vcd), open(vcd, "w") as stream:
            writer = VcdWriter(stream, layout, stamp_hz, origin,
                               comment=f"latscope export of {Path(capture.path).name}: "
                                       f"sample 0 = cycle {origin}, {stamp_hz} samples/s")
            writer.header(tracker.initial)
            writer.changes(changes)
            writer.until(origin + samples - 1)
        info.files.append(str(vcd))
    return info


def _between(events, start, stop):
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


def _initial_view(events, stamp_hz, origin, samples):
    """PulseView's first view: zoomed in on the first latency sample, so that its
    annotation is readable (VIEW_SCALE); the whole export if it has no sample."""
    starts = [int(table.starts[0]) for table in analyze(events, stamp_hz).values()
              if len(table.starts)]
    if not starts:
        return {"scale": samples / stamp_hz / 1500, "offset": 0}
    lead = (min(starts) - origin) / stamp_hz - VIEW_LEAD_SECONDS
    return {"scale": VIEW_SCALE, "offset": max(0.0, lead)}


def _context(events, start, origin):
    """The markers a window from cycle ``start`` needs from before it: per test whose window
    is open there (its last START before ``start`` has no END after it), that START and,
    if the test's next marker is a PARAM before ``start`` (a parameter of 128 or more,
    docs/markers.md), that PARAM; placed at cycles ``origin + 1``, ``origin + 2``, ...
    (sample 0 shows no edge), before any event of the window (``_extent`` leaves ``MARGIN``
    cycles)."""
    markers = events.of(Source.MARKER, Source.BUS)
    markers = markers[markers.stamp.astype(np.int64) < start]
    value = markers.value.astype(np.int64) & ((1 << EXPORT_DATA_BITS) - 1)
    test, point, _ = decode(value)
    kept = []
    for number in np.unique(test[point == Point.START]).tolist():
        mine = np.flatnonzero(test == number)
        starts = mine[point[mine] == Point.START]
        last = int(starts[-1])
        after = mine[mine > last]
        if np.any(point[after] == Point.END):
            continue                          # that window closed before the export
        kept.append(last)
        if len(after) and point[after[0]] == Point.PARAM:
            kept.append(int(after[0]))
    kept.sort()
    if len(kept) >= MARGIN:
        raise ExportError(f"--start {start}: {len(kept)} context markers do not fit before "
                          f"the window")
    context = markers[np.array(kept, np.int64)]
    return Events(origin + 1 + np.arange(len(kept), dtype=np.uint64), context.source,
                  context.value)


def _extent(events, stamp_hz, start, stop):
    """(origin, samples): the cycles exported, a margin around the events unless given."""
    if len(events):
        first = int(events.stamp.min())
        origin = first - MARGIN if start is None else min(start, first - MARGIN)
        tail = MARGIN + math.ceil(TAIL_SECONDS * stamp_hz)
        end = int(events.stamp.max()) + tail if stop is None else stop
    else:
        origin = start or 0
        end = stop if stop is not None else origin + 2 * MARGIN
    return origin, max(end - origin, 1)


@contextlib.contextmanager
def _writing(path):
    """Turns an error writing ``path`` (a full disk, no permission) into an
    :class:`ExportError` that names it."""
    try:
        yield
    except OSError as error:
        raise ExportError(f"{path}: cannot write: {error.strerror or error}") from None
    except VcdError as error:
        raise ExportError(f"{path}: {error}") from None
