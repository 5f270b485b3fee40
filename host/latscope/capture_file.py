"""Crash-safe capture files: the device stream, byte for byte, in checksummed chunks.

A capture file is a file header followed by append-only *chunks*, each with its own CRC-32:
one METADATA chunk (JSON), DATA chunks (the raw bytes read from the device, in order) and, on
a clean close, one END chunk (JSON statistics). ``docs/capture-format.md`` gives every byte.

Because each chunk is written whole and flushed to the operating system, a capture that is
killed (``kill -9``, a crash) keeps every chunk written before: the reader skips a damaged or
cut-off chunk by scanning for the next chunk magic and tells the parser that bytes are missing
there. Sequence numbers and stream offsets in the chunk headers make every gap visible.

:class:`CaptureWriter` writes, :class:`CaptureReader` reads chunks, :func:`load_capture` reads
a whole capture into :class:`~latscope.parser.Events`. The only exception the reading side
raises is :class:`CaptureFileError`.
"""

import json
import os
import struct
import time
import zlib
from dataclasses import dataclass, field

from .identity import Identity
from .parser import Events, ParserStats, StreamParser

__all__ = ["FORMAT_VERSION", "ChunkType", "CaptureFileError", "CaptureWriter", "CaptureReader",
           "FileStats", "GAP", "Capture", "load_capture"]

#: File header: magic, format version, header size, CRC-32 of the first 12 bytes.
FILE_MAGIC = b"\x89LSC\r\n\x1a\n"
FORMAT_VERSION = 1
_FILE_HEADER = struct.Struct("<8sHHI")
#: Chunk header: magic, type, 3 reserved bytes, sequence number, payload length, stream
#: offset; then the CRC-32 of those 24 bytes and the payload.
CHUNK_MAGIC = b"LSCK"
_CHUNK_HEADER = struct.Struct("<4sB3sIIQ")
_CHUNK_CRC = struct.Struct("<I")
CHUNK_OVERHEAD = _CHUNK_HEADER.size + _CHUNK_CRC.size
#: Largest payload a reader accepts (a writer's chunks are far smaller).
MAX_PAYLOAD = 16 << 20


class ChunkType:
    METADATA = 1
    DATA = 2
    END = 3


_CHUNK_TYPES = {ChunkType.METADATA, ChunkType.DATA, ChunkType.END}


class CaptureFileError(OSError):
    """Not a capture file, unreadable, or without metadata. The message is one line naming
    the file and the byte offset: ``<path>: byte <offset>: <reason>``."""

    def __init__(self, path, offset, reason):
        super().__init__(f"{path}: byte {offset}: {reason}")
        self.path = str(path)
        self.offset = offset
        self.reason = reason

    def __str__(self):
        return self.args[0]


def _json_default(value):
    if hasattr(value, "item"):          # numpy scalars
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _file_header():
    start = FILE_MAGIC + struct.pack("<HH", FORMAT_VERSION, _FILE_HEADER.size)
    return start + struct.pack("<I", zlib.crc32(start))


def _encode_chunk(kind, sequence, offset, payload):
    header = _CHUNK_HEADER.pack(CHUNK_MAGIC, kind, bytes(3), sequence, len(payload), offset)
    return header + _CHUNK_CRC.pack(zlib.crc32(payload, zlib.crc32(header))) + payload


