"""The netlist harness's own parts (boards/latscope_boards/netlist_sim.py): the PLL bypass and
its frequencies, the clock periods, the model edits (no simulator), and the ECP5 gearbox
models on their own (Icarus, a second)."""

import random
import re
import shutil
import subprocess
from fractions import Fraction

import pytest

from latscope_boards.netlist_sim import (
    LOCK_INPUT,
    MODELS_DIR,
    bypass_plls,
    cell_models,
    clock_periods_ps,
    expand_includes,
    without_modules,
)

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
    # Every PLL's LOCK is the testbench's LOCK input (a constant LOCK is left as it is).
    assert f"assign \\clocking.locked = {LOCK_INPUT};" in text and "assign 1'h0" not in text
    assert f"  input {LOCK_INPUT};" in text
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
    for periods in (
        clock_periods_ps([96_000_000, 48_000_000]),
        clock_periods_ps([125_000_000, 50_000_000]),
    ):
        assert all(period % 2 == 0 for period in periods)
    assert Fraction(*clock_periods_ps([125_000_000, 50_000_000])) == Fraction(2, 5)


def test_ecp5_models_are_one_file_with_each_include_once_and_no_dp16kd_black_box():
    text = without_modules(expand_includes(cell_models("ecp5")), ["DP16KD"])
    assert "`include" not in text
    for module in ("TRELLIS_FF", "TRELLIS_IO", "LUT4", "CCU2C", "OB", "IB"):
        assert len(re.findall(rf"module {module}\s*\(", text)) == 1, module
    assert "module DP16KD" not in text
    with pytest.raises(ValueError, match="no module NOPE"):
        without_modules(text, ["NOPE"])


#: The gearbox models alone: the edge clock through ECLKSYNCB, CLKDIVF's half of it, and an
#: IDDRX2F on a pin the testbench changes between the edges; Q0..Q3 printed at every SCLK
#: rising edge.
GEARBOX_BENCH = """`timescale 1ps/1ps
module tb;
  reg eclk_in = 1'b0, d = 1'b0;
  wire eclk, sclk, q0, q1, q2, q3;
  ECLKSYNCB sync (.ECLKI(eclk_in), .STOP(1'b0), .ECLKO(eclk));
  CLKDIVF div (.CLKI(eclk), .RST(1'b0), .ALIGNWD(1'b0), .CDIVX(sclk));
  IDDRX2F gearbox (.D(d), .SCLK(sclk), .ECLK(eclk), .RST(1'b0), .ALIGNWD(1'b0),
                   .Q0(q0), .Q1(q1), .Q2(q2), .Q3(q3));
  initial begin #2000; forever begin eclk_in = ~eclk_in; #2000; end end
  integer file, count;
  reg [63:0] at;
  initial begin
    file = $fopen("changes.txt", "r");
    while (!$feof(file)) begin
      count = $fscanf(file, "%d\\n", at);
      if (count == 1) begin #(at - $time); d = ~d; end
    end
  end
  always @(posedge sclk) #1 $display("%0t %b%b%b%b", $time, q3, q2, q1, q0);
  initial #400000 $finish;
endmodule
"""


def test_gearbox_models_hand_on_a_cycles_four_samples_earliest_first(tmp_path):
    """The IDDRX2F, ECLKSYNCB and CLKDIVF models under Icarus: SCLK rises with every other
    edge clock rising edge, and during each SCLK cycle Q0..Q3 are the pin at the four edge
    clock edges of the cycle before (rising, falling, rising, falling), computed here from
    the pin's change times alone."""
    if shutil.which("iverilog") is None:
        pytest.skip("iverilog not installed")
    rng = random.Random(5)
    # Changes 500..3500 ps after a sampling edge (edges every 2000 ps from 2000 ps on).
    changes = sorted(
        {2000 * rng.randrange(1, 190) + rng.choice([500, 1000, 1500]) for _ in range(80)}
    )
    (tmp_path / "changes.txt").write_text("".join(f"{at}\n" for at in changes))
    (tmp_path / "tb.v").write_text(GEARBOX_BENCH)
    subprocess.run(
        [
            "iverilog",
            "-g2012",
            "-o",
            "tb.vvp",
            "-s",
            "tb",
            "tb.v",
            str(MODELS_DIR / "ecp5_blocks.v"),
        ],
        cwd=tmp_path,
        check=True,
    )
    out = subprocess.run(
        ["vvp", "-n", "tb.vvp"], cwd=tmp_path, check=True, capture_output=True, text=True
    ).stdout

    def pin_at(time):
        return sum(1 for at in changes if at < time) % 2

    rows = [line.split() for line in out.splitlines() if re.fullmatch(r"\d+ [01]{4}", line)]
    assert len(rows) > 40
    for time, word in rows:
        rise = int(time) - 1  # this SCLK rising edge
        assert (rise - 2000) % 8000 == 0, rise  # every other edge clock rising edge
        samples = [pin_at(rise - 8000 + 2000 * k) for k in range(4)]
        assert word == "".join(str(bit) for bit in reversed(samples)), time
