"""A capture file's copies of the metadata compared, DATA chunks out of order, and captures
appended to a file (issue 29, points 2 and 7; docs/capture-format.md, "Reading")."""

import json
import struct

import pytest
from test_capture_file import METADATA, chunk_bounds, data_chunks, make_stream, parse

from latscope.capture.file import (
    CHUNK_OVERHEAD,
    REORDER_CHUNKS,
    CaptureFileError,
    CaptureWriter,
    ChunkType,
    encode_chunk,
    load_capture,
)
from latscope.report.results import load_tables, results
from latscope.report.run_description import integrity_line

HEADER = 16
#: Another clock: what a wrong copy of the metadata would do to every latency.
SLOWER = {**METADATA, "identity": {**METADATA["identity"], "clock_hz": 50_000_000}}


def rebuilt(data, metadata=None, end=None):
    """The file with METADATA chunk number ``k`` (0: the first) holding ``metadata[k]`` and
    the END chunk holding ``end`` (a dict; None: dropped, as after a crash) instead."""
    out = bytearray(data[:HEADER])
    metadata_chunks = 0
    for start, _stop, payload in chunk_bounds(data):
        kind, sequence, offset = data[start + 4], *struct.unpack_from("<IxxxxQ", data, start + 8)
        if kind == ChunkType.METADATA:
            payload = (metadata or {}).get(metadata_chunks, payload)
            metadata_chunks += 1
        elif kind == ChunkType.END:
            if end is None:
                continue
            payload = json.dumps(end).encode()
        out += encode_chunk(kind, sequence, offset, payload)
    return bytes(out)


def load(tmp_path, data, name="f.lsc"):
    path = tmp_path / name
    path.write_bytes(data)
    return load_capture(path)


def metadata_offsets(data):
    return [start for start, _, _ in chunk_bounds(data, kinds=(ChunkType.METADATA,))]


def test_the_fixture_has_copies(written):
    _, data = written
    assert len(metadata_offsets(data)) >= 4


def test_a_damaged_first_copy_gives_way_and_says_so(tmp_path, written):
    stream, data = written
    damaged = bytearray(data)
    damaged[HEADER + CHUNK_OVERHEAD + 3] ^= 0x40
    loaded = load(tmp_path, bytes(damaged))
    assert list(loaded.events) == parse(stream) and loaded.metadata == METADATA
    copy = metadata_offsets(data)[1]
    assert loaded.file_stats.metadata_at == copy
    assert (
        f"the METADATA chunk at byte {HEADER} is damaged: the copy at byte {copy} is used"
        in loaded.summary()
    )


def test_a_disagreeing_copy_is_named_and_the_end_decides(tmp_path, written):
    """One copy says another clock: the END (and the other copies) say the first is
    right; the disagreement is reported with both offsets and the field, and the analysis
    runs at the confirmed clock."""
    stream, data = written
    changed = rebuilt(
        data,
        {2: json.dumps(SLOWER).encode()},
        end={"data_bytes": len(stream), "chunks": 0, "stats": None, "metadata": METADATA},
    )
    loaded = load(tmp_path, changed)
    odd = metadata_offsets(changed)[2]
    assert loaded.metadata == METADATA and loaded.file_stats.metadata_at == HEADER
    assert loaded.file_stats.metadata_conflicts == [{"at": odd, "fields": ["identity.clock_hz"]}]
    note = (
        f"METADATA copies disagree: the copy at byte {HEADER} is used (as the END chunk "
        f"says), the one(s) at byte {odd} differ in identity.clock_hz"
    )
    assert note in loaded.summary()
    path = tmp_path / "f.lsc"
    summary, tables = load_tables(str(path))
    assert summary.stamp_hz == METADATA["identity"]["clock_hz"]
    assert note in integrity_line(results(summary, tables)["integrity"])


def test_the_end_decides_against_the_chunks(tmp_path, written):
    """Every METADATA chunk says one thing, the END another: the END, written last by a
    clean close, is taken, and every chunk named."""
    stream, data = written
    changed = rebuilt(
        data, end={"data_bytes": len(stream), "chunks": 0, "stats": None, "metadata": SLOWER}
    )
    loaded = load(tmp_path, changed)
    assert loaded.metadata == SLOWER and loaded.clock_hz == 50_000_000
    assert [c["at"] for c in loaded.file_stats.metadata_conflicts] == metadata_offsets(changed)


def test_without_an_end_the_majority_decides(tmp_path, written):
    stream, data = written
    changed = rebuilt(data, {0: json.dumps(SLOWER).encode()})
    loaded = load(tmp_path, changed)
    assert loaded.metadata == METADATA and not loaded.file_stats.complete
    assert loaded.file_stats.metadata_conflicts == [{"at": HEADER, "fields": ["identity.clock_hz"]}]
    assert loaded.file_stats.metadata_by == "the majority of copies"


