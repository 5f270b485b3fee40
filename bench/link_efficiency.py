"""Link efficiency: bytes per event on the wire, and what a 12 Mbaud UART can carry.

For each capture clock (48, 100, 120, 200 MHz) and marker spacing (one marker every 1, 10 and
50 us) it encodes 20 ms of traffic with the protocol's reference encoder, with the device's
segment rules (a segment closes at 255 events, or once it is 1 ms old), and prints the bytes
per event (SYNC records included) for two mixes:

* markers only (16-bit values, as a DUT writes trace IDs);
* markers plus the traffic of an interrupt-latency test as the reference evaluations ran it:
  the IRQ generator asserting every 50 us plus 0..2.55 us of jitter and releasing 1 us later,
  and the handler's entry and exit markers 0.3 us and 1 us after each IRQ.

Beside each protocol version 4 figure it gives version 3's (no short records). Random
16-bit marker values never repeat, so these rows show what markers cost that the short
records cannot shorten.

It then gives the load this traffic puts on a 12 Mbaud link (8N1: 1.2 MB/s) and the largest
sustained event rate the link can carry at that size per event (bursts above it wait in the
appliance's FIFO, or are counted lost when it is full).

Goal (issue 31): at most 2.5 bytes per event, segment records included, for

* make demo's stream: the events of a capture of ``make demo`` (``bench/data/demo-events.npz``,
  from ``out/demo.lsc``; ``--capture FILE`` takes those of another capture file), encoded
  again under the device's segment rules at its clock;
* one marker every microsecond with the values the suite's TSL-a-10 test writes (T1 and T2
  of ten threads in turn, ``firmware/suite/test_tsl.c``), at each stamp rate of interest
  (the capture clocks, and 400 MHz: 100 MHz with the 1:4 input gearbox every board ships).

Then the lossless event rate on each iCE40 board's SPI link (docs/spi-link.md) against
today's (12 Mbaud UART, protocol version 3, about 290 k events/s): issue 31's goal is 5x.
The link's sustained rate is SCK (the board's ``spi_hz``, 30 MHz: 3.75 MB/s) times the
share of the time the MPSSE clocks (``--spi-duty``) less the framing (READ's opcode byte
per transaction of ``latscope.link.spi_link.READ_BYTES``, a chunk's length byte per 255);
the bytes per event are the board's encoding (short records or not). The default duty is an
estimate, not a measurement: each READ of 4096 bytes (1.09 ms at 30 MHz) waits for its
command to go out and its data to start coming back, about one USB 2.0 high-speed
microframe (125 us) each, so 1.09 / (1.09 + 0.25) = 0.81; what a board really sustains is
for hardware to measure (``latscope`` over the link), and the bench says the duty 5x needs.

Exit status 1 if a figure misses a goal. Run: ``.venv/bin/python bench/link_efficiency.py``.
"""

import argparse
import sys
from pathlib import Path

import numpy as np
from figures import Figure, report

from latscope.link.spi_link import READ_BYTES
from latscope_boards import get_board
from latscope_defs.markers import Point, Test, encode
from latscope_defs.protocol import VERSION, Source, StreamEncoder
from latscope_defs.spi_link import MAX_CHUNK

CLOCKS_HZ = (48_000_000, 100_000_000, 120_000_000, 200_000_000)
MARKER_SPACING_US = (1, 10, 50)
LINK_BYTES_PER_S = 12_000_000 / 10  # 8 data bits, a start and a stop bit
DURATION_S = 0.02
GOAL_BYTES = 2.5
#: Stamp rates of the marker-every-microsecond goal: the capture clocks, and 100 MHz with a
#: 1:4 input gearbox (stamp_shift 2).
GOAL_STAMP_HZ = (*CLOCKS_HZ, 400_000_000)
DEMO_EVENTS = Path(__file__).resolve().parent / "data" / "demo-events.npz"
#: The clock of the demo's simulated SoC (the capture's identity; stamp_shift 0).
DEMO_CLOCK_HZ = 100_000_000
TSL_THREADS = 10
#: The boards whose FT2232H's channel A reaches the FPGA's flash pins; the rows are of those
#: whose build has the SPI link (``spi_hz``), in the encoding they send (short records or not).
SPI_BOARDS = ("ice40-hx8k-b-evn", "icebreaker")
#: Share of the time the MPSSE clocks SCK while reading back to back (the module docstring
#: derives it: 4096-byte READs, two 125 us USB microframes between them).
SPI_DUTY = 1.09 / (1.09 + 0.25)
RATE_GOAL = 5


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


