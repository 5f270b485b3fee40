"""How much of a code path the interrupts met, and where the code kept them masked: the
ground truth's addresses (:mod:`~latscope.simulated.cpu_truth`) against the firmware's
instructions and functions (:mod:`~latscope.simulated.code_map`).

An interrupt *meets* the instruction it returns to (mepc): it arrived before that
instruction ran. A path's coverage is the share of its instructions that some interrupt
met; an instruction that only ever runs masked cannot be met.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .code_map import CodeMap, Location
from .cpu_truth import MaskedStretches

__all__ = ["Coverage", "MaskedRegion", "coverage", "masked_regions"]


@dataclass(frozen=True)
class Coverage:
    """``path``: the path's instruction addresses (int64, ascending); ``hits``: for each,
    how many interrupts met it."""

    path: np.ndarray
    hits: np.ndarray

    @property
    def met(self) -> int:
        """How many distinct instructions of the path an interrupt met."""
        return int(np.count_nonzero(self.hits))

    @property
    def fraction(self) -> float:
        """met / all instructions of the path (0 for an empty path)."""
        return self.met / len(self.path) if len(self.path) else 0.0

    @property
    def missed(self) -> np.ndarray:
        """The instruction addresses no interrupt met."""
        return self.path[self.hits == 0]


def coverage(
    return_addresses: Sequence[int] | np.ndarray, path: Sequence[int] | np.ndarray
) -> Coverage:
    """Coverage of the instructions ``path`` (addresses, e.g. from
    :meth:`CodeMap.function_instructions`) by interrupts that returned to
    ``return_addresses`` (:attr:`Interrupts.return_addresses`); interrupts outside the path
    do not count."""
    path = np.unique(np.asarray(path, dtype=np.int64))
    addresses = np.asarray(return_addresses, dtype=np.int64)
    index = np.searchsorted(path, addresses)
    inside = index < len(path)
    inside[inside] = path[index[inside]] == addresses[inside]
    return Coverage(path, np.bincount(index[inside], minlength=len(path)))


@dataclass(frozen=True)
class MaskedRegion:
    """The code between one masking instruction and one unmasking instruction, with every
    stretch of cycles it kept the interrupt masked: ``start``/``end``, the two instructions
    (:class:`Location`; for a handler the trap vector and its mret); ``stretches``, the
    indexes into :class:`MaskedStretches`; ``cycles``, their lengths."""

    start: Location
    end: Location
    stretches: np.ndarray
    cycles: np.ndarray

    @property
    def function(self) -> str | None:
        return self.start.function

    @property
    def longest(self) -> int:
        return int(self.cycles.max())

    def __str__(self) -> str:
        return (
            f"0x{self.start.address:08x}..0x{self.end.address:08x} {self.start} .. "
            f"{self.end}: {len(self.cycles)} times, {int(self.cycles.min())}.."
            f"{self.longest} cycles"
        )


def masked_regions(stretches: MaskedStretches, code_map: CodeMap) -> list[MaskedRegion]:
    """The masked stretches grouped by the instructions that began and ended them, longest
    first: one :class:`MaskedRegion` per (start_pc, end_pc)."""
    pairs = np.stack([stretches.start_pcs, stretches.end_pcs], axis=1)
    if not len(pairs):
        return []
    keys, group = np.unique(pairs, axis=0, return_inverse=True)
    group = group.reshape(-1)
    lengths = stretches.lengths
    regions = []
    for number, (start_pc, end_pc) in enumerate(keys):
        members = np.flatnonzero(group == number)
        regions.append(
            MaskedRegion(
                code_map.locate(start_pc), code_map.locate(end_pc), members, lengths[members]
            )
        )
    regions.sort(key=lambda region: (-region.longest, region.start.address))
    return regions
