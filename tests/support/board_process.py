"""``support/board_sim.py`` as a running process: a simulated board on a pty, for the tests
that talk to it as the host talks to a board (:func:`simulated_board`)."""

import contextlib
import subprocess
import sys
from pathlib import Path

__all__ = ["SIM_REPLY_TIMEOUT", "simulated_board"]

BOARD_SIM = Path(__file__).resolve().parent / "board_sim.py"

#: The simulated appliance answers IDENTIFY in about 2 s on a loaded 2-core machine (a
#: board: in microseconds), so a raw pty path gets this long instead of Port's 5 s.
SIM_REPLY_TIMEOUT = 60.0


@contextlib.contextmanager
def simulated_board(name, *args):
    """The pty path of ``support/board_sim.py --board name``, running until the block ends."""
    process = subprocess.Popen(
        [sys.executable, str(BOARD_SIM), "--board", name, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("PTY "), line
        yield line.split()[1]
    finally:
        process.terminate()
        process.wait(timeout=10)
