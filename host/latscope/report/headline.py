"""The headline of a results document: for each of the three latencies the classic RTOS
evaluations lead with (IL, IDL, TSL), the worst sample and the highest p99 over that kind's
tables, with the table each comes from. Shown first by the demo, ``latscope analyze`` and the
report; made from the document's tables (nothing of its own in results.json).
"""

from .section import Grid

__all__ = ["KINDS", "headline", "headline_lines", "headline_grid"]

#: The kinds of the headline: a table belongs to one by its name's prefix ("IL-b-10": IL).
KINDS = (
    ("IL", "interrupt latency"),
    ("IDL", "interrupt dispatch latency"),
    ("TSL", "thread switch latency"),
)

TITLE = "worst sample and highest p99 over each kind's tables"


def _highest(rows, key):
    """(value, table name) of the highest ``key`` among ``rows`` that have it, or None."""
    found = [(row[key], row["name"]) for row in rows if row.get(key) is not None]
    return max(found, key=lambda pair: pair[0]) if found else None


def headline(document):
    """Per kind of :data:`KINDS` with samples: ``{"kind", "what", "tables", "worst": (ns,
    table), "p99": (ns, table) or None}`` (p99 None: no table of the kind has the 100
    samples it needs)."""
    out = []
    for kind, what in KINDS:
        rows = [
            row
            for row in document["tables"]
            if row["name"].split("-", 1)[0] == kind and row["samples"]
        ]
        if rows:
            out.append(
                {
                    "kind": kind,
                    "what": what,
                    "tables": len(rows),
                    "worst": _highest(rows, "max_ns"),
                    "p99": _highest(rows, "p99_ns"),
                }
            )
    return out


def _value(pair):
    return ("–", "") if pair is None else (f"{pair[0]:.1f}", pair[1])


def headline_lines(document):
    """The headline as text: a title and one line per kind (none without such tables)."""
    kinds = headline(document)
    if not kinds:
        return []
    lines = [f"headline (ns): {TITLE}"]
    for entry in kinds:
        worst, worst_table = _value(entry["worst"])
        p99, p99_table = _value(entry["p99"])
        lines.append(
            f"  {entry['kind']:<4} worst {worst:>9} {f'({worst_table})':<12} "
            f"p99 {p99:>9} {f'({p99_table})' if p99_table else ''}".rstrip()
        )
    return lines


def headline_grid(document):
    """The headline as a :class:`~latscope.report.section.Grid` (HTML, Markdown); None
    without IL, IDL or TSL tables."""
    kinds = headline(document)
    if not kinds:
        return None
    rows = []
    for entry in kinds:
        worst, worst_table = _value(entry["worst"])
        p99, p99_table = _value(entry["p99"])
        rows.append([f"{entry['kind']} ({entry['what']})", worst, worst_table, p99, p99_table])
    header = ["latency", "worst (ns)", "in table", "highest p99 (ns)", "in table"]
    return Grid(header, rows, numeric={1, 3}, name="headline")
