"""Bringing asynchronous pins into the ``sync`` domain and noticing when they change."""

from amaranth.hdl import *
from amaranth.lib import wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

__all__ = ["check_sync_stages", "PinChangeDetector"]


def check_sync_stages(stages):
    """Raise unless ``stages`` is a safe synchronizer length (an int >= 2)."""
    if not isinstance(stages, int) or isinstance(stages, bool) or stages < 2:
        raise ValueError(f"sync_stages must be an int >= 2, not {stages!r}")
    return stages


class PinChangeDetector(wiring.Component):
    """Synchronizes ``width`` asynchronous pins and flags every change of each one.

    Parameters
    ----------
    width : int
        Number of pins.
    stages : int, >= 2
        Flip-flops of the synchronizer (:class:`amaranth.lib.cdc.FFSynchronizer`).

    Ports
    -----
    pins : In(width)
        Asynchronous inputs.
    level : Out(width)
        The synchronized pins, straight from the last synchronizer flip-flop.
    changed : Out(width)
        Bit *n* is high for exactly one cycle per change of pin *n*, in the cycle in which
        ``level`` first shows the new value; it is the XOR of two flip-flops (no path from
        ``pins``).

    Timing
    ------
    :attr:`latency` = ``stages``: a level first present on ``pins`` during cycle *k* is on
    ``level``, with ``changed`` high, during cycle *k* + ``stages``. Pins are independent, so
    simultaneous changes are flagged in the same cycle, and a pin that changes in two
    consecutive cycles is flagged in two consecutive cycles.

    Every flip-flop here is reset-less (as ``FFSynchronizer``'s are by default) so that a
    reset of ``sync`` cannot fabricate a change: the detector keeps tracking the pins. After
    configuration all flip-flops hold 0, so a pin that is already high is reported as one
    change in cycle ``stages``, long before any capture can have been enabled.
    """

    def __init__(self, width, *, stages=2):
        self._stages = check_sync_stages(stages)
        super().__init__({
            "pins": In(width),
            "level": Out(width),
            "changed": Out(width),
        })

    @property
    def latency(self):
        return self._stages

    def elaborate(self, platform):
        m = Module()
        m.submodules.synchronizer = FFSynchronizer(self.pins, self.level, stages=self._stages)
        previous = Signal(self.level.shape(), reset_less=True)
        m.d.sync += previous.eq(self.level)
        m.d.comb += self.changed.eq(self.level ^ previous)
        return m
