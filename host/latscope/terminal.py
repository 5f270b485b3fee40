"""The terminal the output goes to: whether there is one, its width, and lines wrapped to it
(every command's output fits an 80-column terminal; into a file or a pipe lines stay whole).
"""

import os
import shutil
import textwrap
from typing import TextIO

__all__ = ["is_terminal", "terminal_width", "output_width", "wrap", "fold_command"]


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        return False


def terminal_width(stream: TextIO | None = None) -> int:
    """Columns of the terminal: ``COLUMNS`` when set (as :func:`shutil.get_terminal_size`
    reads it), else the terminal of ``stream``, else of stdout; 80 when none is known."""
    if not os.environ.get("COLUMNS", "").isdigit() and stream is not None:
        try:
            return os.get_terminal_size(stream.fileno()).columns or 80
        except (AttributeError, ValueError, OSError):
            pass
    return shutil.get_terminal_size((80, 24)).columns


def output_width(stream: TextIO) -> int | None:
    """The width to fit text written to ``stream`` to: its terminal's, or None (a file or a
    pipe: lines stay whole, for grep and scripts)."""
    return terminal_width(stream) if is_terminal(stream) else None


def wrap(text: str, width: int | None) -> str:
    """``text``'s lines wrapped at ``width`` columns, continuations indented by 4 (more if
    the line itself is indented); None: unchanged."""
    if width is None:
        return text
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip(" ")) + 4)
        out.append(
            textwrap.fill(
                line,
                width,
                subsequent_indent=indent,
                break_on_hyphens=False,
                drop_whitespace=True,
            )
        )
    return "\n".join(out)


def fold_command(command: str, width: int | None) -> str:
    """A shell command (no quotes) as lines of at most ``width`` columns that a shell reads
    as the one command: each line but the last ends in a backslash, which the shell removes
    with the line break. Between words the next line is indented; inside a word (a decoder
    stack ``-P a:b=c:d=e,...``, broken after a ``:`` or ``,``) it is not, so that the shell
    joins the pieces into the word again. None, or a command that fits: one line."""
    if width is None or len(command) <= width:
        return command
    lines, rest, indent = [], command, ""
    while len(indent) + len(rest) > width:
        room = width - len(indent) - 1  # the text before the backslash
        cut = max(rest.rfind(sep, 0, room) for sep in " :,")
        if cut <= 0:  # no place to break: cut the word (still joined by the shell)
            cut = room - 1
        if rest[cut] == " ":
            lines.append(indent + rest[: cut + 1] + "\\")
            rest, indent = rest[cut + 1 :], "    "
        else:
            lines.append(indent + rest[: cut + 1] + "\\")
            rest, indent = rest[cut + 1 :], ""
    return "\n".join([*lines, indent + rest])
