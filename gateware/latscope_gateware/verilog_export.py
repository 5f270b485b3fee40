"""Exports the appliance as a SystemVerilog module with flat, documented port names.

The Verilator full-system simulation (``sim/``) instantiates this module next to the RISC-V
SoC; it is the same gateware a board runs. Ports: ``clk, rst, marker_data, marker_strobe,
bus_cyc, bus_stb, bus_we, bus_ack, bus_adr, bus_dat_w, bus_sel, edges, irq, capturing,
uart_tx, uart_rx``.

SystemVerilog, not Amaranth's Verilog-2001 (``amaranth.back.verilog.convert``): Yosys's
``write_verilog`` writes a constant driving part of a signal whose other bits a process drives
as ``always @* x[7:5] = 3'h6;``. That block reads no variable, so by the standard (IEEE 1800
9.4.2.2) nothing ever wakes it and ``x[7:5]`` keeps its initial value: Icarus and Verilator
from 5.040 on (warning ALWNEVER) simulate it so, Verilator 5.006 ran it once like a
combinational block. The short form's lead bytes (``short_form.py``) are such signals; with
their kind bits stuck at 0, Verilator 5.048's appliance sent records the host could not parse.
``write_verilog -sv`` writes these blocks as ``always_comb``, which runs at time zero (IEEE
1800 9.2.2.2.2), and the processes as ``always_comb``/``always_ff``; nothing else changes
(sim/README.md, "Verilator versions").

Run ``python -m latscope_gateware.verilog_export --help``.
"""

import argparse

from amaranth.back import rtlil, verilog
from amaranth.hdl import Elaboratable, Module, Signal

from .appliance import Appliance, ApplianceConfig

__all__ = ["FlatAppliance", "to_systemverilog", "main"]


class FlatAppliance(Elaboratable):
    """The appliance with one plain signal per pin, for instantiation from Verilog."""

    def __init__(self, config):
        self.appliance = Appliance(config)
        width = config.marker_width
        self.marker_data = Signal(width)
        self.marker_strobe = Signal()
        self.edges = Signal(config.edge_count)
        self.irq = Signal()
        self.capturing = Signal()
        self.uart_tx = Signal(init=1)
        self.uart_rx = Signal(init=1)
        self.bus = {}
        if config.bus_window is not None:
            for name, member in self.appliance.bus.signature.members.items():
                self.bus[name] = Signal(member.shape, name=f"bus_{name}")

    def ports(self):
        return [
            self.marker_data,
            self.marker_strobe,
            *self.bus.values(),
            self.edges,
            self.irq,
            self.capturing,
            self.uart_tx,
            self.uart_rx,
        ]

    def elaborate(self, platform):
        m = Module()
        m.submodules.appliance = appliance = self.appliance
        m.d.comb += [
            appliance.marker_data.eq(self.marker_data),
            appliance.marker_strobe.eq(self.marker_strobe),
            appliance.edges.eq(self.edges),
            appliance.uart_rx.eq(self.uart_rx),
            self.irq.eq(appliance.irq),
            self.capturing.eq(appliance.capturing),
            self.uart_tx.eq(appliance.uart_tx),
        ]
        for name, signal in self.bus.items():
            m.d.comb += getattr(appliance.bus, name).eq(signal)
        return m


def to_systemverilog(top, name):
    """``top`` (a :class:`FlatAppliance`) as the SystemVerilog module ``name``: Amaranth's own
    conversion (its RTLIL, then its Yosys script) with ``write_verilog -sv`` (the module's
    docstring says why). Amaranth 0.5's ``verilog.convert`` takes no ``write_verilog`` option;
    ``_convert_rtlil_text`` is the function it calls with the RTLIL (Amaranth is pinned,
    pyproject.toml)."""
    rtlil_text = rtlil.convert(top, name=name, ports=top.ports())
    return verilog._convert_rtlil_text(rtlil_text, write_verilog_opts=("-sv",))


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m latscope_gateware.verilog_export", description=__doc__.splitlines()[0]
    )
    parser.add_argument("-o", "--output", required=True, help="SystemVerilog file to write")
    parser.add_argument("--name", default="latscope_appliance")
    parser.add_argument("--clock-hz", type=int, default=100_000_000)
    parser.add_argument("--uart-divisor", type=int, default=4)
    parser.add_argument("--fifo-depth", type=int, default=512)
    parser.add_argument("--board", default="verilator-soc")
    parser.add_argument(
        "--sump-depth",
        type=int,
        default=4096,
        help="samples of the SUMP device mode's memory (a power of two)",
    )
    parser.add_argument(
        "--word-xor",
        action="store_true",
        help="the XOR networks (LFSR leap, CRC) as word operations rather "
        "than the boards' bit-level XORs (the same logic; ApplianceConfig "
        "word_xor)",
    )
    # The snooped window is the SoC's TRACE window (sim/soc_map.toml, via sim/Makefile).
    parser.add_argument(
        "--bus-base",
        type=lambda text: int(text, 0),
        required=True,
        help="byte address of the snooped trace window",
    )
    parser.add_argument("--bus-bytes", type=lambda text: int(text, 0), required=True)
    args = parser.parse_args(argv)
    config = ApplianceConfig(
        clock_hz=args.clock_hz,
        uart_divisor=args.uart_divisor,
        fifo_depth=args.fifo_depth,
        board=args.board,
        sump_depth=args.sump_depth,
        bus_window=(args.bus_base >> 2, args.bus_bytes >> 2),
        word_xor=args.word_xor,
    )
    top = FlatAppliance(config)
    with open(args.output, "w") as file:
        file.write(to_systemverilog(top, args.name))


if __name__ == "__main__":
    main()
