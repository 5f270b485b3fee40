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
    "stat_cell",
    "interval_text",
    "statistics_note",
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


def text_table(rows, *, name_title="test"):
    """A fixed-width text table of result rows (for the terminal)."""
    header = [name_title] + [title for _, title, _ in STAT_COLUMNS]
    lines = [[row["name"]] + [stat_cell(row, k, f) for k, _, f in STAT_COLUMNS] for row in rows]
    widths = [max(len(str(c)) for c in col) for col in zip(header, *lines)]
    out = [
        "  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(header, widths)))
    ]
    for line in lines:
        out.append(
            "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(line, widths)))
        )
    return "\n".join(out)
