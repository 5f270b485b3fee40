"""Sub-cycle front ends: pins sampled on both clock edges, events with a half-cycle bit.

On an ECP5 the marker strobe and the edge channels can go through DDR input registers
(``IDDRX1F``, what Amaranth's ``io.DDRBuffer`` becomes there). Each cycle they deliver two
samples of a pin, half a cycle apart; the front ends here tell in which of the two a new level
first showed, and the time-stamper puts that half-cycle bit below the cycle count
(``stamp_shift`` 1: one stamp unit is half a cycle, 2.5 ns at 200 MHz).

Sample convention (the IDDRX1F's, modelled by :class:`IddrModel`): during cycle *c* the DDR
register presents ``(early, late) = (pin at rising edge c-1, pin at falling edge c-1/2)``,
packed as ``pins_ddr = Cat(early, late)``. Numbering half cycles from 0 at the first rising
edge, a pin that changes in half cycle *j* (the open-closed interval ``(j/2, (j+1)/2]`` in
cycles) is first seen in cycle ``c = (j + 3) // 2``, in the late sample if *j* is even and in
the early one if *j* is odd. :func:`ddr_stamp_latency` turns the front end's latency in cycles
into the pin-to-stamp latency in stamp units that the IDENTIFY reply carries, so that
``stamp - latency = j`` exactly.
"""

from amaranth.hdl import *
from amaranth.lib import stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

from .synchronizer import check_sync_stages

__all__ = ["IDDR_HALF_CYCLES", "ddr_stamp_latency", "DdrPinChangeDetector", "DdrEdgeChannels",
           "DdrMarkerPort", "IddrModel"]

#: Stamp units the DDR input register adds: a change in half cycle j is presented in cycle
#: c = (j + 3) // 2 with half bit 1 - j % 2, i.e. at stamp 2c + half = j + 3 (see
#: :func:`ddr_stamp_latency`).
IDDR_HALF_CYCLES = 3


def ddr_stamp_latency(cycles):
    """Pin-to-stamp latency in half-cycle stamp units of a DDR front end whose events come
    ``cycles`` cycles after the DDR register presents the samples.

    A change in half cycle *j* is presented in cycle ``c = (j + 3) // 2`` with half bit
    ``h = 1 - j % 2`` (late sample for even *j*), gives an event in cycle ``c + cycles`` and
    the stamp ``2 * (c + cycles) + h = j + 2 * cycles + 3``.
    """
    return 2 * cycles + IDDR_HALF_CYCLES


