"""PulseView as the live view of ``latscope stream --view``: started on the stream, with a
private copy of the user's settings in which the view follows the data
(:func:`start_pulseview`).
"""

import os
import subprocess
from pathlib import Path

__all__ = ["FOLLOW", "user_config", "with_setting", "write_private_config", "start_pulseview"]

#: How the view follows the data: the PulseView 0.4.2 setting each mode turns on.
FOLLOW = {"fit": "View_ZoomToFitDuringAcq", "scroll": "View_StickyScrolling"}
#: The QSettings group of PulseView's settings (pv/globalsettings.cpp).
GROUP = "Settings"


def user_config(environ=os.environ):
    """Where PulseView keeps the user's settings (Qt's rule: ``$XDG_CONFIG_HOME``, else
    ``~/.config``)."""
    base = environ.get("XDG_CONFIG_HOME") or Path(environ.get("HOME", "~")) / ".config"
    return Path(base).expanduser() / "sigrok" / "PulseView.conf"


def with_setting(text, key, value, group=GROUP):
    """INI ``text`` with ``key=value`` in ``[group]`` (replaced if there, else added); every
    other line as it was."""
    lines = text.splitlines()
    header = f"[{group}]"
    if header not in lines:
        return "\n".join(lines + ([""] if lines else []) + [header, f"{key}={value}"]) + "\n"
    start = lines.index(header) + 1
    end = next((n for n in range(start, len(lines)) if lines[n].startswith("[")), len(lines))
    for n in range(start, end):
        if lines[n].split("=", 1)[0].strip() == key:
            lines[n] = f"{key}={value}"
            break
    else:
        lines.insert(start, f"{key}={value}")
    return "\n".join(lines) + "\n"


def write_private_config(config_home, follow="fit", environ=os.environ):
    """Writes ``config_home/sigrok/PulseView.conf``: the user's settings (if any) with
    ``follow`` (a key of :data:`FOLLOW`, or None: as the user has it) on; returns its path."""
    source = user_config(environ)
    text = source.read_text(errors="surrogateescape") if source.is_file() else ""
    if follow is not None:
        text = with_setting(text, FOLLOW[follow], "true")
    path = Path(config_home) / "sigrok" / "PulseView.conf"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, errors="surrogateescape")
    return path


def start_pulseview(pvs, config_home, *, follow="fit", environ=os.environ, args=(), **popen):
    """Starts ``pulseview -c -i /dev/stdin -I vcd -s pvs`` on a pipe (``.stdin`` of the
    returned Popen) with the private settings of :func:`write_private_config` in
    ``config_home``. ``args``: more PulseView arguments (e.g. ``-geometry``).

    PulseView 0.4.2 keeps its view settings in ``$XDG_CONFIG_HOME/sigrok/PulseView.conf`` (Qt's
    INI format, group ``[Settings]``), never in a ``.pvs`` setup. During an acquisition (reading
    ``-i /dev/stdin`` is one) it follows the data when one of two of them is on
    (pv/views/trace/view.cpp, ``capture_state_updated``):

    * ``View_ZoomToFitDuringAcq`` ("Constantly perform zoom-to-fit during acquisition"): the
      whole stream so far, zoomed out as it grows;
    * ``View_StickyScrolling`` ("Perform trace view sticky scrolling"): the newest data at the
      right edge, at the zoom of the moment.

    Both are off by default. The view here runs PulseView with ``XDG_CONFIG_HOME`` set to a
    directory of its own, holding a copy of the user's ``PulseView.conf`` (theme, colours and
    all) with the chosen key on, so the user's own file stays as it is (changes made in that
    window are not kept). ``-c`` keeps PulseView from reopening the sessions of the copy.
    """
    write_private_config(config_home, follow, environ)
    env = dict(environ, XDG_CONFIG_HOME=str(config_home))
    try:
        return subprocess.Popen(
            ["pulseview", "-c", *args, "-i", "/dev/stdin", "-I", "vcd", "-s", str(pvs)],
            stdin=subprocess.PIPE,
            env=env,
            **popen,
        )
    except FileNotFoundError:
        raise FileNotFoundError(
            "pulseview is not installed (stream --view needs it: apt-get install pulseview)"
        ) from None
