"""What every export format's writer does: it is told the signals (:class:`Signals`), takes
their level changes (:class:`latscope.export.levels.Changes`) piece by piece in stamp order,
and at the end writes its file(s). :mod:`latscope.export.formats` lists the formats.
"""

import contextlib
from dataclasses import dataclass, field

from latscope_defs.channels import Layout

from ..capture.conditions import Conditions

__all__ = ["ExportError", "FormatError", "ExportWriter", "Signals", "writing"]


class ExportError(ValueError):
    """A capture that cannot be exported, or an output that cannot be written (one-line
    message naming the file)."""


class FormatError(ValueError):
    """A value a format cannot hold (a sample rate no VCD timescale expresses)."""


@dataclass
class Signals:
    """What a writer is told before the first change: the signals (``layout``), the
    sample rate (``stamp_hz``, one sample per stamp unit), the cycle of sample 0
    (``origin``; None: not known yet, a live stream sets it from its first event), the
    levels before the first change (``initial``), a line that says what is exported and what
    the capture was measured under (``conditions``: its load and caches, for the decoders'
    options)."""

    layout: Layout
    stamp_hz: int
    origin: int | None
    initial: int = 0
    comment: str = ""
    conditions: Conditions = field(default_factory=Conditions)


class ExportWriter:
    """One output of an export. A format is a subclass: its ``name`` (the option
    ``--<name>`` of ``latscope export``), file ``suffix``, ``help`` and ``sigrok_input``
    (sigrok-cli's ``-I`` for the file; None: sigrok-cli knows it by itself), and
    ``switches``: ``{keyword: help}`` of its on/off options (on by default; ``latscope
    export --no-<keyword>`` turns one off). Made with the output path and those keywords;
    :meth:`begin`, :meth:`add` any number of times, :meth:`finish`; :meth:`close` always
    (after an error it leaves what was written closed)."""

    name = ""
    suffix = ""
    help = ""
    sigrok_input: str | None = None
    switches: dict[str, str] = {}

    def __init__(self, path):
        self.path = path

    @property
    def files(self):
        """The files it writes (strings, in order), known before it writes them."""
        return [str(self.path)]

    def begin(self, signals):
        raise NotImplementedError

    def add(self, changes):
        raise NotImplementedError

    def finish(self, stop, view=None):
        """Writes the rest: the levels up to cycle ``stop`` (not included). ``view``: the
        first view a viewer should show, ``{"scale": seconds per pixel, "offset": seconds
        from sample 0}``, for formats that carry one."""
        raise NotImplementedError

    def close(self):
        """Releases the file(s); does nothing once they are closed."""


@contextlib.contextmanager
def writing(path):
    """Turns an error writing ``path`` (a full disk, no permission, a value the format cannot
    hold) into an :class:`ExportError` that names it."""
    try:
        yield
    except OSError as error:
        raise ExportError(f"{path}: cannot write: {error.strerror or error}") from None
    except FormatError as error:
        raise ExportError(f"{path}: {error}") from None
