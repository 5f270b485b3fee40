"""A capture file's events read in batches, in bounded memory, again and again (an analysis
may need a second pass), optionally parsed in a helper process."""

import contextlib
import mmap
import multiprocessing
from collections.abc import Iterator
from multiprocessing.connection import Connection

import numpy as np

from ..events import Events
from ..link.parser import ParserStats
from .file import CaptureEvents, CaptureFileError, CaptureInfo, FileStats, PathLike, summary_line
from .metadata import JsonObject

__all__ = ["BATCH_BYTES", "CaptureBatches"]

#: Stream bytes per batch (at most that many events, about 16 MB of arrays).
BATCH_BYTES = 1 << 20


class CaptureBatches(CaptureInfo):
    """The events of a capture file in batches (``CaptureEvents``), in stream order,
    iterable again and again. After an iteration: ``parser_stats``, ``file_stats`` and
    ``end`` as in ``Capture``.

    ``background``: read and parse in a helper process, so that parsing (about half the
    work of an analysis) runs on another core while the caller works on the previous batch;
    at most two batches are on their way at a time."""

    def __init__(
        self, path: PathLike, *, batch_bytes: int = BATCH_BYTES, background: bool = False
    ) -> None:
        self.path = str(path)
        self.batch_bytes = batch_bytes
        self.background = background
        stream = CaptureEvents(path)  # checks the file and its metadata now
        stream.reader.close()
        self.metadata = stream.metadata
        self.parser_stats: ParserStats | None = None
        self.file_stats: FileStats | None = None
        self.end: JsonObject | None = None

    def __iter__(self) -> Iterator[Events]:
        if self.background:
            return self._from_helper()
        return self._read()

    def _read(self) -> Iterator[Events]:
        stream = CaptureEvents(self.path, batch_bytes=self.batch_bytes)
        try:
            yield from stream
        finally:
            stream.reader.close()
        self.parser_stats, self.file_stats, self.end = (
            stream.parser_stats,
            stream.file_stats,
            stream.end,
        )

    def _from_helper(self) -> Iterator[Events]:
        """Batches from a helper process that runs :meth:`_read`. A batch comes through a
        slot of memory shared with the helper (:class:`_Slots`: the pipe only says which
        slot and how many events; the batch is copied out at once and the slot handed back,
        so the helper parses the next batch meanwhile, as with the pipe alone), or as the
        three arrays' bytes over the pipe when it does not fit a slot; then the statistics,
        or the reading error."""
        context = multiprocessing.get_context("fork")
        slots = _Slots(1, _slot_events(self.batch_bytes))
        receive, send = context.Pipe(duplex=False)
        freed, free = context.Pipe(duplex=False)  # slots handed back to the helper
        helper = context.Process(target=self._serve, args=(send, freed, slots), daemon=True)
        helper.start()
        send.close()
        freed.close()
        try:
            while True:
                kind, *detail = receive.recv()
                if kind == "slot":
                    slot, count = detail
                    yield slots.take(slot, count)
                    with contextlib.suppress(BrokenPipeError):  # (the helper may be done)
                        free.send(slot)
                elif kind == "bytes":
                    stamp, source, value = (receive.recv_bytes() for _ in range(3))
                    yield Events(
                        np.frombuffer(stamp, np.uint64),
                        np.frombuffer(source, np.uint8),
                        np.frombuffer(value, np.uint64),
                    )
                elif kind == "error":
                    raise CaptureFileError(*detail)
                else:
                    self.parser_stats, self.file_stats, self.end = detail
                    return
        finally:
            receive.close()
            free.close()
            if helper.is_alive():
                helper.kill()
            helper.join()
            slots.close()

    def _serve(self, send: Connection, freed: Connection, slots: "_Slots") -> None:
        try:
            idle = list(range(slots.count))
            for events in self._read():
                if len(events) > slots.events:
                    send.send(("bytes",))
                    for column in (events.stamp, events.source, events.value):
                        send.send_bytes(np.ascontiguousarray(column).data)
                    continue
                slot = idle.pop() if idle else freed.recv()
                slots.put(slot, events)
                send.send(("slot", slot, len(events)))
            send.send(("done", self.parser_stats, self.file_stats, self.end))
        except CaptureFileError as error:
            send.send(("error", error.path, error.offset, error.reason))
        except (BrokenPipeError, EOFError, KeyboardInterrupt):
            pass  # the reader stopped early
        finally:
            send.close()

    def summary(self, event_count: int) -> str:
        """``Capture.summary``'s line after an iteration that read ``event_count`` events."""
        if self.file_stats is None or self.parser_stats is None:
            raise RuntimeError(f"{self.path}: no summary before the batches were read")
        return summary_line(self.path, event_count, self.file_stats, self.parser_stats)


def _slot_events(batch_bytes: int) -> int:
    """Events a slot holds: a batch's at most (``CaptureEvents``: one per stream byte), and
    room for the open segment that may come with it (larger batches take the pipe)."""
    return batch_bytes + (batch_bytes >> 2) + 1024


class _Slots:
    """``count`` buffers of ``events`` events each (stamps, values, sources) in one anonymous
    shared mapping made before the helper process forks, so both see it. Pages never
    written take no memory."""

    def __init__(self, count: int, events: int) -> None:
        self.count, self.events = count, events
        self._map = mmap.mmap(-1, count * events * _EVENT_BYTES)

    def _columns(self, slot: int, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        at = slot * self.events * _EVENT_BYTES
        stamp = np.frombuffer(self._map, np.uint64, count, at)
        value = np.frombuffer(self._map, np.uint64, count, at + 8 * self.events)
        source = np.frombuffer(self._map, np.uint8, count, at + 16 * self.events)
        return stamp, source, value

    def put(self, slot: int, events: Events) -> None:
        for column, new in zip(
            self._columns(slot, len(events)), (events.stamp, events.source, events.value)
        ):
            column[:] = new

    def take(self, slot: int, count: int) -> Events:
        """The batch in ``slot``, copied out (the slot is written again once handed back).
        The slot's pages then leave this process's resident memory (the helper's mapping
        keeps them), so that they do not add to its peak."""
        events = Events(*(column.copy() for column in self._columns(slot, count)))
        size = self.events * _EVENT_BYTES
        self._map.madvise(mmap.MADV_DONTNEED, slot * size, size)
        return events

    def close(self) -> None:
        self._map.close()


#: Bytes per event in a slot: stamp and value (uint64), source (uint8).
_EVENT_BYTES = 17
