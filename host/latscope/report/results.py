"""Reports of a capture: one results document, written as JSON, CSV, Markdown and HTML.

:func:`load_tables` analyses a capture file in bounded memory, whatever its length
(:func:`latscope.analysis.summary.analyze_capture`). :func:`results` gathers everything a
reader needs into one JSON-ready dict (schema in ``docs/results-schema.md``, field
``version`` = :data:`SCHEMA_VERSION`): the run (device, clock and resolution, IRQ
generator, suite/firmware settings, duration, losses and resyncs) and one row of
statistics per sample table. The writers only format that dict, so the four files always
agree. :func:`write_report` writes them all, with the figures of
:mod:`latscope.report.plots` (PNG and SVG files; the HTML embeds the PNGs and needs nothing else).
"""

import base64
import csv
import html
import io
import json
from pathlib import Path

from ..analysis.loop import loop_events, loop_table, tables_with_loop
from ..analysis.statistics import CONFIDENCE, PERCENTILES, TableAccumulator, ci_key
from ..analysis.summary import CaptureSummary, analyze_capture
from ..analysis.worst import CONTEXT_MARGIN_S, WORST_SHOWN, events_text, flags_text, worst_samples
from ..capture.batches import CaptureBatches
from ..capture.file import Capture
from ..link.identity import Identity
from ..version import __version__
from . import plots

__all__ = ["SCHEMA_VERSION", "STAT_COLUMNS", "CI_COLUMNS", "REPORT_FILES", "results",
           "load_tables", "statistics_note", "text_table", "integrity_line", "holes_text",
           "write_json", "csv_text", "write_csv", "worst_of", "worst_text", "flags_line",
           "worst_csv_text", "write_markdown", "write_html", "write_report"]

#: Version of the results document (docs/results-schema.md): 2 added holes and the pairs
#: they discarded; 3 the percentile rule (null below its sample count) with confidence
#: intervals, and per table its flagged samples and worst samples.
SCHEMA_VERSION = 3
#: Holes listed one by one in text output (JSON lists them all).
HOLES_SHOWN = 10

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
]

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


#: CSV columns of the percentiles' confidence intervals: (column, row key, 0 low / 1 high).
CI_COLUMNS = [(ci_key(key).replace("_ci_ns", f"_ci_{end}_ns"), ci_key(key), side)
              for key, _, _ in PERCENTILES for side, end in enumerate(("low", "high"))]


def statistics_note():
    """The percentile rule in one line, for every output that shows percentiles."""
    titles = {key: title.removesuffix(" (ns)") for key, title, _ in STAT_COLUMNS}
    rule = ", ".join(f"{titles[key]} from {fewest} samples" for key, _, fewest in PERCENTILES)
    return (f"percentiles only where the sample count supports them: {rule} (–: fewer); "
            f"each with a distribution-free {CONFIDENCE:.0%} confidence interval from order "
            f"statistics in results.json / results.csv")


def _interval(row, key):
    """A percentile's confidence interval as text: "[low, high]" (ns); an open end (the
    samples do not reach it) as "< min" or "> max"."""
    ci = row.get(ci_key(key))
    if not ci:
        return "–"
    low = "< min" if ci[0] is None else f"{ci[0]:.1f}"
    high = "> max" if ci[1] is None else f"{ci[1]:.1f}"
    return f"[{low}, {high}]"


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
        summary, tables = analyze_capture(capture, interval_s=interval_s)
        loop = loop or summary.metadata.get("loop")
        if not loop:
            return summary, tables
        events = loop_events(CaptureBatches(capture), loop)
        table = loop_table(events, summary.stamp_hz, loop)
        interval = max(1, int(interval_s * summary.stamp_hz)) if interval_s else None
        return summary, {table.name: TableAccumulator.of_table(table, interval_stamps=interval),
                         **tables}
    from ..analysis.pairing import analyze
    interval = max(1, int(interval_s * capture.stamp_hz)) if interval_s else None
    tables = tables_with_loop(capture.events, capture.stamp_hz,
                              analyze(capture.events, capture.stamp_hz),
                              loop or capture.metadata.get("loop"))
    return CaptureSummary.of_capture(capture), {
        name: TableAccumulator.of_table(table, interval_stamps=interval)
        for name, table in tables.items()}


