"""The appliance's export for the simulation (``verilog_export``) means the same in every
simulator: no ``always @*`` block that reads nothing.

Such a block never runs by the standard (IEEE 1800 9.4.2.2, 9.2.2.2.2), and simulators
differ on it: Verilator 5.006 ran it once, Verilator from 5.040 on and Icarus never do. Yosys's
Verilog-2001 output (Amaranth's ``verilog.convert``) writes a constant driving part of a signal
that a process drives as one (amaranth-lang/amaranth#1629); the short form's lead bytes are
such signals, and Verilator 5.048's appliance sent them with their kind bits 0 (sim/README.md,
"Verilator versions"). The export writes SystemVerilog, where these are ``always_comb``.
Icarus (scripts/setup.sh installs it) follows the standard and warns of each such block.
"""

import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest
from amaranth.back import rtlil, verilog

from latscope_gateware.appliance import ApplianceConfig
from latscope_gateware.verilog_export import FlatAppliance, to_systemverilog

pytestmark = pytest.mark.slow  # an export of the whole appliance: seconds

ROOT = Path(__file__).resolve().parents[2]

#: Icarus's warning for an ``always @*`` that reads nothing.
NEVER_TRIGGERS = "@* found no sensitivities so it will never trigger"


def soc_trace_window():
    """The SoC's TRACE window (sim/soc_map.toml, the one definition), as the export takes it:
    (word address, words)."""
    spec = importlib.util.spec_from_file_location("soc_map", ROOT / "sim" / "soc_map.py")
    assert spec is not None and spec.loader is not None
    soc_map = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(soc_map)
    addresses = soc_map.addresses(soc_map.load())
    return addresses["TRACE_BASE"] >> 2, addresses["TRACE_BYTES"] >> 2


@pytest.fixture(scope="module")
def exports():
    """The appliance as make demo's simulator has it (sim/Makefile, SUMP=0): the export's
    SystemVerilog and Amaranth's Verilog-2001 of the same design (``verilog.convert`` is this
    RTLIL through the same Yosys script without ``-sv``)."""
    config = ApplianceConfig(
        clock_hz=100_000_000,
        uart_divisor=2,
        fifo_depth=512,
        board="verilator-soc",
        sump_depth=0,
        bus_window=soc_trace_window(),
    )
    top = FlatAppliance(config)
    exported = to_systemverilog(top, "latscope_appliance")
    rtlil_text = rtlil.convert(top, name="latscope_appliance", ports=top.ports())
    return exported, verilog._convert_rtlil_text(rtlil_text)


def icarus_warnings(tmp_path, name, text):
    if shutil.which("iverilog") is None:
        pytest.skip("iverilog not installed (scripts/setup.sh installs it)")
    source = tmp_path / name
    source.write_text(text)
    result = subprocess.run(
        ["iverilog", "-g2012", "-o", str(tmp_path / "a.vvp"), "-s", "latscope_appliance", source],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    return result.stderr


def test_the_export_has_no_always_star_block(exports, tmp_path):
    exported, _ = exports
    assert "always @*" not in exported
    assert exported.count("always_comb") > 100  # the processes and the constant drivers
    assert NEVER_TRIGGERS not in icarus_warnings(tmp_path, "appliance.sv", exported)


def test_verilog_2001_would_have_blocks_that_never_run(exports, tmp_path):
    """What the export avoids, so that the test above can fail: Amaranth's Verilog of the same
    design has such blocks (the short form's lead bytes). When a Yosys release stops writing
    them, this fails, and the export could go back to ``verilog.convert``."""
    _, verilog_2001 = exports
    warnings = icarus_warnings(tmp_path, "appliance.v", verilog_2001)
    assert warnings.count(NEVER_TRIGGERS) >= 1, warnings


def test_only_the_always_keywords_differ(exports):
    """SystemVerilog output changes the processes' keywords (always_comb, always_ff) and drops
    Yosys's dummy trigger of the Verilog-2001 form; every other line is the same."""
    exported, verilog_2001 = exports
    trigger = "verilog_backend.cc"  # Yosys's `reg \$auto$verilog_backend.cc:...$N = 0;`
    old = [line for line in verilog_2001.splitlines() if trigger not in line]
    new = exported.splitlines()
    assert len(old) == len(new)
    changed = {(a.strip(), b.strip()) for a, b in zip(old, new) if a != b}
    assert changed <= {
        ("always @*", "always_comb"),
        ("always @* begin", "always_comb begin"),
        ("always @(posedge clk)", "always_ff @(posedge clk)"),
        ("always @(posedge clk) begin", "always_ff @(posedge clk) begin"),
    }, sorted(changed)[:5]
