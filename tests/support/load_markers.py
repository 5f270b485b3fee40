"""What a load profile leaves among a suite run's markers (firmware/suite/load.c,
docs/tests.md "Load profiles"), checked the same way on every port that runs it."""

import numpy as np

from latscope.capture.conditions import LOADS as PROFILES
from latscope_defs.markers import Point, Test, decode

#: The suite's load profiles (firmware/suite/Makefile, LOAD).
LOADS = list(PROFILES)
#: The LOAD/THREAD arguments each profile's threads write (cpu 0, memory 1).
LOAD_THREADS = {"cpu": {0}, "memory": {1}, "mixed": {0, 1}}
#: The profiles whose second interrupt source runs a handler (LOAD/ISR_ENTRY, ISR_EXIT).
LOAD_IRQS = {"irq-high", "irq-low", "mixed"}


def build_suffix(load, param=None):
    """How the suite Makefile names a loaded build's directory: <dir>-<load>[-<param>]."""
    return "" if load == "none" else f"-{load}" + ("" if param is None else f"-{param}")


def check_load_markers(values, load):
    """The LOAD markers among ``values`` (marker values in time order) are those of
    ``load``: its threads' progress markers and no other thread's; its handler's calls, each
    ISR_ENTRY(k) followed by ISR_EXIT(k) before the next call, k = 0, 1, 2, ... (mod 128);
    no other LOAD point. Returns (thread markers, handler calls)."""
    tests, points, args = decode(np.asarray(values, np.int64))
    mine = tests == Test.LOAD
    assert set(points[mine].tolist()) <= {Point.THREAD, Point.ISR_ENTRY, Point.ISR_EXIT}, load
    threads = mine & (points == Point.THREAD)
    assert set(args[threads].tolist()) == LOAD_THREADS.get(load, set()), load
    isr = [(int(p), int(a)) for p, a in zip(points[mine], args[mine]) if p != Point.THREAD]
    calls = len(isr) // 2
    assert isr == [
        (point, n % 128) for n in range(calls) for point in (Point.ISR_ENTRY, Point.ISR_EXIT)
    ], load
    assert (calls > 0) == (load in LOAD_IRQS), (load, calls)
    return int(threads.sum()), calls