def _holes(capture):
    """The holes of a capture as JSON rows (docs/results-schema.md, ``integrity.holes``)."""
    hz = capture.stamp_hz
    origin = capture.first_stamp or 0
    return [{"index": hole.index, "stamp": hole.stamp, "after": hole.after,
             "time_s": (hole.stamp - origin) / hz if hz else None,
             "events_lost_at_most": hole.lost} for hole in capture.holes]


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
    }


def integrity_line(integrity):
    """One line on what was lost: "nothing lost: ..." only when nothing was, else "DATA
    LOST: " and every kind of loss that happened, with its count."""
    damage = {"events lost in the device (FIFO full)": integrity["lost_events"],
              "hole(s)": integrity["holes"], "resyncs": integrity["segments_bad"],
              "records dropped": integrity["records_dropped"],
              "file gaps": integrity["file_gaps"], "damaged chunks": integrity["chunks_bad"],
              "truncated bytes": integrity["truncated_bytes"]}
    if not any(damage.values()):
        return (f"nothing lost: 0 events lost, 0 holes, 0 resyncs, "
                f"{integrity['bytes_skipped']} bytes skipped")
    parts = []
    for what, count in damage.items():
        if count and what == "hole(s)":
            parts.append(f"{count} hole(s) where at most "
                         f"{integrity['hole_events_lost_at_most']} events are missing")
        elif count:
            parts.append(f"{count} {what}")
    return (f"DATA LOST: {', '.join(parts)}; {integrity['pairs_discarded']} pairs discarded "
            f"({integrity['pairs_discarded_by_holes']} by holes)")


def holes_text(integrity, limit=HOLES_SHOWN):
    """The holes, one line each (the first ``limit``)."""
    lines = []
    for hole in integrity["hole_list"][:limit]:
        when = f" (t = {hole['time_s']:.6f} s)" if hole["time_s"] is not None else ""
        after = "the start" if hole["after"] is None else f"stamp {hole['after']}"
        lines.append(f"  hole after {after} until stamp {hole['stamp']}{when}: at most "
                     f"{hole['events_lost_at_most']} events missing")
    if len(integrity["hole_list"]) > limit:
        lines.append(f"  ... and {len(integrity['hole_list']) - limit} more holes")
    return "\n".join(lines)


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
    irq = dict(meta.get("irq") or {})
    if irq and clock_hz:
        # IRQ settings count the clock the IRQ generator runs on: the link clock.
        irq_clock_hz = capture.identity.irq_clock_hz
        for key in ("period", "width"):
            if key in irq:
                irq[f"{key}_ns"] = irq[key] * 1e9 / irq_clock_hz
    known = {"identity", "irq", "start_time", "port", "test_info", "suite", "firmware", "cpu"}
    suite = meta.get("suite") or meta.get("firmware")
    if meta.get("cpu"):
        suite = {"cpu": meta["cpu"], **(suite if isinstance(suite, dict) else {})}
    return {
        "capture": {"path": str(capture.path), "start_time": meta.get("start_time"),
                    "port": meta.get("port"), "test_info": meta.get("test_info") or "",
                    "complete": capture.file_stats.complete,
                    "other": {k: v for k, v in meta.items() if k not in known}},
        "device": device,
        "irq": irq or None,
        "suite": suite or None,
        "duration_s": capture.duration_s,
        "events": capture.event_count,
        "tick_markers": capture.tick_markers,
        "integrity": _integrity(capture, tables or {}),
        "device_status": (capture.end or {}).get("stats", {}).get("device_status")
        if isinstance((capture.end or {}).get("stats"), dict) else None,
    }


def table_row(name, table, worst=None, *, ticks_recorded=True):
    """One table's JSON row: name, description, parameters, statistics (ns), the flagged
    samples (``TableAccumulator.flags``) and the worst samples ``worst`` (as
    :func:`latscope.analysis.worst.worst_samples` gives them; None: not looked for).
    ``ticks_recorded`` False (the capture holds no tick marker): the tick flags are None,
    not recorded, rather than 0 (none of the samples overlapped a tick)."""
    if not isinstance(table, TableAccumulator):
        table = TableAccumulator.of_table(table)
    stats = table.stats()
    row = {"name": name, "description": describe(name), "parameters": dict(table.parameters)}
    for key, _, _ in STAT_COLUMNS:
        row[key] = stats.get(key)
    for key, _, _ in PERCENTILES:
        row[ci_key(key)] = stats.get(ci_key(key))
    row["flags"] = table.flags()
    row["worst"] = [{key: entry[key] for key in WORST_KEYS if key in entry}
                    for entry in (worst or [])]
    if not ticks_recorded:
        row["flags"]["tick"] = None
        for entry in row["worst"]:
            entry["tick"] = None
    return row


