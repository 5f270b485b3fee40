"""``--junit FILE``: the ``--fail-if`` verdicts as JUnit XML, the test-result format CI
systems read (Jenkins, GitLab, GitHub's test reporters).

One ``<testsuite>`` per capture inside ``<testsuites>``, one ``<testcase>`` per table
(``classname`` ``latscope.<kind>``: IL, IDL, TSL, ...; ``name`` the table), with a
``<failure>`` naming every condition the table breaks, and the table's statistics in its
``<system-out>``. The elements and attributes are those of the common JUnit schema (the
Surefire/Jenkins ``junit-10.xsd``: a suite's ``name``, ``tests``, ``failures`` and ``errors``
required, times as seconds with at most 3 decimals; tests/host/test_fail_if.py checks them).
"""

import json
import xml.etree.ElementTree as ElementTree
from datetime import datetime
from typing import Any

from .columns import SUMMARY_KEYS
from .fail_if import Breach, Condition

__all__ = ["junit_xml"]


def junit_xml(
    document: dict[str, Any],
    verdicts: dict[str, list[Breach]],
    conditions: list[Condition],
    *,
    timestamp: datetime | None = None,
) -> str:
    """The JUnit XML text of a results ``document``'s tables judged into ``verdicts``
    (:func:`latscope.report.fail_if.judge`) by ``conditions``."""
    failures = sum(1 for found in verdicts.values() if found)
    root = ElementTree.Element(
        "testsuites", name="latscope", tests=str(len(verdicts)), failures=str(failures), errors="0"
    )
    suite = ElementTree.SubElement(
        root,
        "testsuite",
        name=document["capture"]["path"],
        tests=str(len(verdicts)),
        failures=str(failures),
        errors="0",
        skipped="0",
        time=f"{document.get('duration_s') or 0:.3f}",
        timestamp=(timestamp or datetime.now()).isoformat(timespec="seconds"),
    )
    properties = ElementTree.SubElement(suite, "properties")
    settings = {
        "generator": document["generator"],
        "board": document["device"].get("board", ""),
        **{f"conditions.{k}": v for k, v in document["conditions"].items()},
        **{f"fail-if.{n}": condition.text for n, condition in enumerate(conditions, 1)},
    }
    for name, value in settings.items():
        value = "" if value is None else str(value)
        ElementTree.SubElement(properties, "property", name=name, value=value)
    for row in document["tables"]:
        case = ElementTree.SubElement(
            suite,
            "testcase",
            name=row["name"],
            classname=f"latscope.{row['name'].split('-', 1)[0]}",
            time="0",
        )
        breaches = verdicts[row["name"]]
        if breaches:
            failure = ElementTree.SubElement(
                case,
                "failure",
                type="fail-if",
                message="; ".join(breach.text() for breach in breaches),
            )
            failure.text = "\n".join(breach.text() for breach in breaches)
        out = ElementTree.SubElement(case, "system-out")
        out.text = " ".join(f"{key}={json.dumps(row.get(key))}" for key in SUMMARY_KEYS)
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
