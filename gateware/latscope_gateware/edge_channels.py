"""Edge channels: every edge of a few asynchronous pins is an event."""

from amaranth.hdl import *
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .synchronizer import PinChangeDetector, check_sync_stages, sample_rate, stamp_latency

__all__ = ["EdgeChannels"]


class EdgeChannels(wiring.Component):
    """Independent edge detectors, one event stream per pin.

    Parameters
    ----------
    count : int
        Number of channels.
    sync_stages : int, >= 2
        Flip-flops of each pin's synchronizer (with ``ddr``, the DDR input register is the
        first of them).
    ddr : bool
        The pins come as DDR sample pairs and each event says in which half of its cycle the
        edge showed (see :mod:`.ddr_edges`).

    Ports
    -----
    pins : In(count), or In(2 * count) with ``ddr``
        Asynchronous inputs; with ``ddr`` their samples ``Cat(early, late)``.
    events : Out(stream.Signature(1, always_ready=True)).array(count)
        ``events[n].valid`` is high for one cycle per edge (rising or falling) of pin *n*,
        with ``payload`` = the pin's new level.
    half : Out(count)
        ``half[n]``, valid with ``events[n].valid``: the edge showed only in the late sample
        (always 0 without ``ddr``).

    Timing
    ------
    :attr:`latency` = ``sync_stages`` (2 by default): a level first present on ``pins[n]``
    during cycle *k* gives ``events[n].valid`` during cycle *k* + ``latency``. Channels are
    independent: simultaneous edges give simultaneous events, and a pulse one cycle wide gives
    two events in consecutive cycles (1, then 0). A pulse shorter than a cycle may be missed;
    that is the resolution of the capture clock. :attr:`stamp_latency` is the pin-to-stamp
    latency in stamp units (half cycles with ``ddr``).

    A reset of ``sync`` never makes up an edge (see :class:`.synchronizer.PinChangeDetector`,
    also for the one spurious edge of a pin that is high at configuration).
    """

    def __init__(self, count=4, *, sync_stages=2, ddr=False):
        if not isinstance(count, int) or count < 1:
            raise ValueError(f"count must be a positive int, not {count!r}")
        self._count = count
        self._sync_stages = check_sync_stages(sync_stages)
        self._ddr = ddr
        super().__init__({
            "pins": In(sample_rate(ddr) * count),
            "events": Out(stream.Signature(1, always_ready=True)).array(count),
            "half": Out(count),
        })

    @property
    def count(self):
        return self._count

    @property
    def latency(self):
        return self._sync_stages

    @property
    def stamp_latency(self):
        return stamp_latency(self.latency, self._ddr)

    def elaborate(self, platform):
        m = Module()
        m.submodules.detector = detector = PinChangeDetector(
            self._count, stages=self._sync_stages, ddr=self._ddr)
        m.d.comb += [detector.pins.eq(self.pins), self.half.eq(detector.half)]
        for n, events in enumerate(self.events):
            m.d.comb += [
                events.valid.eq(detector.changed[n]),
                events.payload.eq(detector.level[n]),
            ]
        return m