#: Fields of a worst sample in the results document, in order (docs/results-schema.md).
WORST_KEYS = ("rank", "index", "start", "end", "time_s", "ns", "cold", "tick", "events",
              "events_omitted", "export")


def results(capture, tables, worst=None):
    """The results document (docs/results-schema.md) of a ``CaptureSummary`` or
    ``Capture`` and its tables (``TableAccumulator`` or ``SampleTable``); ``worst``: their
    worst samples (:func:`latscope.analysis.worst.worst_samples`), if looked for."""
    worst = worst or {}
    run = run_info(capture, tables)
    return {"schema": "latscope-results", "version": SCHEMA_VERSION,
            "generator": f"latscope {__version__}", **run,
            "worst_context_s": CONTEXT_MARGIN_S,
            "tables": [table_row(name, table, worst.get(name),
                                 ticks_recorded=run["tick_markers"] > 0)
                       for name, table in tables.items()]}


def worst_of(capture, summary, tables, n=WORST_SHOWN):
    """:func:`latscope.analysis.worst.worst_samples` of the ``summary`` and ``tables`` that
    :func:`load_tables` gave for ``capture`` (the path or ``Capture`` given to it); times
    from the capture's first event. ``n`` 0: none."""
    if not n:
        return {}
    return worst_samples(capture, tables, n, first_stamp=summary.first_stamp)


#: What the reports say of the tick flags when the capture holds no tick marker.
TICKS_NOT_RECORDED = "not recorded by this DUT"


def flags_line(row):
    """What a table's flags are and what its statistics are without them, in one line."""
    flags, titles = row["flags"], {key: title for key, title, _ in STAT_COLUMNS}
    clean = flags["unflagged"]
    without = ", ".join(f"{titles[key].removesuffix(' (ns)')} {_cell(clean.get(key), '{:.1f}')}"
                        for key in ("max_ns", "p99_ns", "p999_ns"))
    tick = (f"{flags['tick']} tick" if flags["tick"] is not None
            else f"tick flags: {TICKS_NOT_RECORDED}")
    return (f"{row['name']}: {flags['flagged']} of {row['samples']} samples flagged "
            f"({flags['cold']} cold, {tick}); without them: "
            f"{clean['samples']} samples, {without} ns")


def worst_text(document, shown=None):
    """The worst samples of every table, for the terminal: per table its flags line, then
    per worst sample (the first ``shown``; None: all) its latency, place, flags and the
    events around it."""
    lines = [f"worst samples (flags: cold = the table's first sample, tick = the kernel's "
             f"tick overlaps it; events in ns from the sample's start, from "
             f"{document['worst_context_s'] * 1e6:g} us before to after it, the sample in "
             f"[brackets]; the maximum stays the real maximum):"]
    for row in document["tables"]:
        if not row["samples"]:
            continue
        lines.append(flags_line(row))
        for entry in row["worst"][:shown]:
            flags = flags_text(entry)
            lines.append(f"  #{entry['rank']} {entry['ns']:.1f} ns, sample {entry['index']} "
                         f"at {entry['time_s']:.6f} s{f' [{flags}]' if flags else ''}: "
                         f"{events_text(entry)}")
    return "\n".join(lines)


def _cell(value, fmt):
    return "–" if value is None else fmt.format(value)


def text_table(rows, *, name_title="test"):
    """A fixed-width text table of result rows (for the terminal)."""
    header = [name_title] + [title for _, title, _ in STAT_COLUMNS]
    lines = [[row["name"]] + [_cell(row.get(k), f) for k, _, f in STAT_COLUMNS]
             for row in rows]
    widths = [max(len(str(c)) for c in col) for col in zip(header, *lines)]
    out = ["  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in
                     enumerate(zip(header, widths)))]
    for line in lines:
        out.append("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in
                             enumerate(zip(line, widths))))
    return "\n".join(out)


