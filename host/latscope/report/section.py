"""A per-table section of the results document (:class:`TableSection`): fields of every table's
row and how the formats show them, in format-neutral pieces (:class:`Paragraph`,
:class:`Grid`, :class:`Link`) that each format renders its own way. The document
(:mod:`latscope.report.results`) lists the sections; every format shows every section, so a
new one is its module and one line in that list.
"""

from dataclasses import dataclass, field

__all__ = ["TableSection", "Paragraph", "Grid", "Link"]


@dataclass
class Paragraph:
    """A line of prose."""

    text: str


@dataclass
class Link:
    """A cell that links to ``href`` (a file beside the report, or ``#name``)."""

    text: str
    href: str


@dataclass
class Grid:
    """A table: ``header``, ``rows`` of cells (text, or :class:`Link`), the indices of the
    ``numeric`` columns (aligned right) and a ``name`` that styles it (HTML class)."""

    header: list
    rows: list
    numeric: set = field(default_factory=set)
    name: str = ""


class TableSection:
    """A section of every table's row. :meth:`fields` makes its fields of the results
    document (JSON-ready, in order); the text formats (terminal, Markdown) show
    :meth:`text`, under ``title``; the HTML page shows each table's :meth:`blocks` in that
    table's part; the CSV of the tables has its :attr:`csv_columns` and :meth:`csv_cells`."""

    title = ""
    #: Its columns in the CSV of the tables (after the statistics).
    csv_columns: list = []

    def fields(self, name, table, context):
        """``{field: value}`` of table ``name`` (a ``TableAccumulator``). ``context``:
        ``run`` (:func:`latscope.report.results.run_info`) and what was looked for in the
        capture beyond the tables (``worst``: the worst samples of every table)."""
        raise NotImplementedError

    def shown(self, document):
        """Whether the text formats show it (default: when a table has samples)."""
        return any(row["samples"] for row in document["tables"])

    def intro(self, document):
        """The line before the tables' lines in the text formats (None: none)."""
        return None

    def lines(self, row):
        """The lines of one table in the text formats."""
        return []

    def text(self, document):
        """The section in the text formats: :meth:`intro` and every table's :meth:`lines`;
        "" when not :meth:`shown`."""
        if not self.shown(document):
            return ""
        intro = self.intro(document)
        lines = [intro] if intro is not None else []
        for row in document["tables"]:
            lines += self.lines(row)
        return "\n".join(lines)

    def blocks(self, row):
        """One table's part of the HTML page (default: its :meth:`lines` as paragraphs)."""
        return [Paragraph(line) for line in self.lines(row)]

    def csv_cells(self, row):
        """The values of :attr:`csv_columns` (None: empty)."""
        return []
