"""Capture files, crafted and damaged (issue 11, part 4): metadata checked field by field
with one-line errors, a writer that refuses what the reader would, a scan linear in the file
size, memory bounded whatever the chunk sizes, special files refused, header and metadata
damage that loses nothing intact, repeated chunks read once, format 1 files still read, and
the batch reading API."""

import json
import os
import struct
import tracemalloc
import zlib

import pytest
from test_capture_file import METADATA, crafted, data_chunks, make_stream, parse

from latscope.capture import file as capture_file
from latscope.capture.file import (
    CHUNK_OVERHEAD,
    MAX_PAYLOAD,
    CaptureEvents,
    CaptureFileError,
    CaptureReader,
    CaptureWriter,
    ChunkType,
    encode_chunk,
    file_header,
    load_capture,
)
from latscope.events import Events

HEADER = 16
IDENTITY = METADATA["identity"]

#: (metadata, the field the error names): every one the issue found giving a traceback.
BAD_METADATA = [
    ({}, "identity"),
    ({"identity": []}, "identity"),
    ({"identity": {"clock_hz": 0}}, "identity.clock_hz"),
    ({"identity": {"clock_hz": None}}, "identity.clock_hz"),
    ({"identity": {"clock_hz": "100 MHz"}}, "identity.clock_hz"),
    ({"identity": {"clock_hz": True}}, "identity.clock_hz"),
    ({"identity": {"clock_hz": 1e8}}, "identity.clock_hz"),
    ({"identity": {**IDENTITY, "marker_width": -1}}, "identity.marker_width"),
    ({"identity": {**IDENTITY, "stamp_shift": 1000}}, "identity.stamp_shift"),
    ({"identity": {**IDENTITY, "latency": {"MARKER": {"a": [1]}}}}, "identity.latency.MARKER"),
    ({"identity": {**IDENTITY, "latency": {"SYNC": 1}}}, "identity.latency.SYNC"),
    ({"identity": {**IDENTITY, "latency": [1, 2]}}, "identity.latency"),
    ({"identity": IDENTITY, "irq": {"period": -10}}, "irq.period"),
    ({"identity": IDENTITY, "irq": [5]}, "irq"),
    ({"identity": IDENTITY, "test_info": {"nested": {"deeper": [1]}}}, "test_info"),
]


@pytest.mark.parametrize("metadata, field", BAD_METADATA)
def test_bad_metadata_is_one_line_naming_file_byte_and_field(tmp_path, metadata, field):
    path = tmp_path / "bad.lsc"
    path.write_bytes(crafted(json.dumps(metadata).encode(), make_stream(20)))
    with pytest.raises(CaptureFileError) as error:
        load_capture(path)
    message = str(error.value)
    assert message.startswith(f"{path}: byte ") and "\n" not in message
    assert field in message
    assert HEADER + CHUNK_OVERHEAD <= error.value.offset < path.stat().st_size
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        CaptureWriter(tmp_path / "refused.lsc", metadata)
    assert not (tmp_path / "refused.lsc").exists()


def test_bad_metadata_before_many_bad_chunks_is_named(tmp_path):
    """Bad metadata followed by fake chunks that spend the survey's CRC budget: the error
    still names the field and its byte (it was an AttributeError: the chunk was read again
    within the spent budget)."""
    metadata = {"identity": {**IDENTITY, "marker_width": -1}}
    fake = struct.pack("<4sB3sIIQI", b"LSCK", ChunkType.METADATA, bytes(3), 1, MAX_PAYLOAD, 0, 0)
    payload = json.dumps(metadata).encode()
    path = tmp_path / "bad.lsc"
    path.write_bytes(
        file_header()
        + encode_chunk(ChunkType.METADATA, 0, 0, payload)
        + fake * 1000
        + bytes(MAX_PAYLOAD)
    )
    with pytest.raises(CaptureFileError, match=r"identity\.marker_width") as error:
        CaptureReader(path)
    assert error.value.offset == HEADER + CHUNK_OVERHEAD + payload.find(b'"marker_width"')


@pytest.mark.parametrize(
    "payload", [b"[" * 100_000 + b"]" * 100_000, b'{"a": NaN', b"\xff\xfe", b"1" * 5000, b"null"]
)
def test_metadata_that_is_no_usable_json(tmp_path, payload):
    path = tmp_path / "json.lsc"
    path.write_bytes(crafted(payload, make_stream(20)))
    with pytest.raises(CaptureFileError) as error:
        CaptureReader(path)
    assert str(error.value).startswith(f"{path}: byte {HEADER}") or str(error.value).startswith(
        f"{path}: byte {HEADER + CHUNK_OVERHEAD}"
    )


