"""A synthetic run of the test suite with its ground truth, for damage tests.

:func:`make_run` lays out the markers and IRQ edges of the suite's tests (``docs/tests.md``,
the encoding of ``latscope_defs.markers``), and with ``handlers`` the kernel's handler-entry
marker of every IRQ (the ILH tables), on a time line and records, while it does so, every
sample it means: table name, start stamp, length. That record is the ground truth; it is
built here from the layout, not by ``analyze``. :func:`encode` turns the events into the
device's byte stream with the reference encoder of ``latscope_defs.protocol``, adding the pin
delays the parser subtracts again.
"""

import random
from dataclasses import dataclass, field

from latscope_defs.markers import SUITE_IRQ_LINE, Point, Test
from latscope_defs.markers import encode as marker
from latscope_defs.protocol import VERSION, Source, StreamEncoder

#: Pin-to-stamp delays (cycles) of the simulated appliance, as in its identify reply.
LATENCY = {Source.MARKER: 4, Source.IRQ: 0}
IDENTITY = {
    "clock_hz": 100_000_000,
    "stamp_shift": 0,
    "marker_width": 16,
    "edge_count": 0,
    "bus_width": 0,
    "fifo_depth": 512,
    "board": "synthetic",
    "version": VERSION,
    "latency": {source.name: cycles for source, cycles in LATENCY.items()},
}


@dataclass
class Run:
    """Events (stamp, source, value), in stamp order, and the samples meant:
    ``samples[table][start stamp] = length``; the suite's settings it was laid out with
    (``count``: SAMPLES; ``handlers``: the kernel's handler markers)."""

    events: list = field(default_factory=list)
    samples: dict = field(default_factory=dict)
    count: int = 0
    handlers: bool = False

    def plan(self):
        """The suite's plan of this run (the loss accounting's)."""
        from latscope.analysis.accounting import SuitePlan

        return SuitePlan.of(self.count, TESTS, handlers=self.handlers)

    def truth(self):
        """What a fault check compares with: the events, and their (source, value) pairs
        (an event of a true pair at a wrong stamp is altered, not fabricated)."""
        return {"events": set(self.events), "values": {(s, v) for _, s, v in self.events}}


class _Layout:
    def __init__(self, seed, handlers):
        self.rng = random.Random(seed)
        self.now = 1000
        self.run = Run()
        self.handlers = handlers

    def irq(self, gap):
        """An asserting IRQ edge ``gap`` cycles on, and with ``handlers`` the kernel's
        handler-entry marker of its line 10..150 cycles after it (the kernel dispatches every
        interrupt, in a test's window or not). Returns (edge, handler marker or None)."""
        edge = self.at(gap, Source.IRQ, 1)
        if not self.handlers:
            return edge, None
        handler = self.mark(Test.KERNEL, Point.ISR_ENTRY, SUITE_IRQ_LINE, self.rng.randint(10, 150))
        return edge, handler

    def at(self, cycles, source, value):
        self.now += cycles
        self.run.events.append((self.now, int(source), value))
        return self.now

    def mark(self, test, point, arg=0, gap=None):
        gap = self.rng.randint(12, 400) if gap is None else gap
        return self.at(gap, Source.MARKER, marker(test, point, arg))

    def sample(self, table, start, end):
        self.run.samples.setdefault(table, {})[start] = end - start

    def window(self, test, n, body):
        self.mark(test, Point.START, n & 0x7F)
        if n >= 128:
            self.mark(test, Point.PARAM, n >> 7)
        body()
        self.mark(test, Point.END)
        # The IRQ generator runs between tests too: edges in no window pair with nothing.
        for _ in range(self.rng.randint(0, 3)):
            self.irq(self.rng.randint(50, 900))
            self.at(self.rng.randint(20, 200), Source.IRQ, 0)


