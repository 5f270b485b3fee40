"""The results document of a capture: one JSON-ready dict that holds everything a reader
needs (schema in ``docs/results-schema.md``, field ``version`` = :data:`SCHEMA_VERSION`):
the run (device, clock and resolution, IRQ generator, suite/firmware settings, duration,
losses and resyncs) and one row per sample table: its statistics and its sections
(:data:`TABLE_SECTIONS`). The formats (:mod:`latscope.report.formats`) only write that dict,
so every output agrees.

:func:`load_tables` analyses a capture file in bounded memory, whatever its length
(:func:`latscope.analysis.summary.analyze_capture`); :func:`results` makes the document.
"""

from contextlib import nullcontext
from pathlib import Path

from latscope_defs.protocol import HoleCount

from ..analysis.loop import loop_events, loop_table, tables_with_loop
from ..analysis.statistics import PERCENTILES, TableAccumulator, ci_key
from ..analysis.summary import CaptureSummary, analyze_capture
from ..analysis.worst import CONTEXT_MARGIN_S
from ..capture.batches import CaptureBatches
from ..capture.conditions import Conditions
from ..capture.file import Capture, file_notes
from ..progress import step
from ..version import __version__
from .columns import STAT_COLUMNS
from .delay_sweep import DelaySweep
from .tail_estimates import TailEstimates
from .where_met import WhereMet, where_context
from .worst_samples import WorstSamples

__all__ = [
    "SCHEMA_VERSION",
    "SCHEMA_FILE",
    "TABLE_SECTIONS",
    "results",
    "load_tables",
    "run_info",
    "table_row",
    "describe",
]

#: Version of the results document (docs/results-schema.md): 2 added holes and the pairs
#: they discarded; 3 the percentile rule (null below its sample count) with confidence
#: intervals, and per table its flagged samples and worst samples; 4 how exact the hole
#: counts are, device resets, old segments and the file reader's notes; 5 per table its tail
#: estimate (``tail``); 6 per table the samples damage took (``lost``, ``lost_estimated``);
#: 7 whether the capture file was closed (``integrity.closed``); 8 the load and cache
#: conditions (``conditions``, top level and per table); 9 per table the latency by IRQ
#: trigger delay (``by_delay``); 10 where the interrupts met the code (``where``, top level
#: and per table: simulation with its ground-truth log); 11 the tests the capture ended
#: inside (``integrity.unfinished_tests``).
SCHEMA_VERSION = 12

#: The JSON Schema of the document (draft 2020-12): the types, the required fields and no
#: others; docs/results-schema.md says what they mean, tests/host/test_results_schema.py
#: validates every document the tests make against it. Installed with the package.
SCHEMA_FILE = Path(__file__).with_name("results.schema.json")

#: The sections of every table's row after its statistics, in order
#: (:class:`latscope.report.section.TableSection`). A new section: one line here.
TABLE_SECTIONS = [WorstSamples(), TailEstimates(), DelaySweep(), WhereMet()]

#: What each test family measures (table name prefix -> description), for readers.
DESCRIPTIONS = {
    "IL": "Interrupt latency: IRQ edge at the DUT's pin to the handler's entry marker "
    "(after its prologue)",
    "ILH": "Interrupt latency: IRQ edge at the DUT's pin to the first instruction of the "
    "handler (the kernel's marker just before it calls the handler)",
    "IDL": "Interrupt dispatch latency: end of the ISR to the first instruction of the "
    "thread it made ready",
    "TSL": "Thread switch latency: a thread yields to the next of N equal-priority threads",
    "TF": "Thread create / delete",
    "SEO": "Semaphore and mutex operations",
    "MQ": "Message queue: send to a blocked receiver until it runs",
    "CLK": "Clock ISR: fixed work interrupted (or not) by the system tick",
    "LOOP": "IRQ loop (no latscope code on the DUT): IRQ edge at the DUT's pin to the change "
    "of the GPIO its handler toggles, read on an edge channel; includes the "
    "handler's own GPIO write",
}


def describe(name):
    return DESCRIPTIONS.get(name.split("-", 1)[0], "")