def write_json(document, path):
    Path(path).write_text(json.dumps(document, indent=2) + "\n")


def csv_text(document):
    """The CSV of the tables: one row per table: name, test, n, the statistics (ns), then
    the percentiles' confidence intervals (empty: not reported, or open at that end)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["name", "test", "n"] + [key for key, _, _ in STAT_COLUMNS]
                    + [column for column, _, _ in CI_COLUMNS]
                    + ["flagged_cold", "flagged_tick", "flagged"]
                    + [f"unflagged_{key}" for key in FLAG_STATS])
    for row in document["tables"]:
        params = row["parameters"]
        intervals = [(row.get(key) or [None, None])[side] for _, key, side in CI_COLUMNS]
        flags = row["flags"]
        clean = [flags["unflagged"].get(key) for key in FLAG_STATS]
        writer.writerow([row["name"], params.get("test", ""), params.get("n", "")]
                        + ["" if row[k] is None else row[k] for k, _, _ in STAT_COLUMNS]
                        + ["" if value is None else value for value in intervals]
                        + ["" if value is None else value
                           for value in (flags["cold"], flags["tick"], flags["flagged"])]
                        + ["" if value is None else value for value in clean])
    return buffer.getvalue()


#: Statistics of the unflagged samples in results.csv (as ``unflagged_<key>``).
FLAG_STATS = ("samples", "max_ns", "p99_ns", "p999_ns")


def worst_csv_text(document):
    """The CSV of the worst samples: one row per worst sample of every table, its flags
    and its events in one cell (:func:`latscope.analysis.worst.events_text`)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["name", "rank", "index", "start", "end", "time_s", "latency_ns", "cold",
                     "tick", "events", "export"])
    for row in document["tables"]:
        for entry in row["worst"]:
            writer.writerow([row["name"], entry["rank"], entry["index"], entry["start"],
                             entry["end"], entry["time_s"], entry["ns"], int(entry["cold"]),
                             "" if entry["tick"] is None else int(entry["tick"]),
                             events_text(entry), entry.get("export") or ""])
    return buffer.getvalue()


def write_csv(document, path):
    """:func:`csv_text` into a file."""
    Path(path).write_text(csv_text(document))


def _ticks_cell(count):
    """The run's tick markers for the settings table."""
    if count is None:
        return None
    return (f"{count} (samples they lie in are flagged tick)" if count
            else f"none: tick flags {TICKS_NOT_RECORDED}")


