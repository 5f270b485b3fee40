"""What every results format is (:class:`ResultsFormat`): a name, the file it is in a report
and in a comparison, and how it writes a results document (and a comparison of several).
"""

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Figures", "ResultsFormat"]


@dataclass
class Figures:
    """A report's figures: in ``directory`` (relative to the report), per table its figure
    kinds with each one's PNG (base64) for the formats that embed them."""

    directory: str
    png: dict = field(default_factory=dict)
    #: Per kind of table (IL, IDL, TSL: report.headline.KINDS), the PNG of the CDF of its
    #: tables (``<kind>.cdf``).
    families: dict = field(default_factory=dict)


class ResultsFormat:
    """A results format: ``name`` (``--format NAME``; the key of its file in
    :func:`latscope.report.directory.write_report`'s paths), ``help`` (and
    ``comparison_help``, what it makes of a comparison), ``report_file`` (its
    file in a report directory; None: not written there) and ``comparison_file`` (its file
    in ``latscope compare -o``'s directory; None: none). :meth:`text` is the whole file for
    a results document; a format that writes comparisons too (``compares``) has
    :meth:`comparison_text`."""

    name = ""
    help = ""
    comparison_help = ""
    report_file: str | None = None
    comparison_file: str | None = None

    def text(self, document, figures=None):
        """The file of a results document. ``figures``: the report's :class:`Figures`
        (None: none)."""
        raise NotImplementedError

    def comparison_text(self, comparison):
        """The file of a comparison (:func:`latscope.report.compare.comparison`)."""
        raise NotImplementedError(f"{self.name}: no comparison")

    @property
    def compares(self):
        return type(self).comparison_text is not ResultsFormat.comparison_text

    def write(self, document, path, figures=None):
        Path(path).write_text(self.text(document, figures))

    def write_comparison(self, comparison, path):
        Path(path).write_text(self.comparison_text(comparison))