def load_tables(capture, loop=None, *, interval_s=60.0):
    """(``CaptureSummary``, ``{name: TableAccumulator}``) of a capture file path, read in
    bounded memory, or of a loaded ``Capture`` (its ``SampleTable`` turned into
    accumulators). The tables keep their maximum per ``interval_s`` seconds.

    ``loop``: the IRQ loop's edge channel (``EDGE2``; default: the capture metadata's
    ``loop``, which ``latscope capture --loop`` records): its ``LOOP-<channel>`` table
    (:mod:`latscope.analysis.loop`) comes first. From a file it is made of the events it needs
    (IRQ, loop channel, LOSS records: one more pass over the file)."""
    if not isinstance(capture, Capture):
        with step(f"analysing {capture}"):
            summary, tables = analyze_capture(capture, interval_s=interval_s)
        loop = loop or summary.metadata.get("loop")
        if not loop:
            return summary, tables
        with step(f"pairing the IRQ loop {loop} of {capture}"):
            events = loop_events(CaptureBatches(capture), loop)
        table = loop_table(events, summary.stamp_hz, loop)
        interval = max(1, int(interval_s * summary.stamp_hz)) if interval_s else None
        return summary, {
            table.name: TableAccumulator.of_table(table, interval_stamps=interval),
            **tables,
        }
    from ..analysis.pairing import loaded_analysis

    interval = max(1, int(interval_s * capture.stamp_hz)) if interval_s else None
    analysis = loaded_analysis(capture)
    tables = tables_with_loop(
        capture.events,
        capture.stamp_hz,
        {name: collector.table() for name, collector in analysis.ordered_tables().items()},
        loop or capture.metadata.get("loop"),
    )
    return CaptureSummary.of_capture(capture, unfinished=analysis.unfinished), {
        name: TableAccumulator.of_table(table, interval_stamps=interval)
        for name, table in tables.items()
    }


def _holes(capture):
    """The holes of a capture as JSON rows (docs/results-schema.md, ``integrity.holes``)."""
    hz = capture.stamp_hz
    origin = capture.first_stamp or 0
    return [
        {
            "index": hole.index,
            "stamp": hole.stamp,
            "after": hole.after,
            "time_s": (hole.stamp - origin) / hz if hz else None,
            "events_lost_at_most": hole.lost,
            "events_lost": hole.count_text,
            "device_restart": hole.restart,
        }
        for hole in capture.holes
    ]


def _integrity(capture, tables):
    parser, file = capture.parser_stats, capture.file_stats
    lost = capture.device_losses
    holes = _holes(capture)
    return {
        "lost_events": sum(lost.values()),
        "lost_by_source": lost,
        "holes": len(holes),
        "hole_events_lost_at_most": sum(hole["events_lost_at_most"] for hole in holes),
        "hole_list": holes,
        "pairs_discarded": sum(table.discarded for table in tables.values()),
        "pairs_discarded_by_holes": sum(table.discarded_by_holes for table in tables.values()),
        "records_dropped": parser.records_dropped,
        "segments_ok": parser.segments_ok,
        "segments_bad": parser.segments_bad,
        "bytes_skipped": parser.bytes_skipped + file.bytes_skipped,
        "file_gaps": file.gaps,
        "chunks_bad": file.chunks_bad,
        "truncated_bytes": file.truncated_bytes,
        "holes_not_exact": sum(hole.kind != HoleCount.EXACT for hole in capture.holes),
        "holes_unbounded": sum(hole.kind == HoleCount.AT_LEAST for hole in capture.holes),
        "device_resets": parser.resets,
        "segments_old": parser.segments_old,
        "records_old": parser.records_old,
        "notes": file_notes(file),
        "closed": file.complete,
        "unfinished_tests": capture.unfinished,
    }