def _irq_tests(lay, count):
    """IL_A (IRQ -> ISR_ENTRY, ISR_EXIT -> THREAD) and IDL_B N (ISR_EXIT -> T2)."""

    def il_a():
        for k in range(count):
            edge, handler = lay.irq(lay.rng.randint(300, 2000))
            entry = lay.mark(Test.IL_A, Point.ISR_ENTRY, k, gap=lay.rng.randint(20, 300))
            lay.at(lay.rng.randint(5, 50), Source.IRQ, 0)
            done = lay.mark(Test.IL_A, Point.ISR_EXIT, k)
            back = lay.mark(Test.IL_A, Point.THREAD, 0)
            lay.sample("IL-a-1", edge, entry)
            lay.sample("IDL-a-1", done, back)
            if handler is not None:
                lay.sample("ILH-a-1", edge, handler)

    lay.window(Test.IL_A, 1, il_a)
    for n in (1, 10, 128):

        def idl_b(n=n):
            for k in range(count):
                edge, handler = lay.irq(lay.rng.randint(300, 2000))
                entry = lay.mark(Test.IDL_B, Point.ISR_ENTRY, k, gap=lay.rng.randint(20, 300))
                lay.at(lay.rng.randint(5, 50), Source.IRQ, 0)
                done = lay.mark(Test.IDL_B, Point.ISR_EXIT, k)
                woken = lay.mark(Test.IDL_B, Point.T2, k % n)
                lay.sample(f"IL-b-{n}", edge, entry)
                lay.sample(f"IDL-b-{n}", done, woken)
                if handler is not None:
                    lay.sample(f"ILH-b-{n}", edge, handler)

        lay.window(Test.IDL_B, n, idl_b)


def _thread_tests(lay, count):
    """TSL_A N (T1 in one thread, T2 in the next) and the T1 -> T2 tests."""
    for n in (2, 10, 128):

        def tsl(n=n):
            lay.mark(Test.TSL_A, Point.T1, 0)  # the first round pairs nothing: T1, T1
            for k in range(count):
                start = lay.mark(Test.TSL_A, Point.T1, k % n)
                end = lay.mark(Test.TSL_A, Point.T2, (k + 1) % n)
                lay.sample(f"TSL-a-{n}", start, end)

        lay.window(Test.TSL_A, n, tsl)
    for test, name, n in (
        (Test.TF_A, "TF-a-1", 1),
        (Test.SEO_D, "SEO-d-1", 1),
        (Test.SEO_F, "SEO-f-255", 255),
        (Test.MQ, "MQ-a-1", 1),
        (Test.CLOCK_ISR, "CLK-a-1", 1),
    ):
        # The suite's samples per window of these tests (firmware/suite/suite.h:
        # SUITE_OBJ_SAMPLES, SUITE_CLK_SAMPLES), so that a run's counts are a suite's.
        per_window = min(count, 100) if test == Test.CLOCK_ISR else min(count, 256)

        def body(test=test, name=name, per_window=per_window):
            for k in range(per_window):
                start = lay.mark(test, Point.T1, k)
                if lay.rng.random() < 0.2:  # an IRQ edge inside: no rule pairs it
                    lay.irq(lay.rng.randint(1, 10))
                    lay.at(lay.rng.randint(5, 50), Source.IRQ, 0)
                end = lay.mark(test, Point.T2, k)
                if test == Test.CLOCK_ISR:
                    lay.mark(test, Point.PARAM, lay.rng.randint(0, 1))
                lay.sample(name, start, end)

        lay.window(test, n, body)


#: The tests a run lays out, as the suite's TESTS setting names them (its plan:
#: ``latscope.analysis.accounting.SuitePlan.of(count, TESTS, handlers)``).
TESTS = "IL_A,IDL_B,TSL_A,TF_A,SEO_D,SEO_F,MQ,CLOCK_ISR"


def make_run(seed=1, count=300, *, handlers=False):
    """A suite run built with ``SAMPLES=count``: ``count`` samples per IRQ and TSL table,
    min(count, 256) per object table, min(count, 100) for CLK-a-1 (as the suite's).
    ``handlers``: a kernel that writes its handler-entry marker (KERNEL/ISR_ENTRY of the
    suite's line) for every IRQ, as the simulated SoC's does: the ILH tables too."""
    lay = _Layout(seed, handlers)
    lay.run.count, lay.run.handlers = count, handlers
    lay.mark(Test.NONE, Point.PARAM, 1)
    _irq_tests(lay, count)
    _thread_tests(lay, count)
    lay.mark(Test.NONE, Point.PARAM, 2)
    return lay.run


def encode(events, flush_after=3000):
    """The device's byte stream of ``events``: stamps plus pin delays, in the order the
    device stamps them, in segments closed after ``flush_after`` cycles (the age rule)."""
    raw = sorted(
        (
            (stamp + LATENCY.get(Source(source), 0), source, value)
            for stamp, source, value in events
        ),
        key=lambda event: event[0],
    )
    encoder = StreamEncoder(flush_after=flush_after)
    for stamp, source, value in raw:
        encoder.event(stamp, source, value)
    encoder.flush()
    return encoder.take()
