"""The full system in Verilator (``sim/``) as the appliance port ``sim:soc``: a VexRiscv SoC
runs latscope's test suite (``firmware/suite``) or a bring-up program on the reference
kernel, and the appliance gateware, exported from Amaranth, watches its trace pins and bus and
drives its interrupt. Builds it (make, incremental) and runs it, reproducibly to the cycle
(sim/README.md).
"""

import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from ..capture.conditions import Conditions
from ..link.device import DeviceError
from ..progress import step
from ..terminal import output_width, wrap
from .appliance import SimulatedAppliance, die_with
from .cpu_truth import TruthSource

__all__ = [
    "ROOT",
    "RELEASE_AFTER_START",
    "EXIT_PAUSE",
    "SuiteSettings",
    "SocBuild",
    "SocSimulation",
    "build_soc",
    "simulator_binary",
    "build_suite",
    "build_lock",
]

#: The repository (sim/, firmware/, decoders/): this file is host/latscope/simulated/soc.py in
#: it; ``LATSCOPE_ROOT`` names it for an installed latscope (a wheel has the host only).
ROOT = Path(os.environ.get("LATSCOPE_ROOT", Path(__file__).resolve().parents[3]))


def require_repository(what="the simulated SoC"):
    """Raises DeviceError, saying what to do, where :data:`ROOT` is not a latscope checkout
    (a pip-installed latscope without ``LATSCOPE_ROOT``): ``what`` is built from its sim/
    and firmware/."""
    if not (ROOT / "sim" / "Makefile").is_file():
        where = "LATSCOPE_ROOT" if "LATSCOPE_ROOT" in os.environ else "the installed package"
        raise DeviceError(
            f"{what} is built from the latscope repository's sim/ and firmware/, which are "
            f"not at {ROOT} ({where}): an installed latscope holds the host software only; "
            f"run it in a clone of the repository (make demo) or set LATSCOPE_ROOT to the "
            f"clone, with the tools of its scripts/setup.sh (Verilator, the RISC-V toolchain)"
        )


#: --linger value that means "until the host stops the simulation".
_LINGER_FOREVER = 1 << 62
#: Cycles from the capture's start (the appliance's ``capturing`` rising, the cycle after
#: START executed) to the CPU's first cycle out of reset, plus the run's ``phase``.
RELEASE_AFTER_START = 16
#: Cycles after the firmware's exit at which the harness waits for the host's next byte
#: (STOP), so that the capture ends at a fixed cycle as well.
EXIT_PAUSE = 64


# --- sim:soc: build ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SuiteSettings:
    """What the simulated DUT runs: the CPU variant and the suite's build settings
    (``firmware/suite/Makefile``: MARKER, SAMPLES, TESTS, PACE, LOAD, LOAD_PARAM,
    SUITE_CFLAGS; ``cache``: the simulator's CACHE, ``sim/Makefile``), or instead of
    the suite a bring-up program that ``sim/Makefile`` builds (``program``: ``irq_loop``,
    the IRQ loop method's DUT, ``irq_loop_marked``, or ``wiring_walk``, the self-test's
    wiring program; the suite's settings then do not apply)."""

    cpu: str = "VexRiscv_IMAC"  # or VexRiscv_Lite (rv32im, about 2x faster to simulate)
    marker: str = "gpio"  # gpio: GPIO trace port; bus: TRACE window on the bus
    samples: int = 1000  # per IL, IDL and TSL table (TF/SEO/MQ: up to 256)
    tests: str = "all"  # or a comma-separated list of markers.Test names
    pace: int = 0  # min. cycles between two samples of thread-driven tests
    cflags: str = ""  # more -D settings of the suite (SUITE_CFLAGS, suite.h)
    program: str = "suite"  # or irq_loop, irq_loop_marked, wiring_walk
    load: str = "none"  # load profile: cpu, memory, bus, irq-high, irq-low, mixed
    load_param: int | None = None  # its parameter (None: the profile's default)
    cache: str = "on"  # off: the CPU's caches off (sim/cache_off.py)

    def as_dict(self):
        return asdict(self)

    def conditions(self):
        """The load and cache this build runs under, as captures record them."""
        return Conditions(self.load, self.load_param, self.cache)


@dataclass(frozen=True)
class SocBuild:
    """A built simulator (with the appliance) and the suite firmware it runs."""

    simulator: Path
    firmware: Path
    settings: SuiteSettings


#: Runs a command (``"$@"``) as the leader's child in a process group of its own and, when
#: the leader is told to end (SIGTERM: its parent died, ``PR_SET_PDEATHSIG``), kills the
#: whole group: make and every compiler it started (make passes a SIGTERM on to its own
#: children only; a compiler driver's subprocesses would build on).
_GROUP_KILLER = 'trap "kill -KILL 0" TERM; "$@" & wait $!'


