"""latscope through a network serial port: a simulated appliance behind Debian's ser2net,
reached at an ``rfc2217://127.0.0.1:PORT`` URL with the same capture code as a local port.

Every event that arrives is exact (the simulation's ground truth has it at that cycle);
a link that drops mid-capture ends the capture with an error naming the URL and leaves a
readable capture file with every event read before."""

import json

import numpy as np
import pytest

import latscope
from latscope.capture.file import load_capture
from latscope.lab import network_url
from latscope.link.device import DeviceError
from latscope_defs.protocol import Source
from support.lab_farm import Processes, free_port, ser2net_command, start_simulation, wait_for_port

CAPTURED = (Source.MARKER, Source.IRQ, Source.EDGE0)


def truth_events(path):
    """{(cycle, source, value)} of the simulated DUT's pins and the IRQ edges it saw."""
    with open(path) as log:
        return {(cycle, int(Source[name]), value) for cycle, name, value in map(json.loads, log)}


def captured(capture):
    """[(stamp, source, value)] of the markers, IRQ and edge-0 events of a capture."""
    events = capture.events
    keep = np.isin(events.source, [int(source) for source in CAPTURED])
    return list(
        zip(events.stamp[keep].tolist(), events.source[keep].tolist(), events.value[keep].tolist())
    )


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


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_capture_through_ser2net_is_exact_and_a_dropped_link_is_an_error(
    network_appliance, tmp_path
):
    url, ser2net, truth = network_appliance
    with latscope.open(url) as dev:
        assert dev.identity.board == "sim"
        # An IRQ every 300 cycles: more events than the link carries, so the appliance's
        # FIFO overflows and it counts what it drops (a loss, never a wrong stamp).
        dev.configure_irq(period=300, jitter_mask=0x3F, width=25)
        dev.capture(events=100, timeout=60, output=tmp_path / "whole.lsc")

        # The link drops (ser2net killed) while the next capture runs.
        dropped_after = []  # the events the host had when it killed the link

        def drop_link(live, events):
            if events >= 40 and ser2net.poll() is None:
                dropped_after.append(events)
                ser2net.kill()

        with pytest.raises(DeviceError, match=r"rfc2217://127\.0\.0\.1:\d+.*link lost"):
            dev.capture(
                events=100_000, timeout=60, output=tmp_path / "cut.lsc", on_progress=drop_link
            )

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

    cut = load_capture(tmp_path / "cut.lsc")  # no END chunk, but readable
    assert not cut.file_stats.complete
    # Everything the host had received when the link dropped is in the file: all its events,
    # the overflow's LOSS records among them (how many of the first 40 those are depends
    # on how fast the host reads: 37 once, on a loaded machine).
    assert len(cut.events) >= dropped_after[0]
    events = captured(cut)
    assert events and set(events) <= truth


class _Server:
    """What `TelnetStream` hands on: data chunks and telnet commands, recorded."""

    def __init__(self):
        import queue

        self._read_buffer = queue.Queue()
        self.calls = []

    def _telnet_negotiate_option(self, command, option):
        self.calls.append(("negotiate", command, option))

    def _telnet_process_subnegotiation(self, suboption):
        self.calls.append(("sub", suboption))

    def _telnet_process_command(self, command):
        self.calls.append(("command", command))

    def data(self):
        chunks = []
        while not self._read_buffer.empty():
            chunks.append(self._read_buffer.get())
        return b"".join(chunks), len(chunks)


def test_telnet_stream_passes_data_in_chunks_and_commands_on():
    """latscope's RFC 2217 reader: data between IAC bytes in one chunk, an escaped 0xFF as
    data, negotiations and subnegotiations to pyserial's handlers, in any split of the
    stream into reads."""
    from serial.rfc2217 import DO, IAC, NOP, SB, SE, WILL

    from latscope.link.network_port import TelnetStream

    payload = bytes(range(256)) * 4
    escaped = payload.replace(IAC, IAC + IAC)
    stream = (
        IAC
        + WILL
        + b"\x2c"
        + escaped[:300]
        + IAC
        + SB
        + b"\x2c\x65"
        + IAC
        + IAC
        + b"\x01"
        + IAC
        + SE
        + escaped[300:]
        + IAC
        + NOP
        + IAC
        + DO
        + b"\x03"
    )
    for split in (1, 7, 64, len(stream)):
        server = _Server()
        telnet = TelnetStream(server)
        for start in range(0, len(stream), split):
            telnet.feed(stream[start : start + split])
        data, chunks = server.data()
        assert data == payload
        assert server.calls == [
            ("negotiate", WILL, b"\x2c"),
            ("sub", b"\x2c\x65\xff\x01"),
            ("command", NOP),
            ("negotiate", DO, b"\x03"),
        ]
        if split == len(stream):
            assert chunks <= 2 * 4 + 2  # a chunk per run between 0xFF bytes


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_labgrid_driver_on_a_local_appliance(tmp_path):
    """The plugin on a local port (LatscopeAppliance; here the gateware simulation, which
    latscope starts itself): labgrid's Environment loads it from `imports:`, the driver
    identifies, sets the IRQ generator, captures, gives the tables and the report."""
    from labgrid import Environment

    config = tmp_path / "env.yaml"
    config.write_text(
        "targets:\n  main:\n    resources:\n      LatscopeAppliance:\n"
        "        port: sim:gateware\n    drivers:\n      LatscopeDriver: {}\n"
        "imports:\n  - latscope.lab\n"
    )
    env = Environment(str(config))
    target = env.get_target("main")
    try:
        driver = target.get_driver("LatscopeDriver")  # activated
        assert driver.identify()["board"] == "sim"
        driver.configure_irq(period=1200, jitter_mask=0x3F, width=25)
        result = driver.capture(tmp_path / "local.lsc", events=60, timeout=60)
        rows = {row["name"]: row for row in driver.tables(tmp_path / "local.lsc")}
        assert rows == {row["name"]: row for row in result.rows()}
        assert rows["IL-a-1"]["samples"] >= 1  # the scripted DUT's IL_A test
        assert (
            driver.report(result, tmp_path / "report")["html"]
            == tmp_path / "report" / "report.html"
        )
        metadata = result.capture.metadata
        assert metadata["port"] == "sim:gateware" and metadata["irq"]["period"] == 1200
        assert metadata["test_info"] == "labgrid target main, sim:gateware"
    finally:
        target.deactivate_all_drivers()
