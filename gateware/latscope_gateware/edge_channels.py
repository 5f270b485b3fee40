"""Edge channels: every edge of a few asynchronous pins is an event."""

from amaranth.hdl import *
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from .ddr_edges import stamp_shift_of
from .synchronizer import PinChangeDetector, check_phases, check_sync_stages, stamp_latency

__all__ = ["EdgeChannels"]


class EdgeChannels(wiring.Component):
    """Independent edge detectors, one event stream per pin.

    Parameters
    ----------
    count : int
        Number of channels.
    sync_stages : int, >= 2
        Flip-flops of each pin's synchronizer (with ``phases`` > 1, the input register is
        the first of them).
    phases : 1, 2 or 4
        Samples of each pin per cycle (2: DDR, 4: IDDRX2F gearbox); with more than one,
        each event says in which of them the edge first showed (see :mod:`.ddr_edges`).

    Ports
    -----
    pins : In(phases * count)
        Asynchronous inputs: their samples of a cycle, ``Cat(s_0, ..., s_{phases-1})``, each
        ``count`` bits, earliest first.
    events : Out(stream.Signature(1, always_ready=True)).array(count)
        ``events[n].valid`` is high for one cycle per edge (rising or falling) of pin *n*,
        with ``payload`` = the pin's new level.
    phase : Out(data.ArrayLayout(log2(phases), count))
        ``phase[n]``, valid with ``events[n].valid``: the first sample in which the edge
        showed (always 0 for single-rate inputs).

    Timing
    ------
    :attr:`latency` = ``sync_stages`` (2 by default): a level first present on ``pins[n]``
    during cycle *k* gives ``events[n].valid`` during cycle *k* + ``latency``. Channels are
    independent: simultaneous edges give simultaneous events, and a pulse one cycle wide gives
    two events in consecutive cycles (1, then 0). A pulse shorter than a cycle may be missed;
    that is the resolution of the capture clock. :attr:`stamp_latency` is the pin-to-stamp
    latency in stamp units (1/``phases`` cycle).

    A reset of ``sync`` never makes up an edge (see :class:`.synchronizer.PinChangeDetector`,
    also for the one spurious edge of a pin that is high at configuration).
    """

    def __init__(self, count=4, *, sync_stages=2, phases=1):
        if not isinstance(count, int) or count < 1:
            raise ValueError(f"count must be a positive int, not {count!r}")
        self._count = count
        self._sync_stages = check_sync_stages(sync_stages)
        self._phases = check_phases(phases)
        super().__init__(
            {
                "pins": In(phases * count),
                "events": Out(stream.Signature(1, always_ready=True)).array(count),
                "phase": Out(data.ArrayLayout(stamp_shift_of(phases), count)),
            }
        )

    @property
    def count(self):
        return self._count

    @property
    def latency(self):
        return self._sync_stages

    @property
    def stamp_latency(self):
        return stamp_latency(self.latency, self._phases)

    def elaborate(self, platform):
        m = Module()
        m.submodules.detector = detector = PinChangeDetector(
            self._count, stages=self._sync_stages, phases=self._phases
        )
        m.d.comb += [detector.pins.eq(self.pins), self.phase.eq(detector.phase)]
        for n, events in enumerate(self.events):
            m.d.comb += [
                events.valid.eq(detector.changed[n]),
                events.payload.eq(detector.level[n]),
            ]
        return m
