"""The IRQ output's pad delay: an IRQ edge's stamp is the capture clock edge that loads the
pin's I/O cell output register; the pad changes the cell's clock-to-pad delay later, a
figure of the FPGA's timing data that each board definition holds
(``latscope_boards.pad_delays``, docs/boards.md "Pad delays"). The host adds it to the
stamps of IRQ edges, in whole stamp units (the nearest), as it subtracts the pin latencies
from the stamps of the inputs, so that an IRQ-to-marker latency starts where the DUT's pin
sees the edge. A device whose board has no definition (a simulation: no pads) keeps its
stamps. The identity records what was added (``irq_pad_delay``, ``irq_pad_delay_ns``), so a
capture file says what was done to its stamps.
"""

import dataclasses

from .identity import Identity
from .presets import board_presets

__all__ = ["irq_pad_delay_ns", "stamp_units", "with_irq_pad_delay"]


def stamp_units(delay_ns: float, stamp_hz: int) -> int:
    """``delay_ns`` in whole stamp units of a device stamping ``stamp_hz`` times a second:
    the nearest (0 for a delay under half a unit)."""
    return round(delay_ns * stamp_hz / 1e9)


def irq_pad_delay_ns(board: str) -> float:
    """The IRQ output's clock-to-pad delay (ns) of the board whose IDENTIFY reply names
    ``board``; 0.0 for a name of no board (a simulation)."""
    for preset in board_presets().values():
        if board in preset.identities:
            return preset.irq_output_ns
    return 0.0


def with_irq_pad_delay(identity: Identity) -> Identity:
    """``identity`` with its board's IRQ pad delay: the figure (ns) and the stamp units the
    host adds to IRQ stamps (the figure rounded to the nearest unit, which may be 0)."""
    delay_ns = irq_pad_delay_ns(identity.board)
    return dataclasses.replace(
        identity,
        irq_pad_delay=stamp_units(delay_ns, identity.stamp_hz),
        irq_pad_delay_ns=delay_ns,
    )
