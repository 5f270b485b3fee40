"""The capture's pipelined parts: the split time-stamp counter and the entry FIFO."""

import random

import pytest

from latscope.events import Events
from latscope.link.parser import StreamParser
from latscope_defs.protocol import GATEWARE_VERSION, Source, irq_value, value_width
from latscope_gateware.capture_pipeline import CapturePipeline
from latscope_gateware.event_capture import CaptureFifo, FreeRunningCounter
from support.cases import parametrize_first_fast
from support.gateware_sim import byte_collector, lost_per_source, run, start_pipeline


def test_split_counter_counts_every_cycle_through_wraps():
    dut = FreeRunningCounter(8)  # halves of 4 bits: the high half steps every 16
    seen = []

    async def testbench(ctx):
        for _ in range(600):
            seen.append(ctx.get(dut.value))
            await ctx.tick()

    run(dut, testbench)
    assert seen == [cycle % 256 for cycle in range(600)]


@pytest.mark.parametrize("depth", [4, 8, 16])
def test_capture_fifo_keeps_order_and_room(depth):
    """One clock for both sides here (tests/gateware/test_cdc.py has two): `w_rdy` lags the level by
    up to four writes, which an unbroken burst makes up (it fills every row), and a write it
    allows never finds the FIFO full (it would overwrite an entry, and `read` would show
    it)."""
    rng = random.Random(depth)
    dut = CaptureFifo(12, depth)
    written, read = [], []

    async def testbench(ctx):
        # First with no reads at all: a burst fills the FIFO exactly.
        accepted = 0
        ctx.set(dut.w_en, 1)
        for value in range(3 * depth):
            ctx.set(dut.w_data, value)
            if ctx.get(dut.w_rdy):
                written.append(value)
                accepted += 1
            await ctx.tick()
        ctx.set(dut.w_en, 0)
        await ctx.tick().repeat(4)
        # All rows, and one more once the first entry has moved to the output register (its
        # row free) in time for the burst to see it.
        assert depth <= accepted <= depth + 1
        # The write side's count of rows in use: all but the one fetched into the output
        # register (it counts rows, not the output register).
        assert ctx.get(dut.w_level) == accepted - 1 and not ctx.get(dut.w_rdy)
        # Then random writes and reads.
        for cycle in range(4000):
            write, take = rng.random() < 0.5, rng.random() < (0.3 if cycle < 2000 else 0.7)
            value = rng.randrange(1 << 12)
            ctx.set(dut.w_en, write)
            ctx.set(dut.w_data, value)
            ctx.set(dut.entries.ready, take)
            if write and ctx.get(dut.w_rdy):
                written.append(value)
            if take and ctx.get(dut.entries.valid):
                read.append(ctx.get(dut.entries.payload))
            await ctx.tick()
        ctx.set(dut.w_en, 0)
        ctx.set(dut.entries.ready, 1)
        for _ in range(3 * (depth + 1) + 20):  # an entry every three cycles at most
            if ctx.get(dut.entries.valid):
                read.append(ctx.get(dut.entries.payload))
            await ctx.tick()

    run(dut, testbench)
    assert read == written
    assert len(written) > 400  # (depth 4: the pointers' round trip limits the rate)


# --- Loss accounting against ground truth ------------------------------------------------------

OVERFLOW_SOURCES = {
    Source.MARKER: 16,
    Source.IRQ: value_width(Source.IRQ),
    Source.EDGE0: 1,
    Source.EDGE1: 1,
}


def overflow_run(*, fifo_depth, marker_every, edge_every, link_every, cycles, drain):
    """Markers every ``marker_every`` cycles and IRQ/EDGE0 edges together (the IRQ output
    looped back to an edge channel) every ``edge_every`` cycles, into a capture pipeline whose link
    takes a byte every ``link_every`` cycles: sustained overflow. The IRQ edges are a
    trigger's, each with its delay (whose bits share the FIFO entry's loss field, so the
    losses wait for entries without one). Returns the events offered (stamped as the
    testbench applied them), the bytes out and the status counters."""
    dut = CapturePipeline(OVERFLOW_SOURCES, fifo_depth=fifo_depth, flush_after=400)
    offered, out, status = [], [], {}

    async def testbench(ctx):
        await start_pipeline(ctx, dut)
        level = 0
        for cycle in range(cycles):
            now = ctx.get(dut.now)
            marker = cycle % marker_every == 0
            edge = cycle % edge_every == 3
            level ^= edge
            ctx.set(dut.marker.valid, marker)
            ctx.set(dut.marker.payload, cycle & 0xFFFF)
            irq = irq_value(level, triggered=1, delay=cycle & 0x3FFF)
            ctx.set(dut.irq.valid, edge)
            ctx.set(dut.irq.payload, irq)
            ctx.set(dut.edge0.valid, edge)
            ctx.set(dut.edge0.payload, level)
            # EDGE1 now and then in the same cycle as a marker: several sources lose at once.
            both = marker and cycle % (7 * marker_every) == 0
            ctx.set(dut.edge1.valid, both)
            ctx.set(dut.edge1.payload, cycle & 1)
            offered.extend(
                [(now, Source.MARKER, cycle & 0xFFFF)] * marker
                + [(now, Source.IRQ, irq), (now, Source.EDGE0, level)] * edge
                + [(now, Source.EDGE1, cycle & 1)] * both
            )
            await ctx.tick()
        for source in OVERFLOW_SOURCES:
            ctx.set(getattr(dut, source.name.lower()).valid, 0)
        ctx.set(dut.enable, 0)  # STOP: the FIFO drains, the segment seals
        ctx.set(dut.stopping, 1)
        await ctx.tick().repeat(drain)
        status.update(
            events=ctx.get(dut.events), lost=ctx.get(dut.lost), fifo_max=ctx.get(dut.fifo_max)
        )

    run(
        dut,
        testbench,
        processes=[byte_collector(dut.bytes, out, lambda cycle: cycle % link_every == 0)],
    )
    return offered, bytes(out), status


