"""The simulator's speed variants change the speed, not the run.

The demo's simulator is built without the appliance's SUMP engine (``make -C sim SUMP=0``,
``build_soc(sump=False)``); SUMP mode needs the default build. A short suite runs on both,
captured through the appliance with the demo's IRQ settings: the harness's ground-truth
log up to the capture's end must be equal byte for byte, and the captures must hold the same
events (source, stamp, value) with the same appliance status. After STOP the simulation goes
on while the host drains the link and stops it, a wall-clock matter, so the log's tail after
the capture's end is not compared. ``bench/sim_speed.py`` does the same on the whole demo for
every variant (PUBLIC=1, PGO=1 too) and prints their speeds.

Also: the core's Verilog the Makefile builds carries no ``verilator public`` markers, and
the harness reads no public signal (the top's ports and the RAM's DPI functions only).
"""

import re
import subprocess

import numpy as np
import pytest

from latscope.capture.file import load_capture
from latscope.capture.suite import DEMO_IRQ, capture_suite
from latscope.simulated.soc import ROOT, SuiteSettings, build_soc

pytestmark = pytest.mark.verilator

SETTINGS = SuiteSettings(tests="IL_A,TSL_A", samples=200)
BUILD_DIR = ROOT / "firmware" / "suite" / "build" / "pytest-variants"


def truth_until_capture_end(path):
    data = path.read_bytes()
    end = data.rfind(b" capture 0\n")
    assert end > 0, f"{path}: no end of capture"
    return data[: end + len(b" capture 0\n")]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("variants")
    out = {}
    for sump in (True, False):
        build = build_soc(SETTINGS, build_dir=BUILD_DIR, sump=sump)
        name = "sump" if sump else "nosump"
        run = capture_suite(
            build, DEMO_IRQ, output=tmp / f"{name}.lsc", truth=tmp / f"{name}.truth", timeout=300
        )
        assert run.exit_code == 0, run.console[-2000:]
        out[sump] = (build, run, tmp / f"{name}.truth")
    return out


def test_the_demo_build_has_no_sump_engine(runs):
    with_sump, without = runs[True][0].simulator, runs[False][0].simulator
    assert with_sump != without
    assert "nosump" in str(without) and "nosump" not in str(with_sump)
    exported = {
        sump: (
            ROOT / "sim" / "build" / f"latscope_appliance{'' if sump else '-nosump'}.sv"
        ).read_text()
        for sump in (True, False)
    }
    modules = {
        sump: re.findall(r"^module \\latscope_appliance\.appliance\.sump\b", text, re.M)
        for sump, text in exported.items()
    }
    assert modules[True] and not modules[False]


def test_with_and_without_sump_the_run_is_the_same(runs):
    (_, run_a, truth_a), (_, run_b, truth_b) = runs[True], runs[False]
    log = truth_until_capture_end(truth_a)
    assert log.count(b" trace ") + log.count(b" gpio ") > 400  # the suite's markers
    assert log == truth_until_capture_end(truth_b)
    assert run_a.exit_cycle == run_b.exit_cycle
    assert run_a.status == run_b.status
    a, b = load_capture(run_a.path).events, load_capture(run_b.path).events
    assert len(a) == len(b) == run_a.events > 400
    for column in ("source", "stamp", "value"):
        assert np.array_equal(getattr(a, column), getattr(b, column)), column


def test_the_core_is_built_without_public_signals():
    cpu = SETTINGS.cpu
    result = subprocess.run(
        ["make", "-s", "-C", str(ROOT / "sim"), f"CPU={cpu}", "print-cpu-source"],
        capture_output=True,
        text=True,
        check=True,
    )
    source = result.stdout.strip()
    assert source.endswith(f"build/cpu/{cpu}.v")
    text = open(source).read()
    assert "VexRiscv" in text and "verilator public" not in text
    for harness in (ROOT / "sim" / "harness").glob("*.cpp"):
        code = harness.read_text()
        assert "rootp" not in code and "__DOT__" not in code, harness.name
