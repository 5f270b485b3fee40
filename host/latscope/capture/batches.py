"""A capture file's events read in batches, in bounded memory, again and again (an analysis
may need a second pass), optionally parsed in a helper process."""

import contextlib
import multiprocessing
import os
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

#: The helper process hands batches over in a memfd, which only Linux has: elsewhere
#: ``background`` reads in the caller's process (the same batches, on one core).
HELPER_AVAILABLE = hasattr(os, "memfd_create")


class CaptureBatches(CaptureInfo):
    """The events of a capture file in batches (``CaptureEvents``), in stream order,
    iterable again and again. After an iteration: ``parser_stats``, ``file_stats`` and
    ``end`` as in ``Capture``.

    ``background``: read and parse in a helper process, so that parsing (about half the
    work of an analysis) runs on another core while the caller works on the previous batch;
    at most two batches are on their way at a time (Linux only: :data:`HELPER_AVAILABLE`)."""

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
        if self.background and HELPER_AVAILABLE:
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
        """Batches from a helper process that runs :meth:`_read`. A batch's arrays come
        through a file in memory (:class:`_BatchFile`; the pipe says only how many events):
        the kernel copies them once each way, where the pipe's bytes took many small reads
        and copies. The reader reads a batch at once and says so, and the helper parses the
        next one meanwhile. Then the statistics, or the reading error."""
        context = multiprocessing.get_context("fork")
        receive, send = context.Pipe(duplex=False)
        read_back, read = context.Pipe(duplex=False)  # "batch read": the file is free
        with _BatchFile() as file:
            helper = context.Process(target=self._serve, args=(send, read_back, file), daemon=True)
            helper.start()
            send.close()
            read_back.close()
            try:
                while True:
                    kind, *detail = receive.recv()
                    if kind == "batch":
                        events = file.take(*detail)
                        with contextlib.suppress(BrokenPipeError):  # (the helper may be done)
                            read.send(True)
                        yield events
                    elif kind == "error":
                        raise CaptureFileError(*detail)
                    else:
                        self.parser_stats, self.file_stats, self.end = detail
                        return
            finally:
                receive.close()
                read.close()
                if helper.is_alive():
                    helper.kill()
                helper.join()

    def _serve(self, send: Connection, read_back: Connection, file: "_BatchFile") -> None:
        try:
            unread = False  # a batch in the file, not read yet
            for events in self._read():
                if unread:
                    read_back.recv()
                file.put(events)
                send.send(("batch", len(events)))
                unread = True
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


class _BatchFile:
    """One batch of events (stamps, values, sources) in a file in memory (Linux's memfd),
    made before the helper process forks, so both have it. Read and written with one
    system call per batch into and out of the arrays; mapped by neither process, so it
    adds to neither's resident memory (the file holds the largest batch, a few MiB)."""

    def __init__(self) -> None:
        self._fd = os.memfd_create("latscope-batch")

    def __enter__(self) -> "_BatchFile":
        return self

    def __exit__(self, *_: object) -> None:
        os.close(self._fd)

    def put(self, events: Events) -> None:
        columns = [
            np.ascontiguousarray(c).data for c in (events.stamp, events.value, events.source)
        ]
        if os.pwritev(self._fd, columns, 0) != 17 * len(events):
            raise OSError("a batch of events not written whole")

    def take(self, count: int) -> Events:
        """The batch of ``count`` events in the file (written again once said read)."""
        stamp, value = np.empty(count, np.uint64), np.empty(count, np.uint64)
        source = np.empty(count, np.uint8)
        if os.preadv(self._fd, [stamp.data, value.data, source.data], 0) != 17 * count:
            raise OSError("a batch of events not read whole")
        return Events(stamp, source, value)