def _make(args, what, log):
    """Runs make; on failure raises DeviceError with the end of its output. The build ends
    with this process: make runs in a process group of its own under :data:`_GROUP_KILLER`,
    which dies with this process (kill -9 too) and takes the group along; an exception here
    (Ctrl-C) kills the group as well."""
    command = ["make", "--no-print-directory", *args]
    process = subprocess.Popen(
        ["/bin/sh", "-c", _GROUP_KILLER, "make", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        process_group=0,
        preexec_fn=die_with(os.getpid()),
    )
    try:
        output, _ = process.communicate()
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    if log is not None:
        log.write(output)
    if process.returncode != 0:
        raise DeviceError(f"building {what} failed ({' '.join(command)}):\n" + output[-4000:])
    return output


@contextlib.contextmanager
def build_lock(directory) -> Iterator[None]:
    """Holds the build lock of ``directory`` (an advisory ``flock`` on its ``.latscope-lock``
    file, which names the holder's pid): two builds in one directory would write the same
    files at once, so a second one waits for the first (saying so on stderr, where a
    user waiting for it looks). The kernel drops the lock with its holder, however that
    ends."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(directory / ".latscope-lock", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            # Wrapped to the terminal: the directory's path can be long (a CI checkout's).
            waiting = f"latscope: waiting for the build in {directory} (pid {holder})"
            print(wrap(waiting, output_width(sys.stderr)), file=sys.stderr, flush=True)
            # The wait can take minutes (another process's first build): a progress step.
            with step(f"waiting for pid {holder}'s build"):
                fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # drops the flock


def build_soc(settings=SuiteSettings(), *, build_dir=None, log=None, sump=True, pgo=False):
    """Builds what ``sim:soc`` runs, incrementally (make): the appliance's Verilog export, the
    Verilated SoC with the appliance for ``settings.cpu``, and the suite firmware.

    ``build_dir``: the suite's build directory (firmware/suite/build by default); in it
    each set of settings builds in a directory of its own (``firmware/suite/Makefile``'s
    SIM_DIR), so builds of other settings never replace the ELF a run uses.
    ``sump=False``: the appliance without its SUMP device mode (``make -C sim SUMP=0``), as
    the demo runs it: the same captures, cycle for cycle, in about 60 % of the time; SUMP
    mode (sigrok's ``ols`` driver) needs the default. ``pgo``: the profile-guided build
    (``PGO=1``; the first build also runs a short training capture)."""
    require_repository()
    sim = ROOT / "sim"
    common = _simulator_configuration(settings, sump, pgo)
    # sim/build holds what every configuration shares (the appliance's Verilog export, the
    # firmware programs) besides each one's objects: one build at a time.
    variant = f"{settings.cpu}{'' if sump else ', no SUMP'}{', profile-guided' if pgo else ''}"
    with build_lock(sim / "build"):
        if pgo:
            # The first profile-guided build's longest part, a step of its own: an
            # instrumented simulator built and run on a short suite (make's no-op later).
            with step("profiling the simulator: an instrumented build runs a short suite"):
                _make(["-C", str(sim), "APPLIANCE=1", "pgo-profile", *common], "the profile", log)
        with step(f"building the SoC simulator, {variant} (minutes the first time)"):
            _make(["-C", str(sim), "APPLIANCE=1", "sim", *common], "the SoC simulator", log)
        simulator = simulator_binary(settings, sump=sump, pgo=pgo)
        if settings.program != "suite":
            return SocBuild(simulator, _bring_up_program(settings, common, log), settings)
    return SocBuild(simulator, build_suite(settings, build_dir=build_dir, log=log), settings)


def _simulator_configuration(settings, sump, pgo):
    """The sim/Makefile variables of the simulator that runs ``settings``."""
    return [
        f"CPU={settings.cpu}",
        f"PYTHON={sys.executable}",
        f"SUMP={int(sump)}",
        f"PGO={int(pgo)}",
        f"CACHE={settings.cache}",
    ]


def simulator_binary(settings=SuiteSettings(), *, sump=True, pgo=False):
    """Where sim/Makefile puts (or has put) the simulator :func:`build_soc` builds for these
    arguments, built or not (``make print-binary``: the Makefile names its directories)."""
    require_repository()
    configuration = _simulator_configuration(settings, sump, pgo)
    command = ["-s", "-C", str(ROOT / "sim"), "APPLIANCE=1", "print-binary", *configuration]
    return Path(_make(command, "the SoC simulator", None).strip())


def build_suite(settings=SuiteSettings(), *, build_dir=None, log=None):
    """Builds the suite firmware of ``settings`` (``firmware/suite``, make) and gives the
    path of its ELF; ``build_dir`` as for :func:`build_soc` (one build at a time in it:
    :func:`build_lock`)."""
    require_repository("the test suite firmware")
    suite = ROOT / "firmware" / "suite"
    build_dir = Path(build_dir) if build_dir is not None else suite / "build"
    args = [
        "-C",
        str(suite),
        f"BUILD={build_dir.resolve()}",
        f"MARKER={settings.marker}",
        f"SAMPLES={settings.samples}",
        f"TESTS={settings.tests}",
        f"PACE={settings.pace}",
        f"CPU={settings.cpu}",
        f"LOAD={settings.load}",
        f"LOAD_PARAM={'' if settings.load_param is None else settings.load_param}",
        f"SUITE_CFLAGS={settings.cflags}",
    ]
    with build_lock(build_dir):
        with step("building the test suite firmware (make)"):
            _make([*args, "-j2", "sim"], "the test suite firmware", log)
        return Path(_make(["-s", *args, "print-sim-elf"], "the test suite firmware", None).strip())


def _bring_up_program(settings, common, log):
    """The ELF of a ``sim/firmware`` program (:attr:`SuiteSettings.program`), built."""
    sim = str(ROOT / "sim")
    with step("building the sim/firmware programs (make)"):
        _make(["-C", sim, "firmware", *common], "the sim/firmware programs", log)
    firmware = (
        Path(
            _make(
                ["-s", "-C", sim, "print-firmware-dir", *common], "the sim/firmware programs", None
            ).strip()
        )
        / f"{settings.program}.elf"
    )
    if not firmware.is_file():
        raise DeviceError(
            f"{firmware}: no such sim/firmware program "
            f"({settings.program!r}; see sim/README.md, Firmware)"
        )
    return firmware


# --- sim:soc: run -----------------------------------------------------------------------------


class SocSimulation(SimulatedAppliance):
    """The Verilated SoC with the appliance, running the suite of ``build`` (a
    :class:`SocBuild`).

    The CPU is held in reset until the host has identified the appliance, configured the IRQ
    generator and started the capture, so the capture holds the whole suite: the harness lets
    it run :data:`RELEASE_AFTER_START` (+ ``phase``) cycles after the capture starts, and
    START restarts the IRQ generator from its seed, so a run is reproducible to the cycle
    (without a START, :meth:`release_dut` lets it run at once; after one it changes nothing).
    The harness says when the firmware exited (:attr:`dut_exited`), stops its clock
    :data:`EXIT_PAUSE` cycles later until the host's STOP arrives (so the capture ends at a
    fixed cycle too) and keeps simulating so the appliance can drain.

    ``truth``: write the harness's ground-truth log there; ``console``: the firmware's console
    file (a temporary file by default). ``phase``: extra cycles before the CPU's release (after
    :data:`RELEASE_AFTER_START`): the IRQ sequence meets the suite at another phase, still
    reproducibly. ``release``: ``"on_start"`` (the default) as above; ``"on_request"``: the
    CPU waits for :meth:`release_dut` alone, whatever the host starts before (the
    self-test: the loopback test's capture must not start the DUT), and the clock never
    waits for the host."""

    dut_ends = True

    def __init__(
        self,
        build,
        extra_args=(),
        *,
        log=None,
        truth=None,
        console=None,
        phase=0,
        release="on_start",
    ):
        if phase < 0:
            raise ValueError(f"phase must be 0 or more, not {phase}")
        if release not in ("on_start", "on_request"):
            raise ValueError(f"release must be 'on_start' or 'on_request', not {release!r}")
        self.phase = phase
        self.release = release
        self.build = build
        self._console_file = None
        if console is None:
            self._console_file = tempfile.NamedTemporaryFile(
                prefix="latscope-console-", suffix=".txt", delete=False
            )
            console = self._console_file.name
        self.console = Path(console)
        command = [str(build.simulator), "--pty", "--hold-cpu"]
        if release == "on_start":
            command += [
                "--release-on-start",
                str(RELEASE_AFTER_START + phase),
                "--pause-after-exit",
                str(EXIT_PAUSE),
            ]
        command += ["--linger", str(_LINGER_FOREVER), "--console", str(self.console)]
        # A capture records the log and the firmware (latscope.analysis.where reads both).
        self.truth = None if truth is None else TruthSource.of_run(truth, build.firmware)
        if truth is not None:
            command += ["--truth", str(truth)]
        command += [*extra_args, str(build.firmware)]
        self._start(command, "sim:soc", log)
        self.exit_code = None  # the firmware's exit code, once it exited
        self.exit_cycle = None
        self.summary = {}  # the harness's SIM line, after stop()
        self.uart = {}  # its UART line (bytes, framing errors, backlog)
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
        self._exited.set()  # the harness ended (with or without the firmware's exit)

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
            return (
                f"the simulation ended before the firmware exited: {self.summary or 'no summary'}"
            )
        return None

    def dut_metadata(self):
        return {
            "cpu": self.build.settings.cpu,
            "suite": self.build.settings.as_dict(),
            # The sim port's kernel writes KERNEL/ISR_ENTRY before every handler
            # (firmware/ports/sim/arch_port.h): the ILH tables (the loss accounting's plan).
            "handler_markers": True,
            "conditions": self.build.settings.conditions().as_dict(),
            "cpu_release": (
                {"after_start": RELEASE_AFTER_START, "phase": self.phase}
                if self.release == "on_start"
                else self.release
            ),
            **({"truth": self.truth.as_dict()} if self.truth else {}),
        }

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
