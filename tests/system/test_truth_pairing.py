"""Independent ground truth on the full demo: every sample of every table, computed a
second way.

The demo's configuration (``make demo``: VexRiscv_IMAC, GPIO markers, 1000 samples, every
test, the demo's IRQ settings, its profile-guided simulator) runs once on the simulated SoC,
captured through the appliance as the demo does. From the harness's ground-truth log
(``--truth``: the cycle of every IRQ line edge and every GPIO store, logged in C++ from the
simulated wires) this test computes the samples with a deliberately simple pairing of its
own: one pass over the events in time order, the rule table written out from docs/tests.md,
no numpy, no ``latscope.analysis``. ``analyze`` on the appliance's capture must give the
same tables with the same samples, to the cycle.

The same holds under load: the suite once more with the ``mixed`` load profile (a less
urgent busy thread, a memory sweep, the bus load engine and a second, more urgent interrupt
line; docs/tests.md "Load profiles") gives the truth's samples too, and the worst interrupt
latency under it has the load's activity inside it.

It also checks the reproducibility contract of ``sim:soc`` (sim/README.md): the CPU's first
cycle is RELEASE_AFTER_START cycles after the capture started, and the first IRQ edge
after START is at ``S + period + (seed & jitter_mask)``.

One sim:soc run of the whole suite per load: about a minute each on a 2-core machine, plus
the builds.
"""

from bisect import bisect_left
from pathlib import Path

import numpy as np
import pytest

from latscope.analysis.pairing import analyze
from latscope.analysis.statistics import WORST_KEPT, TableAccumulator
from latscope.analysis.worst import worst_samples
from latscope.capture.file import load_capture
from latscope.capture.suite import DEMO_IRQ, capture_suite
from latscope.simulated.soc import RELEASE_AFTER_START, ROOT, SuiteSettings, build_soc
from latscope_gateware.irq_generator import LFSR_SEED

pytestmark = pytest.mark.verilator

#: The demo's suite build (latscope.demo builds the same settings in the same directory).
BUILD_DIR = ROOT / "firmware" / "suite" / "build" / "demo"
STROBE = 1 << 16

# Marker encoding and the rules, written out from docs/markers.md and docs/tests.md.
START, END, ISR_ENTRY, ISR_EXIT, T1, T2, THREAD, PARAM = range(8)
IL_A, IDL_B, TSL_A = 1, 2, 3
KERNEL = 16  # the kernel's marker KERNEL/ISR_ENTRY: it calls a handler now
SUITE_IRQ_LINE = 0  # ... of this line (its argument) for the appliance's IRQ; others: loads'
#                         (its tick markers, KERNEL/T1 and T2, pair with nothing)
#: test -> [(table name, A, B)]; A/B: "irq", "handler" (the kernel's marker) or a point.
RULES = {
    IL_A: [
        ("IL-a-1", "irq", ISR_ENTRY),
        ("ILH-a-1", "irq", "handler"),
        ("IDL-a-1", ISR_EXIT, THREAD),
    ],
    IDL_B: [
        ("IL-b-{n}", "irq", ISR_ENTRY),
        ("ILH-b-{n}", "irq", "handler"),
        ("IDL-b-{n}", ISR_EXIT, T2),
    ],
    TSL_A: [("TSL-a-{n}", T1, T2)],
    4: [("TF-a-1", T1, T2)],
    5: [("TF-b-1", T1, T2)],
    6: [("TF-c-2", T1, T2)],
    7: [("SEO-a-1", T1, T2)],
    8: [("SEO-b-1", T1, T2)],
    9: [("SEO-c-1", T1, T2)],
    10: [("SEO-d-1", T1, T2)],
    11: [("SEO-e-1", T1, T2)],
    12: [("SEO-f-{n}", T1, T2)],
    13: [("SEO-g-3", T1, T2)],
    14: [("MQ-a-1", T1, T2)],
    15: [("CLK-a-1", T1, T2)],
}


def truth_events(path):
    """(cycle, kind, value) in log order: ("irq", 1) for a rising IRQ edge, ("marker",
    16-bit value) for a GPIO store that flips the strobe or a store into the bus trace
    window (the kernel's markers); and the cycles of the capture's start and of the CPU's
    release."""
    events, strobe, capture_start, cpu_run = [], 0, None, None
    for line in Path(path).read_text().splitlines():
        if line.startswith("#"):
            continue
        cycle, kind, *fields = line.split()
        cycle = int(cycle)
        if kind == "irq" and fields[0] == "1":
            events.append((cycle, "irq", 1))
        elif kind == "gpio":
            word = int(fields[0], 16)
            if word & STROBE != strobe:
                strobe = word & STROBE
                events.append((cycle, "marker", word & 0xFFFF))
        elif kind == "trace":
            events.append((cycle, "marker", int(fields[1], 16) & 0xFFFF))
        elif kind == "capture" and fields[0] == "1" and capture_start is None:
            capture_start = cycle
        elif kind == "cpu_run":
            cpu_run = cycle
    return events, capture_start, cpu_run


