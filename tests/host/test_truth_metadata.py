"""A capture's ground truth (metadata ``truth``, docs/capture-format.md): the metadata check
takes the log and firmware paths and nothing else, and a report of a capture whose log
cannot be read says so at the top level (``where.error``) instead of failing, with no
table's ``where``. Where a real log meets a real capture: tests/system/test_cpu_truth.py."""

import pytest
from test_loop import ROWS, write_capture

from latscope.capture.metadata import MetadataError, check_metadata
from latscope.report.results import load_tables, results
from latscope.simulated.cpu_truth import TruthSource

IDENTITY = {"clock_hz": 100_000_000}


def test_the_metadata_check_takes_two_paths():
    source = TruthSource.of_run("run.truth", "suite.elf")
    assert source.log.is_absolute() and source.firmware.is_absolute()
    check_metadata({"identity": IDENTITY, "truth": source.as_dict()})
    assert TruthSource.of_metadata({"truth": source.as_dict()}) == source
    assert TruthSource.of_metadata({}) is None
    for bad in ("run.truth", {"log": "run.truth"}, {"log": 1, "firmware": "suite.elf"}):
        with pytest.raises(MetadataError, match="truth"):
            check_metadata({"identity": IDENTITY, "truth": bad})


def test_a_report_says_when_its_ground_truth_is_gone(tmp_path):
    truth = TruthSource.of_run(tmp_path / "gone.truth", tmp_path / "gone.elf")
    path = write_capture(tmp_path / "run.lsc", ROWS, {"loop": "EDGE2", "truth": truth.as_dict()})
    summary, tables = load_tables(str(path))
    document = results(summary, tables)
    assert document["where"]["log"] == str(truth.log)
    assert document["where"]["error"].startswith("ground truth unreadable: ")
    assert "gone.truth" in document["where"]["error"]
    assert [row["where"] for row in document["tables"]] == [None]
    plain = write_capture(tmp_path / "plain.lsc", ROWS, {"loop": "EDGE2"})
    document = results(*load_tables(str(plain)))
    assert document["where"] is None and document["tables"][0]["where"] is None
