"""Fixtures of the labgrid example: the place, acquired for the session, and its appliance.

Run with labgrid's pytest plugin (``--lg-env env.yaml``), ``LG_COORDINATOR`` and
``LG_PLACE`` set; see test_latency.py and docs/lab.md.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

#: labgrid-client of the Python that runs the tests (a venv's bin/ need not be on PATH).
CLIENT = Path(sys.executable).parent / "labgrid-client"


def labgrid_client(*args, timeout=None):
    result = subprocess.run([str(CLIENT), *args], capture_output=True, text=True, timeout=timeout)
    if result.returncode != 0:
        raise RuntimeError(f"labgrid-client {' '.join(args)}: {result.stderr.strip()}")
    return result.stdout


def pytest_addoption(parser):
    group = parser.getgroup("latscope")
    group.addoption(
        "--latscope-out",
        default="out/lab",
        help="directory for the capture and report (default out/lab)",
    )
    group.addoption(
        "--latscope-duration", type=float, default=60.0, help="seconds to capture (default 60)"
    )
    group.addoption(
        "--latscope-samples",
        type=int,
        default=None,
        help="end the capture once IL-a-1 has this many samples",
    )
    group.addoption(
        "--latscope-irq-period",
        type=int,
        default=5000,
        help="IRQ period in capture cycles (default 5000: 50 us at 100 MHz)",
    )
    group.addoption(
        "--latscope-wait",
        type=float,
        default=3600.0,
        help="seconds to wait for the place when someone else holds it",
    )


@pytest.fixture(scope="session")
def place(pytestconfig):
    """$LG_PLACE, acquired for this session: a reservation first, so that a test run
    queues behind whoever holds the place instead of failing; released at the end."""
    name = os.environ["LG_PLACE"]
    wait = pytestconfig.getoption("latscope_wait")
    shell = labgrid_client("reserve", "--wait", "--shell", f"name={name}", timeout=wait)
    token = re.search(r"LG_TOKEN=(\S+)", shell).group(1)
    labgrid_client("-p", f"+{token}", "acquire", timeout=60)
    try:
        yield name
    finally:
        labgrid_client("-p", name, "release", timeout=60)


@pytest.fixture(scope="session")
def appliance(place, target):
    """The place's LatscopeDriver, active (its link open) for the session."""
    driver = target.get_driver("LatscopeDriver")
    target.activate(driver)
    yield driver
    target.deactivate(driver)


@pytest.fixture(scope="session")
def out_dir(pytestconfig, place):
    directory = Path(pytestconfig.getoption("latscope_out"))
    directory.mkdir(parents=True, exist_ok=True)
    return directory
