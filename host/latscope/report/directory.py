"""A report directory (``latscope report``): a file of every results format that has one
(:func:`latscope.report.formats.report_formats`), the figures of every table
(:mod:`latscope.report.plots`: ``figures/<table>.<kind>.{png,svg}``) and a PulseView window
of each worst sample (``worst/<table>.<rank>.sr``).
"""

import base64
from pathlib import Path

from ..analysis.worst import WORST_SHOWN
from ..progress import step
from . import plots
from .formats import report_formats
from .formats.base import Figures
from .headline import KINDS
from .results import load_tables, results
from .worst_samples import worst_of

__all__ = ["LONG_RUN_S", "FIGURES", "report_files", "export_worst", "write_report"]

#: Runs at least this long get a maximum-per-minute figure per table by default.
LONG_RUN_S = 600.0
#: The figures' directory in a report.
FIGURES = "figures"


def report_files():
    """The files :func:`write_report` writes into its directory (besides ``figures/`` and
    ``worst/``), in the order of the formats."""
    return [fmt.report_file for fmt in report_formats()]


def export_worst(capture, document, directory, stamp_hz):
    """A PulseView window (``worst/<table>.<rank>.sr`` and its ``.pvs``) of every worst
    sample in ``document``: the events from ``worst_context_s`` before its start to as long
    after its end, with its test's context (the START and PARAM markers before the window,
    repeated at its first samples: ``export.files.export_capture``), so that the decoders
    pair it as in the whole capture. Notes each file in the sample's ``export`` (relative to
    ``directory``). ``capture``: a path (read once for all the windows:
    ``export.files.export_windows``) or a loaded ``Capture``."""
    from ..export.files import export_windows

    folder = Path(directory) / "worst"
    folder.mkdir(parents=True, exist_ok=True)
    margin = int(round(document["worst_context_s"] * stamp_hz))
    windows, entries = [], []
    for row in document["tables"]:
        for entry in row["worst"]:
            path = folder / f"{row['name']}.{entry['rank']}.sr"
            windows.append(
                {
                    "start": max(0, entry["start"] - margin),
                    "stop": entry["end"] + margin + 1,
                    "outputs": [path],
                }
            )
            entries.append(entry)
    with step(f"writing {len(windows)} PulseView windows of the worst samples"):
        export_windows(capture, windows)
    for window, entry in zip(windows, entries):
        entry["export"] = f"worst/{window['outputs'][0].name}"


def _figures(tables, directory, x, interval_s):
    """Draws every table with samples into ``directory/figures`` (SVG and PNG); the
    :class:`Figures` with each PNG inline."""
    folder = directory / FIGURES
    folder.mkdir(exist_ok=True)
    figures = Figures(FIGURES)
    drawn = [(name, table) for name, table in tables.items() if table.count]
    with step("drawing the figures") as progress:
        for done, (name, table) in enumerate(drawn):
            progress.set_detail(f"{name}, {done + 1} of {len(drawn)} tables")
            figures.png[name] = _table_figures(name, table, folder, x, interval_s)
        for kind, what in KINDS:
            family = [(name, table) for name, table in drawn if name.split("-", 1)[0] == kind]
            if family:
                title = f"{kind}: {what}, cumulative distribution of each table"
                figure = plots.cdf(family, title=title)
                figures.families[kind] = _saved(figure, folder / plots.figure_name(kind, "cdf"))
    return figures


def _table_figures(name, table, folder, x, interval_s):
    """Draws one table's figures into ``folder``; ``{kind: PNG in base64}``."""
    return {
        kind: _saved(figure, folder / plots.figure_name(name, kind))
        for kind, figure in plots.table_figures(table, x=x, interval_s=interval_s).items()
    }


def _saved(figure, stem):
    """Writes ``stem.svg`` and ``stem.png``; the PNG in base64 (to be inlined)."""
    plots.save(figure, stem, formats=("svg",))
    png = plots.png_bytes(figure)  # rendered once: file and inline copy
    stem.with_name(stem.name + ".png").write_bytes(png)
    return base64.b64encode(png).decode("ascii")


def write_report(
    capture,
    directory,
    *,
    figures=True,
    x="index",
    interval_s=None,
    loop=None,
    worst=WORST_SHOWN,
    exports=True,
):
    """Writes the file of every report format (``report.html``, ``report.md``,
    ``results.csv``, ``results.json``, ``worst.csv``) and (with ``figures``)
    ``figures/<table>.<kind>.{png,svg}`` into ``directory``. ``capture``: a path or a
    :class:`Capture`. ``interval_s``: add the maximum per interval of that many seconds
    (default: per minute for runs of :data:`LONG_RUN_S` or longer, else none). ``worst``:
    worst samples per table, with the events around them (0: none); ``exports``: and a
    PulseView window of each (:func:`export_worst`). Returns ``(document, {format name:
    path})``."""
    source = capture
    capture, tables = load_tables(source, loop, interval_s=interval_s or 60.0)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    document = results(capture, tables, worst_of(source, capture, tables, worst))
    if exports and worst:
        export_worst(source, document, directory, capture.stamp_hz)
    if interval_s is None and document["duration_s"] >= LONG_RUN_S:
        interval_s = 60.0
    drawn = _figures(tables, directory, x, interval_s) if figures else None
    paths = {}
    for fmt in report_formats():
        paths[fmt.name] = directory / fmt.report_file
        fmt.write(document, paths[fmt.name], drawn)
    return document, paths
