"""``--fail-if`` and ``--junit`` (latscope.report.fail_if, latscope.report.junit) on a real
capture: the test suite run natively (``suite_capture``). Every threshold is set from the
capture's own results, one ns either side of a measured value, so a comparison that is off by
one way or the other fails here."""

import json
import re
import xml.etree.ElementTree as ElementTree

import pytest

from latscope.cli import main
from latscope.report.fail_if import FAIL_EXIT
from support.suite_capture import native_suite_capture

SAMPLES = 40


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    """The capture and its results document (``analyze --json``)."""
    path = tmp_path_factory.mktemp("suite") / "suite.lsc"
    native_suite_capture(path, SAMPLES, tests="IL_A,TSL_A")
    return path, analyzed(path)


def analyzed(path):
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["analyze", str(path), "--json"]) == 0
    return json.loads(out.getvalue())


def row(document, name):
    return next(table for table in document["tables"] if table["name"] == name)


def run(capsys, *argv):
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.err.strip().splitlines()


def test_the_exit_status_is_not_one_the_cli_uses_otherwise():
    from latscope.cli import build_parser

    assert FAIL_EXIT == 3
    assert "3 a --fail-if condition held" in build_parser().epilog


def test_a_condition_that_holds_fails_the_run_and_names_the_table(suite, capsys):
    path, document = suite
    worst = row(document, "IL-a-1")["max_ns"]
    status, err = run(capsys, "analyze", str(path), "--fail-if", f"IL-*.max_ns > {worst - 1}")
    assert status == FAIL_EXIT
    assert f"FAILED --fail-if IL-*.max_ns > {worst - 1}: IL-a-1 max_ns {worst}" in err
    assert err[-1].startswith("--fail-if: 1 breach(es) in 1 of")
    # At the measured value itself: > does not hold, >= does.
    status, err = run(capsys, "analyze", str(path), "--fail-if", f"IL-a-1.max_ns > {worst}")
    assert status == 0 and err[-1].startswith("--fail-if: passed (1 condition(s)")
    status, _ = run(capsys, "analyze", str(path), "--fail-if", f"IL-a-1.max_ns>={worst}")
    assert status == FAIL_EXIT


def test_several_conditions_each_over_its_tables(suite, capsys):
    path, document = suite
    tsl = [table for table in document["tables"] if table["name"].startswith("TSL-a-")]
    assert len(tsl) > 1
    low = min(table["avg_ns"] for table in tsl)
    status, err = run(
        capsys,
        "analyze",
        str(path),
        "--fail-if",
        f"TSL-a-*.avg_ns <= {low}",
        "--fail-if",
        f"IL-a-1.samples != {SAMPLES}",
    )
    breaking = [table["name"] for table in tsl if table["avg_ns"] <= low]
    assert status == FAIL_EXIT
    assert [line.split(": ")[1].split()[0] for line in err if line.startswith("FAILED")] == breaking
    status, _ = run(capsys, "analyze", str(path), "--fail-if", f"IL-a-1.samples != {SAMPLES}")
    assert status == 0


def test_a_statistic_not_known_holds(suite, capsys):
    """p99.9 of 40 samples is null (too few): the check cannot be made, so it fails."""
    path, document = suite
    assert row(document, "IL-a-1")["p999_ns"] is None
    status, err = run(capsys, "analyze", str(path), "--fail-if", "IL-a-1.p999_ns > 1e9")
    assert status == FAIL_EXIT and "IL-a-1 p999_ns not known (null)" in err[0]


@pytest.mark.parametrize(
    "expression, says",
    [
        ("IL-*.max > 5000", "unknown statistic max (one of samples, min_ns"),
        ("IL-*.max_ns >> 5000", "not TABLES.STATISTIC OP NUMBER"),
        ("IL-*.max_ns > nan", "nan is not a finite number"),
        ("IL-*.max_ns > 5us", "5us is not a finite number"),
        ("__import__('os').system('true') > 1", "unknown statistic system('true')"),
        ("1 + 1 > 0", "not TABLES.STATISTIC OP NUMBER"),
        ("IL-*.max_ns", "not TABLES.STATISTIC OP NUMBER"),
    ],
)
def test_a_bad_expression_is_one_line_naming_it(suite, capsys, expression, says):
    path, _ = suite
    with pytest.raises(SystemExit) as stop:
        main(["analyze", str(path), "--fail-if", expression])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and repr(expression) in err and says in err, err


def test_a_glob_that_matches_no_table_is_an_error(suite, capsys):
    path, _ = suite
    status, err = run(capsys, "analyze", str(path), "--fail-if", "Il-*.max_ns > 1")
    assert status == 2 and len(err) == 1
    assert "'Il-*.max_ns > 1': no table matches Il-* (tables: IL-a-1, " in err[0]


