"""The Markdown report (``report.md``): the run's settings, the tables, every section as in the
terminal, and per table its figures (SVG files beside it).
"""

from pathlib import Path

from .. import plots
from ..columns import STAT_COLUMNS, stat_cell, statistics_note
from ..headline import TITLE, headline_grid
from ..results import TABLE_SECTIONS
from ..run_description import settings_items
from .base import ResultsFormat

__all__ = ["MarkdownFormat"]


class MarkdownFormat(ResultsFormat):
    name = "markdown"
    help = "settings, tables and worst samples, with links to the SVG figures"
    report_file = "report.md"

    def text(self, document, figures=None):
        lines = [f"# latscope report: {Path(document['capture']['path']).name}", ""]
        for section, items in settings_items(document):
            lines += [f"## {section}", "", "| | |", "| --- | --- |"]
            lines += [f"| {label} | {'' if value is None else value} |" for label, value in items]
            lines.append("")
        lines += ["## Results", ""]
        grid = headline_grid(document)
        if grid is not None:
            lines += [f"Headline: the {TITLE}.", ""]
            lines += ["| " + " | ".join(grid.header) + " |"]
            lines += ["| --- |" + " ---: | --- |" * 2]
            lines += ["| " + " | ".join(row) + " |" for row in grid.rows] + [""]
        lines += [
            "| test | " + " | ".join(t for _, t, _ in STAT_COLUMNS) + " |",
            "| --- |" + " ---: |" * len(STAT_COLUMNS),
        ]
        for row in document["tables"]:
            lines.append(
                f"| {row['name']} | "
                + " | ".join(stat_cell(row, k, f) for k, _, f in STAT_COLUMNS)
                + " |"
            )
        if not document["tables"]:
            lines.append("\nNo test of the suite was found in this capture.")
        lines += ["", statistics_note().capitalize() + ".", ""]
        for section in TABLE_SECTIONS:
            text = section.text(document)
            if text:
                lines += [f"## {section.title}", "", "```", text, "```", ""]
        if figures is not None:
            if figures.families:
                lines += ["## Cumulative distributions", ""]
                for kind in figures.families:
                    stem = plots.figure_name(kind, "cdf")
                    lines.append(f"![{kind} cdf]({figures.directory}/{stem}.svg)")
                lines.append("")
            for row in document["tables"]:
                lines += [f"### {row['name']}", "", row["description"], ""]
                for kind in figures.png.get(row["name"], {}):
                    stem = plots.figure_name(row["name"], kind)
                    lines.append(f"![{row['name']} {kind}]({figures.directory}/{stem}.svg)")
                lines.append("")
        return "\n".join(lines)
