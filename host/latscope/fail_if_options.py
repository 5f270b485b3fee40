"""The command-line options that judge a run for CI (``--fail-if EXPR``, ``--junit FILE``;
:mod:`latscope.report.fail_if`, :mod:`latscope.report.junit`), shared by ``latscope
analyze``, ``latscope report`` and the demo."""

import argparse

from .progress import note
from .report.fail_if import FAIL_EXIT, Condition, judge, verdict_lines
from .report.junit import junit_xml

__all__ = ["fail_condition", "fail_if_options", "judged"]


def fail_condition(text):
    """``--fail-if 'IL-*.max_ns > 5000'``, checked as it is read: a bad one is a usage error
    naming it."""
    try:
        return Condition.parse(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def fail_if_options(p):
    p.add_argument(
        "--fail-if",
        type=fail_condition,
        action="append",
        default=[],
        metavar="EXPR",
        help=f"exit status {FAIL_EXIT} when EXPR holds for a table: TABLES.STATISTIC OP NUMBER, "
        "e.g. 'IL-*.max_ns > 5000' (a glob of table names, a statistic as results.json names "
        "it, > >= < <= == !=, a number; a statistic not known counts as holding); repeat "
        "for more",
    )
    p.add_argument(
        "--junit",
        metavar="FILE.xml",
        help="write JUnit XML: one testcase per table, failed where a --fail-if holds",
    )


def judged(args, document):
    """The exit status of a results ``document`` under ``--fail-if`` (0, or FAIL_EXIT when a
    condition holds), with the verdicts on stderr and in the ``--junit`` file; a ValueError
    when a condition's glob matches no table."""
    if not args.fail_if and not args.junit:
        return 0
    verdicts = judge(args.fail_if, document["tables"])
    if args.fail_if:
        for line in verdict_lines(verdicts, args.fail_if):
            note(line)
    if args.junit:
        with open(args.junit, "w") as out:
            out.write(junit_xml(document, verdicts, args.fail_if))
        note(f"wrote {args.junit}")
    return FAIL_EXIT if any(verdicts.values()) else 0
