"""Report speed: ``latscope report`` on a large capture, step by step, with the worst samples'
second read and their PulseView windows.

Question: what does a report cost beyond the analysis? The worst samples (``--worst``,
default 3 per table) need one more read of the capture for the events around them
(``worst.worst_samples``), and each gets a PulseView window (``directory.export_worst``). The
windows used to be written by one ``export_capture`` each, which reads the whole capture
twice (the survey and the levels): 2 reads per window, 160 reads for the suite's 27 tables.
``latscope.export.files.export_windows`` writes them all in one read.

The capture is ``bench/analysis_speed.py``'s (real suite traffic from the native run,
repeated to ``--events`` events, cached under /tmp; made in a child process). Timed, in
this process, wall and CPU seconds: the bounded analysis (``results.load_tables``), the
worst samples' read (``worst_samples.worst_of``), the windows in one read
(``export_worst``), the old way (``export_capture`` per window) on the first ``--old``
windows, whose files are checked to be the same, and the whole ``write_report`` without
figures. Peak RSS of the process is printed after each step.

Run: ``.venv/bin/python bench/report_speed.py [--events N] [--worst N] [--old K]``.
"""

import argparse
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

from analysis_speed import make_capture  # noqa: E402

from latscope.export.files import export_capture  # noqa: E402
from latscope.report.directory import export_worst, write_report  # noqa: E402
from latscope.report.results import load_tables, results  # noqa: E402
from latscope.report.worst_samples import worst_of  # noqa: E402


def timed(label, function):
    wall, cpu = time.perf_counter(), time.process_time()
    result = function()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{label:46s} {wall:7.2f} s wall {cpu:7.2f} s CPU   peak RSS {rss:6.0f} MiB", flush=True)
    return result, wall


def same_session(a, b):
    """Whether two .sr files hold the same members with the same bytes."""
    with zipfile.ZipFile(a) as first, zipfile.ZipFile(b) as second:
        names = sorted(first.namelist())
        return names == sorted(second.namelist()) and all(
            first.read(name) == second.read(name) for name in names
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=10**7)
    parser.add_argument("--samples", type=int, default=20000, help="suite SAMPLES per run")
    parser.add_argument("--worst", type=int, default=3, help="worst samples per table")
    parser.add_argument(
        "--old", type=int, default=4, help="windows exported the old way (export_capture each)"
    )
    args = parser.parse_args(argv)

    timed(
        "capture file (cached under /tmp)",
        lambda: subprocess.run(
            [
                sys.executable,
                str(ROOT / "bench" / "analysis_speed.py"),
                "--make-only",
                f"--events={args.events}",
                f"--samples={args.samples}",
            ],
            check=True,
        ),
    )
    path = make_capture(args.events, args.samples)
    print(f"  {path}: {path.stat().st_size / 2**20:.1f} MiB, {args.events} events")
    (summary, tables), analysis = timed("analysis (load_tables, 1 read)", lambda: load_tables(path))
    worst, second = timed(
        f"worst samples, {args.worst} per table (1 read)",
        lambda: worst_of(path, summary, tables, args.worst),
    )
    document = results(summary, tables, worst)
    count = sum(len(row["worst"]) for row in document["tables"])
    print(f"  {len(tables)} tables, {count} worst samples")
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        _, windows = timed(
            f"{count} PulseView windows (export_windows, 1 read)",
            lambda: export_worst(path, document, scratch / "new", summary.stamp_hz),
        )
        margin = int(round(document["worst_context_s"] * summary.stamp_hz))
        entries = [(row["name"], entry) for row in document["tables"] for entry in row["worst"]][
            : args.old
        ]

        def old_way():
            for name, entry in entries:
                export_capture(
                    path,
                    [scratch / "old" / f"{name}.{entry['rank']}.sr"],
                    start=max(0, entry["start"] - margin),
                    stop=entry["end"] + margin + 1,
                )

        (scratch / "old").mkdir()
        _, old = timed(f"{len(entries)} windows the old way (2 reads each)", old_way)
        for name, entry in entries:
            stem = f"{name}.{entry['rank']}.sr"
            assert same_session(scratch / "old" / stem, scratch / "new" / "worst" / stem), stem
        print(
            f"  the same files; old way {old / max(len(entries), 1):.2f} s per window "
            f"(measured on {len(entries)}), one read for all {count}: {windows:.2f} s"
        )
        _, whole = timed(
            "write_report, no figures (analysis + 2 reads)",
            lambda: write_report(path, scratch / "report", figures=False, worst=args.worst),
        )
    print(
        f"report: analysis {analysis:.2f} s, worst samples' read {second:.2f} s, "
        f"{count} windows {windows:.2f} s; whole report {whole:.2f} s "
        f"({args.events / whole / 1e6:.2f} M events/s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
