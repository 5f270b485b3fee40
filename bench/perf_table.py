"""README's performance table (issue 31, "Done when"): runs the benchmarks that judge a goal,
reads the figures they print (bench/figures.py) and rewrites the table between README's
markers: each figure beside its goal, met or not, the load average when its benchmark
started, and the machine. ``make perf-table`` runs it (after setup; the simulator builds on
the way: from a fresh clone about 15 minutes on 2 cores).

    .venv/bin/python bench/perf_table.py [--readme README.md]
"""

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from figures import parse
from machine import describe

ROOT = Path(__file__).resolve().parent.parent
BEGIN = "<!-- perf-table: begin (written by make perf-table, bench/perf_table.py) -->"
END = "<!-- perf-table: end -->"


@dataclass(frozen=True)
class Bench:
    script: str
    arguments: tuple[str, ...]
    #: The names of the figures it prints (bench/figures.py), in order: the table's rows.
    figures: tuple[str, ...]


#: The benchmarks of the table and the arguments that measure the goal's figure (no more).
BENCHES = (
    Bench("parser_throughput.py", (), ("parser",)),
    Bench("analysis_speed.py", ("--no-figures",), ("analysis in memory",)),
    Bench(
        "bounded_memory.py",
        ("--events", str(10**7), "--resets", "0"),
        ("analyze from file, wall", "analyze from file, CPU"),
    ),
    Bench(
        "link_efficiency.py",
        (),
        (
            "bytes per event, make demo's stream",
            "bytes per event, a TSL marker every us",
            "lossless event rate on the SPI link",
        ),
    ),
    # The plain build first: the PGO build's run is compared with it byte for byte.
    Bench(
        "sim_speed.py",
        ("--no-bring-up", "--no-demo", "--variant", "LTO", "--variant", "PGO"),
        ("simulation, make demo's build",),
    ),
)
HEADER = "| figure | measured | goal | met | bench | load |\n| --- | --- | --- | --- | --- | --- |"


def run(bench):
    """Runs ``bench``, its output passed on as it comes (progress); gives its figures and the
    1-minute load average when it started. Exits if it printed other figures than its own
    (it failed, or a figure was renamed): a bench that misses its goal exits 1 and prints it."""
    load = os.getloadavg()[0]
    command = [sys.executable, str(ROOT / "bench" / bench.script), *bench.arguments]
    print(f"perf-table: {' '.join(command[1:])} (load {load:.1f})", flush=True)
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    lines = []
    for line in process.stdout:
        sys.stdout.write(line)
        lines.append(line)
    process.wait()
    figures = parse("".join(lines))
    if tuple(figure.name for figure in figures) != bench.figures:
        sys.exit(
            f"perf-table: {bench.script} (exit status {process.returncode}) printed the figures "
            f"{[figure.name for figure in figures]}, not {list(bench.figures)}"
        )
    return figures, load


def table(results, machine, date):
    """The text between the markers: ``results`` are (bench, figure, load) in order."""
    rows = [
        f"| {figure.name} | {figure.shown(figure.value)} | "
        f"{'≥' if figure.at_least else '≤'} {figure.shown(figure.goal)} | "
        f"{'yes' if figure.met else '**no**'} | `bench/{bench.script}` | {load:.1f} |"
        for bench, figure, load in results
    ]
    met = sum(figure.met for _, figure, _ in results)
    return (
        f"Measured {date} on {machine.removeprefix('machine: ')}; load: the 1-minute load "
        f"average when the bench started (rates are per CPU second where the goal says so). "
        f"Goals met: {met} of {len(results)}.\n\n" + "\n".join([HEADER, *rows])
    )


def rows_of(readme_text):
    """(figure name, bench script) of every row of the table in ``readme_text``."""
    start, end = readme_text.index(BEGIN), readme_text.index(END)
    rows = []
    for line in readme_text[start:end].splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[4].startswith("`bench/"):
            rows.append((cells[0], cells[4].strip("`").removeprefix("bench/")))
    return rows


def declared_rows():
    """(figure name, bench script) of every row :data:`BENCHES` makes, in order."""
    return [(name, bench.script) for bench in BENCHES for name in bench.figures]


def rewrite(readme, text):
    content = readme.read_text()
    start, end = content.index(BEGIN) + len(BEGIN), content.index(END)
    readme.write_text(content[:start] + "\n" + text + "\n" + content[end:])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readme", type=Path, default=ROOT / "README.md")
    args = parser.parse_args(argv)
    results = []
    for bench in BENCHES:
        figures, load = run(bench)
        results += [(bench, figure, load) for figure in figures]
    text = table(results, describe(), time.strftime("%Y-%m-%d", time.gmtime()))
    rewrite(args.readme, text)
    print(f"perf-table: {args.readme} rewritten\n{text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
