"""Capture files: exact round trip, a cut at every byte offset, damaged chunks, a writer
killed with SIGKILL, and the one documented exception."""

import multiprocessing
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
import zlib

import pytest

from latscope.capture.batches import CaptureBatches
from latscope.capture.file import (
    CHUNK_OVERHEAD,
    GAP,
    NOT_CLOSED,
    CaptureFileError,
    CaptureReader,
    CaptureWriter,
    ChunkType,
    encode_chunk,
    file_header,
    load_capture,
)
from latscope.events import Events
from latscope.link.parser import StreamParser
from latscope_defs.protocol import HOLE_SOURCE, Source, StreamEncoder, hole_count

METADATA = {
    "identity": {
        "clock_hz": 100_000_000,
        "marker_width": 16,
        "board": "test",
        "latency": {"MARKER": 3, "IRQ": 1},
    },
    "start_time": "2024-01-01T00:00:00+0000",
    "test_info": "unit test",
}
LATENCY = {Source.MARKER: 3, Source.IRQ: 1}
KILLED = {"identity": {"clock_hz": 1000}, "test_info": "killed"}
HEADER = 16


def make_stream(count=120, seed=4):
    """A device stream: markers and IRQ edges, a SYNC every few events (long gaps)."""
    rng = random.Random(seed)
    encoder = StreamEncoder()
    stamp = 10_000
    for n in range(count):
        stamp += rng.choice([1, 30, 400, 1 << 24])
        source = rng.choice([Source.MARKER, Source.IRQ])
        encoder.event(stamp, source, rng.getrandbits(16) if source == Source.MARKER else n & 1)
    encoder.flush()
    return encoder.take()


def crafted(metadata_payload, stream=b"", end=None):
    """A file with this METADATA payload (bytes, CRC right), one DATA chunk and an END."""
    out = file_header() + encode_chunk(ChunkType.METADATA, 0, 0, metadata_payload)
    if stream:
        out += encode_chunk(ChunkType.DATA, 1, 0, stream)
    if end is not None:
        out += encode_chunk(ChunkType.END, 2, len(stream), end)
    return out


def parse(data, latency=LATENCY):
    parser = StreamParser(latency=latency)
    return list(Events.concatenate([parser.feed(data), parser.finish()]))


def is_hole(event):
    return event[1] == Source.LOSS and event[2] & 0xF == HOLE_SOURCE


def real(events):
    """The events without the parser's holes."""
    return [event for event in events if not is_hole(event)]


def write_capture(path, stream, chunk_size, rng=None):
    rng = rng or random.Random(0)
    with CaptureWriter(path, METADATA, chunk_size=chunk_size) as writer:
        at = 0
        while at < len(stream):
            size = rng.randint(1, 3 * chunk_size)
            writer.write(stream[at : at + size])
            at += size
        writer.close({"events": 99})
    return path


def chunk_bounds(data, kinds=(1, 2, 3)):
    """(start, end, payload) of every chunk of an intact file (of the given types)."""
    chunks, at = [], HEADER
    while at < len(data):
        length = int.from_bytes(data[at + 12 : at + 16], "little")
        end = at + CHUNK_OVERHEAD + length
        if data[at + 4] in kinds:
            chunks.append((at, end, data[at + CHUNK_OVERHEAD : end]))
        at = end
    return chunks


def data_chunks(data):
    return chunk_bounds(data, kinds=(2,))


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    stream = make_stream()
    path = tmp_path_factory.mktemp("cap") / "capture.lsc"
    write_capture(path, stream, chunk_size=100)
    return stream, path.read_bytes()


def test_round_trip(tmp_path, capture):
    stream, data = capture
    path = tmp_path / "c.lsc"
    path.write_bytes(data)
    reader = CaptureReader(path)
    assert reader.metadata == METADATA
    assert b"".join(list(reader)) == stream
    assert reader.end == {
        "data_bytes": len(stream),
        "chunks": reader.stats.chunks_ok,
        "stats": {"events": 99},
        "metadata": METADATA,
    }
    assert reader.stats.complete and reader.stats.chunks_ok >= 8
    assert (reader.stats.chunks_bad, reader.stats.gaps, reader.stats.truncated_bytes) == (0, 0, 0)
    loaded = load_capture(path)
    assert list(loaded.events) == parse(stream)
    assert len(loaded.events) == 120 and loaded.clock_hz == 100_000_000
    assert loaded.parser_stats.segments_bad == 0
    assert "complete" in loaded.summary()


def test_latency_and_marker_width_come_from_the_metadata(tmp_path):
    encoder = StreamEncoder(marker_width=8)
    encoder.event(1000, Source.MARKER, 0xAB)
    encoder.event(1005, Source.IRQ, 1)
    encoder.flush()
    metadata = {
        "identity": {"clock_hz": 10**6, "marker_width": 8, "latency": {"MARKER": 2, "IRQ": 4}}
    }
    with CaptureWriter(tmp_path / "w.lsc", metadata) as writer:
        writer.write(encoder.take())
    assert list(load_capture(tmp_path / "w.lsc").events) == [(998, 0, 0xAB), (1001, 2, 1)]
    raw = load_capture(tmp_path / "w.lsc", correct_latency=False)
    assert list(raw.events) == [(1000, 0, 0xAB), (1005, 2, 1)]


