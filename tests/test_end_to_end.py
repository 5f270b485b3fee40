"""End to end: the appliance gateware in simulation, its UART bridged to a pty, the host's
device code and parser on the other side. The simulated DUT logs every pin change it makes
(the ground truth); the host must reconstruct exactly those events: stamps to the cycle,
values, order — or count them as lost, never get them wrong."""

import json

import numpy as np
import pytest

from latscope.device import Device, IrqSettings, open_transport
from latscope.parser import Events
from latscope.protocol import Source
from latscope.simulation import SimulatedAppliance

CAPTURED = (Source.MARKER, Source.IRQ, Source.EDGE0)


def capture(tmp_path, sim_args, *, irqs, period=900):
    truth_path = tmp_path / "truth.jsonl"
    with SimulatedAppliance("sim:gateware", [*sim_args, "--truth", str(truth_path)]) as sim, \
            Device(open_transport(sim.pty), reply_timeout=30) as device:
        identity = device.identify()
        device.configure_irq(IrqSettings(period=period, jitter_mask=0x3f, width=25))
        device.start()
        chunks, seen = [], 0
        for _ in range(100000):
            events = device.poll()
            chunks.append(events)
            seen += int(np.count_nonzero((events.source == Source.IRQ) & (events.value == 1)))
            if seen >= irqs:
                break
        device.stop()
        chunks.append(device.drain(quiet=1.0))
        chunks.append(device.parser.finish())
        status = device.status()
    truth = [json.loads(line) for line in truth_path.read_text().splitlines()]
    return identity, Events.concatenate(chunks), device.parser.stats, status, truth


def by_source(events, source):
    mask = events.source == source
    return list(zip(events.stamp[mask].tolist(), events.value[mask].tolist()))


def truth_of(truth, source, first, last):
    return [(cycle, value) for cycle, name, value in truth
            if name == source.name and first <= cycle <= last]


def test_identify_reports_the_build(tmp_path):
    with SimulatedAppliance("sim:gateware", ["--fifo-depth", "32"]) as sim, \
            Device(open_transport(sim.pty), reply_timeout=30) as device:
        identity = device.identify()
        status = device.status()
    assert identity.clock_hz == 100_000_000
    assert identity.marker_width == 16 and identity.edge_count == 4
    assert identity.fifo_depth == 32
    assert identity.latency[Source.MARKER] == 4 and identity.latency[Source.EDGE0] == 2
    assert status["capturing"] is False


def test_capture_reconstructs_every_event_exactly(tmp_path):
    identity, events, stats, status, truth = capture(tmp_path, [], irqs=8)
    assert stats.segments_bad == 0 and stats.records_dropped == 0
    assert not np.any(events.source == Source.LOSS)
    first, last = int(events.stamp.min()), int(events.stamp.max())
    for source in CAPTURED:
        got = by_source(events, source)
        assert got, source
        # Everything the DUT did between the first and last captured event, nothing else.
        assert got == truth_of(truth, source, first, last), source
    irq_edges = [stamp for stamp, value in by_source(events, Source.IRQ) if value == 1]
    assert status["irq_edges"] == len(irq_edges)
    periods = np.diff(irq_edges)
    assert periods.min() >= 900 and periods.max() <= 900 + 0x3f


def test_overflow_is_counted_and_capture_goes_on(tmp_path):
    # Bursts of markers every 2 cycles overrun a 4-entry FIFO behind a slow link.
    identity, events, stats, status, truth = capture(
        tmp_path, ["--fifo-depth", "4", "--burst-every", "1500", "--burst-length", "40"],
        irqs=4)
    losses = events.value[events.source == Source.LOSS]
    lost_markers = int(sum(int(v) >> 4 for v in losses if int(v) & 0xf == Source.MARKER))
    assert lost_markers > 0
    assert status["lost"] >= lost_markers
    first, last = int(events.stamp.min()), int(events.stamp.max())
    markers = by_source(events, Source.MARKER)
    expected = truth_of(truth, Source.MARKER, first, last)
    assert set(markers) <= set(expected)              # every delivered marker is exact
    assert len(markers) + lost_markers == len(expected)
    # Capture went on after the losses: the last IRQ's ISR markers arrived.
    assert markers[-1] == expected[-1]


def test_corrupted_bytes_cost_segments_not_correctness(tmp_path):
    identity, events, stats, status, truth = capture(
        tmp_path, ["--corrupt", "200,420,421,900"], irqs=10)
    assert stats.segments_bad >= 1 and stats.records_dropped > 0
    first, last = int(events.stamp.min()), int(events.stamp.max())
    for source in CAPTURED:
        got = by_source(events, source)
        expected = truth_of(truth, source, first, last)
        assert set(got) <= set(expected), source     # nothing invented or mistimed
        assert got == sorted(got)
    delivered = sum(len(by_source(events, source)) for source in CAPTURED)
    assert delivered > 0
