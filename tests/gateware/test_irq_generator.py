"""The IRQ generator: exact intervals, widths and modes, and events that match the pin."""

import itertools

import pytest

from latscope_gateware.irq_generator import (
    LFSR_POLYNOMIAL,
    LFSR_SEED,
    IrqGenerator,
    leap_shifts,
    lfsr_leap,
)
from support.gateware_sim import run


def config(period, *, jitter_mask=0, width=1, enable=1, one_shot=0, active_low=0):
    return {
        "period": period,
        "jitter_mask": jitter_mask,
        "width": width,
        "flags": {"enable": enable, "one_shot": one_shot, "active_low": active_low},
    }


def simulate(applies, cycles, reseeds=(), word_leap=False):
    """Applies ``applies`` ({cycle: config}) and returns one sample per cycle, index = cycle:
    (pin, events.valid, events.payload.level, enabled) as they are during that cycle. ``reseeds``:
    cycles (of applies) with ``reseed`` high. ``word_leap``: the leap in word form."""
    dut = IrqGenerator(word_leap=word_leap)
    trace = []

    async def testbench(ctx):
        for cycle in range(cycles):
            if cycle in applies:
                ctx.set(dut.config, applies[cycle])
            ctx.set(dut.apply, cycle in applies)
            ctx.set(dut.reseed, cycle in reseeds)
            trace.append(
                (
                    ctx.get(dut.irq),
                    ctx.get(dut.events.valid),
                    ctx.get(dut.events.payload.level),
                    ctx.get(dut.enabled),
                )
            )
            # Its own edges: no trigger's firing (the trigger is tests/test_irq_trigger.py's).
            assert ctx.get(dut.events.payload.as_value()) == ctx.get(dut.events.payload.level)
            await ctx.tick()

    run(dut, testbench)
    return trace


def pin_edges(trace, active_low=0, since=1):
    """(cycle, logical level) for every cycle from ``since`` on in which the pin shows a new
    level. After an apply that changes the polarity in cycle A, pass ``since=A + 2``: the pin
    moves to its new idle level at A + 1, which is not an edge of the logical output."""
    levels = [sample[0] ^ active_low for sample in trace]
    return [
        (cycle, levels[cycle])
        for cycle in range(since, len(levels))
        if levels[cycle] != levels[cycle - 1]
    ]


def event_list(trace):
    return [(cycle, sample[2]) for cycle, sample in enumerate(trace) if sample[1]]


def asserting_cycles(trace):
    return [cycle for cycle, level in pin_edges(trace) if level]


def reference_draws():
    """The generator's draws, from the documented LFSR written out independently: the bit
    sequence of x^32 + x^22 + x^2 + x + 1 seeded with LFSR_SEED (bit i = a[i]), cut into
    consecutive 32-bit words, least significant bit first."""
    bits = [(LFSR_SEED >> i) & 1 for i in range(32)]
    while True:
        yield sum(bits[i] << i for i in range(32))
        for _ in range(32):
            bits.append(bits[-32] ^ bits[-31] ^ bits[-30] ^ bits[-10])
        del bits[:32]


