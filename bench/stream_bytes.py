"""Where a stream's bytes go: per record kind and length, and the segments by why they closed.

Encodes make demo's stream (``bench/data/demo-events.npz``, or ``--capture FILE``'s events)
with the reference encoder under the device's segment rules, as bench/link_efficiency.py
does, at its own timing and played faster (``--speed``, link_efficiency's ``played``), in
protocol version 4 (short records) and version 3, and prints for each: events per second,
bytes per event, the segments and why each closed (255 events, 1 ms of age, a delta too
long for a record; the last one at the stream's end), and each record kind's records,
bytes and bytes per event, by record length. Informational: no goal, exit status 0.
Run: ``.venv/bin/python bench/stream_bytes.py [--speed 1 4.14 10.8]``.
"""

import argparse
import sys
from collections import Counter

import numpy as np
from link_efficiency import demo_events, mean_rate, played

from latscope_defs.protocol import (
    DELTA_BITS,
    SEGMENT_MAX_EVENTS,
    Source,
    StreamEncoder,
    short_lead,
)

SEGMENT_RECORDS = (Source.SYNC, Source.TALLY, Source.SEAL)


class CountingEncoder(StreamEncoder):
    """The reference encoder, counting its records by kind and length and its segments by
    why they closed (the conditions of ``StreamEncoder.event``, in its order)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.records = Counter()  # (kind, length): records
        self.closed = Counter()  # reason: segments

    def _put(self, source, record):
        if source in SEGMENT_RECORDS:
            kind = Source(source).name
        else:
            long = short_lead(record[0], self.version) is None
            kind = f"{'long' if long else 'short'} {Source(source).name}"
        self.records[kind, len(record)] += 1
        super()._put(source, record)

    def event(self, stamp, source, value):
        if self._segment_events:
            if self.flush_after is not None and stamp - self._segment_first >= self.flush_after:
                self.closed["1 ms of age"] += 1
            elif self._segment_events >= SEGMENT_MAX_EVENTS:
                self.closed[f"{SEGMENT_MAX_EVENTS} events"] += 1
            elif stamp - self._base >= 1 << DELTA_BITS:
                self.closed["a long delta"] += 1
        super().event(stamp, source, value)

    def end(self):
        """Closes the last segment, as STOP does."""
        if self._segment_events:
            self.closed["the stream's end"] += 1
        self.flush()


def breakdown(stamp_hz, traffic, version):
    """Prints where ``traffic``'s bytes go in protocol ``version``."""
    stamp, source, value = traffic
    order = np.lexsort((source, stamp))  # same-cycle events in source order, as the device
    encoder = CountingEncoder(flush_after=stamp_hz // 1000, version=version)
    for event in zip(stamp[order].tolist(), source[order].tolist(), value[order].tolist()):
        encoder.event(*event)
    encoder.end()
    count, total = len(stamp), len(encoder.take())
    closed = ", ".join(f"{n:,} at {why}" for why, n in encoder.closed.most_common())
    print(
        f"  version {version}: {total / count:.3f} B per event; "
        f"{sum(encoder.closed.values()):,} segments, closed {closed}"
    )
    kinds = Counter()
    for (kind, length), n in encoder.records.items():
        kinds[kind] += n * length
    for kind, size in kinds.most_common():
        lengths = sorted((length, n) for (k, length), n in encoder.records.items() if k == kind)
        records = sum(n for _, n in lengths)
        by_length = ", ".join(f"{n:,} of {length} B" for length, n in lengths)
        print(
            f"    {kind:<12} {records:7,} records {size:8,} B {size / count:6.3f} B/event"
            f"  ({by_length})"
        )


def main(argv=None):
    options = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    options.add_argument("--capture", help="a capture file to measure instead of make demo's")
    options.add_argument(
        "--speed", type=float, nargs="+", default=[1.0], help="speed-ups of its own timing"
    )
    args = options.parse_args(argv)
    traffic, stamp_hz = demo_events(args.capture)
    for speed in args.speed:
        fast = played(traffic, 1 / speed)
        print(
            f"{len(fast[0]):,} events played {speed:g}x its own timing: "
            f"{mean_rate(stamp_hz, fast):,.0f} events/s, stamps at {stamp_hz / 1e6:g} MHz"
        )
        for version in (4, 3):
            breakdown(stamp_hz, fast, version)
    return 0


if __name__ == "__main__":
    sys.exit(main())
