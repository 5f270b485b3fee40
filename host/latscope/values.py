"""The kinds of number a command line takes, each one checked ``argparse`` type with a name:
whole numbers in a range, finite seconds, durations with a unit, and specs that a reader
checks (:func:`read_by`: ``--irq-trigger``, ``--irq-delay``).

A text that is no number of the kind makes argparse say ``argument --duration: invalid
duration value: 'abc'``; a number out of range (NaN and infinity included: ``nan``,
``1e999``, ``nanh``) the same and what the range is. Every numeric
option of ``latscope`` and of the demo takes one of these, so none passes NaN, an infinity or
a number no stamp, register or clock can hold into the code behind it.
"""

import argparse
import math
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = [
    "Checked",
    "whole",
    "seconds",
    "duration",
    "text",
    "read_by",
    "miswire",
    "STAMP_MAX",
    "SECONDS_MAX",
    "DURATION_MAX",
]

#: The largest stamp or cycle number (stamps are signed 64-bit).
STAMP_MAX = 2**63 - 1
#: The longest wait, flush interval or timeout in plain seconds: a day.
SECONDS_MAX = 86_400.0
#: The longest capture or interval: 10 years.
DURATION_MAX = 10 * 366 * 86_400.0


#: The number a :class:`Checked` type gives: int (:func:`whole`) or float.
Number = TypeVar("Number", int, float)


class Checked(Generic[Number]):
    """An argparse type: ``parse(text)`` (ValueError: not a number of this kind), then
    ``check(value)``, which must hold (else ``rule`` is said). ``__name__`` is the ``name``
    argparse puts in its message."""

    def __init__(
        self,
        name: str,
        parse: Callable[[str], Number],
        check: Callable[[Number], bool],
        rule: str,
    ) -> None:
        self.__name__ = name
        self.parse: Callable[[str], Number] = parse
        self.check: Callable[[Number], bool] = check
        self.rule = rule

    def __call__(self, text: str) -> Number:
        try:
            value = self.parse(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid {self.__name__} value: {text!r}") from None
        if not self.check(value):
            raise argparse.ArgumentTypeError(
                f"invalid {self.__name__} value: {text!r} (must be {self.rule})"
            )
        return value


def whole(name: str, low: int | None = 0, high: int = STAMP_MAX) -> Checked[int]:
    """A whole number (decimal, or 0x, 0o, 0b) from ``low`` (None: any) to ``high``."""
    rule = f"{low} .. {high}" if low is not None else f"at most {high}"
    return Checked(
        name,
        lambda text: int(text, 0),
        lambda value: (low is None or value >= low) and value <= high,
        rule,
    )


def _in(high: float) -> Callable[[float], bool]:
    """Finite, more than 0, at most ``high`` (NaN fails every comparison)."""
    return lambda value: math.isfinite(value) and 0 < value <= high


def seconds(name: str = "seconds", high: float = SECONDS_MAX) -> Checked[float]:
    """A number of seconds, more than 0 and at most ``high``."""
    return Checked(name, float, _in(high), f"more than 0 and at most {high:g} s")


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _parse_duration(text: str) -> float:
    scale = _UNITS.get(text[-1:].lower())
    return float(text[:-1] if scale else text) * (scale or 1)


def duration(name: str = "duration") -> Checked[float]:
    """Seconds from ``90``, ``90s``, ``15m``, ``8h`` or ``1d``: more than 0, at most
    :data:`DURATION_MAX`."""
    return Checked(
        name,
        _parse_duration,
        _in(DURATION_MAX),
        "more than 0 and at most 10 years: e.g. 30, 15m, 8h, 1d",
    )


def text(value: str) -> str:
    """Free text stored in a capture file (``--info``): bytes that are no UTF-8 reach Python
    as lone surrogates, which no file or terminal can take."""
    try:
        value.encode()
    except UnicodeEncodeError:
        raise argparse.ArgumentTypeError(
            f"invalid text value: {value!r} (not UTF-8 text)"
        ) from None
    return value


def read_by(name: str, read: Callable[[str], object]) -> Callable[[str], str]:
    """An argparse type for a spec that ``read`` reads (its ValueError says what is wrong,
    which becomes argparse's message: ``argument --irq-delay: stop '10' is not after start
    '50'``); the text itself when it reads. ``name`` is the type's name in argparse."""

    def checked(spec: str) -> str:
        try:
            read(spec)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
        return spec

    checked.__name__ = name
    return checked


#: ``--miswire KIND:PINS`` kinds and how many pins each takes (the harness's grammar,
#: sim/harness/marker_wiring.h, which stays the authority: this only lets a bad spec fail
#: before the simulator is built and started).
_MISWIRE_KINDS = {"swap": (2, 2), "stuck-low": (1, 1), "stuck-high": (1, 1)}
_MISWIRE_SHORTS = ("short-and", "short-or")
#: The simulated marker wires: D0..D15 (or 0..15) and STROBE (16).
_MARKER_WIRES = 17


def _wire(name: str) -> int:
    name = name.strip().upper()
    if name == "STROBE":
        return 16
    digits = name[1:] if name.startswith("D") else name
    if not (digits.isdigit() and len(digits) <= 2 and int(digits) < _MARKER_WIRES):
        raise ValueError(name)
    return int(digits)


def miswire(spec: str) -> str:
    """A ``--miswire`` spec (sim:soc's wiring faults): swap:A,B, stuck-low:A, stuck-high:A,
    short-and:A,B[,..], short-or:A,B[,..]; pins 0..16, D0..D15 or STROBE."""
    kind, colon, pins = spec.partition(":")
    low, high = _MISWIRE_KINDS.get(kind, (2, _MARKER_WIRES) if kind in _MISWIRE_SHORTS else (0, -1))
    try:
        wires = [_wire(pin) for pin in pins.split(",")] if colon else []
    except ValueError:
        wires = []
    if not (low <= len(wires) <= high) or (kind == "swap" and len(set(wires)) != 2):
        raise argparse.ArgumentTypeError(
            f"invalid wiring fault value: {spec!r} (swap:A,B, stuck-low:A, stuck-high:A, "
            f"short-and:A,B[,..] or short-or:A,B[,..]; pins 0..16, D0..D15 or STROBE)"
        )
    return spec
