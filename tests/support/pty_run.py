"""A command run as a user runs it at a terminal: in a pseudo-terminal of a given size, its
output taken as it comes with the time each piece arrived, and what a terminal would show of
it: the columns each line reaches (``\\r`` returns to column 0, ``ESC [K`` erases to the end
of the line) and the longest silence while it ran.

A silence is counted in the command's own work: the CPU seconds that it and the processes it
started spent between two pieces of output (:func:`support.process_tree.cpu_seconds`, read as
each piece arrives), not in wall seconds, which a loaded machine stretches for a command that
keeps reporting (it redraws its status twice a second of its own, but gets a share of a core).
A command that computes without showing anything is silent in both; one that waits with
nothing to do (for a device, for its user) spends no CPU and is never silent in this sense."""

import os
import pty
import select
import signal
import subprocess
import termios
import time
from dataclasses import dataclass, field
from typing import NamedTuple

from support.process_tree import cpu_seconds

__all__ = ["PtyRun", "Silence", "run_in_pty", "columns_reached"]


class Output(NamedTuple):
    wall: float  # seconds since the start
    cpu: float  # CPU seconds the command (with what it started) had spent by then
    data: bytes


class Silence(NamedTuple):
    cpu: float  # CPU seconds the command spent meanwhile
    wall: float  # seconds it lasted
    before: str  # the end of what was shown before it


@dataclass
class PtyRun:
    argv: list
    status: int | None = None
    chunks: list[Output] = field(default_factory=list)
    #: When it ended: seconds since the start, and CPU seconds it had spent by then.
    ended: float = 0.0
    ended_cpu: float = 0.0

    @property
    def text(self) -> str:
        return b"".join(chunk.data for chunk in self.chunks).decode(errors="replace")

    def longest_silence(self) -> Silence:
        """The longest stretch, in the command's CPU seconds, with nothing new shown: from
        the first output to the end of the run (before it Python imports the package)."""
        longest, shown = Silence(0.0, 0.0, ""), b""
        ends = [(chunk.wall, chunk.cpu) for chunk in self.chunks[1:]]
        ends.append((self.ended, self.ended_cpu))
        for chunk, (wall, cpu) in zip(self.chunks, ends):
            shown += chunk.data
            if cpu - chunk.cpu > longest.cpu:
                before = shown[-200:].decode(errors="replace")
                longest = Silence(cpu - chunk.cpu, wall - chunk.wall, before)
        return longest


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
    spent = 0.0

    def spent_now():
        # Never less than the last reading (one leaves out a process started while it reads).
        nonlocal spent
        spent = max(spent, cpu_seconds(process.pid))
        return spent

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
                run.chunks.append(Output(time.monotonic() - started, spent_now(), data))
    finally:
        os.close(leader)
        # Its CPU time once it has ended, read before it is reaped (an ended, unreaped
        # process still has its own and its reaped children's): waitid's WNOWAIT.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ready = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOWAIT | os.WNOHANG)
            if ready is not None:
                break
            time.sleep(0.01)
        run.ended, run.ended_cpu = time.monotonic() - started, spent_now()
        run.status = process.wait(timeout=max(deadline - time.monotonic(), 0))
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
