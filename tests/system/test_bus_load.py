"""The simulated SoC's load hardware (sim/rtl/soc_bus_load.v, the load interrupt in
sim/rtl/soc_peripherals.v; docs/tests.md "Load profiles"), from the ground-truth log of
sim/firmware/load_hw.c on the bring-up simulator: the bus load engine holds the RAM for
exactly its cycles in every window, at the offsets its seeded LFSR gives, the same in
every run; the CPU still runs to its end and the engine's copy is whole; the load
interrupt comes every period to the cycle."""

import tomllib

import pytest
from test_sim_soc import TRACE_BASE, of, run_sim

from support.bringup import SIM, bringup_build

pytestmark = pytest.mark.verilator

CPU = "VexRiscv_IMAC"
#: load_hw.c's settings: cycles held per window, seed, interrupt period, interrupts.
HOLD, SEED, PERIOD, IRQS = 512, 0xACE1, 3001, 40
TAPS = 0xB400


def window_cycles():
    with open(SIM / "soc_map.toml", "rb") as file:
        return tomllib.load(file)["bus_load"]["window_cycles"]


def burst_offsets(seed, length, window):
    """The engine's burst offset in window 0, 1, 2, ... (rtl/soc_bus_load.v): a 16-bit
    Galois LFSR from the seed (0 counts as 1), one draw per window."""
    value = seed or 1
    while True:
        yield (value * (window - length + 1)) >> 16
        value = (value >> 1) ^ (TAPS if value & 1 else 0)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two runs of load_hw.elf: [(SIM summary, truth events, console)]."""
    build = bringup_build(CPU)
    return [
        run_sim(build, "load_hw", tmp_path_factory.mktemp(f"load_hw{k}"), "--max-cycles", 5000000)
        for k in range(2)
    ]


def levels(events, name):
    """[(cycle, level)] of a level line of the truth log."""
    return [(event[0], event[2]) for event in of(events, name)]


def test_engine_holds_exactly_its_cycles_at_seeded_offsets(runs):
    _, events, _ = runs[0]
    window = window_cycles()
    (start, started), (stop, stopped) = [(e[0], e[2]) for e in of(events, "busloadset")]
    assert (started, stopped) == (HOLD, 0)
    edges = levels(events, "busload")
    rises = [cycle for cycle, level in edges if level == 1]
    falls = [cycle for cycle, level in edges if level == 0]
    assert len(rises) == len(falls) and all(r < f for r, f in zip(rises, falls))
    first = start + 1  # window 0 begins the cycle after the store's ACK
    windows = (stop - first) // window  # whole windows before the engine was stopped
    assert windows >= 20
    # Per window: one burst, at the drawn offset, exactly HOLD cycles long.
    offsets = burst_offsets(SEED, HOLD, window)
    for k in range(windows):
        begin = first + k * window
        bursts = [(r, f) for r, f in zip(rises, falls) if begin <= r < begin + window]
        offset = next(offsets)
        assert bursts == [(begin + offset, begin + offset + HOLD)], (k, bursts)


def test_runs_are_identical(runs):
    assert runs[0][1] == runs[1][1]


def test_cpu_runs_to_its_end_and_the_copy_is_whole(runs):
    sim, events, console = runs[0]
    assert sim["end"] == "exit" and sim["code"] == "0"
    assert "the copy is whole" in console
    passes = [e for e in of(events, "trace") if e[2] == TRACE_BASE and e[3] >> 12 == 5]
    assert [e[3] & 0xFFF for e in passes] == list(range(len(passes))) and len(passes) >= 5
    # Steady progress beside the engine: every pass (about five windows) takes within 20 %
    # of every other, whatever share of its bursts it meets.
    cycles = [e[0] for e in passes]
    gaps = [b - a for a, b in zip(cycles, cycles[1:])]
    assert max(gaps) < 1.2 * min(gaps), gaps


def test_load_interrupt_every_period(runs):
    _, events, _ = runs[0]
    (start, period), (stop, off) = [(e[0], e[2]) for e in of(events, "loadperiod")]
    assert (period, off) == (PERIOD, 0)
    rises = [cycle for cycle, level in levels(events, "loadpending") if level == 1]
    # The store's ACK cycle is its request cycle + 1: the first edge P cycles after the ACK.
    assert rises == [start + PERIOD * k for k in range(1, len(rises) + 1)]
    assert rises[-1] <= stop < rises[-1] + PERIOD and len(rises) >= IRQS
    acks = of(events, "loadack")
    assert len(acks) == IRQS and all(a[0] > r for a, r in zip(acks, rises))
    handled = [e[3] for e in of(events, "trace") if e[2] == TRACE_BASE + 4]
    assert handled == list(range(IRQS))
