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
import functools
import importlib
from typing import Any

from .identity import Identity

__all__ = ["with_irq_pad_delay"]


@functools.cache
def _pad_delays() -> dict[str, Any]:
    """The ``PadDelays`` of every board, by each name its IDENTIFY reply may give."""
    # Imported by name: a plain import makes mypy follow into the boards' Amaranth code.
    boards = importlib.import_module("latscope_boards")
    return {
        identity: boards.get_board(name).pad_delays
        for name in boards.BOARDS
        for identity in boards.identify_names(name)
    }


def with_irq_pad_delay(identity: Identity) -> Identity:
    """``identity`` with its board's IRQ pad delay: the figure (ns) and the stamp units the
    host adds to IRQ stamps (the figure rounded to the nearest unit, which may be 0); none
    for a name of no board (a simulation)."""
    delays = _pad_delays().get(identity.board)
    if delays is None:
        return dataclasses.replace(identity, irq_pad_delay=0, irq_pad_delay_ns=0.0)
    return dataclasses.replace(
        identity,
        irq_pad_delay=delays.irq_stamp_units(identity.stamp_hz),
        irq_pad_delay_ns=delays.irq_output_ns,
    )
