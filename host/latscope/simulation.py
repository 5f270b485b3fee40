"""Simulated appliances that the host reaches like a board, through a pseudo-terminal.

``sim:gateware``  the appliance gateware alone in Amaranth's simulator, with a scripted DUT
                  (slow; for the host code and the gateware).
``sim:soc``       the full system in Verilator (``sim/``): a VexRiscv SoC runs latscope's test
                  suite (``firmware/suite``) on the reference kernel, and the appliance
                  gateware, exported from Amaranth, watches its trace pins and bus and drives
                  its interrupt. latscope's main job with no board attached.

Both print ``PTY <path>`` and bridge the appliance's UART to that pty; the host opens it with
:func:`latscope.device.open_transport`, the same code as for a board's serial port.

For ``sim:soc`` the CPU is held in reset until the host has identified the appliance,
configured the IRQ generator and started the capture (:meth:`SocSimulation.release_cpu`), so
the capture holds the whole suite; the harness says when the firmware exited
(:attr:`SocSimulation.exited`) and keeps simulating so the appliance can drain.
:func:`capture_suite` does all of that in order.
"""

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .device import Device, DeviceError, IrqSettings, open_transport
from .parser import Events

__all__ = ["SimulatedAppliance", "SocSimulation", "SuiteSettings", "SocBuild", "SuiteCapture",
           "SIM_PORTS", "DEMO_IRQ", "is_simulated", "build_soc", "capture_suite"]

#: The repository (sim/, firmware/): this file is host/latscope/simulation.py in it.
ROOT = Path(os.environ.get("LATSCOPE_ROOT", Path(__file__).resolve().parents[2]))

#: Port names that start a simulation instead of opening a serial port.
SIM_PORTS = {
    "sim:gateware": [sys.executable, "-m", "latscope_gateware.sim_device"],
    "sim:soc": None,                 # built on demand: see SocSimulation
}

#: The appliance's IRQ generator for the suite: about every 50 us at 100 MHz (the reference
#: report's PCI exerciser), plus 0..255 cycles of pseudo-random jitter so that the IRQ lands
#: on every phase of the interrupted code; 1 us wide.
DEMO_IRQ = IrqSettings(period=5000, jitter_mask=0xff, width=100)

#: --linger value that means "until the host stops the simulation".
_LINGER_FOREVER = 1 << 62


