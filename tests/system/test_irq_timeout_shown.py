"""A DUT whose interrupt never comes (issue 33: an unwired IRQ, the usual first-day mistake)
stops at the suite's IRQ timeout, and the host says so: the firmware prints what it expected
on which pin and ends with exit code 2, and the capture's analysis names the test it ended
inside (results.json ``integrity.unfinished_tests``, "not ended: ..." after the integrity
line of every text output). Run on the Verilated SoC with the appliance's IRQ generator off
and a 1 ms timeout (the suite's is 1000 ms: 100 M cycles of simulation)."""

import json
import subprocess
import sys

import pytest

from latscope.capture.suite import capture_suite
from latscope.link.device import IrqSettings
from latscope.simulated.soc import ROOT, SuiteSettings, build_soc

pytestmark = pytest.mark.verilator

SETTINGS = SuiteSettings(tests="IL_A", samples=20, cflags="-DSUITE_IRQ_TIMEOUT_MS=1u")
BUILD_DIR = ROOT / "firmware" / "suite" / "build" / "pytest-irq-timeout"


def test_an_irq_that_never_comes_ends_the_test_and_the_analysis_names_it(tmp_path):
    build = build_soc(SETTINGS, build_dir=BUILD_DIR, sump=False)
    path = tmp_path / "unwired.lsc"
    run = capture_suite(build, IrqSettings(enable=False), output=path, timeout=300)
    assert run.exit_code == 2, run.console[-2000:]
    assert "suite: FAIL IL-a-1: no interrupt for 1 ms (0 handler calls of 20)" in run.console

    analyze = subprocess.run(
        [sys.executable, "-m", "latscope.cli", "analyze", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert analyze.returncode == 0, analyze.stderr
    document = json.loads(analyze.stdout)
    assert document["integrity"]["unfinished_tests"] == ["IDL-a-1, IL-a-1, ILH-a-1"]
    summary = subprocess.run(
        [sys.executable, "-m", "latscope.cli", "analyze", str(path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "not ended: IDL-a-1, IL-a-1, ILH-a-1 (no END marker" in summary.stdout, summary.stdout
