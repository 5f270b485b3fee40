"""Live view: a running capture as a VCD stream for sigrok-cli and PulseView (``latscope
stream``): the events, as they arrive, as the logic signals of :mod:`latscope.export.files`,
one sample per capture-clock cycle, so the latscope decoders decode it exactly like an
exported file. README.md ("sigrok and PulseView", **Live.**) gives what the readers buffer
and hold.
"""

import contextlib
import io
import sys
import time

import numpy as np

from latscope_defs.channels import Layout

from ..capture.session import CaptureSession, Until
from ..events import Events
from ..link.device import DEFAULT_IRQ
from ..progress import Progress, status_line
from ..terminal import fold_command, output_width
from .levels import MARGIN, Changes, LevelTracker
from .sigrok import write_pvs
from .vcd import VcdWriter
from .writer import Signals

__all__ = ["PULSEVIEW_BLOCK", "LiveVcd", "stream_capture"]

#: PulseView 0.4.2's input read size (pv/devices/inputfile.cpp: BufferSize).
PULSEVIEW_BLOCK = 4 << 20


class LiveVcd:
    """Writes events to a binary stream ``out`` as VCD, incrementally.

    ``feed(events)`` takes verified events in stream order; ``flush()`` writes what is
    ready (events are held back a few cycles until later ones show that no earlier event of
    another source can still come, or until ``flush(idle=True)``), pads to ``block`` bytes
    if set, and flushes ``out``. Sample 0 (time 0) is cycle ``origin``, set from the first
    event (less a few cycles)."""

    def __init__(self, out, layout, stamp_hz, *, block=0, comment="latscope stream"):
        self.out = out
        self.block = block
        self.tracker = LevelTracker(layout)
        self.text = io.StringIO()
        self.signals = Signals(layout, stamp_hz, origin=None, comment=comment)
        self.writer = VcdWriter(self.text)  # the export's VCD writer, on a text buffer
        self.written = 0  # bytes written to out
        self.events = 0
        self._initial_written = False

    @property
    def origin(self):
        return self.writer.origin

    def start(self):
        """Writes the header (all levels 0 at time 0) and flushes: readers can open."""
        self.writer.begin(self.signals)
        self.flush()

    def feed(self, events):
        if not len(events):
            return
        if self.writer.origin is None:
            self.writer.origin = int(events.stamp.min()) - MARGIN
        self.events += len(events)
        self._write(self.tracker.feed(events))

    def _write(self, changes):
        if not len(changes):
            return
        if not self._initial_written:
            # Channels that start high (known from their first edge) go high at time 0.
            self.writer.add(
                Changes(
                    np.array([self.writer.origin], np.int64),
                    np.array([self.tracker.initial], np.uint64),
                )
            )
            self._initial_written = True
        self.writer.add(changes)

    def flush(self, idle=False):
        """Writes the pending text; with ``idle``, first releases the held-back events
        (nothing new came for a while, so they are the latest)."""
        if idle:
            self._write(self.tracker.feed(Events.empty(), final=True))
        data = self.text.getvalue().encode()
        self.text.seek(0)
        self.text.truncate()
        if self.block:
            data += b" " * (-(self.written + len(data)) % self.block)
        if data:
            self.out.write(data)
            self.written += len(data)
        self.out.flush()

    def finish(self):
        self._write(self.tracker.finish())
        if self.writer.origin is not None and self.tracker.last_stamp is not None:
            self.writer.finish(self.tracker.last_stamp + MARGIN + 1)
        self.block = 0  # the reader sees the end of the stream anyway
        self.flush()


