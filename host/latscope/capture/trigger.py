"""The IRQ trigger as a capture asks for it (``latscope capture --irq-trigger
TEST:POINT[/ARG[/MASK]] --irq-delay START:STOP:STEP``,
:meth:`latscope.api.Session.configure_trigger`): a marker and a delay sweep in ns or
capture cycles, made the device's :class:`TriggerSettings` for one appliance's capture clock
(:func:`trigger_settings`).

How it combines with the periodic generator (docs/protocol.md, "Triggered IRQs"): the trigger
drives the IRQ pin and the generator's own edges never show. With the generator on (the
default), each of its asserting edges *arms* one firing: the first matching marker after it
fires the IRQ ``delay`` later, so the interrupts come at most at the generator's rate. With
the generator off (``--no-irq``), every matching marker the trigger is ready for fires.
"""

from __future__ import annotations

import re
from enum import IntEnum

from latscope_defs.markers import ARG_BITS, Point, Test

from ..link.device import IrqSettings, TriggerSettings
from ..link.identity import Identity

__all__ = [
    "check_delays",
    "parse_delays",
    "parse_marker",
    "trigger_settings",
    "describe_trigger",
]

_DELAY = re.compile(r"\s*(\d+(?:\.\d*)?)\s*(ns|us|cycles|c)?\s*$")
_UNIT_NS = {"ns": 1.0, "us": 1e3}


def _named(enum: type[IntEnum], text: str) -> int:
    """An enum member by name (any case) or number."""
    try:
        return int(text, 0)
    except ValueError:
        try:
            return int(enum[text.upper()])
        except KeyError:
            names = ", ".join(member.name for member in enum)
            raise ValueError(f"no {enum.__name__.lower()} {text!r} (one of {names})") from None


def parse_marker(text: str) -> tuple[int, int, int, int]:
    """``TEST:POINT[/ARG[/MASK]]`` (names of docs/markers.md or numbers) as ``(test, point,
    arg, arg_mask)``: with ARG alone every argument bit must match; without it any argument."""
    match = re.fullmatch(r"([^:/]+):([^:/]+)(?:/([^/]+)(?:/([^/]+))?)?", text.strip())
    if not match:
        raise ValueError(f"not TEST:POINT[/ARG[/MASK]]: {text!r}")
    test, point, arg, mask = match.groups()
    full = (1 << ARG_BITS) - 1
    arg_value = int(arg, 0) if arg is not None else 0
    arg_mask = int(mask, 0) if mask is not None else (full if arg is not None else 0)
    if not (0 <= arg_value <= full and 0 <= arg_mask <= full):
        raise ValueError(f"marker argument and mask are {ARG_BITS} bits: {text!r}")
    return _named(Test, test), _named(Point, point), arg_value, arg_mask


def _delay(text: str) -> tuple[float, str | None]:
    """A delay as ``(ns, "ns")`` (from ``120ns``, ``1.5us``) or ``(cycles, None)`` (from
    ``37``, ``37c``, ``37cycles``): what it says, before any clock."""
    match = _DELAY.match(text)
    if not match:
        raise ValueError(f"not a delay (ns, us or cycles): {text!r}")
    number, unit = float(match.group(1)), match.group(2)
    if unit in _UNIT_NS:
        return number * _UNIT_NS[unit], "ns"
    if not number.is_integer():
        raise ValueError(f"a delay in cycles is a whole number: {text!r}")
    return number, None


def check_delays(text: str) -> list[tuple[float, str | None]]:
    """The parts of ``START:STOP:STEP`` or ``DELAY`` (:func:`_delay` each), checked as far
    as they can be without a clock: a step of 0 and a stop not after the start, where the
    three are in one unit; what needs the appliance's clock (a step that rounds to 0, units
    mixed, the delay's range) waits for :func:`parse_delays`. ``latscope capture`` checks
    this, and :func:`parse_marker`, before it opens a port."""
    parts = text.split(":")
    if len(parts) not in (1, 3):
        raise ValueError(f"not START:STOP:STEP: {text!r}")
    delays = [_delay(part) for part in parts]
    if len(delays) == 3 and len({unit for _, unit in delays}) == 1:
        (start, _), (stop, _), (step, _) = delays
        if step <= 0:
            raise ValueError(f"step {parts[2]!r} is not above 0")
        if stop <= start:
            raise ValueError(f"stop {parts[1]!r} is not after start {parts[0]!r}")
    return delays


def parse_delays(text: str, clock_hz: float) -> tuple[int, int, int]:
    """``START:STOP:STEP`` (or ``DELAY`` alone: one delay) as capture cycles ``(start, stop,
    step)``, each in ns, us or cycles, rounded to the capture clock ``clock_hz``: the delays
    ``range(start, stop, step)``, over and over."""
    parts = text.split(":")
    cycles = [
        round(value * clock_hz / 1e9) if unit else int(value) for value, unit in check_delays(text)
    ]
    if len(cycles) == 1:
        return cycles[0], cycles[0] + 1, 1
    start, stop, step = cycles
    if step < 1:
        raise ValueError(f"step {parts[2]!r} is below one capture cycle ({1e9 / clock_hz:g} ns)")
    if stop <= start:
        raise ValueError(f"stop {parts[1]!r} is not after start {parts[0]!r}")
    return start, stop, step


def trigger_settings(
    marker: str, delays: str, identity: Identity, irq: IrqSettings
) -> TriggerSettings:
    """The device's trigger for ``marker`` (:func:`parse_marker`) and ``delays``
    (:func:`parse_delays`) on the appliance ``identity``: armed by the periodic generator
    ``irq`` when it is on, the pin asserted as long as its width (link clock cycles, made
    capture cycles)."""
    test, point, arg, arg_mask = parse_marker(marker)
    start, stop, step = parse_delays(delays, identity.clock_hz)
    width = max(1, round(irq.width * identity.clock_hz / identity.irq_clock_hz))
    return TriggerSettings.on_marker(
        test,
        point,
        arg,
        arg_mask,
        start=start,
        stop=stop,
        step=step,
        width=width,
        arm=irq.enable,
    )


def describe_trigger(settings: TriggerSettings, identity: Identity) -> str:
    """The trigger as used, in one line (what ``latscope capture`` prints)."""
    ns = 1e9 / identity.clock_hz
    delays = settings.delays()
    how = "armed by the periodic generator" if settings.arm else "every matching marker"
    return (
        f"IRQ trigger: delays {delays[0]}..{delays[-1]} step {settings.step} capture cycles "
        f"({delays[0] * ns:g}..{delays[-1] * ns:g} ns step {settings.step * ns:g} ns at "
        f"{identity.clock_hz / 1e6:g} MHz), {len(delays)} delays; {how}"
    )
