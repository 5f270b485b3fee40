"""The load profiles and the caches on the simulated SoC (issue 25; docs/tests.md, "Load
profiles"): the demo's suite under every load, each run twice, and once more with the
CPU's caches off.

Per IL, ILH, IDL and TSL table it prints p99 and max (ns) under each load beside `none`,
marks the figures that differ from `none` (`*`), and checks that the two runs of a load
gave the same statistics for every table (the runs are deterministic) and that no run lost
an event or had a hole. Then TSL-a-2/10/128's average with the caches on (`none`) and off.
Exit status 1 when a check fails or a load changed no p99 or max of IL, IDL and TSL.

    .venv/bin/python bench/load_effects.py [--samples 1000] [--loads none,cpu,...] [--runs 2]

About 1 minute per run on the 2-core machine once built, plus a build per load (the
simulator twice: caches on and off).
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

from latscope.analysis.summary import analyze_capture
from latscope.capture.conditions import LOADS
from latscope.capture.suite import DEMO_IRQ, capture_suite
from latscope.simulated.soc import ROOT, SuiteSettings, build_soc

#: The tables compared: the reference report's latency tables and the kernel's ILH.
KINDS = ("IL-", "ILH-", "IDL-", "TSL-")
CACHE_TABLES = ["TSL-a-2", "TSL-a-10", "TSL-a-128"]
BUILD_DIR = ROOT / "firmware" / "suite" / "build" / "bench-loads"


def run(settings, runs, samples_dir):
    """[(statistics by table, losses, holes)] of ``runs`` captures of one build."""
    build = build_soc(settings, build_dir=BUILD_DIR, sump=False)
    out = []
    for k in range(runs):
        path = Path(samples_dir) / f"{settings.load}-{settings.cache}-{k}.lsc"
        started = time.monotonic()
        capture = capture_suite(build, DEMO_IRQ, output=path, timeout=3600)
        if capture.exit_code != 0:
            raise SystemExit(
                f"{settings}: the firmware exited with {capture.exit_code}:\n"
                + capture.console[-2000:]
            )
        summary, tables = analyze_capture(path, interval_s=None, background=False)
        stats = {name: table.stats() for name, table in tables.items()}
        out.append((stats, sum(summary.device_losses.values()), len(summary.holes)))
        print(
            f"  {settings.load:9} cache {settings.cache}: run {k + 1}, "
            f"{capture.events} events, {time.monotonic() - started:.0f} s",
            flush=True,
        )
    return out


def cell(stats, none, key):
    value = stats.get(key)
    text = "-" if value is None else f"{value:.0f}"
    return text + ("*" if none is not None and value != none.get(key) else "")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--loads", default=",".join(LOADS))
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--no-cache", action="store_true", help="skip the caches-off runs")
    args = parser.parse_args(argv)
    loads = args.loads.split(",")
    if loads[0] != "none":
        loads.insert(0, "none")
    failures = []
    results = {}
    with tempfile.TemporaryDirectory(prefix="latscope-loads-") as samples_dir:
        variants = [(load, "on") for load in loads] + ([] if args.no_cache else [("none", "off")])
        for load, cache in variants:
            settings = SuiteSettings(samples=args.samples, load=load, cache=cache)
            runs = run(settings, args.runs, samples_dir)
            for k, (stats, losses, holes) in enumerate(runs):
                if losses or holes:
                    failures.append(
                        f"{load} cache {cache} run {k + 1}: {losses} events lost, {holes} holes"
                    )
                if stats != runs[0][0]:
                    failures.append(f"{load} cache {cache}: run {k + 1} differs from run 1")
            results[load, cache] = runs[0][0]
    none = results["none", "on"]
    names = [name for name in none if name.startswith(KINDS)]
    print(f"\np99 / max (ns), {args.samples} samples per table; * = differs from none")
    print(f"{'table':10}" + "".join(f"{load:>22}" for load in loads))
    for name in names:
        row = []
        for load in loads:
            mine = results[load, "on"].get(name, {})
            base = None if load == "none" else none.get(name, {})
            row.append(f"{cell(mine, base, 'p99_ns')} / {cell(mine, base, 'max_ns')}")
        print(f"{name:10}" + "".join(f"{text:>22}" for text in row))
    for load in loads[1:]:
        changed = [
            name
            for name in names
            if any(
                results[load, "on"].get(name, {}).get(key) != none[name].get(key)
                for key in ("p99_ns", "max_ns")
            )
        ]
        print(f"{load}: p99 or max changed in {len(changed)} of {len(names)} tables")
        if not changed:
            failures.append(f"{load}: no p99 or max of IL, ILH, IDL, TSL changed")
    if ("none", "off") in results:
        off = results["none", "off"]
        print("\nTSL-a average (ns), caches on / off")
        for name in CACHE_TABLES:
            print(f"{name:10} {none[name]['avg_ns']:10.1f} {off[name]['avg_ns']:10.1f}")
        if all(none[name]["avg_ns"] == off[name]["avg_ns"] for name in CACHE_TABLES):
            failures.append("the caches off changed no TSL-a average")
    for failure in failures:
        print(f"FAIL {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
