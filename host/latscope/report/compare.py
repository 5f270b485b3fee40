"""Side-by-side comparison of several captures: the same tables, their statistics and the
difference of every statistic against the first capture (the baseline), plus overlaid
distributions per table.

Works on results documents (:func:`latscope.report.results.results`), so a comparison needs
only the tables each capture produced; figures need the samples and are made from the tables.
The formats (:mod:`latscope.report.formats`) write the comparison document.
"""

from pathlib import Path

from ..analysis.statistics import PERCENTILES, ci_key
from ..progress import step
from . import plots
from .columns import STAT_COLUMNS
from .formats import comparison_formats
from .formats.base import Figures
from .results import load_tables, results

__all__ = [
    "Run",
    "load_runs",
    "comparison",
    "differences",
    "measured_under",
    "JUDGED",
    "judgement",
    "write_figures",
    "directory_files",
    "write_directory",
]

#: Statistics compared (every numeric one of a table row).
COMPARED = [key for key, _, _ in STAT_COLUMNS]
#: Statistics judged against the baseline's: those with a confidence interval, the
#: percentiles (the extremes, mean and deviation have none).
JUDGED = [key for key, _, _ in PERCENTILES]


class Run:
    """One capture of a comparison: ``label``, results ``document`` and ``tables``."""

    def __init__(self, path, label=None):
        capture, self.tables = load_tables(path)
        self.document = results(capture, self.tables)
        self.label = label or Path(path).stem
        self.rows = {row["name"]: row for row in self.document["tables"]}


def load_runs(paths, labels=None):
    labels = list(labels or [])
    runs = [Run(path, labels[i] if i < len(labels) else None) for i, path in enumerate(paths)]
    seen = {}
    for run in runs:  # two files of the same name: number the labels
        count = seen[run.label] = seen.get(run.label, 0) + 1
        if count > 1:
            run.label = f"{run.label}#{count}"
    return runs


#: The IRQ generator's settings two comparable captures share (the _ns values follow them).
IRQ_SETTINGS = ("enable", "period", "jitter_mask", "width", "one_shot", "active_low")
#: Suite settings that are conditions (compared as such), not the firmware.
_CONDITION_KEYS = ("load", "load_param", "cache")


def measured_under(document):
    """What makes two captures' tables comparable: load and cache, IRQ settings, CPU and
    firmware (the suite's other settings), as a results document records them."""
    suite = document["suite"] if isinstance(document["suite"], dict) else {}
    irq = document["irq"] or {}
    return {
        "load": document["conditions"],
        "IRQ settings": {key: irq.get(key) for key in IRQ_SETTINGS},
        "CPU": suite.get("cpu"),
        "firmware": {
            key: value for key, value in suite.items() if key not in ("cpu", *_CONDITION_KEYS)
        },
    }


def differences(runs):
    """How the runs after the first differ from it in load and cache, IRQ settings, CPU or
    firmware: one line per difference ("bus: load {...} against {...}"); [] when the tables
    were measured alike."""
    base = measured_under(runs[0].document)
    lines = []
    for run in runs[1:]:
        mine = measured_under(run.document)
        lines += [
            f"{run.label}: {what} {mine[what]} against {base[what]} ({runs[0].label})"
            for what in base
            if mine[what] != base[what]
        ]
    return lines


def _difference(value, base):
    if value is None or base is None:
        return None, None
    delta = value - base
    relative = delta / base * 100 if base else None
    return delta, relative


def judgement(interval, base):
    """A percentile against the baseline's, by their confidence intervals ([low, high] ns,
    an end None where it is open: below the minimum, above the maximum): "higher" when this
    one's lies wholly above the baseline's, "lower" wholly below, "within" when they share
    a point; None when either is not known (too few samples)."""
    if not interval or not base:
        return None
    (low, high), (base_low, base_high) = interval, base
    if low is not None and base_high is not None and low > base_high:
        return "higher"
    if high is not None and base_low is not None and high < base_low:
        return "lower"
    return "within"