def tsl_markers(clock_hz):
    """One marker every microsecond, as TSL-a-N writes them: thread k writes T1(k), yields,
    and the next thread's T2(k + 1) follows (``firmware/suite/test_tsl.c``)."""
    count = int(DURATION_S * 1e6)
    thread = np.arange(count) // 2 % TSL_THREADS
    point = np.where(np.arange(count) % 2 == 0, Point.T1, Point.T2)
    value = [
        encode(Test.TSL_A, p, (k + (p == Point.T2)) % TSL_THREADS) for p, k in zip(point, thread)
    ]
    stamp = (1000 + np.arange(count) * clock_hz / 1e6).astype(np.uint64)
    return stamp, np.full(count, Source.MARKER, np.uint8), np.array(value, np.uint64)


def demo_events(capture):
    """The events of make demo's capture (``bench/data/demo-events.npz``) or of ``capture``,
    and the stamp rate."""
    if capture is None:
        saved = np.load(DEMO_EVENTS)
        stamp = 1000 + np.cumsum(saved["delta"].astype(np.uint64))
        return (stamp, saved["source"], saved["value"].astype(np.uint64)), DEMO_CLOCK_HZ
    from latscope.capture.file import load_capture

    events = load_capture(capture, correct_latency=False).events
    identity = load_capture(capture).identity
    return (events.stamp, events.source, events.value), identity.clock_hz << identity.stamp_shift


def bytes_per_event(clock_hz, *mixes, version=VERSION, short_records=True):
    stamp = np.concatenate([m[0] for m in mixes])
    source = np.concatenate([m[1] for m in mixes])
    value = np.concatenate([m[2] for m in mixes])
    order = np.lexsort((source, stamp))  # same-cycle events in source order, as the device
    encoder = StreamEncoder(
        flush_after=clock_hz // 1000,  # the appliance's default
        version=version,
        short_records=short_records,
    )
    for event in zip(stamp[order].tolist(), source[order].tolist(), value[order].tolist()):
        encoder.event(*event)
    encoder.flush()
    return len(encoder.take()) / len(stamp), len(stamp) / DURATION_S


def goal(capture):
    """The goal's figures: (label, bytes per event in version 4, in version 3)."""
    demo, demo_hz = demo_events(capture)
    rows = [
        (
            f"make demo's stream ({len(demo[0]):,} events at {demo_hz / 1e6:g} MHz)",
            bytes_per_event(demo_hz, demo)[0],
            bytes_per_event(demo_hz, demo, version=3)[0],
        )
    ]
    for stamp_hz in GOAL_STAMP_HZ:
        traffic = tsl_markers(stamp_hz)
        rows.append(
            (
                f"a TSL marker every us, stamps at {stamp_hz / 1e6:g} MHz",
                bytes_per_event(stamp_hz, traffic)[0],
                bytes_per_event(stamp_hz, traffic, version=3)[0],
            )
        )
    return rows


def spi_bytes_per_s(spi_hz, duty):
    """What the SPI link carries of the stream: SCK's bytes while it runs, less READ's
    opcode byte per transaction and the chunks' length bytes."""
    framing = READ_BYTES / (READ_BYTES + 1) * MAX_CHUNK / (MAX_CHUNK + 1)
    return spi_hz / 8 * duty * framing


def spi_rates(capture, duty):
    """Each traffic of the goal, on each SPI board: (label, board, lossless events/s on the
    SPI link, today's on the UART in version 3)."""
    demo, demo_hz = demo_events(capture)
    traffics = [(f"make demo's stream ({demo_hz / 1e6:g} MHz)", demo_hz, demo)]
    traffics += [
        (f"a TSL marker every us, {hz / 1e6:g} MHz stamps", hz, tsl_markers(hz))
        for hz in GOAL_STAMP_HZ
    ]
    rows = []
    for label, stamp_hz, traffic in traffics:
        today = LINK_BYTES_PER_S / bytes_per_event(stamp_hz, traffic, version=3)[0]
        # A board built without short records sends version 4's long records only.
        long_only = bytes_per_event(stamp_hz, traffic, short_records=False)[0]
        short = bytes_per_event(stamp_hz, traffic)[0]
        for name in SPI_BOARDS:
            board = get_board(name)
            if not board.spi_hz:
                continue
            size = short if board.short_records else long_only
            rows.append((label, name, spi_bytes_per_s(board.spi_hz, duty) / size, today))
    return rows


