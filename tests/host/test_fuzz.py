"""Property-based fuzzing (hypothesis) of the stream parser and the capture-file reader,
each test bounded in examples and in time (derandomized: CI runs the same examples).

Parser: any bytes, in any pieces, never raise and keep the hole statistics; a damaged true
stream never yields an event that is not true, and its holes count every event missing.
Reader: any damage to a true capture file gives either one
:class:`CaptureFileError` line or events that are all true; any metadata the reader accepts
the writer accepts too (and the other way round), and the report handles it."""

import json
import string

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from latscope.analysis.spans import HOLE
from latscope.capture.file import (
    CaptureFileError,
    CaptureWriter,
    ChunkType,
    encode_chunk,
    file_header,
    load_capture,
)
from latscope.events import Events
from latscope.link.parser import StreamParser
from latscope.report.results import load_tables, results
from latscope_defs.protocol import Source, hole_count
from support.synthetic_suite import IDENTITY, LATENCY, encode, make_run

FUZZ = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
pytestmark = pytest.mark.timeout(120)

RUN = make_run(seed=5, count=15)
STREAM = encode(RUN.events)
TRUTH = set(RUN.events)


def parse(pieces):
    parser = StreamParser(latency=LATENCY)
    parts = [parser.feed(piece) for piece in pieces]
    return Events.concatenate(parts + [parser.finish()]), parser.stats


def untrue(events):
    """Events that are neither true nor holes."""
    return [
        e for e in events if e not in TRUTH and not (e[1] == Source.LOSS and e[2] & 0xF == HOLE)
    ]


def split(data, cuts):
    cuts = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0] + cuts, cuts + [len(data)])]


#: A mutation: (position as a fraction, kind, byte, length).
mutations = st.lists(
    st.tuples(
        st.floats(0, 1, exclude_max=True),
        st.sampled_from(["flip", "drop", "insert", "dup", "burst"]),
        st.integers(0, 255),
        st.integers(1, 40),
    ),
    min_size=1,
    max_size=8,
)


def mutate(data, changes):
    out = bytearray(data)
    for where, kind, byte, length in changes:
        at = int(where * len(out))
        if kind == "flip":
            out[at] ^= 1 << (byte & 7)
        elif kind == "drop":
            del out[at : at + (length if byte & 1 else 1)]
        elif kind == "insert":
            out[at:at] = bytes([byte]) * (length if byte & 1 else 1)
        elif kind == "dup":
            out[at:at] = out[at : at + length]
        else:
            out[at : at + length] = bytes((byte * (i + 7)) & 0xFF for i in range(length))
    return bytes(out)


@FUZZ
@given(st.binary(max_size=3000), st.lists(st.integers(0, 3000), max_size=12))
def test_parser_never_raises(data, cuts):
    events, stats = parse(split(data, cuts))
    holes = [
        hole_count(value)
        for _, source, value in events
        if source == Source.LOSS and value & 0xF == HOLE
    ]
    assert stats.events_delivered + stats.holes == len(events) and stats.holes == len(holes)
    assert stats.records_dropped == sum(holes)
    assert stats.bytes_received == len(data)


@FUZZ
@given(mutations, st.lists(st.integers(0, 1 << 20), max_size=6))
def test_parser_never_delivers_an_untrue_event(changes, cuts):
    damaged = mutate(STREAM, changes)
    events, stats = parse(split(damaged, cuts))
    assert untrue(events) == []
    delivered = len(events) - stats.holes
    assert stats.records_dropped >= len(TRUTH) - delivered  # holes cover what is missing


def _capture_bytes(tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "true.lsc"
    with CaptureWriter(path, {"identity": IDENTITY}, chunk_size=512, metadata_every=4) as w:
        w.write(STREAM)
    return path.read_bytes()


@pytest.fixture(scope="module")
def capture_bytes(tmp_path_factory):
    return _capture_bytes(tmp_path_factory)


@pytest.mark.slow
def test_reader_never_delivers_an_untrue_event(capture_bytes, tmp_path):
    path = tmp_path / "fuzzed.lsc"

    @FUZZ
    @given(mutations)
    def fuzz(changes):
        path.write_bytes(mutate(capture_bytes, changes))
        try:
            capture = load_capture(path)
        except CaptureFileError as error:
            assert str(error).startswith(f"{path}: byte ") and "\n" not in str(error)
            return
        assert untrue(capture.events) == []
        results(*load_tables(capture))

    fuzz()


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False)
    | st.text(string.printable, max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(string.ascii_letters + "_", max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
small_ints = (
    st.integers(0, 4)
    | st.integers(-3, 40)
    | st.sampled_from([10**9, 1 << 24, 1 << 33])
    | json_values
)
text = st.text(max_size=5) | st.none() | json_values
metadata_values = (
    st.fixed_dictionaries(
        {
            "identity": st.fixed_dictionaries(
                {"clock_hz": st.integers(1, 10**9) | st.integers(-1, 10**9) | json_values},
                optional={
                    key: small_ints
                    for key in (
                        "stamp_shift",
                        "marker_width",
                        "edge_count",
                        "bus_width",
                        "fifo_depth",
                        "version",
                    )
                }
                | {
                    "board": st.text(max_size=5) | json_values,
                    "latency": st.dictionaries(
                        st.sampled_from(["MARKER", "IRQ", "BUS", "SYNC", "x"]),
                        small_ints,
                        max_size=3,
                    )
                    | json_values,
                },
            )
        },
        optional={
            "irq": st.fixed_dictionaries(
                {},
                optional={
                    "period": small_ints,
                    "width": small_ints,
                    "jitter_mask": small_ints,
                    "enable": st.booleans() | json_values,
                },
            )
            | json_values,
            "test_info": text,
            "port": text,
            "start_time": text,
            "suite": json_values,
            "cpu": json_values,
            "other": json_values,
        },
    )
    | json_values
)


@pytest.mark.slow
def test_writer_and_reader_agree_on_metadata(tmp_path):
    """The writer refuses exactly the metadata the reader refuses; what both accept, the
    report shows."""
    written, crafted = tmp_path / "w.lsc", tmp_path / "c.lsc"
    stream = encode(RUN.events[:40])

    @FUZZ
    @given(metadata_values)
    @example({"identity": {"clock_hz": 1}, "irq": {"period": None}})  # found by a full run
    @example({"identity": {"clock_hz": 1, "version": None}})  # found by a full run: version 0
    def fuzz(metadata):
        crafted.write_bytes(
            file_header()
            + encode_chunk(ChunkType.METADATA, 0, 0, json.dumps(metadata).encode())
            + encode_chunk(ChunkType.DATA, 1, 0, stream)
        )
        try:
            capture = load_capture(crafted)
        except CaptureFileError as error:
            assert "\n" not in str(error) and str(error).startswith(f"{crafted}: byte ")
            with pytest.raises(ValueError):
                CaptureWriter(written, metadata)
            return
        with CaptureWriter(written, metadata) as writer:
            writer.write(stream)
        assert load_capture(written).metadata == capture.metadata
        json.dumps(results(*load_tables(capture)))

    fuzz()
