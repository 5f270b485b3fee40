"""Speed of the Verilator full-system simulation, and the wall time of ``make demo``.

1. Bring-up build (no appliance), per CPU: sim/firmware/irq_test.elf with no IRQ line, i.e.
   its main loop storing a GPIO marker every few cycles, stopped by --max-cycles; without
   and with the ground-truth log (a line per marker).
2. With the appliance (``sim:soc``), per CPU: a short suite (IL-a, IDL-b, TSL-a) captured by
   the host through the pty exactly as the demo does; cycles/s as the harness reports them.
3. The demo: ``python -m latscope.demo`` (the whole suite, 1000 samples per IL/IDL/TSL
   table), wall time from start to tables, with everything already built.

Builds what it needs first. The machine is shared: figures vary with its load.

    .venv/bin/python bench/sim_speed.py [--cycles N] [--repeat R] [--cpu ...] [--no-demo]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sim_make import make

ROOT = Path(__file__).resolve().parent.parent
CPUS = ["VexRiscv_IMAC", "VexRiscv_Lite"]


def cycles_per_second(binary, firmware, cycles, truth):
    command = [str(binary), "--max-cycles", str(cycles), "--console", os.devnull]
    if truth:
        command += ["--truth", truth]
    result = subprocess.run(command + [str(firmware)], capture_output=True, text=True)
    line = next(line for line in result.stdout.splitlines() if line.startswith("SIM "))
    fields = dict(field.split("=", 1) for field in line.split()[1:])
    assert fields["end"] == "timeout" and int(fields["cycles"]) == cycles, line
    return float(fields["cycles_per_s"])


def bring_up(cpus, cycles, repeat):
    print(f"bring-up build: irq_test main loop (GPIO marker stores), {cycles:,} cycles a run, "
          f"best of {repeat}, single-threaded")
    with tempfile.TemporaryDirectory() as scratch:
        truth = os.path.join(scratch, "truth.log")
        for cpu in cpus:
            make(cpu)
            binary = Path(make(cpu, "print-binary").strip())
            firmware = Path(make(cpu, "print-firmware-dir").strip()) / "irq_test.elf"
            plain = max(cycles_per_second(binary, firmware, cycles, None)
                        for _ in range(repeat))
            logged = max(cycles_per_second(binary, firmware, cycles, truth)
                         for _ in range(repeat))
            print(f"  {cpu:<15} {plain / 1e6:6.2f} M cycles/s   with ground-truth log "
                  f"{logged / 1e6:6.2f} M cycles/s   ({plain / 1e8:.4f} x real time at 100 MHz)")


def with_appliance(cpus, samples, repeat):
    from latscope.simulation import DEMO_IRQ, SuiteSettings, build_soc, capture_suite

    print(f"with the appliance (sim:soc): suite IL_A,IDL_B,TSL_A, {samples} samples, captured "
          f"through the pty, best of {repeat}")
    with tempfile.TemporaryDirectory() as scratch:
        for cpu in cpus:
            settings = SuiteSettings(cpu=cpu, samples=samples, tests="IL_A,IDL_B,TSL_A")
            build = build_soc(settings, build_dir=Path(scratch) / "suite")
            best = None
            for _ in range(repeat):
                run = capture_suite(build, DEMO_IRQ)
                rate = float(run.sim["cycles_per_s"])
                if best is None or rate > best[0]:
                    best = (rate, int(run.sim["cycles"]), run.wall_seconds)
            rate, cycles, wall = best
            print(f"  {cpu:<15} {rate / 1e6:6.2f} M cycles/s   ({cycles / 1e6:.1f} M cycles, "
                  f"{wall:.1f} s wall for the run)")


def demo(cpu):
    with tempfile.TemporaryDirectory() as scratch:
        output = Path(scratch) / "demo.lsc"
        command = [sys.executable, "-m", "latscope.demo", "--cpu", cpu, "-o", str(output)]
        subprocess.run(command + ["--samples", "1", "--tests", "MQ"], cwd=ROOT,
                       capture_output=True, check=True)        # builds what is missing
        started = time.monotonic()
        result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        wall = time.monotonic() - started
    if result.returncode != 0:
        sys.exit(f"demo failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    simulation = next(line for line in result.stdout.splitlines()
                      if line.startswith("simulation:"))
    print(f"demo ({cpu}, whole suite): {wall:.1f} s wall, built beforehand; {simulation}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=2, help="runs per figure; best is shown")
    parser.add_argument("--samples", type=int, default=200,
                        help="samples of the short suite with the appliance")
    parser.add_argument("--cpu", action="append", choices=CPUS)
    parser.add_argument("--no-demo", action="store_true", help="skip the demo's wall time")
    args = parser.parse_args(argv)
    cpus = args.cpu or CPUS
    bring_up(cpus, args.cycles, args.repeat)
    with_appliance(cpus, args.samples, args.repeat)
    if not args.no_demo:
        for cpu in cpus:
            demo(cpu)


if __name__ == "__main__":
    main()
