# amaranth: UnusedElaboratable=no
"""Trace-port front end: exact latency, both strobe edges, back-to-back markers, data skew."""

import random

import pytest

from latscope_gateware.marker_port import MarkerPort
from support.gateware_sim import run


def simulate(dut, changes, cycles, lost=None):
    """Drives the pins and returns the events as [(cycle, payload)]; appends each cycle's
    ``lost`` to the list ``lost``, if given.

    ``changes`` maps a cycle to ``(strobe, data)``: those levels are set right after clock edge
    ``cycle`` (so they are present during that cycle) and held until the next change."""
    events = []
    lost = [] if lost is None else lost

    async def testbench(ctx):
        for cycle in range(cycles):
            if cycle in changes:
                strobe, data = changes[cycle]
                ctx.set(dut.strobe, strobe)
                ctx.set(dut.data, data)
            if ctx.get(dut.events.valid):
                events.append((cycle, ctx.get(dut.events.payload)))
            lost.append(ctx.get(dut.lost))
            await ctx.tick()

    run(dut, testbench)
    return events


def test_default_latency_is_four_cycles():
    dut = MarkerPort()
    assert dut.latency == 4  # 2 synchronizer stages + sample_delay 2
    assert simulate(dut, {10: (1, 0xBEEF)}, cycles=30) == [(14, 0xBEEF)]


@pytest.mark.parametrize("sync_stages", [2, 3])
@pytest.mark.parametrize("sample_delay", [0, 1, 2, 5])
def test_both_strobe_edges_at_exact_latency(sync_stages, sample_delay):
    dut = MarkerPort(data_width=8, sync_stages=sync_stages, sample_delay=sample_delay)
    assert dut.latency == sync_stages + sample_delay
    latency = sync_stages + sample_delay
    events = simulate(dut, {10: (1, 0x5A), 30: (0, 0xA5)}, cycles=50)
    assert events == [(10 + latency, 0x5A), (30 + latency, 0xA5)]


@pytest.mark.parametrize("sample_delay", [0, 1, 2, 3])
def test_back_to_back_markers_lose_all_but_the_last(sample_delay):
    # The strobe toggles in four consecutive cycles, each store with its own data: each edge
    # overwrites the data the one before still waits for, so with a sample delay only the
    # last is delivered (with its own data) and the three before are counted lost.
    dut = MarkerPort(sample_delay=sample_delay)
    strobe_levels = {10: 1, 11: 0, 12: 1, 13: 0}
    changes = {cycle: (level, 0x100 + cycle) for cycle, level in strobe_levels.items()}
    lost = []
    events = simulate(dut, changes, cycles=40, lost=lost)
    latency = 2 + sample_delay
    delivered = (10, 11, 12, 13) if sample_delay == 0 else (13,)
    assert events == [(edge + latency, 0x100 + edge) for edge in delivered]
    assert sum(lost) == 4 - len(delivered)


@pytest.mark.parametrize("sample_delay", [1, 2, 3])
def test_data_that_lags_the_strobe_is_still_sampled(sample_delay):
    # The data lines settle one cycle after the strobe (skew across the GPIO port).
    dut = MarkerPort(sample_delay=sample_delay)
    events = simulate(dut, {0: (0, 0x1111), 10: (1, 0x1111), 11: (1, 0x2222)}, cycles=30)
    assert events == [(10 + 2 + sample_delay, 0x2222)]


def test_without_sample_delay_lagging_data_is_missed():
    # The counterpart of the test above: with no delay the old data is taken.
    dut = MarkerPort(sample_delay=0)
    events = simulate(dut, {0: (0, 0x1111), 10: (1, 0x1111), 11: (1, 0x2222)}, cycles=30)
    assert events == [(12, 0x1111)]


@pytest.mark.parametrize("sample_delay", [0, 2, 4])
def test_data_is_sampled_exactly_sample_delay_cycles_after_the_edge(sample_delay):
    # Data present in cycle edge + sample_delay is taken; a change one cycle later is not.
    dut = MarkerPort(sample_delay=sample_delay)
    sample = 10 + sample_delay
    changes = {0: (0, 0x0001), 10: (1, 0x0002), sample: (1, 0x0003), sample + 1: (1, 0x0004)}
    events = simulate(dut, changes, cycles=30)
    assert events == [(10 + 2 + sample_delay, 0x0003)]


def test_no_event_without_a_strobe_change():
    dut = MarkerPort()
    # Data wiggles with the strobe low, then high (one marker), then high for a long time.
    changes = {cycle: (0, cycle * 0x0101) for cycle in range(0, 20)}
    changes.update({cycle: (1, cycle * 0x0303) for cycle in range(20, 60)})
    assert simulate(dut, changes, cycles=80) == [(24, 22 * 0x0303)]


def test_random_markers_match_a_reference_model():
    # Stores with random spacing, each writing new data with its strobe edge: an edge is
    # delivered, with its store's data, unless another follows within the sample delay.
    rng = random.Random(7)
    sample_delay, cycles = 3, 600
    strobe = [0] * cycles
    data = [0] * cycles
    for cycle in range(1, cycles):
        store = rng.random() < 0.3
        strobe[cycle] = strobe[cycle - 1] ^ store
        data[cycle] = rng.getrandbits(16) if store else data[cycle - 1]
    dut = MarkerPort(sample_delay=sample_delay)
    lost = []
    events = simulate(
        dut, {c: (strobe[c], data[c]) for c in range(cycles)}, cycles=cycles, lost=lost
    )
    edges = [c for c in range(1, cycles) if strobe[c] != strobe[c - 1]]
    end = cycles - dut.latency
    expected = [
        (c + dut.latency, data[c])
        for c, after in zip(edges, edges[1:] + [cycles])
        if after - c > sample_delay and c < end
    ]
    assert len(expected) > 50
    assert events == expected
    assert len(events) + sum(lost) == len([c for c in edges if c < end])


def test_parameters_are_checked():
    with pytest.raises(ValueError):
        MarkerPort(sample_delay=-1)
    with pytest.raises(ValueError):
        MarkerPort(sync_stages=1)
    with pytest.raises(ValueError):
        MarkerPort(data_width=0)
