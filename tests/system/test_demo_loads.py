"""``latscope demo --loads``, as a user runs it (docs/tests.md, "Load profiles"): the suite once
per load on the simulated SoC, each table's statistics side by side, the overlaid figures.

A short suite (IL_A, 30 samples) under ``none`` and ``bus``: the command exits 0, each run's
capture records the load it ran under, the side-by-side text shows for every run what that
run's own capture gives (``latscope analyze --json`` of it), nothing is lost, every table has
its figure, and the bus master's load shows in IL-a-1's maximum (the simulation is
cycle-exact, so the figures are the same on every run).
"""

import json
import subprocess
import sys

import pytest

from latscope.capture.file import load_capture

pytestmark = [pytest.mark.slow, pytest.mark.verilator]

LOADS = ("none", "bus")
TABLES = ("IL-a-1", "ILH-a-1", "IDL-a-1")


def latscope(*args):
    return subprocess.run(
        [sys.executable, "-m", "latscope.cli", *args], capture_output=True, text=True, timeout=900
    )


@pytest.fixture(scope="module")
def demo_loads(tmp_path_factory):
    output = tmp_path_factory.mktemp("loads") / "demo.lsc"
    run = latscope(
        "demo", "--loads", ",".join(LOADS), "--samples", "30", "--tests", "IL_A", "-o", output
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return output, run.stdout


def own_results(capture):
    run = latscope("analyze", "--json", capture)
    assert run.returncode == 0, run.stderr
    return {table["name"]: table for table in json.loads(run.stdout)["tables"]}


def side_by_side(text, table, label):
    """The figures of ``label``'s line under ``table``'s heading in the demo's text."""
    lines = text.splitlines()
    start = lines.index(table)
    for line in lines[start + 2 :]:
        fields = line.split()
        if fields and fields[0] == label:
            return fields[1:]
    raise AssertionError(f"no line {label!r} under {table}")


def test_each_run_is_measured_under_its_load(demo_loads):
    output, text = demo_loads
    for load in LOADS:
        capture = output.with_name(f"{output.stem}.{load}.lsc")
        assert load_capture(capture).metadata["conditions"]["load"] == load
        tables = own_results(capture)
        for name in TABLES:
            stats = tables[name]
            samples, low, high = side_by_side(text, name, load)[:3]
            assert (int(samples), float(low), float(high)) == (
                stats["samples"],
                stats["min_ns"],
                stats["max_ns"],
            ), (load, name)
    assert f"events lost, holes: {', '.join(f'{load} 0, 0' for load in LOADS)}" in text
    figures = {path.name for path in output.with_suffix(".loads").iterdir()}
    assert {f"{name}.compare.svg" for name in TABLES} <= figures


def test_the_bus_load_shows(demo_loads):
    _, text = demo_loads
    idle, loaded = (float(side_by_side(text, "IL-a-1", load)[2]) for load in LOADS)
    assert loaded > idle + 1000, (idle, loaded)
