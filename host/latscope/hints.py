"""Commands that latscope prints for the user to run next, written so that they work as
printed: ``latscope`` where that name runs this latscope, else the path of this
environment's script (``.venv/bin/latscope`` while the virtual environment is not active),
and sigrok-cli with the latscope decoders on its search path when they are not installed.
"""

import os
import shutil
import sys
from pathlib import Path

__all__ = ["latscope_command", "shown", "sigrok_decoders_prefix"]


def shown(path: Path) -> str:
    """``path`` relative to the working directory where it is below it, else absolute."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def latscope_command() -> str:
    """How to run this latscope from the working directory's shell: ``latscope`` when the
    name finds this environment's script, else that script's path, else ``python -m``."""
    script = Path(sys.prefix) / "bin" / "latscope"
    found = shutil.which("latscope")
    if found is not None and script.exists() and Path(found).resolve() == script.resolve():
        return "latscope"
    if script.exists():
        return shown(script)
    return f"{sys.executable} -m latscope.cli"


def _user_decoders() -> Path:
    """Where ``make install-decoders`` puts the decoders (libsigrokdecode's user directory)."""
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data) / "libsigrokdecode" / "decoders"


def sigrok_decoders_prefix() -> str:
    """``SIGROKDECODE_DIR=<decoders> `` to put before a sigrok-cli or PulseView command when
    sigrok would not find the latscope decoders by itself (not installed with ``make
    install-decoders``, not in ``SIGROKDECODE_DIR``); "" when it would."""
    from .simulated.soc import ROOT

    decoders = ROOT / "decoders"
    search = [_user_decoders(), *map(Path, filter(None, [os.environ.get("SIGROKDECODE_DIR")]))]
    if any((where / "latscope_marker").is_dir() for where in search):
        return ""
    return f"SIGROKDECODE_DIR={shown(decoders)} "
