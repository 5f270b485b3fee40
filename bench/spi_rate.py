"""The HX8K's capture path at the SPI link's real rate: no loss at 5x today's event rate.

Simulates (tests/support/spi_rate_sim.py) the HX8K's encoder, event FIFO and SPI target at
its 84 MHz clock, read by a model of the FT2232H's MPSSE at 30 MHz in the READ transactions
of 4096 bytes the host queues, with the pause the queue leaves between them (five commands
executed without clocking, at ``latscope.link.mpsse.ASSUMED_COMMAND_S`` each), for
``--ms`` milliseconds of events (two such pauses at the default 2.5 ms), then reads the
stream through and decodes it with the host's parser. Three runs:

* TSL-a-10's markers (bench/link_efficiency.py's ``tsl_markers``) at 5x today's lossless
  rate on the TSL stream (12 Mbaud, protocol version 3);
* make demo's events (``bench/data/demo-events.npz``: markers, bus writes, IRQ and two edge
  channels, the demo's sources and widths) in their order and relative timing, time
  compressed to 5x today's lossless rate on that stream;
* the TSL markers at twice what the link carries at the derived duty: the FIFO overflows,
  and the delivered events plus the LOSS records' counts must be exactly those applied.

Prints, per run: events applied and delivered, losses, the simulated time, the event FIFO's
highest level, bytes per event on the link. Exit status 1 if a 5x run loses an event or
delivers one not as applied, or the overflow run's counts do not add up.
Run: ``.venv/bin/python bench/spi_rate.py`` (a few CPU minutes per run).
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from link_efficiency import (
    LINK_BYTES_PER_S,
    bytes_per_event,
    demo_events,
    spi_bytes_per_s,
    spi_duty,
    tsl_markers,
)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from latscope.link.mpsse import ASSUMED_COMMAND_S  # noqa: E402
from latscope_defs.protocol import IrqValue, Source  # noqa: E402
from support.spi_rate_sim import BOARD, run  # noqa: E402

RATE_GOAL = 5
LINK_HZ = BOARD.appliance_config().link_clock_hz
#: The demo's sources and value widths (its simulated appliance's: a 16-bit marker port,
#: the memory bus's 32-bit writes, the IRQ output, edge channels 0 and 1).
DEMO_SOURCES = {
    Source.MARKER: 16,
    Source.BUS: 32,
    Source.IRQ: IrqValue.as_shape().size,
    Source.EDGE0: 1,
    Source.EDGE1: 1,
}


def today(stamp_hz, traffic):
    """Today's lossless event rate of ``traffic`` on the 12 Mbaud UART, protocol version 3."""
    return LINK_BYTES_PER_S / bytes_per_event(stamp_hz, traffic, version=3)[0]


def tsl_run(rate_hz, duration_s):
    """TSL-a-10's markers at ``rate_hz`` on the link clock for ``duration_s``."""
    values = tsl_markers(LINK_HZ)[2]
    count = int(rate_hz * duration_s)
    return [
        (round(n * LINK_HZ / rate_hz), Source.MARKER, int(values[n % len(values)]))
        for n in range(count)
    ]


def demo_run(rate_hz, duration_s):
    """make demo's events in order, their times scaled so that they come at ``rate_hz`` on
    average, for ``duration_s``; an event that would share a cycle with the previous one of
    its source goes a cycle later."""
    (stamp, source, value), demo_hz = demo_events(None)
    mean_hz = len(stamp) / ((int(stamp[-1]) - int(stamp[0])) / demo_hz)
    scale = LINK_HZ / demo_hz * mean_hz / rate_hz
    events, last = [], {}
    for at, src, val in zip(stamp.tolist(), source.tolist(), value.tolist()):
        cycle = max(round((at - int(stamp[0])) * scale), last.get(src, -1) + 1)
        if cycle >= duration_s * LINK_HZ:
            break
        last[src] = cycle
        events.append((cycle, Source(src), val))
    events.sort(key=lambda event: event[0])
    return events


def report(label, events, **options):
    """Runs ``events``; prints the figures; returns the result."""
    cpu = time.process_time()
    result = run(events, **options)
    lost = sum(result.lost.values())
    span = events[-1][0] / LINK_HZ
    print(
        f"{label}\n  {len(result.sent):,} events in {span * 1e3:.3f} ms "
        f"({len(result.sent) / span / 1e6:.3f} M/s), {result.sim_s * 1e3:.3f} ms simulated "
        f"to read the stream through; delivered {len(result.received):,}, lost {lost:,}; "
        f"bad segments {result.segments_bad}; event FIFO at most "
        f"{result.fifo_max} of {options.get('fifo_depth') or BOARD.fifo_depth}; "
        f"{result.stream_bytes / len(result.sent):.2f} B per event on the link; "
        f"{time.process_time() - cpu:.0f} CPU s"
    )
    # The chunks' lengths are the target's FIFO level as each chunk starts: in a steady
    # state the second half of the run looks like the first.
    halves = np.array_split(np.array(result.levels), 2)
    print(
        "  SPI target's FIFO level at each chunk (bytes, at most 255): mean "
        + " then ".join(f"{half.mean():.0f} (max {half.max()})" for half in halves)
        + " in the two halves of the run"
    )
    return result


def main(argv=None):
    options = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    options.add_argument("--ms", type=float, default=2.5, help="milliseconds of events per run")
    args = options.parse_args(argv)
    duration = args.ms / 1e3
    duty = spi_duty(BOARD.spi_hz, ASSUMED_COMMAND_S)
    carried = spi_bytes_per_s(BOARD.spi_hz, duty)
    print(
        f"HX8K capture path at {LINK_HZ / 1e6:g} MHz, MPSSE model at {BOARD.spi_hz / 1e6:g} MHz,"
        f" duty {duty:.4f} (stream {carried / 1e6:.3f} MB/s)\n"
    )
    tsl = tsl_markers(LINK_HZ)
    tsl_today = today(LINK_HZ, tsl)
    (stamp, source, value), demo_hz = demo_events(None)
    demo_today = today(demo_hz, (stamp, source, value))
    ok = True
    for label, events, sources in (
        (
            f"TSL markers at {RATE_GOAL}x today's {tsl_today:,.0f}/s",
            tsl_run(RATE_GOAL * tsl_today, duration),
            None,
        ),
        (
            f"make demo's events at {RATE_GOAL}x today's {demo_today:,.0f}/s",
            demo_run(RATE_GOAL * demo_today, duration),
            DEMO_SOURCES,
        ),
    ):
        result = report(label, events, sources=sources)
        exact = result.received == result.sent and not result.lost and not result.segments_bad
        print(f"  {'no loss, every event as applied' if exact else 'LOSS OR DAMAGE'}")
        ok &= exact
    over = 2 * carried / bytes_per_event(LINK_HZ, tsl)[0]
    result = report(f"TSL markers at {over:,.0f}/s (twice the link's)", tsl_run(over, duration))
    lost = result.lost.get(Source.MARKER, 0)
    counted = lost > 0 and len(result.received) + lost == len(result.sent)
    print(f"  {'losses counted exactly' if counted else 'LOSS COUNT WRONG'}")
    return 0 if ok and counted else 1


if __name__ == "__main__":
    sys.exit(main())
