"""Reports, figures and comparisons of real captures: the test suite run natively
(``suite_capture``: host nanosecond stamps, encoded as the appliance's byte stream).

Every number the checks expect is computed here from ``analyze`` on the same capture, so a
report that misses, reorders or reformats a statistic fails."""

import csv
import io
import json
import re

import numpy as np
import pytest

from latscope.analysis.pairing import analyze
from latscope.analysis.worst import describe_event
from latscope.capture.file import load_capture
from latscope.cli import main
from latscope.report import compare, plots
from latscope.report.columns import STAT_COLUMNS
from latscope.report.directory import write_report
from latscope.report.headline import KINDS
from latscope.report.results import NS_DECIMALS, SCHEMA_VERSION, rounded_ns
from latscope_defs.markers import Test
from latscope_defs.protocol import Source
from support.suite_capture import native_suite_capture
from support.suite_tables import table_names

SAMPLES = 40


#: A few tests keep figures (about a second per table) fast; the whole suite runs once.
TESTS = "IL_A,TSL_A,CLOCK_ISR"
#: Their tables in the report's order (no ILH: the native build writes no handler marker).
TABLES = table_names([Test[name] for name in TESTS.split(",")], handler=False)


@pytest.fixture(scope="module")
def captures(tmp_path_factory):
    """Two runs of the same tests: same tables, different measured latencies."""
    directory = tmp_path_factory.mktemp("captures")
    paths = []
    for run in ("run1", "run2"):
        path = directory / f"{run}.lsc"
        native_suite_capture(path, SAMPLES, tests=TESTS)
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def whole_suite(tmp_path_factory):
    path = tmp_path_factory.mktemp("suite") / "suite.lsc"
    native_suite_capture(path, SAMPLES)
    return path


@pytest.fixture(scope="module")
def report(whole_suite, tmp_path_factory):
    """The report of the whole suite, figures only for ``TABLES``' tests (a capture of
    those tests alone would have the same figures)."""
    out = tmp_path_factory.mktemp("report")
    document, paths = write_report(whole_suite, out, figures=False)
    capture = load_capture(whole_suite)
    return document, paths, out, analyze(capture.events, capture.stamp_hz)


@pytest.fixture(scope="module")
def figure_report(captures, tmp_path_factory):
    out = tmp_path_factory.mktemp("figures")
    document, paths = write_report(captures[0], out)
    capture = load_capture(captures[0])
    return document, paths, out, analyze(capture.events, capture.stamp_hz)


def test_json_matches_analysis(report):
    document, paths, _, tables = report
    assert json.loads(paths["json"].read_text()) == document
    assert document["schema"] == "latscope-results" and document["version"] == SCHEMA_VERSION
    assert [row["name"] for row in document["tables"]] == list(tables)
    assert len(tables) == 23  # every table of the suite
    for row in document["tables"]:
        stats = rounded_ns(tables[row["name"]].stats())  # to the document's 0.01 ns
        for key, _, _ in STAT_COLUMNS:
            assert row[key] == stats[key], (row["name"], key)
        assert row["parameters"] == tables[row["name"]].parameters
    assert document["device"]["clock_hz"] == 1_000_000_000
    assert document["device"]["resolution_ns"] == 1.0
    assert document["suite"]["samples"] == SAMPLES
    assert document["integrity"]["lost_events"] == 0
    assert document["capture"]["complete"] is True


def test_duration_and_events(report, whole_suite):
    document = report[0]
    capture = load_capture(whole_suite)
    stamps = capture.events.stamp.astype(np.int64)
    assert document["events"] == len(capture.events)
    assert document["duration_s"] == pytest.approx((stamps.max() - stamps.min()) / 1e9)


def test_half_cycle_stamps_of_a_ddr_board(tmp_path):
    """With stamp_shift 1 (DDR inputs) a stamp unit is half a clock cycle: latencies,
    resolution and duration halve; IRQ settings stay in whole cycles."""
    path = tmp_path / "ddr.lsc"
    native_suite_capture(path, 20, tests="IL_A", stamp_shift=1)
    capture = load_capture(path)
    assert capture.stamp_hz == 2 * capture.clock_hz
    document, _ = write_report(path, tmp_path / "report", figures=False)
    assert document["device"]["resolution_ns"] == 0.5
    il = next(row for row in document["tables"] if row["name"] == "IL-a-1")
    cycles = analyze(capture.events, capture.clock_hz)["IL-a-1"].stats()
    assert il["min_ns"] == cycles["min_ns"] / 2 and il["max_ns"] == cycles["max_ns"] / 2
    stamps = capture.events.stamp.astype(np.int64)
    assert document["duration_s"] == pytest.approx((stamps.max() - stamps.min()) / 2e9)
    assert document["irq"]["period_ns"] == 50 * 1e9 / capture.clock_hz


