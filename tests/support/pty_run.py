"""A command run as a user runs it at a terminal: in a pseudo-terminal of a given size, its
output taken as it comes with the time each piece arrived, and what a terminal would show of
it: the columns each line reaches (``\\r`` returns to column 0, ``ESC [K`` erases to the end
of the line) and the longest silence while it ran."""

import os
import pty
import select
import signal
import subprocess
import termios
import time
from dataclasses import dataclass, field

__all__ = ["PtyRun", "run_in_pty", "columns_reached"]


@dataclass
class PtyRun:
    argv: list
    status: int | None = None
    chunks: list = field(default_factory=list)  # (seconds since the start, bytes)

    @property
    def text(self) -> str:
        return b"".join(data for _, data in self.chunks).decode(errors="replace")

    def silences(self, started_after=0.0):
        """The gaps (seconds) between pieces of output, from the first piece on."""
        times = [t for t, _ in self.chunks if t >= started_after]
        return [b - a for a, b in zip(times, times[1:])]

    def longest_silence(self):
        """(seconds, what was shown before it): the longest wait with nothing new shown,
        from the first output to the end of the run."""
        best, before = 0.0, ""
        shown = b""
        times = [t for t, _ in self.chunks] + [self.ended]
        for (t, data), next_t in zip(self.chunks, times[1:]):
            shown += data
            if next_t - t > best:
                best, before = next_t - t, shown[-200:].decode(errors="replace")
        return best, before

    ended: float = 0.0


def run_in_pty(argv, *, columns=80, rows=24, timeout=600, env=None, cwd=None, interrupt_after=None):
    """Runs ``argv`` with stdin, stdout and stderr on a new pty of ``columns`` x ``rows``;
    ``interrupt_after``: send Ctrl-C's SIGINT to its process group after that many
    seconds of output (counted from its first byte)."""
    leader, follower = pty.openpty()
    termios.tcsetwinsize(follower, (rows, columns))
    environment = dict(os.environ if env is None else env)
    environment.pop("COLUMNS", None)
    environment.pop("LINES", None)
    environment["TERM"] = "xterm"
    started = time.monotonic()
    process = subprocess.Popen(
        argv,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=environment,
        cwd=cwd,
        start_new_session=True,
    )
    os.close(follower)
    run = PtyRun(list(map(str, argv)))
    first = None
    interrupted = False
    try:
        while True:
            now = time.monotonic()
            if now - started > timeout:
                process.kill()
                raise TimeoutError(f"{argv}: still running after {timeout} s")
            if (
                interrupt_after is not None
                and not interrupted
                and first is not None
                and now - first >= interrupt_after
            ):
                os.killpg(process.pid, signal.SIGINT)
                interrupted = True
            ready, _, _ = select.select([leader], [], [], 0.05)
            if ready:
                try:
                    data = os.read(leader, 65536)
                except OSError:  # EIO: every holder of the follower closed it
                    data = b""
                if not data:
                    break
                first = first if first is not None else time.monotonic()
                run.chunks.append((time.monotonic() - started, data))
    finally:
        os.close(leader)
        run.status = process.wait(timeout=60)
        run.ended = time.monotonic() - started
    return run


def columns_reached(text):
    """Per line of output, the furthest column written into it: a terminal wraps a line
    the moment a character goes past its last column, whatever erases it later, so a
    redraw after ``\\r`` counts as much as the first draw. Escape sequences (``ESC [K``,
    colours) take no columns."""
    lines, furthest, column, i = [], 0, 0, 0
    while i < len(text):
        char = text[i]
        if char == "\x1b":
            i += 1
            if text[i : i + 1] == "[":
                i += 1
                while i < len(text) and not text[i].isalpha():
                    i += 1
            i += 1
            continue
        if char == "\n":
            lines.append(furthest)
            furthest = column = 0
        elif char == "\r":
            column = 0
        else:
            column += 1
            furthest = max(furthest, column)
        i += 1
    if furthest:
        lines.append(furthest)
    return lines
