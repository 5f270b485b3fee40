"""Bringing asynchronous pins into the ``sync`` domain and noticing when they change.

Pins come sampled once per cycle or, from multi-phase input registers, ``phases`` times (2:
DDR, 4: the ECP5's IDDRX2F gearbox), as the samples of a cycle side by side (see
:mod:`.ddr_edges` for the convention and the sub-cycle stamps it gives).
"""

from amaranth.hdl import *
from amaranth.lib import data, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

from .ddr_edges import sampled_stamp_latency, stamp_shift_of

__all__ = ["check_sync_stages", "check_phases", "stamp_latency", "PinChangeDetector"]


def check_sync_stages(stages):
    """Raise unless ``stages`` is a safe synchronizer length (an int >= 2)."""
    if not isinstance(stages, int) or isinstance(stages, bool) or stages < 2:
        raise ValueError(f"sync_stages must be an int >= 2, not {stages!r}")
    return stages


def check_phases(phases):
    """Raise unless ``phases`` is a number of samples per cycle the front ends take (1, 2, 4)."""
    stamp_shift_of(phases)
    return phases


def stamp_latency(cycles, phases):
    """Pin-to-stamp latency in stamp units of a front end whose events come ``cycles`` cycles
    after its pins are sampled: cycles, or with ``phases`` > 1 that many units a cycle
    (:func:`.ddr_edges.sampled_stamp_latency`)."""
    return sampled_stamp_latency(cycles, phases)


class PinChangeDetector(wiring.Component):
    """Synchronizes ``width`` asynchronous pins and flags every change of each one.

    Parameters
    ----------
    width : int
        Number of pins.
    stages : int, >= 2
        Flip-flops of the synchronizer (:class:`amaranth.lib.cdc.FFSynchronizer`); with
        ``phases`` > 1 the input register in front is the first of them.
    phases : 1, 2 or 4
        Samples per pin and cycle: ``pins`` is ``Cat(s_0, ..., s_{phases-1})``, each
        ``width`` bits, the earliest sample first.

    Ports
    -----
    pins : In(phases * width)
        Asynchronous inputs (their samples).
    level : Out(width)
        The synchronized pins (the last samples: the level at the end of a cycle), straight
        from the last synchronizer flip-flop.
    changed : Out(width)
        Bit *n* is high for exactly one cycle per change of pin *n*, in the cycle in which
        ``level`` first shows the new value; it is the XOR of two flip-flops (no path from
        ``pins``).
    phase : Out(data.ArrayLayout(log2(phases), width))
        With ``changed[n]``: the first sample of the cycle that shows the new level, i.e.
        that differs from the previous cycle's level: the earliest evidence of the change (0
        without sub-cycle samples). A single edge in the cycle is in the slot just before
        that sample.
    toggles : Out(data.ArrayLayout(range(phases + 1), width))
        The changes of level in the cycle, sample to sample from the previous cycle's last
        (0 or 1 with one sample a cycle): more than one means several edges in one cycle,
        which ``changed`` shows as one or none.

    Timing
    ------
    :attr:`latency` = ``stages``: a level first present on ``pins`` during cycle *k* is on
    ``level``, with ``changed`` high, during cycle *k* + ``stages``. Pins are independent, so
    simultaneous changes are flagged in the same cycle, and a pin that changes in two
    consecutive cycles is flagged in two consecutive cycles. Levels are compared cycle to
    cycle (last sample to last sample), so changes alternate in level: a pulse that starts
    and ends between two last samples gives no change, and a pin that changes several times
    in one cycle gives one change, at the first sample that differs.

    Every flip-flop here is reset-less (as ``FFSynchronizer``'s are by default) so that a
    reset of ``sync`` cannot fabricate a change: the detector keeps tracking the pins. After
    configuration all flip-flops hold 0, so a pin that is already high is reported as one
    change in cycle ``stages``, long before any capture can have been enabled.
    """

    def __init__(self, width, *, stages=2, phases=1):
        self._width = width
        self._stages = check_sync_stages(stages)
        self._phases = check_phases(phases)
        super().__init__(
            {
                "pins": In(phases * width),
                "level": Out(width),
                "changed": Out(width),
                "phase": Out(data.ArrayLayout(stamp_shift_of(phases), width)),
                "toggles": Out(data.ArrayLayout(range(phases + 1), width)),
            }
        )

    @property
    def latency(self):
        return self._stages

    def elaborate(self, platform):
        m = Module()
        width = self._width
        synced = Signal(self._phases * width)
        m.submodules.synchronizer = FFSynchronizer(self.pins, synced, stages=self._stages)
        samples = [synced[k * width : (k + 1) * width] for k in range(self._phases)]
        late = samples[-1]
        previous = Signal(width, reset_less=True)
        m.d.sync += previous.eq(late)
        m.d.comb += [
            self.level.eq(late),
            self.changed.eq(late ^ previous),
        ]
        # The first sample that shows the new level, i.e. (with a change) the first that
        # differs from the previous level: a priority encoder of the samples against the
        # last one, one LUT per phase bit (with 2 phases `early ^ late`, as ever).
        for n in range(width):
            phase = Const(self._phases - 1, self.phase.shape().elem_shape)
            for k in reversed(range(self._phases - 1)):
                phase = Mux(samples[k][n] == late[n], k, phase)
            m.d.comb += self.phase[n].eq(phase)
        # The changes between neighbouring samples, the previous cycle's last sample first.
        chain = [previous, *samples]
        for n in range(width):
            m.d.comb += self.toggles[n].eq(
                sum(chain[k][n] ^ chain[k + 1][n] for k in range(self._phases))
            )
        return m