@pytest.mark.slow
def test_csv_markdown_html(figure_report):
    document, paths, out, tables = figure_report
    assert list(tables) == TABLES
    rows = list(csv.DictReader(paths["csv"].open()))
    assert [r["name"] for r in rows] == list(tables)
    for r in rows:
        assert int(r["samples"]) == len(tables[r["name"]].samples)
        assert float(r["max_ns"]) == tables[r["name"]].stats()["max_ns"]
    markdown = paths["markdown"].read_text()
    page = paths["html"].read_text()
    for name, table in tables.items():
        stats = table.stats()
        line = next(row for row in markdown.splitlines() if row.startswith(f"| {name} |"))
        assert f"{stats['avg_ns']:.1f}" in line and f"{stats['max_ns']:.1f}" in line
        assert f"<h3>{name}</h3>" in page
        for kind in ("timeseries", "overtime", "distribution", "exceedance"):
            for ext in ("png", "svg"):
                assert (out / "figures" / f"{name}.{kind}.{ext}").stat().st_size > 1000
    # A CDF of each kind's tables (IL, IDL, TSL: those of the capture).
    families = [kind for kind, _ in KINDS if any(n.startswith(f"{kind}-") for n in tables)]
    assert families == ["IL", "IDL", "TSL"]
    for kind in families:
        assert (out / "figures" / f"{kind}.cdf.png").stat().st_size > 1000
        assert f"<img alt='{kind} cdf'" in page
        assert f"![{kind} cdf](figures/{kind}.cdf.svg)" in markdown
    # Self-contained: four inline PNGs per table and the CDFs, nothing loaded from elsewhere.
    assert page.count("src='data:image/png;base64,") == 4 * len(tables) + len(families)
    # (The only links out: the worst samples' PulseView files, beside the report.)
    assert not re.search(r"""src=['"](?!data:)|href=['"](?!#|worst/[^'"/]+\.sr['"])""", page)
    assert "native host port" in page and "1000 MHz" in page


def test_tick_histogram_on_real_samples(report):
    tables = report[3]
    for name in ("IL-a-1", "CLK-a-1"):
        samples = tables[name].samples
        edges, counts, width = plots.tick_histogram(samples)
        assert counts.sum() == len(samples) and len(counts) <= plots.MAX_BINS
        assert np.all(np.diff(edges) == width) and edges[0] == samples.min()
        # Each sample in the bin of whole ticks that holds it.
        expected = np.array(
            [np.count_nonzero((samples >= lo) & (samples < lo + width)) for lo in edges[:-1]]
        )
        assert np.array_equal(counts, expected)


