"""The fault campaign, part 2 (issue 29): old data, reordering, concatenation and device
resets, checked against ground truth as test_fault_injection.py checks damage (its
``check``: no fabricated or altered event, no invented sample, every missing event inside a
hole). Faults: segments replayed (one, two, many in a row; the whole stream again), segments
and DATA chunks swapped, two captures in one stream and in one file, 1000 device resets in
one stream (built with the reference encoder: a fresh ``StreamEncoder`` is a device after
power-up and START)."""

import random
import re

import numpy as np
import pytest
from test_fault_injection import HZ, check, parse_link

from latscope.analysis.pairing import analyze
from latscope.analysis.spans import holes_of
from latscope.capture.file import CaptureWriter, load_capture
from latscope.events import Events
from latscope_defs.protocol import HoleCount, Source, lead_bytes
from support.synthetic_suite import IDENTITY, encode, make_run

_SYNC = lead_bytes(Source.SYNC)
SYNC_LEAD = re.compile(
    b"[" + re.escape(bytes([_SYNC[0]])) + b"-" + re.escape(bytes([_SYNC[-1]])) + b"]"
)


def segments(data):
    starts = [m.start() for m in SYNC_LEAD.finditer(data)] + [len(data)]
    return [data[a:b] for a, b in zip(starts, starts[1:])]


def samples_of(events):
    return {
        name: dict(zip(t.starts.tolist(), t.samples.tolist()))
        for name, t in analyze(events, HZ).items()
    }


@pytest.mark.parametrize("length", [1, 2, 5, 40])
def test_replayed_segments(suite, length):
    """``length`` consecutive old segments sent again at a later place, three places per
    run: nothing invented, nothing lost, the tables of the truth."""
    run, truth, stream = suite
    parts = segments(stream)
    for seed in range(3):
        rng = random.Random(f"replay {length} {seed}")
        at = rng.randrange(length, len(parts) - 1)
        first = rng.randrange(0, at - length + 1)
        replayed = b"".join(parts[:at] + parts[first : first + length] + parts[at:])
        events = parse_link(replayed, rng)
        where = f"replay of {length} at {at}"
        check(events, run, truth, where)
        assert samples_of(events) == run.samples, where
        assert not holes_of(events), where


@pytest.mark.parametrize("copies", [2, 3])
def test_the_stream_sent_again(suite, copies):
    """A capture copied twice (three times) into one stream: the tables of one copy."""
    run, truth, stream = suite
    events = parse_link(stream * copies, random.Random(copies))
    check(events, run, truth, f"{copies} copies")
    assert samples_of(events) == run.samples
    assert int(events.stamp.max()) == max(stamp for stamp, _, _ in run.events)


def test_swapped_segments(suite):
    """Pairs of neighbouring segments swapped at random places: the late one of each pair
    is lost, inside a hole of its exact count."""
    run, truth, stream = suite
    for seed in range(4):
        rng = random.Random(f"swap {seed}")
        parts = segments(stream)
        for at in sorted(rng.sample(range(1, len(parts) - 2), 10)):
            parts[at], parts[at + 1] = parts[at + 1], parts[at]
        events = parse_link(b"".join(parts), rng)
        check(events, run, truth, f"swaps, seed {seed}")
        holes = holes_of(events)
        assert holes and all(hole.kind == HoleCount.EXACT and hole.lost < 1000 for hole in holes)
        delivered = len(events) - len(holes)
        assert sum(hole.lost for hole in holes) == len(run.events) - delivered


def write(path, stream, chunk_size=2048, **metadata):
    with CaptureWriter(
        path, {"identity": IDENTITY, **metadata}, chunk_size=chunk_size, metadata_every=8
    ) as writer:
        writer.write(stream)
    return path.read_bytes()


def data_chunk_starts(data):
    """File offsets of the DATA chunks of an intact file, and the end of each."""
    at, found = 16, []
    while at < len(data):
        end = at + 28 + int.from_bytes(data[at + 12 : at + 16], "little")
        if data[at + 4] == 2:
            found.append((at, end))
        at = end
    return found


