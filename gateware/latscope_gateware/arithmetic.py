"""Adders that keep carry chains short on small FPGAs."""

from amaranth.hdl import *

__all__ = ["carry_select_add"]


def _extended(value, width):
    """``value``'s low ``width`` bits, extended to ``width`` bits by its shape, unsigned."""
    value = Value.cast(value)
    missing = width - len(value)
    if missing <= 0:
        return value.as_unsigned()[:width]
    fill = value[-1] if value.shape().signed else Const(0, 1)
    return Cat(value, fill.replicate(missing))


def carry_select_add(a, b, *, width, split):
    """``(a + b) mod 2**width``, with no carry chain longer than ``max(split, width - split)``
    bits plus one: the low ``split`` bits are added on their own while the high bits are added
    twice beside them, without and with a carry in, and the low sum's carry picks one.
    (``x - ~y`` is ``x + y + 1`` in a single chain.)

    ``a`` and ``b`` are taken as ``width``-bit two's complement bit patterns (a narrower
    operand extended as its shape says: zeros, or its sign), so signed operands wrap as they
    would in a ``width``-bit register. (Unextended, a narrow operand's high half would be
    empty, and ``x - ~y`` would add no carry.)
    """
    a, b = _extended(a, width), _extended(b, width)
    high_width = width - split
    a_high, b_high = a[split:].as_unsigned(), b[split:].as_unsigned()
    low = a[:split] + b[:split]
    high = (a_high + b_high)[:high_width]
    high_carried = (a_high - ~b_high)[:high_width]
    return Cat(low[:split], Mux(low[split], high_carried, high))