class SimulatedAppliance:
    """Runs a simulation in a child process and gives the pty it bridges the UART to.

    Use as a context manager; the child is terminated on exit. ``sim:soc`` gives a
    :class:`SocSimulation` of the default suite (built first if needed)."""

    def __new__(cls, port=None, *args, **kwargs):
        if cls is SimulatedAppliance and port == "sim:soc":
            return super().__new__(SocSimulation)
        return super().__new__(cls)

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
            self.process.wait()
            raise DeviceError(f"simulation {' '.join(map(str, self.command))} did not start "
                              f"(printed {line!r})")
        self.pty = line.split(None, 1)[1].strip()
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        """Ends the child (SIGTERM, then SIGKILL after 10 s)."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def is_simulated(port):
    return port in SIM_PORTS


# --- sim:soc: build ---------------------------------------------------------------------------

@dataclass(frozen=True)
class SuiteSettings:
    """What the simulated DUT runs: the CPU variant and the suite's build settings
    (``firmware/suite/Makefile``: MARKER, SAMPLES, TESTS, PACE, SUITE_CFLAGS)."""
    cpu: str = "VexRiscv_IMAC"       # or VexRiscv_Lite (rv32im, about 2x faster to simulate)
    marker: str = "gpio"             # gpio: GPIO trace port; bus: TRACE window on the bus
    samples: int = 1000              # per IL, IDL and TSL table (TF/SEO/MQ: up to 256)
    tests: str = "all"               # or a comma-separated list of markers.Test names
    pace: int = 0                    # min. cycles between two samples of thread-driven tests
    cflags: str = ""                 # more -D settings of the suite (SUITE_CFLAGS, suite.h)

    def as_dict(self):
        return asdict(self)


def capture_metadata(identity, port, irq, test_info="", simulation=None):
    """The metadata a capture file starts with (``docs/capture-format.md``): the device's
    identity, the port, the IRQ settings, the start time, the user's test information and,
    on ``sim:soc``, the simulated DUT (``cpu``, ``suite``)."""
    metadata = {"identity": identity.as_dict(), "port": str(port), "irq": asdict(irq),
                "start_time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "test_info": test_info}
    build = getattr(simulation, "build", None)
    if build is not None:
        metadata.update(cpu=build.settings.cpu, suite=build.settings.as_dict())
    return metadata


@dataclass(frozen=True)
class SocBuild:
    """A built simulator (with the appliance) and the suite firmware it runs."""
    simulator: Path
    firmware: Path
    settings: SuiteSettings


def _make(args, what, log):
    """Runs make; on failure raises DeviceError with the end of its output."""
    command = ["make", "--no-print-directory", *args]
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    if log is not None:
        log.write(result.stdout)
    if result.returncode != 0:
        raise DeviceError(f"building {what} failed ({' '.join(command)}):\n"
                          + result.stdout[-4000:])
    return result.stdout


def build_soc(settings=SuiteSettings(), *, build_dir=None, log=None):
    """Builds what ``sim:soc`` runs, incrementally (make): the appliance's Verilog export, the
    Verilated SoC with the appliance for ``settings.cpu``, and the suite firmware.

    ``build_dir``: the suite's build directory (firmware/suite/build by default); one per
    user of the suite keeps their settings from rebuilding each other's objects."""
    sim = ROOT / "sim"
    common = [f"CPU={settings.cpu}", f"PYTHON={sys.executable}"]
    _make(["-C", str(sim), "APPLIANCE=1", "sim", *common], "the SoC simulator", log)
    simulator = Path(_make(["-s", "-C", str(sim), "APPLIANCE=1", "print-binary", *common],
                           "the SoC simulator", None).strip())
    suite = ROOT / "firmware" / "suite"
    build_dir = Path(build_dir) if build_dir is not None else suite / "build"
    _make(["-C", str(suite), "-j2", "sim", f"BUILD={build_dir.resolve()}",
           f"MARKER={settings.marker}", f"SAMPLES={settings.samples}",
           f"TESTS={settings.tests}", f"PACE={settings.pace}", f"CPU={settings.cpu}",
           f"SUITE_CFLAGS={settings.cflags}"],
          "the test suite firmware", log)
    march = _make(["-s", "-C", str(suite), f"CPU={settings.cpu}", "print-march"],
                  "the firmware's -march (sim/soc_map.toml)", None).strip()
    firmware = build_dir.resolve() / f"sim-{settings.marker}-{march}" / "suite.elf"
    return SocBuild(simulator, firmware, settings)


# --- sim:soc: run -----------------------------------------------------------------------------

class SocSimulation(SimulatedAppliance):
    """The Verilated SoC with the appliance, running the suite, the CPU held in reset.

    ``SocSimulation(build)`` or, through :class:`SimulatedAppliance`, ``("sim:soc")`` (the
    default suite, built if needed). ``truth``: write the harness's ground-truth log there;
    ``console``: the firmware's console file (a temporary file by default)."""

    def __init__(self, build="sim:soc", extra_args=(), *, log=None, truth=None, console=None):
        if build == "sim:soc":
            build = build_soc(log=log)
        self.build = build
        self._console_file = None
        if console is None:
            self._console_file = tempfile.NamedTemporaryFile(prefix="latscope-console-",
                                                             suffix=".txt", delete=False)
            console = self._console_file.name
        self.console = Path(console)
        command = [str(build.simulator), "--pty", "--hold-cpu", "--linger", str(_LINGER_FOREVER),
                   "--console", str(self.console)]
        if truth is not None:
            command += ["--truth", str(truth)]
        command += [*extra_args, str(build.firmware)]
        self.command = command
        self.log = log
        self.process = None
        self.pty = None
        self.exit_code = None          # the firmware's exit code, once it exited
        self.exit_cycle = None
        self.summary = {}              # the harness's SIM line, after stop()
        self.uart = {}                 # its UART line (bytes, framing errors, backlog)
        self._exited = threading.Event()
        self._reader = None

    def __enter__(self):
        super().__enter__()
        self._reader = threading.Thread(target=self._read_stdout, daemon=True)
        self._reader.start()
        return self

    def _read_stdout(self):
        for line in self.process.stdout:
            kind, *fields = line.split()
            values = dict(field.split("=", 1) for field in fields if "=" in field)
            if kind == "EXIT":
                self.exit_code = int(values["code"])
                self.exit_cycle = int(values["cycle"])
                self._exited.set()
            elif kind == "SIM":
                self.summary = values
            elif kind == "UART":
                self.uart = {key: int(value) for key, value in values.items()}
        self._exited.set()         # the harness ended (with or without the firmware's exit)

    def release_cpu(self):
        """Lets the CPU out of reset (the harness logs ``cpu_run``)."""
        self.process.send_signal(signal.SIGUSR1)

    @property
    def exited(self):
        """The firmware exited, or the harness ended."""
        return self._exited.is_set()

    def console_text(self):
        try:
            return self.console.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self):
        super().stop()
        if self._reader is not None:
            self._reader.join(timeout=10)
        if self._console_file is not None:
            self._console_file.close()