def test_swapped_data_chunks(suite, tmp_path):
    """Neighbouring intact DATA chunks swapped in the file: every event read, no gap."""
    run, truth, stream = suite
    data = write(tmp_path / "clean.lsc", stream)
    chunks = data_chunk_starts(data)
    for seed in range(3):
        rng = random.Random(f"chunks {seed}")
        out = bytearray(data)
        for k in rng.sample(range(0, len(chunks) - 1, 2), 5):  # pairs apart
            (a, b), (_, c) = chunks[k], chunks[k + 1]
            out[a:c] = data[b:c] + data[a:b]
        path = tmp_path / "swapped.lsc"
        path.write_bytes(bytes(out))
        capture = load_capture(path)
        check(capture.events, run, truth, f"swapped chunks, seed {seed}")
        assert sorted(capture.events) == sorted(run.events)
        assert capture.file_stats.gaps == 0


def check_runs(events, runs, where):
    """Events of several runs of the device, one after another: split at the holes that
    say the device restarted, each part is its run (stamps moved by one constant, which
    keeps the time line going forward) under ``check``; and no sample spans two runs."""
    restarts = [hole.index for hole in holes_of(events) if hole.restart]
    assert len(restarts) == len(runs) - 1, f"{where}: {len(restarts)} restarts"
    bounds = [0, *restarts, len(events)]
    end = None
    for k, (run, low, high) in enumerate(zip(runs, bounds, bounds[1:])):
        part = events[np.arange(low, high)]
        shift = int(part.stamp.min()) - min(stamp for stamp, _, _ in run.events)
        assert end is None or int(part.stamp.min()) > end, f"{where}: run {k} goes back"
        end = int(part.stamp.max())
        check(
            Events(part.stamp - np.uint64(shift), part.source, part.value),
            run,
            run.truth(),
            f"{where}: run {k}",
        )
    counts = {name: len(table.samples) for name, table in analyze(events, HZ).items()}
    assert counts == {
        name: sum(len(run.samples.get(name, {})) for run in runs) for name in counts
    }, where


def test_two_captures_in_one_stream():
    """Two captures of a device reset between them, in one stream: both read, as two runs
    (the second a device reset), each exactly."""
    runs = [make_run(seed=11, count=100), make_run(seed=12, count=100)]
    events = parse_link(b"".join(encode(run.events) for run in runs), random.Random(2))
    check_runs(events, runs, "two captures")


def test_two_captures_in_one_file(tmp_path):
    """``cat a.lsc b.lsc``: the first capture read whole, the second reported, not read."""
    runs = [make_run(seed=11, count=100), make_run(seed=12, count=100)]
    data = [
        write(tmp_path / f"{k}.lsc", encode(run.events), test_info=str(k))
        for k, run in enumerate(runs)
    ]
    path = tmp_path / "both.lsc"
    path.write_bytes(data[0] + data[1])
    capture = load_capture(path)
    check(capture.events, runs[0], runs[0].truth(), "two files")
    assert sorted(capture.events) == sorted(runs[0].events)
    assert (capture.file_stats.appended_captures, capture.file_stats.chunks_bad) == (1, 0)


@pytest.mark.slow  # about 10 s; test_replay_and_resets runs many resets in make check
def test_a_thousand_resets():
    """1000 device resets in one stream: every run read exactly, the time line the sum of
    the runs' (not 2**48 per reset)."""
    runs = [make_run(seed=k, count=2) for k in range(1001)]
    events = parse_link(b"".join(encode(run.events) for run in runs), random.Random(3))
    check_runs(events, runs, "1000 resets")
    span = sum(
        max(s for s, _, _ in run.events) - min(s for s, _, _ in run.events) + 10 for run in runs
    )
    assert int(events.stamp.max()) < span
