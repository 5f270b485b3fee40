"""The results document's JSON Schema (host/latscope/report/results.schema.json) accepts
the documents latscope writes, a report's results.json, analyze's --json, a damaged capture's
with its holes, and rejects a document with a field missing, of a wrong type, or unknown."""

import copy
import json
import random

import pytest

from latscope.capture.file import CaptureWriter
from latscope.cli import main
from latscope.report.directory import write_report
from latscope.report.results import SCHEMA_FILE, SCHEMA_VERSION
from support.damage import damage
from support.results_schema import problems
from support.suite_capture import native_suite_capture
from support.synthetic_suite import IDENTITY, encode, make_run


@pytest.fixture(scope="module")
def report_document(tmp_path_factory):
    """The results.json of a report of the whole suite run natively (every table kind, the
    worst samples with their PulseView windows)."""
    directory = tmp_path_factory.mktemp("schema")
    capture = directory / "suite.lsc"
    native_suite_capture(capture, 40)
    write_report(capture, directory / "report", figures=False)
    return json.loads((directory / "report" / "results.json").read_text())


def test_the_schema_is_the_documents_version():
    schema = json.loads(SCHEMA_FILE.read_text())
    assert schema["properties"]["version"] == {"const": SCHEMA_VERSION}


def test_a_reports_results_json_is_valid(report_document):
    assert problems(report_document) == []
    assert any(
        table["worst"] and "export" in table["worst"][0] for table in report_document["tables"]
    )


def test_a_damaged_captures_document_is_valid(tmp_path, capsys):
    """Holes, discarded pairs and estimated losses: the fields a clean run leaves empty."""
    run = make_run(seed=5, count=200, handlers=True)
    stream = damage(encode(run.events), 3e-4, "mixed", random.Random(5))
    path = tmp_path / "damaged.lsc"
    metadata = {"identity": IDENTITY, "suite": {"samples": 200}}
    with CaptureWriter(path, metadata) as writer:
        writer.write(stream)
        writer.close({"events": len(run.events)})
    assert main(["analyze", str(path), "--json", "--worst", "2"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["integrity"]["holes"] > 0 and document["integrity"]["hole_list"]
    assert problems(document) == []


@pytest.mark.parametrize(
    "where, change, says",
    [
        ("top", lambda d: d.pop("integrity"), "'integrity' is a required property"),
        ("table", lambda t: t.pop("max_ns"), "'max_ns' is a required property"),
        ("table", lambda t: t.update(samples="40"), "'40' is not of type 'integer'"),
        ("table", lambda t: t.update(p99_ns="1.5"), "'1.5' is not of type 'number', 'null'"),
        ("table", lambda t: t.update(max_us=1.0), "Additional properties are not allowed"),
        ("table", lambda t: t["conditions"].update(cache="maybe"), "'maybe' is not one of"),
        ("table", lambda t: t.update(p50_ci_ns=[1.0]), "[1.0] is not valid under any"),
        ("table", lambda t: t["flags"].pop("unflagged"), "'unflagged' is a required property"),
        ("table", lambda t: t["worst"][0].update(ns=None), "None is not of type 'number'"),
        ("top", lambda d: d.update(version=9), f"{SCHEMA_VERSION} was expected"),
        ("top", lambda d: d["integrity"].update(holes=-1), "-1 is less than the minimum of 0"),
    ],
)
def test_a_wrong_document_is_rejected(report_document, where, change, says):
    document = copy.deepcopy(report_document)
    table = next(t for t in document["tables"] if t["worst"])
    change(document if where == "top" else table)
    found = problems(document)
    assert found and any(says in problem for problem in found), found
