"""Simulated appliances that the host reaches like a board, through a pseudo-terminal.

``sim:gateware``  the appliance gateware alone in Amaranth's simulator, with a scripted DUT
                  (slow; for the host code and the gateware).
``sim:soc``       the full system in Verilator (``sim/``): a VexRiscv SoC runs latscope's test
                  suite (``firmware/suite``) on the reference kernel, and the appliance
                  gateware, exported from Amaranth, watches its trace pins and bus and drives
                  its interrupt. latscope's main job with no board attached.

Both print ``PTY <path>`` and bridge the appliance's UART to that pty; the host opens it with
:func:`latscope.device.open_transport`, the same code as for a board's serial port.

Both are :class:`latscope.device.Port` objects, as a board's serial port is, so a capture
session (:mod:`latscope.session`) treats them alike. For ``sim:soc`` the CPU is held in reset
until the host has identified the appliance, configured the IRQ generator and started the
capture, so the capture holds the whole suite: the harness lets it run
:data:`RELEASE_AFTER_START` (+ ``phase``) cycles after the capture starts, and START
restarts the IRQ generator from its seed, so a run is reproducible to the cycle (without a
START, :meth:`SocSimulation.release_dut` lets it run at once; after one it changes
nothing). The harness says when the firmware exited (:attr:`SocSimulation.dut_exited`),
stops its clock a few cycles later until the host's STOP arrives (so the capture ends at a
fixed cycle too) and keeps simulating so the appliance can drain. :func:`capture_suite`
runs the suite that way.
"""

import ctypes
import os
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .link.device import DeviceError, IrqSettings, Port

__all__ = ["SimulatedAppliance", "SocSimulation", "SuiteSettings", "SocBuild", "SuiteCapture",
           "SIM_PORTS", "DEMO_IRQ", "is_simulated", "open_port", "open_selftest_port",
           "build_soc", "capture_suite"]

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
#: Cycles from the capture's start (the appliance's ``capturing`` rising, the cycle after
#: START executed) to the CPU's first cycle out of reset, plus the run's ``phase``.
RELEASE_AFTER_START = 16
#: Cycles after the firmware's exit at which the harness waits for the host's next byte
#: (STOP), so that the capture ends at a fixed cycle as well.
EXIT_PAUSE = 64


class SimulatedAppliance(Port):
    """Runs a simulation in a child process and gives the pty it bridges the UART to.

    Use as a context manager; the child is terminated on exit, and it dies with this process
    if that is killed (``PR_SET_PDEATHSIG``). It runs in a process group of its own, so a
    Ctrl-C at the terminal reaches only the host, which then stops the capture cleanly
    while the simulation still answers. :func:`open_port` gives the simulation of a port
    name (``sim:soc``: a :class:`SocSimulation` of the default suite)."""

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
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE,
                                        stderr=self.log or subprocess.DEVNULL, text=True,
                                        process_group=0, preexec_fn=_die_with(os.getpid()))
        line = self.process.stdout.readline()
        if not line.startswith("PTY "):
            self.process.kill()
            self.process.wait()
            raise DeviceError(f"simulation {' '.join(map(str, self.command))} did not start "
                              f"(printed {line!r})")
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


def _die_with(parent):
    """A ``preexec_fn`` for a child that must end with ``parent``: the kernel sends it
    SIGTERM when its parent dies (prctl PR_SET_PDEATHSIG, as the Verilator harness also
    sets for itself), and it ends at once if the parent died before that was set."""
    def arrange():
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)
    return arrange


def open_port(port, extra_args=(), *, suite=None, log=None):
    """The :class:`~latscope.device.Port` of a port name, not yet started: a simulation for
    ``sim:soc`` (the suite of ``suite``, a :class:`SuiteSettings`, built if needed) and
    ``sim:gateware``, else a serial port or pyserial URL."""
    if suite is not None and port != "sim:soc":
        raise ValueError("suite= is only for the sim:soc simulation")
    if port == "sim:soc":
        build = build_soc(suite or SuiteSettings(), log=log)
        return SocSimulation(build, extra_args, log=log)
    if is_simulated(port):
        return SimulatedAppliance(port, extra_args, log=log)
    return Port(port)


