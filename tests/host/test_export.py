"""The export of captures as logic signals (latscope.export.files, latscope.export.live):
session-file and VCD content against a cycle-by-cycle model, levels that repeat, markers that
share a cycle, batches, long quiet gaps in bounded memory, the PulseView setup, the CLI.

The decoders on real captures from the simulated SoC are tested in test_sigrok.py; these
tests use small event lists written as capture files through the reference encoder.
"""

import io
import os
import re
import subprocess
import tracemalloc
import zipfile

import numpy as np
import pytest

from latscope import cli
from latscope.analysis.spans import lossy_spans
from latscope.capture.file import CaptureWriter, ChunkType, encode_chunk, file_header, load_capture
from latscope.events import Events
from latscope.export.files import export_capture
from latscope.export.levels import MARGIN, LevelTracker
from latscope.export.live import LiveVcd
from latscope.export.sigrok import write_pvs, write_sr
from latscope.export.vcd import vcd_timescale
from latscope.simulated.soc import ROOT
from latscope_defs.channels import Layout
from latscope_defs.markers import Point, Test, encode
from latscope_defs.protocol import VERSION, Source, StreamEncoder

CLOCK_HZ = 100_000_000
EDGES = 2
M, B, IRQ, L = Source.MARKER, Source.BUS, Source.IRQ, Source.LOSS
E0, E1 = Source.EDGE0, Source.EDGE1


def events(*rows):
    stamps, sources, values = zip(*rows)
    return Events(stamps, [int(s) for s in sources], values)


#: Stream order; IRQ and edge levels alternate; a LOSS of markers at 1500 (count 2).
EVENTS = events(
    (1000, M, encode(Test.IL_A, Point.START, 1)),
    (1100, IRQ, 1),
    (1102, E0, 1),
    (1150, M, encode(Test.IL_A, Point.ISR_ENTRY)),
    (1160, B, 0xABCD_0000 | encode(Test.IL_A, Point.ISR_EXIT)),
    (1190, E0, 0),
    (1200, IRQ, 0),
    (1210, M, encode(Test.IL_A, Point.THREAD)),
    (1500, L, (2 << 4) | M),
    (1600, E1, 1),
    (1700, M, encode(Test.IL_A, Point.END)),
)


def write_capture(path, evs, edge_count=EDGES):
    encoder = StreamEncoder()
    for stamp, source, value in evs:
        encoder.event(stamp, source, value)
    encoder.flush()
    identity = {
        "version": VERSION,
        "clock_hz": CLOCK_HZ,
        "stamp_shift": 0,
        "marker_width": 16,
        "edge_count": edge_count,
        "bus_width": 32,
        "fifo_depth": 64,
        "board": "test",
        "latency": {},
    }
    with CaptureWriter(path, {"identity": identity}) as writer:
        writer.write(encoder.take())
    return load_capture(path)


def model_levels(evs, first, count, edge_count=EDGES):
    """Sample words cycle by cycle, straight from the channel definitions (no repeated
    levels in ``evs``): data of the last marker (bits 0-15), strobe parity (16), IRQ (17),
    edges (18..), LOSS spans (after the edges)."""
    low, high = lossy_spans(
        evs.stamp.astype(np.int64), evs.source, evs.value.astype(np.int64), None
    )
    rows = sorted(zip(evs.stamp.tolist(), evs.source.tolist(), evs.value.tolist()))
    words, data, strobe, irq, edges, k = [], 0, 0, 0, [0] * edge_count, 0
    for cycle in range(first, first + count):
        while k < len(rows) and rows[k][0] <= cycle:
            _, source, value = rows[k]
            if source in (M, B):
                data, strobe = value & 0xFFFF, strobe ^ 1
            elif source == IRQ:
                irq = value
            elif E0 <= source < E0 + edge_count:
                edges[source - E0] = value
            k += 1
        loss = int(np.any((low <= cycle) & (cycle < high)))
        words.append(
            data
            | strobe << 16
            | irq << 17
            | loss << (18 + edge_count)
            | sum(level << (18 + n) for n, level in enumerate(edges))
        )
    return words


