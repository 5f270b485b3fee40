"""The training run of the profile-guided simulator build (``make -C sim APPLIANCE=1 PGO=1``).

The instrumented simulator (``-fprofile-generate``) runs what the demo runs, shorter: the
whole suite, ``--samples`` per IL/IDL/TSL table, captured through the pty by the host with
the demo's IRQ settings. Every part of the model the demo exercises (CPU, caches, the
appliance's capture, encoder, FIFO and UART, the command path) then runs in the profile.
The sim Makefile calls it; it needs the host package (``host/``) on PYTHONPATH.

    python sim/pgo_train.py --simulator sim/build/VexRiscv_IMAC-appliance-nosump-pgogen/latscope-sim
"""

import argparse
import sys
from pathlib import Path

from latscope.capture.suite import DEMO_IRQ, capture_suite
from latscope.simulated.soc import ROOT, SocBuild, SuiteSettings, build_suite


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--simulator",
        required=True,
        type=Path,
        help="the instrumented latscope-sim (an APPLIANCE=1 build)",
    )
    parser.add_argument("--cpu", default="VexRiscv_IMAC")
    parser.add_argument(
        "--samples",
        type=int,
        default=100,
        help="samples of every IL, IDL and TSL table (default 100)",
    )
    args = parser.parse_args(argv)
    settings = SuiteSettings(cpu=args.cpu, samples=args.samples)
    firmware = build_suite(settings, build_dir=ROOT / "firmware" / "suite" / "build" / "pgo-train")
    run = capture_suite(SocBuild(args.simulator, firmware, settings), DEMO_IRQ, timeout=900)
    print(
        f"pgo_train: {run.events} events, {run.sim.get('cycles')} cycles, exit code {run.exit_code}"
    )
    return 0 if run.exit_code == 0 and run.events else 1


if __name__ == "__main__":
    sys.exit(main())
