"""Parser throughput: how fast ``StreamParser`` turns device bytes into verified events.

Goal checked (issue 31): >= 20 M events per CPU second for a stream of 10**7 events (markers
about every microsecond at 100 MHz, plus the IRQ generator's edges), parsed in 64 KiB pieces
as a capture loop or ``load_capture`` would feed it.

Two streams of the same events' stamps and sources: protocol version 3 with random marker
values (long records only, about 4.1 bytes per event), made by :func:`encode_fast`, a
vectorised copy of ``protocol.StreamEncoder`` for version 3 (``FAST_VERSION``; the script
first checks that both give the same bytes for a sample); and the current version, 4, with
the marker values TSL-a-10 writes (:func:`tsl_values`: short records, about 2.3 bytes per
event), made by ``StreamEncoder`` itself (about 4 CPU minutes for 10**7 events, once). Both
are cached under /tmp. The goal is judged on both.
Run: ``.venv/bin/python bench/parser_throughput.py [--events N] [--feed BYTES]``.
"""

import argparse
import binascii
import hashlib
import os
import resource
import sys
import time

import numpy as np
from figures import Figure, report
from machine import describe

from latscope.events import Events
from latscope.link.parser import StreamParser
from latscope_defs.markers import Point, Test, encode
from latscope_defs.protocol import (
    CONT_BITS,
    DELTA_BITS,
    LEAD_FLAG,
    LEAD_PAYLOAD_BITS,
    SEGMENT_MAX_EVENTS,
    VERSION,
    Source,
    StreamEncoder,
    encode_record,
    sync_payload,
    tally_payload,
    value_width,
)

#: Events per CPU second (issue 31; issue 4 asked 10 M).
GOAL = 20e6
#: The protocol version ``encode_fast`` writes: version 3, long records only (lead bytes with
#: 3 payload bits; a version 4 stream of this workload's random markers would differ only in
#: its IRQ edges' short records).
FAST_VERSION = 3


def workload(count, *, seed=1, marker_spacing=100, irq_period=5000, irq_jitter=0xFF, irq_width=100):
    """``count`` events sorted by stamp: MARKERs with exponential spacing (mean
    ``marker_spacing`` cycles, random 16-bit values) and the IRQ generator's edges (asserting
    every ``irq_period + 0..irq_jitter`` cycles, releasing ``irq_width`` cycles later)."""
    rng = np.random.default_rng(seed)
    irq_share = 2 * marker_spacing / (irq_period + irq_jitter / 2)
    irqs = int(count * irq_share / (1 + irq_share)) // 2
    markers = count - 2 * irqs
    marker_stamp = 1000 + np.cumsum(rng.exponential(marker_spacing, markers).astype(np.uint64))
    assert_stamp = 1000 + np.cumsum(
        irq_period + rng.integers(0, irq_jitter + 1, irqs, dtype=np.uint64)
    )
    stamp = np.concatenate([marker_stamp, assert_stamp, assert_stamp + irq_width])
    source = np.concatenate(
        [np.full(markers, Source.MARKER, np.uint8), np.full(2 * irqs, Source.IRQ, np.uint8)]
    )
    value = np.concatenate(
        [
            rng.integers(0, 1 << 16, markers, dtype=np.uint64),
            np.ones(irqs, np.uint64),
            np.zeros(irqs, np.uint64),
        ]
    )
    order = np.argsort(stamp, kind="stable")
    return stamp[order].astype(np.uint64), source[order], value[order]


def encode_fast(stamp, source, value, marker_width=16):
    """The bytes ``StreamEncoder`` makes for these events followed by ``flush()``."""
    count = len(stamp)
    gap = np.diff(stamp, prepend=stamp[:1])
    run_start = np.flatnonzero((np.arange(count) == 0) | (gap >= (1 << DELTA_BITS)))
    run_of = np.cumsum(np.isin(np.arange(count), run_start)) - 1
    new_segment = (np.arange(count) - run_start[run_of]) % SEGMENT_MAX_EVENTS == 0
    delta = np.where(new_segment, 0, gap).astype(np.uint64)
    width = np.zeros(16, np.uint64)
    for s in (Source.MARKER, Source.BUS, Source.IRQ, Source.LOSS, *range(4, 12)):
        width[s] = value_width(s, marker_width, FAST_VERSION)
    payload = (delta << width[source]) | value
    cont = np.zeros(count, np.int64)
    for k in range(9):
        cont += (payload >> np.uint64(LEAD_PAYLOAD_BITS + CONT_BITS * k)) != 0
    length = cont + 1
    end = np.cumsum(length)
    start = end - length
    body = np.zeros(int(end[-1]) if count else 0, np.uint8)
    body[start] = (
        LEAD_FLAG
        | (source.astype(np.uint64) << LEAD_PAYLOAD_BITS)
        | ((payload >> (CONT_BITS * cont).astype(np.uint64)) & 7)
    ).astype(np.uint8)
    for k in range(1, 10):
        has = np.flatnonzero(cont >= k)
        shift = (CONT_BITS * (cont[has] - k)).astype(np.uint64)
        body[start[has] + k] = ((payload[has] >> shift) & 0x7F).astype(np.uint8)
    body = body.tobytes()
    out = bytearray()
    seg_first = np.flatnonzero(new_segment).tolist() + [count]
    byte_at = start.tolist() + [len(body)]
    stamps = stamp.tolist()
    for first, after in zip(seg_first, seg_first[1:]):
        segment = (
            encode_record(Source.SYNC, sync_payload(stamps[first]), FAST_VERSION)
            + body[byte_at[first] : byte_at[after]]
            + encode_record(Source.TALLY, tally_payload(after - first, after, after), FAST_VERSION)
        )
        out += segment
        out += encode_record(Source.SEAL, binascii.crc32(segment), FAST_VERSION)
    return bytes(out)