def print_spi_rates(capture, duty):
    """Prints the SPI link's lossless event rates against today's; gives the smallest ratio
    (0 without a board with the link)."""
    without = [name for name in SPI_BOARDS if not get_board(name).spi_hz]
    print(
        f"\nSPI link (docs/spi-link.md): {spi_bytes_per_s(30e6, 1) / 1e6:.2f} MB/s at 30 MHz "
        f"clocking without a pause; at duty {duty:.2f} (--spi-duty) "
        f"{spi_bytes_per_s(30e6, duty) / 1e6:.2f} MB/s"
    )
    if without:
        print(f"No SPI link in the build of {', '.join(without)} (docs/spi-link.md)")
    print(f"Goal (issue 31): {RATE_GOAL}x today's lossless event rate (12 Mbaud, version 3)")
    ratios = []
    for label, board, rate, today in spi_rates(capture, duty):
        needed = duty * RATE_GOAL * today / rate
        verdict = "met" if rate >= RATE_GOAL * today else f"NOT MET (needs duty {needed:.2f})"
        ratios.append(rate / today)
        print(
            f"  {board:<17} {label:<38} {rate:11,.0f} ev/s  today {today:9,.0f}"
            f"  {rate / today:4.1f}x  {verdict}"
        )
    return min(ratios, default=0.0)


def main(argv=None):
    options = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    options.add_argument("--capture", help="a capture file to measure instead of make demo's")
    options.add_argument(
        "--spi-duty",
        type=float,
        default=SPI_DUTY,
        help=f"share of the time the MPSSE clocks SCK (default {SPI_DUTY:.2f}, an estimate)",
    )
    args = options.parse_args(argv)
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
        f"{'MHz':>8} {'every':>8} | {'B/event':>8} {'(v3)':>4} {'max ev/s':>13} | "
        f"{'events/s':>10} {'B/event':>8} {'(v3)':>4} {'link load':>10} {'max ev/s':>13}"
    )
    print("-" * len(header))
    worst, per_microsecond, cost = None, 0.0, 0.0
    for clock_hz in CLOCKS_HZ:
        for spacing in MARKER_SPACING_US:
            seed = int(rng.integers(1 << 30))
            traffic = [markers(clock_hz, spacing, np.random.default_rng(seed))]
            mix = traffic + [il_test_traffic(clock_hz, np.random.default_rng(seed))]
            only, _ = bytes_per_event(clock_hz, *traffic)
            only_v1, _ = bytes_per_event(clock_hz, *traffic, version=3)
            mixed, rate = bytes_per_event(clock_hz, *mix)
            mixed_v1, _ = bytes_per_event(clock_hz, *mix, version=3)
            load = rate * mixed / LINK_BYTES_PER_S
            worst = max(worst or 0, only)
            cost = max(cost, 1 - only / only_v1, 1 - mixed / mixed_v1)
            if spacing == 1:
                per_microsecond = max(per_microsecond, only)
            print(
                f"{clock_hz / 1e6:8g} {spacing:>6} us | {only:8.2f} {only_v1:4.2f} "
                f"{LINK_BYTES_PER_S / only:13,.0f} | {rate:10,.0f} {mixed:8.2f} "
                f"{mixed_v1:4.2f} {load:9.0%} {LINK_BYTES_PER_S / mixed:13,.0f}"
            )
    print(f"""
B/event includes the segment records (SYNC, TALLY, SEAL: one set per 255 events, per 1 ms
segment age, per 2**24-cycle gap); (v3): the same traffic in protocol version 3.
Version 4 saves up to {cost:.1%} of the bytes of version 3 in these rows (random marker
values: only the IL test's markers and IRQ edges take short records).
'max ev/s' is the rate the link sustains at that size per event; denser traffic has smaller
deltas and so slightly fewer bytes per event. A link load above 100% is sustainable only as a
burst that fits the appliance's FIFO.
12 Mbaud sustains at least {LINK_BYTES_PER_S / worst:,.0f} markers/s at any clock of interest;
one marker every microsecond (1,000,000/s, {per_microsecond:.2f} B each) is \
{1e6 * per_microsecond / LINK_BYTES_PER_S:.1f} times what it carries.
""")
    print(f"Goal (issue 31): at most {GOAL_BYTES} bytes per event, segment records included")
    rows = goal(args.capture)
    for label, figure, before in rows:
        verdict = "met" if figure <= GOAL_BYTES else "NOT MET"
        print(f"  {label:<52} {figure:5.2f} B (v3: {before:4.2f})  {verdict}")
    worst_ratio = print_spi_rates(args.capture, args.spi_duty)
    figures = [
        Figure("bytes per event, make demo's stream", rows[0][1], GOAL_BYTES, "B", at_least=False),
        Figure(
            "bytes per event, a TSL marker every us",
            max(figure for _, figure, _ in rows[1:]),
            GOAL_BYTES,
            "B",
            at_least=False,
        ),
        Figure("lossless event rate on the SPI link", worst_ratio, RATE_GOAL, "x today's"),
    ]
    for figure in figures:
        report(figure)
    return 0 if all(figure.met for figure in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
