"""Each sample's trigger delay from its IRQ record (latscope.analysis.delays) and the table of
latency by delay in every report format (report.delay_sweep)."""

import numpy as np

from latscope.analysis.delays import NO_DELAY, WORST_DELAYS, DelayStats, TriggerDelays
from latscope.analysis.statistics import TableAccumulator
from latscope.report.delay_sweep import DelaySweep
from latscope_defs.protocol import Source, irq_value


def test_samples_get_the_delay_of_the_triggered_edge_they_start_at():
    """Triggered rises give their delay; a periodic rise, a fall or another stamp none."""
    stamp = np.array([10, 20, 30, 40, 50], np.int64)
    source = np.array([Source.IRQ, Source.IRQ, Source.MARKER, Source.IRQ, Source.IRQ], np.uint8)
    value = np.array(
        [irq_value(1, 1, 7), irq_value(0, 1, 7), 5, irq_value(1), irq_value(1, 1, 0)], np.uint64
    )
    delays = TriggerDelays()
    assert not delays and delays.of(np.array([10])).tolist() == [NO_DELAY]
    delays.feed(stamp, source, value)
    assert delays.of(np.array([10, 20, 30, 40, 50, 11])).tolist() == [
        7,
        NO_DELAY,
        NO_DELAY,
        NO_DELAY,
        0,
        NO_DELAY,
    ]


def test_latency_by_delay_is_exact_across_batches_and_marks_the_worst():
    rng = np.random.default_rng(3)
    delays = rng.integers(0, 8, 500)
    samples = rng.integers(100, 200, 500) + 10 * delays
    delays[::50] = NO_DELAY  # samples of no triggered edge are left out
    stats = DelayStats()
    for part in np.array_split(np.arange(500), 7):
        stats.add(delays[part], samples[part])
    rows = stats.rows(ns_per_stamp=10.0, clock_hz=1e8)
    for row in rows:
        mine = samples[delays == row["delay_cycles"]]
        assert row["samples"] == len(mine) and row["delay_ns"] == row["delay_cycles"] * 10
        assert (row["min_ns"], row["max_ns"]) == (mine.min() * 10.0, mine.max() * 10.0)
        assert np.isclose(row["mean_ns"], mine.mean() * 10)
    by_max = sorted(rows, key=lambda row: (-row["max_ns"], row["delay_cycles"]))
    assert [row["worst"] for row in by_max] == [True] * WORST_DELAYS + [False] * (8 - WORST_DELAYS)


def test_the_section_shows_each_delay_in_text_html_and_csv():
    table = TableAccumulator("IL-a-1", 1e8)
    table.add(np.array([30, 50, 40]), np.array([0, 100, 200]), None, np.array([2, 2, 5]))
    section = DelaySweep()
    row = {
        "name": "IL-a-1",
        **section.fields("IL-a-1", table, {"run": {"device": {"clock_hz": 1e8}}}),
    }
    text = section.text({"tables": [row]})
    assert "IL-a-1:" in text and len(text.splitlines()) == 5  # intro, name, header, 2 delays
    assert section.blocks(row)[0].rows[0][:6] == ["2", "20.0", "2", "300.0", "500.0", "400.0"]
    assert section.csv_cells(row) == [2, 2]
    empty = TableAccumulator("TSL-a-2", 1e8)
    assert section.fields("TSL-a-2", empty, {"run": {"device": {}}}) == {"by_delay": []}
