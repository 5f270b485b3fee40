"""`latscope simulate`: a simulated appliance behind a pty for other programs, and the
harness's promise to end with the process that started it."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from latscope.link.device import Device, open_transport
from latscope_defs.protocol import Source

pytestmark = pytest.mark.verilator


def children(pid):
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0]
    except FileNotFoundError:
        return False
    return state != "Z"


def start_simulate():
    process = subprocess.Popen(
        [sys.executable, "-m", "latscope.cli", "simulate"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    line = process.stdout.readline()  # after the build, if one was needed
    assert line.startswith("PTY /dev/"), line
    return process, line.split()[1]


def test_simulate_serves_its_pty_until_ctrl_c():
    process, pty = start_simulate()
    try:
        with Device(open_transport(pty, 12_000_000)) as device:
            assert device.identify().board == "verilator-soc"
            device.start()
            sources = set()
            deadline = time.monotonic() + 30
            while {Source.IRQ, Source.MARKER} - sources and time.monotonic() < deadline:
                sources |= set(device.poll().source.tolist())
            device.stop()
        # The DUT runs (markers) and the IRQ generator was set (edges).
        assert {Source.IRQ, Source.MARKER} <= sources
    finally:
        process.send_signal(signal.SIGINT)
        try:
            code = process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()  # a hung simulate must not outlive the test
            process.wait()
            raise
    assert code == 128 + signal.SIGINT  # as --help says for an ending signal
    assert not Path(pty).exists()


def test_a_killed_starter_takes_its_simulation_with_it():
    process, _ = start_simulate()
    (simulator,) = children(process.pid)
    assert alive(simulator)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    deadline = time.monotonic() + 20
    while alive(simulator) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not alive(simulator)
