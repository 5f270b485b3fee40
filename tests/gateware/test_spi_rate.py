"""The HX8K's capture path at the SPI link's real rate (tests/support/spi_rate_sim.py): the
encoder, event FIFO and SPI target read by the MPSSE's model at 30 MHz in queued READ
transactions with pauses between them. To be quick, READs of 64 bytes with the pause scaled
down to keep the host's duty (4096-byte READs): the link's rate, the pauses finer grained.

80 markers at five times today's lossless rate arrive whole and exact: this checks the
capture path at that rate, not that the link sustains it (the FIFOs alone hold more than
80 markers; bench/spi_rate.py runs for milliseconds and shows the FIFO levels steady).
Above the link's rate the losses are counted exactly."""

import sys
from pathlib import Path

from latscope.link.spi_link import READ_BYTES
from latscope_defs.protocol import Source
from support.spi_rate_sim import BOARD, PAUSE_S, every, run

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from link_efficiency import TSL_THREADS, tsl_markers  # noqa: E402

#: Issue 31's goal on the TSL stream: 5x today's 293,621 markers/s (bench/link_efficiency.py:
#: 12 Mbaud at protocol version 3's 4.09 bytes per TSL marker).
FIVE_TIMES_TSL = 5 * 293_621
#: TSL-a-10's values, one round of its threads (thread k's T1, then thread k + 1's T2).
#: READs of this many bytes, the pause between them scaled from the host's READ_BYTES to keep
#: its duty.
SHORT_READS = {"read_bytes": 64, "pause_s": PAUSE_S * (1 + 64) / (1 + READ_BYTES)}
TSL_VALUES = tsl_markers(BOARD.appliance_config().link_clock_hz)[2][: 2 * TSL_THREADS].tolist()


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
