"""The CSV of the tables (``results.csv``): one row per table: name, test, n, the statistics
(ns), the percentiles' confidence intervals (empty: not reported, or open at that end), then
the columns of every section.
"""

import csv
import io

from ..columns import CI_COLUMNS, STAT_COLUMNS
from ..results import TABLE_SECTIONS
from .base import ResultsFormat

__all__ = ["CsvFormat"]


class CsvFormat(ResultsFormat):
    name = "csv"
    help = "one row per table"
    report_file = "results.csv"

    def text(self, document, figures=None):
        buffer = io.StringIO()
        writer = csv.writer(buffer)
        writer.writerow(["name", "test", "n"] + [key for key, _, _ in STAT_COLUMNS]
                        + [column for column, _, _ in CI_COLUMNS]
                        + [column for section in TABLE_SECTIONS
                           for column in section.csv_columns])
        for row in document["tables"]:
            params = row["parameters"]
            values = ([row[key] for key, _, _ in STAT_COLUMNS]
                      + [(row.get(key) or [None, None])[side] for _, key, side in CI_COLUMNS]
                      + [value for section in TABLE_SECTIONS
                         for value in section.csv_cells(row)])
            writer.writerow([row["name"], params.get("test", ""), params.get("n", "")]
                            + ["" if value is None else value for value in values])
        return buffer.getvalue()
