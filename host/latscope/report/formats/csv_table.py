"""The CSV of the tables (``results.csv``): one row per table: name, test, test_n (the test's
parameter N: threads, priorities; not the sample count, which is ``samples``), the statistics
(ns), the percentiles' confidence intervals (empty: not reported, or open at that end), then
the columns of every section, and whether the capture file was closed (``capture_closed``:
False, its end may be missing). ``load``, ``load_param`` and ``cache``: what the table was
measured under (its ``conditions``).
"""

import csv
import io

from ..columns import CI_COLUMNS, STAT_COLUMNS
from ..results import TABLE_SECTIONS
from .base import ResultsFormat

__all__ = ["CsvFormat", "csv_text"]


def csv_text(rows):
    """Rows (lists of values; None: empty) as CSV text."""
    buffer = io.StringIO()
    csv.writer(buffer).writerows(
        [["" if value is None else value for value in row] for row in rows]
    )
    return buffer.getvalue()


#: The columns of a table's conditions (results.json ``tables[].conditions``).
CONDITIONS = ("load", "load_param", "cache")


class CsvFormat(ResultsFormat):
    name = "csv"
    help = "one row per table"
    report_file = "results.csv"

    def text(self, document, figures=None):
        header = (
            ["name", "test", "test_n", *CONDITIONS]
            + [key for key, _, _ in STAT_COLUMNS]
            + ["lost_estimated"]
            + [column for column, _, _ in CI_COLUMNS]
            + [column for section in TABLE_SECTIONS for column in section.csv_columns]
            + ["capture_closed"]
        )
        rows = [
            [row["name"], row["parameters"].get("test", ""), row["parameters"].get("n", "")]
            + [row["conditions"][key] for key in CONDITIONS]
            + [row[key] for key, _, _ in STAT_COLUMNS]
            + [row.get("lost_estimated")]
            + [(row.get(key) or [None, None])[side] for _, key, side in CI_COLUMNS]
            + [value for section in TABLE_SECTIONS for value in section.csv_cells(row)]
            + [document["integrity"]["closed"]]
            for row in document["tables"]
        ]
        return csv_text([header] + rows)