def comparison(runs):
    """The comparison document: the runs (label, capture path, board, clock, CPU/suite
    settings, what their tables were measured under) and how they differ in it, and per
    table name (in first-seen order) every run's statistics and percentiles' confidence
    intervals with ``diff`` (value - baseline), ``diff_pct`` and the percentiles'
    ``judgement`` (:func:`judgement`) against the first run that has samples in it, and its
    tail estimate (``tail``, as in the run's results document)."""
    names = []
    for run in runs:
        names += [name for name in run.rows if name not in names]
    tables = []
    for name in names:
        entries, base = [], None
        for run in runs:
            row = run.rows.get(name)
            if row is None:
                entries.append({"run": run.label, "present": False})
                continue
            stats = {key: row[key] for key in COMPARED}
            intervals = {ci_key(key): row[ci_key(key)] for key in JUDGED}
            entry = {
                "run": run.label,
                "present": True,
                "stats": stats,
                "ci": intervals,
                "tail": row["tail"],
            }
            if base is None:
                if stats["samples"]:  # the baseline: the first run with samples
                    base = entry
            else:
                entry["diff"], entry["diff_pct"] = {}, {}
                for key in COMPARED:
                    entry["diff"][key], entry["diff_pct"][key] = _difference(
                        stats[key], base["stats"][key]
                    )
                entry["judgement"] = {
                    key: judgement(intervals[ci_key(key)], base["ci"][ci_key(key)])
                    for key in JUDGED
                }
            entries.append(entry)
        tables.append({"name": name, "runs": entries})
    return {
        "schema": "latscope-comparison",
        # 2: every run's tail estimate; 3: settings, differences, intervals and judgements
        # (docs/results-schema.md)
        "version": 3,
        "runs": [
            {
                "label": run.label,
                "capture": run.document["capture"]["path"],
                "board": run.document["device"].get("board"),
                "clock_hz": run.document["device"].get("clock_hz"),
                "suite": run.document["suite"],
                "conditions": run.document["conditions"],
                "irq": run.document["irq"],
                "test_info": run.document["capture"]["test_info"],
                "closed": run.document["integrity"]["closed"],
                "measured_under": measured_under(run.document),
            }
            for run in runs
        ],
        "differences": differences(runs),
        "tables": tables,
    }


#: Where a comparison's figures are, relative to its files.
FIGURES = "."


def write_figures(runs, directory):
    """Overlaid distributions of every table present in two or more runs:
    ``directory/<table>.compare.{png,svg}``; returns their :class:`Figures` (per table its
    ``compare`` PNG in base64)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    figures = Figures(FIGURES)
    names = []
    for run in runs:
        names += [name for name in run.tables if name not in names]
    shared = [name for name in names if sum(name in run.tables for run in runs) >= 2]
    with step("drawing the overlaid distributions") as progress:
        for done, name in enumerate(shared):
            progress.set_detail(f"{name}, {done + 1} of {len(shared)} tables")
            present = [(run.label, run.tables[name]) for run in runs if name in run.tables]
            figure = plots.overlay_distributions(present)
            stem = directory / plots.figure_name(name, "compare")
            figures.png[name] = {"compare": plots.save_inlined(figure, stem)}
    return figures


def directory_files():
    """The comparison's files in a directory of :func:`write_directory`: one per format
    that has one."""
    return [fmt.comparison_file for fmt in comparison_formats() if fmt.comparison_file]


def write_directory(runs, document, directory):
    """The overlaid distributions (:func:`write_figures`) and the comparison ``document`` in
    every format that has a comparison file (beside the figures), into ``directory``;
    returns the :class:`Figures`."""
    figures = write_figures(runs, directory)
    for fmt in comparison_formats():
        if fmt.comparison_file:
            fmt.write_comparison(document, Path(directory) / fmt.comparison_file, figures)
    return figures
