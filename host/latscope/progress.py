"""Progress on stderr: the status line of a running capture (:class:`Progress`) and of every
other step that can take seconds (:func:`step`: a simulator build, an analysis, figures).

On a terminal the status is one line redrawn in place: ``\\r`` and ``ESC [K`` (erase to the
end of the line) before each redraw, and never wider than the terminal, so that no redraw
leaves a wrapped fragment behind. Into a log (not a terminal) there is no ``\\r``: a full
line now and then. Library code marks its long steps with :func:`step`; they show only
once a program (the ``latscope`` command, the demo) has called :func:`enable`.
"""

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from types import TracebackType
from typing import TextIO

from .terminal import is_terminal, terminal_width, wrap

__all__ = [
    "Progress",
    "StatusLine",
    "Step",
    "enable",
    "status_line",
    "step",
    "note",
    "running_tables",
]

#: Seconds between two redraws of a status line on a terminal, and between two lines of
#: progress in a log.
TERMINAL_INTERVAL = 0.5
LOG_INTERVAL = 10.0
#: A step that took at least this long leaves a line saying so (shorter ones leave nothing).
STEP_REPORTED_S = 2.0
ERASE_LINE = "\r\x1b[K"


class StatusLine:
    """One status line on ``stream`` (stderr). :meth:`show` redraws it on a terminal,
    clipped to one column less than its width; into a log it prints the text as a line at
    most every ``LOG_INTERVAL`` seconds (always when ``force``). :meth:`print` writes a
    lasting line (wrapped to the terminal) and redraws the status below it. Thread-safe: a
    step's ticker and the main thread share it."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream  # None: sys.stderr as it is at each write (tests replace it)
        self.text = ""  # what the status line shows now ("" none)
        self.logged = float("-inf")
        self.lock = threading.RLock()

    @property
    def stream(self) -> TextIO:
        return self._stream if self._stream is not None else sys.stderr

    @property
    def terminal(self) -> bool:
        return is_terminal(self.stream)

    def width(self) -> int:
        return terminal_width(self.stream)

    def show(self, text: str, *, force: bool = False) -> None:
        with self.lock:
            if self.terminal:
                self.text = text[: max(self.width() - 1, 1)]
                self._write(ERASE_LINE + self.text)
            elif force or time.monotonic() - self.logged >= LOG_INTERVAL:
                self.logged = time.monotonic()
                self._write(text + "\n")

    def clear(self) -> None:
        with self.lock:
            if self.terminal and self.text:
                self._write(ERASE_LINE)
            self.text = ""

    def print(self, text: str) -> None:
        """A line that stays: on a terminal wrapped to its width (continuations indented)
        and with the status line redrawn below it."""
        with self.lock:
            shown = self.text
            self.clear()
            if self.terminal:
                text = wrap(text, self.width())
            self._write(text + "\n")
            if shown:
                self.show(shown)

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: progress is not worth an error
            pass


# --- steps ------------------------------------------------------------------------------------

_status: StatusLine | None = None
_steps: list["Step"] = []
_ticker: threading.Thread | None = None
_wake = threading.Event()


def enable(stream: TextIO | None = None) -> StatusLine:
    """Shows :func:`step`'s progress on ``stream`` (None: stderr, as it is at each write) from
    now on; the status line that :class:`Progress` and :func:`note` share with it."""
    global _status
    _status = StatusLine(stream)
    return _status


def status_line() -> StatusLine | None:
    """The status line of :func:`enable` (None: progress is not shown)."""
    return _status


def note(text: str) -> None:
    """A lasting line on stderr that leaves the status line intact (wrapped on a terminal);
    printed plainly when progress is not enabled."""
    if _status is None:
        print(text, file=sys.stderr, flush=True)
    else:
        _status.print(text)


class Step:
    """A step in progress: what it does, since when, and a ``detail`` it may update
    ("3 of 27 figures")."""

    def __init__(self, what: str) -> None:
        self.what = what
        self.detail = ""
        self.started = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def set_detail(self, detail: str) -> None:
        self.detail = detail
        _wake.set()

    def text(self) -> str:
        """Its status line: the seconds first (a clipped line keeps them)."""
        detail = f" ({self.detail})" if self.detail else ""
        return f"{self.elapsed():7.1f} s  {self.what}{detail}"


@contextmanager
def _shown(current: Step, *, report_end: bool) -> Iterator[Step]:
    """Shows ``current`` on the status line while the block runs (the ticker redraws the
    innermost step twice a second); ``report_end``: then a line of how long it took, when
    that was 2 s or more."""
    global _ticker
    status = _status
    if status is None:
        yield current
        return
    with status.lock:
        _steps.append(current)
        if _ticker is None:
            _ticker = threading.Thread(target=_tick, args=(status,), daemon=True)
            _ticker.start()
    _wake.set()
    try:
        yield current
    finally:
        with status.lock:
            _steps.remove(current)
            status.clear()
            if report_end and current.elapsed() >= STEP_REPORTED_S:
                status.print(f"{current.what}: {current.elapsed():.1f} s")
        _wake.set()


def step(what: str) -> AbstractContextManager[Step]:
    """Marks a step that may take seconds, ``what`` in words ("building the SoC
    simulator"). With progress enabled its status line shows it and the seconds it has taken
    (on a terminal from the start, in a log once it has taken 2 s and then every 10 s); a
    step of 2 s or more ends with a line saying how long it took. Steps nest: the innermost
    shows."""
    return _shown(Step(what), report_end=True)


def _tick(status: StatusLine) -> None:
    """Redraws the innermost step's line until no step is left (then ends; the next step
    starts another)."""
    global _ticker
    while True:
        with status.lock:
            if not _steps:
                _ticker = None
                return
            current = _steps[-1]
            if status.terminal or current.elapsed() >= STEP_REPORTED_S:
                status.show(current.text())
        _wake.wait(TERMINAL_INTERVAL)
        _wake.clear()


# --- captures ---------------------------------------------------------------------------------


class Progress(Step):
    """The status line of a running capture: elapsed time, events, rate, bytes, losses and
    the running tests' statistics; redrawn about twice a second on a terminal (also while no
    data comes, when used as a context manager around the capture), a line every 10 s into
    a log. :meth:`note` prints a lasting line above it (the demo's "running IL-a-1")."""

    def __init__(self, stream: TextIO | None = None) -> None:
        super().__init__("capturing")
        self.status = _status if stream is None and _status is not None else StatusLine(stream)
        self.shown = float("-inf")
        self.counts = (0, 0, 0, 0)  # events, bytes, lost, records dropped
        self.tables = ""

    def __enter__(self) -> "Progress":
        self._context = _shown(self, report_end=False) if self.status is _status else None
        if self._context is not None:
            self._context.__enter__()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._context is not None:
            self._context.__exit__(kind, error, trace)

    def text(self) -> str:
        events, nbytes, lost, dropped = self.counts
        elapsed = self.elapsed()
        rate = events / elapsed if elapsed > 0 else 0.0
        return (
            f"{elapsed:7.1f} s  {events:10d} events  {rate:9.0f} ev/s  "
            f"{nbytes / 1024:9.1f} KiB  lost {lost:d}  dropped {dropped:d}{self.tables}"
        )

    def update(self, events, nbytes, stats, *, final=False, analyzer=None):
        self.counts = (events, nbytes, stats.lost_total, stats.records_dropped)
        if final:  # what ran last is in the tables now
            self.tables = ""
            self.status.clear()
            self.status.print(self.text())
            return
        now = time.monotonic()
        if now - self.shown < TERMINAL_INTERVAL:
            return
        self.shown = now
        self.tables = running_tables(analyzer) if analyzer is not None else ""
        self.status.show(self.text())

    def note(self, text: str) -> None:
        self.status.print(text)


def running_tables(analyzer):
    """`` | IL-a-1 n=512 min/avg/max 40/68/2986 ns`` for the tables of the running tests."""
    parts = []
    for name, table in analyzer.tables.items():
        if table.parameters.get("test") in analyzer.running and table.count:
            s = table.stats()
            parts.append(
                f"{name} n={s['samples']} min/avg/max "
                f"{s['min_ns']:.0f}/{s['avg_ns']:.0f}/{s['max_ns']:.0f} ns"
            )
    return ("  | " + "; ".join(parts)) if parts else ""
