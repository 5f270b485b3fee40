"""``--fail-if``: conditions on the results tables that fail a run, for CI pipelines.

A condition is ``TABLES.STATISTIC OP NUMBER``, e.g. ``IL-*.max_ns > 5000`` or
``TSL-a-2.p99_ns >= 4000``: a glob over the table names (``fnmatch``: ``*``, ``?``,
``[...]``), a statistic of the results tables as ``results.json`` names it
(:data:`latscope.report.columns.STAT_COLUMNS`: ``samples``, ``min_ns`` ... ``lost``), a
comparison (``>``, ``>=``, ``<``, ``<=``, ``==``, ``!=``) and a finite number (ns for the
``_ns`` statistics). It is read by one regular expression and compared with :mod:`operator`:
nothing of it is ever evaluated as Python.

A condition *holds* for a table when its comparison is true there; it also holds where the
statistic is not known (null: a percentile of too few samples, a table without samples), so
that a check CI cannot make never passes unseen. A glob that matches no table of the run is
an error (a typo must not pass either). When any condition holds, the command ends with
:data:`FAIL_EXIT`.
"""

import math
import operator
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from .columns import STAT_COLUMNS

__all__ = ["FAIL_EXIT", "STATISTICS", "Condition", "Breach", "judge", "verdict_lines"]

#: The exit status of a run a ``--fail-if`` condition failed: 0 done, 1 a failed self-test (or
#: the demo's build or suite), 2 a usage, input or device error, 128 + N a signal (latscope.cli).
FAIL_EXIT = 3

#: The statistics a condition may name, as the results tables name them.
STATISTICS = tuple(key for key, _, _ in STAT_COLUMNS)

_OPERATORS = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
}

_FORM = re.compile(
    r"\s*(?P<tables>[^\s.]+)\.(?P<statistic>\S+?)\s*(?P<op>>=|<=|==|!=|>|<)\s*(?P<number>\S+)\s*"
)
_EXAMPLE = "e.g. 'IL-*.max_ns > 5000'"


@dataclass(frozen=True)
class Condition:
    """One ``--fail-if`` condition (:meth:`parse` reads and checks its text)."""

    text: str
    tables: str
    statistic: str
    op: str
    number: float

    @classmethod
    def parse(cls, text: str) -> "Condition":
        """The condition of ``text``; a ValueError naming it when it is not one."""
        form = _FORM.fullmatch(text)
        if form is None:
            raise ValueError(f"{text!r}: not TABLES.STATISTIC OP NUMBER ({_EXAMPLE})")
        statistic, number = form["statistic"], form["number"]
        if statistic not in STATISTICS:
            raise ValueError(
                f"{text!r}: unknown statistic {statistic} (one of {', '.join(STATISTICS)})"
            )
        try:
            value = float(number)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise ValueError(f"{text!r}: {number} is not a finite number ({_EXAMPLE})")
        return cls(text.strip(), form["tables"], statistic, form["op"], value)

    def applies_to(self, name: str) -> bool:
        return fnmatchcase(name, self.tables)

    def holds(self, row: dict[str, Any]) -> bool:
        """Whether it fails the table ``row``: its comparison is true, or the statistic is
        not known (null)."""
        value = row.get(self.statistic)
        return value is None or bool(_OPERATORS[self.op](value, self.number))


@dataclass(frozen=True)
class Breach:
    """A condition that holds for a table: ``value`` the table's statistic (None: not known)."""

    condition: Condition
    table: str
    value: float | None

    def text(self) -> str:
        value = "not known (null)" if self.value is None else str(self.value)
        return f"{self.condition.text}: {self.table} {self.condition.statistic} {value}"


def judge(conditions: list[Condition], rows: list[dict[str, Any]]) -> dict[str, list[Breach]]:
    """``{table name: the conditions it breaks}`` of every table ``row`` (results.json's
    ``tables``), in their order; a ValueError naming a condition whose glob matches no
    table."""
    names = [row["name"] for row in rows]
    for condition in conditions:
        if not any(condition.applies_to(name) for name in names):
            raise ValueError(
                f"--fail-if {condition.text!r}: no table matches {condition.tables} "
                f"(tables: {', '.join(names) or 'none'})"
            )
    return {
        row["name"]: [
            Breach(condition, row["name"], row.get(condition.statistic))
            for condition in conditions
            if condition.applies_to(row["name"]) and condition.holds(row)
        ]
        for row in rows
    }


def verdict_lines(verdicts: dict[str, list[Breach]], conditions: list[Condition]) -> list[str]:
    """What a command prints on stderr after judging: a line per breach, then one that
    says whether the run failed (and with which exit status)."""
    breaches = [breach for found in verdicts.values() for breach in found]
    failed = sum(1 for found in verdicts.values() if found)
    lines = [f"FAILED --fail-if {breach.text()}" for breach in breaches]
    if breaches:
        lines.append(
            f"--fail-if: {len(breaches)} breach(es) in {failed} of {len(verdicts)} tables "
            f"(exit status {FAIL_EXIT})"
        )
    else:
        lines.append(
            f"--fail-if: passed ({len(conditions)} condition(s) over {len(verdicts)} tables)"
        )
    return lines
