"""A capture file's events read in batches, in bounded memory, again and again (an analysis
may need a second pass), optionally parsed in a helper process."""

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
        """Batches from a helper process that runs :meth:`_read` (over a pipe: the three
        arrays of a batch as bytes, then the statistics, or the reading error)."""
        receive, send = multiprocessing.get_context("fork").Pipe(duplex=False)
        helper = multiprocessing.get_context("fork").Process(
            target=self._serve, args=(send,), daemon=True
        )
        helper.start()
        send.close()
        try:
            while True:
                kind = receive.recv()
                if kind == "batch":
                    stamp, source, value = (receive.recv_bytes() for _ in range(3))
                    yield Events(
                        np.frombuffer(stamp, np.uint64),
                        np.frombuffer(source, np.uint8),
                        np.frombuffer(value, np.uint64),
                    )
                elif kind == "error":
                    raise CaptureFileError(*receive.recv())
                else:
                    self.parser_stats, self.file_stats, self.end = receive.recv()
                    return
        finally:
            receive.close()
            if helper.is_alive():
                helper.kill()
            helper.join()

    def _serve(self, send: Connection) -> None:
        try:
            for events in self._read():
                send.send("batch")
                for column in (events.stamp, events.source, events.value):
                    send.send_bytes(np.ascontiguousarray(column).data)
            send.send("done")
            send.send((self.parser_stats, self.file_stats, self.end))
        except CaptureFileError as error:
            send.send("error")
            send.send((error.path, error.offset, error.reason))
        except (BrokenPipeError, KeyboardInterrupt):
            pass  # the reader stopped early
        finally:
            send.close()

    def summary(self, event_count: int) -> str:
        """``Capture.summary``'s line after an iteration that read ``event_count`` events."""
        if self.file_stats is None or self.parser_stats is None:
            raise RuntimeError(f"{self.path}: no summary before the batches were read")
        return summary_line(self.path, event_count, self.file_stats, self.parser_stats)
