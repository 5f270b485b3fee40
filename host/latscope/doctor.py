"""``latscope doctor``: what this machine has of what latscope uses, one line per check,
"ok" or "problem", a problem with the command that fixes it.

Each check looks for itself (runs the program, reads the device file) rather than trusting a
configuration: the decoders as sigrok-cli lists them, the serial ports as this user can open
them, the FTDI latency timer as the kernel reports it.
"""

import grp
import importlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Check", "CHECKS", "run_checks", "check_line", "WANTED_LATENCY_TIMER_MS"]

#: The FTDI latency timer latscope wants, in ms. An FTDI chip holds received bytes that do
#: not fill a USB packet for up to this long before sending them (FTDI AN232B-04, "Data
#: Throughput, Latency and Handshaking"; the Linux ftdi_sio default is 16 ms): every command
#: reply and the tail of the live view wait that long.
WANTED_LATENCY_TIMER_MS = 1

#: How long a program's version query may take (PulseView starts Qt for it: under a second).
_VERSION_TIMEOUT_S = 20


@dataclass(frozen=True)
class Check:
    """One check's verdict: ``found`` says what is there, ``fix`` (a problem's) the command
    that fixes it."""

    name: str
    ok: bool
    found: str
    fix: str = ""


def check_line(check: Check) -> str:
    """``ok      decoders: ...`` or ``problem decoders: ...; fix: <command>``."""
    line = f"{'ok' if check.ok else 'problem':<7} {check.name}: {check.found}"
    return f"{line}; fix: {check.fix}" if check.fix and not check.ok else line


def _version(command: list[str], environ: dict[str, str] | None = None) -> str:
    """The first line a program prints for its version query ("" when it prints none)."""
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=_VERSION_TIMEOUT_S,
            env=environ,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    lines = done.stdout.strip().splitlines()
    return lines[0].strip() if lines else ""


def _apt(package: str) -> str:
    return f"sudo apt-get install {package} (or make setup)"


def _make_command(target: str) -> str:
    """``make <target>`` of the repository, with ``-C`` where it is not the working directory."""
    from .hints import shown
    from .simulated.soc import ROOT

    here = Path.cwd().resolve() == ROOT.resolve()
    return f"make {target}" if here else f"make -C {shown(ROOT)} {target}"


def check_decoders() -> Check:
    """The latscope decoders (decoders/latscope_*) as ``sigrok-cli -L`` lists them, with the
    decoder search path of this environment (``SIGROKDECODE_DIR`` and the user directory that
    ``make install-decoders`` fills)."""
    from .simulated.soc import ROOT

    if shutil.which("sigrok-cli") is None:
        return Check("decoders", False, "sigrok-cli not found", _apt("sigrok-cli"))
    wanted = sorted(path.name for path in (ROOT / "decoders").glob("latscope_*"))
    if not wanted:
        return Check(
            "decoders",
            False,
            f"no latscope repository at {ROOT} (its decoders/)",
            "set LATSCOPE_ROOT to a clone of the repository",
        )
    listed = subprocess.run(
        ["sigrok-cli", "-L"], capture_output=True, text=True, stdin=subprocess.DEVNULL
    ).stdout.split()
    missing = [name for name in wanted if name not in listed]
    if not missing:
        return Check("decoders", True, f"sigrok-cli -L lists {', '.join(wanted)}")
    return Check(
        "decoders",
        False,
        f"sigrok-cli -L does not list {', '.join(missing)}",
        f"{_make_command('install-decoders')} (or export SIGROKDECODE_DIR={ROOT / 'decoders'})",
    )


def _serial_ports() -> list[Path]:
    """USB serial adapters (FTDI and the like: ttyUSB; CDC-ACM: ttyACM)."""
    return sorted([*Path("/dev").glob("ttyUSB*"), *Path("/dev").glob("ttyACM*")])