def test_report_judges_too(suite, capsys, tmp_path):
    path, document = suite
    worst = row(document, "TSL-a-2")["max_ns"]
    status, err = run(
        capsys,
        "report",
        str(path),
        "-o",
        str(tmp_path / "r"),
        "--no-figures",
        "--no-exports",
        "--fail-if",
        f"TSL-a-2.max_ns >= {worst}",
    )
    assert status == FAIL_EXIT and any("TSL-a-2 max_ns" in line for line in err)


#: The JUnit schema's rules checked below (Surefire's and Jenkins' junit-10.xsd, as pytest
#: validates its own --junitxml output against): the children each element may have, the
#: attributes it must have, and a time as seconds with at most 3 decimals.
CHILDREN = {
    "testsuites": {"testsuite"},
    "testsuite": {"testsuite", "properties", "testcase", "system-out", "system-err"},
    "properties": {"property"},
    "testcase": {"skipped", "error", "failure", "system-out", "system-err"},
}
REQUIRED = {
    "testsuite": {"name", "tests", "failures", "errors"},
    "property": {"name", "value"},
    "testcase": {"name"},
}
TIME = re.compile(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]{0,3})?")


def schema_problems(element):
    problems = []
    for child in element:
        if child.tag not in CHILDREN.get(element.tag, set()):
            problems.append(f"<{child.tag}> in <{element.tag}>")
        problems += schema_problems(child)
    missing = REQUIRED.get(element.tag, set()) - set(element.attrib)
    if missing:
        problems.append(f"<{element.tag}> without {sorted(missing)}")
    if element.tag in ("testsuite", "testsuites") and not TIME.fullmatch(element.get("time", "")):
        problems.append(f"<{element.tag}> time {element.get('time')!r}")
    return problems


def test_junit_has_a_testcase_per_table_failed_by_its_conditions(suite, capsys, tmp_path):
    path, document = suite
    worst = row(document, "TSL-a-2")["max_ns"]
    junit = tmp_path / "latscope.xml"
    conditions = [f"TSL-*.max_ns >= {worst}", "IL-a-1.p999_ns > 0"]
    status, err = run(
        capsys,
        "analyze",
        str(path),
        "--junit",
        str(junit),
        *[arg for condition in conditions for arg in ("--fail-if", condition)],
    )
    assert status == FAIL_EXIT and f"wrote {junit}" in err
    root = ElementTree.parse(junit).getroot()
    assert root.tag == "testsuites" and schema_problems(root) == []
    (suite_element,) = root
    cases = suite_element.findall("testcase")
    assert [case.get("name") for case in cases] == [t["name"] for t in document["tables"]]
    failed = {
        case.get("name"): case.find("failure") for case in cases if case.find("failure") is not None
    }
    tsl = [
        t["name"]
        for t in document["tables"]
        if t["name"].startswith("TSL") and t["max_ns"] >= worst
    ]
    assert set(failed) == {"IL-a-1", *tsl}
    assert suite_element.get("failures") == str(len(failed)) == root.get("failures")
    assert suite_element.get("tests") == str(len(cases))
    assert failed["IL-a-1"].get("message") == "IL-a-1.p999_ns > 0: IL-a-1 p999_ns not known (null)"
    assert failed["TSL-a-2"].get("message").startswith(f"TSL-*.max_ns >= {worst}: TSL-a-2 max_ns")
    properties = {p.get("name"): p.get("value") for p in suite_element.iter("property")}
    assert properties["fail-if.1"] == conditions[0] and properties["conditions.load"] == "none"
    # Written again only with --force; without conditions every table passes.
    status, err = run(capsys, "analyze", str(path), "--junit", str(junit))
    assert status == 2 and err == [f"latscope: {junit}: exists; give --force to overwrite it"]
    assert main(["analyze", str(path), "--junit", str(junit), "--force"]) == 0
    root = ElementTree.parse(junit).getroot()
    assert schema_problems(root) == [] and root.get("failures") == "0"


def test_the_schema_check_finds_what_breaks_the_schema():
    bad = ElementTree.fromstring(
        '<testsuites><testsuite name="x" tests="1" errors="0" time="1.2345">'
        "<testcase><failures/></testcase></testsuite></testsuites>"
    )
    assert sorted(schema_problems(bad)) == sorted(
        [
            "<failures> in <testcase>",
            "<testcase> without ['name']",
            "<testsuite> without ['failures']",
            "<testsuite> time '1.2345'",
        ]
    )


def test_the_demo_takes_the_options_for_a_single_run(capsys):
    """The demo judges its one run (its results document goes through the same
    ``judged`` as analyze's); with --loads or --sweep there is no one document to judge."""
    from latscope.demo import parse_args

    args = parse_args(["--fail-if", "IL-*.max_ns > 5000", "--junit", "demo.xml"])
    assert [c.text for c in args.fail_if] == ["IL-*.max_ns > 5000"] and args.junit == "demo.xml"
    for argv in (["--fail-if", "IL-*.max > 1"], ["--fail-if", "IL-*.max_ns > 1", "--sweep", "2"]):
        with pytest.raises(SystemExit) as stop:
            parse_args(argv)
        assert stop.value.code == 2
    assert "single run: not with --loads or --sweep" in capsys.readouterr().err
