"""latscope through a network serial port: a simulated appliance behind Debian's ser2net,
reached at an ``rfc2217://127.0.0.1:PORT`` URL with the same capture code as a local port.

Every event that arrives is exact (the simulation's ground truth has it at that cycle);
a link that drops mid-capture ends the capture with an error naming the URL and leaves a
readable capture file with every event read before."""

import json

import numpy as np
import pytest

import latscope
from latscope.capture_file import load_capture
from latscope.device import DeviceError
from latscope.lab import network_url
from latscope.protocol import Source

from lab_farm import Processes, free_port, ser2net_command, start_simulation, wait_for_port

CAPTURED = (Source.MARKER, Source.IRQ, Source.EDGE0)


def truth_events(path):
    """{(cycle, source, value)} of the simulated DUT's pins and the IRQ edges it saw."""
    with open(path) as log:
        return {(cycle, int(Source[name]), value)
                for cycle, name, value in map(json.loads, log)}


def captured(capture):
    """[(stamp, source, value)] of the markers, IRQ and edge-0 events of a capture."""
    events = capture.events
    keep = np.isin(events.source, [int(source) for source in CAPTURED])
    return list(zip(events.stamp[keep].tolist(), events.source[keep].tolist(),
                    events.value[keep].tolist()))


@pytest.fixture
def network_appliance(tmp_path):
    """A simulated appliance served by ser2net on the loopback address: (URL, ser2net
    process, truth log)."""
    truth = tmp_path / "truth.jsonl"
    with Processes(tmp_path / "logs") as processes:
        pty = start_simulation(processes, "simulate", truth)
        port = free_port()
        ser2net = processes.start("ser2net", ser2net_command(pty, port))
        wait_for_port(port, 30, ser2net)
        yield network_url("127.0.0.1", port), ser2net, truth


@pytest.mark.timeout(120)
def test_capture_through_ser2net_is_exact_and_a_dropped_link_is_an_error(network_appliance,
                                                                        tmp_path):
    url, ser2net, truth = network_appliance
    with latscope.open(url) as dev:
        assert dev.identity.board == "sim"
        # An IRQ every 300 cycles: more events than the link carries, so the appliance's
        # FIFO overflows and it counts what it drops (a loss, never a wrong stamp).
        dev.configure_irq(period=300, jitter_mask=0x3f, width=25)
        dev.capture(events=100, timeout=60, output=tmp_path / "whole.lsc")

        # The link drops (ser2net killed) while the next capture runs.
        def drop_link(live, events):
            if events >= 40 and ser2net.poll() is None:
                ser2net.kill()
        with pytest.raises(DeviceError, match=r"rfc2217://127\.0\.0\.1:\d+.*link lost"):
            dev.capture(events=100_000, timeout=60, output=tmp_path / "cut.lsc",
                        on_progress=drop_link)

    truth = truth_events(truth)
    whole = load_capture(tmp_path / "whole.lsc")
    assert whole.metadata["port"] == url and whole.file_stats.complete
    stats = whole.parser_stats
    assert stats.segments_bad == 0 and stats.records_dropped == 0 and stats.lost_total > 0
    events = captured(whole)
    assert len(events) >= 60 and set(events) <= truth
    # Per source: whatever the DUT did between the first and the last event and did not
    # arrive, the appliance counted as lost (it also counts losses after the last event
    # that arrived, until STOP).
    first, last = events[0][0], events[-1][0]
    for source in CAPTURED:
        expected = [e for e in truth if first <= e[0] <= last and e[1] == source]
        delivered = [e for e in events if e[1] == source]
        assert len(delivered) <= len(expected) <= len(delivered) + stats.lost.get(int(source), 0)

    cut = load_capture(tmp_path / "cut.lsc")           # no END chunk, but readable
    assert not cut.file_stats.complete
    events = captured(cut)
    assert len(events) >= 40 and set(events) <= truth
