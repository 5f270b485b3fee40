"""``latscope sweep`` on a short run (issue 26, "Done when"): on the simulated SoC the sweep
covers at least 95 % of the instructions of each swept path that an interrupt can meet (the
ground truth's ``takeable`` ones), finds a worst IL at least as large as the random run's
with the same number of interrupts, and names where that interrupt met the code and the
masked region that held it.

A shorter heartbeat than the command's (8 polls, not 64) keeps the sweep at a few hundred
delays; the samples cover every delay. Builds the sweep's suite in its own
directory (a minute or two the first time); the two runs take about 20 s.
"""

import pytest

from latscope.simulated.soc import ROOT
from latscope.sweep import MARGIN, PATHS, comparison_text, sweep

pytestmark = pytest.mark.verilator

HEARTBEAT = 8


@pytest.fixture(scope="module")
def document(tmp_path_factory):
    directory = tmp_path_factory.mktemp("sweep")
    # Enough interrupts for every delay of one heartbeat period (measured in the random
    # run: about 330 cycles at 8 polls, with the semaphore).
    return sweep(
        directory,
        samples=400,
        heartbeat=HEARTBEAT,
        build_dir=ROOT / "firmware" / "suite" / "build" / "pytest-sweep",
    )


def test_both_runs_have_every_interrupt(document):
    for run in document["runs"].values():
        assert run["interrupts"] == run["matched"] == document["samples"]
    delays = int(document["delays"].split(":")[1])
    assert delays == document["heartbeat_cycles"] + MARGIN <= document["samples"]


def test_the_sweep_covers_each_path(document):
    swept = document["runs"]["sweep"]["paths"]
    assert [path["path"] for path in swept] == [path.name for path in PATHS]
    for path in swept:
        assert path["instructions"] >= 5, path
        assert path["coverage"] >= 0.95, path


def test_the_sweep_finds_the_worst_and_names_it(document):
    """The worst sample without the flagged ones (the cold first sample, those the kernel's
    tick overlaps: where a tick falls is chance in both runs) is at least the random run's,
    and its interrupt was held by a masked region, named with where it met the code."""
    random, swept = document["runs"]["random"], document["runs"]["sweep"]
    worst = swept["worst_unflagged"]
    assert worst["ns"] >= random["worst_unflagged"]["ns"]
    assert worst["at"] and "(" in worst["at"] and worst["delay_cycles"] is not None
    start, end = worst["held_by"]
    assert start and end and worst["masked_cycles"] > 0
    text = comparison_text(document)
    assert f"{worst['ns']:.1f}" in text and worst["at"] in text and start in text


def test_the_report_names_where_each_delay_met_the_code(document):
    """``latscope report``/``analyze`` of the sweep's capture: every delay of the sweep has
    its samples and the place where their interrupts met the code."""
    from latscope.report.results import load_tables, results

    summary, tables = load_tables(document["runs"]["sweep"]["capture"])
    (row,) = [row for row in results(summary, tables)["tables"] if row["name"] == "IL-a-1"]
    delays = int(document["delays"].split(":")[1])
    by_delay = row["where"]["by_delay"]
    assert [entry["delay_cycles"] for entry in by_delay] == list(range(delays))
    assert all(entry["at"] and entry["at"]["function"] for entry in by_delay)
    assert sum(entry["samples"] for entry in by_delay) == document["samples"]
