"""The section of where the interrupts met the code (``where``, top level and per table): on
the simulated SoC with its ground-truth log (:mod:`latscope.analysis.where`), per IRQ table
the function and source line each worst sample's interrupt met, the coverage of the
functions its interrupts met and the masked regions that held them, in every format.
"""

from pathlib import Path

from ..analysis.where import TableWhere, TruthMismatch, where_of_capture
from ..capture.file import Capture
from ..simulated.code_map import Location
from ..simulated.cpu_truth import MCAUSE_EXTERNAL, TruthSource
from .section import Grid, Paragraph, TableSection

__all__ = ["WhereMet", "where_context", "location_dict", "location_text"]

#: Functions named per table in the text formats (the JSON has all).
FUNCTIONS_SHOWN = 4


def where_context(capture, names):
    """``{"run": top-level where or None, "tables": {name: TableWhere}}`` of a capture (a
    ``CaptureSummary`` or ``Capture``; ``names``: its tables' names): None when its
    metadata names no ground-truth log; when the log or the firmware cannot be read, or is
    not the capture's, the top level says why (``error``) and no table has a ``where``."""
    source = TruthSource.of_metadata(capture.metadata)
    if source is None:
        return None
    try:
        found = where_of_capture(capture if isinstance(capture, Capture) else capture.path, names)
    except (OSError, ValueError) as error:
        kind = "not this capture's" if isinstance(error, TruthMismatch) else "unreadable"
        return {
            "run": {**source.as_dict(), "error": f"ground truth {kind}: {error}"},
            "tables": {},
        }
    assert found is not None  # the metadata names the log
    truth, tables = found
    first = next(iter(tables.values()), None)
    run = {
        **truth.as_dict(),
        "error": None,
        "interrupts": len(first.truth.interrupts.of_cause(MCAUSE_EXTERNAL)) if first else None,
        "masked_stretches": len(first.truth.masked) if first else None,
    }
    return {"run": run, "tables": tables}


def location_dict(location):
    """A :class:`Location` in the results document: address, function, file, line."""
    return {
        "address": location.address,
        "function": location.function,
        "file": location.file,
        "line": location.line or None,
    }


def location_text(where):
    """A location dict as "il_thread (test_irq.c:57) 0x10000abc"."""
    place = f"{Path(where['file']).name}:{where['line']}" if where["file"] else "?"
    return f"{where['function'] or '?'} ({place}) 0x{where['address']:08x}"


def _held(table: TableWhere, index):
    held = table.held_by(index)
    if held is None:
        return None
    return {"start": location_dict(held[0]), "end": location_dict(held[1])}


def _table_fields(table: TableWhere, worst, ns_per_stamp):
    samples = table.samples
    rows = []
    for entry in worst:
        index = table.sample_at(entry["start"])
        if index is None:
            continue
        at: Location | None = table.location(index)
        taken = int(samples.taken[index])
        rows.append(
            {
                "rank": entry["rank"],
                "index": entry["index"],
                "ns": entry["ns"],
                "at": location_dict(at) if at else None,
                "taken_cycles": taken - int(samples.starts[index]) if taken >= 0 else None,
                "masked_cycles": int(samples.masked_cycles[index]),
                "held_by": _held(table, index),
            }
        )
    return {
        "samples": len(samples),
        "matched": samples.matched,
        "functions": [
            {
                "function": entry.function,
                "interrupts": entry.interrupts,
                "met": entry.met,
                "takeable": entry.takeable,
                "instructions": entry.instructions,
                "coverage": entry.fraction,
            }
            for entry in table.functions
        ],
        "masked_regions": [
            {
                "start": location_dict(region.start),
                "end": location_dict(region.end),
                "samples": region.samples,
                "longest_cycles": region.longest,
                "worst_ns": region.worst_value * ns_per_stamp,
                "worst_index": region.worst_index,
            }
            for region in table.regions
        ],
        "worst": rows,
        "by_delay": [
            {"delay_cycles": delay, "samples": count, "at": location_dict(at) if at else None}
            for delay, count, at in table.by_delay()
        ],
    }


def _functions_text(where):
    shown = where["functions"][:FUNCTIONS_SHOWN]
    parts = []
    for entry in shown:
        if entry["takeable"]:
            parts.append(
                f"{entry['function']} {entry['met']}/{entry['takeable']} "
                f"({entry['coverage']:.0%}; {entry['interrupts']} interrupts)"
            )
        else:
            parts.append(f"{entry['function']} {entry['met']} ({entry['interrupts']} interrupts)")
    more = len(where["functions"]) - len(shown)
    return ", ".join(parts) + (f", {more} more" if more > 0 else "")


