# amaranth: UnusedElaboratable=no
"""Fast markers never vanish: every strobe edge the marker port sees is delivered or counted
in a LOSS record of the marker source (and in STATUS `lost`), at every spacing, for the one-,
two- and four-phase front ends (docs/protocol.md, *Loss*; docs/markers.md)."""

import pytest
from amaranth.hdl import *

from latscope.events import Events
from latscope.link.identity import Identity
from latscope.link.parser import StreamParser
from latscope_defs.protocol import (
    GATEWARE_VERSION,
    Command,
    Source,
    StartArgs,
    StatusReply,
    encode_command,
)
from latscope_gateware.appliance import ApplianceConfig
from latscope_gateware.event_capture import EventCapture
from latscope_gateware.marker_port import MarkerPort
from latscope_gateware.sim_device import ScriptedDut, ScriptedLink, SimulatedDevice
from support.gateware_sim import lost_per_source, run

BURST = 5  # strobe edges per burst
GAP = 30  # cycles from one burst's start to the next's: far more than a burst and latency


class _Bench(Elaboratable):
    """Strobe samples and data lines -> marker port -> time-stamper with loss accounting."""

    def __init__(self, phases):
        self.phases = phases
        self.marker = MarkerPort(phases=phases)
        self.capture = EventCapture(
            {Source.MARKER: 16},
            front_end_losses={Source.MARKER: self.marker.most_lost},
            fifo_depth=64,
            stamp_shift=phases.bit_length() - 1,
        )

    def elaborate(self, platform):
        m = Module()
        m.submodules.marker = marker = self.marker
        m.submodules.capture = capture = self.capture
        m.d.comb += [
            capture.enable.eq(1),
            capture.marker.valid.eq(marker.events.valid),
            capture.marker.payload.eq(marker.events.payload),
            capture.marker_lost.eq(marker.lost),
        ]
        if self.phases > 1:
            m.d.comb += capture.phase[0].eq(marker.phase)
        return m


def _stores(phases, spacing, bursts):
    """The strobe edges' sample slots (1/``phases`` cycles): bursts of :data:`BURST` edges
    ``spacing`` cycles apart (one slot apart for spacing 0), each burst starting in another
    slot of its cycle."""
    step = spacing * phases or 1
    return [
        (GAP * (burst + 1) * phases + burst % phases + edge * step)
        for burst in range(bursts)
        for edge in range(BURST)
    ]


