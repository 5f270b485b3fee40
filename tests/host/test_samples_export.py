"""Every sample in long format (latscope.report.samples): ``latscope export --samples`` as
CSV and Parquet, ``CaptureResult.to_dataframe()`` and examples/samples_dataframe.py, on a
real capture (the test suite run natively, ``suite_capture``), each checked against the
sample tables of the analysis and the statistics of results.json."""

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from latscope.api import CaptureResult
from latscope.capture.conditions import Conditions
from latscope.cli import main
from latscope.report.samples import SAMPLE_COLUMNS, ExtraMissing
from support.suite_capture import native_suite_capture

ROOT = Path(__file__).resolve().parents[2]
#: p99 from 100 samples (docs/results-schema.md): the example's p99 is then compared.
SAMPLES = 100


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    path = tmp_path_factory.mktemp("samples") / "suite.lsc"
    native_suite_capture(
        path, SAMPLES, tests="IL_A,TSL_A", conditions=Conditions("bus", 50, "off").as_dict()
    )
    return path


def results_of(path, capsys):
    assert main(["analyze", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_csv_has_a_row_per_sample_of_the_tables(capture, tmp_path, capsys):
    out = tmp_path / "samples.csv"
    assert main(["export", str(capture), "--samples", str(out)]) == 0
    assert f"wrote {out}: 500 samples of 5 tables" in capsys.readouterr().err
    with open(out, newline="") as source:
        rows = list(csv.DictReader(source))
    assert list(rows[0]) == [name for name, _ in SAMPLE_COLUMNS]
    tables = CaptureResult.load(capture).tables()
    assert [row["table"] for row in rows] == [
        name for name, table in tables.items() for _ in range(len(table.samples))
    ]
    for name, table in tables.items():
        mine = [row for row in rows if row["table"] == name]
        assert [float(row["latency_ns"]) for row in mine] == table.ns().tolist()
        assert [int(row["start"]) for row in mine] == table.starts.tolist()
        assert [int(row["index"]) for row in mine] == list(range(len(mine)))
        assert [row["cold"] for row in mine] == ["True"] + ["False"] * (len(mine) - 1)
        assert {row["test"] for row in mine} == {table.parameters["test"]}
        assert {row["test_n"] for row in mine} == {str(table.parameters["n"])}
    # The run's conditions on every row; no tick markers and no trigger: empty (null).
    assert {(r["load"], r["load_param"], r["cache"]) for r in rows} == {("bus", "50", "off")}
    assert {(row["tick"], row["delay_cycles"]) for row in rows} == {("", "")}
    # Never overwritten without --force.
    assert main(["export", str(capture), "--samples", str(out)]) == 2
    assert "exists; give --force" in capsys.readouterr().err


def test_parquet_holds_the_same_columns(capture, tmp_path):
    import pyarrow.parquet

    out = tmp_path / "samples.parquet"
    assert main(["export", str(capture), "--samples", str(out)]) == 0
    table = pyarrow.parquet.read_table(out)
    assert table.to_pydict() == CaptureResult.load(capture).samples()
    assert str(table.schema.field("latency_ns").type) == "double"
    assert str(table.schema.field("start").type) == "int64"


def test_the_dataframe_gives_the_statistics_of_the_results(capture, capsys):
    frame = CaptureResult.load(capture).to_dataframe()
    document = results_of(capture, capsys)
    latency = frame.groupby("table", sort=False)["latency_ns"]
    assert list(latency.count().items()) == [(t["name"], t["samples"]) for t in document["tables"]]
    for row in document["tables"]:
        assert latency.get_group(row["name"]).max() == row["max_ns"]
        # numpy's linear percentile, as the results' (rounded to 0.01 ns there).
        assert round(latency.get_group(row["name"]).quantile(0.99), 2) == row["p99_ns"]


def test_without_the_data_extra_it_says_what_to_install(capture, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now fails
    monkeypatch.setitem(sys.modules, "pandas", None)
    out = tmp_path / "samples.parquet"
    assert main(["export", str(capture), "--samples", str(out)]) == 2
    assert capsys.readouterr().err.strip() == (
        "latscope: --samples FILE.parquet needs pyarrow: pip install 'latscope[data]'"
    )
    assert not out.exists()
    with pytest.raises(ExtraMissing, match=r"needs pandas: pip install 'latscope\[data\]'"):
        CaptureResult.load(capture).to_dataframe()
    assert main(["export", str(capture), "--samples", str(tmp_path / "s.xlsx")]) == 2
    assert "give a .csv or .parquet file" in capsys.readouterr().err


def test_the_example_prints_each_tables_summary(capture, capsys):
    """examples/samples_dataframe.py as a user runs it (CI runs it here)."""
    document = results_of(capture, capsys)
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "samples_dataframe.py"), str(capture)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("500 samples in 5 tables, columns: table, test, test_n, load")
    by_name = {line.split()[0]: line.split()[1:] for line in lines[3:]}
    assert list(by_name) == [row["name"] for row in document["tables"]]
    for row in document["tables"]:
        count, _, maximum, p99, _ = by_name[row["name"]]
        assert int(count) == row["samples"]
        assert float(maximum) == row["max_ns"]  # whole ns
        assert abs(float(p99) - row["p99_ns"]) <= 0.06  # printed to 0.1, the results' to 0.01
