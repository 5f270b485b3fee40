"""README's commands run as printed (issue 30): every line of its ``sh`` code blocks that
runs on the simulation or on what the simulation wrote, in order, in one shell, in a fresh
clone of the repository, as a new user pastes them.

Left out, by :func:`runs_here`: lines that need a board or a hardware analyzer (a
``/dev/ttyUSB`` port, ``fx2lafw``, ``ols`` captures: SUMP against the simulation needs the pty
shim and a pty number the reader fills in, ``/dev/pts/N``; tests/system/test_sigrok.py runs
it), a window (``pulseview``, ``--view``), the board builds (``make bitstream``, ``make
program``), ``make test`` (this test is part of it) and ``latscope doctor``, whose exit
status is the machine's state (1 in a fresh clone: sigrok does not list the decoders until
``make install-decoders``; tests/host/test_doctor.py runs it and checks its verdicts).

Honest reuse: the clone shares this checkout's virtual environment (its ``.venv`` a link, so
``scripts/setup.sh`` finds it installed) and so this checkout's package, whose simulator and
firmware builds it reuses (``make`` finds them up to date); everything the commands write
(``out/``, ``run.lsc``, reports, sigrok files) is written afresh in the clone.
"""

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

#: Lines a new user cannot run on the simulation alone (see the module's docstring).
NOT_HERE = re.compile(
    r"/dev/ttyUSB|/dev/pts/N|fx2lafw|^\s*pulseview\b|\|\s*pulseview\b|--view\b|"
    r"^make (test|bitstream|bitstreams-all|program)\b|^sigrok-cli -i (capture|trace)\.sr|"
    r"^latscope doctor\b"
)


def code_lines(text):
    """The lines of every ``sh`` block of ``text``, in order."""
    lines = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, re.M | re.S):
        lines += [line for line in block.splitlines() if line.strip()]
    return lines


def install_inputs():
    """The files whose change makes scripts/setup.sh reinstall the Python packages (its
    ``[ FILE -nt "$stamp" ]`` tests)."""
    names = re.findall(r'\[ (\S+) -nt "\$stamp" \]', (ROOT / "scripts" / "setup.sh").read_text())
    assert "pyproject.toml" in names, names
    return names


def runs_here(line):
    return not NOT_HERE.search(line)


def test_the_filter_keeps_the_simulation_and_leaves_out_the_hardware():
    lines = code_lines(README.read_text())
    kept = [line for line in lines if runs_here(line)]
    assert any(line.startswith("make demo") for line in kept)
    assert any("latscope capture -o run.lsc" in line for line in kept)
    assert any(line.startswith("latscope stream --port sim:soc |") for line in kept)
    assert not any("ttyUSB" in line or "pulseview" in line for line in kept)
    assert len(kept) >= 25, kept


@pytest.mark.verilator
@pytest.mark.slow
@pytest.mark.timeout(3000)  # two demos, a capture and a stream of the whole suite, a report
def test_readme_commands_run_as_printed(tmp_path):
    clone = tmp_path / "latscope"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    (clone / ".venv").symlink_to(ROOT / ".venv")
    # The clone's install inputs (pyproject.toml, setup.py, ...: the files setup.sh compares
    # with its stamp) get this checkout's times, so setup.sh finds the shared environment
    # installed and leaves it (it reinstalls when one is newer than its stamp, and would then
    # install the clone into this checkout's environment).
    stamp = ROOT / ".venv" / ".latscope-installed"
    for name in install_inputs():
        ours = (ROOT / name).stat()
        assert stamp.exists() and stamp.stat().st_mtime_ns >= ours.st_mtime_ns, "run make setup"
        os.utime(clone / name, ns=(ours.st_atime_ns, ours.st_mtime_ns))
    lines = [line for line in code_lines((clone / "README.md").read_text()) if runs_here(line)]
    script = "set -euo pipefail\n" + "".join(
        f"echo '$ {shell_quote(line)}'\n{line}\n" for line in lines
    )
    home = tmp_path / "home"
    home.mkdir()
    environment = {**os.environ, "HOME": str(home)}
    environment.pop("VIRTUAL_ENV", None)
    environment.pop("SIGROKDECODE_DIR", None)
    log = tmp_path / "readme.log"
    with open(log, "w") as out:
        result = subprocess.run(
            ["bash", "-c", script],
            cwd=clone,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=3000,
        )
    text = log.read_text(errors="replace")
    assert result.returncode == 0, text[-6000:]
    assert text.count("\n$ ") + text.startswith("$ ") == len(lines)
    installed = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "python"), "-c", "import latscope; print(latscope.__file__)"],
        capture_output=True,
        text=True,
        cwd=home,  # not tmp_path: its latscope/ (the clone) would be imported instead
    ).stdout
    assert installed.startswith(str(ROOT)), installed  # the shared environment was left alone
    for written in ("out/demo.lsc", "run.lsc", "lite.lsc", "run-report/report.html", "samples.csv"):
        assert (clone / written).stat().st_size > 0, written


def shell_quote(text):
    return text.replace("'", "'\\''")
