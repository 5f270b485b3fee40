"""No traceback, ever (issue 29 points 8 and 9): every command given a hostile option or
file ends with exit status 2 and one line on stderr naming the option or the file."""

import json
import os
import random

import pytest
from test_capture_file import METADATA, make_stream

from latscope.capture.file import CaptureWriter, ChunkType, encode_chunk, file_header
from latscope.cli import main
from support.suite_capture import native_suite_capture

#: (arguments, what the line must name); {good}: a valid capture, {tmp}: a fresh directory.
BAD_OPTIONS = [
    (["capture", "-o", "{tmp}/x.lsc", "--duration", value], "--duration")
    for value in ("nan", "nanh", "1e999", "-1", "abc", "inf", "0")
] + [
    (["capture", "-o", "{tmp}/x.lsc", "--interval", "nan"], "--interval"),
    (["capture", "-o", "{tmp}/x.lsc", "--events", "1e3"], "--events"),
    (["capture", "-o", "{tmp}/x.lsc", "--baud", "0"], "--baud"),
    (["capture", "-o", "{tmp}/x.lsc", "--irq-period", "abc"], "--irq-period"),
    (["capture", "-o", "{tmp}/x.lsc", "--info", "a\udcffb"], "--info"),
    (["report", "{good}", "-o", "{tmp}/r", "--max-interval", "nan"], "--max-interval"),
    (["report", "{good}", "-o", "/dev/null"], "/dev/null"),
    (["export", "{good}", "--vcd", "{tmp}/a.vcd", "--start", "9" * 23], "--start"),
    (["export", "{good}", "--vcd", "/dev/full"], "/dev/full"),
    (["analyze", "{good}", "--worst", "99"], "--worst"),
    (["dump", "{good}", "--limit", "-1"], "--limit"),
    (["stream", "--flush", "nan"], "--flush"),
    (["selftest", "--wait", "inf"], "--wait"),
    (["selftest", "--port", "sim:soc", "--miswire", "bogus"], "--miswire"),
    (["selftest", "--port", "sim:soc", "--miswire", "swap:D1,D99"], "--miswire"),
    (["simulate", "--truth", "{tmp}/no/such/dir/t.json"], "t.json"),
]

#: A file each command reads, made hostile in each way.
READERS = [
    ["analyze", "{file}"],
    ["dump", "{file}"],
    ["report", "{file}", "-o", "{tmp}/r", "--no-figures"],
    ["compare", "{file}"],
    ["export", "{file}", "--vcd", "{tmp}/e.vcd"],
]


def hostile_files(directory, good):
    """name -> path of each kind of bad input file."""
    data = good.read_bytes()
    files = {
        "empty": b"",
        "truncated header": data[:10],
        "random bytes": random.Random(1).randbytes(5000),
    }
    paths = {}
    for name, content in files.items():
        paths[name] = directory / (name.replace(" ", "_") + ".lsc")
        paths[name].write_bytes(content)
    paths["a directory"] = directory / "dir.lsc"
    paths["a directory"].mkdir()
    paths["a FIFO"] = directory / "fifo.lsc"
    os.mkfifo(paths["a FIFO"])
    paths["missing"] = directory / "missing.lsc"
    if os.geteuid() != 0:  # root reads any file
        paths["unreadable"] = directory / "unreadable.lsc"
        paths["unreadable"].write_bytes(data)
        paths["unreadable"].chmod(0)
    return paths


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    path = tmp_path_factory.mktemp("good") / "good.lsc"
    native_suite_capture(path, 10, tests="IL_A")
    return path


def fails_in_one_line(capsys, argv, named):
    try:
        status = main(argv)
    except SystemExit as exit:  # argparse
        status = exit.code
    err = capsys.readouterr().err
    assert status == 2, (argv, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert named in err, err
    return err


@pytest.mark.parametrize("argv, named", BAD_OPTIONS, ids=lambda v: " ".join(v)[:60])
def test_bad_option(capsys, tmp_path, good, argv, named):
    argv = [arg.format(good=good, tmp=tmp_path) for arg in argv]
    fails_in_one_line(capsys, argv, named)
    assert not (tmp_path / "x.lsc").exists()  # checked before anything started


def test_hostile_files(capsys, tmp_path, good):
    files = hostile_files(tmp_path, good)
    for name, path in files.items():
        out = tmp_path / "out" / name.replace(" ", "_")
        out.mkdir(parents=True)
        for reader in READERS:
            argv = [arg.format(file=path, tmp=out) for arg in reader]
            err = fails_in_one_line(capsys, argv, str(path))
            assert err.count(str(path)) == 1, (name, err)


def test_texts_name_once(capsys, tmp_path):
    path = tmp_path / "list.lsc"
    path.write_bytes(
        file_header()
        + encode_chunk(ChunkType.METADATA, 0, 0, b"[1]")
        + encode_chunk(ChunkType.DATA, 1, 0, make_stream(20))
    )
    err = fails_in_one_line(capsys, ["dump", str(path)], "METADATA")
    assert "METADATA: must be a JSON object" in err and err.count("METADATA") == 1, err


def test_lone_surrogates_in_metadata(capsys, tmp_path):
    """The writer refuses one (not text); a file holding one (another writer) reads with
    U+FFFD in its place, and every output prints."""
    with pytest.raises(ValueError, match="lone surrogate"):
        CaptureWriter(tmp_path / "w.lsc", {**METADATA, "test_info": "a\udcffb"})
    path = tmp_path / "s.lsc"
    payload = json.dumps({**METADATA, "test_info": "x\ud800y", "\udc00": ["\ud801"]}).encode()
    path.write_bytes(
        file_header()
        + encode_chunk(ChunkType.METADATA, 0, 0, payload)
        + encode_chunk(ChunkType.DATA, 1, 0, make_stream(20))
    )
    for argv in (["analyze", path], ["analyze", path, "--json"], ["dump", path, "--limit", "1"]):
        assert main([str(arg) for arg in argv]) == 0
        out = capsys.readouterr()
        (out.out + out.err).encode()  # printable: no surrogate left
    assert main(["analyze", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["capture"]["test_info"] == "x\ufffdy"