@pytest.mark.slow
@pytest.mark.parametrize(
    "fifo_depth, marker_every, edge_every",
    [(4, 10, 23), (8, 10, 23), (16, 10, 23), (8, 5, 11), (8, 40, 97)],
)
def test_every_offered_event_is_delivered_or_counted_lost(fifo_depth, marker_every, edge_every):
    offered, out, status = overflow_run(
        fifo_depth=fifo_depth,
        marker_every=marker_every,
        edge_every=edge_every,
        link_every=8,
        cycles=3000,
        drain=12000,
    )
    parser = StreamParser(version=GATEWARE_VERSION)
    events = list(Events.concatenate([parser.feed(out), parser.finish()]))
    stats = parser.stats
    # The stream is intact and ends sealed: nothing dropped, no hole.
    assert (stats.segments_bad, stats.holes, stats.bytes_skipped) == (0, 0, 0)
    lost = lost_per_source(events)
    assert sum(lost.values()) > 0  # it did overflow
    delivered = [event for event in events if event[1] != Source.LOSS]
    for source in OVERFLOW_SOURCES:
        sent = [event for event in offered if event[1] == source]
        got = [event for event in delivered if event[1] == source]
        assert set(got) <= set(sent), source  # every delivered event is exact
        assert len(got) + lost.get(source, 0) == len(sent), source
    # STATUS agrees with the stream: events written, events lost.
    assert status["lost"] == sum(lost.values())
    assert status["events"] == len(delivered)


def burst_run(fifo_depth, burst):
    """A marker in each of ``burst`` consecutive cycles, nothing else, into a capture
    pipeline whose link takes a byte every 8 cycles; STATUS's counters after the drain."""
    dut = CapturePipeline(OVERFLOW_SOURCES, fifo_depth=fifo_depth, flush_after=400)
    status = {}

    async def testbench(ctx):
        await start_pipeline(ctx, dut)
        for cycle in range(burst):
            ctx.set(dut.marker.valid, 1)
            ctx.set(dut.marker.payload, cycle)
            await ctx.tick()
        ctx.set(dut.marker.valid, 0)
        await ctx.tick().repeat(200)  # the pipeline counts in the cycles after
        status.update(
            events=ctx.get(dut.events), lost=ctx.get(dut.lost), fifo_max=ctx.get(dut.fifo_max)
        )

    run(dut, testbench, processes=[byte_collector(dut.bytes, [], lambda c: c % 8 == 0)])
    return status


@parametrize_first_fast("fifo_depth", [4, 8])
def test_fifo_max_when_events_were_lost(fifo_depth):
    """What STATUS `fifo_max` says when events were dropped (docs/protocol.md, *Loss*): the
    write side refuses events while fewer than 4 rows are free as it sees them (its level
    lags by up to four writes), so one burst that overflows leaves the FIFO short of full
    (its first entry has moved to the output register meanwhile): fifo_max is depth - 1
    with events lost, never below depth - 3. Sustained overflow fills every row
    (``test_overflow_loss_counts_are_exact`` in test_cdc.py, and below)."""
    burst = burst_run(fifo_depth, fifo_depth + 4)
    assert burst["lost"] > 0 and burst["events"] + burst["lost"] == fifo_depth + 4
    assert burst["fifo_max"] == fifo_depth - 1
    sustained = overflow_run(
        fifo_depth=fifo_depth, marker_every=2, edge_every=5, link_every=8, cycles=600, drain=50
    )[2]
    assert sustained["lost"] > 0 and sustained["fifo_max"] == fifo_depth
