"""The simulator's bring-up builds (``sim/``, make; no appliance): the system tests that run
its programs directly (test_sim_soc, test_cpu_truth, test_bus_load; the firmware layer's
RV32 runs, test_kernel and test_suite_native) share them."""

import subprocess
from pathlib import Path

import pytest

from latscope.simulated.soc import build_lock

ROOT = Path(__file__).resolve().parents[2]
SIM = ROOT / "sim"
CPUS = ["VexRiscv_IMAC", "VexRiscv_Lite"]


def make_variable(cpu, target):
    """What ``make -s -C sim CPU=cpu target`` prints: a path."""
    result = subprocess.run(
        ["make", "-s", "-C", str(SIM), f"CPU={cpu}", target],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(result.stdout.strip())


def bringup_build(cpu):
    """(simulator binary, firmware directory) of one CPU's bring-up build, built if needed. A
    missing Verilator, RISC-V toolchain or VexRiscv package fails it with make's message.

    Under ``build_soc``'s lock of ``sim/build``: test files on the other worker build there
    too (a run at load 9 had test_cpu_truth exec this binary while test_sim_soc's make was
    relinking it: "Permission denied")."""
    with build_lock(SIM / "build"):
        result = subprocess.run(
            ["make", "-C", str(SIM), f"CPU={cpu}"], capture_output=True, text=True
        )
    if result.returncode != 0:
        pytest.fail(
            f"make -C sim CPU={cpu} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}",
            pytrace=False,
        )
    return make_variable(cpu, "print-binary"), make_variable(cpu, "print-firmware-dir")
