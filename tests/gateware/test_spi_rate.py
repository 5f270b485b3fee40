"""The HX8K's capture path at the SPI link's real rate (tests/support/spi_rate_sim.py): the
encoder, event FIFO and SPI target read by the MPSSE's model at 30 MHz in queued READ
transactions with pauses between them. To be quick, READs of 64 bytes with the pause scaled
down to keep the host's duty (4096-byte READs): the link's rate, the pauses finer grained.

make demo's stream at the lossless rate bench/link_efficiency.py claims for the HX8K (the
speed-up ``CLAIMED_SPEED`` of its timing, checked here to be the claim's edge): the start of
its burst that fills the FIFO most arrives whole and exact (200 events); 1.2 times as fast
into a 16-entry FIFO (400 events), the losses are counted exactly. These check the capture
path at the burst's rate, not that the FIFO holds the whole burst (bench/spi_rate.py runs it
for 2.5 ms through the board's FIFO).
80 TSL markers at five times today's lossless rate arrive whole and exact. Above the
link's rate the losses are counted exactly."""

import sys
from pathlib import Path

import pytest

from latscope.link.mpsse import ASSUMED_COMMAND_S
from latscope.link.spi_link import READ_BYTES
from latscope_defs.protocol import Source
from support.spi_rate_sim import BOARD, PAUSE_S, every, run

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from link_efficiency import (  # noqa: E402
    RATE_TOLERANCE,
    TSL_THREADS,
    demo_events,
    event_bytes,
    fifo_levels,
    played,
    spi_bytes_per_s,
    spi_duty,
    tsl_markers,
)
from spi_rate import DEMO_SOURCES, OVERFLOW_RATE, as_events, demo_burst, demo_played  # noqa: E402

#: Issue 31's goal on the TSL stream: 5x today's 293,621 markers/s (bench/link_efficiency.py:
#: 12 Mbaud at protocol version 3's 4.09 bytes per TSL marker).
FIVE_TIMES_TSL = 5 * 293_621
#: The speed-up of make demo's timing at its lossless rate on the HX8K, as
#: bench/link_efficiency.py finds it (``lossless_rate``; checked below).
CLAIMED_SPEED = 4.136860997958088
#: READs of this many bytes, the pause between them scaled from the host's READ_BYTES to keep
#: its duty.
SHORT_READS = {"read_bytes": 64, "pause_s": PAUSE_S * (1 + 64) / (1 + READ_BYTES)}
TSL_VALUES = tsl_markers(BOARD.appliance_config().link_clock_hz)[2][: 2 * TSL_THREADS].tolist()
CARRIED = spi_bytes_per_s(BOARD.spi_hz, spi_duty(BOARD.spi_hz, ASSUMED_COMMAND_S))
#: Events of make demo's burst per run: the start of it (bench/spi_rate.py runs 2.5 ms).
DEMO_EVENTS = 200
#: The overflow run's: its first 200 fit a 16-entry FIFO at 1.2x (measured); 400 overflow it.
OVERFLOW_EVENTS = 400


def demo_fifo_max(speed):
    """The model's highest event FIFO level of make demo's stream played ``speed`` times
    faster on the HX8K's link, and its bytes per second."""
    demo, demo_hz = demo_events(None)
    fast = played(demo, 1 / speed)
    stamp, size = event_bytes(demo_hz, fast)
    span = (int(stamp[-1]) - int(stamp[0])) / demo_hz
    return int(fifo_levels(demo_hz, stamp, size, CARRIED).max()), size.sum() / span


def test_the_claimed_speed_is_the_edge_of_the_lossless_rate():
    """At the claimed speed-up the stream's bursts fit the FIFO and its bytes the link; a
    step faster they do not fit the FIFO."""
    level, byte_rate = demo_fifo_max(CLAIMED_SPEED)
    assert level < BOARD.fifo_depth and byte_rate < CARRIED
    assert demo_fifo_max(CLAIMED_SPEED * (1 + 2 * RATE_TOLERANCE))[0] >= BOARD.fifo_depth


@pytest.fixture(scope="module")
def burst_start():
    """The first event of make demo's burst that fills the FIFO most at the claimed rate."""
    return demo_burst(CLAIMED_SPEED, 0, CARRIED)[0]


def test_make_demos_burst_at_the_claimed_rate_arrives_whole_and_exact(burst_start):
    first = burst_start
    events = as_events(demo_played(CLAIMED_SPEED), first, DEMO_EVENTS)
    result = run(events, sources=DEMO_SOURCES, **SHORT_READS)
    assert result.received == result.sent
    assert result.lost == {} and result.segments_bad == 0


def test_make_demos_burst_faster_into_a_small_fifo_loses_events_counted_exactly(burst_start):
    first = burst_start
    events = as_events(demo_played(OVERFLOW_RATE * CLAIMED_SPEED), first, OVERFLOW_EVENTS)
    result = run(events, sources=DEMO_SOURCES, fifo_depth=16, **SHORT_READS)
    lost = sum(result.lost.values())
    assert lost > 0
    assert len(result.received) + lost == len(result.sent)
    sent = iter(result.sent)
    assert all(event in sent for event in result.received)  # in order, each as applied
    assert result.segments_bad == 0


def test_tsl_markers_at_five_times_todays_rate_arrive_whole_and_exact():
    result = run(every(80, FIVE_TIMES_TSL, TSL_VALUES), **SHORT_READS)
    assert result.received == result.sent
    assert result.lost == {} and result.segments_bad == 0


def test_above_the_links_rate_every_event_is_delivered_or_counted_lost():
    """Markers every 4 link cycles (21 M/s, about 13x what the link carries) into a
    16-entry event FIFO: it overflows, and the delivered events plus the LOSS records'
    counts are exactly the markers applied."""
    markers = [(4 * n, Source.MARKER, value) for n, value in enumerate(TSL_VALUES * 10)]
    result = run(markers, fifo_depth=16, **SHORT_READS)
    lost = result.lost.get(Source.MARKER, 0)
    assert lost > 0 and set(result.lost) == {Source.MARKER}
    assert len(result.received) + lost == len(result.sent)
    sent = iter(result.sent)
    assert all(event in sent for event in result.received)  # in order, each as applied
    assert result.segments_bad == 0