def test_report_cli_json_and_errors(whole_suite, tmp_path, capsys):
    assert (
        main(["report", str(whole_suite), "-o", str(tmp_path / "r"), "--no-figures", "--json"]) == 0
    )
    document = json.loads(capsys.readouterr().out)
    assert len(document["tables"]) == 23
    assert not (tmp_path / "r" / "figures").exists()
    bad = tmp_path / "bad.lsc"
    bad.write_bytes(b"not a latscope capture file")
    assert main(["report", str(bad), "-o", str(tmp_path / "r2")]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and str(bad) in error and "byte 0" in error


def test_every_result_printing_command_has_json(whole_suite, tmp_path, capsys):
    capture = load_capture(whole_suite)
    assert main(["dump", str(whole_suite), "--json", "--limit", "3"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(event["stamp"], event["source"]) for event in lines] == [
        (int(stamp), Source(source).name)
        for stamp, source in zip(capture.events.stamp[:3], capture.events.source[:3])
    ]
    assert all(e["event"] == describe_event(Source[e["source"]], e["value"]) for e in lines)
    # The CSV and the text name the stamp and the event as the JSON does.
    assert main(["dump", str(whole_suite), "--csv", "--source", "marker", "--limit", "3"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert list(rows[0]) == ["stamp", "time_ns", "source", "value", "event"]
    markers = capture.events.of(Source.MARKER)
    assert [(int(r["stamp"]), r["event"]) for r in rows] == [
        (int(stamp), describe_event(Source.MARKER, int(value)))
        for stamp, value in zip(markers.stamp[:3], markers.value[:3])
    ]
    assert main(["dump", str(whole_suite), "--source", "marker", "--limit", "1"]) == 0
    assert capsys.readouterr().out.rstrip().endswith(rows[0]["event"])
    assert main(["analyze", str(whole_suite), "--json"]) == 0
    by_flag = json.loads(capsys.readouterr().out)
    assert main(["analyze", str(whole_suite), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == by_flag
    # CSV on stdout: the rows of report's results.csv, no file written on the way.
    assert main(["analyze", str(whole_suite), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [row["name"] for row in rows] == [table["name"] for table in by_flag["tables"]]
    assert [int(row["samples"]) for row in rows] == [t["samples"] for t in by_flag["tables"]]
    vcd = tmp_path / "part.vcd"
    assert (
        main(
            [
                "export",
                str(whole_suite),
                "--vcd",
                str(vcd),
                "--json",
                "--stop",
                str(int(capture.events.stamp[100])),
            ]
        )
        == 0
    )
    written = json.loads(capsys.readouterr().out)
    assert written["files"] == [str(vcd)] and written["samplerate"] == capture.stamp_hz


@pytest.mark.slow
def test_compare(captures, tmp_path, capsys):
    runs = compare.load_runs(captures, ["A", "B"])
    document = compare.comparison(runs)
    assert [r["label"] for r in document["runs"]] == ["A", "B"]
    for table in document["tables"]:
        a, b = table["runs"]
        assert a["present"] and b["present"] and "diff" not in a
        for key in compare.COMPARED:
            if a["stats"][key] is None:  # a percentile not reported
                assert b["diff"][key] is None
                continue
            assert b["diff"][key] == pytest.approx(b["stats"][key] - a["stats"][key])
    assert main(["compare", *map(str, captures), "--json", "-o", str(tmp_path)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [table["name"] for table in printed["tables"]] == TABLES
    assert (tmp_path / "IL-a-1.compare.png").exists()
    assert (tmp_path / "comparison.json").exists()
    assert main(["compare", *map(str, captures)]) == 0
    text = capsys.readouterr().out
    assert "IL-a-1" in text and "Δ" in text


@pytest.mark.slow
def test_maximum_per_interval(captures, tmp_path):
    """The max-per-interval figure's values: the largest sample of every interval, the
    same as the live statistics compute while capturing."""
    from latscope.analysis.live import live_analysis

    capture = load_capture(captures[0])
    table = analyze(capture.events, capture.stamp_hz)["IL-a-1"]
    interval = float(table.starts[-1] - table.starts[0]) / capture.stamp_hz / 5
    maxima = plots.interval_maxima(table, interval)
    live = live_analysis(capture.identity, interval)
    live.feed(capture.events)
    expected = live.finish().tables["IL-a-1"].interval_maxima_ns()
    assert len(maxima) == len(expected) >= 5
    assert np.array_equal(np.isnan(maxima), np.isnan(expected))
    assert np.allclose(maxima[~np.isnan(maxima)], expected[~np.isnan(expected)])
    assert np.nanmax(maxima) == table.stats()["max_ns"]
    assert (
        main(["report", str(captures[0]), "-o", str(tmp_path), "--max-interval", str(interval)])
        == 0
    )
    assert (tmp_path / "figures" / "IL-a-1.maxima.svg").exists()
    assert "IL-a-1.maxima.svg" in (tmp_path / "report.md").read_text()


@pytest.fixture(scope="module")
def il_capture(tmp_path_factory):
    """IL_A alone with 120 samples a table: p50 and p99 reported, p99.9 not."""
    path = tmp_path_factory.mktemp("il") / "il.lsc"
    native_suite_capture(path, 120, tests="IL_A")
    return path


def test_percentile_rule_in_every_output(il_capture, tmp_path, capsys):
    """The same rule (statistics.PERCENTILES) in JSON, CSV, text, Markdown, HTML and the
    comparison: a percentile below its sample count is null / empty / "–"."""
    document, paths = write_report(il_capture, tmp_path / "r", figures=False)
    row = next(r for r in document["tables"] if r["name"] == "IL-a-1")
    assert 120 <= row["samples"] < 1000
    ns = analyze(*(lambda c: (c.events, c.stamp_hz))(load_capture(il_capture)))["IL-a-1"].ns()
    assert row["p99_ns"] == round(np.percentile(ns, 99), NS_DECIMALS) and row["p999_ns"] is None
    assert row["p999_ci_ns"] is None and len(row["p99_ci_ns"]) == 2
    low, high = row["p99_ci_ns"]
    assert low <= row["p99_ns"] and (high is None or row["p99_ns"] <= high)
    line = next(r for r in csv.DictReader(paths["csv"].open()) if r["name"] == "IL-a-1")
    assert float(line["p99_ns"]) == row["p99_ns"] and line["p999_ns"] == ""
    assert float(line["p99_ci_low_ns"]) == low and line["p999_ci_low_ns"] == ""
    assert main(["analyze", str(il_capture), "--details"]) == 0
    text = capsys.readouterr().out
    cells = next(row for row in text.splitlines() if row.startswith("IL-a-1 ")).split()
    assert cells[7] == f"{row['p99_ns']:.1f}" and cells[8] == "–"
    assert "p99.9 from 1000 samples" in text
    assert main(["analyze", str(il_capture)]) == 0  # the summary: samples, min, max, avg, p99s
    text = capsys.readouterr().out
    cells = next(row for row in text.splitlines() if row.startswith("IL-a-1 ")).split()
    assert cells[5] == f"{row['p99_ns']:.1f}" and cells[6] == "–"
    assert "p99.9 from 1000 (–: fewer)" in text
    assert "p99.9 from 1000 samples" in paths["markdown"].read_text()
    page = paths["html"].read_text()
    assert "p99.9 from 1000 samples" in page and "<td>p99.9</td><td class=num>–</td>" in page
    runs = compare.load_runs([il_capture, il_capture], ["A", "B"])
    table = next(t for t in compare.comparison(runs)["tables"] if t["name"] == "IL-a-1")
    assert table["runs"][1]["stats"]["p999_ns"] is None
    assert table["runs"][1]["diff"]["p999_ns"] is None


def test_worst_samples_and_flags(il_capture, tmp_path, capsys):
    """The worst samples are the table's largest (ties: earliest), each with the events of
    the capture around it; the flags and the statistics without the flagged samples, in
    JSON, CSV, worst.csv and text. (Native captures have no tick markers: their tick flags
    are "not recorded", None; test_tick_flags_recorded_or_not has ticks.)"""
    from latscope.analysis.worst import CONTEXT_EVENTS, CONTEXT_MARGIN_S, describe_event

    document, paths = write_report(il_capture, tmp_path / "r", figures=False, worst=4)
    capture = load_capture(il_capture)
    tables = analyze(capture.events, capture.stamp_hz)
    stamps = capture.events.stamp.astype(np.int64)
    margin = round(CONTEXT_MARGIN_S * capture.stamp_hz)
    worst_rows = list(csv.DictReader(paths["worst"].open()))
    for row in document["tables"]:
        table = tables[row["name"]]
        order = sorted(range(len(table.samples)), key=lambda i: (-table.samples[i], i))[:4]
        assert [entry["index"] for entry in row["worst"]] == order
        assert row["worst"][0]["ns"] == row["max_ns"]
        for rank, entry in enumerate(row["worst"], 1):
            i = entry["index"]
            assert entry["rank"] == rank and entry["start"] == table.starts[i]
            assert entry["end"] - entry["start"] == table.samples[i]
            assert entry["cold"] == (i == 0) and entry["tick"] is None
            near = np.flatnonzero(
                (stamps >= entry["start"] - margin) & (stamps <= entry["end"] + margin)
            )
            # The nearest CONTEXT_EVENTS (distance 0 inside), in time order.
            distance = np.maximum(
                np.maximum(entry["start"] - stamps[near], stamps[near] - entry["end"]), 0
            )
            near = np.sort(near[np.argsort(distance, kind="stable")[:CONTEXT_EVENTS]])
            assert entry["events_omitted"] == max(0, len(distance) - CONTEXT_EVENTS)
            assert [(e["stamp"], e["event"]) for e in entry["events"]] == [
                (
                    int(stamps[k]),
                    describe_event(int(capture.events.source[k]), int(capture.events.value[k])),
                )
                for k in near
            ]
            inside = [e["offset_ns"] for e in entry["events"] if e["where"] == "inside"]
            assert inside[0] == 0 and inside[-1] == entry["ns"]  # its own two events
        clean = np.delete(table.ns(), 0)  # the cold one
        flags, unflagged = row["flags"], row["flags"]["unflagged"]
        assert (flags["cold"], flags["tick"], flags["flagged"]) == (1, None, 1)
        assert unflagged["samples"] == len(clean) and unflagged["max_ns"] == clean.max()
        assert unflagged["p99_ns"] == (
            round(np.percentile(clean, 99), NS_DECIMALS) if len(clean) >= 100 else None
        )
        listed = [r for r in worst_rows if r["name"] == row["name"]]
        assert [int(r["index"]) for r in listed] == order
        assert [int(r["cold"]) for r in listed] == [int(i == 0) for i in order]
    line = next(r for r in csv.DictReader(paths["csv"].open()) if r["name"] == "IL-a-1")
    assert line["flagged_cold"] == "1" and line["flagged_tick"] == ""
    assert document["tick_markers"] == 0 and {r["tick"] for r in worst_rows} == {""}
    assert main(["analyze", str(il_capture), "--worst", "2"]) == 0
    text = capsys.readouterr().out
    assert text.count("  #2 ") == len(document["tables"]) and "  #3 " not in text
    assert "IL-a-1: 1 of " in text and "(1 cold, tick flags: not recorded by this DUT)" in text
    assert main(["analyze", str(il_capture), "--worst", "0", "--json"]) == 0
    assert all(row["worst"] == [] for row in json.loads(capsys.readouterr().out)["tables"])


def test_a_table_section_reaches_every_format(il_capture, tmp_path):
    """A new per-table section is one class and one line in TABLE_SECTIONS: the document
    holds its fields and the formats that show tables show it without a change (here each
    table's largest sample in microseconds); a report holds the file of every format that
    has one, the format's text of the same document."""
    from latscope.report.formats import FORMATS, named, report_formats
    from latscope.report.results import TABLE_SECTIONS, load_tables, results
    from latscope.report.section import Grid, TableSection

    class Largest(TableSection):
        title = "Largest samples"
        csv_columns = ["largest_us"]

        def fields(self, name, table, context):
            return {"largest_us": table.stats()["max_ns"] / 1000}

        def lines(self, row):
            return [f"{row['name']} largest {row['largest_us']:.3f} us"] if row["samples"] else []

        def blocks(self, row):
            return [Grid(["largest (us)"], [[f"{row['largest_us']:.3f}"]], name="largest")]

        def csv_cells(self, row):
            return [row["largest_us"]]

    TABLE_SECTIONS.append(Largest())
    try:
        document = results(*load_tables(il_capture))
        shown = {fmt.name: fmt.text(document) for fmt in FORMATS}
    finally:
        TABLE_SECTIONS.pop()
    row = next(r for r in document["tables"] if r["name"] == "IL-a-1")
    largest = f"{row['max_ns'] / 1000:.3f}"
    assert row["largest_us"] == row["max_ns"] / 1000
    assert json.loads(shown["json"])["tables"][0] == row
    line = next(r for r in csv.DictReader(io.StringIO(shown["csv"])) if r["name"] == "IL-a-1")
    assert float(line["largest_us"]) == row["largest_us"]
    assert f"\nIL-a-1 largest {largest} us\n" in shown["text"]
    assert f"## Largest samples\n\n```\nIL-a-1 largest {largest} us\n" in shown["markdown"]
    assert (
        f"<table class=largest><tr><th>largest (us)</th></tr>\n<tr><td>{largest}</td></tr></table>"
    ) in shown["html"]
    assert "largest" not in shown["worst"]  # the worst samples' own file
    plain = results(*load_tables(il_capture))  # the section's line removed: gone
    assert "largest_us" not in plain["tables"][0] and "largest" not in named("html").text(plain)

    document, paths = write_report(il_capture, tmp_path / "r", figures=False, exports=False)
    assert list(paths) == [fmt.name for fmt in report_formats()]
    for name, path in paths.items():
        assert path.name == named(name).report_file
        assert path.read_bytes() == named(name).text(document).encode()


def test_worst_sample_windows_decode_to_the_worst_sample(il_capture, tmp_path):
    """Each worst sample's PulseView window (worst/<table>.<rank>.sr) starts inside its
    test, after the START: the context markers repeated at its first samples let the
    repository's decoders (sigrok-cli) pair the worst sample as analyze does."""
    import os
    import subprocess
    from pathlib import Path

    from latscope_defs.channels import Layout

    document, paths = write_report(il_capture, tmp_path / "r", figures=False, worst=2)
    capture = load_capture(il_capture)
    stack = Layout.for_identity(capture.identity).decoder_stack()
    decoders = Path(__file__).resolve().parents[2] / "decoders"
    checked = 0
    for row in document["tables"]:
        for entry in row["worst"]:
            assert entry["export"] == f"worst/{row['name']}.{entry['rank']}.sr"
            assert (tmp_path / "r" / entry["export"]).with_suffix(".pvs").exists()
            result = subprocess.run(
                [
                    "sigrok-cli",
                    "-i",
                    str(tmp_path / "r" / entry["export"]),
                    "-P",
                    stack,
                    "-B",
                    "latscope_latency=csv",
                ],
                capture_output=True,
                text=True,
                timeout=120,
                env=dict(os.environ, SIGROKDECODE_DIR=str(decoders)),
            )
            assert result.returncode == 0, result.stderr
            decoded = {
                (r["table"], int(r["ticks"])) for r in csv.DictReader(result.stdout.splitlines())
            }
            assert (row["name"], entry["end"] - entry["start"]) in decoded, (row["name"], entry)
            checked += 1
    assert checked == 2 * len(document["tables"])
    page = paths["html"].read_text()
    assert "href='worst/IL-a-1.1.sr'" in page


def test_tick_flags_recorded_or_not(tmp_path, capsys):
    """A capture with the kernel's tick markers (test_batch_analysis.shaped_stream: on the
    bus window about every 1500 cycles): its document counts the KERNEL/TICK_ENTRY markers,
    and every table's tick flags are a count, the samples a tick marker lies in (counted
    here by the definition, sample by sample), "0 tick" where none does, never "not
    recorded". The same stream without them: None and "not recorded by this DUT"."""
    from test_batch_analysis import shaped_stream

    from latscope.capture.file import CaptureWriter
    from latscope_defs.markers import KERNEL_TICK_ENTRY, KERNEL_TICK_EXIT, Test, decode
    from latscope_defs.protocol import StreamEncoder
    from support.suite_capture import native_identity

    documents = {}
    for kernel in (True, False):
        events = shaped_stream(3, runs=16, kernel=kernel)
        path = tmp_path / f"kernel-{kernel}.lsc"
        encoder = StreamEncoder(marker_width=16)
        for stamp, source, value in zip(
            events.stamp.tolist(), events.source.tolist(), events.value.tolist()
        ):
            encoder.event(stamp, source, value)
        encoder.flush()
        with CaptureWriter(path, {"identity": native_identity("synthetic")}) as writer:
            writer.write(encoder.take())
            writer.close({"events": len(events)})
        document, paths = write_report(path, tmp_path / f"r-{kernel}", figures=False, exports=False)
        documents[kernel] = document
        tests, points, _ = decode(events.value.astype(np.int64) & 0xFFFF)
        kernel_marker = np.isin(events.source, [Source.MARKER, Source.BUS]) & (tests == Test.KERNEL)
        entries = kernel_marker & (points == KERNEL_TICK_ENTRY)
        ticks = events.stamp[entries | kernel_marker & (points == KERNEL_TICK_EXIT)].tolist()
        assert document["tick_markers"] == np.count_nonzero(entries)
        tables = analyze(events, 1e9)
        assert main(["analyze", str(path), "--details"]) == 0
        text = capsys.readouterr().out
        for row in document["tables"]:
            table = tables[row["name"]]
            ticked = sum(
                any(start <= t <= start + length for t in ticks)
                for start, length in zip(table.starts.tolist(), table.samples.tolist())
            )
            if kernel:
                assert row["flags"]["tick"] == ticked, row["name"]
                assert f"{row['flags']['cold']} cold, {ticked} tick)" in text
            else:
                assert row["flags"]["tick"] is None and ticked == 0
                assert all(entry["tick"] is None for entry in row["worst"])
        csv_ticks = {r["flagged_tick"] for r in csv.DictReader(paths["csv"].open())}
        assert (csv_ticks == {""}) == (not kernel)
    assert documents[True]["tick_markers"] > 10
    assert documents[False]["tick_markers"] == 0
    assert any(row["flags"]["tick"] for row in documents[True]["tables"])
    assert any(row["flags"]["tick"] == 0 for row in documents[True]["tables"] if row["samples"])
