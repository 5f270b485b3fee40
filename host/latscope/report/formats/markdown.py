"""The Markdown report (``report.md``): the run's settings, the tables, every section as in the
terminal, and per table its figures (SVG files beside it). And the comparison
(``comparison.md``): every run's settings, those that differ in bold, and per table the
runs' statistics, differences, judgements and the overlaid distribution (SVG beside it).
"""

from pathlib import Path

from .. import plots
from ..columns import STAT_COLUMNS, cell, stat_cell, statistics_note
from ..comparison_view import judged_difference, judgement_note, judgements_grid, settings_rows
from ..headline import TITLE, headline_grid
from ..results import TABLE_SECTIONS
from ..run_description import settings_items
from ..tail_estimates import tail_line
from .base import ResultsFormat

__all__ = ["MarkdownFormat"]


class MarkdownFormat(ResultsFormat):
    name = "markdown"
    help = "settings, tables and worst samples, with links to the SVG figures"
    report_file = "report.md"
    comparison_help = (
        "each run's settings (differences in bold), per table the statistics, differences "
        "with their judgements, and links to the overlaid distributions"
    )
    comparison_file = "comparison.md"

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

    def comparison_text(self, comparison, figures=None):
        labels = [run["label"] for run in comparison["runs"]]
        lines = [f"# latscope comparison: {', '.join(labels)}", "", "## Runs and settings", ""]
        rows = [["capture", *(run["capture"] for run in comparison["runs"])]]
        rows += [
            [f"**{text}**" for text in (title, *values)] if differs else [title, *values]
            for title, values, differs in settings_rows(comparison)
        ]
        lines += _grid(["setting", *labels], rows) + [""]
        if comparison["differences"]:
            lines += ["Not measured alike (in bold above):", ""]
            lines += [f"- {line}" for line in comparison["differences"]]
        else:
            lines.append("The runs were measured alike.")
        lines += ["", judgement_note().capitalize() + ".", statistics_note().capitalize() + "."]
        lines += ["", "## Tables", ""]
        for table in comparison["tables"]:
            lines += _comparison_table(table, figures)
        return "\n".join(lines)


def _grid(header, rows):
    """A Markdown table of ``header`` and ``rows``, the columns after the first
    right-aligned."""
    return [
        "| " + " | ".join(header) + " |",
        "| --- |" + " ---: |" * (len(header) - 1),
        *("| " + " | ".join(str(text) for text in row) + " |" for row in rows),
    ]


def _comparison_table(table, figures):
    """One table of the comparison: every run's statistics with its differences (and
    judgements) below, the percentiles with their intervals and judgements, the tail
    estimates and a link to the overlaid distribution (``figures``, None: none)."""
    name = table["name"]
    rows = []
    for entry in table["runs"]:
        if not entry["present"]:
            rows.append([entry["run"], "(no such table)"] + [""] * (len(STAT_COLUMNS) - 1))
            continue
        rows.append([entry["run"]] + [cell(entry["stats"][k], f) for k, _, f in STAT_COLUMNS])
        if "diff" in entry:
            rows.append(
                [f"Δ {entry['run']}"] + [judged_difference(k, entry) for k, _, _ in STAT_COLUMNS]
            )
    lines = [f"### {name}", ""] + _grid(["run"] + [t for _, t, _ in STAT_COLUMNS], rows) + [""]
    grid = judgements_grid(table)
    if grid is not None:
        header, judged = grid
        lines += _grid(header, [cells for cells, _ in judged]) + [""]
    lines += [
        f"- {tail_line(e['run'] + ' tail', e['tail'])}" for e in table["runs"] if e["present"]
    ]
    lines.append("")
    if figures is not None and name in figures.png:
        for kind in figures.png[name]:
            stem = plots.figure_name(name, kind)
            lines += [f"![{name} {kind}]({figures.directory}/{stem}.svg)", ""]
    return lines