def _region_text(region):
    return (
        f"{location_text(region['start'])} .. {location_text(region['end'])}: "
        f"{region['samples']} samples, stretches up to {region['longest_cycles']} cycles, "
        f"worst {region['worst_ns']:.1f} ns (sample {region['worst_index']})"
    )


def _worst_text(entry):
    at = location_text(entry["at"]) if entry["at"] else "no interrupt found"
    held = entry["held_by"]
    masked = (
        f", masked {entry['masked_cycles']} cycles by {location_text(held['start'])} .. "
        f"{location_text(held['end'])}"
        if held
        else ""
    )
    taken = f", taken after {entry['taken_cycles']} cycles" if entry["taken_cycles"] else ""
    return f"  #{entry['rank']} {entry['ns']:.1f} ns: met {at}{taken}{masked}"


class WhereMet(TableSection):
    """Where the interrupts met the code (simulation, with the ground-truth log)."""

    title = "Where the interrupts met the code"
    csv_columns = ["where_matched", "where_worst_at", "where_worst_held_by"]

    def fields(self, name, table, context):
        where = (context.get("where") or {}).get("tables", {}).get(name)
        if where is None:
            return {"where": None}
        ns_per_stamp = 1e9 / table.stamp_hz
        return {"where": _table_fields(where, context["worst"].get(name) or [], ns_per_stamp)}

    def shown(self, document):
        return document.get("where") is not None

    def intro(self, document):
        run = document["where"]
        if run["error"]:
            return f"where the interrupts met the code: {run['error']}"
        return (
            f"where the interrupts met the code (ground truth {run['log']}, firmware "
            f"{Path(run['firmware']).name}: the instruction the CPU's interrupt for each IRQ "
            f"edge returned to; coverage: distinct instructions met / the function's that an "
            f"interrupt could meet in the run):"
        )

    def lines(self, row):
        where = row.get("where")
        if not where:
            return []
        lines = [
            f"{row['name']}: interrupts of {where['matched']} of {where['samples']} samples "
            f"found; met {_functions_text(where)}"
        ]
        lines += [_worst_text(entry) for entry in where["worst"]]
        worst_delays = [
            entry["delay_cycles"] for entry in row.get("by_delay") or [] if entry["worst"]
        ]
        met = {entry["delay_cycles"]: entry["at"] for entry in where["by_delay"]}
        if worst_delays:
            lines.append(
                "  worst delays: "
                + "; ".join(
                    f"{delay} cycles: {location_text(met[delay]) if met.get(delay) else '-'}"
                    for delay in worst_delays
                )
            )
        lines += [f"  masked: {_region_text(region)}" for region in where["masked_regions"][:3]]
        more = len(where["masked_regions"]) - 3
        if more > 0:
            lines.append(f"  masked: {more} more regions")
        return lines

    def blocks(self, row):
        where = row.get("where")
        if not where:
            return []
        blocks = [Paragraph(self.lines(row)[0])]
        if where["worst"]:
            blocks.append(
                Grid(
                    ["#", "latency (ns)", "met", "taken after (cycles)", "masked (cycles)", "by"],
                    [
                        [
                            str(entry["rank"]),
                            f"{entry['ns']:.1f}",
                            location_text(entry["at"]) if entry["at"] else "–",
                            str(entry["taken_cycles"] or "–"),
                            str(entry["masked_cycles"]),
                            f"{location_text(entry['held_by']['start'])} .. "
                            f"{location_text(entry['held_by']['end'])}"
                            if entry["held_by"]
                            else "",
                        ]
                        for entry in where["worst"]
                    ],
                    numeric={0, 1, 3, 4},
                    name="where",
                )
            )
        if where["masked_regions"]:
            blocks.append(
                Grid(
                    ["masked from", "to", "samples", "longest (cycles)", "worst (ns)"],
                    [
                        [
                            location_text(region["start"]),
                            location_text(region["end"]),
                            str(region["samples"]),
                            str(region["longest_cycles"]),
                            f"{region['worst_ns']:.1f}",
                        ]
                        for region in where["masked_regions"]
                    ],
                    numeric={2, 3, 4},
                    name="where",
                )
            )
        return blocks

    def csv_cells(self, row):
        where = row.get("where")
        if not where:
            return [None, None, None]
        first = where["worst"][0] if where["worst"] else None
        held = first["held_by"] if first else None
        return [
            where["matched"],
            location_text(first["at"]) if first and first["at"] else None,
            location_text(held["start"]) if held else None,
        ]
