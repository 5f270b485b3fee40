"""Speed of the Verilator full-system simulation per build variant, and the demo's wall time.

Every speed is simulated cycles per CPU second of the simulator process (the harness's
``cycles_per_cpu_s``: cycles over its CLOCK_PROCESS_CPUTIME_ID time): the machine is shared,
and CPU time does not count other processes nor the waits for the host. Wall-clock rates are
printed beside them.

1. Bring-up build (no appliance), per CPU: sim/firmware/irq_test.elf with no IRQ line, i.e.
   its main loop storing a GPIO marker every few cycles, stopped by --max-cycles; without
   and with the ground-truth log (a line per marker).
2. The full system (SoC + appliance), per build variant of sim/Makefile: the demo's suite
   (every test, ``--samples`` per IL/IDL/TSL table, the demo's IRQ settings) captured by the
   host through the pty exactly as the demo does. Variants (see ``VARIANTS``), each with
   the speed-ups before it: ``baseline`` (VexRiscv's ``verilator public`` signals kept,
   SUMP engine, Verilator's tables, no LTO: the build before the public markers were
   stripped), ``stripped`` (PUBLIC=0), ``no-SUMP`` (SUMP=0: the demo's build before the
   rest), ``no-tables`` (-fno-table), ``LTO`` (link-time optimisation: the defaults, the
   demo's build until issue 31), ``PGO`` (PGO=1 on the defaults: ``make demo``'s build);
   then ``word-XOR`` (the defaults with the appliance's XOR networks in word form),
   ``clang`` (the defaults compiled with clang++) and ``clang-PGO`` (PGO=1 with clang++).
   Every variant must give the same run: its ground-truth log and its captured events
   byte for byte and its results document (docs/results-schema.md, but for the capture's
   path and start time) equal to the baseline's; the script says so and exits 1 if not.
   Beside them the SoC alone (the bring-up build, no appliance) runs the same firmware
   with the harness driving the IRQ line like the demo's generator: 1 - (variant's rate /
   SoC-alone rate) is the appliance's share of the simulation time (for the variants
   compiled like it).
3. The demo: ``python -m latscope.demo`` (the whole suite, 1000 samples per IL/IDL/TSL
   table, the no-SUMP build), wall time from start to tables with everything built; and
   with ``--pgo`` (the PGO build). Their results.json must be equal (path and start time
   aside).

Builds what it needs first (each variant is a Verilator build of its own, about a minute;
PGO also trains, a few minutes). The machine's load changes the wall-clock figures.

    .venv/bin/python bench/sim_speed.py [--cycles N] [--repeat R] [--cpu ...] [--samples N]
                                        [--variant ...] [--no-bring-up] [--no-demo]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from figures import Figure, report
from sim_make import make

ROOT = Path(__file__).resolve().parent.parent
CPUS = ["VexRiscv_IMAC", "VexRiscv_Lite"]
#: name -> sim/Makefile variables (APPLIANCE=1 builds), in the order they are measured.
#: Each undoes the speed-ups after it with the Makefile's switches (TABLES=1: Verilator's
#: lookup tables; LTO=0: no link-time optimisation), so the list up to "PGO" reads as the
#: history of the build. "LTO" is sim/Makefile's default build, "PGO" make demo's;
#: "word-XOR" exports the appliance's XOR networks in word form, "clang" compiles the
#: defaults with clang++, "clang-PGO" the profile-guided build with clang++.
VARIANTS = {
    "baseline": ["PUBLIC=1", "SUMP=1", "TABLES=1", "LTO=0"],
    "stripped": ["SUMP=1", "TABLES=1", "LTO=0"],
    "no-SUMP": ["SUMP=0", "TABLES=1", "LTO=0"],
    "no-tables": ["SUMP=0", "LTO=0"],
    "LTO": ["SUMP=0"],
    "PGO": ["SUMP=0", "PGO=1"],
    "word-XOR": ["SUMP=0", "WORD_XOR=1"],
    "clang": ["SUMP=0", "SIM_CXX=clang++"],
    "clang-PGO": ["SUMP=0", "SIM_CXX=clang++", "PGO=1"],
}
#: make demo's build (the top Makefile's PGO ?= 1), whose rate is judged against GOAL.
DEMO_VARIANT = "PGO"
#: Issue 14 (issue 31 for the demo's default build): simulated cycles per CPU second.
GOAL = 2e6
#: The variants compiled like the SoC-alone build (sim/Makefile's defaults), whose rate gives
#: the appliance's share of the time.
LIKE_SOC_ALONE = ("LTO",)


def sim_fields(stdout):
    line = next(line for line in stdout.splitlines() if line.startswith("SIM "))
    return dict(field.split("=", 1) for field in line.split()[1:])


def bring_up_rate(binary, firmware, cycles, truth):
    command = [str(binary), "--max-cycles", str(cycles), "--console", os.devnull]
    if truth:
        command += ["--truth", truth]
    result = subprocess.run(command + [str(firmware)], capture_output=True, text=True)
    fields = sim_fields(result.stdout)
    assert fields["end"] == "timeout" and int(fields["cycles"]) == cycles, fields
    return float(fields["cycles_per_cpu_s"])


def bring_up(cpus, cycles, repeat):
    print(
        f"bring-up build: irq_test main loop (GPIO marker stores), {cycles:,} cycles a run, "
        f"best of {repeat}, single-threaded; cycles per CPU second"
    )
    with tempfile.TemporaryDirectory() as scratch:
        truth = os.path.join(scratch, "truth.log")
        for cpu in cpus:
            make(cpu, "sim", "firmware")
            binary = Path(make(cpu, "print-binary").strip())
            firmware = Path(make(cpu, "print-firmware-dir").strip()) / "irq_test.elf"
            plain = max(bring_up_rate(binary, firmware, cycles, None) for _ in range(repeat))
            logged = max(bring_up_rate(binary, firmware, cycles, truth) for _ in range(repeat))
            print(
                f"  {cpu:<15} {plain / 1e6:6.2f} M cycles/s   with ground-truth log "
                f"{logged / 1e6:6.2f} M cycles/s   ({plain / 1e8:.4f} x real time at 100 MHz)"
            )


def comparable(results):
    """A results document without what differs between two runs of one build: the capture
    file's path and its start (wall-clock) time, the ground-truth log's path."""
    capture = {k: v for k, v in results["capture"].items() if k not in ("path", "start_time")}
    where = results["where"] and {k: v for k, v in results["where"].items() if k != "log"}
    return {**results, "capture": capture, "where": where}


def truth_of_capture(path):
    """The ground-truth log up to the capture's end (its ``capture 0`` line) as bytes. After
    STOP the simulation goes on while the host drains the link and stops it: how long is a
    matter of wall-clock time, so that tail (timer edges) is not part of the comparison."""
    data = Path(path).read_bytes()
    end = data.rfind(b" capture 0\n")
    if end < 0:
        sys.exit(f"{path}: no end of capture in the ground-truth log")
    return data[: end + len(b" capture 0\n")]


def results_of(capture_path):
    from latscope.report.results import load_tables, results

    return comparable(results(*load_tables(capture_path)))


def events_of(capture_path):
    """The capture's events as recorded (stamps as the device sent them, no latency
    correction) in bytes: two runs captured the same if these are equal."""
    from latscope.capture.file import load_capture

    events = load_capture(capture_path, correct_latency=False).events
    return events.stamp.tobytes() + events.source.tobytes() + events.value.tobytes()


def run_variant(build, scratch, name, repeat):
    """Best of ``repeat`` captures of ``build``: (SIM line fields and the firmware's exit
    cycle, the truth log up to the capture's end, the captured events, the results)."""
    from latscope.capture.suite import DEMO_IRQ, capture_suite

    best = None
    for n in range(repeat):
        output, truth = scratch / f"{name}-{n}.lsc", scratch / f"{name}-{n}.truth"
        run = capture_suite(build, DEMO_IRQ, output=output, truth=truth, timeout=3600)
        if run.exit_code != 0:
            sys.exit(f"{name}: the suite failed (exit code {run.exit_code})")
        if best is None or float(run.sim["cycles_per_cpu_s"]) > float(best["cycles_per_cpu_s"]):
            best = {**run.sim, "exit_cycle": run.exit_cycle}
        if n == 0:
            first = (truth_of_capture(truth), events_of(output), results_of(output))
        elif (truth_of_capture(truth), events_of(output), results_of(output)) != first:
            sys.exit(f"{name}: two runs of the same build differ")
    return best, *first


def soc_alone(cpu, firmware, repeat):
    """Cycles per CPU second of the SoC without the appliance (the bring-up build, default
    compile settings) running the same suite firmware to its exit, the harness driving the
    IRQ line as the demo's IRQ generator does (period, 0..255 cycles of jitter, width)."""
    from latscope.capture.suite import DEMO_IRQ

    make(cpu, "sim")
    binary = make(cpu, "print-binary").strip()
    command = [
        binary,
        "--irq-period",
        str(DEMO_IRQ.period),
        "--irq-jitter",
        str(DEMO_IRQ.jitter_mask + 1),
        "--irq-width",
        str(DEMO_IRQ.width),
        "--console",
        os.devnull,
        str(firmware),
    ]
    rates = []
    for _ in range(repeat):
        fields = sim_fields(subprocess.run(command, capture_output=True, text=True).stdout)
        assert fields["end"] == "exit" and fields["code"] == "0", fields
        rates.append(float(fields["cycles_per_cpu_s"]))
    return max(rates), int(fields["cycles"])


def full_system(cpu, samples, variants, repeat):
    """Section 2; returns the names of the variants whose run differs from the first's."""
    from latscope.simulated.soc import ROOT as SIM_ROOT
    from latscope.simulated.soc import SocBuild, SuiteSettings, build_suite

    settings = SuiteSettings(cpu=cpu, samples=samples)
    print(
        f"full system ({cpu} + appliance), the demo's suite with {samples} samples, "
        f"captured through the pty; best of {repeat}; cycles per CPU second"
    )
    firmware = build_suite(
        settings, build_dir=SIM_ROOT / "firmware" / "suite" / "build" / "bench-sim-speed"
    )
    alone, cycles = soc_alone(cpu, firmware, repeat)
    print(
        f"  SoC alone (bring-up build, the harness drives the IRQ line; no appliance): "
        f"{alone / 1e6:.2f} M cycles/CPU s, exit at cycle {cycles:,}"
    )
    reference, differ = None, []
    with tempfile.TemporaryDirectory() as scratch:
        for name in variants:
            options = ["APPLIANCE=1", *VARIANTS[name]]
            make(cpu, *options, "sim")
            binary = Path(make(cpu, *options, "print-binary").strip())
            sim, *run = run_variant(
                SocBuild(binary, firmware, settings), Path(scratch), name, repeat
            )
            rate = float(sim["cycles_per_cpu_s"])
            if reference is None:
                reference = (rate, *run)
                same = "the reference run"
            else:
                equal = [mine == theirs for mine, theirs in zip(run, reference[1:])]
                identical = all(equal)
                lines = run[0].count(b"\n")
                same = (
                    f"truth log ({lines} lines), captured events and results identical"
                    if identical
                    else "DIFFERENT: "
                    + ", ".join(
                        f"{what} {'same' if alike else 'differ'}"
                        for what, alike in zip(("truth log", "events", "results"), equal)
                    )
                )
                if not identical:
                    differ.append(name)
            if name == DEMO_VARIANT and name not in differ:
                unit = "M cycles per CPU second"
                report(Figure("simulation, make demo's build", rate, GOAL, unit, 1e6))
            # The appliance's share of the time, where the SoC-alone build compiles alike.
            share = (
                f"appliance {100 * (1 - rate / alone):.0f} % of the time   "
                if name in LIKE_SOC_ALONE
                else ""
            )
            print(
                f"  {name:<9} {' '.join(options[1:]):<44} {rate / 1e6:5.2f} M cycles/CPU s "
                f"(x{rate / reference[0]:.2f})   wall {float(sim['cycles_per_s']) / 1e6:5.2f} "
                f"M/s   exit at cycle {sim['exit_cycle']:,}   {share}{same}"
            )
    return differ


def demo(cpu, pgo, output):
    """Runs the demo (built beforehand); prints its wall time; gives its results."""
    command = [sys.executable, "-m", "latscope.demo", "--cpu", cpu, "-o", str(output)]
    command += ["--pgo"] if pgo else []
    subprocess.run(
        command + ["--samples", "1", "--tests", "MQ"], cwd=ROOT, capture_output=True, check=True
    )  # builds what is missing
    started = time.monotonic()
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    wall = time.monotonic() - started
    if result.returncode != 0:
        sys.exit(f"demo failed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")
    simulation = next(line for line in result.stdout.splitlines() if line.startswith("simulation:"))
    print(
        f"demo ({cpu}{', --pgo' if pgo else ''}, whole suite): {wall:.1f} s wall, built "
        f"beforehand; {simulation}"
    )
    return comparable(json.loads(output.with_suffix(".results.json").read_text()))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cycles", type=int, default=5_000_000, help="cycles of a bring-up run (default 5 M)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs per figure; best is shown")
    parser.add_argument(
        "--samples",
        type=int,
        default=1000,
        help="samples per IL/IDL/TSL table of the full-system runs (default 1000, the demo's)",
    )
    parser.add_argument(
        "--cpu",
        action="append",
        choices=CPUS,
        help="CPU variant(s) (default VexRiscv_IMAC; the demo runs the first)",
    )
    parser.add_argument(
        "--variant",
        action="append",
        choices=list(VARIANTS),
        help="full-system build variant(s) (default: all; the first one is "
        "the reference of the comparison)",
    )
    parser.add_argument("--no-bring-up", action="store_true", help="skip section 1")
    parser.add_argument("--no-demo", action="store_true", help="skip the demo's wall time")
    args = parser.parse_args(argv)
    cpus = args.cpu or CPUS[:1]
    if not args.no_bring_up:
        bring_up(cpus, args.cycles, args.repeat)
    differ = []
    for cpu in cpus:
        differ += full_system(cpu, args.samples, args.variant or list(VARIANTS), args.repeat)
    if not args.no_demo:
        with tempfile.TemporaryDirectory() as scratch:
            plain = demo(cpus[0], False, Path(scratch) / "demo.lsc")
            guided = demo(cpus[0], True, Path(scratch) / "demo-pgo.lsc")
        same = plain == guided
        print(
            f"demo results.json with and without --pgo: {'identical' if same else 'DIFFERENT'}"
            " (capture path and start time aside)"
        )
        differ += [] if same else ["demo --pgo"]
    if differ:
        sys.exit(f"runs that differ from the reference: {', '.join(differ)}")


if __name__ == "__main__":
    main()
