"""Bringing asynchronous pins into the ``sync`` domain and noticing when they change.

Pins come sampled once per cycle or, with ``ddr``, twice: as sample pairs from DDR input
registers (see :mod:`.ddr_edges` for the convention and the half-cycle stamps it gives).
"""

from amaranth.hdl import *
from amaranth.lib import wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

from .ddr_edges import ddr_stamp_latency

__all__ = ["check_sync_stages", "sample_rate", "stamp_latency", "PinChangeDetector"]


def check_sync_stages(stages):
    """Raise unless ``stages`` is a safe synchronizer length (an int >= 2)."""
    if not isinstance(stages, int) or isinstance(stages, bool) or stages < 2:
        raise ValueError(f"sync_stages must be an int >= 2, not {stages!r}")
    return stages


def sample_rate(ddr):
    """Samples per cycle of each pin: 2 from DDR input registers, else 1."""
    if not isinstance(ddr, bool):
        raise ValueError(f"ddr must be a bool, not {ddr!r}")
    return 2 if ddr else 1


def stamp_latency(cycles, ddr):
    """Pin-to-stamp latency in stamp units of a front end whose events come ``cycles`` cycles
    after its pins are sampled: cycles, or with ``ddr`` half cycles (stamp_shift 1)."""
    return ddr_stamp_latency(cycles) if ddr else cycles


class PinChangeDetector(wiring.Component):
    """Synchronizes ``width`` asynchronous pins and flags every change of each one.

    Parameters
    ----------
    width : int
        Number of pins.
    stages : int, >= 2
        Flip-flops of the synchronizer (:class:`amaranth.lib.cdc.FFSynchronizer`); with
        ``ddr`` the DDR input register in front is the first of them.
    ddr : bool
        ``pins`` are DDR sample pairs, ``Cat(early, late)``, two bits per pin.

    Ports
    -----
    pins : In(width), or In(2 * width) with ``ddr``
        Asynchronous inputs (their DDR samples).
    level : Out(width)
        The synchronized pins (with ``ddr`` the late samples: the level at the end of a
        cycle), straight from the last synchronizer flip-flop.
    changed : Out(width)
        Bit *n* is high for exactly one cycle per change of pin *n*, in the cycle in which
        ``level`` first shows the new value; it is the XOR of two flip-flops (no path from
        ``pins``).
    half : Out(width)
        With ``changed[n]``: 1 if the new level showed only in the late sample, 0 if already
        in the early one. Always 0 without ``ddr``.

    Timing
    ------
    :attr:`latency` = ``stages``: a level first present on ``pins`` during cycle *k* is on
    ``level``, with ``changed`` high, during cycle *k* + ``stages``. Pins are independent, so
    simultaneous changes are flagged in the same cycle, and a pin that changes in two
    consecutive cycles is flagged in two consecutive cycles. With ``ddr``, a pin that changes
    and changes back within one cycle (a pulse between two late samples) gives no change:
    ``level`` is compared cycle to cycle, so changes still alternate in level.

    Every flip-flop here is reset-less (as ``FFSynchronizer``'s are by default) so that a
    reset of ``sync`` cannot fabricate a change: the detector keeps tracking the pins. After
    configuration all flip-flops hold 0, so a pin that is already high is reported as one
    change in cycle ``stages``, long before any capture can have been enabled.
    """

    def __init__(self, width, *, stages=2, ddr=False):
        self._width = width
        self._stages = check_sync_stages(stages)
        self._rate = sample_rate(ddr)
        super().__init__({
            "pins": In(self._rate * width),
            "level": Out(width),
            "changed": Out(width),
            "half": Out(width),
        })

    @property
    def latency(self):
        return self._stages

    def elaborate(self, platform):
        m = Module()
        width = self._width
        synced = Signal(self._rate * width)
        m.submodules.synchronizer = FFSynchronizer(self.pins, synced, stages=self._stages)
        # Single rate: one sample, both "early" and "late", so `half` is 0.
        early, late = synced[:width], synced[-width:]
        previous = Signal(width, reset_less=True)
        m.d.sync += previous.eq(late)
        m.d.comb += [
            self.level.eq(late),
            self.changed.eq(late ^ previous),
            self.half.eq(late ^ early),      # with a change: early still showed the old level
        ]
        return m