def stream_capture(
    port,
    out,
    *,
    baudrate=None,
    board=None,
    irq=DEFAULT_IRQ,
    block=0,
    duration=None,
    max_events=None,
    flush_interval=0.5,
    capture=None,
    pvs=None,
    log=sys.stderr,
):
    """Captures from ``port`` (a serial port, ``sim:soc`` / ``sim:gateware`` or a
    :class:`~latscope.link.device.Port` such as a :class:`~latscope.simulated.soc.SocSimulation`)
    and writes the VCD stream to the binary stream ``out`` until ``duration`` seconds or
    ``max_events`` events passed, a simulated DUT's firmware exited, the reader went away
    or a stop signal (Ctrl-C, SIGTERM, SIGHUP: the stream is finished, then
    :class:`~latscope.capture.session.Interrupted` raised). ``baudrate``, ``board``: the
    link rate and board preset (:class:`~latscope.capture.session.CaptureSession`).
    ``capture``: also write a capture file. ``pvs``: write a PulseView setup there first
    (decoders attached to the stream's signals). Returns the :class:`LiveVcd`.

    Readers and their buffering: ``sigrok-cli -i - -I vcd`` reads what the pipe has;
    libsigrok's VCD input passes samples on in chunks, so annotations lag the capture by one
    chunk. PulseView 0.4.2 (``pulseview -i /dev/stdin -I vcd``) reads its input in 4 MiB
    blocks and waits until a block is full: a plain pipe would show nothing until the end.
    With ``block=PULSEVIEW_BLOCK`` every flush is padded with spaces (VCD whitespace) up to
    the next 4 MiB boundary, so each flush reaches PulseView at once (up to 4 MiB per flush
    through the pipe, nothing on disk)."""
    with CaptureSession(port, baud=baudrate, board=board) as session:
        identity = session.identity
        layout = Layout.for_identity(identity)
        # The decoder stack as one argument a shell reads as printed, also where it is folded
        # to the terminal's width.
        width = output_width(log) if status_line() is not None else None
        print(f"latscope stream: signals of {identity.board}; the decoders:", file=log)
        print(fold_command(f"-P {layout.decoder_stack()}", width), file=log)
        if pvs is not None:
            write_pvs(pvs, None, layout, marker_options={"sample_delay": 0})
        live = LiveVcd(
            out,
            layout,
            identity.stamp_hz,
            block=block,
            comment=f"latscope stream, {identity.stamp_hz} samples/s",
        )
        # The status line of a capture where a program shows progress (the command line).
        progress = Progress() if status_line() is not None else None
        pacing = _Pacing(live, flush_interval, log, progress)
        run = None
        if pacing.write(live.start):
            session.configure_irq(irq)
            with progress or contextlib.nullcontext():
                run = session.capture(
                    capture,
                    info="latscope stream",
                    on_batch=pacing.batch,
                    until=Until(duration=duration, events=max_events),
                )
            pacing.write(live.finish)
            if progress is not None:
                progress.update(run.events, run.bytes, run.parser_stats, final=True)
    print(f"latscope stream: {live.events} events, sample 0 = stamp {live.origin}", file=log)
    if run is not None:
        run.raise_if_interrupted()  # the stream and its capture file are complete
    return live


class _Pacing:
    """Feeds a :class:`LiveVcd` batch by batch and flushes it every ``interval`` seconds
    (releasing held-back events once nothing new came for that long); a reader that closed
    the stream ends the capture."""

    def __init__(self, live, interval, log, progress=None):
        self.live = live
        self.interval = interval
        self.log = log
        self.progress = progress
        self.closed = False
        self.last_flush = self.last_events = time.monotonic()

    def write(self, action, *args):
        """Runs a write to the reader; False (and a message, once) if it went away."""
        if self.closed:
            return False
        try:
            action(*args)
            return True
        except BrokenPipeError:
            self.closed = True
            text = "latscope stream: the reader closed the stream"
            if self.progress is not None:
                self.progress.note(text)
            else:
                print(text, file=self.log)
            return False

    def batch(self, events, run):
        now = time.monotonic()
        if self.progress is not None:
            self.progress.update(run.events, run.bytes, run.parser_stats)
        if len(events):
            self.last_events = now
            if not self.write(self.live.feed, events):
                return True
        if now - self.last_flush >= self.interval:
            self.last_flush = now
            return not self.write(self.live.flush, now - self.last_events >= self.interval)
        return self.closed