class CaptureWriter:
    """Writes a capture file; use as a context manager.

    ``write(data)`` buffers device bytes and writes a DATA chunk whenever ``chunk_size``
    bytes are buffered, or at the first ``write`` at least ``flush_interval`` seconds after
    the previous chunk; every chunk is flushed to the operating system at once. A crash thus
    loses at most the bytes of the last ``flush_interval`` seconds before the last ``write``
    (and less than ``chunk_size``): callers whose link can go quiet call :meth:`flush` now
    and then. ``close(final_stats)`` writes the rest, the END chunk, and syncs the file to
    disk. Leaving the ``with`` block by an exception writes the data but no END chunk, so the
    file reads as not closed cleanly.
    """

    def __init__(self, path, metadata, *, chunk_size=64 * 1024, flush_interval=0.5,
                 clock=time.monotonic):
        if not 0 < chunk_size <= MAX_PAYLOAD:
            raise ValueError(f"chunk_size must be 1 .. {MAX_PAYLOAD}")
        self.path = str(path)
        self.chunk_size = chunk_size
        self.flush_interval = flush_interval
        self._clock = clock
        self._buffer = bytearray()
        self._sequence = 0
        self.data_bytes = 0             # device bytes written into DATA chunks
        payload = json.dumps(metadata, default=_json_default).encode()
        self._file = open(path, "wb")
        self._file.write(_file_header())
        self._write_chunk(ChunkType.METADATA, payload)
        os.fsync(self._file.fileno())

    @property
    def closed(self):
        return self._file.closed

    def _write_chunk(self, kind, payload):
        self._file.write(_encode_chunk(kind, self._sequence, self.data_bytes, payload))
        self._file.flush()
        self._sequence += 1
        if kind == ChunkType.DATA:
            self.data_bytes += len(payload)
        self._last_chunk = self._clock()

    def write(self, data):
        """Appends device bytes (as received, in order)."""
        if self.closed:
            raise ValueError("write to a closed capture file")
        self._buffer += data
        while len(self._buffer) >= self.chunk_size:
            self._write_chunk(ChunkType.DATA, bytes(self._buffer[:self.chunk_size]))
            del self._buffer[:self.chunk_size]
        if self._buffer and self._clock() - self._last_chunk >= self.flush_interval:
            self.flush()

    def flush(self):
        """Writes the buffered bytes as a DATA chunk now."""
        if self._buffer and not self.closed:
            self._write_chunk(ChunkType.DATA, bytes(self._buffer))
            self._buffer.clear()

    def close(self, final_stats=None):
        """Writes the buffered bytes and the END chunk; a second call does nothing."""
        if self.closed:
            return
        try:
            self.flush()
            end = {"data_bytes": self.data_bytes, "chunks": self._sequence + 1,
                   "stats": final_stats}
            self._write_chunk(ChunkType.END, json.dumps(end, default=_json_default).encode())
            os.fsync(self._file.fileno())
        finally:
            self._file.close()

    def abandon(self):
        """Writes the buffered bytes and closes without an END chunk."""
        if not self.closed:
            try:
                self.flush()
            finally:
                self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, traceback):
        if exc_type is None:
            self.close()
        else:
            self.abandon()


#: Yielded by :class:`CaptureReader` where device bytes are missing.
GAP = type("Gap", (), {"__repr__": lambda self: "GAP", "__slots__": ()})()


@dataclass
class FileStats:
    """What the reader found. ``chunks_bad``: damaged regions skipped (each counted once,
    however many chunks it held); ``gaps``: places where device bytes are missing;
    ``truncated_bytes``: bytes of an unfinished chunk at the end (a crash while writing)."""
    chunks_ok: int = 0
    chunks_bad: int = 0
    bytes_skipped: int = 0
    truncated_bytes: int = 0
    gaps: int = 0
    data_bytes: int = 0
    complete: bool = False

    def as_dict(self):
        return dict(self.__dict__)


@dataclass
class _Chunk:
    kind: int
    sequence: int
    offset: int
    payload: bytes
    end: int            # file offset after the chunk


