"""The IRQ trigger's delays in the analysis (issue 26; docs/protocol.md, "Triggered IRQs"):
each sample that starts at an IRQ edge of a trigger's firing carries that firing's delay,
read from the edge's own record (``IrqValue``), never from the host's settings
(:class:`TriggerDelays`); per table, the latency at each delay (:class:`DelayStats`).

Delays are in capture cycles, as the record has them; :data:`NO_DELAY` marks a sample whose
start is no triggered edge (the periodic generator's, a marker, a version 1 or 2 capture).
"""

from __future__ import annotations

import numpy as np

from latscope_defs.protocol import Source, irq_delay, irq_level, irq_triggered

__all__ = ["NO_DELAY", "WORST_DELAYS", "TriggerDelays", "DelayStats"]

#: The delay of a sample that does not start at a triggered IRQ edge.
NO_DELAY = -1
#: Delays marked worst in a table's latency-versus-delay table: those of the largest maxima.
WORST_DELAYS = 3


class TriggerDelays:
    """The asserting triggered IRQ edges seen so far (their stamps and delays), to give each
    sample starting at one its delay. A capture without a trigger keeps nothing; with one,
    two integers per interrupt."""

    def __init__(self) -> None:
        self._stamps: list[np.ndarray] = []
        self._delays: list[np.ndarray] = []
        self._joined: tuple[np.ndarray, np.ndarray] | None = None

    def feed(self, stamp: np.ndarray, source: np.ndarray, value: np.ndarray) -> None:
        """Notes the triggered asserting IRQ edges of a batch (stamps in capture order)."""
        irq = source == Source.IRQ
        if not irq.any():
            return
        value = value[irq].astype(np.int64)
        rising = (irq_level(value) == 1) & (irq_triggered(value) == 1)
        if rising.any():
            self._stamps.append(stamp[irq][rising].astype(np.int64))
            self._delays.append(irq_delay(value[rising]))
            self._joined = None

    def __bool__(self) -> bool:
        return bool(self._stamps)

    def of(self, starts: np.ndarray) -> np.ndarray:
        """The delay (capture cycles) of samples starting at ``starts`` (stamps): that of the
        triggered edge stamped there, else :data:`NO_DELAY`."""
        starts = np.asarray(starts, np.int64)
        if not self._stamps:
            return np.full(len(starts), NO_DELAY, np.int64)
        if self._joined is None:
            stamps, delays = np.concatenate(self._stamps), np.concatenate(self._delays)
            order = np.argsort(stamps, kind="stable")
            self._stamps, self._delays = [stamps[order]], [delays[order]]
            self._joined = (stamps[order], delays[order])
        stamps, delays = self._joined
        at = np.minimum(np.searchsorted(stamps, starts), len(stamps) - 1)
        return np.where(stamps[at] == starts, delays[at], NO_DELAY)


class DelayStats:
    """Per delay, a table's sample count, minimum, maximum and sum (stamp units), exact and
    bounded by the number of distinct delays, whatever the number of samples."""

    def __init__(self) -> None:
        self.delays = np.zeros(0, np.int64)
        self.count = np.zeros(0, np.int64)
        self.low = np.zeros(0, np.int64)
        self.high = np.zeros(0, np.int64)
        self.total = np.zeros(0, np.int64)

    def add(self, delays: np.ndarray, samples: np.ndarray) -> None:
        """Adds samples with their delays (those with :data:`NO_DELAY` are left out)."""
        triggered = delays != NO_DELAY
        if not triggered.any():
            return
        delays, samples = delays[triggered], samples[triggered]
        merged = np.union1d(self.delays, delays)
        columns = {}
        for name, fill in (("count", 0), ("low", np.iinfo(np.int64).max), ("high", -1)):
            column = np.full(len(merged), fill, np.int64)
            column[np.searchsorted(merged, self.delays)] = getattr(self, name)
            columns[name] = column
        total = np.zeros(len(merged), np.int64)
        total[np.searchsorted(merged, self.delays)] = self.total
        at = np.searchsorted(merged, delays)
        np.add.at(columns["count"], at, 1)
        np.minimum.at(columns["low"], at, samples)
        np.maximum.at(columns["high"], at, samples)
        np.add.at(total, at, samples)
        self.delays, self.total = merged, total
        self.count, self.low, self.high = columns["count"], columns["low"], columns["high"]

    def rows(self, ns_per_stamp: float, clock_hz: float | None) -> list[dict]:
        """One dict per delay, in delay order: ``delay_cycles``, ``delay_ns`` (None without
        the capture clock), ``samples``, ``min_ns``, ``max_ns``, ``mean_ns`` and ``worst``
        (one of the :data:`WORST_DELAYS` delays with the largest maxima; ties: the
        smaller delay)."""
        worst = set(np.lexsort((self.delays, -self.high))[:WORST_DELAYS].tolist())
        return [
            {
                "delay_cycles": int(delay),
                "delay_ns": delay * 1e9 / clock_hz if clock_hz else None,
                "samples": int(count),
                "min_ns": float(low) * ns_per_stamp,
                "max_ns": float(high) * ns_per_stamp,
                "mean_ns": float(total) / count * ns_per_stamp,
                "worst": index in worst,
            }
            for index, (delay, count, low, high, total) in enumerate(
                zip(
                    self.delays.tolist(),
                    self.count.tolist(),
                    self.low.tolist(),
                    self.high.tolist(),
                    self.total.tolist(),
                )
            )
        ]
