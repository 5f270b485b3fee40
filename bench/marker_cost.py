"""CPU cycles one trace marker costs the code that writes it, per marker variant and CPU.

Runs sim/firmware/marker_cost.c (built with the suite's marker library, once per variant)
on the Verilated SoC and prints two figures per variant:

* loop: (cycles of a loop writing one marker per iteration - the same loop without it) /
  iterations, timed by the firmware with mtime (one count per cycle), caches warm;
* burst: cycles between the stores of markers written back to back, from the harness's
  ground-truth log (the cycle the bus completes each store).

The GPIO variant masks interrupts around a read-flip-store of the strobe shadow
(latscope/marker.h): two CSR writes, a load, two stores (the shadow and the port); the bus
variant is one store into the trace window.

    .venv/bin/python bench/marker_cost.py [--cpu VexRiscv_Lite ...]
"""

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from sim_make import make

CPUS = ["VexRiscv_IMAC", "VexRiscv_Lite"]
VARIANTS = ["gpio", "bus"]
RESULT = re.compile(
    r"marker_cost (\w+): loops=(\d+) marker_loop=(\d+) empty_loop=(\d+) "
    r"burst=(\d+)"
)


def burst_spacing(truth, variant, count):
    """Cycles between the last ``count`` marker stores of the log (the second, warm burst)."""
    kind = "gpio" if variant == "gpio" else "trace"
    cycles = [
        int(line.split()[0])
        for line in Path(truth).read_text().splitlines()
        if not line.startswith("#") and line.split()[1] == kind
    ][-count:]
    return [b - a for a, b in zip(cycles, cycles[1:])]


def measure(cpu, variant, scratch):
    binary = Path(make(cpu, "print-binary").strip())
    firmware = Path(make(cpu, "print-firmware-dir").strip()) / f"marker_cost_{variant}.elf"
    truth = Path(scratch) / f"{cpu}-{variant}.truth"
    result = subprocess.run(
        [str(binary), "--truth", str(truth), "--max-cycles", "10000000", str(firmware)],
        capture_output=True,
        text=True,
    )
    match = RESULT.search(result.stderr + result.stdout)
    if result.returncode != 0 or not match or match[1] != variant:
        sys.exit(f"{firmware} failed:\n{result.stdout}{result.stderr}")
    loops, marked, empty, burst = (int(match[k]) for k in (2, 3, 4, 5))
    spacing = burst_spacing(truth, variant, burst)
    return (marked - empty) / loops, min(spacing), max(spacing)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu", action="append", choices=CPUS)
    args = parser.parse_args(argv)
    print("marker_cost: CPU cycles per trace marker (VexRiscv at 100 MHz: 1 cycle = 10 ns)")
    print(f"{'cpu':<15} {'variant':<8} {'loop (mtime)':>13} {'burst (truth log)':>18}")
    with tempfile.TemporaryDirectory() as scratch:
        for cpu in args.cpu or CPUS:
            make(cpu, "sim", "firmware")
            for variant in VARIANTS:
                per_marker, low, high = measure(cpu, variant, scratch)
                burst = f"{low}" if low == high else f"{low}..{high}"
                print(f"{cpu:<15} {variant:<8} {per_marker:13.2f} {burst:>18}")


if __name__ == "__main__":
    main()
