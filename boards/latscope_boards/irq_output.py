"""The IRQ output's pad, driven from the output register of its own I/O cell.

The appliance stamps an IRQ edge in the capture cycle whose clock edge loads the pin's
flip-flop (:func:`latscope_gateware.irq_pin.show_irq`). With that flip-flop in the fabric,
the pad changes a flip-flop-to-pad route later, which nextpnr places differently for every
seed and does not time (issue 28: 0.54 + 3.70 ns on the HX8K, 1.39 + 7.21 ns on the
iCEBreaker). Here the I/O cell's own output register takes the flip-flop's input
(``irq_next``) at the same capture clock edge, so the pad changes at the stamp plus the I/O
cell's clock-to-pad delay: a figure of the device's data sheet, the same for every build
(:data:`.board.Board.pad_delays`, docs/boards.md "Pad delays").

The output enable stays a fabric signal (the pin is undriven until the first IRQ_CONFIG):
a registered enable would come up *driving* on the ECP5 (its tristate register resets to
0, "enabled") between configuration and the first capture clock edge.
"""

from amaranth.hdl import *
from amaranth.lib import io

__all__ = ["registered_irq_output", "SB_IO_OUTPUT_REGISTERED"]

#: SB_IO PIN_TYPE: PIN_OUTPUT_REGISTERED_ENABLE (D_OUT_0 registered at OUTPUT_CLK's rising
#: edge, OUTPUT_ENABLE not registered) with PIN_INPUT (the input unused, not registered, so
#: it needs no clock: Lattice's iCE40 technology library, SB_IO "PIN_TYPE").
SB_IO_OUTPUT_REGISTERED = 0b1001_01


def registered_irq_output(m, port, *, family, domain, o, oe):
    """The pad ``port`` (one pin) driven by its I/O cell's output register, loaded from
    ``o`` at each rising edge of ``domain``, while ``oe``. iCE40: the SB_IO's output
    register; ECP5: an OFS1P3DX, which Yosys marks for the I/O logic (``syn_useioff``) and
    nextpnr packs into the pin's IOLOGIC, ahead of the pad's tristate buffer."""
    if len(port) != 1 or any(port.invert):
        raise ValueError("the IRQ output is one pin, not inverted")
    if family == "ice40":
        m.submodules.irq_buffer = Instance(
            "SB_IO",
            ("p", "PIN_TYPE", Const(SB_IO_OUTPUT_REGISTERED, 6)),
            *(
                ("p", key, value)
                for key, value in port.io.metadata[0].attrs.items()
                if key != "GLOBAL"
            ),
            io_PACKAGE_PIN=port.io[0],
            i_OUTPUT_CLK=ClockSignal(domain),
            i_D_OUT_0=o,
            i_OUTPUT_ENABLE=oe,
        )
        return
    registered = Signal(name="irq_registered")
    m.submodules.irq_register = Instance(
        "OFS1P3DX",
        i_SCLK=ClockSignal(domain),
        i_SP=Const(1),
        i_CD=Const(0),
        i_D=o,
        o_Q=registered,
    )
    m.submodules.irq_buffer = pad = io.Buffer("o", port)
    m.d.comb += [pad.o.eq(registered), pad.oe.eq(oe)]