def _settings_items(document):
    """(section, [(label, value)]) of the run description, shared by Markdown and HTML."""
    device, cap, integrity = document["device"], document["capture"], document["integrity"]
    clock = device.get("clock_hz")
    identity = Identity.from_dict(device)
    latency = ", ".join(f"{source.name.lower()} {identity.latency[source]}"
                        for source in identity.sources if source in identity.latency)
    sections = [
        ("Run", [("capture file", cap["path"]), ("started", cap["start_time"]),
                 ("device reached through", cap["port"]), ("test information", cap["test_info"]),
                 ("duration", f"{document['duration_s']:.6g} s (first to last event)"),
                 ("events", document["events"]),
                 ("kernel tick markers", _ticks_cell(document.get("tick_markers"))),
                 ("closed cleanly", "yes" if cap["complete"] else "no (capture was cut off)")]
         + [(key, json.dumps(value)) for key, value in cap["other"].items()]),
        ("Device", [("board", device.get("board")),
                    ("protocol version", device.get("version")),
                    ("capture clock", f"{clock / 1e6:g} MHz" if clock else None),
                    ("resolution", f"{device['resolution_ns']:g} ns"
                     if "resolution_ns" in device else None),
                    ("marker port", f"{device.get('marker_width')} bits"),
                    ("bus window", f"{device.get('bus_width')} bits"
                     if device.get("bus_width") else "no"),
                    ("FIFO", f"{device.get('fifo_depth')} entries"),
                    ("pin latency (cycles, corrected)", latency or "none")]),
    ]
    irq = document["irq"]
    if irq:
        items = [("enabled", "yes" if irq.get("enable", True) else "no")]
        for key in ("period", "width"):
            if key in irq:
                ns = f" = {irq[key + '_ns']:g} ns" if key + "_ns" in irq else ""
                items.append((key, f"{irq[key]} link cycles{ns}"))
        if "jitter_mask" in irq:
            items.append(("jitter", f"+0..{irq['jitter_mask']} link cycles per period"))
        items += [(k.replace("_", " "), "yes" if irq[k] else "no")
                  for k in ("one_shot", "active_low") if k in irq]
        sections.append(("IRQ generator", items))
    if document["suite"]:
        suite = document["suite"]
        items = list(suite.items()) if isinstance(suite, dict) else [("settings", suite)]
        sections.append(("Firmware / test suite", [(str(k), v) for k, v in items]))
    lost = ", ".join(f"{k.lower()} {v}" for k, v in integrity["lost_by_source"].items())
    sections.append(("Losses and resyncs", [
        ("summary", integrity_line(integrity)),
        ("events lost in the device (LOSS records)", f"{integrity['lost_events']}"
         + (f" ({lost})" if lost else "")),
        ("holes (stream data dropped or not verifiable)",
         f"{integrity['holes']}, at most {integrity['hole_events_lost_at_most']} events "
         f"missing" + ("".join(f"; after {'the start' if h['after'] is None else h['after']}"
                               f" until {h['stamp']}: at most {h['events_lost_at_most']}"
                               for h in integrity["hole_list"][:HOLES_SHOWN]))),
        ("pairs discarded (by holes)",
         f"{integrity['pairs_discarded']} ({integrity['pairs_discarded_by_holes']})"),
        ("records dropped (damaged or unclosed segments)", integrity["records_dropped"]),
        ("segments verified / bad (resyncs)",
         f"{integrity['segments_ok']} / {integrity['segments_bad']}"),
        ("stream bytes skipped", integrity["bytes_skipped"]),
        ("gaps in the capture file", integrity["file_gaps"]),
        ("damaged chunks / truncated bytes",
         f"{integrity['chunks_bad']} / {integrity['truncated_bytes']}")]))
    if document.get("device_status"):
        sections.append(("Device status at the end", list(document["device_status"].items())))
    return sections




def write_markdown(document, path, *, figure_dir=None, kinds=None):
    """Markdown: run description, summary table, per table its figures: ``kinds`` =
    ``{table: [figure kinds written]}`` in ``figure_dir``."""
    lines = [f"# latscope report: {Path(document['capture']['path']).name}", ""]
    for section, items in _settings_items(document):
        lines += [f"## {section}", "", "| | |", "| --- | --- |"]
        lines += [f"| {label} | {'' if value is None else value} |" for label, value in items]
        lines.append("")
    lines += ["## Results", "", "| test | " + " | ".join(t for _, t, _ in STAT_COLUMNS) + " |",
              "| --- |" + " ---: |" * len(STAT_COLUMNS)]
    for row in document["tables"]:
        lines.append(f"| {row['name']} | "
                     + " | ".join(_cell(row[k], f) for k, _, f in STAT_COLUMNS) + " |")
    if not document["tables"]:
        lines.append("\nNo test of the suite was found in this capture.")
    lines += ["", statistics_note().capitalize() + ".", ""]
    if any(row["samples"] for row in document["tables"]):
        lines += ["## Worst samples", "", "```", worst_text(document), "```", ""]
    if figure_dir is not None:
        for row in document["tables"]:
            lines += [f"### {row['name']}", "", row["description"], ""]
            for kind in (kinds or {}).get(row["name"], ()):
                stem = plots.figure_name(row["name"], kind)
                lines.append(f"![{row['name']} {kind}]({figure_dir}/{stem}.svg)")
            lines.append("")
    Path(path).write_text("\n".join(lines))


_CSS = """
body { font-family: sans-serif; max-width: 62em; margin: 1.5em auto; padding: 0 1em;
       color: #222; line-height: 1.35; }
h1 { font-size: 1.5em; border-bottom: 2px solid #446; padding-bottom: .2em; }
h2 { font-size: 1.2em; margin-top: 1.6em; color: #335; }
h3 { font-size: 1.05em; margin: 1.4em 0 .3em; }
table { border-collapse: collapse; margin: .4em 0 1em; font-size: .92em; }
th, td { border: 1px solid #ccd; padding: .25em .6em; }
th { background: #eef; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.settings { display: grid; grid-template-columns: repeat(auto-fit, minmax(26em, 1fr));
            gap: 0 1.5em; }
.settings th { font-weight: normal; color: #555; background: #f6f6fa; width: 45%; }
.note { color: #555; font-size: .9em; }
.test { border-top: 1px solid #ccd; margin-top: 1.5em; }
img { max-width: 100%; }
"""


