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
today's (12 Mbaud UART, protocol version 3, the same board's event FIFO): issue 31's goal is
5x. A stream's lossless rate (``lossless_rate``) is the largest rate at which it, played at
that rate (``played``: its stamps' distances from the first divided by a speed-up, the
device's segment rules applied at that rate by the reference encoder), loses nothing:

* played over and over, its bytes must not outrun the link: the fixed point of
  rate = link's bytes/s / bytes per event at that rate (denser, a stream costs fewer bytes
  per event: shorter deltas, segments full at 255 events rather than closed at 1 ms);
* played once, its bursts must fit the event FIFO (``fifo_levels``: a queue model in which
  the link sends the stream's bytes in order at its rate and an event leaves the FIFO when
  its bytes start; the link's own few bytes of buffer not counted, an upper bound): where
  they do not at the fixed point, the largest speed-up at which they do (bisection).

The rate is the stream's mean rate at that speed-up (its events' intervals over its span);
both the SPI row and today's are found so, so their ratio compares like with like. make
demo's capture is bursty (a 10 ms stretch holds 2.5 times its mean), so the FIFO bounds
its rate, today's as much as the SPI link's; the TSL streams are regular and the fixed
point bounds theirs. The bytes-per-event goal above is at the streams' own timing.
The link's sustained rate is SCK (the board's ``spi_hz``, 30 MHz: 3.75 MB/s) times the
share of the time the MPSSE clocks (``--spi-duty``) less the framing (READ's opcode byte
per transaction of ``latscope.link.spi_link.READ_BYTES``, a chunk's length byte per 255);
the bytes per event are the board's encoding (short records or not).

The duty is derived from what the MPSSE does per READ transaction while the host keeps
transactions queued ahead (``latscope.link.spi_link.QUEUE_DEPTH``): it clocks the opcode
and the 4096 bytes (4097 x 8 SCK periods, 1.09 ms at 30 MHz), and executes the
transaction's other commands without clocking (``latscope.link.mpsse``: CS# low, the
opcode's and the read's command headers, CS# high, Send Immediate; CS# is high for one of
them). FTDI's AN_108 gives no execution time for a command; the bench takes
``--mpsse-command-us`` (default 1 us, an assumed upper bound: 30 SCK periods) for each, and
prints the time per command at which each row's goal would be missed. The FT2232H puts 2
status bytes in each 512-byte USB packet (pyftdi's ``read_data_bytes`` strips them): they
cost USB time, not SCK time (the bench prints the USB load). What only hardware can
confirm: the commands' execution time, and that the host takes the data as fast as it comes
(the FT2232H's 4 kB receive buffer holds 1.09 ms of SCK; the MPSSE stops clocking while it
is full). Before the queue (one transaction at a time) the estimate was 0.81: each READ
waited about a USB microframe (125 us) for its command and one for its data.

Exit status 1 if a figure misses a goal. Run: ``.venv/bin/python bench/link_efficiency.py``.
"""

import argparse
import sys
from pathlib import Path

import numpy as np
from figures import Figure, report

from latscope.link.mpsse import ASSUMED_COMMAND_S, transaction_commands
from latscope.link.spi_link import QUEUE_DEPTH, READ_BYTES
from latscope_boards import record_name, spi_builds
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
#: The boards whose FT2232H's channel A reaches the FPGA's flash pins; the rows are of their
#: builds with the SPI link (``spi_hz``; the iCEBreaker's is its ``spi`` variant, named by its
#: record, ``icebreaker-spi``), in the encoding they send (short records or not).
SPI_BOARDS = ("ice40-hx8k-b-evn", "icebreaker")
#: SCK: the MPSSE's fastest clock (60 MHz / 2, AN_108), the boards' ``spi_hz``.
MPSSE_SCK_HZ = 30_000_000
#: The FT2232H's USB packets: 512 bytes (USB 2.0 high-speed bulk), 2 of them status bytes.
USB_PACKET, USB_STATUS = 512, 2
#: USB 2.0 high-speed bulk: at most 13 packets of 512 bytes per 125 us microframe (USB 2.0
#: specification, table 5-10).
USB_BULK_BYTES_PER_S = 13 * 512 / 125e-6
#: The FT2232H's receive buffer (pyftdi's ``Ftdi.FIFO_SIZES``; FT2232H datasheet): the
#: MPSSE stops clocking while it is full.
FT2232H_RX_BUFFER = 4096
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


def event_bytes(clock_hz, *mixes, version=VERSION, short_records=True):
    """The stream the device sends for the events of ``mixes`` (stamps in units of
    ``clock_hz``), by the reference encoder under the device's segment rules: the events'
    stamps in the order sent, and the bytes the encoder writes at each (a segment's TALLY,
    SEAL and the next SYNC with the event they come before; the last SEAL with the last)."""
    stamp = np.concatenate([m[0] for m in mixes])
    source = np.concatenate([m[1] for m in mixes])
    value = np.concatenate([m[2] for m in mixes])
    order = np.lexsort((source, stamp))  # same-cycle events in source order, as the device
    encoder = StreamEncoder(
        flush_after=clock_hz // 1000,  # the appliance's default
        version=version,
        short_records=short_records,
    )
    written = np.empty(len(order), np.int64)
    for index, event in enumerate(
        zip(stamp[order].tolist(), source[order].tolist(), value[order].tolist())
    ):
        encoder.event(*event)
        written[index] = len(encoder._out)  # noqa: SLF001 (bytes so far, without a copy)
    encoder.flush()
    written[-1] = len(encoder.take())
    return stamp[order], np.diff(written, prepend=0)


def encoded_size(clock_hz, *mixes, **encoding):
    """Bytes of the stream the device sends for the events of ``mixes`` (``event_bytes``)."""
    return int(event_bytes(clock_hz, *mixes, **encoding)[1].sum())


def bytes_per_event(clock_hz, *mixes, **encoding):
    """Bytes per event of the stream of ``mixes`` (``encoded_size``), and the events per
    second of a mix of ``DURATION_S``."""
    count = sum(len(m[0]) for m in mixes)
    return encoded_size(clock_hz, *mixes, **encoding) / count, count / DURATION_S


def played(traffic, factor):
    """``traffic`` with its time stretched by ``factor`` (below 1: played faster): each stamp's
    distance from the first multiplied by it and rounded; an event that would then share a
    stamp with the one before it of its source goes a stamp unit after that one (the device
    takes one event of a source per cycle)."""
    stamp, source, value = traffic
    first = int(stamp.min())
    scaled = np.rint((stamp.astype(np.int64) - first) * factor).astype(np.int64)
    for src in np.unique(source):
        index = np.flatnonzero(source == src)
        index = index[np.argsort(stamp[index], kind="stable")]
        # Strictly rising within the source: s'[i] = max(s[i], s'[i - 1] + 1).
        rank = np.arange(len(index))
        scaled[index] = np.maximum.accumulate(scaled[index] - rank) + rank
    return (first + scaled).astype(np.uint64), source, value


def mean_rate(stamp_hz, traffic):
    """Events per second of ``traffic``: its intervals over the time from its first event to
    its last."""
    stamp = traffic[0]
    return (len(stamp) - 1) / ((int(stamp.max()) - int(stamp.min())) / stamp_hz)


def fifo_levels(stamp_hz, stamp, size, link_bytes_per_s):
    """The event FIFO's level as each event arrives (the events before it still in it) when
    events of ``size`` bytes arrive at ``stamp`` and the link sends the stream's bytes in
    order at ``link_bytes_per_s``. An event leaves the FIFO when the link starts sending its
    bytes: the few bytes the link's own buffer holds (the SPI target's 256, a UART's
    register) are not counted, so the levels are an upper bound."""
    arrive = (stamp.astype(np.int64) - int(stamp[0])) / stamp_hz
    sent = np.cumsum(size) / link_bytes_per_s
    # Each event's bytes are sent by max over earlier events j of (arrival of j + the time
    # to send the bytes of j .. it): the link is busy from j on.
    done = sent + np.maximum.accumulate(arrive - (sent - size / link_bytes_per_s))
    leave = np.maximum(arrive, np.concatenate([[-np.inf], done[:-1]]))
    index = np.arange(len(stamp))
    return index - np.minimum(index, np.searchsorted(leave, arrive, side="right"))


#: The lossless rate is found to within this share (the fixed point's and the bisection's).
RATE_TOLERANCE = 1e-3


def lossless_rate(stamp_hz, traffic, link_bytes_per_s, fifo_depth, **encoding):
    """The largest event rate at which ``traffic``, played at that rate over and over, loses
    nothing on a link of ``link_bytes_per_s`` behind an event FIFO of ``fifo_depth`` entries:
    (events/s, speed-up of the traffic's own timing, bytes per event there, the FIFO's
    highest level there).

    Played faster (``played``), a stream costs fewer bytes per event: shorter deltas, fuller
    segments under the device's rules (255 events, 1 ms). Two bounds:

    * over and over, its bytes must not outrun the link: the fixed point of ``rate = link /
      bytes per event of the traffic played at rate``, from its own timing, each step
      playing it at the rate the step before gave;
    * once, its bursts must fit the FIFO (``fifo_levels`` below ``fifo_depth``): where the
      fixed point's do not, the largest speed-up at which they do, by bisection.

    The rate is the traffic's mean rate (``mean_rate``) at the lower of the two speed-ups."""

    def at(speed):
        fast = played(traffic, 1 / speed)
        stamp, size = event_bytes(stamp_hz, fast, **encoding)
        levels = fifo_levels(stamp_hz, stamp, size, link_bytes_per_s)
        return mean_rate(stamp_hz, fast), size.sum() / len(size), int(levels.max())

    speed = 1.0
    for _ in range(20):
        rate, per_event, highest = at(speed)
        fits = link_bytes_per_s / per_event
        if abs(fits / rate - 1) < RATE_TOLERANCE:
            break
        speed *= fits / rate
    else:
        raise RuntimeError(f"no fixed point for the lossless rate (last {fits:,.0f}/s)")
    speed *= min(1, fits / rate)  # the fixed point's rate, not above it
    rate, per_event, highest = at(speed)
    if highest < fifo_depth:
        return rate, speed, per_event, highest
    low, high = speed, speed
    while highest >= fifo_depth:
        low /= 2
        rate, per_event, highest = at(low)
    while high / low - 1 > RATE_TOLERANCE:
        middle = (low * high) ** 0.5
        if at(middle)[2] < fifo_depth:
            low = middle
        else:
            high = middle
    rate, per_event, highest = at(low)
    return rate, low, per_event, highest


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


