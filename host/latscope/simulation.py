"""Starting a simulated appliance that the host reaches like a board, through a pty."""

import subprocess
import sys

from .device import DeviceError

__all__ = ["SimulatedAppliance", "SIM_PORTS", "is_simulated"]

#: Port names that start a simulation instead of opening a serial port.
SIM_PORTS = {
    "sim:gateware": [sys.executable, "-m", "latscope_gateware.sim_device"],
}


class SimulatedAppliance:
    """Runs a simulation in a child process and gives the pty it bridges the UART to.

    Use as a context manager; the child is terminated on exit."""

    def __init__(self, port, extra_args=(), *, log=None):
        if port not in SIM_PORTS:
            raise DeviceError(f"unknown simulated device {port!r}; known: {', '.join(SIM_PORTS)}")
        self.command = [*SIM_PORTS[port], *extra_args]
        self.log = log
        self.process = None
        self.pty = None

    def __enter__(self):
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE,
                                        stderr=self.log or subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()
        if not line.startswith("PTY "):
            self.process.kill()
            raise DeviceError(f"simulation {' '.join(self.command)} did not start "
                              f"(printed {line!r})")
        self.pty = line.split(None, 1)[1].strip()
        return self

    def __exit__(self, *exc):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def is_simulated(port):
    return port in SIM_PORTS