@pytest.mark.slow
def test_cut_at_every_byte_offset(tmp_path, capture):
    stream, data = capture
    chunks = chunk_bounds(data)
    metadata_end = chunks[0][1]
    expected = {}  # end of the last intact chunk -> events
    for _, end, _ in chunks:
        prefix = b"".join(payload for _, e, payload in data_chunks(data) if e <= end)
        assert stream.startswith(prefix)
        expected[end] = parse(prefix)
    path = tmp_path / "cut.lsc"
    for cut in range(len(data) + 1):
        path.write_bytes(data[:cut])
        if cut < metadata_end:
            with pytest.raises(CaptureFileError) as error:
                load_capture(path)
            assert str(path) in str(error.value) and "\n" not in str(error.value)
            continue
        loaded = load_capture(path)
        intact = max(end for _, end, _ in chunks if end <= cut)
        got = list(loaded.events)
        assert real(got) == real(expected[intact]), cut
        assert not any(is_hole(event) for event in got[:-1]), cut  # a hole only at the end
        stats = loaded.file_stats
        assert stats.truncated_bytes == cut - intact, cut
        assert stats.chunks_bad == 0
        assert stats.complete == (cut == len(data))
        assert stats.data_bytes == sum(len(p) for s, e, p in data_chunks(data) if e <= cut)