def sr_words(path):
    """Metadata and sample words of a session file, read with zipfile."""
    with zipfile.ZipFile(path) as archive:
        assert archive.read("version") == b"2"
        metadata = archive.read("metadata").decode()
        unitsize = int(re.search(r"unitsize=(\d+)", metadata).group(1))
        names = sorted(
            (n for n in archive.namelist() if n.startswith("logic-1-")),
            key=lambda n: int(n.rsplit("-", 1)[1]),
        )
        raw = b"".join(archive.read(name) for name in names)
    units = np.frombuffer(raw, np.uint8).reshape(-1, unitsize)
    words = sum(units[:, n].astype(np.int64) << (8 * n) for n in range(unitsize))
    return metadata, words


def vcd_changes(text):
    """{time: {name: level}} of a VCD written by VcdWriter."""
    names = dict(re.findall(r"\$var wire 1 (\S+) (\S+) \$end", text))
    body = text.split("$enddefinitions $end", 1)[1]
    changes, time = {}, None
    for token in body.split():
        if token.startswith("#"):
            time = int(token[1:])
        elif token[0] in "01" and token[1:] in names:
            changes.setdefault(time, {})[names[token[1:]]] = int(token[0])
    return changes


def test_session_file_holds_the_levels_cycle_by_cycle(tmp_path):
    capture = write_capture(tmp_path / "c.lsc", EVENTS)
    info = export_capture(capture, [tmp_path / "c.sr"])
    assert info.origin == 1000 - MARGIN
    assert (info.markers_dropped, info.edges_stretched, info.edges_dropped) == (0, 0, 0)
    metadata, words = sr_words(tmp_path / "c.sr")
    assert "samplerate=100 MHz" in metadata and "total probes=22" in metadata
    assert "probe17=STROBE" in metadata and "probe19=EDGE0" in metadata
    assert "probe20=EDGE1" in metadata and "probe21=LOSS" in metadata
    assert "probe22=HOLE" in metadata
    assert len(words) == info.samples
    assert words.tolist() == model_levels(capture.events, info.origin, info.samples)
    # The loss span: from the marker before the LOSS record to the record.
    assert words[1210 - info.origin] >> 20 & 1 and not words[1500 - info.origin] >> 20 & 1
    assert not words[1209 - info.origin] >> 20 & 1


def test_vcd_has_the_same_changes(tmp_path):
    capture = write_capture(tmp_path / "c.lsc", EVENTS)
    info = export_capture(capture, [tmp_path / "c.sr", tmp_path / "c.vcd"])
    text = (tmp_path / "c.vcd").read_text()
    assert "$timescale 10 ns $end" in text
    _, words = sr_words(tmp_path / "c.sr")
    names = Layout(EDGES).names
    level = {name: 0 for name in names}
    for time, changed in sorted(vcd_changes(text).items()):
        level.update(changed)
        assert sum(level[name] << n for n, name in enumerate(names)) == words[time], time
    assert text.split()[-1] == f"#{info.samples - 1}"  # the levels last to the end


def test_repeated_levels_and_shared_cycles():
    """An IRQ assertion that follows an assertion (its release was lost) shows after a
    one-cycle release; a repeated release is left out (no assertion is invented); a
    repeated edge level gets a one-cycle pulse; of two markers in one cycle the later
    shows."""
    tracker = LevelTracker(Layout(1))
    changes = tracker.feed(
        events(
            (100, IRQ, 1),
            (200, IRQ, 1),
            (300, IRQ, 0),
            (400, IRQ, 0),
            (500, E0, 1),
            (600, E0, 1),
            (700, M, 0x111),
            (700, B, 0x222),
        ),
        final=True,
    )
    word = dict(zip(changes.stamps.tolist(), changes.words.tolist()))
    irq = {stamp: w >> 17 & 1 for stamp, w in word.items() if stamp in (100, 199, 200, 300)}
    assert irq == {100: 1, 199: 0, 200: 1, 300: 0}
    assert 399 not in word and 400 not in word
    assert word[599] >> 18 & 1 == 0 and word[600] >> 18 & 1 == 1
    assert word[700] & 0x1FFFF == 0x222 | 1 << 16
    assert (tracker.edges_stretched, tracker.edges_dropped, tracker.markers_dropped) == (2, 1, 1)
    assert tracker.initial >> 18 & 1 == 0  # E0 starts low: its first edge rises


