"""``make demo``: latscope's main job on a simulated board, from build to result tables.

A VexRiscv SoC (Verilator, cycle-accurate) runs latscope's whole test suite on the reference
kernel; the appliance gateware, exported from Amaranth, time-stamps its trace markers and
interrupt edges and drives its interrupt about every 50 us. The host builds everything it
needs (make, incremental), captures the suite through the appliance exactly as from a board
(the same device and parser code, over a pseudo-terminal), saves the capture file, and prints
the tables of the reference report's section 4 with the losses and resyncs of the link.

The run is reproducible to the cycle (the CPU starts a fixed number of cycles after the
capture's START, which also restarts the IRQ generator from its seed): the same build gives
the same tables and ``results.json``. ``--phase N`` starts the CPU N cycles later, so the IRQs
meet the suite at another phase; ``--sweep K`` runs K phases spread over one IRQ period and
prints the spread (min..max over the runs) of every statistic of every table.

Run ``python -m latscope.demo --help``.
"""

import argparse
import json
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path

from . import progress as progress_lines
from .analysis.live import live_analysis
from .analysis.worst import WORST_SHOWN
from .capture.session import Interrupted
from .capture.suite import DEMO_IRQ, capture_suite
from .condition_options import conditions_of, conditions_options, load_option
from .fail_if_options import fail_if_options, judged
from .hints import latscope_command
from .link.device import DeviceError
from .progress import Progress, note
from .simulated.soc import ROOT, SuiteSettings, build_soc
from .terminal import output_width, wrap
from .values import whole

#: The demo's counts go to the firmware and the harness as C ints.
INT32_MAX = 2**31 - 1

__all__ = ["main", "demo_parser"]

CPUS = ("VexRiscv_IMAC", "VexRiscv_Lite")
#: Pacing of the bus variant. A bus record carries 32 data bits (7 bytes as a long record,
#: 140 cycles at the simulator's UART divisor 2; 2-3 as a short one, a value repeated or
#: stepped by one from the last four) against a GPIO marker's 4-5 bytes (2 short), for
#: deltas of 100-400 cycles (protocol version 4, StreamEncoder). Without pacing, the
#: back-to-back samples of SEO-d/e filled the appliance's FIFO to about 330 of 512 entries
#: (measured with version 3's records, not re-measured with short records). 400 cycles a
#: sample (2 markers) keeps the link ahead.
BUS_PACE = 400
#: The demo's suite build directory. Its simulator has no SUMP engine (build_soc's sump=False):
#: the demo does not use SUMP mode, and the same captures take about 60 % of the time.
DEMO_BUILD_DIR = ROOT / "firmware" / "suite" / "build" / "demo"


class ConsoleFollower:
    """Prints the suite's "suite: IDL-b-10" console lines as they come, above the capture's
    status line (``progress``): which test runs."""

    def __init__(self, path, progress):
        self.path = Path(path)
        self.progress = progress
        self.offset = 0

    def poll(self):
        try:
            with open(self.path, "rb") as file:
                file.seek(self.offset)
                text = file.read()
        except OSError:
            return
        complete = text.rfind(b"\n") + 1
        self.offset += complete
        for line in text[:complete].decode(errors="replace").splitlines():
            name = line.removeprefix("suite: ")
            if name != line and name not in ("start", "done"):
                elapsed = time.monotonic() - self.progress.started
                self.progress.note(f"{elapsed:7.1f} s  running {name}")


