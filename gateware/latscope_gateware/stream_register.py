"""A register slice for ``lib.stream`` streams: cuts every combinational path through it."""

from amaranth.hdl import *
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["StreamRegister"]


class StreamRegister(wiring.Component):
    """Skid buffer: ``o.valid``/``o.payload`` and ``i.ready`` all come straight from
    flip-flops, so no combinational path runs from ``i`` to ``o`` or from ``o.ready`` to
    ``i.ready``. That is what lets components in a row close timing one at a time.

    One cycle of latency, order preserved. With ``full_rate`` (the default) it passes one
    transfer per cycle and holds up to two payloads: the output register and a skid register
    that catches the payload accepted in the cycle ``o.ready`` fell (``i.ready`` was already
    promised). Without, it holds one payload and takes the next only once that one has left
    (``i.ready`` is ``~o.valid``): a transfer every other cycle, for half the flip-flops and
    no multiplexer, where the stream beyond it is slower than that anyway.
    """

    def __init__(self, shape, *, full_rate=True):
        self._full_rate = full_rate
        super().__init__(
            {
                "i": In(stream.Signature(shape)),
                "o": Out(stream.Signature(shape)),
            }
        )

    def elaborate(self, platform):
        m = Module()
        if not self._full_rate:
            m.d.comb += self.i.ready.eq(~self.o.valid)
            with m.If(self.o.ready):
                m.d.sync += self.o.valid.eq(0)
            with m.If(self.i.ready):
                m.d.sync += [self.o.payload.eq(self.i.payload), self.o.valid.eq(self.i.valid)]
            return m

        skid = Signal.like(self.i.payload)
        skid_valid = Signal()

        m.d.comb += self.i.ready.eq(~skid_valid)
        with m.If(self.o.ready | ~self.o.valid):
            # The output register is free this cycle: refill it, from the skid first.
            with m.If(skid_valid):
                m.d.sync += [self.o.payload.eq(skid), self.o.valid.eq(1), skid_valid.eq(0)]
            with m.Else():
                m.d.sync += [self.o.payload.eq(self.i.payload), self.o.valid.eq(self.i.valid)]
        with m.Elif(~skid_valid):
            # Stalled with the skid free: it takes whatever is offered (its payload register
            # loads whether or not `i.valid` is high, so `i.valid` is not on that wide enable).
            m.d.sync += [skid.eq(self.i.payload), skid_valid.eq(self.i.valid)]
        return m