def is_simulated(port):
    return port in SIM_PORTS


def open_selftest_port(port, *, loopback=False, miswire=(), cpu="VexRiscv_IMAC", log=None):
    """The :class:`~latscope.device.Port` ``latscope selftest`` runs against, not yet started.

    ``sim:soc``: the SoC runs the wiring program (``firmware/tools/wiring_sim.c``), held in
    reset until the wiring test's capture has started (:meth:`SocSimulation.release_dut`);
    with ``loopback`` the harness's jumper wires the IRQ output to EDGE0 and the strobe
    until then (``--jumper``), as a user takes the jumper off before starting the DUT's
    program; ``miswire``: the harness's ``--miswire`` faults in the wires from the SoC's
    marker pins to the appliance (``"swap:3,4"``, ``"stuck-low:9"``, ...; sim/README.md).
    ``sim:gateware``: with ``loopback`` its jumper instead of its scripted DUT. Anything
    else: a board's port."""
    if miswire and port != "sim:soc":
        raise ValueError("miswire= is only for the sim:soc simulation")
    if port == "sim:soc":
        build = build_soc(SuiteSettings(cpu=cpu, program="wiring_walk"), log=log)
        args = ["--jumper"] if loopback else []
        for spec in miswire:
            args += ["--miswire", spec]
        return SocSimulation(build, args, log=log, release="on_request")
    return open_port(port, ["--loopback"] if loopback and port == "sim:gateware" else [],
                     log=log)


# --- sim:soc: build ---------------------------------------------------------------------------

@dataclass(frozen=True)
class SuiteSettings:
    """What the simulated DUT runs: the CPU variant and the suite's build settings
    (``firmware/suite/Makefile``: MARKER, SAMPLES, TESTS, PACE, SUITE_CFLAGS), or instead of
    the suite a bring-up program that ``sim/Makefile`` builds (``program``: ``irq_loop``,
    the IRQ loop method's DUT, ``irq_loop_marked``, or ``wiring_walk``, the self-test's
    wiring program; the suite's settings then do not apply)."""
    cpu: str = "VexRiscv_IMAC"       # or VexRiscv_Lite (rv32im, about 2x faster to simulate)
    marker: str = "gpio"             # gpio: GPIO trace port; bus: TRACE window on the bus
    samples: int = 1000              # per IL, IDL and TSL table (TF/SEO/MQ: up to 256)
    tests: str = "all"               # or a comma-separated list of markers.Test names
    pace: int = 0                    # min. cycles between two samples of thread-driven tests
    cflags: str = ""                 # more -D settings of the suite (SUITE_CFLAGS, suite.h)
    program: str = "suite"           # or irq_loop, irq_loop_marked, wiring_walk

    def as_dict(self):
        return asdict(self)


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


def build_soc(settings=SuiteSettings(), *, build_dir=None, log=None, sump=True, pgo=False):
    """Builds what ``sim:soc`` runs, incrementally (make): the appliance's Verilog export, the
    Verilated SoC with the appliance for ``settings.cpu``, and the suite firmware.

    ``build_dir``: the suite's build directory (firmware/suite/build by default); one per
    user of the suite keeps their settings from rebuilding each other's objects.
    ``sump=False``: the appliance without its SUMP device mode (``make -C sim SUMP=0``), as
    the demo runs it: the same captures, cycle for cycle, in about 60 % of the time; SUMP
    mode (sigrok's ``ols`` driver) needs the default. ``pgo``: the profile-guided build
    (``PGO=1``; the first build also runs a short training capture)."""
    sim = ROOT / "sim"
    common = [f"CPU={settings.cpu}", f"PYTHON={sys.executable}", f"SUMP={int(sump)}",
              f"PGO={int(pgo)}"]
    _make(["-C", str(sim), "APPLIANCE=1", "sim", *common], "the SoC simulator", log)
    simulator = Path(_make(["-s", "-C", str(sim), "APPLIANCE=1", "print-binary", *common],
                           "the SoC simulator", None).strip())
    if settings.program != "suite":
        return SocBuild(simulator, _bring_up_program(settings, common, log), settings)
    return SocBuild(simulator, build_suite(settings, build_dir=build_dir, log=log), settings)


