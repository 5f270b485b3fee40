"""The text format: the tables, what was lost and every section, for the terminal
(``latscope analyze``), and comparisons side by side (``latscope compare``).
"""

from ...capture.file import NOT_CLOSED
from ...terminal import wrap
from ..columns import (
    STAT_COLUMNS,
    cell,
    column_groups,
    statistics_note,
    summary_columns,
    text_table,
)
from ..comparison_view import judged_difference, judgement_note, settings_rows
from ..headline import headline_lines
from ..results import TABLE_SECTIONS
from ..run_description import calibration_line, conditions_line, holes_text, integrity_line
from ..tail_estimates import tail_line
from .base import ResultsFormat

__all__ = ["TextFormat"]


class TextFormat(ResultsFormat):
    name = "text"
    help = "the tables, what was lost and the worst samples, for the terminal"
    comparison_help = "per table each run's statistics and its differences to the first"

    def text(self, document, figures=None, *, details=True, width=None):
        """The whole document (``details``), or its summary: the headline, the short table
        (:func:`summary` ) and what was lost. ``width``: fit a terminal of that many
        columns (tables split, long lines wrapped); None: lines whole, for files."""
        if not details:
            return summary(document, width, more=MORE)
        device, integrity = document["device"], document["integrity"]
        lines = [
            f"{document['capture']['path']}: {document['events']} events, "
            f"{document['duration_s']:.6f} s at {device.get('clock_hz', 0) / 1e6:g} MHz "
            f"({device.get('board', '?')}); {conditions_line(document['conditions'])}",
            f"loop calibration: {calibration_line(device)}",
            *headline_lines(document),
            text_table(document["tables"], width=width)
            if document["tables"]
            else "no test of the suite in this capture",
        ]
        if document["tables"]:
            lines.append(statistics_note())
        lines.append(integrity_line(integrity))
        lines += [text for text in (section.text(document) for section in TABLE_SECTIONS) if text]
        if integrity["holes"]:
            lines.append(holes_text(integrity))
        return wrap("\n".join(lines), width) + "\n"

    def comparison_text(self, comparison, figures=None, *, width=None):
        """The runs' settings, those that differ from the first run's marked; per table:
        one line per run with its statistics and one with its tail estimate, and under
        every run after the baseline the differences (value - baseline, and percent for the
        ns statistics; a percentile's judgement beside it); ``width``: the statistics split
        into groups of columns that fit it, long lines wrapped. No figures (a terminal)."""
        return wrap(_comparison_lines(comparison, width), width) + "\n"


#: What ``latscope analyze`` shows beyond its summary, and how to ask for it.
MORE = (
    "--details: std, p50, confidence intervals, losses per table, flagged and worst "
    "samples, tail estimates; --worst N: the N worst samples of each table"
)


def summary(document, width=None, *, more=None):
    """The headline, the short table (:func:`~latscope.report.columns.summary_columns`), the
    percentile rule in short, what was lost and, if given, how to see ``more``; fitted to
    ``width`` columns (None: lines whole)."""
    integrity = document["integrity"]
    device = document["device"]
    lines = [
        f"{document['capture']['path']}: {document['events']} events, "
        f"{document['duration_s']:.6f} s at {device.get('clock_hz', 0) / 1e6:g} MHz "
        f"({device.get('board', '?')}); {conditions_line(document['conditions'])}"
    ]
    rows = document["tables"]
    if rows:
        lines += headline_lines(document) + [""]
        lines.append(
            text_table(rows, name_title="test (ns)", columns=summary_columns(rows), width=width)
        )
        lines.append("percentiles from enough samples: p99 from 100, p99.9 from 1000 (–: fewer)")
    else:
        lines.append("no test of the suite in this capture")
    if more:
        lines.append(more)
    lines.append(integrity_line(integrity))  # last but the holes: what was lost
    if integrity["holes"]:
        lines.append(holes_text(integrity))
    return wrap("\n".join(lines), width) + "\n"


def _comparison_lines(document, width=None):
    """The comparison's tables (every statistic of :data:`STAT_COLUMNS` is compared), the
    columns in groups that fit ``width`` (None: one group)."""
    titles = [title for _, title, _ in STAT_COLUMNS]
    label_width = max([len(r["label"]) for r in document["runs"]] + [8]) + 2
    widths = [max(len(t), 16) for t in titles]
    groups = column_groups(widths, label_width, width)
    out = [f"{run['label']}: {NOT_CLOSED}" for run in document["runs"] if not run["closed"]]
    out += _settings_lines(document)
    for table in document["tables"]:
        out.append(table["name"])
        for group in groups:
            columns = [(STAT_COLUMNS[n], widths[n]) for n in group]
            out.append(
                " " * label_width + "  ".join(title.rjust(w) for (_, title, _), w in columns)
            )
            for entry in table["runs"]:
                label = ("  " + entry["run"]).ljust(label_width)
                if not entry["present"]:
                    out.append(label + "(no such table)")
                    continue
                out.append(
                    label
                    + "  ".join(
                        cell(entry["stats"][key], fmt).rjust(w) for (key, _, fmt), w in columns
                    )
                )
                if "diff" in entry:
                    out.append(
                        ("    Δ").ljust(label_width)
                        + "  ".join(
                            judged_difference(key, entry).rjust(w) for (key, _, _), w in columns
                        )
                    )
        for entry in table["runs"]:
            if entry["present"]:
                out.append(f"  {entry['run']} " + tail_line("tail", entry["tail"]))
        out.append("")
    out.append(statistics_note().split(";")[0] + ".")
    out.append(judgement_note().capitalize() + ".")
    return "\n".join(out)


def _settings_lines(document):
    """The runs' settings, one line per setting and a column per run, "*" before each one
    in which a run differs from the first."""
    rows = settings_rows(document)
    titles = ["settings"] + [title for title, _, _ in rows]
    labels = [run["label"] for run in document["runs"]]
    columns = [[label] + [values[n] for _, values, _ in rows] for n, label in enumerate(labels)]
    widths = [max(len(text) for text in column) for column in columns]
    title_width = max(len(title) for title in titles)
    marks = [" "] + ["*" if differs else " " for _, _, differs in rows]
    lines = [
        f"{marks[r]} {title.ljust(title_width)}  "
        + "  ".join(column[r].ljust(w) for column, w in zip(columns, widths))
        for r, title in enumerate(titles)
    ]
    note = (
        "*: a run's setting differs from the first run's"
        if any(marks[1:])
        else "the runs were measured alike"
    )
    return [line.rstrip() for line in lines] + [f"  ({note})", ""]
