"""Adders that keep carry chains short on small FPGAs."""

from amaranth.hdl import *

__all__ = ["carry_select_add"]


def carry_select_add(a, b, *, width, split):
    """``(a + b) mod 2**width``, with no carry chain longer than ``max(split, width - split)``
    bits plus one: the low ``split`` bits are added on their own while the high bits are added
    twice beside them, without and with a carry in, and the low sum's carry picks one.
    (``x - ~y`` is ``x + y + 1`` in a single chain.)

    ``a`` and ``b`` are taken as ``width``-bit two's complement bit patterns, so signed
    operands wrap as they would in a ``width``-bit register.
    """
    a, b = a.as_unsigned()[:width], b.as_unsigned()[:width]
    high_width = width - split
    a_high, b_high = a[split:].as_unsigned(), b[split:].as_unsigned()
    low = a[:split] + b[:split]
    high = (a_high + b_high)[:high_width]
    high_carried = (a_high - ~b_high)[:high_width]
    return Cat(low[:split], Mux(low[split], high_carried, high))