class CaptureReader:
    """Reads a capture file.

    The constructor reads the header and the METADATA chunk (``metadata``, a dict) and raises
    :class:`CaptureFileError` if the file is no capture file or they are unreadable. Iterating
    yields the payload of every intact DATA chunk in order, and :data:`GAP` wherever bytes of
    the device stream are missing (a damaged chunk, a cut-off end). After iterating,
    ``stats`` (:class:`FileStats`) is complete and ``end`` holds the END chunk (None if the
    writer did not close cleanly). Reading a damaged file never raises past the metadata.
    """

    BLOCK = 1 << 20         # bytes read at a time when scanning for the next chunk

    def __init__(self, path):
        self.path = str(path)
        self.stats = FileStats()
        self.end = None
        try:
            self._file = open(path, "rb")
            self.size = os.fstat(self._file.fileno()).st_size
        except OSError as error:
            raise CaptureFileError(path, 0, f"cannot open: {error.strerror or error}") from None
        try:
            self._read_header()
            chunk = self._chunk_at(_FILE_HEADER.size)
            if not isinstance(chunk, _Chunk) or chunk.kind != ChunkType.METADATA:
                raise self._error(_FILE_HEADER.size, "no intact METADATA chunk")
            try:
                self.metadata = json.loads(chunk.payload)
            except ValueError:
                raise self._error(_FILE_HEADER.size + CHUNK_OVERHEAD,
                                  "METADATA is not JSON") from None
            if not isinstance(self.metadata, dict):
                raise self._error(_FILE_HEADER.size + CHUNK_OVERHEAD,
                                  "METADATA is not a JSON object")
            self._first = chunk
        except BaseException:
            self._file.close()
            raise

    def _error(self, offset, reason):
        return CaptureFileError(self.path, offset, reason)

    def _read(self, offset, size):
        try:
            self._file.seek(offset)
            return self._file.read(size)
        except OSError as error:
            raise self._error(offset, f"read error: {error.strerror or error}") from None

    def _read_header(self):
        header = self._read(0, _FILE_HEADER.size)
        if len(header) < _FILE_HEADER.size:
            raise self._error(len(header), "not a latscope capture file (too short)")
        magic, version, size, crc = _FILE_HEADER.unpack(header)
        if magic != FILE_MAGIC:
            raise self._error(0, "not a latscope capture file (bad magic)")
        if zlib.crc32(header[:12]) != crc or size != _FILE_HEADER.size:
            raise self._error(8, "damaged file header")
        if version != FORMAT_VERSION:
            raise self._error(8, f"capture format version {version}, this reader knows "
                                 f"version {FORMAT_VERSION}")
        self.version = version

    def _chunk_at(self, offset):
        """The intact chunk at ``offset``; "truncated" if one starts there but the file ends
        first; None if there is none."""
        header = self._read(offset, CHUNK_OVERHEAD)
        if len(header) < CHUNK_OVERHEAD:
            return "truncated" if CHUNK_MAGIC.startswith(header[:4]) else None
        magic, kind, reserved, sequence, length, stream_offset = \
            _CHUNK_HEADER.unpack_from(header)
        if (magic != CHUNK_MAGIC or kind not in _CHUNK_TYPES or reserved != bytes(3)
                or length > MAX_PAYLOAD):
            return None
        end = offset + CHUNK_OVERHEAD + length
        if end > self.size:
            return "truncated"
        payload = self._read(offset + CHUNK_OVERHEAD, length)
        crc, = _CHUNK_CRC.unpack_from(header, _CHUNK_HEADER.size)
        if len(payload) != length or zlib.crc32(payload, zlib.crc32(header[:24])) != crc:
            return None
        return _Chunk(kind, sequence, stream_offset, payload, end)

    def _next_chunk(self, offset):
        """The next intact chunk after ``offset`` (None if there is none)."""
        while offset < self.size:
            block = self._read(offset, self.BLOCK + len(CHUNK_MAGIC) - 1)
            found = block.find(CHUNK_MAGIC)
            while found >= 0:
                chunk = self._chunk_at(offset + found)
                if isinstance(chunk, _Chunk):
                    return offset + found, chunk
                found = block.find(CHUNK_MAGIC, found + 1)
            offset += self.BLOCK
        return None

    def __iter__(self):
        stats = self.stats
        chunk, offset = self._first, _FILE_HEADER.size
        sequence, data_offset = 0, 0         # what the next chunk should carry
        missing = False
        while True:
            if isinstance(chunk, _Chunk):
                stats.chunks_ok += 1
                if chunk.sequence != sequence or chunk.offset != data_offset:
                    missing = True
                sequence, data_offset = chunk.sequence + 1, chunk.offset
                if chunk.kind == ChunkType.DATA:
                    if missing and stats.data_bytes:
                        stats.gaps += 1
                        yield GAP
                    missing = False
                    stats.data_bytes += len(chunk.payload)
                    data_offset += len(chunk.payload)
                    yield chunk.payload
                elif chunk.kind == ChunkType.END:
                    self._read_end(chunk)
                offset = chunk.end
            if offset >= self.size:
                if missing and stats.data_bytes:      # chunks lost after the last DATA
                    stats.gaps += 1
                    yield GAP
                break
            chunk = self._chunk_at(offset)
            if isinstance(chunk, _Chunk):
                continue
            found = self._next_chunk(offset + 1)
            if found is None:
                # Nothing intact follows: a chunk cut off by a crash, or damage at the end.
                if chunk == "truncated":
                    stats.truncated_bytes += self.size - offset
                else:
                    stats.chunks_bad += 1
                    stats.bytes_skipped += self.size - offset
                if stats.data_bytes:
                    stats.gaps += 1
                    yield GAP
                break
            stats.chunks_bad += 1
            stats.bytes_skipped += found[0] - offset
            offset, chunk = found
        self._file.close()

    def _read_end(self, chunk):
        try:
            self.end = json.loads(chunk.payload)
            self.stats.complete = True
        except ValueError:
            self.end = None          # intact CRC but not JSON: ignore, the data is what counts

    def close(self):
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


