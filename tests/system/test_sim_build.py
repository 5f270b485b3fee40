"""The simulator's builds (issue 29 point 5): one build at a time in a build directory (an
advisory lock: a second build waits and says for whom), and a build that ends with the
process that started it, kill -9 included: no make, shell or compiler builds on.

The builds here are the suite firmware's (``build_suite``, the RISC-V cross compiler, a few
seconds), in build directories of their own; ``build_soc`` takes the same lock for
``sim/build`` and runs make the same way."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from latscope.simulated.soc import build_lock
from support.process_tree import descendants, processes

#: A child that builds the suite (samples and tests small: a first build of a few seconds)
#: in the build directory of its first argument, with the suite cflags of the others, and
#: prints the ELF's path.
BUILD = """
import sys
from latscope.simulated.soc import SuiteSettings, build_suite
settings = SuiteSettings(samples=12, tests="IL_A", cflags=" ".join(sys.argv[2:]))
print(build_suite(settings, build_dir=sys.argv[1]), flush=True)
"""


def wait_for(condition, what, timeout=120):
    """Polls ``condition()`` until it gives something true, and gives that; the timeout
    only bounds a hang."""
    deadline = time.monotonic() + timeout
    while not (result := condition()):
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}"
        time.sleep(0.02)
    return result


def test_a_second_holder_waits_and_says_for_whom(tmp_path):
    child = [
        sys.executable,
        "-c",
        "import sys\nfrom latscope.simulated.soc import build_lock\n"
        "with build_lock(sys.argv[1]): print('locked', flush=True)",
        str(tmp_path),
    ]
    with build_lock(tmp_path):
        second = subprocess.Popen(child, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        waiting = second.stderr.readline()
        assert waiting == f"latscope: waiting for the build in {tmp_path} (pid {os.getpid()})\n"
        assert (tmp_path / ".latscope-lock").read_text() == f"{os.getpid()}\n"  # still ours
    out, _ = second.communicate(timeout=60)
    assert second.returncode == 0 and out == "locked\n"


@pytest.mark.slow
def test_a_build_waits_for_the_build_in_its_directory(tmp_path):
    """``build_suite`` in a directory whose lock another build holds starts no make until
    that build is done, then builds."""
    with build_lock(tmp_path):
        build = subprocess.Popen(
            [sys.executable, "-c", BUILD, str(tmp_path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert build.stderr.readline().startswith(f"latscope: waiting for the build in {tmp_path}")
        assert descendants(build.pid) == {}  # no make
        assert [path.name for path in tmp_path.iterdir()] == [".latscope-lock"]
    out, err = build.communicate(timeout=300)
    assert build.returncode == 0, err
    assert Path(out.strip()).is_file()


@pytest.mark.slow
def test_a_killed_build_leaves_nothing_running(tmp_path):
    """kill -9 of the process that runs a first build, while the compiler runs: make, its
    shells and the compilers end with it. The compiler proper (cc1) is held mid-build: the
    suite's cflags include a FIFO nobody writes, so it waits in its open(). Told to end,
    make passes SIGTERM on to the compiler driver only, and that ends alone: a cc1 left
    behind would wait there for ever (the bounded wait below), as one of a real build would
    compile on."""
    fifo = tmp_path / "held.h"
    os.mkfifo(fifo)
    build = subprocess.Popen(
        [sys.executable, "-c", BUILD, str(tmp_path / "build"), f"-include {fifo}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        below = wait_for(
            lambda: "cc1" in (found := descendants(build.pid)).values() and found,
            "the compiler to start",
        )
        table = processes()
        groups = {table[pid][1] for pid in below if pid in table}
        assert "make" in below.values() and os.getpgrp() not in groups  # a group of its own
        os.kill(build.pid, signal.SIGKILL)
        build.wait(timeout=10)

        def left():
            return {pid: name for pid, (_, group, name) in processes().items() if group in groups}

        deadline = time.monotonic() + 60
        while left() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert left() == {}
        assert not list(tmp_path.glob("build/*/suite.elf"))  # killed, not finished
    finally:
        if build.poll() is None:
            build.kill()
            build.wait()
        # Whatever still waits on the FIFO gets its end of file (and the test, not a hang).
        os.close(os.open(fifo, os.O_RDWR | os.O_NONBLOCK))
