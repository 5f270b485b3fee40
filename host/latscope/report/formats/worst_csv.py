"""The CSV of the worst samples (``worst.csv``): one row per worst sample of every table, its
flags, its events in one cell (:func:`latscope.analysis.worst.events_text`) and whether the
capture file was closed (``capture_closed``: False, samples after its end may be missing).
"""

from ...analysis.worst import events_text
from .base import ResultsFormat
from .csv_table import csv_text

__all__ = ["WorstCsvFormat"]


class WorstCsvFormat(ResultsFormat):
    name = "worst"
    help = "one row per worst sample, with the events around it"
    report_file = "worst.csv"

    def text(self, document, figures=None):
        header = [
            "name",
            "rank",
            "index",
            "start",
            "end",
            "time_s",
            "latency_ns",
            "cold",
            "tick",
            "events",
            "export",
            "capture_closed",
        ]
        rows = [
            [
                row["name"],
                entry["rank"],
                entry["index"],
                entry["start"],
                entry["end"],
                entry["time_s"],
                entry["ns"],
                int(entry["cold"]),
                None if entry["tick"] is None else int(entry["tick"]),
                events_text(entry),
                entry.get("export"),
                document["integrity"]["closed"],
            ]
            for row in document["tables"]
            for entry in row["worst"]
        ]
        return csv_text([header] + rows)