def test_a_tie_without_an_end_is_refused_in_one_line(tmp_path, written):
    """Two copies that disagree and nothing to tell which is right: no analysis."""
    stream, data = written
    first, second = chunk_bounds(data, kinds=(ChunkType.METADATA,))[:2]
    two = rebuilt(data[: second[1]], {1: json.dumps(SLOWER).encode()})
    path = tmp_path / "tie.lsc"
    path.write_bytes(two)
    with pytest.raises(CaptureFileError) as error:
        load_capture(path)
    message = str(error.value)
    assert message == (
        f"{path}: byte {HEADER}: METADATA copies disagree: byte {HEADER} and "
        f"byte {metadata_offsets(two)[1]} differ in identity.clock_hz, and no "
        f"END or majority of copies confirms either"
    )


def test_copies_that_differ_in_several_fields_name_them_all(tmp_path, written):
    stream, data = written
    other = {
        **METADATA,
        "test_info": "another run",
        "identity": {**METADATA["identity"], "latency": {"MARKER": 9}},
    }
    loaded = load(tmp_path, rebuilt(data, {1: json.dumps(other).encode()}))
    assert loaded.file_stats.metadata_conflicts[0]["fields"] == [
        "identity.latency.IRQ",
        "identity.latency.MARKER",
        "test_info",
    ]


def test_swapped_data_chunks_lose_nothing(tmp_path, written):
    """Two intact DATA chunks in the wrong order: the reader puts them in stream order by
    their offsets (nothing delivered is counted lost as a gap)."""
    stream, data = written
    chunks = data_chunks(data)
    (a, _, _), (b, c, _) = chunks[5], chunks[6]
    swapped = data[:a] + data[b:c] + data[a:b] + data[c:]
    loaded = load(tmp_path, swapped)
    assert list(loaded.events) == parse(stream)
    assert (loaded.file_stats.gaps, loaded.file_stats.chunks_reordered) == (0, 1)
    assert loaded.parser_stats.holes == 0


def test_a_chunk_far_out_of_order_is_a_counted_gap(tmp_path):
    """A chunk more than REORDER_CHUNKS chunks late: the reader has gone on with a gap of
    exactly its bytes (memory stays bounded), and its late copy is repeated data."""
    stream = make_stream(200, seed=11)
    with CaptureWriter(tmp_path / "small.lsc", METADATA, chunk_size=50) as writer:
        writer.write(stream)
    data = (tmp_path / "small.lsc").read_bytes()
    chunks = data_chunks(data)
    assert len(chunks) > REORDER_CHUNKS + 4
    start, end, payload = chunks[2]
    moved = data[:start] + data[end:] + data[start:end]
    loaded = load(tmp_path, moved)
    assert (loaded.file_stats.gaps, loaded.file_stats.chunks_repeated) == (1, 1)
    assert loaded.parser_stats.holes == 1
    delivered = [e for e in loaded.events if not (e[1] == 3 and e[2] & 0xF == 0xF)]
    assert set(delivered) <= set(parse(stream))


@pytest.mark.parametrize("appended", [1, 2])
def test_captures_appended_to_a_file_are_reported_not_read(tmp_path, written, appended):
    """``cat a.lsc b.lsc > ab.lsc``: the first capture reads whole and undamaged, the
    others are reported as what they are (not one damaged chunk, not repeated data)."""
    stream, data = written
    other_stream = make_stream(50, seed=3)
    with CaptureWriter(
        tmp_path / "b.lsc", {**METADATA, "test_info": "b"}, chunk_size=100
    ) as writer:
        writer.write(other_stream)
    loaded = load(tmp_path, data + (tmp_path / "b.lsc").read_bytes() * appended, "ab.lsc")
    assert list(loaded.events) == parse(stream)
    stats = loaded.file_stats
    assert (stats.chunks_bad, stats.gaps, stats.chunks_repeated, stats.complete) == (0, 0, 0, True)
    assert (stats.appended_captures, stats.appended_at) == (appended, len(data))
    assert (
        f"{appended} more capture(s) appended at byte {len(data)}: not read (split the "
        f"file there to read them)"
    ) in loaded.summary()


def test_a_capture_appended_to_a_crashed_one(tmp_path, written):
    """The first capture was cut in the middle of a chunk (no END): its intact chunks read,
    the cut chunk is the end's damage, the appended capture is reported."""
    stream, data = written
    last = data_chunks(data)[-1]
    cut = data[: last[0] + 40]
    loaded = load(tmp_path, cut + data, "cut.lsc")
    assert (loaded.file_stats.appended_captures, loaded.file_stats.appended_at) == (1, len(cut))
    assert not loaded.file_stats.complete and loaded.file_stats.gaps == 1


def test_a_copy_of_the_first_chunk_is_no_appended_capture(tmp_path, written):
    stream, data = written
    first = chunk_bounds(data)[0]
    copied = data + data[first[0] : first[1]]
    loaded = load(tmp_path, copied)
    assert loaded.file_stats.appended_captures == 0
    assert list(loaded.events) == parse(stream)