def encode_reference(stamp, source, value, marker_width=16, version=FAST_VERSION):
    encoder = StreamEncoder(marker_width, version=version)
    for t, s, v in zip(stamp.tolist(), source.tolist(), value.tolist()):
        encoder.event(t, s, v)
    encoder.flush()
    return encoder.take()


def check_fast_encoder():
    """``encode_fast`` must give the reference encoder's bytes, long gaps and extremes too."""
    stamp, source, value = workload(20000, seed=7)
    stamp[5000:] += 1 << 24  # a gap longer than a delta can carry
    stamp[9000:] += (1 << 48) - 12345  # a 48-bit stamp wrap
    assert encode_fast(stamp, source, value) == encode_reference(stamp, source, value)


#: Pin-to-stamp latencies as a device reports them; the parser subtracts them.
LATENCY = {Source.MARKER: 4, Source.IRQ: 1}
#: Threads of the TSL-a-N test whose marker values the version 4 stream carries.
TSL_THREADS = 10


def tsl_values(source, value):
    """``value`` with the markers' values replaced by those TSL-a-10 writes, in turn: thread k
    writes T1(k), yields, and the next thread's T2(k + 1) follows
    (``firmware/suite/test_tsl.c``); most take short records in version 4."""
    marker = np.flatnonzero(source == Source.MARKER)
    table = {
        (point, thread): encode(Test.TSL_A, point, thread)
        for point in (Point.T1, Point.T2)
        for thread in range(TSL_THREADS)
    }
    order = np.array(
        [table[Point.T1, k] for k in range(TSL_THREADS)]
        + [table[Point.T2, (k + 1) % TSL_THREADS] for k in range(TSL_THREADS)],
        np.uint64,
    )
    n = np.arange(len(marker))
    # Marker n: T1 of thread n // 2 % N when n is even, else T2 of the thread after it.
    value = value.copy()
    value[marker] = order[n // 2 % TSL_THREADS + TSL_THREADS * (n % 2)]
    return value


def cached_stream(count, seed, version=FAST_VERSION):
    """The stream of ``count`` events in ``version`` (FAST_VERSION: random markers,
    ``encode_fast``; VERSION: TSL markers, ``StreamEncoder``) and its events."""
    key = hashlib.sha1(f"protocol {version} {count} {seed}".encode()).hexdigest()[:12]
    path = f"/tmp/latscope-bench-stream-{key}.bin"
    stamp, source, value = workload(count, seed=seed)
    if version != FAST_VERSION:
        value = tsl_values(source, value)
    if os.path.exists(path):
        with open(path, "rb") as f:
            return f.read(), stamp, source, value
    if version == FAST_VERSION:
        data = encode_fast(stamp, source, value)
    else:
        data = encode_reference(stamp, source, value, version=version)
    with open(path + ".part", "wb") as f:
        f.write(data)
    os.replace(path + ".part", path)
    return data, stamp, source, value


def measure(version, args):
    """Parses the stream of ``version``; prints its figures; gives (events per CPU second,
    whether the events are exactly the encoded ones)."""
    started = time.perf_counter()
    data, stamp, source, value = cached_stream(args.events, args.seed, version)
    print(
        f"stream, protocol version {version}: {args.events} events, {len(data)} bytes "
        f"({len(data) / args.events:.2f} bytes/event), ready in "
        f"{time.perf_counter() - started:.1f} s (cached under /tmp)"
    )

    stream_parser = StreamParser(latency=LATENCY, version=version)
    view = memoryview(data)
    parts = []
    started, cpu_started = time.perf_counter(), time.process_time()
    for offset in range(0, len(data), args.feed):
        parts.append(stream_parser.feed(view[offset : offset + args.feed]))
    parts.append(stream_parser.finish())
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    events = Events.concatenate(parts)

    latency = np.zeros(16, np.uint64)
    for s, cycles in LATENCY.items():
        latency[s] = cycles
    ok = (
        np.array_equal(events.stamp, stamp - latency[source])
        and np.array_equal(events.source, source)
        and np.array_equal(events.value, value)
    )
    rate = len(events) / elapsed
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"parsed in {args.feed} B feeds: {elapsed:.3f} s wall ({cpu:.3f} s CPU), "
        f"{rate / 1e6:.1f} M events/s, {len(data) / elapsed / 1e6:.1f} MB/s "
        f"({len(data) / cpu / 1e6:.1f} MB per CPU second), peak RSS {peak_rss:.0f} MiB"
    )
    if cpu > 1.2 * elapsed or elapsed > 1.2 * cpu:
        print("note: wall and CPU time differ: the machine is busy, the figures are low")
    print(f"events delivered {len(events)}, identical to the encoded ones: {ok}")
    print(f"stats: {stream_parser.stats}")
    # One core's work is the CPU time; wall time also counts waiting for a busy machine.
    return len(events) / cpu, ok


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=10**7)
    parser.add_argument("--feed", type=int, default=64 * 1024, help="bytes per feed() call")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    print(describe())
    check_fast_encoder()
    met = True
    for version in (FAST_VERSION, VERSION):
        cpu_rate, ok = measure(version, args)
        goal = cpu_rate >= GOAL and ok
        met &= goal
        if ok and version == FAST_VERSION:
            # The table's figure: the stream it has always been measured on.
            report(Figure("parser", cpu_rate, GOAL, "M events per CPU second", 1e6))
        print(
            f"version {version}: goal >= {GOAL / 1e6:g} M events per CPU second: "
            f"{cpu_rate / 1e6:.1f} M: {'met' if goal else 'NOT met'}"
        )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