@pytest.mark.parametrize(
    "end",
    [
        b"[1, 2]",
        b"{}",
        b'{"data_bytes": 5, "chunks": 3, "stats": {"device_status": [1]}}',
        b"[" * 50_000,
        b"x",
    ],
)
def test_unusable_end_chunk_is_ignored_not_raised(tmp_path, end):
    """An END with a right CRC but odd content: the data reads, the file counts as not
    closed cleanly, and the report does not fall over."""
    stream = make_stream(30)
    path = tmp_path / "end.lsc"
    path.write_bytes(crafted(json.dumps(METADATA).encode(), stream, end=end))
    loaded = load_capture(path)
    assert list(loaded.events) == parse(stream) and loaded.end is None
    assert not loaded.file_stats.complete
    from latscope.report.results import load_tables, results

    results(*load_tables(loaded))


def test_the_scan_is_linear_in_the_file_size(tmp_path, monkeypatch):
    """A file full of fake chunk headers, each claiming a payload of MAX_PAYLOAD: the CRCs
    the reader computes stay within a few times the file size (the old scan CRC-checked
    every candidate's claimed payload: quadratic). Times: bench/capture_file_scan.py."""
    fake = struct.pack("<4sB3sIIQI", b"LSCK", ChunkType.DATA, bytes(3), 1, MAX_PAYLOAD, 0, 0)
    body = fake * ((3 << 20) // len(fake))
    path = tmp_path / "fake.lsc"
    path.write_bytes(
        file_header()
        + encode_chunk(ChunkType.METADATA, 0, 0, json.dumps(METADATA).encode())
        + body
        + bytes(MAX_PAYLOAD)
    )
    checked, crc32 = [0], zlib.crc32

    def counting_crc32(data, *start):
        checked[0] += len(data)
        return crc32(data, *start)

    monkeypatch.setattr(capture_file.zlib, "crc32", counting_crc32)
    reader = CaptureReader(path)
    assert list(reader) == [capture_file.GAP]  # the file ends in damage
    assert reader.stats.chunks_bad == 1 and reader.stats.bytes_skipped > len(body)
    assert checked[0] <= 2 * path.stat().st_size + MAX_PAYLOAD, checked[0]


@pytest.mark.slow
def test_memory_is_bounded_whatever_the_chunk_sizes(tmp_path):
    """100,000 one-byte DATA chunks: the events come out right, and the peak of Python
    allocations while loading stays far below what one object per chunk would take (the
    old reader: about 600 bytes a chunk, 60 MB here). RSS figures: bench."""
    stream = make_stream(20_000, seed=5)[:100_000]
    path = tmp_path / "tiny.lsc"
    with CaptureWriter(path, METADATA, chunk_size=1, metadata_every=1 << 30) as writer:
        writer.write(stream)
    assert len(stream) == 100_000
    tracemalloc.start()
    try:
        loaded = load_capture(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert list(loaded.events) == parse(stream)
    assert loaded.file_stats.chunks_ok == len(stream) + 3  # METADATA, its copy, END
    assert peak < 16 << 20, peak


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_special_files_are_refused(tmp_path):
    fifo = tmp_path / "fifo.lsc"
    os.mkfifo(fifo)
    for path in (fifo, "/dev/zero", tmp_path):
        with pytest.raises(CaptureFileError, match="not a regular file") as error:
            load_capture(path)
        assert str(error.value).startswith(f"{path}: byte 0: ")


def _load(tmp_path, data):
    path = tmp_path / "d.lsc"
    path.write_bytes(data)
    return load_capture(path)


def test_header_damage_loses_nothing(tmp_path, written):
    stream, data = written
    for at in range(HEADER):
        damaged = bytearray(data)
        damaged[at] ^= 0x21
        loaded = _load(tmp_path, bytes(damaged))
        assert list(loaded.events) == parse(stream), at
        assert loaded.file_stats.header_damaged and loaded.file_stats.complete


def test_metadata_damage_loses_nothing(tmp_path, written):
    """The first METADATA chunk damaged, with the header, and the capture cut off after a
    crash (no END): the copy after the first DATA chunk serves."""
    stream, data = written
    damaged = bytearray(data)
    damaged[3] ^= 1
    damaged[HEADER + CHUNK_OVERHEAD + 5] ^= 1
    loaded = _load(tmp_path, bytes(damaged))
    assert list(loaded.events) == parse(stream) and loaded.metadata == METADATA
    assert loaded.file_stats.metadata_at > HEADER and loaded.file_stats.gaps == 0
    last = data_chunks(data)[-1]
    cut = _load(tmp_path, bytes(damaged[: last[1]]))
    assert list(cut.events) == parse(stream) and not cut.file_stats.complete


def test_metadata_in_end_serves_when_every_copy_is_damaged(tmp_path, written):
    stream, data = written
    damaged = bytearray(data)
    at = HEADER
    while at < len(data):
        length = int.from_bytes(data[at + 12 : at + 16], "little")
        if data[at + 4] == ChunkType.METADATA:
            damaged[at + CHUNK_OVERHEAD] ^= 0xFF
        at += CHUNK_OVERHEAD + length
    loaded = _load(tmp_path, bytes(damaged))
    assert list(loaded.events) == parse(stream) and loaded.metadata == METADATA
    assert loaded.end["stats"] == {"events": 200}


def test_a_repeated_chunk_is_read_once(tmp_path, written):
    stream, data = written
    first, second = data_chunks(data)[2:4]
    copied = data[: second[1]] + data[first[0] : second[1]] + data[second[1] :]
    loaded = _load(tmp_path, copied)
    assert list(loaded.events) == parse(stream)
    assert loaded.file_stats.chunks_repeated == 2 and loaded.file_stats.gaps == 0


def test_format_1_files_still_read(tmp_path):
    """Version 1: no METADATA copies, no metadata in END."""
    stream = make_stream(60)
    start = b"\x89LSC\r\n\x1a\n" + struct.pack("<HH", 1, 16)
    data = start + struct.pack("<I", zlib.crc32(start))
    data += encode_chunk(ChunkType.METADATA, 0, 0, json.dumps(METADATA).encode())
    data += encode_chunk(ChunkType.DATA, 1, 0, stream[:100])
    data += encode_chunk(ChunkType.DATA, 2, 100, stream[100:])
    data += encode_chunk(
        ChunkType.END,
        3,
        len(stream),
        json.dumps({"data_bytes": len(stream), "chunks": 4, "stats": None}).encode(),
    )
    reader_path = tmp_path / "v1.lsc"
    reader_path.write_bytes(data)
    assert CaptureReader(reader_path).version == 1
    loaded = load_capture(reader_path)
    assert list(loaded.events) == parse(stream) and loaded.file_stats.complete


def test_event_batches_are_bounded_and_make_the_whole(tmp_path, written):
    stream, data = written
    path = tmp_path / "b.lsc"
    path.write_bytes(data)
    batches = CaptureEvents(path, batch_bytes=64)
    parts = list(batches)
    assert len(parts) > 5
    assert all(len(part) <= 64 + 255 for part in parts)
    assert list(Events.concatenate(parts)) == parse(stream)
    assert batches.file_stats.complete and batches.stamp_hz == METADATA["identity"]["clock_hz"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_write_errors_name_the_file():
    with pytest.raises(OSError) as error:
        with CaptureWriter("/dev/full", METADATA) as writer:
            writer.write(b"x" * 100)
    assert "/dev/full" in str(error.value) and "\n" not in str(error.value)


def test_gaps_say_how_many_stream_bytes_are_missing(tmp_path, written):
    """A damaged DATA chunk in the middle: the gap is its length, exactly. The last DATA
    chunk damaged: the intact END says how many bytes the stream had. The parser's holes
    then count at least the events lost."""
    stream, data = written
    chunks = data_chunks(data)
    for index in (len(chunks) // 2, len(chunks) - 1):
        start, end, payload = chunks[index]
        damaged = bytearray(data)
        damaged[start + CHUNK_OVERHEAD] ^= 0x40
        path = tmp_path / "gap.lsc"
        path.write_bytes(bytes(damaged))
        reader = CaptureReader(path)
        gaps = []
        for item in reader:
            if item is capture_file.GAP:
                gaps.append(reader.gap_bytes)
        assert gaps == [len(payload)], index
        loaded = load_capture(path)
        delivered = [e for e in loaded.events if not (e[1] == 3 and e[2] & 0xF == 0xF)]
        assert loaded.parser_stats.records_dropped >= len(parse(stream)) - len(delivered)
