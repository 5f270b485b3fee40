"""A capture file without its END chunk (issue 29 point 3): cut at a chunk boundary, it reads
without any damage, so every text output must say "capture not closed: its end may be
missing" itself (analyze in every format, report's files and its stderr, compare, dump's
summary), and a closed file must never say it."""

import json

import pytest

from latscope.capture.file import CHUNK_MAGIC, NOT_CLOSED
from latscope.cli import main
from latscope.report.formats import FORMATS, report_formats
from support.suite_capture import native_suite_capture

TESTS = "IL_A,TSL_A"
#: The formats that say it in a column of every row.
CSV = ("csv", "worst")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """``{"closed": path, "unclosed": path}``: a capture and the same bytes cut where its
    last chunk, the END chunk, begins (what kill -9 between two chunks leaves)."""
    directory = tmp_path_factory.mktemp("unclosed")
    closed = directory / "closed.lsc"
    native_suite_capture(closed, 20, tests=TESTS)
    data = closed.read_bytes()
    unclosed = directory / "unclosed.lsc"
    unclosed.write_bytes(data[: data.rindex(CHUNK_MAGIC)])
    return {"closed": closed, "unclosed": unclosed}


def assert_csv_says(text, state):
    header, *rows = [line.split(",") for line in text.splitlines()]
    assert header[-1] == "capture_closed" and rows
    assert {row[-1] for row in rows} == {str(state == "closed")}


def run(capsys, *argv):
    assert main([str(arg) for arg in argv]) == 0
    out = capsys.readouterr()
    return out.out, out.err


@pytest.mark.parametrize("state", ["closed", "unclosed"])
def test_analyze_every_format(files, capsys, state):
    for fmt in FORMATS:
        out, _ = run(capsys, "analyze", files[state], "--format", fmt.name, "--worst", "1")
        if fmt.name == "json":
            document = json.loads(out)
            assert document["integrity"]["closed"] is (state == "closed")
            assert document["capture"]["complete"] is (state == "closed")
        elif fmt.name in CSV:
            assert_csv_says(out, state)
        else:
            assert (NOT_CLOSED in out) is (state == "unclosed"), fmt.name


@pytest.mark.parametrize("state", ["closed", "unclosed"])
def test_report_files_and_stderr(files, capsys, tmp_path, state):
    out, err = run(
        capsys,
        "report",
        *(files[state], "-o", tmp_path / "r", "--no-figures", "--no-exports", "--worst", "1"),
    )
    assert (NOT_CLOSED in err) is (state == "unclosed")
    for fmt in report_formats():
        text = (tmp_path / "r" / fmt.report_file).read_text()
        if fmt.name == "json":
            assert json.loads(text)["integrity"]["closed"] is (state == "closed")
        elif fmt.name in CSV:
            assert_csv_says(text, state)
        else:
            assert (NOT_CLOSED in text) is (state == "unclosed"), fmt.name


def test_compare_names_the_unclosed_capture(files, capsys):
    out, _ = run(capsys, "compare", files["closed"], files["unclosed"])
    assert out.count(NOT_CLOSED) == 1 and f"unclosed: {NOT_CLOSED}" in out
    out, _ = run(capsys, "compare", files["closed"], files["unclosed"], "--json")
    assert [r["closed"] for r in json.loads(out)["runs"]] == [True, False]


@pytest.mark.parametrize("state", ["closed", "unclosed"])
def test_dump_summary(files, capsys, state):
    _, err = run(capsys, "dump", files[state], "--limit", "0")
    assert (NOT_CLOSED in err) is (state == "unclosed")
