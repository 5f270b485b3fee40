"""8N1 UART transmitter and receiver for the host link (no flow control)."""

from amaranth.hdl import *
from amaranth.lib import stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

__all__ = ["FRAME_BITS", "UARTTx", "UARTRx"]

#: Bit times per byte on the line: start bit, 8 data bits (LSB first), stop bit.
FRAME_BITS = 10


def _check_divisor(divisor):
    if not isinstance(divisor, int) or divisor < 2:
        raise ValueError(f"UART divisor must be an integer >= 2, not {divisor!r}")


class UARTTx(wiring.Component):
    """8N1 transmitter: ``divisor`` clock cycles per bit, LSB first.

    Ports
    -----
    data : In(stream.Signature(8))
        Bytes to send; a byte is taken in a cycle with ``valid & ready``. ``ready`` depends
        only on the transmitter's state, never on ``valid``.
    tx : Out(1, init=1)
        The line, straight from a flip-flop; idle high.

    Timing
    ------
    A byte taken in cycle *T* puts the start bit on ``tx`` from cycle ``T + 1``; bit *k* of the
    frame (0 = start, 1..8 = data bit 0..7, 9 = stop) is on the line during cycles
    ``T + 1 + k * divisor`` .. ``T + (k + 1) * divisor``. ``ready`` is high while idle and in
    the last cycle of a stop bit (``T + 10 * divisor``), so back-to-back bytes follow each other
    with no idle time: one byte per ``10 * divisor`` cycles, the full rate of the link.
    """

    def __init__(self, divisor):
        _check_divisor(divisor)
        self._divisor = divisor
        super().__init__(
            {
                "data": In(stream.Signature(8)),
                "tx": Out(1, init=1),
            }
        )

    @property
    def divisor(self):
        return self._divisor

    def elaborate(self, platform):
        m = Module()
        divisor = self._divisor

        bits_left = Signal(range(FRAME_BITS + 1))  # frame bits on the line, this one included
        timer = Signal(range(divisor))  # cycles of the current bit after this one
        # Bits after the current one, next first; ones shift in behind the stop bit, so the
        # line returns to idle by itself.
        pending = Signal(FRAME_BITS - 1, init=~0)

        # `ready` is a flip-flop, loaded with what it will be from the state the counters take
        # (idle, or in the last cycle of a stop bit), so the producer's logic is not chained to
        # the counters' compares.
        next_bits_left = Signal.like(bits_left)
        next_timer = Signal.like(timer)
        m.d.comb += [next_bits_left.eq(bits_left), next_timer.eq(timer)]
        ready = Signal(init=1)
        m.d.comb += self.data.ready.eq(ready)
        m.d.sync += [
            bits_left.eq(next_bits_left),
            timer.eq(next_timer),
            ready.eq((next_bits_left == 0) | ((next_bits_left == 1) & (next_timer == 0))),
        ]

        bit_ends = timer == 0
        with m.If(self.data.valid & ready):
            m.d.sync += [
                self.tx.eq(0),  # start bit
                pending.eq(Cat(self.data.payload, C(1, 1))),  # data LSB first, stop bit
            ]
            m.d.comb += [next_bits_left.eq(FRAME_BITS), next_timer.eq(divisor - 1)]
        with m.Elif(bits_left != 0):
            with m.If(bit_ends):
                m.d.sync += [
                    self.tx.eq(pending[0]),
                    pending.eq(Cat(pending[1:], C(1, 1))),
                ]
                m.d.comb += [next_bits_left.eq(bits_left - 1), next_timer.eq(divisor - 1)]
            with m.Else():
                m.d.comb += next_timer.eq(timer - 1)
        return m