def _html_table(header, rows, numeric_from=1, link_first=False):
    """A table; ``link_first``: the first column links to the section of that name."""
    out = ["<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>"]
    for row in rows:
        cells = [f"<td{' class=num' if i >= numeric_from else ''}>{html.escape(str(c))}</td>"
                 for i, c in enumerate(row)]
        if link_first:
            name = html.escape(str(row[0]))
            cells[0] = f"<td><a href='#{name}'>{name}</a></td>"
        out.append("<tr>" + "".join(cells) + "</tr>")
    return "\n".join(out) + "</table>"


def _html_worst(row):
    """A table's flags and its worst samples with the events around them."""
    out = [f"<p>{html.escape(flags_line(row))}</p>"]
    if not row["worst"]:
        return out[0]
    header = ["#", "latency (ns)", "sample", "time (s)", "flags", "events (ns from the "
              "sample's start; the sample in [brackets])", "PulseView"]
    out.append("<table class=worst><tr>" + "".join(f"<th>{html.escape(h)}</th>"
                                                  for h in header) + "</tr>")
    for entry in row["worst"]:
        export = entry.get("export")
        link = (f"<a href='{html.escape(export)}'>{html.escape(Path(export).name)}</a>"
                if export else "")
        cells = [str(entry["rank"]), f"{entry['ns']:.1f}", str(entry["index"]),
                 f"{entry['time_s']:.6f}", flags_text(entry), events_text(entry)]
        out.append("<tr>" + "".join(f"<td{' class=num' if n < 4 else ''}>{html.escape(c)}</td>"
                                    for n, c in enumerate(cells)) + f"<td>{link}</td></tr>")
    return "\n".join(out) + "</table>"


def write_html(document, path, *, figures=None):
    """One self-contained HTML file. ``figures``: ``{table name: {kind: base64 PNG}}``."""
    inline = figures or {}
    title = f"latscope report: {Path(document['capture']['path']).name}"
    body = [f"<h1>{html.escape(title)}</h1>",
            f"<p class=note>{html.escape(document['generator'])}, results schema version "
            f"{document['version']}. Latencies in nanoseconds, measured by the appliance's "
            f"time stamps (corrected for pin latency). A sample is exact or absent: pairs with "
            f"a loss between them are discarded and counted.</p>",
            "<h2>Run, device and settings</h2><div class=settings>"]
    for section, items in _settings_items(document):
        rows = "".join(f"<tr><th>{html.escape(str(label))}</th>"
                       f"<td>{html.escape('' if value is None else str(value))}</td></tr>"
                       for label, value in items)
        body.append(f"<div><h3>{html.escape(section)}</h3><table>{rows}</table></div>")
    body.append("</div><h2>Results</h2>")
    header = ["test"] + [t for _, t, _ in STAT_COLUMNS]
    rows = [[r["name"]] + [_cell(r[k], f) for k, _, f in STAT_COLUMNS]
            for r in document["tables"]]
    body.append(_html_table(header, rows, link_first=bool(inline)) if rows else
                "<p>No test of the suite was found in this capture.</p>")
    body.append(f"<p class=note>{html.escape(statistics_note().capitalize())}.</p>")
    for row in document["tables"]:
        params = row["parameters"]
        about = row["description"]
        if params:
            about += f" (test {params.get('test')}, N = {params.get('n')})"
        body.append(f"<section class=test id='{html.escape(row['name'])}'>"
                    f"<h3>{html.escape(row['name'])}</h3><p>{html.escape(about)}</p>")
        body.append(_html_table(["samples", "min (ns)", "max (ns)", "avg (ns)"],
                                [[_cell(row[k], f) for k, _, f in STAT_COLUMNS[:4]]],
                                numeric_from=0))
        body.append(_html_table(
            ["percentile", "value (ns)", f"{CONFIDENCE:.0%} interval (ns)", "samples"],
            [[title.removesuffix(" (ns)"), _cell(row[key], fmt), _interval(row, key),
              row["samples"]] for key, title, fmt in STAT_COLUMNS
             if key in {k for k, _, _ in PERCENTILES}]))
        if row["samples"]:
            body.append(_html_worst(row))
        for kind, png in (figures or {}).get(row["name"], {}).items():
            body.append(f"<img alt='{html.escape(row['name'])} {kind}' "
                        f"src='data:image/png;base64,{png}'>")
        body.append("</section>")
    page = (f"<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>\n<body>\n"
            + "\n".join(body) + "\n</body></html>\n")
    Path(path).write_text(page)


