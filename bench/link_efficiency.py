"""Link efficiency: bytes per event on the wire, and what a 12 Mbaud UART can carry.

For each capture clock (48, 100, 120, 200 MHz) and marker spacing (one marker every 1, 10 and
50 us) it encodes 20 ms of traffic with the protocol's reference encoder, with the device's
segment rules (a segment closes at 255 events, or once it is 1 ms old), and prints the bytes
per event (SYNC records included) for two mixes:

* markers only (16-bit values, as a DUT writes trace IDs);
* markers plus the traffic of an interrupt-latency test as the reference evaluations ran it:
  the IRQ generator asserting every 50 us plus 0..2.55 us of jitter and releasing 1 us later,
  and the handler's entry and exit markers 0.3 us and 1 us after each IRQ.

Beside each protocol version 2 figure it gives version 1's (one 10-byte SYNC per segment
instead of SYNC, TALLY and SEAL, 23 bytes): the cost of the stronger integrity check.

It then gives the load this traffic puts on a 12 Mbaud link (8N1: 1.2 MB/s) and the largest
sustained event rate the link can carry at that size per event (bursts above it wait in the
appliance's FIFO, or are counted lost when it is full). Run: ``.venv/bin/python
bench/link_efficiency.py``.
"""

import sys

import numpy as np
from figures import Figure, report

from latscope_defs.protocol import Source, StreamEncoder

CLOCKS_HZ = (48_000_000, 100_000_000, 120_000_000, 200_000_000)
MARKER_SPACING_US = (1, 10, 50)
LINK_BYTES_PER_S = 12_000_000 / 10  # 8 data bits, a start and a stop bit
DURATION_S = 0.02
#: Issue 31: at most this many bytes per event for one marker every microsecond.
GOAL_BYTES = 2.5


def markers(clock_hz, spacing_us, rng):
    period = spacing_us * clock_hz / 1e6
    count = int(DURATION_S * 1e6 / spacing_us)
    stamp = (1000 + np.arange(count) * period).astype(np.uint64)
    return (
        stamp,
        np.full(count, Source.MARKER, np.uint8),
        rng.integers(0, 1 << 16, count, dtype=np.uint64),
    )


def il_test_traffic(clock_hz, rng):
    """IRQ edges every ~50 us and the handler's entry and exit markers."""
    cycles = clock_hz / 1e6  # per microsecond
    count = int(DURATION_S * 1e6 / 51.3)
    period = 50 * cycles + rng.integers(0, 256, count) * cycles / 100
    asserted = (2000 + np.cumsum(period)).astype(np.uint64)

    def at(offset_us):
        return asserted + np.uint64(round(offset_us * cycles))

    parts = [
        (asserted, Source.IRQ, 1),
        (at(1.0), Source.IRQ, 0),
        (at(0.3), Source.MARKER, 0x1000),
        (at(1.0), Source.MARKER, 0x2000),
    ]
    stamp = np.concatenate([p[0] for p in parts])
    source = np.concatenate([np.full(count, p[1], np.uint8) for p in parts])
    value = np.concatenate([np.full(count, p[2], np.uint64) for p in parts])
    return stamp, source, value


def bytes_per_event(clock_hz, *mixes, version=2):
    stamp = np.concatenate([m[0] for m in mixes])
    source = np.concatenate([m[1] for m in mixes])
    value = np.concatenate([m[2] for m in mixes])
    order = np.lexsort((source, stamp))  # same-cycle events in source order, as the device
    encoder = StreamEncoder(
        flush_after=clock_hz // 1000,  # the appliance's default
        version=version,
    )
    for event in zip(stamp[order].tolist(), source[order].tolist(), value[order].tolist()):
        encoder.event(*event)
    encoder.flush()
    return len(encoder.take()) / len(stamp), len(stamp) / DURATION_S


def main():
    rng = np.random.default_rng(1)
    print(
        f"{DURATION_S * 1e3:g} ms of traffic per row; link: 12 Mbaud 8N1 = "
        f"{LINK_BYTES_PER_S / 1e6:g} MB/s\n"
    )
    header = (
        f"{'clock':>8} {'marker':>8} | {'markers only':>27} | "
        f"{'markers + IL test traffic (IRQ every 50 us)':>51}"
    )
    print(header)
    print(
        f"{'MHz':>8} {'every':>8} | {'B/event':>8} {'(v1)':>4} {'max ev/s':>13} | "
        f"{'events/s':>10} {'B/event':>8} {'(v1)':>4} {'link load':>10} {'max ev/s':>13}"
    )
    print("-" * len(header))
    worst, per_microsecond, cost = None, 0.0, 0.0
    for clock_hz in CLOCKS_HZ:
        for spacing in MARKER_SPACING_US:
            seed = int(rng.integers(1 << 30))
            traffic = [markers(clock_hz, spacing, np.random.default_rng(seed))]
            mix = traffic + [il_test_traffic(clock_hz, np.random.default_rng(seed))]
            only, _ = bytes_per_event(clock_hz, *traffic)
            only_v1, _ = bytes_per_event(clock_hz, *traffic, version=1)
            mixed, rate = bytes_per_event(clock_hz, *mix)
            mixed_v1, _ = bytes_per_event(clock_hz, *mix, version=1)
            load = rate * mixed / LINK_BYTES_PER_S
            worst = max(worst or 0, only)
            cost = max(cost, only / only_v1 - 1, mixed / mixed_v1 - 1)
            if spacing == 1:
                per_microsecond = max(per_microsecond, only)
            print(
                f"{clock_hz / 1e6:8g} {spacing:>6} us | {only:8.2f} {only_v1:4.2f} "
                f"{LINK_BYTES_PER_S / only:13,.0f} | {rate:10,.0f} {mixed:8.2f} "
                f"{mixed_v1:4.2f} {load:9.0%} {LINK_BYTES_PER_S / mixed:13,.0f}"
            )
    print(f"""
B/event includes the segment records (SYNC, TALLY, SEAL: one set per 255 events, per 1 ms
segment age, per 2**24-cycle gap); (v1): the same traffic in protocol version 1.
Version 2 costs at most {cost:.1%} more bytes per event than version 1 in these rows.
'max ev/s' is the rate the link sustains at that size per event; denser traffic has smaller
deltas and so slightly fewer bytes per event. A link load above 100% is sustainable only as a
burst that fits the appliance's FIFO.
12 Mbaud sustains at least {LINK_BYTES_PER_S / worst:,.0f} markers/s at any clock of interest;
one marker every microsecond (1,000,000/s, {per_microsecond:.2f} B each) is \
{1e6 * per_microsecond / LINK_BYTES_PER_S:.1f} times what it carries.""")
    report(
        Figure(
            "bytes per event, a marker every us", per_microsecond, GOAL_BYTES, "B", at_least=False
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
