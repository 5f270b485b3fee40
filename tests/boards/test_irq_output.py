"""The IRQ output's pad is driven by its I/O cell's own output register, loaded from what the
appliance's pin flip-flop takes (``irq_next``) at the same capture clock edge: the pad then
changes at the IRQ edge's stamp plus the I/O cell's clock-to-pad delay, the same for every
placement (docs/boards.md, "Pad delays").

iCE40: the SB_IO is the I/O cell and its output register a PIN_TYPE setting, so the
synthesized netlist says it all. ECP5: Yosys leaves an OFS1P3DX flip-flop marked for the I/O
logic; nextpnr's packer (``--pack-only``, seconds) decides whether it goes into the pin's
IOLOGIC, so the packed netlist is checked. Each board's test takes the board's synthesis of
this run (the ``synthesized`` fixture: the bitstream and netlist tests' too).
"""

import json
import subprocess

import pytest

from latscope_boards import BOARDS, get_board
from latscope_boards.board import IRQ_RESOURCE
from latscope_boards.toolchain import DESIGN_NAME, yowasp_environment

pytestmark = pytest.mark.boards

#: The netlist name of the IRQ pad (the platform's port of the IRQ resource).
PAD = f"{IRQ_RESOURCE}_0__io"

#: SB_IO PIN_TYPE[5:2] values with a registered output (Lattice's iCE40 technology library:
#: PIN_OUTPUT_REGISTERED, _REGISTERED_ENABLE, _REGISTERED_ENABLE_REGISTERED).
SB_IO_REGISTERED_OUTPUTS = {0b0101, 0b1001, 0b1101}


def _packed(board, directory):
    """nextpnr-ecp5's packed netlist of the design in ``directory`` (its pin constraints)."""
    platform = board.platform()
    subprocess.run(
        [
            yowasp_environment("ecp5")["NEXTPNR_ECP5"],
            "--quiet",
            # The options Amaranth's build script gives nextpnr for the device.
            platform._nextpnr_device_options[platform.device],
            "--package",
            platform._nextpnr_package_options[platform.package].upper(),
            "--json",
            f"{DESIGN_NAME}.json",
            "--lpf",
            f"{DESIGN_NAME}.lpf",
            "--pack-only",
            "--write",
            "irq_packed.json",
        ],
        cwd=directory,
        check=True,
        capture_output=True,
    )
    return json.loads((directory / "irq_packed.json").read_text())["modules"]["top"]


class Netlist:
    """A Yosys/nextpnr JSON module: its cells and the names of each net (nextpnr's
    ``$glbnet$`` prefix of a net on a global buffer left off)."""

    def __init__(self, module):
        self.cells = module["cells"]
        self.names = {}
        for name, net in module["netnames"].items():
            for bit in net["bits"]:
                self.names.setdefault(bit, set()).add(name.removeprefix("$glbnet$"))

    def connection(self, name):
        """The connection (a one-bit list) of the net called ``name``."""
        (bit,) = {bit for bit, names in self.names.items() if name in names}
        return [bit]

    def cell_on(self, connection, port, kind):
        """The one cell of type ``kind`` whose ``port`` is ``connection``."""
        cells = [
            cell
            for cell in self.cells.values()
            if cell["type"] == kind and cell["connections"].get(port) == connection
        ]
        assert len(cells) == 1, f"{len(cells)} {kind} cells with {port} on net {connection}"
        return cells[0]


@pytest.mark.parametrize("name", list(BOARDS))
def test_irq_pad_is_driven_by_its_io_cells_register(name, synthesized):
    """The pad's driver is the I/O cell's output register, clocked by the capture clock (the
    appliance's ``capture_clk``, or its one clock ``clk``). That the register shows an edge
    in the cycle of its stamp, the netlist simulation checks to the stamp unit
    (test_netlist.py: the loopback and the trigger's delays)."""
    board = get_board(name)
    directory = synthesized(name).build_dir
    capture_clock = "appliance.capture_clk" if board.link_hz else "appliance.clk"
    if board.family == "ice40":
        modules = json.loads((directory / f"{DESIGN_NAME}.json").read_text())["modules"]
        netlist = Netlist(modules[DESIGN_NAME])
        io_cell = netlist.cell_on(netlist.connection(PAD), "PACKAGE_PIN", "SB_IO")
        assert int(io_cell["parameters"]["PIN_TYPE"], 2) >> 2 in SB_IO_REGISTERED_OUTPUTS
        clock = io_cell["connections"]["OUTPUT_CLK"]
    else:
        netlist = Netlist(_packed(board, directory))
        pad = netlist.cell_on(netlist.connection(PAD), "B", "TRELLIS_IO")
        # The pad's output comes from the I/O logic (IOLDO), whose output register is on.
        io_logic = netlist.cell_on(pad["connections"].get("IOLDO"), "IOLDO", "IOLOGIC")
        assert io_logic["parameters"]["OUTREG.OUTREGMODE"] == "FF"
        clock = io_logic["connections"]["CLK"]
    assert capture_clock in netlist.names[clock[0]]
