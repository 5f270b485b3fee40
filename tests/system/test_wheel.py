"""latscope as a wheel, installed into a fresh virtual environment (issue 30): it builds with
the setuptools pyproject.toml asks for (77 or later: the SPDX ``license``), carries its
LICENSE, its ``latscope`` command runs, and ``latscope demo`` without the repository says in
one line what it needs (the simulation is built from the repository's sim/ and firmware/).

The new environment gets latscope's dependencies from this checkout's ``.venv`` (a ``.pth``
line: the pinned packages, not downloaded again), the wheel itself with ``pip install
--no-deps``; the wheel is built as pip builds any, in an isolated build environment.
"""

import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_installs_and_says_what_the_demo_needs(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(tmp_path)],
        check=True,
        timeout=600,
    )
    (wheel,) = tmp_path.glob("latscope-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    assert "latscope/py.typed" in names and "latscope_gateware/appliance.py" in names
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # The dependencies from this checkout's environment, after the new one's own packages
    # (a plain path line: its .pth files, the editable latscope among them, are not read).
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", str(wheel)], check=True, timeout=300
    )
    latscope = venv / "bin" / "latscope"
    where = subprocess.run(
        [python, "-c", "import latscope; print(latscope.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    ).stdout
    assert where.startswith(site), where  # the wheel's, not this checkout's
    version = subprocess.run([latscope, "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("latscope 0.")
    environment = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    demo = subprocess.run(
        [latscope, "demo"], capture_output=True, text=True, cwd=tmp_path, env=environment
    )
    assert demo.returncode == 1 and demo.stdout == ""
    assert demo.stderr.count("\n") == 1 and "LATSCOPE_ROOT" in demo.stderr, demo.stderr
    assert "sim/ and firmware/" in demo.stderr and "scripts/setup.sh" in demo.stderr
    assert not (tmp_path / "out" / "demo.lsc").exists()