def demo_parser():
    """The demo's options (``latscope demo`` passes its arguments here; shell completion
    reads them)."""
    parser = argparse.ArgumentParser(
        prog="python -m latscope.demo", description=__doc__.split("\n\n")[1]
    )
    parser.add_argument(
        "--cpu",
        choices=CPUS,
        default="VexRiscv_IMAC",
        help="simulated core (VexRiscv_Lite: rv32im, about 1.4x faster)",
    )
    parser.add_argument(
        "--marker",
        choices=("gpio", "bus"),
        default="gpio",
        help="marker variant: GPIO trace port or bus trace window",
    )
    parser.add_argument(
        "--samples",
        type=whole("sample count", 1, INT32_MAX),
        default=1000,
        help="samples of every IL, IDL and TSL table (default 1000)",
    )
    parser.add_argument(
        "--tests", default="all", help="tests to run: all, or markers.Test names (IL_A,TSL_A,...)"
    )
    parser.add_argument(
        "--pace",
        type=whole("cycle count", 0, INT32_MAX),
        default=None,
        help="min. cycles between two samples of thread-driven tests "
        f"(default: 0 for gpio, {BUS_PACE} for bus)",
    )
    parser.add_argument(
        "--phase",
        type=whole("cycle count", 0, INT32_MAX),
        default=0,
        help="cycles of extra delay before the CPU starts (after the "
        "capture's START): another, still reproducible, IRQ phase",
    )
    parser.add_argument(
        "--sweep",
        type=whole("phase count", 0, INT32_MAX),
        default=0,
        metavar="K",
        help="run K phases spread over one IRQ period (from --phase on) "
        "and print the spread of every statistic (K captures)",
    )
    parser.add_argument(
        "--pgo",
        action="store_true",
        help="use the profile-guided simulator build (make -C sim PGO=1; "
        "its first build trains on a short run)",
    )
    conditions_options(parser)
    parser.add_argument(
        "--loads",
        type=lambda text: [load_option(item) for item in text.split(",")],
        metavar="NAME[:PARAM],...",
        help="run the suite once per load and print each table's statistics side by side "
        "(against the first load), with overlaid distributions in OUTPUT's .loads/ directory",
    )
    parser.add_argument(
        "-o",
        "--output",
        default="out/demo.lsc",
        help="capture file; the results document goes beside it "
        "(.results.json; a sweep's as .sweep.json)",
    )
    fail_if_options(parser)
    return parser


def parse_args(argv):
    parser = demo_parser()
    args = parser.parse_args(argv)
    if args.loads and args.sweep:
        parser.error("--loads and --sweep: one at a time")
    if (args.fail_if or args.junit) and (args.loads or args.sweep):
        parser.error("--fail-if and --junit judge a single run: not with --loads or --sweep")
    return args


def print_results(capture_path, run, built_s, total_s):
    """The demo's result on stdout, fitted to the terminal: the run, the headline, the short
    table, the link's losses, the worst sample behind each headline figure and how to see
    everything; returns the results document (with each table's worst samples)."""
    from .report.formats.text import summary
    from .report.headline import headline
    from .report.results import load_tables, results
    from .report.worst_samples import WorstSamples, worst_of

    width = output_width(sys.stdout)
    capture, tables = load_tables(capture_path)
    document = results(capture, tables, worst_of(capture_path, capture, tables))
    suite = run.metadata["suite"]
    identity = run.identity
    irq = run.metadata["irq"]
    pacing = f", {suite['pace']} cycles pacing" if suite["pace"] else ""
    latscope = latscope_command()

    def show(text=""):
        print(wrap(text, width))

    show(
        f"\nlatscope demo: {suite['cpu']} running the test suite ({suite['marker']} markers, "
        f"{suite['samples']} samples{pacing}), appliance '{identity.board}' at "
        f"{identity.clock_hz / 1e6:g} MHz ({identity.resolution_ns:g} ns per stamp)"
    )
    show(
        f"IRQ generator: every {irq['period']} + 0..{irq['jitter_mask']} cycles "
        f"({irq['period'] * 1e6 / identity.irq_clock_hz:g} us), {irq['width']} cycles wide\n"
    )
    sys.stdout.write(summary(document, width))
    integrity = document["integrity"]
    status = run.status
    show(
        f"link: {integrity['lost_events']} events lost (FIFO overflow; max FIFO fill "
        f"{status['fifo_max']} of {identity.fifo_depth}), {integrity['segments_bad']} "
        f"resyncs, {integrity['records_dropped']} records dropped, "
        f"{integrity['bytes_skipped']} bytes skipped; {document['events']} events in "
        f"{integrity['segments_ok']} verified segments"
    )
    behind = {entry["worst"][1] for entry in headline(document)}
    if behind:
        shown = {**document, "tables": [r for r in document["tables"] if r["name"] in behind]}
        show("\nthe worst sample behind each headline figure (its table's worst):")
        show(WorstSamples(shown=1).text(shown))
        show(
            f"every table's {WORST_SHOWN} worst samples, with the events around them, its "
            f"flags and its tail estimate: {latscope} analyze {capture_path} --details\n"
        )
    cycles = int(run.sim.get("cycles", 0))
    show(
        f"simulation: {cycles / 1e6:.1f} M cycles ({cycles / identity.clock_hz:.3f} s of "
        f"DUT time) in {float(run.sim.get('seconds', 0)):.1f} s, "
        f"{float(run.sim.get('cycles_per_s', 0)) / 1e6:.2f} M cycles/s "
        f"({float(run.sim.get('cycles_per_cpu_s', 0)) / 1e6:.2f} M per CPU second); UART "
        f"{run.uart.get('tx_bytes', 0)} bytes, {run.uart.get('framing_errors', 0)} "
        f"framing errors"
    )
    show(f"wall time: build {built_s:.1f} s, run {run.wall_seconds:.1f} s, total {total_s:.1f} s")
    print(f"capture saved to {capture_path}; the next steps, as they run from here:")
    print(f"  {latscope} analyze {capture_path} --details")
    print(f"  {latscope} report {capture_path} -o out/report")
    return document


