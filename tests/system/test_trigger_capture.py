"""`latscope capture --irq-trigger --irq-delay` on sim:gateware (the appliance gateware in
Amaranth's simulator; its scripted DUT writes an IL_A PARAM 0x7f heartbeat every 2000 cycles
and answers each IRQ with the IL_A ISR markers): the delays as printed, every IRQ edge a
trigger's, each IL-a-1 sample with the delay of its edge, from the stream alone."""

import re
import subprocess
import sys

import numpy as np
import pytest

from latscope import cli
from latscope.analysis.delays import NO_DELAY
from latscope.analysis.pairing import analyze
from latscope.analysis.summary import analyze_capture
from latscope.capture.file import load_capture
from latscope_defs.markers import Point, Test, decode
from latscope_defs.protocol import Source, irq_delay, irq_level, irq_triggered

CAPTURE = [sys.executable, "-m", "latscope.cli", "capture", "--port", "sim:gateware"]
#: The delays asked for: 0, 40, .., 200 ns at the simulation's 100 MHz capture clock
#: (`latscope identify`): 0, 4, .., 20 cycles, printed as such.
DELAYS = "0:210ns:40ns"
SWEEP = [0, 4, 8, 12, 16, 20]


def heartbeats(events):
    """Stamps of the scripted DUT's heartbeat markers (IL_A PARAM 0x7f)."""
    markers = events.of(Source.MARKER)
    beat = [
        tuple(int(x) for x in decode(int(value))) == (Test.IL_A, Point.PARAM, 0x7F)
        for value in markers.value
    ]
    return markers.stamp.astype(np.int64)[np.array(beat, bool)]


@pytest.mark.slow
@pytest.mark.parametrize("periodic", [False, True], ids=["every-marker", "armed"])
def test_a_swept_trigger_gives_each_sample_its_delay(tmp_path, periodic):
    """Without the periodic generator (``--no-irq``) every heartbeat fires; with it (period
    3000 cycles, a heartbeat and a half) each period arms one firing at the next heartbeat,
    so some heartbeats fire nothing. Either way the delays run through the sweep in order,
    each edge is its heartbeat's stamp plus the trigger's offset plus its delay, the
    analysis gives each IL-a-1 sample its edge's delay, and the metadata holds the trigger.

    The capture stops at a number of events: about 8 per firing without the generator and
    9 per period with it (two IRQ edges, three ISR markers, two EDGE0 edges, the
    heartbeats), so both runs see more than a sweep of firings (6) in about 40,000
    simulated cycles."""
    path = tmp_path / "trigger.lsc"
    irq = ["--irq-period", "3000"] if periodic else ["--no-irq"]
    done = subprocess.run(
        [*CAPTURE, *irq, "--irq-trigger", "IL_A:PARAM/0x7f", "--irq-delay", DELAYS]
        + ["--events", "100", "--output", str(path)],
        capture_output=True,
        text=True,
        timeout=900,  # a hang only: the run stops at its events
    )
    assert done.returncode == 0, done.stderr
    printed = re.search(
        r"IRQ trigger: delays (\d+)\.\.(\d+) step (\d+) capture cycles", done.stderr
    )
    assert printed and [int(x) for x in printed.groups()] == [0, 20, 4], done.stderr
    assert ("armed by the periodic generator" in done.stderr) == periodic

    capture = load_capture(path)
    events, identity = capture.events, capture.identity
    trigger = capture.metadata["trigger"]
    assert (trigger["start"], trigger["stop"], trigger["step"]) == (0, 21, 4)
    assert trigger["source"] == "MARKER" and trigger["arm"] == periodic
    irq_events = events.of(Source.IRQ)
    value = irq_events.value.astype(np.int64)
    assert (
        len(value) >= 2 * len(SWEEP) and (irq_triggered(value) == 1).all()
    )  # no periodic edge shows
    rises = irq_level(value) == 1
    delays = irq_delay(value[rises])
    assert delays.tolist() == [SWEEP[n % len(SWEEP)] for n in range(len(delays))]
    # Each rise: its heartbeat (the latest before it) + offset + delay, in stamp units.
    beats = heartbeats(events)
    rise_stamps = irq_events.stamp.astype(np.int64)[rises]
    fired = beats[np.searchsorted(beats, rise_stamps) - 1]
    offset = identity.trigger_offset(Source.MARKER)
    assert (rise_stamps - fired).tolist() == [
        (int(d) << identity.stamp_shift) + offset for d in delays
    ]
    armed = len(np.unique(fired)) < len(beats[beats < rise_stamps[-1]])
    assert armed == periodic  # arming skips heartbeats; every one fires without it

    # The samples carry the delays of their edges, whole-capture and bounded analysis alike.
    table = analyze(events, capture.stamp_hz)["IL-a-1"]
    assert len(table.samples) >= 5 and (table.delays != NO_DELAY).all()
    of_rise = dict(zip(rise_stamps.tolist(), delays.tolist()))
    assert table.delays.tolist() == [of_rise[start] for start in table.starts.tolist()]
    rows = analyze_capture(path, background=False)[1]["IL-a-1"].by_delay.rows(
        1e9 / capture.stamp_hz, identity.clock_hz
    )
    assert [row["delay_cycles"] for row in rows] == sorted(set(table.delays.tolist()))
    assert sum(row["samples"] for row in rows) == len(table.samples)
    if not periodic:  # once: `latscope report` draws the latency-by-delay figure
        report = tmp_path / "report"
        assert cli.main(["report", str(path), "-o", str(report), "--no-exports"]) == 0
        assert (report / "figures" / "IL-a-1.by-delay.svg").stat().st_size > 1000
        assert "IL-a-1.by-delay.svg" in (report / "report.md").read_text()
