"""The load and cache conditions of a capture (latscope.capture.conditions; docs/tests.md,
"Load profiles"; docs/results-schema.md, ``conditions``): recorded in the metadata, carried
by every table of the results document, the CSV, the text report and the Markdown/HTML
run description, and checked by ``latscope compare``, which refuses captures measured
under different conditions unless forced."""

import csv
import io
import json
import re
import signal
from pathlib import Path

import pytest

from latscope.capture.conditions import LOADS, Conditions, parse_load
from latscope.capture.metadata import MetadataError, check_metadata
from latscope.capture.session import Interrupted
from latscope.cli import main
from latscope.demo import _reported
from latscope.report.directory import write_report
from latscope.report.results import load_tables, results
from support.suite_capture import native_suite_capture

SAMPLES = 50
TESTS = "IL_A,TSL_A"
MAKEFILE = Path(__file__).resolve().parents[2] / "firmware" / "suite" / "Makefile"


@pytest.fixture(scope="module")
def captures(tmp_path_factory):
    """The same tests idle (no conditions recorded: an older capture) and under the bus
    load with the caches off."""
    directory = tmp_path_factory.mktemp("conditions")
    idle, loaded = directory / "idle.lsc", directory / "bus.lsc"
    native_suite_capture(idle, SAMPLES, tests=TESTS)
    native_suite_capture(
        loaded, SAMPLES, tests=TESTS, conditions={"load": "bus", "load_param": 50, "cache": "off"}
    )
    return idle, loaded


def test_profiles_are_the_makefiles():
    """The host's profile names are the suite Makefile's (LOAD_BITS_<name>)."""
    assert tuple(re.findall(r"^LOAD_BITS_(\S+) :=", MAKEFILE.read_text(), re.M)) == LOADS


def test_parse_and_check():
    assert parse_load("bus:50") == ("bus", 50) and parse_load("cpu") == ("cpu", None)
    for bad in ("stress", "bus:x", "mixed:3", "none:1", "bus:0", "cpu:-1", "irq-low:0x80000000"):
        with pytest.raises(ValueError):
            parse_load(bad)
    identity = {"clock_hz": 100_000_000}
    check_metadata({"identity": identity, "conditions": Conditions("irq-low", 200).as_dict()})
    bad_conditions = (
        {"load": "disk"},
        {"cache": "half"},
        {"load": "cpu", "speed": 1},
        {"load": "cpu", "load_param": 0},  # the suite's Makefile refuses LOAD_PARAM=0
    )
    for bad in bad_conditions:
        with pytest.raises(MetadataError, match="conditions"):
            check_metadata({"identity": identity, "conditions": bad})


def test_every_table_and_report_carries_them(captures, tmp_path):
    idle, loaded = captures
    for path, expected in ((idle, Conditions()), (loaded, Conditions("bus", 50, "off"))):
        document = results(*load_tables(path))
        assert document["conditions"] == expected.as_dict()
        assert document["tables"] and all(
            row["conditions"] == expected.as_dict() for row in document["tables"]
        )
    paths = write_report(loaded, tmp_path / "report", figures=False)
    rows = list(csv.DictReader(io.StringIO((tmp_path / "report" / "results.csv").read_text())))
    assert {(row["load"], row["load_param"], row["cache"]) for row in rows} == {
        ("bus", "50", "off")
    }
    for name in ("report.md", "report.html"):
        assert "load bus:50, caches off" in (tmp_path / "report" / name).read_text(), paths


def test_compare_refuses_unlike_captures_unless_forced(captures, capsys):
    idle, loaded = captures
    assert main(["compare", str(idle), str(loaded)]) == 2
    error = capsys.readouterr().err
    assert "--force" in error and "load" in error and "'bus'" in error
    assert main(["compare", str(idle), str(loaded), "--force", "--json"]) == 0
    out = capsys.readouterr()
    assert "warning" in out.err
    runs = json.loads(out.out)["runs"]
    assert [run["conditions"]["load"] for run in runs] == ["none", "bus"]
    assert main(["compare", str(idle), str(idle)]) == 0  # alike: no refusal
    assert "warning" not in capsys.readouterr().err


def test_compare_names_other_irq_settings_and_refuses_what_it_cannot_compare(
    captures, tmp_path, capsys
):
    """Two captures whose IRQ generators differed only in jitter: refused (exit 2) with the
    difference named, as for a load; one capture, or a --label count that is not the
    captures', is refused in one line too."""
    idle, _ = captures
    jittered = tmp_path / "jittered.lsc"
    native_suite_capture(jittered, SAMPLES, tests=TESTS, irq={"jitter_mask": 0xFF})
    assert main(["compare", str(idle), str(jittered)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "IRQ settings" in error and "'jitter_mask': 255" in error
    assert main(["compare", str(idle)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "two captures or more" in error and "analyze" in error
    assert main(["compare", str(idle), str(idle), "--label", "only-one"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "1 --label for 2 captures" in error


def test_demo_loads_reports_a_stop_signal(capsys):
    """A stop signal during one of ``demo --loads``' (or a sweep's) captures ends the demo
    as it ends a single run: one line, exit status 128 + the signal's number."""

    def stopped():
        raise Interrupted(signal.SIGTERM)

    assert _reported(stopped) == 128 + signal.SIGTERM
    assert "interrupted by SIGTERM" in capsys.readouterr().err
