"""The first-plug-in self-test against the full-system simulation (``sim:soc``): the Verilated
SoC runs the wiring program (``firmware/tools/wiring_sim.c`` on ``wiring_walk.h``), the
harness's jumper wires the IRQ output to EDGE0 and the strobe until the program starts, and
``latscope selftest --loopback --wiring`` must pass. Then the harness's ``--miswire`` puts
real faults into the simulated wires between the SoC's marker pins and the appliance, and
the report must name exactly those bits; what it must say is worked out here from the fault
and the walk (walking ones, then walking zeros), not taken from latscope's analysis.

Builds the appliance-enabled simulator if needed (about 40 s from scratch); each run takes
about 2 s.
"""

import json
import subprocess

import pytest

import latscope
from latscope.cli import main
from latscope.ports import open_selftest_port
from latscope.simulated.soc import SuiteSettings, build_soc

pytestmark = pytest.mark.verilator

WIDTH = 16
WALK = [1 << bit for bit in range(WIDTH)] + [0xFFFF ^ (1 << bit) for bit in range(WIDTH)]


def selftest(capsys, *args):
    status = main(["selftest", "--port", "sim:soc", "--json", *args])
    return status, json.loads(capsys.readouterr().out)


def test_selftest_on_the_simulated_soc(capsys):
    status, results = selftest(capsys, "--loopback", "--wiring")
    assert status == 0, results
    link, loopback, wiring = results["link"], results["loopback"], results["wiring"]
    assert link["ok"] and link["sent"] == 256 and link["wrong"] == link["missing"] == 0
    # ECHO is 9 bytes out; the reply record at least 10 back.
    assert link["bytes_written"] == 256 * 9 and link["bytes_read"] >= 256 * 10
    # The harness's jumper is a wire inside one clocked design: after the documented pin
    # latencies each IRQ change has the same stamp on EDGE0 and MARKER.
    assert loopback["ok"] and loopback["irq_edges"] >= 16
    assert loopback["offsets"] == {"EDGE0": [0], "MARKER": [0]}
    assert loopback["delays_ns"] == {
        name: [ns, ns] for name, ns in loopback["documented_ns"].items()
    }
    assert wiring["ok"] and wiring["received"] == wiring["expected"] == 2 * WIDTH


def test_api_selftest_on_a_miswired_soc():
    """The same from Python, on the self-test's simulation as a port: the swapped pair is
    named."""
    with latscope.open(
        open_selftest_port("sim:soc", loopback=True, miswire=["swap:1,2"])
    ) as session:
        results = session.selftest(loopback=True, wiring=True, count=16)
    assert results["link"].ok and results["loopback"].ok and not results["wiring"].ok
    assert results["wiring"].swapped == [(1, 2), (2, 1)] and not results["wiring"].stuck_high


def _toggles(bit):
    """How often pin ``bit`` changes during the walk (from all low)."""
    levels = [0] + [value >> bit & 1 for value in WALK]
    return sum(a != b for a, b in zip(levels, levels[1:]))


@pytest.mark.parametrize(
    "faults, expected",
    [
        (
            ["swap:3,4", "stuck-high:D9", "stuck-low:15"],
            {"swapped": [[3, 4], [4, 3]], "stuck_high": [9], "stuck_low": [15]},
        ),
        # Two kinds of short: one wired-AND pair, one wired-OR pair.
        (["short-and:12,13", "short-or:D0,D1"], {"shorted": [[0, 1], [12, 13]]}),
    ],
    ids=["swap-stuck", "shorts"],
)
def test_a_miswired_soc_is_reported_exactly(capsys, faults, expected):
    status, results = selftest(
        capsys,
        "--wiring",
        "--count",
        "8",
        *(arg for fault in faults for arg in ("--miswire", fault)),
    )
    wiring = results["wiring"]
    assert status == 1 and results["link"]["ok"] and not wiring["ok"]
    assert wiring["received"] == 2 * WIDTH and not wiring["problems"]
    found = {
        name: wiring[name]
        for name in ("stuck_high", "stuck_low", "swapped", "shorted")
        if wiring[name]
    }
    assert found == expected


def test_strobe_faults(capsys):
    status, results = selftest(capsys, "--wiring", "--count", "8", "--miswire", "stuck-low:STROBE")
    assert status == 1 and results["wiring"]["received"] == 0
    assert "not connected" in results["wiring"]["problems"][0]
    # D3's wire on the strobe input: a marker for every change of D3 during the walk.
    status, results = selftest(capsys, "--wiring", "--count", "8", "--miswire", "swap:3,STROBE")
    assert status == 1 and results["wiring"]["received"] == _toggles(3) == 5
    assert "loose" in results["wiring"]["problems"][0]


@pytest.mark.parametrize("spec", ["swap:3", "stuck-low:17", "bridge:1,2", "short-or:4,D99"])
def test_the_harness_rejects_a_bad_miswire(spec):
    build = build_soc(SuiteSettings(program="wiring_walk"))
    result = subprocess.run(
        [str(build.simulator), "--miswire", spec, str(build.firmware)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 125
    assert result.stderr.startswith(f"latscope-sim: --miswire {spec}: ")
    assert result.stderr.count("\n") == 1
