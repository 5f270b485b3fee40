"""Interrupt generator: an edge-triggered IRQ output for the DUT whose edges are capture events."""

from amaranth.hdl import *
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from latscope_defs.protocol import IrqConfig, IrqValue

from .arithmetic import carry_select_add
from .irq_pin import show_irq
from .irq_trigger import firing_layout

__all__ = [
    "LFSR_POLYNOMIAL",
    "LFSR_SEED",
    "MIN_INTERVAL",
    "lfsr_leap",
    "leap_shifts",
    "IrqGenerator",
]

#: Characteristic polynomial of the jitter LFSR, x^32 + x^22 + x^2 + x + 1 (primitive, so the
#: register runs through all 2**32 - 1 non-zero states), as an integer with bit n for x^n.
LFSR_POLYNOMIAL = (1 << 32) | (1 << 22) | (1 << 2) | (1 << 1) | 1
#: LFSR state after reset; any non-zero value works, this one has well-mixed bits.
LFSR_SEED = 0x9E3779B9
#: Shortest interval between asserting edges: one cycle asserted, one released.
MIN_INTERVAL = 2

_LFSR_WIDTH = 32
_LFSR_TAPS = [n for n in range(_LFSR_WIDTH) if (LFSR_POLYNOMIAL >> n) & 1]


def _lfsr_step(state):
    # Bit i of the state is sequence bit a[n + i]; a step shifts a[n + 32] in at the top, with
    # a[n + 32] = XOR of a[n + t] over the taps t (the polynomial's terms below x^32).
    feedback = 0
    for tap in _LFSR_TAPS:
        feedback ^= (state >> tap) & 1
    return (state >> 1) | (feedback << (_LFSR_WIDTH - 1))


def lfsr_leap(state):
    """The LFSR state one draw later: 32 steps, so consecutive draws are disjoint 32-bit windows
    of the maximal-length sequence rather than shifted copies of each other."""
    for _ in range(_LFSR_WIDTH):
        state = _lfsr_step(state)
    return state


def _leap_rows():
    # The leap is linear over GF(2): output bit i is the XOR of the state bits in rows[i].
    columns = [lfsr_leap(1 << j) for j in range(_LFSR_WIDTH)]
    return [
        sum(((column >> i) & 1) << j for j, column in enumerate(columns))
        for i in range(_LFSR_WIDTH)
    ]


def _chained_leap(state):
    # 32 steps shift in a[n + 32] .. a[n + 63], and a[k + 32] is the XOR of a[k + t] over the
    # taps t: each new bit is one XOR of four, of state bits or of new bits already formed
    # (one LUT each, a few levels deep) rather than a tree over the leap's expanded rows.
    new = []
    for i in range(_LFSR_WIDTH):
        terms = [
            state[i + t] if i + t < _LFSR_WIDTH else new[i + t - _LFSR_WIDTH] for t in _LFSR_TAPS
        ]
        bit = terms[0]
        for term in terms[1:]:
            bit = bit ^ term
        new.append(bit)
    return Cat(new)


def leap_shifts():
    """The same leap as a few word operations: ``[(shift, mask), ...]`` such that the leaped
    state is the XOR, over the pairs, of ``(state >> shift) & mask`` (a left shift by
    ``-shift`` for a negative one). Output bit i takes state bit j in the pair of shift
    j - i; the leap has 14 distinct shifts."""
    masks = {}
    for i, row in enumerate(_leap_rows()):
        for j in range(_LFSR_WIDTH):
            if (row >> j) & 1:
                masks[j - i] = masks.get(j - i, 0) | (1 << i)
    return sorted(masks.items())


