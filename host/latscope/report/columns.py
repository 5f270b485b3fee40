"""The statistics of a table row as every format shows them: their keys, titles and number
formats (:data:`STAT_COLUMNS`), the percentiles' confidence intervals (:data:`CI_COLUMNS`),
one cell, the percentile rule in one line and the fixed-width table of the terminal.
"""

from ..analysis.accounting import Lost
from ..analysis.statistics import CONFIDENCE, PERCENTILES, ci_key

__all__ = [
    "STAT_COLUMNS",
    "CI_COLUMNS",
    "cell",
    "column_groups",
    "stat_cell",
    "interval_text",
    "statistics_note",
    "summary_columns",
    "text_table",
]

#: Statistics of a table row: (key, column title, format).
STAT_COLUMNS = [
    ("samples", "samples", "{:d}"),
    ("min_ns", "min (ns)", "{:.1f}"),
    ("max_ns", "max (ns)", "{:.1f}"),
    ("avg_ns", "avg (ns)", "{:.1f}"),
    ("std_ns", "std (ns)", "{:.1f}"),
    ("p50_ns", "p50 (ns)", "{:.1f}"),
    ("p99_ns", "p99 (ns)", "{:.1f}"),
    ("p999_ns", "p99.9 (ns)", "{:.1f}"),
    ("discarded", "discarded", "{:d}"),
    ("discarded_by_holes", "by holes", "{:d}"),
    # Samples damage took without a pair to discard: "~N" an estimate, "?" not known
    # (latscope.analysis.accounting; ``lost_estimated`` in the row).
    ("lost", "lost", "{:d}"),
]

#: CSV columns of the percentiles' confidence intervals: (column, row key, 0 low / 1 high).
CI_COLUMNS = [
    (ci_key(key).replace("_ci_ns", f"_ci_{end}_ns"), ci_key(key), side)
    for key, _, _ in PERCENTILES
    for side, end in enumerate(("low", "high"))
]


def cell(value, fmt):
    """A value as shown in a table: ``fmt`` applied, "–" where there is none."""
    return "–" if value is None else fmt.format(value)


def stat_cell(row, key, fmt):
    """A statistic of a table ``row`` as shown in a table: ``lost`` as "~N" where it is an
    estimate ("?": not known), the others as :func:`cell`."""
    if key == "lost":
        return Lost(row.get("lost"), bool(row.get("lost_estimated"))).text()
    return cell(row.get(key), fmt)


def interval_text(row, key):
    """A percentile's confidence interval as text: "[low, high]" (ns); an open end (the
    samples do not reach it) as "< min" or "> max"."""
    ci = row.get(ci_key(key))
    if not ci:
        return "–"
    low = "< min" if ci[0] is None else f"{ci[0]:.1f}"
    high = "> max" if ci[1] is None else f"{ci[1]:.1f}"
    return f"[{low}, {high}]"


def statistics_note():
    """The percentile rule in one line, for every output that shows percentiles."""
    titles = {key: title.removesuffix(" (ns)") for key, title, _ in STAT_COLUMNS}
    rule = ", ".join(f"{titles[key]} from {fewest} samples" for key, _, fewest in PERCENTILES)
    return (
        f"percentiles only where the sample count supports them: {rule} (–: fewer); "
        f"each with a distribution-free {CONFIDENCE:.0%} confidence interval from order "
        f"statistics in results.json / results.csv"
    )


#: The statistics of the short table (``latscope analyze`` without ``--details``, the demo,
#: the report on the terminal), in ns; the losses' columns join them where a table has any.
SUMMARY_KEYS = ("samples", "min_ns", "avg_ns", "max_ns", "p99_ns", "p999_ns")
LOSS_KEYS = ("discarded", "lost")


def summary_columns(rows):
    """The columns of the short table of ``rows``: :data:`SUMMARY_KEYS` titled without
    their unit (the table's name column says "(ns)"), and :data:`LOSS_KEYS` when a row has
    such samples."""
    losses = [key for key in LOSS_KEYS if any(row.get(key) for row in rows)]
    return [
        (key, title.removesuffix(" (ns)"), fmt)
        for key, title, fmt in STAT_COLUMNS
        if key in SUMMARY_KEYS or key in losses
    ]


def column_groups(widths, first, width):
    """The indices of columns ``widths`` wide (2 spaces between) in groups that fit
    ``width`` after a first column ``first`` wide, each group a table of its own below the
    last (None: one group)."""
    groups, group, used = [], [], first
    for n, w in enumerate(widths):
        if group and width is not None and used + 2 + w > width:
            groups.append(group)
            group, used = [], first
        group.append(n)
        used += 2 + w
    groups.append(group)
    return groups


def text_table(rows, *, name_title="test", columns=None, width=None):
    """A fixed-width text table of result rows (for the terminal): ``columns`` (default
    every one of :data:`STAT_COLUMNS`); ``width``: at most that many columns of text, the
    statistics split over several tables below each other where they need more."""
    columns = STAT_COLUMNS if columns is None else columns
    names = [name_title] + [row["name"] for row in rows]
    cells = [[title] + [stat_cell(row, k, f) for row in rows] for k, title, f in columns]
    name_width = max(len(name) for name in names)
    widths = [max(len(c) for c in column) for column in cells]
    out = []
    for group in column_groups(widths, name_width, width):
        if out:
            out.append("")
        for r, name in enumerate(names):
            out.append(
                "  ".join([name.ljust(name_width)] + [cells[n][r].rjust(widths[n]) for n in group])
            )
    return "\n".join(out)
