"""Events in stream order, as numpy arrays: what the parser delivers and every later step
(capture files, analysis, export) takes."""

from collections.abc import Iterable, Iterator
from typing import ClassVar

import numpy as np
import numpy.typing as npt

__all__ = ["Events", "EventIndex"]

#: What selects events: a slice, a boolean mask or an array of indices.
EventIndex = slice | npt.NDArray[np.bool_] | npt.NDArray[np.integer]


class Events:
    """Events in stream order: ``stamp`` (uint64 cycles), ``source`` (uint8), ``value`` (uint64).

    Indexing with a slice, mask or index array gives an :class:`Events`; iterating gives
    ``(stamp, source, value)`` tuples of Python ints."""

    __slots__ = ("stamp", "source", "value")

    def __init__(self, stamp: npt.ArrayLike, source: npt.ArrayLike, value: npt.ArrayLike) -> None:
        self.stamp: npt.NDArray[np.uint64] = np.asarray(stamp, dtype=np.uint64)
        self.source: npt.NDArray[np.uint8] = np.asarray(source, dtype=np.uint8)
        self.value: npt.NDArray[np.uint64] = np.asarray(value, dtype=np.uint64)
        if not len(self.stamp) == len(self.source) == len(self.value):
            raise ValueError("stamp, source and value must have the same length")

    @classmethod
    def empty(cls) -> "Events":
        return cls(np.empty(0, np.uint64), np.empty(0, np.uint8), np.empty(0, np.uint64))

    @classmethod
    def concatenate(cls, parts: Iterable["Events"]) -> "Events":
        """One :class:`Events` of ``parts`` in order (an empty list gives no events)."""
        present = [part for part in parts if len(part)]
        if not present:
            return cls.empty()
        if len(present) == 1:
            return present[0]
        return cls(
            np.concatenate([part.stamp for part in present]),
            np.concatenate([part.source for part in present]),
            np.concatenate([part.value for part in present]),
        )

    def of(self, *sources: int) -> "Events":
        """The events of the given sources, in stream order."""
        return self[np.isin(self.source, np.array([int(s) for s in sources], np.uint8))]

    def __len__(self) -> int:
        return len(self.stamp)

    def __getitem__(self, index: EventIndex) -> "Events":
        return Events(self.stamp[index], self.source[index], self.value[index])

    def __iter__(self) -> Iterator[tuple[int, int, int]]:
        return zip(self.stamp.tolist(), self.source.tolist(), self.value.tolist())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Events):
            return NotImplemented
        return (
            np.array_equal(self.stamp, other.stamp)
            and np.array_equal(self.source, other.source)
            and np.array_equal(self.value, other.value)
        )

    # Mutable arrays: unhashable, as Python makes any class with __eq__ and no __hash__; said
    # here so that mypy knows it too (object declares __hash__ a method, hence the ignore).
    __hash__: ClassVar[None]  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<Events: {len(self)}>"