class IrqGenerator(wiring.Component):
    """Edge-triggered interrupt output with pseudo-random spacing.

    Parameters
    ----------
    word_leap : bool
        Write the LFSR leap as the XOR of a few shifted, masked copies of the state
        (:func:`leap_shifts`) instead of a chain of four-input XORs (one LUT a bit): the same
        function, which a simulator that evaluates every signal every cycle (Verilator)
        computes in a few word operations (`verilog_export --word-xor`); boards keep the
        chain.

    Ports
    -----
    config : In(:class:`latscope_defs.protocol.IrqConfig`)
        Settings, taken only in a cycle with ``apply`` high.
    apply : In(1)
        One-cycle strobe: load ``config`` and restart the timing.
    reseed : In(1)
        With ``apply``: the LFSR starts over from :data:`LFSR_SEED`, as after reset, so the
        draws from this apply on are those of a fresh generator. The appliance applies its
        settings in force with ``reseed`` at a capture's START: the IRQ sequence of every
        capture is the same, counted from its START.
    firing : In(:data:`.irq_trigger.firing_layout`)
        The trigger's claim on the pin (a one-clock build): while ``firing.active`` the pin
        shows the trigger's level instead of the generator's (:func:`.irq_pin.show_irq`),
        which goes on running unseen; with the generator's polarity.
    irq : Out(1)
        The pin, straight from a flip-flop. Low after reset (released, active high).
    irq_next : Out(1)
        What ``irq`` takes at the next clock edge (for the I/O cell's output register,
        :func:`.irq_pin.show_irq`).
    enabled : Out(1)
        The generator is running (``flags.enable`` of the last apply, cleared by one-shot).
    events : Out(stream.Signature(IrqValue, always_ready=True))
        ``valid`` for one cycle per edge of the output, in the same cycle the pin shows the new
        level (``latency`` = 0); ``payload.level`` is 1 for an asserting and 0 for a releasing
        edge (the logical level, whatever the polarity), ``triggered`` and ``delay`` those of
        the trigger's firing (0 for the generator's own edges).
    rise : Out(1)
        One cycle per asserting edge of the generator's own level, in the cycle the pin
        would show it (whether or not it does): the trigger's arming edge.

    Timing (cycle *A* is the one with ``apply`` high; "edge at cycle *c*" means the pin first
    shows the new level in cycle *c*, which is also the cycle ``events.valid`` is high)
    ----------------------------------------------------------------------------------------
    * Interval draw: ``I = max(2, period + (lfsr & jitter_mask))`` (33-bit sum, no overflow).
      ``lfsr`` is a 32-bit Fibonacci LFSR with polynomial :data:`LFSR_POLYNOMIAL`
      (x^32 + x^22 + x^2 + x + 1) that is :data:`LFSR_SEED` after reset and is advanced by
      32 steps (:func:`lfsr_leap`) at each draw, so the k-th draw since reset (k = 0, 1, ...)
      uses ``lfsr_leap^k(LFSR_SEED)``. Reset and an apply with ``reseed`` reseed it (the
      draw of that apply is then draw 0); draws happen at an apply with enable and at
      every asserting edge.
    * With ``flags.enable``: the first asserting edge is at ``A + I0`` (I0 drawn in cycle A with
      the new config), and an asserting edge at cycle *E* draws the next interval I1 so the
      following one is at ``E + I1``, and so on.
    * Pulse width: the asserting edge at *E* is released at ``E + W``, with
      ``W = min(max(width, 1), I1 - 1)`` and I1 the interval drawn at *E*: width 0 acts as 1,
      and a width >= I1 leaves the output released for exactly one cycle before the next
      asserting edge.
    * ``flags.one_shot``: one pulse; at its release ``enabled`` falls in the same cycle and
      nothing more happens until the next apply. (The interval I1 is still drawn at its
      asserting edge and still bounds its width.)
    * ``flags.active_low``: the pin is the logical level inverted. Changing the polarity moves
      the idle level of the pin at ``A + 1``; that is not an edge of the logical output and
      produces no event.
    * Every apply first ends a pulse in progress: if the output is asserted during cycle *A*,
      it is released at ``A + 1`` (a releasing event), whether the new config enables or not.
      Apply with enable = 0 stops the generator (``enabled`` low from ``A + 1``).
    * ``apply`` wins over an edge that was due in the same cycle: that edge does not happen.
    """

    #: Cycles from the pin showing a new level to ``events.valid``: both change together.
    latency = 0

    def __init__(self, *, word_leap=False):
        self._word_leap = word_leap
        super().__init__(
            {
                "config": In(IrqConfig),
                "apply": In(1),
                "reseed": In(1),
                "firing": In(firing_layout),
                "irq": Out(1),
                "irq_next": Out(1),
                "enabled": Out(1),
                "events": Out(stream.Signature(IrqValue, always_ready=True)),
                "rise": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        state = _State(m)
        self._leap(m, state)
        self._draw_intervals(m, state)
        # Unless a part below changes them, the output keeps its level and its polarity.
        m.d.comb += [
            state.next_asserted.eq(state.asserted),
            state.next_active_low.eq(state.active_low),
        ]
        with m.If(self.apply):
            self._apply(m, state)
        with m.Elif(state.loading):
            self._start_first_interval(m, state)
        with m.Elif(self.enabled):
            self._count(m, state)
        self._pin(m, state)
        return m

    def _leap(self, m, state):
        """The LFSR steps from one draw's state to the next in any cycle with ``advance``:
        ``lfsr`` takes ``lfsr_ahead``, which takes its leap (32 steps), so the leap's XOR
        network lies between two registers and no draw waits for it."""
        lfsr_ahead = state.lfsr_ahead
        if self._word_leap:
            leap = 0
            for shift, mask in leap_shifts():
                moved = lfsr_ahead >> shift if shift >= 0 else lfsr_ahead << -shift
                leap = leap ^ (moved[:_LFSR_WIDTH] & mask)
        else:
            leap = _chained_leap(lfsr_ahead)
        with m.If(state.advance):
            m.d.sync += [state.lfsr.eq(lfsr_ahead), lfsr_ahead.eq(leap)]

    def _draw_intervals(self, m, state):
        """The three interval draws, each into a register a cycle or more before it is
        needed, so that no 33-bit add lies between the apply strobe or the countdown and the
        counters: I0 and (in case I0 = 2) I1 from ``config`` in the apply cycle, and an
        asserting edge's draw from the settings in force."""
        config = self.config
        # The state an apply draws from: the LFSR's, or with `reseed` the seed (constants,
        # so the multiplexer is one more input of each jitter bit's AND, no deeper).
        reseeding = self.apply & self.reseed
        apply_lfsr = Mux(reseeding, LFSR_SEED, state.lfsr)
        apply_lfsr_ahead = Mux(reseeding, lfsr_leap(LFSR_SEED), state.lfsr_ahead)
        state.first.sample(config.period, config.jitter_mask, apply_lfsr, enable=self.apply)
        state.second.sample(config.period, config.jitter_mask, apply_lfsr_ahead, enable=self.apply)
        # Valid whenever an asserting edge can draw: period, mask and LFSR change only at a
        # draw, and the next draw is at least two cycles after it (an interval is >= 2), or is
        # the first edge at A + 1, which takes `second`.
        state.edge.sample(state.period, state.jitter_mask, state.lfsr)

    def _apply(self, m, state):
        """Cycle *A* (the class docstring's Timing): take the new settings and release the
        output, so that every apply ends a pulse in progress; with enable, step the LFSR past
        I0 (drawn from the seed with ``reseed``) for the countdown that starts in the next
        cycle; without enable, stop (and with ``reseed`` restart the LFSR from the seed)."""
        config = self.config
        m.d.sync += [
            state.period.eq(config.period),
            state.jitter_mask.eq(config.jitter_mask),
            state.min_width.eq(Mux(config.width == 0, 1, config.width)),
            state.min_width_is_1.eq(config.width <= 1),
            state.one_shot.eq(config.flags.one_shot),
            state.active_low.eq(config.flags.active_low),
            self.enabled.eq(config.flags.enable),
            state.loading.eq(config.flags.enable),
        ]
        m.d.comb += [state.next_asserted.eq(0), state.next_active_low.eq(config.flags.active_low)]
        with m.If(config.flags.enable):
            m.d.sync += state.from_apply.eq(1)
            with m.If(self.reseed):
                # Draw 0 was taken from the seed in this cycle: on to draws 1 and 2.
                m.d.sync += [
                    state.lfsr.eq(lfsr_leap(LFSR_SEED)),
                    state.lfsr_ahead.eq(lfsr_leap(lfsr_leap(LFSR_SEED))),
                ]
            with m.Else():
                state.advance_lfsr()
        with m.Elif(self.reseed):
            m.d.sync += [state.lfsr.eq(LFSR_SEED), state.lfsr_ahead.eq(lfsr_leap(LFSR_SEED))]

    def _start_first_interval(self, m, state):
        """Cycle *A* + 1 (the output is released): start counting I0, or with I0 = 2 this is
        already the cycle before the first edge."""
        m.d.sync += state.loading.eq(0)
        with m.If(state.first.is_2):
            state.assert_edge(state.second)
        with m.Else():
            state.load_countdown(state.first)

    def _count(self, m, state):
        """A running generator's cycle: count down to the next edge (and the pulse's width
        while the output is asserted); release the pulse when its width or the interval is
        up (and stop a one-shot), or assert the output when the interval is up."""
        countdown, countdown_is, hold = state.countdown, state.countdown_is, state.hold
        countdown.decrement()
        m.d.sync += [
            countdown_is[1].eq(countdown_is[2]),
            countdown_is[2].eq(countdown_is[3]),
            countdown_is[3].eq(countdown.value == 4),
        ]
        with m.If(state.asserted):
            hold.decrement()
            m.d.sync += state.hold_is_1.eq(hold.value == 2)
            with m.If(state.hold_is_1 | countdown_is[2]):
                m.d.comb += state.next_asserted.eq(0)
                with m.If(state.one_shot):
                    m.d.sync += self.enabled.eq(0)
        with m.Elif(Mux(state.from_apply, countdown_is[3], countdown_is[1])):
            state.assert_edge(state.edge)

    def _pin(self, m, state):
        """The pin and its event, from flip-flops loaded at the same clock edge: latency 0
        (the trigger's level instead while it drives the pin)."""
        next_asserted = state.next_asserted
        m.d.sync += [
            state.asserted.eq(next_asserted),
            self.rise.eq(next_asserted & ~state.asserted),
        ]
        show_irq(
            m,
            "sync",
            level=next_asserted,
            active_low=state.next_active_low,
            firing=self.firing,
            pin=self.irq,
            pin_next=self.irq_next,
            events=self.events,
        )


class _State:
    """The generator's registers, and the combinational signals its parts share: what
    :meth:`IrqGenerator.elaborate`'s parts read and write, declared in one place. Also the
    steps that more than one part takes: :meth:`advance_lfsr`, :meth:`load_countdown` and
    :meth:`assert_edge`."""

    def __init__(self, m):
        self._m = m
        # Settings in force, captured at apply so ``config`` may change afterwards.
        self.period = Signal(32)
        self.jitter_mask = Signal(32)
        self.one_shot = Signal()
        self.active_low = Signal()

        # The LFSR state of the next draw and, beside it, the state of the draw after that, so
        # that no draw waits for the leap's XOR network.
        self.lfsr = Signal(_LFSR_WIDTH, init=LFSR_SEED)
        self.lfsr_ahead = Signal(_LFSR_WIDTH, init=lfsr_leap(LFSR_SEED))
        # The draws set `advance`, and the leap is written once, under it: then Verilator
        # (which evaluates the design every cycle) can compute the leap inside that branch,
        # only in a cycle that draws; the logic is the same.
        self.advance = Signal()

        # The interval draws: I0, drawn in the apply cycle; I1 in case I0 = 2 (then the first
        # edge draws at A + 1); the draw of an asserting edge, with the settings in force.
        self.first = _Draw(m, "first")
        self.second = _Draw(m, "second")
        self.edge = _Draw(m, "edge")

        self.asserted = Signal()  # logical output level, as the pin shows it
        # An edge is due at the end of the cycle in which this is 1, or 3 before the first
        # edge after an apply (`from_apply`): the countdown is loaded with I0 in the cycle after
        # the apply (`loading`), so stopping two counts early keeps an `interval - 2`
        # subtraction off the draw path.
        self.countdown = _DownCounter(m, 33, "countdown")
        self.from_apply = Signal()
        self.loading = Signal()
        # The release is due at the end of the cycle in which `hold` is 1 (the width, at least
        # 1) or, for a pulse as long as the interval, in which `countdown` is 2: the cycle
        # before the next asserting edge. That is W = min(max(width, 1), I1 - 1) without
        # computing it from the interval just drawn.
        self.hold = _DownCounter(m, 32, "hold")
        self.min_width = Signal(32)  # max(width, 1), taken at apply
        # `countdown == k` for k = 1, 2, 3 and `hold == 1`, kept in flip-flops alongside the
        # counters (each updated from the value its counter takes), so no wide compare lies
        # on the path from the counters to the pin and the draw.
        self.countdown_is = {k: Signal(name=f"countdown_is_{k}") for k in (1, 2, 3)}
        self.hold_is_1 = Signal()
        self.min_width_is_1 = Signal()

        # The output's level and polarity from the next cycle on, as the parts decide them.
        self.next_asserted = Signal()
        self.next_active_low = Signal()

    def advance_lfsr(self):
        """This cycle draws: the LFSR moves on to the next draw's state."""
        self._m.d.comb += self.advance.eq(1)

    def load_countdown(self, draw):
        """Count ``draw``'s interval, its small-value flags with it."""
        self.countdown.load(draw.interval)
        self._m.d.sync += [
            self.countdown_is[1].eq(0),  # interval >= 2
            self.countdown_is[2].eq(draw.is_2),
            self.countdown_is[3].eq(draw.is_3),
        ]

    def assert_edge(self, draw):
        """An asserting edge in the next cycle: from it, count ``draw`` (the interval I1 to the
        following edge) and the pulse's width, and draw again."""
        self._m.d.comb += self.next_asserted.eq(1)
        self.load_countdown(draw)
        self.hold.load(self.min_width)
        self._m.d.sync += [self.hold_is_1.eq(self.min_width_is_1), self.from_apply.eq(0)]
        self.advance_lfsr()


class _Draw:
    """One interval draw ``I = max(2, period + (lfsr & mask))`` held in flip-flops, with
    ``is_2``/``is_3`` (I == 2, I == 3) beside it. Whether I is that small is decided from the
    summands, next to the adder rather than after it: both are small only if their bits above
    bit 1 are all 0, and then the sum is that of their two low bits.

    ``interval`` is the raw sum, without the ``max(2, ...)``: a sum of 0 or 1 has ``is_2`` set,
    and the countdown goes by the flags it is loaded with and reloads before its value could
    matter, so the clamp is not on the adder's path."""

    def __init__(self, m, name):
        self._m = m
        self.interval = Signal(33, name=f"{name}_interval")
        self.is_2 = Signal(name=f"{name}_is_2")
        self.is_3 = Signal(name=f"{name}_is_3")

    def sample(self, period, mask, lfsr, *, enable=1):
        jitter = lfsr & mask
        # No carry runs 33 bits: the halves are added separately (carry select).
        raw = carry_select_add(Cat(period, 0), Cat(jitter, 0), width=33, split=16)
        small = ~period[2:].any() & ~jitter[2:].any()
        low_sum = period[:2] + jitter[:2]
        with self._m.If(enable):
            self._m.d.sync += [
                self.interval.eq(raw),
                self.is_2.eq(small & (low_sum <= MIN_INTERVAL)),
                self.is_3.eq(small & (low_sum == 3)),
            ]


class _DownCounter:
    """A loadable down-counter without a full-width borrow chain: the low and the high half
    count separately, the high half stepping in the cycle the low half wraps from 0 (which a
    flip-flop knows a cycle ahead). It wraps like a ``width``-bit counter."""

    def __init__(self, m, width, name):
        self._m = m
        self._low = Signal(width // 2, name=f"{name}_low")
        self._high = Signal(width - width // 2, name=f"{name}_high")
        self._low_is_0 = Signal(name=f"{name}_low_is_0")
        self.value = Cat(self._low, self._high)

    def load(self, value):
        low = value[: len(self._low)]
        self._m.d.sync += [
            self._low.eq(low),
            self._high.eq(value[len(self._low) :]),
            self._low_is_0.eq(low == 0),
        ]

    def decrement(self):
        self._m.d.sync += [self._low.eq(self._low - 1), self._low_is_0.eq(self._low == 1)]
        with self._m.If(self._low_is_0):
            self._m.d.sync += self._high.eq(self._high - 1)
