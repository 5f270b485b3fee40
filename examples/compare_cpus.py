"""Run the same suite on two CPU variants of the simulated SoC and compare the tables.

    .venv/bin/python examples/compare_cpus.py [--out DIR] [--samples N]

A loop over configurations: one session per variant (the simulation runs the suite once per
session), one capture file each, then the comparison that ``latscope compare`` prints.
"""

import argparse
from pathlib import Path

import latscope
from latscope.report import compare, formats

CPUS = ["VexRiscv_IMAC", "VexRiscv_Lite"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out/example-compare", help="output directory")
    parser.add_argument("--samples", type=int, default=50, help="samples per table")
    parser.add_argument("--tests", default="IL_A", help="suite tests to run")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    captures = []
    for cpu in CPUS:
        suite = latscope.SuiteSettings(cpu=cpu, samples=args.samples, tests=args.tests)
        with latscope.open("sim:soc", suite=suite) as dev:
            dev.configure_irq(period=5000, jitter_mask=0xFF, width=100)
            cap = dev.capture(timeout=300, info=f"examples/compare_cpus.py, {cpu}")
        captures.append(cap.save(out / f"{cpu}.lsc"))
        print(
            f"{cpu}: "
            + ", ".join(f"{row['name']} avg {row['avg_ns']:.0f} ns" for row in cap.rows())
        )

    runs = compare.load_runs(captures, CPUS)
    document = compare.comparison(runs)
    print(formats.named("text").comparison_text(document), end="")
    compare.write_directory(runs, document, out)  # comparison.json and the figures


if __name__ == "__main__":
    main()
