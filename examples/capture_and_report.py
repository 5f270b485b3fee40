"""Capture the test suite on the simulated SoC, print its tables, save and report.

    .venv/bin/python examples/capture_and_report.py [--out DIR] [--samples N] [--port PORT]

With a board, pass ``--port /dev/ttyUSB1`` (the DUT runs the suite on its own; the capture
then ends after ``--seconds``).
"""

import argparse
from pathlib import Path

import latscope


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out/example-report", help="report directory")
    parser.add_argument("--port", default="sim:soc")
    parser.add_argument("--samples", type=int, default=50, help="samples per IL/IDL/TSL table")
    parser.add_argument("--tests", default="IL_A,IDL_B,TSL_A", help="suite tests to run")
    parser.add_argument("--seconds", type=float, default=60.0, help="longest capture")
    args = parser.parse_args()

    suite = None
    if args.port == "sim:soc":
        suite = latscope.SuiteSettings(cpu="VexRiscv_Lite", samples=args.samples, tests=args.tests)
    with latscope.open(args.port, suite=suite) as dev:
        print(f"device: {dev.identity.board}, {dev.clock_hz / 1e6:g} MHz")
        # An IRQ about every 50 us at 100 MHz, with 0..255 cycles of jitter.
        dev.configure_irq(period=5000, jitter_mask=0xFF, width=100)
        cap = dev.capture(duration=args.seconds, info="examples/capture_and_report.py")

    print(f"{'table':10s} {'samples':>7s} {'min ns':>9s} {'avg ns':>9s} {'max ns':>9s}")
    for row in cap.rows():
        print(
            f"{row['name']:10s} {row['samples']:7d} {row['min_ns']:9.0f} "
            f"{row['avg_ns']:9.1f} {row['max_ns']:9.0f}"
        )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cap.save(out / "capture.lsc")
    paths = cap.report(out)
    print(f"report: {paths['html']}")


if __name__ == "__main__":
    main()
