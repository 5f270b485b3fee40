"""The section of the IRQ trigger's delays (``tables[].by_delay``; issue 26): per table the
latency at each trigger delay (:class:`~latscope.analysis.delays.DelayStats`: samples, min,
max, mean; the worst delays marked), in every format. Empty for a table whose samples start
at no triggered IRQ edge."""

from __future__ import annotations

from ..analysis.delays import WORST_DELAYS
from .columns import cell
from .section import Grid, TableSection

__all__ = ["DelaySweep"]

#: Columns of a row of the delay table: field, title, format.
DELAY_COLUMNS = (
    ("delay_cycles", "delay (cycles)", "{:d}"),
    ("delay_ns", "delay (ns)", "{:.1f}"),
    ("samples", "samples", "{:d}"),
    ("min_ns", "min (ns)", "{:.1f}"),
    ("max_ns", "max (ns)", "{:.1f}"),
    ("mean_ns", "mean (ns)", "{:.1f}"),
)


class DelaySweep(TableSection):
    """Latency versus trigger delay. The CSV of the tables gives each table's worst delay
    (that of its largest maximum) and the number of delays."""

    title = "Latency by trigger delay"
    csv_columns = ["worst_delay_cycles", "delays"]

    def fields(self, name: str, table, context: dict) -> dict:
        clock_hz = (context["run"].get("device") or {}).get("clock_hz")
        return {"by_delay": table.by_delay.rows(table.ns_per_stamp, clock_hz)}

    def shown(self, document: dict) -> bool:
        return any(row["by_delay"] for row in document["tables"])

    def intro(self, document: dict) -> str:
        return (
            f"latency by IRQ trigger delay (each sample's delay from its IRQ record; "
            f"* = one of the {WORST_DELAYS} delays with the largest maxima):"
        )

    def _grid(self, row: dict) -> Grid:
        rows = [
            [cell(entry[key], form) for key, _, form in DELAY_COLUMNS]
            + ["*" if entry["worst"] else ""]
            for entry in row["by_delay"]
        ]
        header = [title for _, title, _ in DELAY_COLUMNS] + ["worst"]
        return Grid(header, rows, numeric=set(range(len(DELAY_COLUMNS))), name="by-delay")

    def lines(self, row: dict) -> list[str]:
        if not row["by_delay"]:
            return []
        grid = self._grid(row)
        widths = [max(len(str(c)) for c in column) for column in zip(grid.header, *grid.rows)]
        return [f"{row['name']}:"] + [
            "  " + "  ".join(str(c).rjust(w) for c, w in zip(line, widths))
            for line in [grid.header, *grid.rows]
        ]

    def blocks(self, row: dict) -> list:
        return [self._grid(row)] if row["by_delay"] else []

    def csv_cells(self, row: dict) -> list:
        worst = [entry for entry in row["by_delay"] if entry["worst"]]
        top = max(worst, key=lambda entry: entry["max_ns"], default=None)
        return [top["delay_cycles"] if top else None, len(row["by_delay"])]