def test_batches_give_the_changes_of_the_whole():
    """Fed in pieces, with events of different sources a few cycles out of stamp order
    (as after pin-latency correction), the changes are those of one batch."""
    rng = np.random.default_rng(5)
    stamp = np.cumsum(rng.integers(3, 40, 3000))
    source = rng.choice([int(M), int(IRQ), int(E0)], 3000)
    value = rng.integers(0, 1 << 16, 3000)
    for src in (IRQ, E0):  # alternating levels
        mine = source == src
        value[mine] = np.arange(np.count_nonzero(mine)) % 2 == 0
    stamp = stamp - np.where(source == M, 2, 0)  # markers 2 cycles "late"
    evs = Events(stamp, source, value)
    whole = LevelTracker(Layout(1)).feed(evs, final=True)
    tracker = LevelTracker(Layout(1))
    parts = [tracker.feed(evs[n : n + 97]) for n in range(0, len(evs), 97)] + [tracker.finish()]
    assert np.array_equal(np.concatenate([p.stamps for p in parts]), whole.stamps)
    assert np.array_equal(np.concatenate([p.words for p in parts]), whole.words)


@pytest.mark.slow
def test_long_quiet_gap_needs_bounded_memory(tmp_path):
    """10^8 quiet cycles (a second at 100 MHz, 300 MB of samples) between two markers:
    written in blocks, compressed; sigrok-cli decodes both markers at their cycles (the
    last one's annotation needs the decoder's 10 us after it, as export_capture adds)."""
    gap = 10**8
    evs = events((1000, M, 0x401), (1000 + gap, M, 0x481))
    layout = Layout(0)
    changes = LevelTracker(layout).feed(evs, final=True)
    tracemalloc.start()
    write_sr(
        tmp_path / "gap.sr",
        layout.names,
        changes,
        CLOCK_HZ,
        origin=1000 - MARGIN,
        samples=gap + MARGIN + 2000,
    )
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 64 << 20
    assert (tmp_path / "gap.sr").stat().st_size < 2 << 20
    channels = ":".join(f"{d}={s}" for d, s in layout.decoder_channels())
    out = subprocess.run(
        [
            "sigrok-cli",
            "-i",
            tmp_path / "gap.sr",
            "-P",
            f"latscope_marker:sample_delay=0:{channels}",
            "--protocol-decoder-samplenum",
            "-A",
            "latscope_marker=start:end",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        env=dict(os.environ, SIGROKDECODE_DIR=str(ROOT / "decoders")),
    ).stdout
    starts = [int(line.split("-")[0]) for line in out.splitlines()]
    assert starts == [MARGIN, MARGIN + gap]


def test_vcd_timescale_is_one_cycle():
    assert vcd_timescale(100_000_000) == "10 ns"
    assert vcd_timescale(50_000_000) == "20 ns"
    assert vcd_timescale(1_000_000_000) == "1 ns"
    assert vcd_timescale(12_000_000) == "83333333 fs"


def test_pulseview_setup(tmp_path):
    write_pvs(
        tmp_path / "x.pvs",
        tmp_path / "x.sr",
        Layout(2),
        scale=1e-6,
        marker_options={"sample_delay": 0, "other": 0x3100},
        latency_options={"load": "irq-high", "cache": "off"},
    )
    text = (tmp_path / "x.pvs").read_text()
    assert f"filename={tmp_path / 'x.sr'}" in text and "device_type=sessionfile" in text
    assert "decoder0\\id=latscope_marker" in text and "decoder1\\id=latscope_latency" in text
    # QSettings escaping of the option bytes: 0 as \0, a hex digit after an escape as \x.
    assert "decoder0\\option1\\value=@ByteArray(\\0\\0\\0\\0\\0\\0\\0\\0)" in text
    assert "decoder0\\option0\\value=@ByteArray(\\0\\x31\\0\\0\\0\\0\\0\\0)" in text
    # A string option as PulseView stores one: type s, its UTF-8 bytes and a 0.
    assert "decoder1\\options=2" in text and "decoder1\\option1\\type=s" in text
    assert "decoder1\\option1\\value=@ByteArray(irq-high\\0)" in text
    assert "decoder1\\option0\\value=@ByteArray(off\\0)" in text
    channels = re.findall(r"channel(\d+)\\assigned_signal_name=(\S+)", text)
    assert channels[:2] == [("0", "STROBE"), ("1", "D0")] and channels[-2:] == [
        ("20", "LOSS"),
        ("21", "HOLE"),
    ]
    assert channels[-4:-2] == [("18", "EDGE0"), ("19", "EDGE1")]
    assert len(channels) == 22
    # Scrolled down past the 16 data bits (50-pixel traces), none of them hidden.
    assert "v_offset=800" in text and "enabled=false" not in text
    write_pvs(tmp_path / "live.pvs", None, Layout(0))
    assert "device" not in (tmp_path / "live.pvs").read_text()


def test_live_stream_equals_the_export(tmp_path):
    capture = write_capture(tmp_path / "c.lsc", EVENTS)
    export_capture(capture, [tmp_path / "c.vcd"])
    exported = vcd_changes((tmp_path / "c.vcd").read_text())
    out = io.BytesIO()
    live = LiveVcd(out, Layout(EDGES), CLOCK_HZ, block=4096)
    live.start()
    assert out.tell() == 4096  # the header, padded to a whole block
    for n in range(0, len(capture.events), 3):
        live.feed(capture.events[n : n + 3])
        live.flush()
        assert out.tell() % 4096 == 0
    live.finish()
    streamed = vcd_changes(out.getvalue().decode())
    assert live.origin == 1000 - MARGIN
    final = max(streamed)
    assert {t: c for t, c in streamed.items() if t != final} == {
        t: c for t, c in exported.items() if t <= max(t for t in streamed if t != final)
    }


def test_cli_export(tmp_path, capsys):
    write_capture(tmp_path / "c.lsc", EVENTS)
    assert (
        cli.main(
            [
                "export",
                str(tmp_path / "c.lsc"),
                "--sr",
                str(tmp_path / "o.sr"),
                "--vcd",
                str(tmp_path / "o.vcd"),
            ]
        )
        == 0
    )
    assert all((tmp_path / name).exists() for name in ("o.sr", "o.pvs", "o.vcd"))
    assert "sample 0 = stamp 984" in capsys.readouterr().err
    assert cli.main(["export", str(tmp_path / "c.lsc")]) == 2
    assert "give --sr OUT.sr and/or --vcd OUT.vcd" in capsys.readouterr().err
    # A capture without its clock: the writer refuses it, the reader names file and field.
    with pytest.raises(ValueError, match="clock_hz"):
        CaptureWriter(tmp_path / "noclock.lsc", {"identity": {}})
    (tmp_path / "noclock.lsc").write_bytes(
        file_header() + encode_chunk(ChunkType.METADATA, 0, 0, b'{"identity": {}}')
    )
    assert cli.main(["export", str(tmp_path / "noclock.lsc"), "--vcd", "x.vcd"]) == 2
    assert "noclock.lsc: byte 44: METADATA identity.clock_hz: missing" in capsys.readouterr().err


def test_cli_export_errors_name_the_option_or_the_file(tmp_path, capsys):
    write_capture(tmp_path / "c.lsc", EVENTS)
    capture = str(tmp_path / "c.lsc")
    # Existing outputs are kept unless --force.
    assert cli.main(["export", capture, "--vcd", str(tmp_path / "o.vcd")]) == 0
    before = (tmp_path / "o.vcd").read_text()
    capsys.readouterr()
    assert cli.main(["export", capture, "--vcd", str(tmp_path / "o.vcd"), "--start", "1"]) == 2
    assert f"{tmp_path / 'o.vcd'}: exists; give --force" in capsys.readouterr().err
    assert (tmp_path / "o.vcd").read_text() == before
    assert (
        cli.main(["export", capture, "--vcd", str(tmp_path / "o.vcd"), "--start", "1", "--force"])
        == 0
    )
    assert (tmp_path / "o.vcd").read_text() != before
    capsys.readouterr()
    assert cli.main(["export", capture, "--sr", "/dev/full", "--no-pvs"]) == 2
    err = capsys.readouterr().err
    assert "latscope: /dev/full: cannot write: No space left on device" in err, err
    assert (
        cli.main(
            ["export", capture, "--vcd", str(tmp_path / "w.vcd"), "--start", "10", "--stop", "5"]
        )
        == 2
    )
    assert "--stop 5 is not after --start 10" in capsys.readouterr().err
    assert not (tmp_path / "w.vcd").exists()
    try:
        cli.main(["export", capture, "--vcd", str(tmp_path / "w.vcd"), "--start", "-3"])
    except SystemExit as exit:
        assert exit.code == 2
    assert "argument --start: invalid cycle value: '-3' (must be 0 .." in capsys.readouterr().err
    assert cli.main(["dump", capture, "--source", "marker,foo"]) == 2
    assert (
        "--source marker,foo: unknown source FOO (known: MARKER, BUS, IRQ, LOSS, EDGE0"
        in capsys.readouterr().err
    )


def open_context(markers, start):
    """The context a window from ``start`` needs, by the definition, marker by marker:
    per test whose last START before ``start`` has no END after it (before ``start``), that
    START and, if the test's next marker there is a PARAM, that PARAM."""
    context = {}
    for stamp, source, value in markers:
        if stamp >= start:
            continue
        test, point = value >> 10 & 0x3F, value >> 7 & 7
        if point == Point.START:
            context[test] = [(stamp, source, value), None, True]
        elif test in context:
            if point == Point.PARAM and context[test][2]:
                context[test][1] = (stamp, source, value)
            context[test][2] = False
            if point == Point.END:
                del context[test]
    return sorted(
        m
        for start_marker, param, _ in context.values()
        for m in (start_marker, param)
        if m is not None
    )


def test_many_windows_in_one_read_are_the_windows_of_export_capture(tmp_path):
    """export_windows (one read of the capture for all the windows, as the report's worst
    samples use it) writes the files export_capture writes for each window, whatever the
    batch size; each window's context (START and PARAM from before it) is the definition's,
    tests with parameters of 128 and more (PARAM) included."""
    from test_batch_analysis import shaped_stream

    from latscope.export.files import export_windows

    stream = shaped_stream(7, runs=20, kernel=True)
    rows = sorted(
        zip(stream.stamp.tolist(), stream.source.tolist(), stream.value.tolist()),
        key=lambda row: (row[0], row[1]),
    )
    path = tmp_path / "w.lsc"
    write_capture(path, rows, edge_count=0)
    rng = np.random.default_rng(1)
    first, last = rows[0][0], rows[-1][0]
    starts = sorted(rng.integers(first, last, 12).tolist())
    windows = [
        {
            "start": start,
            "stop": start + int(rng.integers(50, 3000)),
            "outputs": [tmp_path / f"one.{n}.vcd"],
        }
        for n, start in enumerate(starts)
    ]
    markers = [row for row in rows if row[1] in (M, B)]
    expected = [open_context(markers, window["start"]) for window in windows]
    assert sum(len(context) == 2 for context in expected) >= 1  # a PARAM among them
    for batch_bytes in (64, 1000, 1 << 20):
        infos = export_windows(path, windows, batch_bytes=batch_bytes)
        for n, (window, info) in enumerate(zip(windows, infos)):
            single = export_capture(
                path,
                [tmp_path / "single.vcd"],
                start=window["start"],
                stop=window["stop"],
                batch_bytes=1 << 20,
            )
            assert info.context == len(expected[n]) == single.context, (batch_bytes, n)
            assert window["outputs"][0].read_text() == (tmp_path / "single.vcd").read_text(), n