@pytest.mark.parametrize("where", ["magic", "length", "payload", "crc"])
def test_damaged_middle_chunk_costs_only_its_segments(tmp_path, capture, where):
    stream, data = capture
    chunks = data_chunks(data)
    start, end, payload = chunks[len(chunks) // 2]
    offset = {
        "magic": start,
        "length": start + 13,
        "payload": start + CHUNK_OVERHEAD + 50,
        "crc": start + 25,
    }[where]
    damaged = bytearray(data)
    damaged[offset] ^= 0x5A
    path = tmp_path / "bad.lsc"
    path.write_bytes(bytes(damaged))
    loaded = load_capture(path)
    before = b"".join(p for s, e, p in chunks if e <= start)
    after = b"".join(p for s, e, p in chunks if s >= end)
    # The parser trusts nothing after the gap until the next SYNC, as a fresh parser would.
    got = list(loaded.events)
    assert real(got) == real(parse(before)) + real(parse(after))
    assert len(real(got)) < len(parse(stream))
    # One hole where the chunk was, counting at least the events lost there.
    holes = [n for n, event in enumerate(got) if is_hole(event)]
    assert holes == [len(real(parse(before)))]
    assert hole_count(got[holes[0]][2]) >= len(parse(stream)) - len(real(got))
    stats = loaded.file_stats
    assert (stats.chunks_bad, stats.gaps, stats.complete) == (1, 1, True)
    assert stats.bytes_skipped == end - start
    assert loaded.parser_stats.segments_bad == 1


def test_garbage_between_chunks_is_skipped_without_a_gap(tmp_path, capture):
    stream, data = capture
    chunks = chunk_bounds(data)
    at = chunks[3][0]
    path = tmp_path / "garbage.lsc"
    path.write_bytes(data[:at] + b"LSCK" + bytes(40) + data[at:])
    loaded = load_capture(path)
    assert list(loaded.events) == parse(stream)
    assert (loaded.file_stats.chunks_bad, loaded.file_stats.gaps) == (1, 0)


def test_exception_inside_the_writer_leaves_no_end_chunk(tmp_path):
    stream = make_stream(30)
    path = tmp_path / "aborted.lsc"
    with pytest.raises(KeyboardInterrupt):
        with CaptureWriter(path, METADATA) as writer:
            writer.write(stream)
            raise KeyboardInterrupt
    reader = CaptureReader(path)
    assert b"".join(list(reader)) == stream
    assert reader.end is None and not reader.stats.complete
    assert NOT_CLOSED in load_capture(path).summary()


def test_writer_bounds_chunks_and_flushes_on_time(tmp_path):
    now = [0.0]
    path = tmp_path / "timed.lsc"
    writer = CaptureWriter(path, METADATA, chunk_size=100, flush_interval=0.5, clock=lambda: now[0])
    writer.write(bytes(250))  # two full chunks, 50 bytes buffered
    assert writer.data_bytes == 200
    now[0] = 0.4
    writer.write(bytes(10))
    assert writer.data_bytes == 200  # less than flush_interval since the last chunk
    now[0] = 1.0
    writer.write(bytes(5))
    assert writer.data_bytes == 265  # written at once, readable after a crash
    reader = CaptureReader(path)  # the file as it is now, writer still open
    assert [len(p) for p in reader] == [100, 100, 65]
    writer.close()
    writer.close()
    with pytest.raises(ValueError):
        writer.write(b"x")


def test_capture_killed_with_sigkill_keeps_its_chunks(tmp_path):
    stream = make_stream(200, seed=9)
    path = tmp_path / "killed.lsc"
    (tmp_path / "stream.bin").write_bytes(stream)
    script = textwrap.dedent(f"""
        import sys, time
        from latscope.capture.file import CaptureWriter
        stream = open({str(tmp_path / "stream.bin")!r}, 'rb').read()
        writer = CaptureWriter({str(path)!r}, {KILLED!r}, chunk_size=300)
        writer.write(stream[:1000])           # three chunks written, 100 bytes buffered
        print("ready", flush=True)
        time.sleep(60)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "ready\n"
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert child.returncode == -signal.SIGKILL
    loaded = load_capture(path)
    assert loaded.metadata == KILLED
    assert loaded.file_stats.data_bytes == 900 and not loaded.file_stats.complete
    assert list(loaded.events) == parse(stream[:900], latency=None)
    assert len(loaded.events) > 0


def test_unreadable_files_raise_the_documented_error(tmp_path, capture):
    _, data = capture
    metadata_end = chunk_bounds(data)[0][1]
    version = data[:8] + b"\x07\x00" + data[10:12]
    cases = {
        "missing.lsc": None,
        "empty.lsc": b"",
        "text.lsc": b"this is not a capture file at all\n",
        "version.lsc": version + zlib.crc32(version).to_bytes(4, "little") + data[16:],
        # The metadata damaged and no copy of it (the file ends before the first DATA).
        "metadata.lsc": data[: HEADER + CHUNK_OVERHEAD + 2]
        + b"X"
        + data[HEADER + CHUNK_OVERHEAD + 3 : metadata_end],
        "directory.lsc": "dir",
    }
    for name, content in cases.items():
        path = tmp_path / name
        if content == "dir":
            path.mkdir()
        elif content is not None:
            path.write_bytes(content)
        with pytest.raises(CaptureFileError) as error:
            load_capture(path)
        message = str(error.value)
        assert message.startswith(f"{path}: byte ") and "\n" not in message, message
        assert isinstance(error.value, OSError)
    assert CaptureFileError("f", 12, "why").offset == 12


def test_metadata_must_be_a_json_object(tmp_path):
    path = tmp_path / "list.lsc"
    path.write_bytes(crafted(b"[1, 2]"))
    with pytest.raises(CaptureFileError, match="JSON object"):
        CaptureReader(path)
    with pytest.raises(ValueError, match="JSON object"):
        CaptureWriter(tmp_path / "w.lsc", [1, 2])
    assert not (tmp_path / "w.lsc").exists()
    assert GAP is not None


def test_batches_summarise_only_what_they_read(tmp_path, capture):
    _, data = capture
    path = tmp_path / "c.lsc"
    path.write_bytes(data)
    batches = CaptureBatches(path, batch_bytes=64)
    with pytest.raises(RuntimeError, match="before the batches were read"):
        batches.summary(0)
    count = sum(len(events) for events in batches)
    assert count == 120
    assert batches.summary(count) == load_capture(path).summary()


def test_batches_from_the_helper_process_are_the_same(tmp_path, capture):
    """The helper process hands its batches over through a file in memory: the same events,
    batches and summary as read here, when the reader is slower than the helper too."""
    _, data = capture
    path = tmp_path / "c.lsc"
    path.write_bytes(data)
    here = list(CaptureBatches(path, batch_bytes=16))
    helper = CaptureBatches(path, batch_bytes=16, background=True)
    there = []
    for events in helper:  # slowly: the helper is done before the last batch is read
        there.append(events)
        time.sleep(0.01)
    assert len(here) == len(there) > 2
    for a, b in zip(here, there):
        assert a.stamp.tolist() == b.stamp.tolist()
        assert a.source.tolist() == b.source.tolist()
        assert a.value.tolist() == b.value.tolist()
    count = sum(len(events) for events in there)
    assert helper.summary(count) == load_capture(path).summary()


def test_without_a_memfd_the_batches_are_read_in_process(tmp_path, capture, monkeypatch):
    """Where the system has no memfd (not Linux), ``background`` reads in the caller's
    process: no helper is started, and the batches are the same."""
    from latscope.capture import batches as module

    _, data = capture
    path = tmp_path / "c.lsc"
    path.write_bytes(data)
    here = [events.stamp.tolist() for events in CaptureBatches(path, batch_bytes=16)]
    monkeypatch.setattr(module, "HELPER_AVAILABLE", False)
    background = CaptureBatches(path, batch_bytes=16, background=True)
    there = []
    for events in background:
        assert not multiprocessing.active_children()
        there.append(events.stamp.tolist())
    assert there == here