def test_lfsr_polynomial_is_primitive():
    assert LFSR_POLYNOMIAL == (1 << 32) | (1 << 22) | 0b111

    def mulmod(a, b):
        product = 0
        while b:
            if b & 1:
                product ^= a
            b >>= 1
            a <<= 1
            if a >> 32:
                a ^= LFSR_POLYNOMIAL
        return product

    def power(exponent):
        result, base = 1, 0b10  # x
        while exponent:
            if exponent & 1:
                result = mulmod(result, base)
            base = mulmod(base, base)
            exponent >>= 1
        return result

    order = 2**32 - 1
    assert power(order) == 1
    for prime in (3, 5, 17, 257, 65537):  # the prime factors of 2**32 - 1
        assert power(order // prime) != 1


def test_fixed_period_is_exact_over_1000_periods():
    period, width, apply_at = 7, 3, 2
    trace = simulate({apply_at: config(period, width=width)}, apply_at + 1010 * period)
    edges = pin_edges(trace)
    rising = [cycle for cycle, level in edges if level]
    falling = [cycle for cycle, level in edges if not level]
    assert len(rising) >= 1000
    assert rising[0] == apply_at + period
    assert all(b - a == period for a, b in itertools.pairwise(rising))
    assert all(f - r == width for r, f in zip(rising, falling))
    assert event_list(trace) == edges


def test_jittered_spacing_follows_the_lfsr_exactly():
    period, mask, apply_at = 5, 0xF, 1
    trace = simulate({apply_at: config(period, jitter_mask=mask, width=2)}, 6000)
    rising = asserting_cycles(trace)
    gaps = [rising[0] - apply_at] + [b - a for a, b in itertools.pairwise(rising)]
    assert len(gaps) > 300
    assert all(period <= gap <= period + mask for gap in gaps)
    assert len(set(gaps)) >= 12  # spread, not one value
    expected = [period + (draw & mask) for draw in itertools.islice(reference_draws(), len(gaps))]
    assert gaps == expected
    assert event_list(trace) == pin_edges(trace)


def test_width_is_clamped_between_one_and_interval_minus_one():
    # width 0 acts as 1
    trace = simulate({0: config(6, width=0)}, 40)
    edges = pin_edges(trace)
    assert edges[:4] == [(6, 1), (7, 0), (12, 1), (13, 0)]
    # width >= period: released for exactly one cycle before each asserting edge
    trace = simulate({0: config(6, width=100)}, 40)
    assert pin_edges(trace)[:5] == [(6, 1), (11, 0), (12, 1), (17, 0), (18, 1)]
    # with jitter the bound is the interval that follows the edge
    trace = simulate({0: config(3, jitter_mask=0x7, width=1000)}, 3000)
    edges = pin_edges(trace)
    rising = [cycle for cycle, level in edges if level]
    falling = [cycle for cycle, level in edges if not level]
    assert all(f == r_next - 1 for f, r_next in zip(falling, rising[1:]))
    assert event_list(trace) == edges


def test_interval_is_at_least_two_cycles():
    trace = simulate({0: config(0, width=5)}, 20)
    assert pin_edges(trace)[:4] == [(2, 1), (3, 0), (4, 1), (5, 0)]
    trace = simulate({0: config(1)}, 20)
    assert asserting_cycles(trace)[:3] == [2, 4, 6]


def test_one_shot_fires_once_and_clears_enabled():
    apply_at, period, width = 3, 10, 4
    trace = simulate({apply_at: config(period, width=width, one_shot=1)}, 80)
    assert pin_edges(trace) == [(apply_at + period, 1), (apply_at + period + width, 0)]
    assert event_list(trace) == pin_edges(trace)
    enabled = [sample[3] for sample in trace]
    assert enabled == [0] * (apply_at + 1) + [1] * (period + width - 1) + [0] * (
        80 - apply_at - period - width
    )
    # a second apply fires it again, counting from that apply
    trace = simulate({3: config(10, width=4, one_shot=1), 40: config(5, width=2, one_shot=1)}, 80)
    assert pin_edges(trace) == [(13, 1), (17, 0), (45, 1), (47, 0)]


def test_active_low_idles_high_and_asserts_low():
    trace = simulate({2: config(8, width=3, active_low=1)}, 60)
    pins = [sample[0] for sample in trace]
    assert pins[:3] == [0, 0, 0]  # reset state: released, active high
    assert pins[3:10] == [1] * 7  # new idle level from apply + 1: not an event
    edges = pin_edges(trace, active_low=1, since=4)
    assert edges[:4] == [(10, 1), (13, 0), (18, 1), (21, 0)]
    assert pins[10:13] == [0, 0, 0]
    assert event_list(trace) == edges


def test_disable_releases_an_asserted_output_with_an_event():
    # asserted during cycles 10..19; apply(disable) in cycle 14 releases at 15
    trace = simulate({0: config(10, width=10 - 1), 14: config(10, enable=0)}, 60)
    assert pin_edges(trace) == [(10, 1), (15, 0)]
    assert event_list(trace) == [(10, 1), (15, 0)]
    assert [sample[3] for sample in trace][14:17] == [1, 0, 0]
    # disabling while released: no edge, no event, nothing more
    trace = simulate({0: config(10, width=2), 15: config(10, enable=0)}, 60)
    assert pin_edges(trace) == event_list(trace) == [(10, 1), (12, 0)]
    # active low: the release drives the pin high
    trace = simulate(
        {0: config(10, width=8, active_low=1), 12: config(10, enable=0, active_low=1)}, 40
    )
    assert pin_edges(trace, active_low=1, since=2) == event_list(trace) == [(10, 1), (13, 0)]


def test_apply_restarts_the_timing():
    # released at the apply: the next edge counts from the new apply
    trace = simulate({0: config(10, width=2), 15: config(7, width=2)}, 40)
    assert asserting_cycles(trace) == [10, 22, 29, 36]
    # asserted at the apply: released at apply + 1, then the new timing
    trace = simulate({0: config(10, width=6), 12: config(3, width=1)}, 30)
    assert pin_edges(trace)[:5] == [(10, 1), (13, 0), (15, 1), (16, 0), (18, 1)]
    assert event_list(trace) == pin_edges(trace)
    # apply in the very cycle an edge was due: the edge does not happen
    trace = simulate({0: config(10, width=2), 9: config(4, width=2)}, 30)
    assert asserting_cycles(trace) == [13, 17, 21, 25, 29]
    # the first interval of a jittered config uses a fresh draw: the second apply's first
    # interval is the second draw of the sequence
    draws = reference_draws()
    first, second = next(draws) & 0xFF, next(draws) & 0xFF
    trace = simulate(
        {0: config(2, jitter_mask=0xFF, width=1), 1: config(2, jitter_mask=0xFF, width=1)}, 300
    )
    assert asserting_cycles(trace)[0] == 1 + 2 + second
    assert first != second


def test_reseed_restarts_the_sequence_from_the_seed():
    """An apply with reseed (the appliance's START) draws as a generator fresh from reset:
    the edges after it are those of the first apply after reset, shifted to it."""
    period, mask = 4, 0x1F
    settings = config(period, jitter_mask=mask, width=2)
    fresh = asserting_cycles(simulate({3: settings}, 600))
    # Run a while (draws advance the LFSR), then apply the same settings with reseed.
    restart = 301
    trace = simulate({3: settings, restart: settings}, restart + 600, reseeds={restart})
    after = [cycle - restart + 3 for cycle in asserting_cycles(trace) if cycle > restart]
    assert after[: len(fresh) - 2] == fresh[:-2] and len(fresh) > 20
    # Without reseed the same apply continues the sequence: other intervals.
    trace = simulate({3: settings, restart: settings}, restart + 600)
    continued = [cycle - restart + 3 for cycle in asserting_cycles(trace) if cycle > restart]
    assert continued[:10] != fresh[:10]
    # A reseed with the generator disabled: the next apply draws from the seed.
    trace = simulate(
        {3: settings, 200: config(period, enable=0), 250: settings}, 250 + 600, reseeds={200}
    )
    again = [cycle - 250 + 3 for cycle in asserting_cycles(trace) if cycle > 250]
    assert again[: len(fresh) - 2] == fresh[:-2]
    assert event_list(trace) == pin_edges(trace)


@pytest.mark.parametrize("active_low", [0, 1])
def test_events_match_pin_edges_through_reconfiguration(active_low):
    applies = {
        5: config(4, jitter_mask=0x3, width=2, active_low=active_low),
        203: config(9, jitter_mask=0x1F, width=30, active_low=active_low),
        707: config(3, width=1, active_low=active_low),
        901: config(3, enable=0, active_low=active_low),
        950: config(6, width=2, one_shot=1, active_low=active_low),
    }
    trace = simulate(applies, 1000)
    edges = pin_edges(trace, active_low, since=7)  # polarity is set at cycle 6
    assert event_list(trace) == edges
    assert len(edges) > 100
    assert IrqGenerator.latency == 0


@pytest.mark.slow
def test_intervals_and_widths_across_the_16_bit_halves():
    """The draw adder and the down-counters work in 16-bit halves: intervals around 2**16
    (some draws carry into the high half) and a width of 2**16 + 1 come out exact."""
    period, mask, width = 0xFFFE, 0x7, 0x10001
    trace = simulate({0: config(period, jitter_mask=mask, width=width)}, 4 * (period + mask))
    edges = pin_edges(trace)
    rising = [cycle for cycle, level in edges if level]
    expected = [period + (draw & mask) for draw in itertools.islice(reference_draws(), 6)]
    assert rising[0] == expected[0]
    assert [b - a for a, b in itertools.pairwise(rising)] == expected[1 : len(rising)]
    assert any(gap >= 1 << 16 for gap in expected[: len(rising)])
    for (up, _), (down, level) in zip(edges[::2], edges[1::2]):
        assert level == 0
        interval = expected[rising.index(up) + 1]
        assert down - up == min(width, interval - 1)


@pytest.mark.slow
def test_word_leap_is_the_same_leap():
    """The word-form leap (shifted words) against the LFSR stepped bit by bit, and
    the generator built with it against the boards' form, pin and events, cycle for cycle,
    over a few hundred draws (a wrong bit of the leap reaches the drawn bits within a few
    draws)."""
    state = LFSR_SEED
    for _ in range(2000):
        leaped = 0
        for shift, mask in leap_shifts():
            leaped ^= (state >> shift if shift >= 0 else state << -shift) & mask
        assert leaped == lfsr_leap(state)
        state = leaped
    applies = {1: config(5, jitter_mask=0xF, width=2), 3000: config(4, jitter_mask=0x7)}
    assert simulate(applies, 5000, reseeds={3000}, word_leap=True) == simulate(
        applies, 5000, reseeds={3000}
    )
