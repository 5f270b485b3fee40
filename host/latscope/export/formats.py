"""The export formats (:class:`latscope.export.writer.ExportWriter` subclasses), in the order
``latscope export`` offers and writes them. A new format: its module and one line here.
"""

from pathlib import Path

from .sigrok import SigrokWriter
from .vcd import VcdWriter
from .writer import ExportError, ExportWriter

__all__ = ["EXPORT_FORMATS", "writer_for"]

EXPORT_FORMATS = [SigrokWriter, VcdWriter]


def writer_for(output):
    """The writer of ``output``: a writer as it is, a path by its suffix (the format's
    switches at their defaults)."""
    if isinstance(output, ExportWriter):
        return output
    suffix = Path(output).suffix.lower()
    for writer in EXPORT_FORMATS:
        if writer.suffix == suffix:
            return writer(output)
    known = ", ".join(writer.suffix for writer in EXPORT_FORMATS)
    raise ExportError(f"{output}: no export format for {suffix or 'no suffix'} (known: {known})")