def spi_duty(spi_hz, command_s):
    """Share of the time the MPSSE clocks SCK while READ transactions are queued: each
    clocks its opcode and ``READ_BYTES`` bytes, and pauses for its other commands."""
    clocking = (1 + READ_BYTES) * 8 / spi_hz
    pause = len(transaction_commands(0, READ_BYTES)) * command_s
    return clocking / (clocking + pause)


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
    rows, known = [], {}

    def rate(traffic_index, *link, **encoding):
        # Boards with the same FIFO share today's rate: found once.
        key = (traffic_index, link, tuple(sorted(encoding.items())))
        if key not in known:
            _, stamp_hz, traffic = traffics[traffic_index]
            known[key] = lossless_rate(stamp_hz, traffic, *link, **encoding)
        return known[key]

    for index, (label, _, _) in enumerate(traffics):
        for name, (variant, board) in spi_builds_of(SPI_BOARDS).items():
            # Today's: the same board's FIFO behind the UART.
            today = rate(index, LINK_BYTES_PER_S, board.fifo_depth, version=3)
            # A board built without short records sends version 4's long records only.
            spi = spi_bytes_per_s(board.spi_hz, duty)
            ours = rate(index, spi, board.fifo_depth, short_records=board.short_records)
            rows.append((label, record_name(name, variant), ours, today))
    return rows