class UARTRx(wiring.Component):
    """8N1 receiver: ``divisor`` clock cycles per bit, LSB first.

    Ports
    -----
    rx : In(1, init=1)
        The line, asynchronous to the clock; it passes through ``sync_stages`` flip-flops
        (:class:`~amaranth.lib.cdc.FFSynchronizer`) before anything looks at it.
    data : Out(stream.Signature(8, always_ready=True))
        ``valid`` for one cycle per byte received with a good stop bit.
    framing_error : Out(1)
        One-cycle pulse instead of ``data.valid`` when the stop bit is sampled low; that byte
        is dropped. After it, the receiver waits for the line to go high and fall again (a
        break, i.e. a line held low, gives one error, not a stream of them).

    Timing
    ------
    Let *c* be the first cycle in which ``rx`` shows the start bit and ``S = c + sync_stages``
    the cycle in which the synchronized line does (the falling edge is detected in cycle *S*).
    Bit *k* of the frame (0 = start, 1..8 = data, 9 = stop) is sampled in cycle
    ``S + sample_offset + k * divisor``, with ``sample_offset = max(1, round(9 * (divisor - 1)
    / 19))`` (4 for divisor 10, 1 for divisors 2 and 3): the whole number nearest to the offset
    that makes the tolerance to a fast and to a slow sender equal. A start bit sampled high is a
    glitch and is ignored.
    ``data.valid`` (or ``framing_error``) is high in cycle ``S + sample_offset + 9 * divisor +
    1``, and the receiver looks for the next falling edge from that cycle on, i.e. while the
    stop bit is still on the line, so back-to-back frames are received.

    Rate tolerance: a sender's edge can fall anywhere within one clock cycle, so with a bit
    time of ``d'`` cycles every bit is sampled within its own bit time, for any phase, iff
    ``(sample_offset + 9 * divisor + 1) / 10 <= d' <= divisor + sample_offset / 9``. For divisor
    10 that is 9.5 .. 10.44 cycles: -5 % .. +4.4 %; for divisor 3: -3.3 % .. +3.7 %; for
    divisor 2 the one-cycle uncertainty leaves 0 % .. +5.6 % (a synchronous sender at exactly
    divisor 2 is fine).
    """

    def __init__(self, divisor, sync_stages=2):
        _check_divisor(divisor)
        if not isinstance(sync_stages, int) or sync_stages < 2:
            raise ValueError(f"sync_stages must be an integer >= 2, not {sync_stages!r}")
        self._divisor = divisor
        self._sync_stages = sync_stages
        super().__init__(
            {
                "rx": In(1, init=1),
                "data": Out(stream.Signature(8, always_ready=True)),
                "framing_error": Out(1),
            }
        )

    @property
    def divisor(self):
        return self._divisor

    @property
    def sync_stages(self):
        return self._sync_stages

    @property
    def sample_offset(self):
        """Cycles from detecting the start bit's falling edge to sampling the start bit."""
        return max(1, round(9 * (self._divisor - 1) / 19))

    @property
    def latency(self):
        """Cycles from the first cycle ``rx`` shows a start bit to ``data.valid`` for it."""
        return self._sync_stages + self.sample_offset + 9 * self._divisor + 1

    def elaborate(self, platform):
        m = Module()
        divisor = self._divisor

        line = Signal(init=1)
        m.submodules.sync = FFSynchronizer(self.rx, line, init=1, stages=self._sync_stages)
        line_before = Signal(init=1)
        m.d.sync += line_before.eq(line)

        busy = Signal()
        timer = Signal(range(divisor))  # cycles until the next sample
        bit = Signal(range(FRAME_BITS))  # frame bit the next sample is of
        shifter = Signal(8)

        m.d.sync += [self.data.valid.eq(0), self.framing_error.eq(0)]

        with m.If(~busy):
            with m.If(line_before & ~line):
                m.d.sync += [busy.eq(1), bit.eq(0), timer.eq(self.sample_offset - 1)]
        with m.Elif(timer != 0):
            m.d.sync += timer.eq(timer - 1)
        with m.Else():
            m.d.sync += [timer.eq(divisor - 1), bit.eq(bit + 1)]
            with m.If(bit == 0):
                with m.If(line):
                    m.d.sync += busy.eq(0)  # start bit gone by its middle: a glitch
            with m.Elif(bit == FRAME_BITS - 1):
                m.d.sync += busy.eq(0)  # re-arm in the stop bit
                with m.If(line):
                    m.d.sync += [self.data.valid.eq(1), self.data.payload.eq(shifter)]
                with m.Else():
                    m.d.sync += self.framing_error.eq(1)
            with m.Else():
                m.d.sync += shifter.eq(Cat(shifter[1:], line))  # LSB first
        return m
