"""The netlist harness's own parts (boards/latscope_boards/netlist_sim.py), without a
simulator: the PLL bypass and its frequencies, the clock periods, the model edits."""

import re
from fractions import Fraction

import pytest

from latscope_boards.netlist_sim import (_expand_includes, _without_modules, bypass_plls,
                                         cell_models, clock_periods_ps)

NETLIST = r"""module latscope(uart_0__tx__io, clk12_0__io);
  output uart_0__tx__io;
  input clk12_0__io;
  SB_PLL40_2F_PAD #(
    .DIVF(32'd63),
    .DIVQ(32'd3),
    .DIVR(32'd0),
    .FEEDBACK_PATH("SIMPLE"),
    .PLLOUT_SELECT_PORTA("GENCLK"),
    .PLLOUT_SELECT_PORTB("GENCLK_HALF")
  ) \clocking.pll  (
    .LOCK(\clocking.locked ),
    .PLLOUTGLOBALA(\capture.clk ),
    .PLLOUTGLOBALB(\link.clk ),
    .PACKAGEPIN(clk12_0__io)
  );
  EHXPLLL #(
    .CLKFB_DIV(32'd5),
    .CLKI_DIV(32'd1),
    .CLKOP_DIV(32'd4),
    .CLKOS_DIV(32'd10),
    .FEEDBK_PATH("CLKOP")
  ) pll2 (
    .CLKI(x),
    .CLKOP(a),
    .CLKOS(b [1]),
    .LOCK(1'h0)
  );
endmodule
"""


def test_every_pll_output_becomes_an_input_at_its_parameters_frequency():
    text, outputs = bypass_plls(NETLIST, 12_000_000)
    found = {(output.instance, output.port): (output.net, output.hz) for output in outputs}
    # 12 MHz * 64 / 8 = 96 MHz on port A, GENCLK_HALF 48 MHz on port B; the ECP5 PLL from
    # 12 MHz: CLKOP 60 MHz (feedback from CLKOP), VCO 240 MHz / 10 on CLKOS.
    assert found == {
        (r"\clocking.pll", "PLLOUTGLOBALA"): (r"\capture.clk", 96_000_000),
        (r"\clocking.pll", "PLLOUTGLOBALB"): (r"\link.clk", 48_000_000),
        ("pll2", "CLKOP"): ("a", 60_000_000),
        ("pll2", "CLKOS"): ("b [1]", 24_000_000),
    }
    assert "SB_PLL40" not in text.replace("// SB_PLL40", "") and "EHXPLLL #" not in text
    assert "assign \\clocking.locked = 1'b1;" in text and "assign 1'h0" not in text
    for output in outputs:
        assert f"  assign {output.net} = {output.input_name};" in text
        assert f"  input {output.input_name};" in text
    assert text.startswith("module latscope(pll0_plloutglobala, pll1_plloutglobalb, ")


def test_a_netlist_without_a_pll_is_an_error():
    with pytest.raises(ValueError, match="no PLL instance"):
        bypass_plls("module latscope(a);\n  input a;\nendmodule\n", 12_000_000)


def test_clock_periods_keep_the_ratio_of_one_plls_outputs():
    assert clock_periods_ps([96_000_000, 48_000_000]) == [10416, 20832]
    assert clock_periods_ps([125_000_000, 50_000_000]) == [8000, 20000]
    assert clock_periods_ps([72_000_000]) == [13888]
    for periods in (clock_periods_ps([96_000_000, 48_000_000]),
                    clock_periods_ps([125_000_000, 50_000_000])):
        assert all(period % 2 == 0 for period in periods)
    assert Fraction(*clock_periods_ps([125_000_000, 50_000_000])) == Fraction(2, 5)


def test_ecp5_models_are_one_file_with_each_include_once_and_no_dp16kd_black_box():
    text = _without_modules(_expand_includes(cell_models("ecp5")), ["DP16KD"])
    assert "`include" not in text
    for module in ("TRELLIS_FF", "TRELLIS_IO", "LUT4", "CCU2C", "OB", "IB"):
        assert len(re.findall(rf"module {module}\s*\(", text)) == 1, module
    assert "module DP16KD" not in text
    with pytest.raises(ValueError, match="no module NOPE"):
        _without_modules(text, ["NOPE"])