def build_suite(settings=SuiteSettings(), *, build_dir=None, log=None):
    """Builds the suite firmware of ``settings`` (``firmware/suite``, make) and gives the
    path of its ELF; ``build_dir`` as for :func:`build_soc`."""
    suite = ROOT / "firmware" / "suite"
    build_dir = Path(build_dir) if build_dir is not None else suite / "build"
    _make(["-C", str(suite), "-j2", "sim", f"BUILD={build_dir.resolve()}",
           f"MARKER={settings.marker}", f"SAMPLES={settings.samples}",
           f"TESTS={settings.tests}", f"PACE={settings.pace}", f"CPU={settings.cpu}",
           f"SUITE_CFLAGS={settings.cflags}"],
          "the test suite firmware", log)
    march = _make(["-s", "-C", str(suite), f"CPU={settings.cpu}", "print-march"],
                  "the firmware's -march (sim/soc_map.toml)", None).strip()
    return build_dir.resolve() / f"sim-{settings.marker}-{march}" / "suite.elf"


def _bring_up_program(settings, common, log):
    """The ELF of a ``sim/firmware`` program (:attr:`SuiteSettings.program`), built."""
    sim = str(ROOT / "sim")
    _make(["-C", sim, "firmware", *common], "the sim/firmware programs", log)
    firmware = Path(_make(["-s", "-C", sim, "print-firmware-dir", *common],
                          "the sim/firmware programs", None).strip()) / f"{settings.program}.elf"
    if not firmware.is_file():
        raise DeviceError(f"{firmware}: no such sim/firmware program "
                          f"({settings.program!r}; see sim/README.md, Firmware)")
    return firmware


# --- sim:soc: run -----------------------------------------------------------------------------

