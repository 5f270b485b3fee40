"""Builds of the Verilator SoC (sim/Makefile) for the simulation benchmarks."""

import subprocess
import sys
from pathlib import Path

SIM = Path(__file__).resolve().parent.parent / "sim"


def make(cpu, *targets):
    """Runs ``make -C sim CPU=cpu targets`` quietly (targets may include variables, e.g.
    ``APPLIANCE=1``); its stdout (for the print-* targets). Exits with make's output when
    the build fails."""
    result = subprocess.run(
        ["make", "-s", "-C", str(SIM), f"CPU={cpu}", f"PYTHON={sys.executable}", *targets],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        sys.exit(f"make -C sim CPU={cpu} failed:\n{result.stdout}{result.stderr}")
    return result.stdout
