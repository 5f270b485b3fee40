"""Simulated cycles per second of the Verilator full-system simulation, per CPU variant.

Workload: sim/firmware/irq_test.elf with no IRQ line, i.e. its main loop storing a GPIO
marker every few cycles forever, stopped by --max-cycles. Measured without and with the
ground-truth log (which then gets a line per marker). Builds sim/ first if needed.

    .venv/bin/python bench/sim_speed.py [--cycles N] [--repeat R] [--cpu VexRiscv_Lite ...]
"""

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SIM = Path(__file__).resolve().parent.parent / "sim"
CPUS = ["VexRiscv_IMAC", "VexRiscv_Lite"]


def make(cpu, *targets):
    result = subprocess.run(["make", "-s", "-C", str(SIM), f"CPU={cpu}", *targets],
                            capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"make -C sim CPU={cpu} failed:\n{result.stdout}{result.stderr}")
    return result.stdout


def cycles_per_second(binary, firmware, cycles, truth):
    command = [str(binary), "--max-cycles", str(cycles), "--console", os.devnull]
    if truth:
        command += ["--truth", truth]
    result = subprocess.run(command + [str(firmware)], capture_output=True, text=True)
    line = next(line for line in result.stdout.splitlines() if line.startswith("SIM "))
    fields = dict(field.split("=", 1) for field in line.split()[1:])
    assert fields["end"] == "timeout" and int(fields["cycles"]) == cycles, line
    return float(fields["cycles_per_s"])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=2, help="runs per figure; best is shown")
    parser.add_argument("--cpu", action="append", choices=CPUS)
    args = parser.parse_args(argv)

    print(f"sim_speed: irq_test main loop (GPIO marker stores), {args.cycles:,} cycles a run, "
          f"best of {args.repeat}, single-threaded")
    with tempfile.TemporaryDirectory() as scratch:
        truth = os.path.join(scratch, "truth.log")
        for cpu in args.cpu or CPUS:
            make(cpu)
            binary = Path(make(cpu, "print-binary").strip())
            firmware = Path(make(cpu, "print-firmware-dir").strip()) / "irq_test.elf"
            plain = max(cycles_per_second(binary, firmware, args.cycles, None)
                        for _ in range(args.repeat))
            logged = max(cycles_per_second(binary, firmware, args.cycles, truth)
                         for _ in range(args.repeat))
            print(f"{cpu:<15} {plain / 1e6:6.2f} M cycles/s   with ground-truth log "
                  f"{logged / 1e6:6.2f} M cycles/s   ({plain / 1e8:.4f} x real time at 100 MHz)")


if __name__ == "__main__":
    main()
