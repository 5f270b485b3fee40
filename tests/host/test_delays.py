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


def test_the_figure_draws_each_delay_and_rings_the_worst():
    """``plots.latency_by_delay``: the min..max band and the mean per delay, the worst delays
    (``DelayStats.rows``) ringed at their maxima; in a table's figures only with delays."""
    from latscope.report import plots

    rng = np.random.default_rng(5)
    delays = rng.integers(0, 12, 400)
    samples = rng.integers(100, 120, 400) + 7 * (delays == 9) + 3 * (delays == 2)
    table = TableAccumulator("IL-a-1", 1e8)
    table.add(samples, np.arange(400) * 1000, None, delays)
    rows = table.by_delay.rows(table.ns_per_stamp, None)
    figure = plots.table_figures(table)["by-delay"]
    (axes,) = figure.axes
    rings = [line for line in axes.lines if line.get_marker() == "o"]
    assert sorted((line.get_xdata()[0], line.get_ydata()[0]) for line in rings) == sorted(
        (row["delay_cycles"], row["max_ns"]) for row in rows if row["worst"]
    )
    (mean,) = [line for line in axes.lines if line.get_label() == "mean"]
    assert mean.get_ydata().tolist() == [row["mean_ns"] for row in rows]
    band = axes.collections[0].get_paths()[0].vertices[:, 1]
    assert band.min() == min(row["min_ns"] for row in rows)
    assert band.max() == max(row["max_ns"] for row in rows)
    plain = TableAccumulator("TSL-a-2", 1e8)
    plain.add(samples, np.arange(400) * 1000)
    assert "by-delay" not in plots.table_figures(plain)


def test_capture_checks_the_trigger_before_it_opens_a_port(tmp_path, capsys):
    """A wrong ``--irq-trigger`` or ``--irq-delay`` is one line and exit 2 before anything
    starts: the port named does not exist (opening it would say so), no file is made. Each
    option's text is its argparse type's to check (latscope.values.read_by: SystemExit)."""
    from latscope import cli

    def status(argv):
        try:
            return cli.main(argv)
        except SystemExit as exit:
            return exit.code

    output = tmp_path / "c.lsc"
    base = ["capture", "--port", str(tmp_path / "no-such-port"), "--output", str(output)]
    for arguments, says in [
        (["--irq-trigger", "IL_A:NO_POINT"], "no point 'NO_POINT'"),
        (["--irq-trigger", "IL_A"], "not TEST:POINT"),
        (["--irq-trigger", "IL_A:PARAM/0x1ffff"], "argument and mask"),
        (["--irq-trigger", "IL_A:PARAM", "--irq-delay", "0:10"], "not START:STOP:STEP"),
        (["--irq-trigger", "IL_A:PARAM", "--irq-delay", "0ns:100ns:0ns"], "step '0ns'"),
        (["--irq-trigger", "IL_A:PARAM", "--irq-delay", "50:10:1"], "stop '10'"),
        (["--irq-trigger", "IL_A:PARAM", "--irq-delay", "1.5"], "whole number"),
        (["--irq-trigger", "IL_A:PARAM", "--irq-delay", "5ms"], "not a delay"),
        (["--irq-delay", "0:10:1"], "needs --irq-trigger"),
    ]:
        assert status(base + arguments) == 2, arguments
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and says in error, (arguments, error)
        assert "no-such-port" not in error and not output.exists()


def test_the_metadata_records_the_trigger():
    """``capture_metadata`` keeps the trigger as used; ``check_metadata`` reads it and
    rejects a wrong one, naming the field."""
    import pytest

    from latscope.capture.metadata import MetadataError, check_metadata
    from latscope.capture.session import capture_metadata
    from latscope.capture.trigger import trigger_settings
    from latscope.link.device import IrqSettings
    from latscope.link.identity import Identity

    identity = Identity(clock_hz=100_000_000)
    trigger = trigger_settings("IL_A:PARAM/0x7f", "0:210ns:40ns", identity, IrqSettings())
    metadata = capture_metadata(identity, "sim:gateware", IrqSettings(), trigger=trigger)
    assert metadata["trigger"] == {
        "source": "MARKER",
        "match": trigger.match,
        "mask": trigger.mask,
        "every": 1,
        "start": 0,
        "stop": 21,
        "step": 4,
        "width": trigger.width,
        "arm": True,
        "enable": True,
    }
    check_metadata(metadata)
    assert "trigger" not in capture_metadata(identity, "sim:gateware", IrqSettings())
    for key, value in [("source", "IRQ"), ("every", 0), ("arm", 1), ("step", -1)]:
        with pytest.raises(MetadataError, match=f"trigger.{key}"):
            check_metadata({**metadata, "trigger": {**metadata["trigger"], key: value}})