class DdrPinChangeDetector(wiring.Component):
    """Synchronizes ``width`` pins given as DDR sample pairs and flags each change of level,
    with the half of the cycle in which the new level first showed.

    Ports
    -----
    pins_ddr : In(2 * width)
        ``Cat(early, late)`` from the DDR input registers (the first synchronizer stage).
    level : Out(width)
        The synchronized late samples (the pins' level at the end of a cycle).
    changed : Out(width)
        Bit *n* high for one cycle when ``level[n]`` differs from the previous cycle's.
    half : Out(width)
        With ``changed[n]``: 1 if the new level showed only in the late sample, 0 if already
        in the early one.

    A pin that changes and changes back within one cycle (a pulse shorter than a cycle
    between two late samples) gives no event: ``level`` is compared cycle to cycle, as the
    single-rate :class:`~.synchronizer.PinChangeDetector` does, so events still alternate in
    level. :attr:`latency` = ``stages`` cycles from ``pins_ddr`` to ``changed``; all flip-flops
    are reset-less (a reset cannot make up a change).
    """

    def __init__(self, width, *, stages=2):
        self._width = width
        self._stages = check_sync_stages(stages)
        super().__init__({
            "pins_ddr": In(2 * width),
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
        synced = Signal(2 * width)
        m.submodules.synchronizer = FFSynchronizer(self.pins_ddr, synced, stages=self._stages)
        early, late = synced[:width], synced[width:]
        previous = Signal(width, reset_less=True)
        m.d.sync += previous.eq(late)
        m.d.comb += [
            self.level.eq(late),
            self.changed.eq(late ^ previous),
            self.half.eq(late ^ early),      # with a change: early still showed the old level
        ]
        return m


class DdrEdgeChannels(wiring.Component):
    """:class:`~.edge_channels.EdgeChannels` on DDR samples: ``events[n]`` as there, plus
    ``half[n]``, valid with ``events[n].valid``. :attr:`latency` is in cycles from
    ``pins_ddr``; :func:`ddr_stamp_latency` gives the stamp latency."""

    def __init__(self, count=4, *, sync_stages=2):
        if not isinstance(count, int) or count < 1:
            raise ValueError(f"count must be a positive int, not {count!r}")
        self._count = count
        self._sync_stages = check_sync_stages(sync_stages)
        super().__init__({
            "pins_ddr": In(2 * count),
            "events": Out(stream.Signature(1, always_ready=True)).array(count),
            "half": Out(count),
        })

    @property
    def count(self):
        return self._count

    @property
    def latency(self):
        return self._sync_stages

    def elaborate(self, platform):
        m = Module()
        m.submodules.detector = detector = DdrPinChangeDetector(self._count,
                                                                stages=self._sync_stages)
        m.d.comb += [detector.pins_ddr.eq(self.pins_ddr), self.half.eq(detector.half)]
        for n, events in enumerate(self.events):
            m.d.comb += [
                events.valid.eq(detector.changed[n]),
                events.payload.eq(detector.level[n]),
            ]
        return m


class DdrMarkerPort(wiring.Component):
    """:class:`~.marker_port.MarkerPort` with a DDR-sampled strobe.

    The strobe's edge is found in DDR samples (with its half bit); the data lines stay
    single-rate and get one synchronizer stage more than the strobe, standing in for the
    strobe's DDR input register, so data is sampled ``sample_delay`` cycles after the strobe
    edge exactly as in the single-rate port. ``half`` is valid with ``events.valid``.
    :attr:`latency` = ``sync_stages + sample_delay`` cycles from ``strobe_ddr``.
    """

    def __init__(self, data_width=16, *, sync_stages=2, sample_delay=2):
        if not isinstance(data_width, int) or data_width < 1:
            raise ValueError(f"data_width must be a positive int, not {data_width!r}")
        if not isinstance(sample_delay, int) or sample_delay < 0:
            raise ValueError(f"sample_delay must be an int >= 0, not {sample_delay!r}")
        self._data_width = data_width
        self._sync_stages = check_sync_stages(sync_stages)
        self._sample_delay = sample_delay
        super().__init__({
            "data": In(data_width),
            "strobe_ddr": In(2),
            "events": Out(stream.Signature(data_width, always_ready=True)),
            "half": Out(1),
        })

    @property
    def data_width(self):
        return self._data_width

    @property
    def latency(self):
        return self._sync_stages + self._sample_delay

    def elaborate(self, platform):
        m = Module()
        m.submodules.strobe_detector = strobe = DdrPinChangeDetector(1, stages=self._sync_stages)
        m.d.comb += strobe.pins_ddr.eq(self.strobe_ddr)

        data = Signal(self._data_width)
        m.submodules.data_synchronizer = FFSynchronizer(self.data, data,
                                                        stages=self._sync_stages + 1)

        # Each edge travels down its own delay line with its half bit (see MarkerPort).
        sample_now, half_now = strobe.changed, strobe.half
        for stage in range(self._sample_delay):
            delayed = Signal(name=f"sample_in_{self._sample_delay - stage - 1}")
            delayed_half = Signal(name=f"half_in_{self._sample_delay - stage - 1}")
            m.d.sync += [delayed.eq(sample_now), delayed_half.eq(half_now)]
            sample_now, half_now = delayed, delayed_half

        m.d.comb += [
            self.events.valid.eq(sample_now),
            self.events.payload.eq(data),
            self.half.eq(half_now),
        ]
        return m


class IddrModel(Elaboratable):
    """Simulation model of ECP5 ``IDDRX1F`` input registers on ``width`` pins (for tests:
    Amaranth's DDR buffers do not simulate). ``pin`` is sampled at every rising and falling
    edge of ``sync``; during cycle *c*, ``q = Cat(pin at rising edge c-1, pin at falling edge
    c-1/2)``, the convention of this module."""

    def __init__(self, width):
        self.pin = Signal(width)
        self.q = Signal(2 * width)

    def elaborate(self, platform):
        m = Module()
        m.domains.fall = ClockDomain("fall", clk_edge="neg", local=True, reset_less=True)
        m.d.comb += ClockSignal("fall").eq(ClockSignal("sync"))
        at_rise = Signal.like(self.pin, reset_less=True)
        at_fall = Signal.like(self.pin, reset_less=True)
        q = Signal.like(self.q, reset_less=True)
        m.d.sync += at_rise.eq(self.pin)
        m.d.fall += at_fall.eq(self.pin)
        # Both samples of a pair are handed on together at the next rising edge.
        m.d.sync += q.eq(Cat(at_rise, at_fall))
        m.d.comb += self.q.eq(q)
        return m