class SocSimulation(SimulatedAppliance):
    """The Verilated SoC with the appliance, running the suite of ``build`` (a
    :class:`SocBuild`), the CPU held in reset until :meth:`release_dut`. ``truth``: write the
    harness's ground-truth log there; ``console``: the firmware's console file (a temporary
    file by default). ``phase``: extra cycles before the CPU's release (after
    :data:`RELEASE_AFTER_START`): the IRQ sequence meets the suite at another phase, still
    reproducibly. ``release``: ``"on_start"`` (the default) as above; ``"on_request"``: the
    CPU waits for :meth:`release_dut` alone, whatever the host starts before (the
    self-test: the loopback test's capture must not start the DUT), and the clock never
    waits for the host."""

    dut_ends = True

    def __init__(self, build, extra_args=(), *, log=None, truth=None, console=None, phase=0,
                 release="on_start"):
        if phase < 0:
            raise ValueError(f"phase must be 0 or more, not {phase}")
        if release not in ("on_start", "on_request"):
            raise ValueError(f"release must be 'on_start' or 'on_request', not {release!r}")
        self.phase = phase
        self.release = release
        self.build = build
        self._console_file = None
        if console is None:
            self._console_file = tempfile.NamedTemporaryFile(prefix="latscope-console-",
                                                             suffix=".txt", delete=False)
            console = self._console_file.name
        self.console = Path(console)
        command = [str(build.simulator), "--pty", "--hold-cpu"]
        if release == "on_start":
            command += ["--release-on-start", str(RELEASE_AFTER_START + phase),
                        "--pause-after-exit", str(EXIT_PAUSE)]
        command += ["--linger", str(_LINGER_FOREVER), "--console", str(self.console)]
        if truth is not None:
            command += ["--truth", str(truth)]
        command += [*extra_args, str(build.firmware)]
        self._start(command, "sim:soc", log)
        self.exit_code = None          # the firmware's exit code, once it exited
        self.exit_cycle = None
        self.summary = {}              # the harness's SIM line, after stop()
        self.uart = {}                 # its UART line (bytes, framing errors, backlog)
        self._exited = threading.Event()
        self._released = False
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

    def release_dut(self):
        """Lets the CPU out of reset now if no capture has started (the harness logs
        ``cpu_run``); once a capture started, the CPU runs at its fixed cycle after START
        and the harness ignores this (a session calls it after START's reply)."""
        if not self._released:
            self.process.send_signal(signal.SIGUSR1)
            self._released = True

    @property
    def dut_exited(self):
        """The firmware exited, or the harness ended."""
        return self._exited.is_set()

    def dut_failure(self):
        if self._exited.is_set() and self.exit_code is None:
            return (f"the simulation ended before the firmware exited: "
                    f"{self.summary or 'no summary'}")
        return None

    def dut_metadata(self):
        return {"cpu": self.build.settings.cpu, "suite": self.build.settings.as_dict(),
                "cpu_release": ({"after_start": RELEASE_AFTER_START, "phase": self.phase}
                                if self.release == "on_start" else self.release)}

    def dut_end_stats(self):
        return {"exit_code": self.exit_code, "exit_cycle": self.exit_cycle}

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
    """One run of the suite captured through the appliance. The events are in the capture
    file ``path`` (None: the run was only counted, e.g. for a benchmark)."""
    path: object
    events: int                      # events captured
    identity: object                 # latscope.identity.Identity
    metadata: dict
    status: dict                     # the appliance's STATUS after the capture
    parser_stats: object             # latscope.parser.ParserStats
    exit_code: int                   # the firmware's
    exit_cycle: int
    sim: dict                        # the harness's SIM line
    uart: dict                       # the harness's UART line
    wall_seconds: float
    console: str = field(repr=False, default="")
    live: object = None              # the live statistics (StreamingAnalyzer), with live=True


def capture_suite(build, irq=DEMO_IRQ, *, output=None, truth=None, console=None,
                  on_batch=None, live=False, timeout=600.0, info="", phase=0):
    """Runs the suite of ``build`` on the simulated SoC and captures it through the appliance,
    exactly as from a board (a :class:`latscope.session.CaptureSession`): identify,
    configure the IRQ generator, start (the harness lets the CPU run ``phase`` +
    :data:`RELEASE_AFTER_START` cycles later), read until the firmware exits, stop, drain.
    The same build, IRQ settings and phase give the same capture, to the cycle (relative
    to START).

    ``output``: the capture file to write (metadata: identity, CPU variant, suite and IRQ
    settings). ``truth``: the harness's ground-truth log. ``live``: keep live statistics
    (:class:`latscope.live_stats.StreamingAnalyzer`, in ``run.analyzer`` of every batch and
    ``live`` of the result). ``on_batch(events, run)``: as for
    :meth:`~latscope.session.CaptureSession.capture` (progress).
    Raises DeviceError when the firmware does not exit within ``timeout`` seconds or the
    harness ends first."""
    from .live_stats import StreamingAnalyzer
    from .session import CaptureSession, Until

    info = info or (f"latscope test suite on the simulated SoC ({build.settings.cpu}, "
                    f"{build.settings.marker} markers)")
    with CaptureSession(SocSimulation(build, truth=truth, console=console,
                                              phase=phase)) as session:
        session.configure_irq(irq)
        analyzer = StreamingAnalyzer(session.identity.stamp_hz) if live else None
        run = session.capture(output, info=info, until=Until(timeout=timeout),
                              analyzer=analyzer, on_batch=on_batch)
        sim = session.port
        sim.stop()
        return SuiteCapture(output, run.events, session.identity, run.metadata, run.status,
                            run.parser_stats, sim.exit_code, sim.exit_cycle, sim.summary,
                            sim.uart, run.wall_seconds, sim.console_text(), analyzer)