def _simulate(phases, spacing, bursts=8):
    """Drives the stores (store n, from 1, writes data n and toggles the strobe in its slot)
    and returns the delivered markers [(stamp, data)], the LOSS records' marker count, STATUS
    `lost` and the stores' slots. As from an input register, a cycle's strobe samples reach
    the port a cycle later (the port's data lines have a stage more for it)."""
    bench = _Bench(phases)
    slots = _stores(phases, spacing, bursts)
    cycles = (slots[-1] // phases) + GAP
    delivered, loss_counts, status = [], [], {}

    async def testbench(ctx):
        entries = bench.capture.entries
        ctx.set(entries.ready, 1)
        register = 1 if phases > 1 else 0
        for cycle in range(cycles + 40):
            sample_cycle = cycle - register
            samples = [
                sum(slot <= sample_cycle * phases + k for slot in slots) & 1 for k in range(phases)
            ]
            ctx.set(bench.marker.strobe, Cat(*samples))
            ctx.set(bench.marker.data, sum(slot < (cycle + 1) * phases for slot in slots))
            if ctx.get(entries.valid):
                entry = ctx.get(entries.payload)
                if entry.loss_valid:
                    assert entry.loss_source == Source.MARKER
                    loss_counts.append(entry.detail.loss_count)
                if entry.present.MARKER:
                    delivered.append((entry.stamp, entry.value.MARKER))
            await ctx.tick()
        status["lost"] = ctx.get(bench.capture.lost)
        status["events"] = ctx.get(bench.capture.events)

    run(bench, testbench)
    return delivered, sum(loss_counts), status, slots, bench.marker.min_spacing


@pytest.mark.parametrize("spacing", range(6))
@pytest.mark.parametrize("phases", [1, 2, 4])
def test_every_strobe_edge_is_delivered_or_counted_lost(phases, spacing):
    if phases == 1 and spacing == 0:
        pytest.skip("one sample a cycle: two edges between samples leave no trace to count")
    delivered, lost, status, slots, min_spacing = _simulate(phases, spacing)
    assert len(delivered) + lost == len(slots)
    assert status == {"lost": lost, "events": len(delivered)}
    # Every delivered marker is its own store's: its data, and its stamp a fixed latency
    # after its slot (the same for every marker, at every spacing).
    offsets = {stamp - slots[data - 1] for stamp, data in delivered}
    assert len(offsets) == 1
    assert [data for _, data in delivered] == sorted({data for _, data in delivered})
    # The documented minimum spacing: nothing lost at it and above, something below it.
    assert (lost == 0) == (spacing >= min_spacing)


def test_offsets_are_the_same_at_every_spacing():
    """The delivered markers' latency does not depend on how close the markers came."""
    for phases in (1, 2, 4):
        offsets = set()
        for spacing in range(0 if phases > 1 else 1, 6):
            delivered, _, _, slots, _ = _simulate(phases, spacing, bursts=phases)
            offsets |= {stamp - slots[data - 1] for stamp, data in delivered}
        assert len(offsets) == 1, phases


class _MarkerBurst(SimulatedDevice):
    """The appliance, a host that starts a capture of ``sources``, stops it and asks STATUS,
    and a DUT that writes ``markers`` ({capture cycle: value}, a store each)."""

    def __init__(self, markers, sources):
        start = StartArgs.const({"sources": sum(1 << source for source in sources)})
        script = [
            (100, encode_command(Command.IDENTIFY)),
            (4000, encode_command(Command.START, start)),
            (7000, encode_command(Command.STOP)),
            (9000, encode_command(Command.STATUS)),
        ]
        config = ApplianceConfig(clock_hz=100_000_000, uart_divisor=4, fifo_depth=16, sump_depth=0)
        super().__init__(config, ScriptedDut(), link=ScriptedLink(script), max_cycles=11000)
        self.markers = markers

    async def dut_process(self, ctx):
        app, strobe = self.appliance, 0
        while True:
            await ctx.tick(self.domain)
            value = self.markers.get(ctx.get(self.bench.cycle))
            if value is not None:
                strobe ^= 1
                ctx.set(app.marker_data, value)
                ctx.set(app.marker_strobe, strobe)


@pytest.mark.parametrize("captured", [True, False], ids=["markers captured", "markers off"])
def test_the_appliance_reports_too_close_markers_as_lost(captured):
    """Through the whole appliance: a burst of three markers a cycle apart gives its last
    marker and a LOSS record of two; STATUS counts them; a capture without the marker source
    counts none of them."""
    markers = {5000: 0x1111, 5001: 0x2222, 5002: 0x3333, 5100: 0x4444}
    device = _MarkerBurst(markers, [Source.MARKER] if captured else [Source.IRQ])
    device.run()
    received = bytes(device.link.received)
    probe = StreamParser(version=GATEWARE_VERSION)
    probe.feed(received)
    parser = Identity.from_reply(dict(probe.replies)[Command.IDENTIFY]).parser()
    events = Events.concatenate([parser.feed(received), parser.finish()])
    status = StatusReply.from_bits(int.from_bytes(dict(parser.replies)[Command.STATUS], "little"))
    delivered = [value for _, source, value in events if source == Source.MARKER]
    lost = lost_per_source(events)
    if captured:
        assert delivered == [0x3333, 0x4444]
        assert lost == {Source.MARKER: 2} and status.lost == 2
    else:
        assert delivered == [] and lost == {} and status.lost == 0
