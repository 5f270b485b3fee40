"""The load profiles and the caches off on the simulated SoC (docs/tests.md, "Load
profiles", "Caches off"): a short suite under each profile, captured through the appliance
as the demo captures it, with the harness's ground-truth log.

* Nothing is lost (no LOSS record, no hole), every IL, IDL and TSL table has its samples.
* The load's activity is in the capture: its threads' and its handler's markers (test
  LOAD), and for the bus profile the engine's bursts on EDGE3, stamp for stamp the
  harness's `busload` lines.
* irq-high and irq-low: when both lines are pending at one trap, the more urgent line's
  handler runs first (the kernel's handler-entry markers of the two, one trap apart).
* With the caches off (sim/cache_off.py) the same suite's thread switches take longer.

Builds the suite once per profile (seconds each) and the simulator twice (caches on and
off, a few minutes the first time); each run is about 10 s.
"""

import numpy as np
import pytest
from test_sim_soc import of, read_truth

from latscope.analysis.summary import analyze_capture
from latscope.capture.file import load_capture
from latscope.capture.suite import DEMO_IRQ, capture_suite
from latscope.simulated.soc import ROOT, SuiteSettings, build_soc
from latscope_defs.markers import Point, Test, decode
from latscope_defs.protocol import Source
from support.load_markers import LOADS, check_load_markers

pytestmark = pytest.mark.verilator

SAMPLES = 30
TESTS = "IL_A,IDL_B,TSL_A"
BUILD_DIR = ROOT / "firmware" / "suite" / "build" / "pytest-loads"
#: Cycles from one handler's last marker to the next handler-entry marker when the dispatch
#: loop calls both in one trap (about 50 to 110 on VexRiscv_IMAC); from one trap to the
#: next, the return and the entry take more than 300.
SAME_TRAP = 200
LATENCY_TABLES = ("IL-", "ILH-", "IDL-", "TSL-")


def run_suite(settings, directory):
    directory.mkdir(exist_ok=True)
    build = build_soc(settings, build_dir=BUILD_DIR, sump=False)
    path, truth = directory / "run.lsc", directory / "run.truth"
    capture = capture_suite(build, DEMO_IRQ, output=path, truth=truth, timeout=900)
    assert capture.exit_code == 0, capture.console[-3000:]
    summary, tables = analyze_capture(path, interval_s=None, background=False)
    return summary, tables, load_capture(path), read_truth(truth)


@pytest.fixture(scope="module", params=LOADS)
def loaded(request, tmp_path_factory):
    load = request.param
    settings = SuiteSettings(samples=SAMPLES, tests=TESTS, load=load)
    return (load, *run_suite(settings, tmp_path_factory.mktemp(load)))


def markers(capture):
    """(stamps, tests, points, args) of the capture's markers, trace port and bus window, in
    time order."""
    events = capture.events
    mask = np.isin(events.source, [int(Source.MARKER), int(Source.BUS)])
    stamps = events.stamp[mask].astype(np.int64)
    order = np.argsort(stamps, kind="stable")
    values = events.value[mask].astype(np.int64)[order] & 0xFFFF
    return (stamps[order], *decode(values))


def test_loaded_suite_loses_nothing(loaded):
    load, summary, tables, _, _ = loaded
    assert not summary.device_losses and not summary.holes, load
    latency = {
        name: table.stats() for name, table in tables.items() if name.startswith(LATENCY_TABLES)
    }
    assert len(latency) == 15, sorted(latency)  # IL/ILH/IDL-a-1, -b-1/10/128, TSL-a-2/10/128
    for name, stats in latency.items():
        assert SAMPLES <= stats["samples"] <= SAMPLES + 1 and stats["discarded"] == 0, (load, name)


def test_load_markers_are_in_the_capture(loaded):
    load, _, _, capture, _ = loaded
    _, tests, points, args = markers(capture)
    values = (tests << 10) | (points << 7) | args
    threads, calls = check_load_markers(values, load)
    assert (threads > 0) == (load in ("cpu", "memory", "mixed"))


def test_bus_engine_on_edge3_as_the_truth_says(loaded):
    load, _, _, capture, truth = loaded
    events = capture.events
    edge3 = events.source == int(Source.EDGE0) + 3
    seen = list(zip(events.stamp[edge3].tolist(), events.value[edge3].tolist()))
    # Until the firmware's exit (the capture ends a few cycles later).
    exit_cycle = of(truth, "exit")[0][0]
    expected = [(cycle, level) for cycle, _, level in of(truth, "busload") if cycle < exit_cycle]
    assert [(stamp, level) for stamp, level in seen if stamp < exit_cycle] == expected
    assert bool(expected) == (load in ("bus", "mixed")), load


@pytest.mark.parametrize("load,first", [("irq-high", 1), ("irq-low", 0)])
def test_the_more_urgent_line_first(load, first, tmp_path):
    """Lines 0 (the appliance) and 1 (the load) pending at one trap: the kernel's handler
    markers of the two come in the profile's order, every time (rv32_board_lines_first).
    At the load's 40 kHz (LOAD_PARAM) such traps are frequent."""
    settings = SuiteSettings(samples=100, tests="IL_A", load=load, load_param=40000)
    _, _, capture, _ = run_suite(settings, tmp_path)
    stamps, tests, points, args = markers(capture)
    orders = []
    last_exit = None
    for stamp, test, point, arg in zip(stamps, tests, points, args):
        if test == Test.KERNEL and point == Point.ISR_ENTRY:
            if last_exit is not None and stamp - last_exit[0] < SAME_TRAP:
                orders.append((last_exit[1], int(arg)))
        elif point == Point.ISR_EXIT:
            last_exit = (stamp, 1 if test == Test.LOAD else 0)
    assert len(orders) >= 5 and set(orders) == {(first, 1 - first)}, orders


def test_caches_off_change_the_thread_switch(tmp_path):
    """The same firmware on the simulator with its caches off (CACHE=off): every TSL-a
    table's average changes, and the growth from 2 to 128 threads (the caches' share,
    docs/tests.md) shrinks."""
    averages = {}
    for cache in ("on", "off"):
        settings = SuiteSettings(samples=SAMPLES, tests="TSL_A", cache=cache)
        summary, tables, _, _ = run_suite(settings, tmp_path / cache)
        assert not summary.device_losses and not summary.holes
        averages[cache] = {n: tables[f"TSL-a-{n}"].stats()["avg_ns"] for n in (2, 10, 128)}
    on, off = averages["on"], averages["off"]
    assert all(off[n] != on[n] for n in on), averages
    assert off[128] - off[2] < on[128] - on[2], averages