def check_serial_ports() -> Check:
    """Every USB serial port opens for reading and writing by this user."""
    ports = _serial_ports()
    if not ports:
        return Check(
            "serial ports", True, "no /dev/ttyUSB* or /dev/ttyACM* (the simulation needs none)"
        )
    closed = [port for port in ports if not os.access(port, os.R_OK | os.W_OK)]
    if not closed:
        return Check("serial ports", True, f"{', '.join(map(str, ports))} readable and writable")
    groups = sorted({grp.getgrgid(port.stat().st_gid).gr_name for port in closed})
    return Check(
        "serial ports",
        False,
        f"{', '.join(map(str, closed))}: no read/write permission (group {', '.join(groups)})",
        f"sudo usermod -aG {groups[0]} $USER, then log in again",
    )


def check_latency_timer() -> Check:
    """The latency timer of every FTDI adapter (``/sys/bus/usb-serial/devices/*``)."""
    timers = sorted(Path("/sys/bus/usb-serial/devices").glob("*/latency_timer"))
    wanted = WANTED_LATENCY_TIMER_MS
    if not timers:
        return Check("FTDI latency timer", True, "no FTDI serial adapter")
    slow = [(t, t.read_text().strip()) for t in timers if t.read_text().strip() != str(wanted)]
    if not slow:
        return Check("FTDI latency timer", True, f"{wanted} ms on every adapter")
    found = ", ".join(f"{t.parent.name} {value} ms" for t, value in slow)
    fix = "; ".join(f"echo {wanted} | sudo tee {t}" for t, _ in slow)
    return Check("FTDI latency timer", False, f"{found} ({wanted} ms wanted)", fix)


def check_simulator() -> Check:
    """The simulators built in sim/build, and whether the demo's (the default ``sim:soc``)
    is one of them."""
    from .link.device import DeviceError
    from .simulated.soc import ROOT, SuiteSettings, simulator_binary

    try:
        demo = simulator_binary(SuiteSettings(), sump=False)
    except DeviceError:  # not a repository (a pip install) or no make
        found = f"no latscope sim/ at {ROOT}"
        return Check("simulator", False, found, "set LATSCOPE_ROOT to a clone")
    built = sorted(path.parent.name for path in (ROOT / "sim" / "build").glob("*/latscope-sim"))
    listing = f"built: {', '.join(built)}" if built else "none built"
    if demo.is_file():
        return Check("simulator", True, f"{listing} (the demo's: {demo.parent.name})")
    found = f"{listing}, not the demo's {demo.parent.name}"
    return Check("simulator", False, found, _make_command("demo"))


def check_pulseview() -> Check:
    """PulseView and its version (asked without a display)."""
    if shutil.which("pulseview") is None:
        return Check("PulseView", False, "pulseview not found", _apt("pulseview"))
    version = _version(["pulseview", "-V"], {**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    return Check("PulseView", True, version or "pulseview (its version unknown)")


def _program_check(name: str, program: str, package: str) -> Callable[[], Check]:
    def check() -> Check:
        if shutil.which(program) is None:
            return Check(name, False, f"{program} not found", _apt(package))
        return Check(name, True, _version([program, "--version"]) or program)

    check.__doc__ = f"{program} on PATH (the {name})."
    return check


def check_fpga_tools() -> Check:
    """The YoWASP Yosys and nextpnr of this Python environment that board builds run."""
    # Imported by name: the host's type check (make lint's mypy) stays out of the boards'
    # and gateware's Amaranth code, which it would follow from a plain import.
    toolchain = importlib.import_module("latscope_boards.toolchain")
    try:
        tools = {**toolchain.yowasp_environment("ice40"), **toolchain.yowasp_environment("ecp5")}
    except toolchain.ToolMissing as error:
        return Check("FPGA tools", False, str(error).split(":")[0], "make setup")
    names = sorted({Path(path).name for path in tools.values()})
    return Check("FPGA tools", True, f"{', '.join(names)} in {Path(sys.prefix)}")


#: Every check, in the order printed.
CHECKS: list[Callable[[], Check]] = [
    check_decoders,
    check_serial_ports,
    check_latency_timer,
    check_simulator,
    check_pulseview,
    _program_check("RISC-V compiler", "riscv64-unknown-elf-gcc", "gcc-riscv64-unknown-elf"),
    _program_check("Verilator", "verilator", "verilator"),
    check_fpga_tools,
]


def run_checks() -> list[Check]:
    return [check() for check in CHECKS]
