"""The lab-script examples (examples/*.py) run as a user runs them, against the full-system
simulation (sim:soc: Verilator SoC running the test suite, the appliance gateware capturing),
with small suites. Their output files are checked against the captures they wrote."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from latscope.analysis.pairing import analyze
from latscope.capture.file import load_capture
from latscope_defs.markers import Test
from support.results_schema import problems
from support.suite_tables import table_names

pytestmark = pytest.mark.verilator

ROOT = Path(__file__).resolve().parents[2]


def run_example(name, *args):
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), *args],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_capture_and_report(tmp_path):
    out = run_example(
        "capture_and_report.py", "--out", str(tmp_path), "--samples", "20", "--tests", "IL_A,TSL_A"
    )
    capture = load_capture(tmp_path / "capture.lsc")
    tables = analyze(capture.events, capture.stamp_hz)
    # ILH-a-1: the same IRQs, ending at the kernel's handler-entry marker (SoC build).
    assert set(tables) == set(table_names([Test.IL_A, Test.TSL_A]))
    assert all(len(table.samples) == 20 for table in tables.values())
    results = json.loads((tmp_path / "results.json").read_text())
    assert problems(results) == []
    assert results["suite"]["cpu"] == "VexRiscv_Lite" and results["suite"]["samples"] == 20
    assert results["device"]["board"] == capture.identity.board
    for row in results["tables"]:
        assert f"{row['name']:10s} {row['samples']:7d} {row['min_ns']:9.0f}" in out
    assert "data:image/png;base64," in (tmp_path / "report.html").read_text()


def test_compare_cpus(tmp_path):
    out = run_example("compare_cpus.py", "--out", str(tmp_path), "--samples", "20")
    document = json.loads((tmp_path / "comparison.json").read_text())
    assert [run["label"] for run in document["runs"]] == ["VexRiscv_IMAC", "VexRiscv_Lite"]
    averages = {}
    for cpu in ("VexRiscv_IMAC", "VexRiscv_Lite"):
        capture = load_capture(tmp_path / f"{cpu}.lsc")
        averages[cpu] = analyze(capture.events, capture.stamp_hz)["IL-a-1"].stats()["avg_ns"]
    il = next(table for table in document["tables"] if table["name"] == "IL-a-1")
    imac, lite = il["runs"]
    assert lite["diff"]["avg_ns"] == pytest.approx(
        averages["VexRiscv_Lite"] - averages["VexRiscv_IMAC"]
    )
    assert (tmp_path / "IL-a-1.compare.png").exists() and "IL-a-1" in out


def test_api_until_samples(tmp_path):
    """``capture(until_samples=...)`` ends the capture once the live statistics count that
    many samples, long before the suite would end; the file then holds what was captured
    and the API's tables are those of ``analyze``."""
    import latscope
    from latscope.api import CaptureResult

    suite = latscope.SuiteSettings(cpu="VexRiscv_Lite", samples=400, tests="IL_A")
    progress = []
    with latscope.open("sim:soc", suite=suite) as dev:
        dev.configure_irq(period=5000, jitter_mask=0xFF, width=100)
        cap = dev.capture(
            until_samples=("IL-a-1", 40),
            timeout=300,
            output=tmp_path / "run.lsc",
            on_progress=lambda live, events: progress.append(events),
        )
        assert dev.simulation.exit_code is None  # the suite was still running
    live = cap.live.tables["IL-a-1"].count
    assert 40 <= live < 400 and progress == sorted(progress)
    again = CaptureResult.load(tmp_path / "run.lsc")
    table = again.tables()["IL-a-1"]
    assert len(table.samples) == live
    row = next(row for row in again.rows() if row["name"] == "IL-a-1")
    assert row["max_ns"] == table.stats()["max_ns"] == cap.live.tables["IL-a-1"].stats()["max_ns"]
    assert again.results()["irq"]["period"] == 5000
