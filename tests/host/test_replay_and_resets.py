"""Old data is never new data, a device reset starts a new run (issue 29, point 1): replayed
segments (one, two, many in a row; a stream sent twice), reordered segments and device resets
told apart by the parser, with exact hole counts and stamps that keep counting real time
(docs/protocol.md, "What a reader guarantees")."""

import re

import pytest

from latscope.events import Events
from latscope.link.chain import OPENINGS_KEPT
from latscope.link.parser import StreamParser
from latscope_defs.protocol import (
    HoleCount,
    Source,
    StreamEncoder,
    hole_count,
    hole_kind,
    hole_restart,
    hole_value,
    lead_bytes,
    lead_source,
)

_SYNC = lead_bytes(Source.SYNC)
SYNC_LEAD = re.compile(
    b"[" + re.escape(bytes([_SYNC[0]])) + b"-" + re.escape(bytes([_SYNC[-1]])) + b"]"
)


def stream(count=2000, start=1000, step=97, sent=0):
    """The events of a device started from power-up (``sent``: event records it sent
    before this capture's START) and its byte stream: markers ``step`` stamps apart, a
    segment every 255 events or at the age rule."""
    events = [(start + step * n, int(Source.MARKER), n & 0xFFFF) for n in range(count)]
    encoder = StreamEncoder(flush_after=4000, sent=sent)
    for event in events:
        encoder.event(*event)
    encoder.flush()
    return events, encoder.take()


def segments(data):
    """The bytes of each segment of a clean stream."""
    starts = [m.start() for m in SYNC_LEAD.finditer(data)] + [len(data)]
    return [data[a:b] for a, b in zip(starts, starts[1:])]


def event_records(segment):
    """The event records of a segment (lead bytes of sources below TALLY)."""
    return sum(1 for byte in segment if byte & 0x80 and lead_source(byte) < Source.TALLY)


def parse(data, latency=None, piece=None):
    parser = StreamParser(latency=latency)
    piece = piece or len(data) or 1
    parts = [parser.feed(data[at : at + piece]) for at in range(0, len(data), piece)]
    return list(Events.concatenate(parts + [parser.finish()])), parser


def holes(got):
    return [event for event in got if event[1] == Source.LOSS and event[2] & 0xF == 0xF]


def delivered(got):
    return [event for event in got if not (event[1] == Source.LOSS and event[2] & 0xF == 0xF)]


def test_segments_of_the_helper_stream():
    events, data = stream()
    parts = segments(data)
    assert len(parts) > 20 and b"".join(parts) == data
    assert parse(data)[0] == events


@pytest.mark.parametrize("repeated", [1, 2, 3, 12])
def test_old_segments_in_a_row_are_rejected_and_counted(repeated):
    """One, two, many consecutive old segments with valid CRCs (a link or buffer sending
    them again) after segment 20: no event twice, no hole, time not moved."""
    events, data = stream()
    parts = segments(data)
    old = parts[5 : 5 + repeated]
    replayed = b"".join(parts[:20] + old + parts[20:])
    for piece in (None, 7):
        got, parser = parse(replayed, piece=piece)
        assert got == events
        assert (parser.stats.segments_old, parser.stats.records_old) == (
            repeated,
            sum(map(event_records, old)),
        )
        assert (parser.stats.holes, parser.stats.segments_bad, parser.stats.resets) == (0, 0, 0)


@pytest.mark.parametrize("copies", [2, 3])
def test_a_stream_sent_again_gives_one_copy(copies):
    """A capture copied into one stream again and again: the events of one copy (not a
    device reset per copy, not 2**48 later)."""
    events, data = stream()
    got, parser = parse(data * copies)
    assert got == events
    assert parser.stats.segments_old == (copies - 1) * len(segments(data))
    assert (parser.stats.holes, parser.stats.resets) == (0, 0)


def test_a_stream_sent_again_not_from_power_up_gives_one_copy():
    """A capture that was not the device's first since power-up: its first segment is no
    reset either."""
    events, data = stream(sent=5000)
    got, parser = parse(data + data)
    assert got == events and parser.stats.holes == 0


def test_swapped_segments_lose_the_late_one_exactly():
    """Segments 10 and 11 swapped: 11 is delivered after a hole of exactly segment 10's
    records; 10, behind what was delivered, is rejected; 12 follows 11. No hole count near
    2**24, no event out of place."""
    events, data = stream()
    parts = segments(data)
    counts = list(map(event_records, parts))
    before = sum(counts[:10])
    got, parser = parse(b"".join(parts[:10] + [parts[11], parts[10]] + parts[12:]))
    hole = (events[before + counts[10]][0], int(Source.LOSS), hole_value(counts[10]))
    assert got == events[:before] + [hole] + events[before + counts[10] :]
    assert (parser.stats.segments_old, parser.stats.records_dropped) == (1, counts[10])


