"""End to end: the appliance gateware in simulation, host commands shifted into its UART
receiver bit by bit, every byte its UART transmitter sends decoded from the pin and given to
the host's parser. A scripted DUT drives the appliance's pins and logs every change it makes
(the ground truth); the host must reconstruct exactly those events: stamps to the cycle,
values, order — or count them as lost, never get them wrong.

The host side is scripted by cycle, not by wall-clock time, so every run is the same. The
same simulation behind a pseudo-terminal, with the real ``Device`` code, is checked by
``test_device_identifies_the_simulation_through_a_pty``.
"""

import numpy as np
import pytest

from latscope.events import Events
from latscope.link.device import Device, IrqSettings, open_transport
from latscope.link.identity import Identity
from latscope.link.parser import StreamParser
from latscope.simulated.appliance import SimulatedAppliance
from latscope_defs.protocol import (
    GATEWARE_VERSION,
    HOLE_SOURCE,
    Command,
    Source,
    StartArgs,
    StatusReply,
    encode_command,
    hole_count,
)
from latscope_gateware.appliance import ApplianceConfig
from latscope_gateware.sim_device import ScriptedDut, ScriptedLink, SimulatedDevice

pytestmark = pytest.mark.slow

CAPTURED = (Source.MARKER, Source.IRQ, Source.EDGE0)
IRQ = IrqSettings(period=2000, jitter_mask=0x3F, width=25)


def run(*, cycles, fifo_depth=64, corrupt=(), **dut_options):
    """Identify, configure the IRQ generator, capture, stop, read status; returns the
    parsed events, parser statistics, status and the DUT's truth log."""
    stop_at = cycles - 6000  # leaves time to drain the FIFO and answer STATUS
    script = [
        (100, encode_command(Command.IDENTIFY)),
        (2500, encode_command(Command.IRQ_CONFIG, IRQ.encode())),
        (3000, encode_command(Command.START, StartArgs.const({"sources": 0xFFFF}))),
        (stop_at, encode_command(Command.STOP)),
        (stop_at + 4000, encode_command(Command.STATUS)),
    ]
    config = ApplianceConfig(
        clock_hz=100_000_000, uart_divisor=4, fifo_depth=fifo_depth, flush_after=2000
    )  # short segments: corruption costs less
    link = ScriptedLink(script)
    device = SimulatedDevice(
        config, ScriptedDut(**dut_options), link=link, corrupt=corrupt, max_cycles=cycles
    )
    device.run()

    # The identify reply is the first message; its widths and latencies set up the parser.
    probe = StreamParser(version=GATEWARE_VERSION)
    probe.feed(bytes(link.received))
    replies = dict(probe.replies)
    identity = Identity.from_reply(replies[Command.IDENTIFY])
    parser = identity.parser()
    events = Events.concatenate([parser.feed(bytes(link.received)), parser.finish()])
    status = StatusReply.from_bits(int.from_bytes(dict(parser.replies)[Command.STATUS], "little"))
    return identity, events, parser.stats, status, device.dut.truth


def by_source(events, source):
    mask = events.source == source
    return list(zip(events.stamp[mask].tolist(), events.value[mask].tolist()))


def truth_of(truth, source, first, last):
    return [
        (cycle, value)
        for cycle, name, value in truth
        if name == source.name and first <= cycle <= last
    ]


@pytest.fixture(scope="module")
def clean_run():
    return run(cycles=26000)


def test_identify_reports_the_build(clean_run):
    identity = clean_run[0]
    assert identity.clock_hz == 100_000_000 and identity.board == "sim"
    assert identity.marker_width == 16 and identity.edge_count == 4
    assert identity.fifo_depth == 64
    assert identity.latency[Source.MARKER] == 4 and identity.latency[Source.EDGE0] == 2


def test_capture_reconstructs_every_event_exactly(clean_run):
    identity, events, stats, status, truth = clean_run
    assert stats.segments_bad == 0 and stats.records_dropped == 0 and stats.bytes_skipped == 0
    assert not np.any(events.source == Source.LOSS)
    assert status.lost == 0 and status.capturing == 0
    first, last = int(events.stamp.min()), int(events.stamp.max())
    for source in CAPTURED:
        got = by_source(events, source)
        assert len(got) >= 8, source
        # Everything the DUT did between the first and last captured event, nothing else.
        assert got == truth_of(truth, source, first, last), source
    for source in CAPTURED:
        # Stream order is stamp order per source; across sources, corrected stamps may
        # invert by the difference of the pin latencies (docs/protocol.md).
        assert np.all(np.diff(events.of(source).stamp.astype(np.int64)) >= 0)
    irq_edges = [stamp for stamp, value in by_source(events, Source.IRQ) if value == 1]
    assert status.irq_edges == len(irq_edges) >= 8
    periods = np.diff(irq_edges)
    assert periods.min() >= IRQ.period and periods.max() <= IRQ.period + IRQ.jitter_mask
    assert len(set(periods.tolist())) > 1  # the jitter really spreads them


def test_overflow_is_counted_and_capture_goes_on():
    # Bursts of markers every 4 cycles overrun a 4-entry FIFO behind the slow link.
    identity, events, stats, status, truth = run(
        cycles=20000, fifo_depth=4, burst_every=3000, burst_length=40
    )
    assert stats.segments_bad == 0
    losses = events.value[events.source == Source.LOSS].astype(np.int64)
    lost_markers = int(sum(value >> 4 for value in losses if value & 0xF == Source.MARKER))
    assert lost_markers > 0
    assert status.lost == int(sum(value >> 4 for value in losses))
    first, last = int(events.stamp.min()), int(events.stamp.max())
    markers = by_source(events, Source.MARKER)
    expected = truth_of(truth, Source.MARKER, first, last)
    assert set(markers) <= set(expected)  # every delivered marker is exact
    assert len(markers) + lost_markers == len(expected)
    # Capture went on after the losses: markers stamped after the first loss arrived.
    # (Whether the very last one arrives depends on where the IRQ edges fall.)
    loss_stamps = events.stamp[events.source == Source.LOSS].astype(np.int64)
    assert any(stamp > int(loss_stamps.min()) for stamp, _ in markers)


def test_corrupted_bytes_cost_segments_not_correctness(clean_run):
    clean_events = clean_run[1]
    # Bytes 0..40 are the identify reply; corrupt a few of the event stream's bytes.
    identity, events, stats, status, truth = run(cycles=26000, corrupt=(60, 150, 151, 300))
    assert stats.segments_bad >= 1 and stats.records_dropped > 0 and stats.holes >= 1
    holes = (events.source == Source.LOSS) & (events.value & 0xF == HOLE_SOURCE)
    assert int(hole_count(events.value[holes]).sum()) == stats.records_dropped
    events = events[~holes]
    delivered = {
        (s, v, int(src))
        for s, v, src in zip(events.stamp.tolist(), events.value.tolist(), events.source.tolist())
    }
    clean = {
        (s, v, int(src))
        for s, v, src in zip(
            clean_events.stamp.tolist(), clean_events.value.tolist(), clean_events.source.tolist()
        )
    }
    assert delivered and delivered < clean  # nothing invented or mistimed
    assert len(delivered) + stats.records_dropped >= len(clean) - 2 * 255


def test_device_identifies_the_simulation_through_a_pty():
    with (
        SimulatedAppliance("sim:gateware", ["--fifo-depth", "32"]) as sim,
        Device(open_transport(sim.pty), reply_timeout=60) as device,
    ):
        identity = device.identify()
        status = device.status()
    assert identity.fifo_depth == 32 and identity.board == "sim"
    assert status["capturing"] is False