def spi_builds_of(names):
    """{board name: (variant, build)} of the boards ``names`` with an SPI-link build: the
    shipped build where it has the link, else the variant that does (the iCEBreaker's
    ``spi``)."""
    return {name: next(iter(builds.items())) for name in names if (builds := spi_builds(name))}


def print_spi_rates(capture, duty, command_s):
    """Prints the SPI link's lossless event rates against today's at ``duty`` (derived from
    ``command_s`` where None); gives the smallest ratio (0 without a board with the link)."""
    without = [name for name in SPI_BOARDS if name not in spi_builds_of(SPI_BOARDS)]
    clocking = (1 + READ_BYTES) * 8 / MPSSE_SCK_HZ
    commands = len(transaction_commands(0, READ_BYTES))
    print(
        f"\nSPI link (docs/spi-link.md): {spi_bytes_per_s(MPSSE_SCK_HZ, 1) / 1e6:.2f} MB/s at "
        f"{MPSSE_SCK_HZ / 1e6:g} MHz clocking without a pause"
    )
    if duty is None:
        duty = spi_duty(MPSSE_SCK_HZ, command_s)
        print(
            f"MPSSE duty {duty:.4f}: READ transactions of {READ_BYTES} bytes, {QUEUE_DEPTH} "
            f"queued; each clocks {1 + READ_BYTES} bytes ({clocking * 1e6:.1f} us) and pauses "
            f"for {commands} commands of {command_s * 1e6:g} us (--mpsse-command-us, an "
            "assumed bound)"
        )
    else:
        print(f"MPSSE duty {duty:.4f} (--spi-duty)")
    stream = spi_bytes_per_s(MPSSE_SCK_HZ, duty)
    usb = duty * MPSSE_SCK_HZ / 8 * USB_PACKET / (USB_PACKET - USB_STATUS)
    print(
        f"  stream {stream / 1e6:.3f} MB/s; on USB with {USB_STATUS} status bytes per "
        f"{USB_PACKET}: {usb / 1e6:.3f} MB/s, {usb / USB_BULK_BYTES_PER_S:.0%} of high-speed "
        f"bulk; the host must take the FT2232H's {FT2232H_RX_BUFFER} B buffer every "
        f"{FT2232H_RX_BUFFER / (MPSSE_SCK_HZ / 8) * 1e3:.2f} ms or SCK stops"
    )
    if without:
        print(f"No SPI link in the build of {', '.join(without)} (docs/spi-link.md)")
    print(f"Goal (issue 31): {RATE_GOAL}x today's lossless event rate (12 Mbaud, version 3)")
    print(
        "  each stream played at its lossless rate: its bytes per event there (B/ev), its"
        " speed-up of its own timing (x), the event FIFO's highest level in the model (FIFO)"
    )
    ratios = []
    for label, board, (rate, speed, size, fifo), (today, *before) in spi_rates(capture, duty):
        # The duty the goal needs at this rate's bytes per event (an estimate: the rate
        # scales with the duty as long as the bytes per event stay).
        needed = duty * RATE_GOAL * today / rate
        if needed > 1:
            verdict = f"NOT MET (needs duty {needed:.3f}: at duty 1 {rate / duty / today:.2f}x)"
        else:
            slowest = clocking * (1 / needed - 1) / commands
            verdict = "met" if needed <= duty else "NOT MET"
            verdict += f" (needs duty {needed:.3f}: commands of at most {slowest * 1e6:.1f} us)"
        ratios.append(rate / today)
        print(
            f"  {board:<17} {label:<38} {rate:11,.0f} ev/s {size:4.2f} B/ev {speed:5.2f}x"
            f" FIFO {fifo:4}  today {today:9,.0f} {before[1]:4.2f} B/ev {before[0]:5.2f}x"
            f" FIFO {before[2]:4}  {rate / today:4.2f}x  {verdict}"
        )
    return min(ratios, default=0.0)


def main(argv=None):
    options = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    options.add_argument("--capture", help="a capture file to measure instead of make demo's")
    options.add_argument(
        "--spi-duty",
        type=float,
        help="share of the time the MPSSE clocks SCK (default: derived, see --mpsse-command-us)",
    )
    options.add_argument(
        "--mpsse-command-us",
        type=float,
        default=ASSUMED_COMMAND_S * 1e6,
        help="microseconds the MPSSE takes per command it executes without clocking "
        f"(default {ASSUMED_COMMAND_S * 1e6:g}, an assumed bound)",
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
    worst_ratio = print_spi_rates(args.capture, args.spi_duty, args.mpsse_command_us * 1e-6)
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