@dataclass
class Capture:
    """A capture file read into events: ``metadata`` (dict), ``events``
    (:class:`~latscope.parser.Events`, stamps corrected for pin latency), ``parser_stats``,
    ``file_stats``, ``end`` (the END chunk's JSON, None if the capture was not closed)."""
    path: str
    metadata: dict
    events: Events
    parser_stats: ParserStats
    file_stats: FileStats
    end: dict = field(default=None)

    @property
    def identity(self):
        """The device's :class:`~latscope.identity.Identity`, as its metadata stores it."""
        return Identity.from_dict(self.metadata.get("identity"))

    @property
    def clock_hz(self):
        """The capture clock (what IRQ periods and widths count); None if unknown."""
        return self.identity.clock_hz or None

    @property
    def stamp_hz(self):
        """Stamp units per second (what stamps and samples count): the capture clock,
        times 2 when DDR inputs stamp half cycles (identity ``stamp_shift``)."""
        return self.identity.stamp_hz or None

    @property
    def stats(self):
        return {"file": self.file_stats.as_dict(), "parser": self.parser_stats.as_dict()}

    @property
    def event_count(self):
        return len(self.events)

    def summary(self):
        """One line: path, events, how the file ended, damage, stream statistics (also
        ``CaptureSummary.summary``)."""
        f, p = self.file_stats, self.parser_stats
        state = "complete" if f.complete else "not closed cleanly"
        damage = ""
        if f.chunks_bad or f.truncated_bytes or f.gaps:
            damage = (f", {f.chunks_bad} bad chunk(s), {f.truncated_bytes} truncated bytes, "
                      f"{f.gaps} gap(s)")
        return (f"{self.path}: {self.event_count} events, {state}{damage}; stream: {p}")


def parser_for(metadata):
    """A :class:`StreamParser` set up from a capture's metadata (marker width, latencies)."""
    return Identity.from_dict(metadata.get("identity")).parser()


def load_capture(path, *, correct_latency=True):
    """Reads a capture file into a :class:`Capture`. Damaged chunks cost their segments;
    raises only :class:`CaptureFileError` (no capture file, unreadable, no metadata)."""
    reader = CaptureReader(path)
    metadata = reader.metadata
    try:
        parser = parser_for(metadata)
        if not correct_latency:
            parser = StreamParser(marker_width=parser.marker_width)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        reader.close()
        raise CaptureFileError(path, _FILE_HEADER.size + CHUNK_OVERHEAD,
                               f"METADATA identity unusable: {error!r}") from None
    parts = []
    for item in reader:
        if item is GAP:
            parser.gap()
        else:
            parts.append(parser.feed(item))
    parts.append(parser.finish())
    return Capture(str(path), metadata, Events.concatenate(parts), parser.stats, reader.stats,
                   reader.end)
