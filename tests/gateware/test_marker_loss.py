# amaranth: UnusedElaboratable=no
"""Fast markers never vanish: every strobe edge the marker port sees is delivered or counted
in a LOSS record of the marker source (and in STATUS `lost`), at every spacing, for the one-,
two- and four-phase front ends (docs/protocol.md, *Loss*; docs/markers.md)."""

import pytest
from amaranth.hdl import *

from latscope_defs.protocol import Source
from latscope_gateware.event_capture import EventCapture
from latscope_gateware.marker_port import MarkerPort
from support.gateware_sim import run

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
