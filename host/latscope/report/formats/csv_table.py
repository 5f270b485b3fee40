"""The CSV of the tables (``results.csv``): one row per table: name, test, n, the statistics
(ns), the percentiles' confidence intervals (empty: not reported, or open at that end), then
the columns of every section.
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


class CsvFormat(ResultsFormat):
    name = "csv"
    help = "one row per table"
    report_file = "results.csv"

    def text(self, document, figures=None):
        header = (
            ["name", "test", "n"]
            + [key for key, _, _ in STAT_COLUMNS]
            + [column for column, _, _ in CI_COLUMNS]
            + [column for section in TABLE_SECTIONS for column in section.csv_columns]
        )
        rows = [
            [row["name"], row["parameters"].get("test", ""), row["parameters"].get("n", "")]
            + [row[key] for key, _, _ in STAT_COLUMNS]
            + [(row.get(key) or [None, None])[side] for _, key, side in CI_COLUMNS]
            + [value for section in TABLE_SECTIONS for value in section.csv_cells(row)]
            for row in document["tables"]
        ]
        return csv_text([header] + rows)
