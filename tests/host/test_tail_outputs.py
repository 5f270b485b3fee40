"""The tail estimate in every output: analyze's text, results.json, results.csv, the report
(Markdown, HTML, the exceedance figure), latscope compare and the live tables a capture ends
with. The capture: a synthetic suite run (support/synthetic_suite.py) of 1000 samples per
IRQ and TSL table, whose IL-a-1 samples are independent draws from a uniform (estimable)
and whose TF, SEO and MQ tables hold 256 and CLK 100, as the suite's (too few)."""

import csv
import json
import subprocess
import sys

import numpy as np
import pytest

from latscope import cli
from latscope.analysis.live import live_analysis
from latscope.analysis.tail import PROBABILITIES, estimate_table
from latscope.capture.batches import CaptureBatches
from latscope.capture.file import CaptureWriter
from latscope.link.identity import Identity
from latscope.report import compare, plots
from latscope.report.directory import write_report
from latscope.report.formats.text import MORE, summary
from latscope.report.results import SCHEMA_VERSION, load_tables, results, rounded_ns
from latscope.report.tail_estimates import estimates, probability_text
from latscope.terminal import output_width
from support.synthetic_suite import IDENTITY, encode, make_run

ESTIMABLE, TOO_FEW = "IL-a-1", "TF-a-1"
#: What the estimate says of TOO_FEW (256 samples: the suite's per-window count of TF).
TOO_FEW_REFUSAL = "not estimable: too few samples: 256 < 1000"


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    path = tmp_path_factory.mktemp("tail") / "suite.lsc"
    with CaptureWriter(path, {"identity": IDENTITY}) as writer:
        writer.write(encode(make_run(seed=1, count=1000).events))
    return path


@pytest.fixture(scope="module")
def document(capture):
    return results(*load_tables(capture))


def rows(document):
    return {row["name"]: row for row in document["tables"]}


def test_every_table_has_an_estimate_or_a_refusal(document):
    """Per table either three quantiles, each inside its interval, or "not estimable: ..."
    and no figure; the order checks saw every sample of these short tables."""
    for row in document["tables"]:
        tail = row["tail"]
        assert tail["samples"] == row["samples"] == tail["checked_samples"]
        if tail["estimable"]:
            assert tail["refusal"] is None
            assert [q["probability"] for q in tail["quantiles"]] == list(PROBABILITIES)
            for q in tail["quantiles"]:
                assert q["low_ns"] <= q["ns"] and (q["high_ns"] is None or q["ns"] <= q["high_ns"])
        else:
            assert tail["refusal"].startswith("not estimable: ") and tail["quantiles"] == []
    table = rows(document)
    assert table[ESTIMABLE]["tail"]["estimable"]
    assert table[TOO_FEW]["tail"]["refusal"] == TOO_FEW_REFUSAL


def test_the_headline_maximum_is_never_changed(capture, document):
    """The table's maximum is the largest sample, with or without the tail section, and
    the estimate of a bounded tail (a uniform) is never above what the samples allow."""
    from latscope.report import results as results_module

    sections = results_module.TABLE_SECTIONS
    without = [section for section in sections if section.title != "Tail estimate"]
    saved = list(sections)
    sections[:] = without
    try:
        plain = results(*load_tables(capture))
    finally:
        sections[:] = saved
    for name, row in rows(document).items():
        assert "tail" not in rows(plain)[name]
        assert row["max_ns"] == rows(plain)[name]["max_ns"]
    _, tables = load_tables(capture)
    table = tables[ESTIMABLE]
    assert rows(document)[ESTIMABLE]["max_ns"] == table.values[-1] * table.ns_per_stamp


