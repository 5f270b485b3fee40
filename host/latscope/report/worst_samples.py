"""The section of the worst samples (``tables[].flags`` and ``tables[].worst``): per table its
flagged samples and the statistics without them, and its worst samples with the events
around them (:mod:`latscope.analysis.worst`), in every format.
"""

from pathlib import Path

from ..analysis.worst import WORST_SHOWN, events_text, flags_text, worst_samples
from ..progress import step
from .columns import STAT_COLUMNS, cell
from .run_description import TICKS_NOT_RECORDED
from .section import Grid, Link, Paragraph, TableSection

__all__ = ["WORST_KEYS", "FLAG_STATS", "WorstSamples", "worst_of", "flags_line"]

#: Fields of a worst sample in the results document, in order (docs/results-schema.md).
WORST_KEYS = (
    "rank",
    "index",
    "start",
    "end",
    "time_s",
    "ns",
    "cold",
    "tick",
    "events",
    "events_omitted",
    "export",
)

#: Statistics of the unflagged samples in results.csv (as ``unflagged_<key>``).
FLAG_STATS = ("samples", "max_ns", "p99_ns", "p999_ns")


def worst_of(capture, summary, tables, n=WORST_SHOWN):
    """:func:`latscope.analysis.worst.worst_samples` of the ``summary`` and ``tables`` that
    :func:`latscope.report.results.load_tables` gave for ``capture`` (the path or
    ``Capture`` given to it); times from the capture's first event. ``n`` 0: none."""
    if not n:
        return {}
    with step(f"finding the {n} worst samples of every table"):
        return worst_samples(capture, tables, n, first_stamp=summary.first_stamp)


def flags_line(row):
    """What a table's flags are and what its statistics are without them, in one line."""
    flags, titles = row["flags"], {key: title for key, title, _ in STAT_COLUMNS}
    clean = flags["unflagged"]
    without = ", ".join(
        f"{titles[key].removesuffix(' (ns)')} {cell(clean.get(key), '{:.1f}')}"
        for key in ("max_ns", "p99_ns", "p999_ns")
    )
    tick = (
        f"{flags['tick']} tick"
        if flags["tick"] is not None
        else f"tick flags: {TICKS_NOT_RECORDED}"
    )
    return (
        f"{row['name']}: {flags['flagged']} of {row['samples']} samples flagged "
        f"({flags['cold']} cold, {tick}); without them: "
        f"{clean['samples']} samples, {without} ns"
    )


class WorstSamples(TableSection):
    """Flags and worst samples. The text formats show the first ``shown`` worst samples of
    every table (None: all the document holds), when worst samples were looked for."""

    title = "Worst samples"
    csv_columns = ["flagged_cold", "flagged_tick", "flagged"] + [
        f"unflagged_{key}" for key in FLAG_STATS
    ]

    def __init__(self, shown=None):
        self.shown_per_table = shown

    def fields(self, name, table, context):
        """The flagged samples (``TableAccumulator.flags``) and the worst samples
        ``context["worst"][name]``. A capture without tick markers: the tick flags are None,
        not recorded, rather than 0 (none of the samples overlapped a tick)."""
        flags = table.flags()
        worst = [
            {key: entry[key] for key in WORST_KEYS if key in entry}
            for entry in context["worst"].get(name) or []
        ]
        ticks_recorded = context["run"]["tick_markers"] > 0
        if not ticks_recorded:
            flags["tick"] = None
            for entry in worst:
                entry["tick"] = None
        return {"flags": flags, "worst": worst}

    def shown(self, document):
        return any(row["worst"] for row in document["tables"])

    def intro(self, document):
        return (
            f"worst samples (flags: cold = the table's first sample, tick = the kernel's "
            f"tick overlaps it; events in ns from the sample's start, from "
            f"{document['worst_context_s'] * 1e6:g} us before to after it, the sample in "
            f"[brackets]; the maximum stays the real maximum):"
        )

    def lines(self, row):
        if not row["samples"]:
            return []
        lines = [flags_line(row)]
        for entry in row["worst"][: self.shown_per_table]:
            flags = flags_text(entry)
            lines.append(
                f"  #{entry['rank']} {entry['ns']:.1f} ns, sample {entry['index']} "
                f"at {entry['time_s']:.6f} s{f' [{flags}]' if flags else ''}: "
                f"{events_text(entry)}"
            )
        return lines

    def blocks(self, row):
        if not row["samples"]:
            return []
        blocks = [Paragraph(flags_line(row))]
        if row["worst"]:
            header = [
                "#",
                "latency (ns)",
                "sample",
                "time (s)",
                "flags",
                "events (ns from the sample's start; the sample in [brackets])",
                "PulseView",
            ]
            rows = [
                [
                    str(entry["rank"]),
                    f"{entry['ns']:.1f}",
                    str(entry["index"]),
                    f"{entry['time_s']:.6f}",
                    flags_text(entry),
                    events_text(entry),
                    Link(Path(entry["export"]).name, entry["export"])
                    if entry.get("export")
                    else "",
                ]
                for entry in row["worst"]
            ]
            blocks.append(Grid(header, rows, numeric={0, 1, 2, 3}, name="worst"))
        return blocks

    def csv_cells(self, row):
        flags = row["flags"]
        return [flags["cold"], flags["tick"], flags["flagged"]] + [
            flags["unflagged"].get(key) for key in FLAG_STATS
        ]