#: The files :func:`write_report` writes into its directory (and ``figures/``, ``worst/``).
REPORT_FILES = ("report.html", "report.md", "results.csv", "results.json", "worst.csv")

#: Runs at least this long get a maximum-per-minute figure per table by default.
LONG_RUN_S = 600.0


def export_worst(capture, document, directory, stamp_hz):
    """A PulseView window (``worst/<table>.<rank>.sr`` and its ``.pvs``) of every worst
    sample in ``document``: the events from ``worst_context_s`` before its start to as long
    after its end, with its test's context (the START and PARAM markers before the window,
    repeated at its first samples: ``export.files.export_capture``), so that the decoders
    pair it as in the whole capture. Notes each file in the sample's ``export`` (relative to
    ``directory``). ``capture``: a path (read once for all the windows:
    ``export.files.export_windows``) or a loaded ``Capture``."""
    from ..export.files import export_windows
    folder = Path(directory) / "worst"
    folder.mkdir(parents=True, exist_ok=True)
    margin = int(round(document["worst_context_s"] * stamp_hz))
    windows, entries = [], []
    for row in document["tables"]:
        for entry in row["worst"]:
            path = folder / f"{row['name']}.{entry['rank']}.sr"
            windows.append({"start": max(0, entry["start"] - margin),
                            "stop": entry["end"] + margin + 1, "sr": path})
            entries.append(entry)
    export_windows(capture, windows)
    for window, entry in zip(windows, entries):
        entry["export"] = f"worst/{window['sr'].name}"


def write_report(capture, directory, *, figures=True, x="index", interval_s=None, loop=None,
                 worst=WORST_SHOWN, exports=True):
    """Writes ``report.html``, ``report.md``, ``results.csv``, ``results.json``,
    ``worst.csv`` and (with ``figures``) ``figures/<table>.<kind>.{png,svg}`` into
    ``directory``. ``capture``: a path or a :class:`Capture`. ``interval_s``: add the
    maximum per interval of that many seconds (default: per minute for runs of
    :data:`LONG_RUN_S` or longer, else none). ``worst``: worst samples per table, with the
    events around them (0: none); ``exports``: and a PulseView window of each
    (:func:`export_worst`). Returns ``(document, {kind: path})``."""
    source = capture
    capture, tables = load_tables(source, loop, interval_s=interval_s or 60.0)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    document = results(capture, tables, worst_of(source, capture, tables, worst))
    if exports and worst:
        export_worst(source, document, directory, capture.stamp_hz)
    if interval_s is None and document["duration_s"] >= LONG_RUN_S:
        interval_s = 60.0
    paths = {"json": directory / "results.json", "csv": directory / "results.csv",
             "markdown": directory / "report.md", "html": directory / "report.html",
             "worst": directory / "worst.csv"}
    inline = {}
    if figures:
        figure_dir = directory / "figures"
        figure_dir.mkdir(exist_ok=True)
        for name, table in tables.items():
            if not table.count:
                continue                         # nothing to draw; the table says so
            inline[name] = {}
            for kind, figure in plots.table_figures(table, x=x,
                                                    interval_s=interval_s).items():
                stem = figure_dir / plots.figure_name(name, kind)
                plots.save(figure, stem, formats=("svg",))
                png = plots.png_bytes(figure)        # rendered once: file and inline copy
                stem.with_name(stem.name + ".png").write_bytes(png)
                inline[name][kind] = base64.b64encode(png).decode("ascii")
    write_json(document, paths["json"])
    write_csv(document, paths["csv"])
    paths["worst"].write_text(worst_csv_text(document))
    write_markdown(document, paths["markdown"], figure_dir="figures" if figures else None,
                   kinds={name: list(kinds) for name, kinds in inline.items()})
    write_html(document, paths["html"], figures=inline)
    return document, paths