def sweep_phases(count, first=0, period=DEMO_IRQ.period):
    """``count`` phases from ``first`` on, spread evenly over one IRQ period."""
    return [first + round(n * period / count) for n in range(count)]


def spread(documents):
    """Per table and statistic, (min, max) over the results documents of a sweep; a table
    missing from a run counts as missing (None)."""
    from .report.columns import STAT_COLUMNS

    names = list(dict.fromkeys(row["name"] for doc in documents for row in doc["tables"]))
    out = {}
    for name in names:
        rows = [
            next((row for row in doc["tables"] if row["name"] == name), None) for doc in documents
        ]
        out[name] = {}
        for key, _, _ in STAT_COLUMNS:
            values = [row.get(key) for row in rows if row is not None]
            values = [value for value in values if value is not None]
            complete = len(values) == len(documents)
            out[name][key] = [min(values), max(values)] if values and complete else None
    return out


def print_spread(phases, table_spread):
    from .report.columns import STAT_COLUMNS, statistics_note

    print(
        f"\nphase sweep: {len(phases)} runs, CPU started {', '.join(map(str, phases))} "
        f"cycles later; min..max of each statistic over the runs ({statistics_note()})\n"
    )
    header = ["table"] + [title for _, title, _ in STAT_COLUMNS]
    lines = []
    for name, stats in table_spread.items():
        cells = [name]
        for key, _, fmt in STAT_COLUMNS:
            pair = stats[key]
            if pair is None:
                cells.append("–")
            elif pair[0] == pair[1]:
                cells.append(fmt.format(pair[0]))
            else:
                cells.append(f"{fmt.format(pair[0])}..{fmt.format(pair[1])}")
        lines.append(cells)
    widths = [max(len(row[n]) for row in [header] + lines) for n in range(len(header))]
    for row in [header] + lines:
        print(
            "  ".join(
                cell.ljust(w) if n == 0 else cell.rjust(w)
                for n, (cell, w) in enumerate(zip(row, widths))
            )
        )


def run_sweep(build, args, output):
    """``--sweep K``: K captures at the phases of :func:`sweep_phases`; prints and saves
    (``.sweep.json``) the spread of every statistic."""
    from .report.results import load_tables, results

    phases = sweep_phases(args.sweep, args.phase)
    documents = []
    for phase in phases:
        path = output.with_name(f"{output.stem}.phase{phase}{output.suffix}")
        run = capture_suite(
            build,
            DEMO_IRQ,
            output=path,
            phase=phase,
            console=path.with_suffix(".console.txt"),
            info=f"latscope demo sweep: phase {phase}",
        )
        if run.exit_code != 0:
            note(f"latscope demo: the suite failed at phase {phase} (exit code {run.exit_code})")
            return 1
        capture, tables = load_tables(path)
        documents.append(results(capture, tables))
        note(f"phase {phase}: {len(tables)} tables, {run.wall_seconds:.1f} s")
    table_spread = spread(documents)
    print_spread(phases, table_spread)
    sweep_path = output.with_suffix(".sweep.json")
    sweep_path.write_text(json.dumps({"phases": phases, "tables": table_spread}, indent=2) + "\n")
    print(f"\nspread saved to {sweep_path}; captures {output.stem}.phase*.lsc")
    return 0