def reset_streams(latency=None):
    """Two runs of a device with a reset between them: the second starts from power-up
    again, its stamps low, its sequence from 0 (a fresh encoder: START after power-up)."""
    first, one = stream(count=700, start=5_000_000)
    second, two = stream(count=500, start=2000, step=131)
    return first, second, one, two


def test_a_device_reset_starts_a_new_run():
    """Every event of both runs; between them a hole that says the device restarted
    (nothing missing from the stream: exactly 0), and the second run's stamps right after
    the first's, in its own steps: time does not jump 2**48."""
    first, second, one, two = reset_streams()
    got, parser = parse(one + two)
    assert got[: len(first)] == first
    hole = got[len(first)]
    assert hole[2] == hole_value(0, HoleCount.EXACT, restart=True)
    after = got[len(first) + 1 :]
    assert [(source, value) for _, source, value in after] == [
        (source, value) for _, source, value in second
    ]
    assert [a[0] - after[0][0] for a in after] == [s[0] - second[0][0] for s in second]
    assert hole[0] == after[0][0] == first[-1][0] + 1
    assert (parser.stats.resets, parser.stats.holes, parser.stats.segments_old) == (1, 1, 0)


def test_a_reset_keeps_corrected_stamps_in_order():
    """With pin latencies the second run starts a margin of the largest one later, so
    that no corrected stamp of it lies before the first run's."""
    first, second, one, two = reset_streams()
    latency = {Source.MARKER: 5, Source.IRQ: 2}
    got, parser = parse(one + two, latency=latency)
    stamps = [stamp for stamp, _, _ in delivered(got)]
    assert stamps == sorted(stamps) and len(stamps) == len(first) + len(second)
    assert stamps[len(first)] == first[-1][0] + 1  # raw: + 1 + the margin of 5


def test_bytes_lost_at_a_reset_bound_the_hole():
    first, second, one, two = reset_streams()
    got, parser = parse(one[:-30] + b"\x00\x11\x22" + two)  # the last segment cut
    restart = [h for h in holes(got) if hole_restart(h[2])]
    assert len(restart) == 1 and hole_kind(restart[0][2]) == HoleCount.AT_MOST
    assert hole_count(restart[0][2]) >= 1
    assert delivered(got)[-len(second) :][0][1:] == second[0][1:]


def test_old_data_after_a_reset_is_rejected():
    """After the reset: the first run's opening again (a copy, not another reset), and
    segments of either run again: all old."""
    first, second, one, two = reset_streams()
    p1, p2 = segments(one), segments(two)
    got, parser = parse(one + two + b"".join(p2[1:4] + p1[:6] + p2[2:3]))
    assert delivered(got) == delivered(parse(one + two)[0])
    assert parser.stats.segments_old == 3 + 6 + 1 and parser.stats.resets == 1


def test_a_lost_first_segment_after_a_reset_is_no_reset():
    """What a reset looks like on the wire is its first segment (sent == captured ==
    count): without it the next run cannot be told from old data and is rejected, never
    placed at a guessed time."""
    first, second, one, two = reset_streams()
    got, parser = parse(one + b"".join(segments(two)[1:]))
    assert got == first
    assert parser.stats.segments_old == len(segments(two)) - 1 and parser.stats.resets == 0


def test_many_resets_in_one_stream():
    """More resets than openings are remembered: each run delivered whole, the time line
    the sum of the runs'."""
    runs = [stream(count=3, start=1000 + k, step=50) for k in range(OPENINGS_KEPT + 50)]
    got, parser = parse(b"".join(data for _, data in runs))
    assert len(delivered(got)) == 3 * len(runs)
    assert parser.stats.resets == len(runs) - 1 and parser.stats.segments_old == 0
    assert got[-1][0] < len(runs) * (3 * 50 + 2)


def test_no_hole_count_near_the_sequence_size():
    """Swaps, replays and resets together: every hole count is small and exact."""
    first, second, one, two = reset_streams()
    p1, p2 = segments(one), segments(two)
    data = b"".join(p1[:3] + [p1[4], p1[3]] + p1[1:3] + p1[5:] + p2[:2] + p2[:2] + p2[2:])
    got, parser = parse(data)
    assert all(hole_count(h[2]) < 1000 and hole_kind(h[2]) == HoleCount.EXACT for h in holes(got))
    assert max(stamp for stamp, _, _ in got) < 1 << 32
