"""The results formats (:class:`latscope.report.formats.base.ResultsFormat`), in the order the
commands offer them and a report lists its files. A new format: its module and one line in
:data:`FORMATS`.
"""

from .csv_table import CsvFormat
from .html_page import HtmlFormat
from .json_file import JsonFormat
from .markdown import MarkdownFormat
from .text import TextFormat
from .worst_csv import WorstCsvFormat

__all__ = ["FORMATS", "named", "report_formats", "comparison_formats", "choices_help"]

FORMATS = [
    TextFormat(),
    HtmlFormat(),
    MarkdownFormat(),
    CsvFormat(),
    JsonFormat(),
    WorstCsvFormat(),
]


def named(name):
    """The format called ``name``."""
    return next(fmt for fmt in FORMATS if fmt.name == name)


def report_formats():
    """The formats a report directory holds a file of."""
    return [fmt for fmt in FORMATS if fmt.report_file]


def comparison_formats():
    """The formats that write comparisons."""
    return [fmt for fmt in FORMATS if fmt.compares]


def choices_help(formats, what="help"):
    """``name: help`` of each format (``what``: ``comparison_help``), for a command's
    ``--format`` help."""
    return "; ".join(f"{fmt.name}: {getattr(fmt, what)}" for fmt in formats)
