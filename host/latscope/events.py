"""Events in stream order, as numpy arrays: what the parser delivers and every later step
(capture files, analysis, export) takes."""

import numpy as np

__all__ = ["Events"]


class Events:
    """Events in stream order: ``stamp`` (uint64 cycles), ``source`` (uint8), ``value`` (uint64).

    Indexing with a slice, mask or index array gives an :class:`Events`; iterating gives
    ``(stamp, source, value)`` tuples of Python ints."""

    __slots__ = ("stamp", "source", "value")

    def __init__(self, stamp, source, value):
        self.stamp = np.asarray(stamp, dtype=np.uint64)
        self.source = np.asarray(source, dtype=np.uint8)
        self.value = np.asarray(value, dtype=np.uint64)
        if not len(self.stamp) == len(self.source) == len(self.value):
            raise ValueError("stamp, source and value must have the same length")

    @classmethod
    def empty(cls):
        return cls(np.empty(0, np.uint64), np.empty(0, np.uint8), np.empty(0, np.uint64))

    @classmethod
    def concatenate(cls, parts):
        """One :class:`Events` of ``parts`` in order (an empty list gives no events)."""
        parts = [part for part in parts if len(part)]
        if not parts:
            return cls.empty()
        if len(parts) == 1:
            return parts[0]
        return cls(
            np.concatenate([part.stamp for part in parts]),
            np.concatenate([part.source for part in parts]),
            np.concatenate([part.value for part in parts]),
        )

    def of(self, *sources):
        """The events of the given sources, in stream order."""
        return self[np.isin(self.source, np.array([int(s) for s in sources], np.uint8))]

    def __len__(self):
        return len(self.stamp)

    def __getitem__(self, index):
        return Events(self.stamp[index], self.source[index], self.value[index])

    def __iter__(self):
        return zip(self.stamp.tolist(), self.source.tolist(), self.value.tolist())

    def __eq__(self, other):
        if not isinstance(other, Events):
            return NotImplemented
        return (
            np.array_equal(self.stamp, other.stamp)
            and np.array_equal(self.source, other.source)
            and np.array_equal(self.value, other.value)
        )

    __hash__ = None

    def __repr__(self):
        return f"<Events: {len(self)}>"
