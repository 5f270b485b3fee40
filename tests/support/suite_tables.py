"""The tables the test suite makes, from its definitions: the pairing rules
(``latscope.analysis.rules.RULES``: the tables of each test, ``{n}`` for its parameter) and the
parameters the suite runs its tests with (``latscope_defs.markers.SUITE_PARAMETERS``, which
``firmware/suite/suite.h`` takes as its defaults). Tests that expect "every
table" or "the tables of test X" take them from here, so a new table kind needs no test edits.
"""

from latscope.analysis.rules import RULES
from latscope_defs.markers import SUITE_PARAMETERS


def suite_parameters():
    """``{test: (n, ...)}``: the parameters the suite runs each parameterised test with
    (``latscope_defs.markers.SUITE_PARAMETERS``, suite.h's defaults through markers.h)."""
    return dict(SUITE_PARAMETERS)


def suite_rules(tests=None, *, parameters=None, handler=True):
    """``(rule, table name)`` of every table the suite's ``tests`` (:class:`Test` members;
    default: all) make, in the order of ``RULES`` and of the parameters. ``parameters``:
    ``{test: (n, ...)}`` where a run differs from suite.h (a port's smaller SEO-f);
    ``handler``: with the tables that end at the kernel's handler-entry marker (ILH-), which
    only a kernel that writes that marker makes."""
    runs = {**suite_parameters(), **(parameters or {})}
    tables = []
    for rule in RULES:
        if (tests is None or rule.test in tests) and (handler or rule.end != "handler"):
            values = runs[rule.test] if "{n}" in rule.name else (None,)
            tables += [(rule, rule.name.format(n=n)) for n in values]
    return tables


def table_names(tests=None, *, parameters=None, handler=True):
    """The names of :func:`suite_rules`' tables."""
    return [name for _, name in suite_rules(tests, parameters=parameters, handler=handler)]


#: The tests whose START marker a whole run of the suite writes, in order: one START per
#: window (IDL-b and TSL-a once per thread count of suite.h). Checked against a native run by
#: tests/firmware/test_suite_native.py; the Linux runs of test_duts.py expect the same.
SUITE_START_ORDER = [
    "IL_A",
    "IDL_B",
    "IDL_B",
    "IDL_B",
    "TSL_A",
    "TSL_A",
    "TSL_A",
    "TF_A",
    "TF_B",
    "TF_C",
    "SEO_A",
    "SEO_B",
    "SEO_C",
    "SEO_D",
    "SEO_E",
    "SEO_F",
    "SEO_G",
    "MQ",
    "CLOCK_ISR",
]