@dataclass
class SuiteCapture:
    """One run of the suite captured through the appliance."""
    events: Events
    identity: object                 # latscope.device.Identity
    metadata: dict
    status: dict                     # the appliance's STATUS after the capture
    parser_stats: object             # latscope.parser.ParserStats
    exit_code: int                   # the firmware's
    exit_cycle: int
    sim: dict                        # the harness's SIM line
    uart: dict                       # the harness's UART line
    wall_seconds: float
    console: str = field(repr=False, default="")


def capture_suite(build, irq=DEMO_IRQ, *, output=None, truth=None, console=None,
                  on_events=None, timeout=600.0, info=""):
    """Runs the suite of ``build`` on the simulated SoC and captures it through the appliance,
    exactly as from a board: identify, configure the IRQ generator, start, let the CPU run,
    read until the firmware exits, stop, drain.

    ``output``: a capture file to write (metadata: identity, CPU variant, suite and IRQ
    settings). ``truth``: the harness's ground-truth log. ``on_events(events, device)``:
    called with every batch of verified events (progress). Raises DeviceError when the
    firmware does not exit within ``timeout`` seconds or the harness ends first."""
    from .capture_file import CaptureWriter

    started = time.monotonic()
    chunks = []
    with SocSimulation(build, truth=truth, console=console) as sim, \
            Device(open_transport(sim.pty)) as device:
        identity = device.identify()
        metadata = capture_metadata(
            identity, "sim:soc", irq,
            info or (f"latscope test suite on the simulated SoC "
                     f"({build.settings.cpu}, {build.settings.marker} markers)"), sim)
        writer = CaptureWriter(output, metadata) if output is not None else None
        try:
            if writer is not None:
                device.raw_sink = writer.write
            device.configure_irq(irq)
            device.start()
            sim.release_cpu()

            def take(events):
                if len(events):
                    chunks.append(events)
                    if on_events is not None:
                        on_events(events, device)

            deadline = started + timeout
            while not sim.exited:
                take(device.poll())
                if time.monotonic() > deadline:
                    raise DeviceError(f"the suite did not finish within {timeout:g} s "
                                      f"(console: {sim.console})")
            if sim.exit_code is None:
                raise DeviceError(f"the simulation ended before the firmware exited: "
                                  f"{sim.summary or 'no summary'}")
            # The firmware is done; the harness lingers so the appliance can drain: STOP
            # closes the last segment once its FIFO is empty.
            device.stop()
            device.configure_irq(IrqSettings(enable=False))
            take(device.drain())
            take(device.parser.finish())
            status = device.status()
            if writer is not None:
                writer.close({"device_status": status, "parser": device.parser.stats.as_dict(),
                              "exit_code": sim.exit_code, "exit_cycle": sim.exit_cycle})
        except BaseException:
            if writer is not None:
                writer.abandon()
            raise
        sim.stop()
        return SuiteCapture(Events.concatenate(chunks), identity, metadata, status,
                            device.parser.stats, sim.exit_code, sim.exit_cycle, sim.summary,
                            sim.uart, time.monotonic() - started, sim.console_text())