def simple_pairing(events):
    """{table: [(start cycle, cycles)]}: one pass in time order. In a cycle the marker
    comes before the IRQ edge (a B in an A's cycle is not that A's; an edge in a START's or
    END's cycle is in no window). A kernel marker (the bus window's) is an event of every
    open window; in the demo's GPIO build no two markers share a cycle."""
    events = sorted(events, key=lambda event: (event[0], event[1] != "marker"))
    windows = {}  # test -> {"n": parameter, "pending": {table: A cycle}, "fresh"}
    tables = {}
    for cycle, kind, value in events:
        if kind == "marker" and value >> 10 == KERNEL:
            if (value >> 7) & 7 != ISR_ENTRY or value & 0x7F != SUITE_IRQ_LINE:
                continue
            targets, point = list(windows.items()), "handler"
        elif kind == "marker":
            test, point, arg = value >> 10, (value >> 7) & 7, value & 0x7F
            window = windows.get(test)
            if window is not None and window["fresh"]:
                window["fresh"] = False  # the START's very next marker
                if point == PARAM:
                    window["n"] |= arg << 7
                    continue
            if point in (START, END):
                windows.pop(test, None)
                if point == START:
                    windows[test] = {"n": arg, "pending": {}, "fresh": True, "start": cycle}
                continue
            targets = [(test, window)] if window is not None else []
        else:
            targets = [
                (test, window) for test, window in windows.items() if cycle > window["start"]
            ]
            point = "irq"
        for test, window in targets:
            for name, a, b in RULES.get(test, []):
                name = name.format(n=window["n"])
                pending = window["pending"].get(name)
                if b == point and pending is not None and pending < cycle:
                    tables.setdefault(name, []).append((pending, cycle - pending))
                    window["pending"][name] = None
                if a == point:
                    window["pending"][name] = cycle
                tables.setdefault(name, [])
    return tables


def suite_run(tmp, load):
    """The demo's suite under ``load`` (``latscope demo --load``'s build), with its truth."""
    settings = SuiteSettings(load=load)
    # The demo's simulator, as make demo builds it (profile-guided): its samples are the truth.
    build = build_soc(settings, build_dir=BUILD_DIR, sump=False, pgo=True)
    truth = tmp / "demo.truth"
    run = capture_suite(build, DEMO_IRQ, output=tmp / "demo.lsc", truth=truth, timeout=900)
    assert run.exit_code == 0, run.console[-3000:]
    return load_capture(tmp / "demo.lsc"), truth


@pytest.fixture(scope="module", params=["none", "mixed"])
def demo_run(request, tmp_path_factory):
    return suite_run(tmp_path_factory.mktemp(f"truth-{request.param}"), request.param)


def test_every_sample_of_the_demo_is_the_truth(demo_run):
    capture, truth = demo_run
    events, _, _ = truth_events(truth)
    expected = simple_pairing(events)
    tables = analyze(capture.events, capture.stamp_hz)
    assert capture.parser_stats.lost_total == 0
    # Every table of the demo, with the suite's sample counts.
    assert set(tables) == set(expected) and len(tables) >= 23, sorted(tables)
    for name, table in tables.items():
        truth_starts = np.array([start for start, _ in expected[name]], np.int64)
        truth_samples = np.array([cycles for _, cycles in expected[name]], np.int64)
        assert len(table.samples) >= (100 if name.startswith("CLK") else 256), name
        np.testing.assert_array_equal(table.starts, truth_starts, err_msg=name)
        np.testing.assert_array_equal(table.samples, truth_samples, err_msg=name)
        assert table.discarded == 0, name
    # The tick flag (docs/tests.md, "Worst samples and flags"): a kernel tick marker
    # (KERNEL/T1 or T2 in the bus window) stored in a sample's [start, end] cycles.
    ticks = sorted(
        cycle
        for cycle, kind, value in events
        if kind == "marker" and value >> 10 == KERNEL and (value >> 7) & 7 in (T1, T2)
    )
    assert len(ticks) > 400  # both markers, about every ms
    flagged = 0
    for name, table in tables.items():
        first_after = [bisect_left(ticks, start) for start, _ in expected[name]]
        truth_ticked = [
            at < len(ticks) and ticks[at] <= start + cycles
            for at, (start, cycles) in zip(first_after, expected[name])
        ]
        assert table.ticked.tolist() == truth_ticked, name
        flagged += sum(truth_ticked)
    assert flagged > 50


def test_worst_latency_under_load_has_the_load_inside(demo_run):
    """Under the mixed load the worst unflagged IL-a-1 sample has the load's activity inside it: the
    kernel's handler marker of the load's line (it ran first: it is more urgent), the load
    handler's own markers, or the bus load engine's bursts (EDGE3). Idle, none of these
    exist at all."""
    capture, _ = demo_run
    tables = {
        name: TableAccumulator.of_table(table)
        for name, table in analyze(capture.events, capture.stamp_hz).items()
    }
    # The worst but the flagged ones (the cold first sample, those the tick overlaps).
    ranked = worst_samples(capture, {"IL-a-1": tables["IL-a-1"]}, WORST_KEPT)["IL-a-1"]
    worst = next(entry for entry in ranked if not entry["cold"] and not entry["tick"])
    inside = [event["event"] for event in worst["events"] if event["where"] == "inside"]
    load = [
        event
        for event in inside
        if event.startswith("LOAD ") or event.startswith("EDGE3") or event == "handler 1"
    ]
    mixed = capture.metadata["conditions"]["load"] == "mixed"
    assert bool(load) == mixed, (worst["ns"], inside)


def test_cpu_and_irq_start_at_fixed_cycles_after_start(demo_run):
    _, truth = demo_run
    events, capture_start, cpu_run = truth_events(truth)
    assert cpu_run - capture_start == RELEASE_AFTER_START
    # START executes in cycle S = capture_start - 1: the first edge is I0 = period +
    # (seed & mask) after it.
    first_edge = min(cycle for cycle, kind, _ in events if kind == "irq" and cycle > capture_start)
    assert first_edge == capture_start - 1 + DEMO_IRQ.period + (LFSR_SEED & DEMO_IRQ.jitter_mask)