def test_text_json_and_csv(capture, document, capsys):
    assert cli.main(["analyze", str(capture), "--details"]) == 0
    text = capsys.readouterr().out
    tail = rows(document)[ESTIMABLE]["tail"]
    q6 = tail["quantiles"][1]
    assert f"\n{ESTIMABLE}: p 1e-3: " in text and f"p 1e-6: {q6['ns']:.1f} [" in text
    assert f"\n{TOO_FEW}: {TOO_FEW_REFUSAL}" in text
    assert cli.main(["analyze", str(capture), "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["version"] == SCHEMA_VERSION and rows(printed)[ESTIMABLE]["tail"] == tail
    assert cli.main(["analyze", str(capture), "--format", "csv"]) == 0
    lines = {line["name"]: line for line in csv.DictReader(capsys.readouterr().out.splitlines())}
    for q in tail["quantiles"]:
        column = f"tail_{probability_text(q['probability'])}"
        assert float(lines[ESTIMABLE][f"{column}_ns"]) == q["ns"]
        assert float(lines[ESTIMABLE][f"{column}_low_ns"]) == q["low_ns"]
    assert lines[ESTIMABLE]["tail_refusal"] == "" and lines[TOO_FEW]["tail_1e-6_ns"] == ""
    assert lines[TOO_FEW]["tail_refusal"] == TOO_FEW_REFUSAL


def test_the_summary_makes_no_estimate(capture, document, capsys):
    """analyze's text summary shows no tail estimate, so it makes none: it would import
    scipy.stats (about 1.2 CPU s, most of the command's fixed cost, bench/README.md); nor
    does it import pyelftools (a capture without a simulation's ground truth) or matplotlib."""
    program = (
        "import sys; from latscope import cli; "
        f"code = cli.main(['analyze', {str(capture)!r}]); "
        "print(code, sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('elftools', 'matplotlib') or m.startswith('scipy.stats')))"
    )
    run = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    )
    assert run.stdout.splitlines()[-1] == "0 []"
    assert cli.main(["analyze", str(capture)]) == 0
    assert capsys.readouterr().out == summary(document, output_width(sys.stdout), more=MORE)


@pytest.mark.slow
def test_report_and_its_exceedance_figure(capture, tmp_path):
    """The report's Markdown and HTML show the section; every table has an exceedance figure
    whose marked points are the 1e-6 and 1e-9 estimates (or whose title says not
    estimable)."""
    document, paths = write_report(capture, tmp_path / "r", exports=False)
    tail = rows(document)[ESTIMABLE]["tail"]
    markdown, page = paths["markdown"].read_text(), paths["html"].read_text()
    assert "## Tail estimate" in markdown and f"{TOO_FEW}: not estimable" in markdown
    assert "<table class=tail>" in page and "not estimable: too few samples" in page
    for row in document["tables"]:
        assert (tmp_path / "r" / "figures" / f"{row['name']}.exceedance.svg").exists()
        assert f"{row['name']}.exceedance.svg" in markdown
    _, tables = load_tables(capture)
    (axes,) = plots.exceedance(tables[ESTIMABLE]).axes
    marked = {
        line.get_ydata()[0]: line.get_xdata()[0]
        for line in axes.get_lines()
        if line.get_marker() == "o"
    }
    assert marked == {q["probability"]: q["ns"] for q in tail["quantiles"][1:]}
    (axes,) = plots.exceedance(tables[TOO_FEW]).axes
    assert "not estimable" in axes.get_title()
    assert any("too few samples" in text.get_text() for text in axes.texts)


def test_compare_shows_each_runs_estimate(capture, capsys):
    runs = compare.load_runs([capture, capture], ["A", "B"])
    document = compare.comparison(runs)
    table = next(t for t in document["tables"] if t["name"] == ESTIMABLE)
    assert [entry["tail"] for entry in table["runs"]] == [runs[0].rows[ESTIMABLE]["tail"]] * 2
    assert cli.main(["compare", str(capture), str(capture)]) == 0
    text = capsys.readouterr().out
    assert text.count(" tail: p 1e-3: ") == 2 * sum(
        row["tail"]["estimable"] for row in runs[0].document["tables"]
    )
    assert f"  suite#2 tail: {TOO_FEW_REFUSAL}" in text  # each run's, named


def test_the_live_tables_give_the_files_estimates(capture, document):
    """What `latscope capture` ends with (its end summary and --json ``tail``): the
    estimates of the live tables, the same as the file's analysis gives."""
    analyzer = live_analysis(Identity.from_dict(IDENTITY))
    for events in CaptureBatches(capture):
        analyzer.feed(events)
    analyzer.finish()
    assert not analyzer.needs_second_pass
    tails = estimates(cli.final_accumulators(analyzer, capture))
    assert rounded_ns(tails) == {row["name"]: row["tail"] for row in document["tables"]}
    assert tails[ESTIMABLE] == estimate_table(load_tables(capture)[1][ESTIMABLE]).as_dict()
    assert np.isfinite(tails[ESTIMABLE]["quantiles"][1]["ns"])