def run_loads(args, settings, output):
    """``--loads``: the suite once per load (a build each, reused), then per table the
    statistics of every load side by side with their differences to the first load
    (``latscope compare``'s text), and the overlaid distributions and comparison files in
    ``OUTPUT.loads/``. Exit status 1 when a run failed or lost events."""
    from .report import compare
    from .report.formats import named

    paths, labels = [], []
    for load, param in args.loads:
        variant = replace(settings, load=load, load_param=param)
        label = variant.conditions().label()
        build = build_soc(variant, build_dir=DEMO_BUILD_DIR, sump=False, pgo=args.pgo)
        path = output.with_name(f"{output.stem}.{label.replace(':', '-').split(',')[0]}.lsc")
        started = time.monotonic()
        run = capture_suite(
            build,
            DEMO_IRQ,
            output=path,
            phase=args.phase,
            console=path.with_suffix(".console.txt"),
            info=f"latscope demo --loads: {label}",
        )
        if run.exit_code != 0:
            note(f"latscope demo: the suite failed under {label}")
            return 1
        note(f"{label}: {run.events} events, {time.monotonic() - started:.1f} s")
        paths.append(path)
        labels.append(label)
    runs = compare.load_runs(paths, labels)
    document = compare.comparison(runs)
    sys.stdout.write(named("text").comparison_text(document, width=output_width(sys.stdout)))
    lost = {
        run.label: (run.document["integrity"]["lost_events"], run.document["integrity"]["holes"])
        for run in runs
    }
    print("events lost, holes: " + ", ".join(f"{k} {v[0]}, {v[1]}" for k, v in lost.items()))
    directory = output.with_suffix(".loads")
    figures = compare.write_directory(runs, document, directory)
    print(
        f"{len(figures.png)} overlaid distributions and "
        f"{', '.join(compare.directory_files())} in {directory}"
    )
    return 1 if any(any(v) for v in lost.values()) else 0


def _reported(run, *args):
    """``run(*args)``, a device error (a build or the simulation) reported: exit status 1; a
    stop signal during a capture (latscope.capture.session): 128 + its number."""
    try:
        return run(*args)
    except DeviceError as error:
        note(f"latscope demo: {error}")
        return 1
    except Interrupted as stop:
        note(f"latscope demo: interrupted by {stop.name}: that capture was stopped and drained")
        return stop.exit_status


def _shown(path):
    """``path`` relative to the working directory where it is below it (shorter lines)."""
    try:
        return Path(path).resolve().relative_to(Path.cwd())
    except ValueError:
        return path


def main(argv=None):
    args = parse_args(argv)
    progress_lines.enable()
    try:
        return _demo(args)
    except KeyboardInterrupt:  # Ctrl-C outside a capture (a build, the analysis)
        note("latscope demo: interrupted by SIGINT")
        return 128 + signal.SIGINT


def _demo(args):
    started = time.monotonic()
    pace = args.pace if args.pace is not None else (BUS_PACE if args.marker == "bus" else 0)
    settings = SuiteSettings(
        cpu=args.cpu,
        marker=args.marker,
        samples=args.samples,
        tests=args.tests,
        pace=pace,
        **conditions_of(args).as_dict(),
    )
    output = Path(args.output)
    output.parent.mkdir(parents=True, exist_ok=True)
    if args.loads:
        return _reported(run_loads, args, settings, output)
    console = output.with_suffix(".console.txt")

    try:
        build = build_soc(settings, build_dir=DEMO_BUILD_DIR, sump=False, pgo=args.pgo)
    except DeviceError as error:
        note(f"latscope demo: {error}")
        return 1
    built_s = time.monotonic() - started
    note(f"{built_s:7.1f} s  built {_shown(build.simulator)} and {_shown(build.firmware)}")
    if args.sweep:
        return _reported(run_sweep, build, args, output)

    progress = Progress()
    follower = ConsoleFollower(console, progress)

    def on_batch(events, run):
        follower.poll()
        progress.update(run.events, run.bytes, run.parser_stats, analyzer=run.analyzer)

    try:
        with progress:
            run = capture_suite(
                build,
                DEMO_IRQ,
                output=output,
                console=console,
                live=live_analysis,
                on_batch=on_batch,
                phase=args.phase,
                info=f"latscope demo: test suite on the simulated SoC "
                f"({args.cpu}, {args.marker} markers, {settings.conditions().label()})",
            )
    except DeviceError as error:
        note(f"latscope demo: {error}")
        return 1
    except Interrupted as stop:
        note(
            f"latscope demo: interrupted by {stop.name}: the capture was stopped and drained, "
            f"{output} is complete up to there"
        )
        return stop.exit_status
    follower.poll()
    if run.exit_code != 0:
        note(
            f"latscope demo: the suite failed (exit code {run.exit_code}); console "
            f"({console}):\n{run.console[-2000:]}"
        )
        return 1
    document = print_results(output, run, built_s, time.monotonic() - started)
    results_path = output.with_suffix(".results.json")
    results_path.write_text(json.dumps(document, indent=2) + "\n")
    print(f"results saved to {results_path}")
    try:
        return judged(args, document)
    except ValueError as error:
        note(f"latscope demo: {error}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
