"""The HX8K's capture path at the SPI link's real rate: make demo's stream at the lossless rate
bench/link_efficiency.py claims for the HX8K, without loss.

Simulates (tests/support/spi_rate_sim.py) the HX8K's encoder, event FIFO and SPI target at
its 84 MHz clock, read by a model of the FT2232H's MPSSE at 30 MHz in the READ transactions
of 4096 bytes the host queues, with the pause the queue leaves between them (five commands
executed without clocking, at ``latscope.link.mpsse.ASSUMED_COMMAND_S`` each), for
``--ms`` milliseconds of events, then reads the stream through and decodes it with the
host's parser. Three runs:

* TSL-a-10's markers (bench/link_efficiency.py's ``tsl_markers``) at 5x today's lossless
  rate on the TSL stream (link_efficiency's ``lossless_rate``: 12 Mbaud, version 3);
* make demo's events (``bench/data/demo-events.npz``: markers, bus writes, IRQ and two edge
  channels, the demo's sources and widths) played at the lossless rate link_efficiency
  claims for the HX8K on that stream (``lossless_rate`` on the same link and FIFO; the
  capture's timing sped up, link_efficiency's ``played``): the burst that fills the FIFO
  most at that rate, from where the FIFO is empty (``fifo_levels``), for ``--ms``;
* the same events at 1.2 times that rate into the board's event FIFO (``--overflow-fifo``
  another depth): the delivered events plus the LOSS records' counts must be exactly those
  applied.

Prints, per run: events applied and delivered, losses, the simulated time, the event FIFO's
highest level (and the model's), bytes per event on the link. Exit status 1 if a run at the
claimed rate loses an event or delivers one not as applied, or the overflow run loses none
or its counts do not add up.
Run: ``.venv/bin/python bench/spi_rate.py`` (a few CPU minutes per run).
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from link_efficiency import (
    LINK_BYTES_PER_S,
    demo_events,
    event_bytes,
    fifo_levels,
    lossless_rate,
    played,
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
#: The overflow run: this many times the claimed rate.
OVERFLOW_RATE = 1.2
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
    return lossless_rate(stamp_hz, traffic, LINK_BYTES_PER_S, BOARD.fifo_depth, version=3)[0]


def tsl_run(rate_hz, duration_s):
    """TSL-a-10's markers at ``rate_hz`` on the link clock for ``duration_s``."""
    values = tsl_markers(LINK_HZ)[2]
    count = int(rate_hz * duration_s)
    return [
        (round(n * LINK_HZ / rate_hz), Source.MARKER, int(values[n % len(values)]))
        for n in range(count)
    ]


def demo_played(speed):
    """make demo's events played ``speed`` times faster, stamps in link clock cycles, in the
    order the device sends them."""
    demo, demo_hz = demo_events(None)
    stamp, source, value = played(demo, LINK_HZ / demo_hz / speed)
    order = np.lexsort((source, stamp))
    return stamp[order], source[order], value[order]


def demo_burst(speed, duration_s, carried):
    """The burst of make demo's events played ``speed`` times faster that fills the event
    FIFO most (``fifo_levels`` on a link carrying ``carried`` bytes/s): from the last event
    before its highest level that found the FIFO empty, for ``duration_s``. Returns the
    index of its first event, its count, and the model's highest level among them."""
    stamp, source, value = demo_played(speed)
    levels = fifo_levels(LINK_HZ, *event_bytes(LINK_HZ, (stamp, source, value)), carried)
    first = int(np.flatnonzero(levels[: int(levels.argmax())] == 0)[-1])
    count = int(np.count_nonzero(stamp[first:] - stamp[first] < duration_s * LINK_HZ))
    return first, count, int(levels[first : first + count].max(initial=0))


def as_events(traffic, first, count):
    """Events ``first`` .. ``first + count`` of ``traffic`` as (cycle, source, value) triples
    from cycle 0, for ``spi_rate_sim.run``."""
    stamp, source, value = (column[first : first + count] for column in traffic)
    return [
        (int(at) - int(stamp[0]), Source(src), int(val))
        for at, src, val in zip(stamp.tolist(), source.tolist(), value.tolist())
    ]


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
    options.add_argument(
        "--overflow-fifo", type=int, help="event FIFO entries of the overflow run (the board's)"
    )
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
    demo, demo_hz = demo_events(None)
    claim, speed, size, _ = lossless_rate(
        demo_hz, demo, carried, BOARD.fifo_depth, short_records=BOARD.short_records
    )
    first, count, model_max = demo_burst(speed, duration, carried)
    print(
        f"link_efficiency's lossless rate of make demo's stream on the HX8K: {claim:,.0f}/s "
        f"({speed:.3f}x its own timing; {size:.3f} B per event at {demo_hz / 1e6:g} MHz).\n"
        f"At that rate the burst that fills the FIFO most: events {first:,} on (the FIFO "
        f"empty), {count:,} of them in {args.ms:g} ms; the model's FIFO at most {model_max} "
        f"of {BOARD.fifo_depth} (stamps at {LINK_HZ / 1e6:g} MHz)\n"
    )
    ok = True
    for label, events, sources in (
        (
            f"TSL markers at {RATE_GOAL}x today's {tsl_today:,.0f}/s",
            tsl_run(RATE_GOAL * tsl_today, duration),
            None,
        ),
        (
            f"make demo's burst at the claimed {claim:,.0f}/s ({speed:.3f}x its own timing)",
            as_events(demo_played(speed), first, count),
            DEMO_SOURCES,
        ),
    ):
        result = report(label, events, sources=sources)
        exact = result.received == result.sent and not result.lost and not result.segments_bad
        print(f"  {'no loss, every event as applied' if exact else 'LOSS OR DAMAGE'}")
        ok &= exact
    fifo = args.overflow_fifo or BOARD.fifo_depth
    result = report(
        f"the same events at {OVERFLOW_RATE:g}x the claim ({OVERFLOW_RATE * speed:.3f}x their "
        f"own timing), an event FIFO of {fifo}",
        as_events(demo_played(OVERFLOW_RATE * speed), first, count),
        sources=DEMO_SOURCES,
        fifo_depth=fifo,
    )
    lost = sum(result.lost.values())
    sent = iter(result.sent)
    counted = (
        lost > 0
        and len(result.received) + lost == len(result.sent)
        and all(event in sent for event in result.received)  # in order, each as applied
        and not result.segments_bad
    )
    print(f"  {'losses counted exactly' if counted else 'LOSS COUNT WRONG'}")
    return 0 if ok and counted else 1


if __name__ == "__main__":
    sys.exit(main())
