"""Test windows: the stretches of a test's markers, from a START to the test's next END
(or START), inside which the pairing rules make samples; and the markers in stamp order."""

from dataclasses import dataclass

import numpy as np

from latscope_defs.markers import ARG_BITS, Point
from latscope_defs.protocol import Source

__all__ = ["Windows", "markers_in_time_order", "windows_of_test"]

@dataclass
class Windows:
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


def markers_in_time_order(stamp, source):
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
    return Windows(start, stop, first, last, parameter, epochs[start], certain, outer)
