"""latscope as a wheel, installed into a fresh virtual environment (issue 30): it builds with
the setuptools pyproject.toml asks for (77 or later: the SPDX ``license``), carries its
LICENSE and its compiled loops, its ``latscope`` command runs, and ``latscope demo`` without
the repository says in one line what it needs (the simulation is built from the repository's
sim/ and firmware/).

The wheel is built as pip installs a package from source: from the sdist, which is built from
a clean copy of the checkout (its files under version control, none of its build products), so
what the compiled loops include (host/latscope/_pybuffers.h) must be in the sdist. The sdist
by setuptools' PEP 517 backend in a build environment of its own, the wheel by pip in an
isolated one. The new environment gets latscope's dependencies from this checkout's ``.venv``
(a ``.pth`` line: the pinned packages, not downloaded again), the wheel itself with ``pip
install --no-deps``.
"""

import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def clean_copy(destination):
    """The checkout's files as a fresh clone has them, with their changes not yet committed:
    the tracked and the new (not ignored) ones, without build products (.so, build/)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():  # not one deleted since the last commit
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, destination / name)
    return destination


def built_sdist(source, out, scratch):
    """The sdist of ``source`` into ``out``, by setuptools' build backend (as ``python -m
    build --sdist`` calls it) in a new environment with the setuptools pyproject.toml asks
    for."""
    builder = scratch / "builder"
    subprocess.run([sys.executable, "-m", "venv", str(builder)], check=True)
    requires = ["setuptools>=77", "wheel"]  # pyproject.toml's [build-system]
    assert all(r in (ROOT / "pyproject.toml").read_text() for r in requires)
    python = builder / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "-q", *requires], check=True, timeout=300)
    build = f"from setuptools import build_meta; print(build_meta.build_sdist({str(out)!r}))"
    made = subprocess.run(
        [python, "-c", build], cwd=source, capture_output=True, text=True, check=True
    ).stdout.split()[-1]
    return out / made


def test_the_wheel_installs_and_says_what_the_demo_needs(tmp_path):
    sdist = built_sdist(clean_copy(tmp_path / "clean"), tmp_path, tmp_path)
    with tarfile.open(sdist) as archive:
        sources = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    compiled = {"host/latscope/link/record_loop.c", "host/latscope/analysis/window_loop.c"}
    assert compiled | {"host/latscope/_pybuffers.h", "setup.py"} <= sources
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(sdist), "-w", str(tmp_path)],
        check=True,
        timeout=600,
    )
    (wheel,) = tmp_path.glob("latscope-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    assert "latscope/py.typed" in names and "latscope_gateware/appliance.py" in names
    for loop in ("latscope/link/record_loop.", "latscope/analysis/window_loop."):
        assert any(name.startswith(loop) and name.endswith(".so") for name in names), loop
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
    loops = "import latscope.link.record_loop as r, latscope.analysis.window_loop as w; "
    loops += "print(r.__file__); print(w.__file__)"
    found = subprocess.run(
        [python, "-c", loops], capture_output=True, text=True, cwd=tmp_path, check=True
    ).stdout.split()
    assert len(found) == 2 and all(path.startswith(site) for path in found), found
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