def run_info(capture, tables=None):
    """The run's description from the capture's metadata, END chunk and reading stats
    (``capture``: a ``CaptureSummary`` or a ``Capture``)."""
    if isinstance(capture, Capture):
        capture = CaptureSummary.of_capture(capture)
    meta = capture.metadata
    clock_hz = capture.clock_hz
    device = capture.identity.as_dict()
    if clock_hz:
        device["resolution_ns"] = 1e9 / capture.stamp_hz
    # The loop calibration the capture applied (docs/capture-format.md; null: none).
    device["calibration"] = meta.get("calibration")
    irq = dict(meta.get("irq") or {})
    if irq and clock_hz:
        # IRQ settings count the clock the IRQ generator runs on: the link clock.
        irq_clock_hz = capture.identity.irq_clock_hz
        for key in ("period", "width"):
            if irq.get(key) is not None:  # the metadata may hold null
                irq[f"{key}_ns"] = irq[key] * 1e9 / irq_clock_hz
    known = {
        "identity",
        "irq",
        "start_time",
        "port",
        "test_info",
        "suite",
        "firmware",
        "cpu",
        "conditions",
        "truth",
        "calibration",
    }
    suite = meta.get("suite") or meta.get("firmware")
    if meta.get("cpu"):
        suite = {"cpu": meta["cpu"], **(suite if isinstance(suite, dict) else {})}
    return {
        "capture": {
            "path": str(capture.path),
            "start_time": meta.get("start_time"),
            "port": meta.get("port"),
            "test_info": meta.get("test_info") or "",
            "complete": capture.file_stats.complete,
            "other": {k: v for k, v in meta.items() if k not in known},
        },
        "device": device,
        "irq": irq or None,
        "suite": suite or None,
        "conditions": Conditions.of_metadata(meta).as_dict(),
        "duration_s": capture.duration_s,
        "events": capture.event_count,
        "tick_markers": capture.tick_markers,
        "integrity": _integrity(capture, tables or {}),
        "device_status": (capture.end or {}).get("stats", {}).get("device_status")
        if isinstance((capture.end or {}).get("stats"), dict)
        else None,
    }


def table_row(name, table, context, sections=TABLE_SECTIONS):
    """One table's JSON row: name, description, parameters, statistics (ns), then the fields
    of every section of ``sections`` (``context``: see
    :meth:`latscope.report.section.TableSection.fields`)."""
    if not isinstance(table, TableAccumulator):
        table = TableAccumulator.of_table(table)
    stats = table.stats()
    row = {
        "name": name,
        "description": describe(name),
        "parameters": dict(table.parameters),
        # Each table carries what it was measured under (the same for all of a run's).
        "conditions": context["run"]["conditions"],
    }
    for key, _, _ in STAT_COLUMNS:
        row[key] = stats.get(key)
    row["lost_estimated"] = stats.get("lost_estimated")
    for key, _, _ in PERCENTILES:
        row[ci_key(key)] = stats.get(ci_key(key))
    for section in sections:
        row.update(section.fields(name, table, context))
    return rounded_ns(row)


#: Decimals of every nanosecond value of the results (0.01 ns): far below any board's
#: resolution, and without the float noise of an interpolated percentile (2172.3200000002).
NS_DECIMALS = 2


def rounded_ns(value, key=""):
    """``value`` with every float under a key ending in ``_ns`` (also in lists and nested
    dicts) rounded to :data:`NS_DECIMALS`."""
    if isinstance(value, dict):
        return {k: rounded_ns(v, k) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [rounded_ns(v, key) for v in value]
    if isinstance(value, float) and key.endswith("_ns"):
        return round(value, NS_DECIMALS)
    return value


def results(capture, tables, worst=None, *, tails=True):
    """The results document (docs/results-schema.md) of a ``CaptureSummary`` or
    ``Capture`` and its tables (``TableAccumulator`` or ``SampleTable``); ``worst``: their
    worst samples (:func:`latscope.report.worst_samples.worst_of`), if looked for. A
    capture with its ground-truth log (simulation) says where its interrupts met the code
    (:func:`latscope.report.where_met.where_context`: the capture is read whole once more).
    ``tails`` False: no table has its ``tail`` field, for an output that does not show it
    (the text summary): the estimates import scipy.stats, about 1.2 CPU s."""
    sections = [s for s in TABLE_SECTIONS if tails or not isinstance(s, TailEstimates)]
    run = run_info(capture, tables)
    where = where_context(capture, list(tables))
    context = {"run": run, "worst": worst or {}, "where": where}
    # Its own progress line (tests/system/test_first_hour.py): the tail estimates take over a
    # second, scipy.stats' import most of it.
    with step("the tables' tail estimates") if tails else nullcontext():
        rows = [table_row(name, table, context, sections) for name, table in tables.items()]
    return {
        "schema": "latscope-results",
        "version": SCHEMA_VERSION,
        "generator": f"latscope {__version__}",
        **run,
        "worst_context_s": CONTEXT_MARGIN_S,
        "where": where["run"] if where else None,
        "tables": rows,
    }
