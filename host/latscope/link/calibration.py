"""The loop calibration: the IRQ pin's round trip the loopback self-test measures
(``latscope selftest --loopback --save``, ``Session.selftest(loopback=True, save=True)``),
kept per board in the user's calibration file and applied by later captures on that board.

The round trip is what remains of an IRQ edge's way out of the IRQ pin and back in at EDGE0
and the strobe after the IDENTIFY reply's pin latencies: the output's clock-to-pad delay, the
jumper and the input pad, in stamp units (:mod:`latscope.link.selftest`). A capture moves
every IRQ edge stamp later by it, rounded to whole stamp units (:attr:`Calibration.shift`):
the stamp an input wired straight to the IRQ pin would give the edge. So every span between
an IRQ edge and an input's event (marker, bus write, edge channel) loses the loop's output
and input delays: IRQ-to-input latencies read shorter by the shift, input-to-IRQ spans (a
trigger to its IRQ edge) longer (docs/boards.md, "Loop calibration"; docs/capture-format.md,
``calibration``).

The file (:func:`calibration_path`): ``$XDG_CONFIG_HOME/latscope/calibration.json`` (else
``~/.config/latscope/calibration.json``), one JSON object ``{"format": 1, "boards": {IDENTIFY
board name: Calibration.as_dict()}}``; a capture records the calibration it applied in its
metadata in the same form (:meth:`Calibration.as_dict`, :meth:`Calibration.from_dict`: one
definition both ways).
"""

import json
import math
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from .identity import Identity

__all__ = [
    "FILE_FORMAT",
    "Calibration",
    "irq_shift",
    "calibration_path",
    "load_calibrations",
    "saved_calibration",
    "save_calibration",
]

#: The calibration file's format number (its ``format`` key).
FILE_FORMAT = 1


@dataclass(frozen=True)
class Calibration:
    """One board's loop calibration. ``board``: the IDENTIFY reply's board name;
    ``stamp_hz``: the stamp rate it was measured at (another build's stamps differ);
    ``round_trip_units``: the mean offset of the looped inputs' stamps from the IRQ's (stamp
    units, after the pin latencies); ``spread_units``: their largest minus their smallest
    offset; ``samples``: the looped edges measured (EDGE0 and MARKER events together);
    ``saved_at``: when (ISO 8601); ``port`` and ``irq_edges``: the self-test that measured it
    (where, and how many IRQ edges it captured)."""

    board: str
    stamp_hz: int
    round_trip_units: float
    spread_units: int
    samples: int
    saved_at: str
    port: str
    irq_edges: int

    def __post_init__(self) -> None:
        checks = {
            "board": isinstance(self.board, str) and bool(self.board),
            "stamp_hz": type(self.stamp_hz) is int and self.stamp_hz > 0,
            "round_trip_units": type(self.round_trip_units) in (int, float)
            and math.isfinite(self.round_trip_units)
            and abs(self.round_trip_units) < 1 << 16,
            "spread_units": type(self.spread_units) is int and 0 <= self.spread_units <= 1,
            "samples": type(self.samples) is int and self.samples > 0,
            "saved_at": isinstance(self.saved_at, str),
            "port": isinstance(self.port, str),
            "irq_edges": type(self.irq_edges) is int and self.irq_edges >= 0,
        }
        wrong = [name for name, ok in checks.items() if not ok]
        if wrong:
            raise ValueError(
                f"{wrong[0]}: {getattr(self, wrong[0])!r} is no calibration's (a board name, "
                f"stamp_hz > 0, a finite round trip, spread 0 or 1, samples > 0, texts)"
            )

    @property
    def shift(self) -> int:
        """Whole stamp units every IRQ edge stamp moves later (:func:`irq_shift`)."""
        return irq_shift(self.round_trip_units)

    @property
    def round_trip_ns(self) -> float:
        return self.round_trip_units * 1e9 / self.stamp_hz

    def as_dict(self) -> dict[str, Any]:
        """The file's and the metadata's form; ``shift`` and ``round_trip_ns`` are added for
        readers (ignored when read back: they follow from the rest)."""
        return {**asdict(self), "shift": self.shift, "round_trip_ns": self.round_trip_ns}

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> "Calibration":
        """The inverse of :meth:`as_dict`; ValueError naming what is missing or wrong."""
        if not isinstance(value, Mapping):
            raise ValueError(f"must be an object, not {type(value).__name__}")
        names = [field.name for field in fields(cls)]
        missing = [name for name in names if name not in value]
        if missing:
            raise ValueError(f"{missing[0]}: missing")
        return cls(**{name: value[name] for name in names})

    def applies_to(self, identity: Identity) -> str:
        """Why this calibration does not apply to a device of ``identity`` ("": it does)."""
        if identity.board != self.board:
            return f"it is {self.board}'s, the device is {identity.board or 'unnamed'}"
        if identity.stamp_hz != self.stamp_hz:
            return (
                f"it was measured at {self.stamp_hz} stamps/s, this bitstream stamps at "
                f"{identity.stamp_hz}/s"
            )
        return ""

    def describe(self) -> str:
        """One line: the value, its spread and samples, when and where it was measured."""
        return (
            f"IRQ round trip {self.round_trip_units:.2f} stamp units ({self.round_trip_ns:.2f} "
            f"ns), spread {self.spread_units}, {self.samples} looped edges; IRQ stamps "
            f"+{self.shift} units; saved {self.saved_at} by the self-test on {self.port}"
        )


def irq_shift(round_trip_units: float) -> int:
    """Whole stamp units a round trip of ``round_trip_units`` moves IRQ edge stamps later:
    rounded, half a unit up (stamps are whole units)."""
    return math.floor(round_trip_units + 0.5)


def calibration_path() -> Path:
    """The user's calibration file: under ``$XDG_CONFIG_HOME`` (an absolute path; else
    ``~/.config``, the XDG base directory rule), ``latscope/calibration.json``."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".config"
    return root / "latscope" / "calibration.json"


def load_calibrations(path: Path | None = None) -> dict[str, Calibration]:
    """Every board's saved calibration, by board name (none: no file). A file that is no
    calibration file: ValueError naming it."""
    path = path or calibration_path()
    try:
        document = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise ValueError(f"{path}: not a calibration file: {error}") from None
    if not isinstance(document, dict) or document.get("format") != FILE_FORMAT:
        raise ValueError(f"{path}: not a calibration file of format {FILE_FORMAT}")
    boards = document.get("boards")
    if not isinstance(boards, dict):
        raise ValueError(f"{path}: boards: must be an object")
    try:
        return {name: Calibration.from_dict(value) for name, value in boards.items()}
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None


def saved_calibration(identity: Identity) -> tuple[Calibration | None, str]:
    """``(calibration, problem)``: the saved calibration that applies to the device
    ``identity`` (None: none saved for its board), or None and why the saved one cannot be
    used (an unreadable file, another stamp rate)."""
    try:
        saved = load_calibrations().get(identity.board)
    except ValueError as error:
        return None, str(error)
    why = saved.applies_to(identity) if saved else ""
    if why:
        return None, f"the loop calibration saved for {identity.board} does not apply: {why}"
    return saved, ""


def save_calibration(calibration: Calibration) -> Path:
    """Stores ``calibration`` as its board's (replacing an older one); returns the file."""
    path = calibration_path()
    boards = load_calibrations(path)
    boards[calibration.board] = calibration
    document = {
        "format": FILE_FORMAT,
        "boards": {name: value.as_dict() for name, value in sorted(boards.items())},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(document, indent=2) + "\n")
    temporary.replace(path)  # whole or not at all
    return path
