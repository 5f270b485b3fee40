"""Parallel trace port: the DUT writes a marker value and toggles a strobe in one GPIO store."""

from amaranth.hdl import *
from amaranth.lib import stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

from .ddr_edges import stamp_shift_of
from .synchronizer import PinChangeDetector, check_phases, check_sync_stages, stamp_latency

__all__ = ["MarkerPort"]


class MarkerPort(wiring.Component):
    """Takes a marker on every strobe toggle (both edges), sampling the data a little later.

    The DUT writes the marker value and the inverted strobe in one store to its GPIO output
    register, so each store toggles the strobe exactly once and no handshake is needed. The
    lines of a GPIO port do not change in exactly the same instant, so the data is sampled
    ``sample_delay`` cycles after the strobe edge has been seen, by which time every data
    line has settled.

    Parameters
    ----------
    data_width : int
        Width of the marker value.
    sync_stages : int, >= 2
        Flip-flops of the synchronizer on every input (strobe and each data line).
    sample_delay : int, >= 0
        Cycles between detecting the (synchronized) strobe edge and sampling the
        (synchronized) data.
    phases : 1, 2 or 4
        Samples of the strobe per cycle (2: DDR, 4: IDDRX2F gearbox); with more than one,
        each event says in which of them the strobe edge first showed (see
        :mod:`.ddr_edges`). The data lines stay single-rate (their timing within a cycle
        carries nothing: they are sampled ``sample_delay`` cycles after the edge) and get
        one synchronizer stage more than the strobe, standing in for the strobe's input
        register, so data is still sampled ``sample_delay`` cycles after the edge.

    Ports
    -----
    data : In(data_width)
        Asynchronous marker value.
    strobe : In(phases)
        Asynchronous strobe (its samples of a cycle, earliest first); every change of level
        is one marker, delivered or counted on ``lost``.
    events : Out(stream.Signature(data_width, always_ready=True))
        ``valid`` is high for one cycle per delivered strobe edge, with ``payload`` = the
        sampled data.
    lost : Out(range(most_lost + 1))
        Strobe edges lost in this cycle (see Timing): edges of a cycle with several, and an
        earlier edge still waiting for its data sample.
    phase : Out(log2(phases))
        Valid with ``events.valid``: the first sample in which the strobe edge showed (always
        0 for single-rate inputs).

    Timing
    ------
    :attr:`latency` = ``sync_stages + sample_delay`` (4 by default); :attr:`stamp_latency` is
    the pin-to-stamp latency in stamp units (1/``phases`` cycle). A strobe edge first present
    on ``strobe`` during cycle *k* gives ``valid`` during cycle *k* + ``latency``, with
    ``payload`` = the level that ``data`` had during cycle *k* + ``sample_delay``. So data may
    settle up to ``sample_delay`` cycles after the strobe, and must then hold for that cycle
    (plus the sampling uncertainty of an asynchronous pin, in hardware).

    No strobe activity vanishes: every strobe edge becomes an event or is counted on ``lost``.
    A cycle with more than one edge (several samples' worth, with ``phases`` > 1) gives no
    event: all its edges are lost. An edge (or several) seen while an earlier edge waits for
    its data sample (within ``sample_delay`` cycles after it, the sample's own cycle
    included) loses the earlier one, whose data the newer store has overwritten (the data
    lines are aligned with the strobe, so a store's data reaches the sample with its edge).
    So markers whose strobe edges are at least ``sample_delay + 1`` cycles apart are all
    delivered (:attr:`min_spacing`), each with its own store's data; closer ones lose all but
    the last of a burst. ``payload`` comes from flip-flops, ``valid`` from a flip-flop gated
    by this cycle's strobe activity (through the XORs when ``sample_delay`` is 0).

    A reset of ``sync`` drops markers still in the delay line but never makes one up: the
    synchronizers and the strobe's previous level are reset-less (see
    :class:`.synchronizer.PinChangeDetector`, also for the one spurious change a strobe that is
    high at configuration gives, long before capture can be enabled).
    """

    def __init__(self, data_width=16, *, sync_stages=2, sample_delay=2, phases=1):
        if not isinstance(data_width, int) or data_width < 1:
            raise ValueError(f"data_width must be a positive int, not {data_width!r}")
        if not isinstance(sample_delay, int) or sample_delay < 0:
            raise ValueError(f"sample_delay must be an int >= 0, not {sample_delay!r}")
        self._data_width = data_width
        self._sync_stages = check_sync_stages(sync_stages)
        self._sample_delay = sample_delay
        self._phases = check_phases(phases)
        super().__init__(
            {
                "data": In(data_width),
                "strobe": In(phases),
                "events": Out(stream.Signature(data_width, always_ready=True)),
                "phase": Out(stamp_shift_of(phases)),
                "lost": Out(range(self.most_lost + 1)),
            }
        )

    @property
    def data_width(self):
        return self._data_width

    @property
    def sample_delay(self):
        return self._sample_delay

    @property
    def most_lost(self):
        """The most strobe edges lost in one cycle: one in each sample and one waiting."""
        return self._phases + 1

    @property
    def min_spacing(self):
        """Capture cycles between strobe edges at which no marker is lost."""
        return self._sample_delay + 1

    @property
    def latency(self):
        return self._sync_stages + self._sample_delay

    @property
    def stamp_latency(self):
        return stamp_latency(self.latency, self._phases)

    def elaborate(self, platform):
        m = Module()

        m.submodules.strobe_detector = strobe = PinChangeDetector(
            1, stages=self._sync_stages, phases=self._phases
        )
        m.d.comb += strobe.pins.eq(self.strobe)

        # The data lines get the same synchronizer as the strobe (and its input register), so a
        # store that changes both at once reaches both synchronizer outputs in the same cycle.
        data = Signal(self._data_width)
        m.submodules.data_synchronizer = FFSynchronizer(
            self.data, data, stages=self._sync_stages + (self._phases > 1)
        )

        # A cycle's strobe edges: one is an event (the data sampled later is its store's);
        # several are all lost, and any edge makes an earlier one that still waits for its
        # data sample lose it. So at most one edge is ever in the delay line.
        toggles = strobe.toggles[0]
        activity = toggles != 0
        single = toggles == 1
        sample_now, phase_now = single, strobe.phase[0]
        waiting = []
        for stage in range(self._sample_delay):
            delayed = Signal(name=f"sample_in_{self._sample_delay - stage - 1}")
            delayed_phase = Signal.like(
                self.phase, name=f"phase_in_{self._sample_delay - stage - 1}"
            )
            m.d.sync += [
                delayed.eq(sample_now if stage == 0 else sample_now & ~activity),
                delayed_phase.eq(phase_now),
            ]
            sample_now, phase_now = delayed, delayed_phase
            waiting.append(delayed)
        if waiting:
            sample_now = sample_now & ~activity
        overwritten = activity & Cat(waiting).any() if waiting else C(0, 1)
        m.d.comb += self.lost.eq(Mux(single, 0, toggles) + overwritten)

        m.d.comb += [
            self.events.valid.eq(sample_now),
            self.events.payload.eq(data),
            self.phase.eq(phase_now),
        ]
        return m
