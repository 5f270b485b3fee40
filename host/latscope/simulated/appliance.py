"""Simulated appliances that the host reaches like a board, through a pseudo-terminal: a
child process runs the simulation, prints ``PTY <path>`` and bridges the appliance's UART to
that pty, which the host opens as it opens a board's serial port.

``sim:gateware`` is the appliance gateware alone in Amaranth's simulator with a scripted DUT;
``sim:soc`` is the full system in Verilator (:mod:`latscope.simulated.soc`).
"""

import ctypes
import os
import signal
import subprocess
import sys

from ..link.device import DeviceError, Port
from ..progress import step

__all__ = ["SIM_PORTS", "SimulatedAppliance", "die_with"]

#: Port names that start a simulation instead of opening a serial port.
SIM_PORTS = {
    "sim:gateware": [sys.executable, "-m", "latscope_gateware.sim_device"],
    "sim:soc": None,  # built on demand: see SocSimulation
}


class SimulatedAppliance(Port):
    """Runs a simulation in a child process and gives the pty it bridges the UART to.

    Use as a context manager; the child is terminated on exit, and it dies with this process
    if that is killed (``PR_SET_PDEATHSIG``). It runs in a process group of its own, so a
    Ctrl-C at the terminal reaches only the host, which then stops the capture cleanly
    while the simulation still answers. :func:`latscope.ports.open_port` gives the
    simulation of a port name (``sim:soc``: a :class:`~latscope.simulated.soc.SocSimulation`
    of the default suite)."""

    #: A simulation runs about 1000 times slower than a board, and slower still on a busy
    #: machine: a reply takes seconds there, and only a hung simulation takes this long.
    reply_timeout = 60.0

    def __init__(self, port, extra_args=(), *, log=None):
        if port not in SIM_PORTS or SIM_PORTS[port] is None:
            raise DeviceError(f"unknown simulated device {port!r}; known: {', '.join(SIM_PORTS)}")
        self._start([*SIM_PORTS[port], *extra_args], port, log)

    def _start(self, command, name, log):
        super().__init__(name)
        self.command = command
        self.log = log
        self.process = None
        self.path = self.pty = None

    def __enter__(self):
        self.process = subprocess.Popen(
            self.command,
            stdout=subprocess.PIPE,
            stderr=self.log or subprocess.DEVNULL,
            text=True,
            process_group=0,
            preexec_fn=die_with(os.getpid()),
        )
        with step(f"starting the simulation ({self.name})"):
            line = self.process.stdout.readline()
        if not line.startswith("PTY "):
            self.process.kill()
            self.process.wait()
            raise DeviceError(
                f"simulation {' '.join(map(str, self.command))} did not start (printed {line!r})"
            )
        self.path = self.pty = line.split(None, 1)[1].strip()
        return self

    def stop(self):
        """Ends the child (SIGTERM, then SIGKILL after 10 s)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


_PR_SET_PDEATHSIG = 1


def die_with(parent):
    """A ``preexec_fn`` for a child that must end with ``parent``: the kernel sends it
    SIGTERM when its parent dies (prctl PR_SET_PDEATHSIG, as the Verilator harness also
    sets for itself), and it ends at once if the parent died before that was set."""

    def arrange():
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return arrange
