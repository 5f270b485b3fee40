"""Crash-safe capture files: the device stream, byte for byte, in checksummed chunks
(``docs/capture-format.md`` gives every byte and what a reader guarantees).

:class:`CaptureWriter` writes, :class:`CaptureReader` reads chunks, :class:`CaptureEvents`
reads a capture as batches of events in bounded memory, :func:`load_capture` reads a whole
capture into :class:`~latscope.events.Events`. The only exception the reading side raises is
:class:`CaptureFileError`.
"""

import enum
import json
import os
import stat
import struct
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, BinaryIO, Final, Literal, TypedDict

from ..events import Events
from ..link.calibration import Calibration
from ..link.identity import Identity
from ..link.parser import ParserStats, StreamParser
from .metadata import (
    JsonObject,
    MetadataCopy,
    MetadataError,
    check_end,
    check_metadata,
    check_text,
    choose_copy,
    without_surrogates,
)

#: A file's path as callers give it.
PathLike = str | os.PathLike[str]

__all__ = [
    "NOT_CLOSED",
    "FORMAT_VERSION",
    "ChunkType",
    "CaptureFileError",
    "CaptureWriter",
    "CaptureReader",
    "CaptureEvents",
    "CaptureInfo",
    "FileStats",
    "GAP",
    "Capture",
    "load_capture",
    "calibration_of",
    "irq_shift_of",
    "summary_line",
    "file_notes",
    "file_header",
    "encode_chunk",
]

#: File header: magic, format version, header size, CRC-32 of the first 12 bytes.
FILE_MAGIC = b"\x89LSC\r\n\x1a\n"
#: 2: METADATA copies after the first DATA chunk, every METADATA_EVERY DATA chunks and in
#: END. Version 1 files (no copies) read the same way.
FORMAT_VERSION = 2
KNOWN_VERSIONS = (1, 2)
_FILE_HEADER = struct.Struct("<8sHHI")
HEADER_SIZE = _FILE_HEADER.size
#: Chunk header: magic, type, 3 reserved bytes, sequence number, payload length, stream
#: offset; then the CRC-32 of those 24 bytes and the payload.
CHUNK_MAGIC = b"LSCK"
_CHUNK_HEADER = struct.Struct("<4sB3sIIQ")
_CHUNK_CRC = struct.Struct("<I")
CHUNK_OVERHEAD = _CHUNK_HEADER.size + _CHUNK_CRC.size
#: Largest payload a reader accepts (a writer's chunks are far smaller).
MAX_PAYLOAD = 16 << 20
#: A METADATA copy follows the first DATA chunk and every this many DATA chunks.
METADATA_EVERY = 64
#: DATA chunks the reader holds while it looks for the stream bytes before them (chunks
#: out of order, e.g. two swapped), at most this many and REORDER_BYTES of payload.
REORDER_CHUNKS = 16
REORDER_BYTES = MAX_PAYLOAD


class ChunkType:
    METADATA = 1
    DATA = 2
    END = 3


_CHUNK_TYPES = {ChunkType.METADATA, ChunkType.DATA, ChunkType.END}


class CaptureFileError(OSError):
    """Not a capture file, unreadable, or without usable metadata. The message is one line
    naming the file and the byte offset: ``<path>: byte <offset>: <reason>``."""

    def __init__(self, path: PathLike, offset: int, reason: str) -> None:
        super().__init__(f"{path}: byte {offset}: {reason}")
        self.path = str(path)
        self.offset = offset
        self.reason = reason

    def __str__(self) -> str:
        return str(self.args[0])


def _json_default(value: object) -> object:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def file_header() -> bytes:
    start = FILE_MAGIC + struct.pack("<HH", FORMAT_VERSION, _FILE_HEADER.size)
    return start + struct.pack("<I", zlib.crc32(start))


def encode_chunk(kind: int, sequence: int, offset: int, payload: bytes) -> bytes:
    header = _CHUNK_HEADER.pack(CHUNK_MAGIC, kind, bytes(3), sequence, len(payload), offset)
    return header + _CHUNK_CRC.pack(zlib.crc32(payload, zlib.crc32(header))) + payload


def _metadata_payload(path: str, metadata: JsonObject) -> bytes:
    """The METADATA chunk's JSON; ValueError if the reader would refuse it."""
    try:
        payload = json.dumps(metadata, default=_json_default, allow_nan=False).encode()
        check_metadata(json.loads(payload))  # what a reader will see
        check_text(json.loads(payload))
    except (TypeError, ValueError) as error:
        raise ValueError(f"{path}: metadata not written: {error}") from None
    return payload


class CaptureWriter:
    """Writes a capture file; use as a context manager.

    ``metadata``: a JSON object the reader accepts (``metadata.check_metadata``:
    ``identity`` with ``clock_hz`` at least), else ValueError before anything is written.
    ``write(data)`` buffers device bytes and writes a DATA chunk whenever ``chunk_size``
    bytes are buffered, or at the first ``write`` at least ``flush_interval`` seconds after
    the previous chunk; every chunk is flushed to the operating system at once. A crash thus
    loses at most the bytes of the last ``flush_interval`` seconds before the last ``write``
    (and less than ``chunk_size``): callers whose link can go quiet call :meth:`flush` now
    and then. A copy of the METADATA chunk follows the first DATA chunk and every
    ``metadata_every``-th. ``close(final_stats)`` writes the rest, the END chunk (with the
    metadata once more), and syncs the file to disk. Leaving the ``with`` block by an
    exception writes the data but no END chunk, so the file reads as not closed cleanly.
    Write errors are OSErrors with the file as their ``filename`` (named once:
    ``/dev/full: No space left on device``).

    Because each chunk is written whole and flushed to the operating system, a capture that is
    killed (``kill -9``, a crash) keeps every chunk written before: the reader skips a damaged
    or cut-off chunk by scanning for the next chunk magic and tells the parser that bytes are
    missing there. Stream offsets in the chunk headers make every gap visible, and the copies of
    the metadata make a damaged file header or first METADATA chunk cost nothing else.
    """

    def __init__(
        self,
        path: PathLike,
        metadata: JsonObject,
        *,
        chunk_size: int = 64 * 1024,
        flush_interval: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
        metadata_every: int = METADATA_EVERY,
    ) -> None:
        if not 0 < chunk_size <= MAX_PAYLOAD:
            raise ValueError(f"chunk_size must be 1 .. {MAX_PAYLOAD}")
        self.path = str(path)
        self.chunk_size = chunk_size
        self.flush_interval = flush_interval
        self.metadata_every = max(1, int(metadata_every))
        self._clock = clock
        self._buffer = bytearray()
        self._sequence = 0
        self._data_chunks = 0
        self.data_bytes = 0  # device bytes written into DATA chunks
        self._metadata = _metadata_payload(self.path, metadata)
        try:
            self._file = open(path, "wb")
        except OSError as error:
            raise OSError(error.errno, f"cannot write: {error.strerror}", self.path) from None
        self._file.write(file_header())
        self._write_chunk(ChunkType.METADATA, self._metadata)
        self._sync()

    @property
    def closed(self) -> bool:
        return self._file.closed

    def _sync(self) -> None:
        try:
            os.fsync(self._file.fileno())
        except OSError as error:
            raise OSError(error.errno, error.strerror, self.path) from None

    def _write_chunk(self, kind: int, payload: bytes) -> None:
        try:
            self._file.write(encode_chunk(kind, self._sequence, self.data_bytes, payload))
            self._file.flush()
        except OSError as error:
            raise OSError(error.errno, error.strerror, self.path) from None
        self._sequence += 1
        if kind == ChunkType.DATA:
            self.data_bytes += len(payload)
            self._data_chunks += 1
            if self._data_chunks == 1 or self._data_chunks % self.metadata_every == 0:
                self._write_chunk(ChunkType.METADATA, self._metadata)
        self._last_chunk = self._clock()

    def write(self, data: bytes) -> None:
        """Appends device bytes (as received, in order)."""
        if self.closed:
            raise ValueError("write to a closed capture file")
        self._buffer += data
        while len(self._buffer) >= self.chunk_size:
            self._write_chunk(ChunkType.DATA, bytes(self._buffer[: self.chunk_size]))
            del self._buffer[: self.chunk_size]
        if self._buffer and self._clock() - self._last_chunk >= self.flush_interval:
            self.flush()

    def flush(self) -> None:
        """Writes the buffered bytes as a DATA chunk now."""
        if self._buffer and not self.closed:
            self._write_chunk(ChunkType.DATA, bytes(self._buffer))
            self._buffer.clear()

    def close(self, final_stats: JsonObject | None = None) -> None:
        """Writes the buffered bytes and the END chunk; a second call does nothing.
        ``final_stats``: a JSON object (or None) stored in END as ``stats``."""
        if self.closed:
            return
        try:
            self.flush()
            end = {
                "data_bytes": self.data_bytes,
                "chunks": self._sequence + 1,
                "stats": final_stats,
                "metadata": json.loads(self._metadata),
            }
            payload = json.dumps(end, default=_json_default).encode()
            check_end(json.loads(payload))
            self._write_chunk(ChunkType.END, payload)
            self._sync()
        finally:
            self._file.close()

    def abandon(self) -> None:
        """Writes the buffered bytes and closes without an END chunk."""
        if not self.closed:
            try:
                self.flush()
            finally:
                self._file.close()

    def __enter__(self) -> "CaptureWriter":
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abandon()


class _Gap(enum.Enum):
    """The type of :data:`GAP`: a one-member enum, so the type checker tells it from bytes."""

    GAP = "GAP"

    def __repr__(self) -> str:
        return "GAP"


#: Yielded by :class:`CaptureReader` where device bytes are missing.
GAP: Final = _Gap.GAP


class MetadataConflict(TypedDict):
    """A METADATA copy that disagrees with the one used: its chunk's file offset and the
    dotted names of the fields that differ."""

    at: int
    fields: list[str]


#: :meth:`FileStats.as_dict`: the fields by name.
FileStatsDict = dict[str, int | bool | str | list[MetadataConflict] | None]


@dataclass
class FileStats:
    """What the reader found. ``chunks_bad``: damaged regions skipped (each counted once,
    however many chunks it held); ``gaps``: places where device bytes are missing;
    ``truncated_bytes``: bytes of an unfinished chunk at the end (a crash while writing);
    ``chunks_repeated``: intact DATA chunks whose bytes had been read already (skipped);
    ``header_damaged``: the file header was unreadable (the chunks were read all the same);
    ``metadata_at``: file offset of the chunk whose metadata is used (16, or a copy's);
    ``metadata_copies``: the intact copies found (METADATA chunks and END);
    ``metadata_conflicts``: per copy that disagrees with the one used, ``{"at": offset,
    "fields": [dotted names]}``, ``metadata_by``: what chose among disagreeing copies (the
    END chunk, or the majority); ``chunks_reordered``: DATA chunks that came before the
    stream bytes in front of them and waited for those; ``appended_captures``: further
    captures appended to the file (another file header and METADATA chunk, from byte
    ``appended_at``), not read."""

    chunks_ok: int = 0
    chunks_bad: int = 0
    bytes_skipped: int = 0
    truncated_bytes: int = 0
    gaps: int = 0
    data_bytes: int = 0
    complete: bool = False
    chunks_repeated: int = 0
    header_damaged: bool = False
    metadata_at: int = HEADER_SIZE
    metadata_copies: int = 0
    metadata_conflicts: list[MetadataConflict] = field(default_factory=list)
    metadata_by: str | None = None
    chunks_reordered: int = 0
    appended_captures: int = 0
    appended_at: int | None = None

    def as_dict(self) -> FileStatsDict:
        return dict(self.__dict__)


@dataclass
class _Chunk:
    kind: int
    sequence: int
    offset: int
    payload: bytes | None  # None: a DATA chunk taken unread (``_chunk_at``'s check_data)
    start: int  # file offset of the chunk
    end: int  # file offset after the chunk


@dataclass
class _Appended:
    """Another capture begins here (its file header): the walk ends."""

    start: int


@dataclass
class _Bad:
    """A region of the file with no intact chunk: ``truncated`` if it is a chunk the file
    ends in the middle of."""

    start: int
    end: int
    truncated: bool


def _no_constant(name: str) -> float:
    """NaN and Infinity are no JSON (the writer never writes them)."""
    raise ValueError(f"{name} is not JSON")


def _is_file_header(data: bytes) -> bool:
    """Whether ``data`` (16 bytes) is an intact file header of any version."""
    magic, _, size, crc = _FILE_HEADER.unpack(data) if len(data) == HEADER_SIZE else (None,) * 4
    return magic == FILE_MAGIC and size == HEADER_SIZE and zlib.crc32(data[:12]) == crc


def _open_regular(path: PathLike) -> tuple[BinaryIO, int]:
    """The file opened for reading, and its size; only regular files (a FIFO would block,
    a device never end)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise CaptureFileError(path, 0, f"cannot open: {error.strerror or error}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise CaptureFileError(path, 0, "not a regular file (a directory, FIFO or device)")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb"), info.st_size


class CaptureReader:
    """Reads a capture file.

    The constructor reads the header and the metadata (``metadata``, a dict checked by
    ``metadata.check_metadata``) and raises :class:`CaptureFileError` if the file is
    no capture file or has no usable metadata. A damaged header or first METADATA chunk is
    survived when a copy of the metadata is intact (format 2). Iterating yields the payload
    of every intact DATA chunk in stream order, once, and :data:`GAP` wherever bytes of the
    device stream are missing (a damaged chunk, a cut-off end); ``gap_bytes`` then says how
    many (exactly, or at the end of the file at most). After iterating, ``stats``
    (:class:`FileStats`) is complete and ``end`` holds the END chunk (None if the writer did
    not close cleanly). Reading a damaged file never raises past the metadata.

    The scan is linear in the file size whatever the file holds: a CRC is computed over a
    candidate chunk's payload only while the bytes so checked in vain stay below twice the
    file offset plus :data:`MAX_PAYLOAD`, and memory stays below two payloads plus a block.
    """

    BLOCK = 1 << 20  # bytes read at a time

    def __init__(self, path: PathLike) -> None:
        self.path = str(path)
        self.stats = FileStats()
        self.end: JsonObject | None = None
        self.version: int | None = None
        self._window, self._window_at = b"", 0
        self._wasted = 0  # payload bytes CRC-checked in vain
        self.gap_bytes: int | None = None  # stream bytes missing at the last GAP (None: unknown)
        self._position = 0  # stream bytes delivered so far
        self._file, self.size = _open_regular(path)
        try:
            header_error = self._read_header()
            copies = self._survey()
            if not copies:
                raise header_error or self._error(HEADER_SIZE, "no intact METADATA chunk")
            self.stats.header_damaged = header_error is not None
            self.metadata = self._use_metadata(copies)
        except BaseException:
            self._file.close()
            raise

    def _error(self, offset: int, reason: str) -> CaptureFileError:
        return CaptureFileError(self.path, offset, reason)

    def _read(self, offset: int, size: int) -> bytes:
        """``size`` bytes at ``offset`` (fewer at the end), through a window of BLOCK."""
        at = offset - self._window_at
        if 0 <= at and at + size <= len(self._window):
            return self._window[at : at + size]
        try:
            self._file.seek(offset)
            self._window, self._window_at = self._file.read(max(size, self.BLOCK)), offset
        except OSError as error:
            raise self._error(offset, f"read error: {error.strerror or error}") from None
        return self._window[:size]

    def _read_header(self) -> CaptureFileError | None:
        """None if the header is right; the error it gives if not (raised only when no
        intact metadata follows). A version this reader does not know is raised at once."""
        header = self._read(0, HEADER_SIZE)
        if len(header) < HEADER_SIZE:
            return self._error(len(header), "not a latscope capture file (too short)")
        magic, version, size, crc = _FILE_HEADER.unpack(header)
        if magic != FILE_MAGIC:
            return self._error(0, "not a latscope capture file (bad magic)")
        if zlib.crc32(header[:12]) != crc or size != HEADER_SIZE:
            return self._error(8, "damaged file header")
        if version not in KNOWN_VERSIONS:
            raise self._error(
                8,
                f"capture format version {version}, this reader knows "
                f"versions {', '.join(map(str, KNOWN_VERSIONS))}",
            )
        self.version = version
        return None

    def _survey(self) -> list[MetadataCopy]:
        """One walk over the file before it is read: the intact copies of the metadata
        (:class:`~latscope.capture.metadata.MetadataCopy`: METADATA chunks, the metadata in
        END chunks) and where a capture appended to this one begins. DATA payloads are not
        checked here (reading them does)."""
        copies: list[MetadataCopy] = []
        for item in self._chunks(check_data=False):
            if isinstance(item, _Appended):
                self.stats.appended_at = item.start
                self.stats.appended_captures = self._count_captures(item.start)
                break
            if not isinstance(item, _Chunk) or item.kind == ChunkType.DATA:
                continue
            assert item.payload is not None  # only DATA chunks are taken unread
            value, is_json = self._json(item.payload)
            if item.kind == ChunkType.METADATA:
                copies.append(MetadataCopy(item.start, "METADATA", value, is_json))
            elif isinstance(value, dict) and isinstance(value.get("metadata"), dict):
                copies.append(MetadataCopy(item.start, "END", value["metadata"]))
        return copies

    def _use_metadata(self, copies: list[MetadataCopy]) -> JsonObject:
        """The metadata of the copy :func:`~latscope.capture.metadata.choose_copy` picks,
        checked; the disagreeing copies go into the stats. Raises if no copy is confirmed
        or the one chosen is unusable."""
        chosen, others = choose_copy(copies)
        conflicts: list[MetadataConflict] = [
            {"at": copy.at, "fields": fields} for copy, fields in others
        ]
        if chosen is None:
            first, (other, fields) = copies[0], others[0]
            raise self._error(
                first.at,
                f"METADATA copies disagree: byte {first.at} and byte "
                f"{other.at} differ in {', '.join(fields)}, and no "
                f"END or majority of copies confirms either",
            )
        self.stats.metadata_at, self.stats.metadata_copies = chosen.at, len(copies)
        self.stats.metadata_conflicts = conflicts
        if conflicts:
            ends = any(copy.kind == "END" for copy in copies)
            self.stats.metadata_by = "the END chunk" if ends else "the majority of copies"
        at = chosen.at + CHUNK_OVERHEAD
        if not chosen.is_json:
            raise self._error(at, "METADATA is not JSON")
        try:
            check_metadata(chosen.value)
        except MetadataError as error:
            # Read the chunk again to point at the field; with a budget of its own, as the
            # survey may have spent the walk's on bad chunks after it.
            self._wasted = 0
            chunk = self._chunk_at(chosen.at)
            payload = chunk.payload if isinstance(chunk, _Chunk) else None
            leaf = json.dumps(error.field.rsplit(".", 1)[-1]).encode()
            where = payload.find(leaf) if payload is not None else -1
            what = str(error) if error.field == "METADATA" else f"METADATA {error}"
            raise self._error(at + max(where, 0), what) from None
        return chosen.value

    @staticmethod
    def _json(payload: bytes) -> tuple[Any, bool]:  # JSON of any shape
        """(value, True) of a JSON payload; (None, False) if it is no JSON."""
        try:
            # A lone surrogate ("\ud800") is valid JSON but no text: shown as U+FFFD.
            return without_surrogates(json.loads(payload, parse_constant=_no_constant)), True
        except (ValueError, RecursionError):
            return None, False

    def _chunk_at(
        self, offset: int, check_data: bool = True
    ) -> "_Chunk | Literal['truncated'] | None":
        """The intact chunk at ``offset``; "truncated" if one starts there but the file ends
        first; None if there is none (or the CRC budget of the class doc is spent).
        ``check_data`` False: a DATA chunk whose header is right and which ends where a
        chunk, a file header or the file begins is taken unread (its payload None)."""
        header = self._read(offset, CHUNK_OVERHEAD)
        if len(header) < CHUNK_OVERHEAD:
            return "truncated" if CHUNK_MAGIC.startswith(header[:4]) else None
        magic, kind, reserved, sequence, length, stream_offset = _CHUNK_HEADER.unpack_from(header)
        if (
            magic != CHUNK_MAGIC
            or kind not in _CHUNK_TYPES
            or reserved != bytes(3)
            or length > MAX_PAYLOAD
        ):
            return None
        end = offset + CHUNK_OVERHEAD + length
        if end > self.size:
            return "truncated"
        if self._wasted + length > 2 * offset + MAX_PAYLOAD:
            return None
        if (
            not check_data
            and kind == ChunkType.DATA
            and (end == self.size or self._read(end, 4) in (CHUNK_MAGIC, FILE_MAGIC[:4]))
        ):
            return _Chunk(kind, sequence, stream_offset, None, offset, end)
        payload = self._read(offset + CHUNK_OVERHEAD, length)
        (crc,) = _CHUNK_CRC.unpack_from(header, _CHUNK_HEADER.size)
        if len(payload) != length or zlib.crc32(payload, zlib.crc32(header[:24])) != crc:
            self._wasted += length
            return None
        return _Chunk(kind, sequence, stream_offset, payload, offset, end)

    def _next_chunk(self, offset: int) -> "_Chunk | None":
        """The next intact chunk after ``offset`` (None if there is none)."""
        while offset < self.size:
            block = self._read(offset, self.BLOCK + len(CHUNK_MAGIC) - 1)
            found = block.find(CHUNK_MAGIC)
            while found >= 0:
                chunk = self._chunk_at(offset + found)
                if isinstance(chunk, _Chunk):
                    return chunk
                found = block.find(CHUNK_MAGIC, found + 1)
            offset += self.BLOCK
        return None

    def _chunks(self, check_data: bool = True) -> "Iterator[_Chunk | _Bad | _Appended]":
        """Every intact chunk (:class:`_Chunk`) and bad region (:class:`_Bad`) in file order,
        up to another capture appended to this one (:class:`_Appended`, the last item)."""
        self._wasted = 0  # each walk has its own CRC budget (the metadata search
        offset = HEADER_SIZE  # walked the file before)
        first_metadata: bytes | None = None  # payload of the first intact METADATA chunk
        while offset < self.size:
            chunk = self._chunk_at(offset, check_data)
            bad_end = offset
            if not isinstance(chunk, _Chunk):
                found = self._next_chunk(offset + 1)
                if found is None:
                    yield _Bad(offset, self.size, chunk == "truncated")
                    return
                chunk, bad_end = found, found.start
            if chunk.kind == ChunkType.METADATA:
                appended = self._appended_at(chunk, offset, first_metadata)
                if appended is not None:
                    if appended > offset:
                        yield _Bad(offset, appended, False)
                    yield _Appended(appended)
                    return
                first_metadata = first_metadata or chunk.payload
            if bad_end > offset:
                yield _Bad(offset, bad_end, False)
            yield chunk
            offset = chunk.end

    def _appended_at(self, chunk: _Chunk, after: int, first_metadata: bytes | None) -> int | None:
        """Where another capture begins if the METADATA ``chunk`` (which follows the bytes
        from ``after`` on) is the first chunk of one, else None: a METADATA chunk of sequence
        0 and stream offset 0 past the file's first chunk, right after a file header, or
        one whose payload is not the file's metadata (a copy of the file's own first chunk
        is neither)."""
        if chunk.sequence or chunk.offset or chunk.start <= HEADER_SIZE:
            return None
        header_at = chunk.start - HEADER_SIZE
        if header_at >= after and _is_file_header(self._read(header_at, HEADER_SIZE)):
            return header_at
        if first_metadata is not None and chunk.payload != first_metadata:
            return chunk.start
        return None

    def _count_captures(self, start: int) -> int:
        """The intact file headers from ``start`` on: the captures appended there."""
        count, offset = 0, start
        while offset < self.size:
            block = self._read(offset, self.BLOCK + HEADER_SIZE)
            found = block.find(FILE_MAGIC)
            while 0 <= found < self.BLOCK:
                count += _is_file_header(block[found : found + HEADER_SIZE])
                found = block.find(FILE_MAGIC, found + 1)
            offset += self.BLOCK
        return max(count, 1)

    def __iter__(self) -> Iterator[bytes | _Gap]:
        stats = self.stats
        self._position = 0
        known = 0  # the stream is known to go on at least to here
        tail = 0  # bytes of bad regions after the last intact chunk
        waiting: dict[int, bytes] = {}  # stream offset -> payload of DATA chunks ahead of it
        for item in self._chunks():
            if isinstance(item, _Appended):
                break
            if isinstance(item, _Bad):
                if item.truncated:
                    stats.truncated_bytes += item.end - item.start
                else:
                    stats.chunks_bad += 1
                    stats.bytes_skipped += item.end - item.start
                tail += item.end - item.start
                continue
            stats.chunks_ok += 1
            tail = 0
            assert item.payload is not None  # this walk reads every chunk (check_data)
            # A METADATA or END chunk's stream offset is the DATA bytes written before it.
            known = max(known, item.offset)
            if item.kind == ChunkType.END:
                self._read_end(item.payload)
            if item.kind != ChunkType.DATA:
                continue
            known = max(known, item.offset + len(item.payload))
            if item.offset <= self._position:
                yield from self._take(item.offset, item.payload)
                yield from self._continue(waiting)
            elif len(waiting.get(item.offset, b"")) >= len(item.payload):
                stats.chunks_repeated += 1  # a copy of a chunk waiting already
            else:
                # Ahead of the stream: it waits for the bytes before it, which may come in a
                # later chunk (chunks out of order), within the bounds of REORDER_*.
                waiting[item.offset] = item.payload
                if len(waiting) > REORDER_CHUNKS or sum(map(len, waiting.values())) > REORDER_BYTES:
                    yield from self._continue(waiting, force=1)
        yield from self._continue(waiting, force=len(waiting))
        if known > self._position or tail:
            # The file ends in damage or cut off: the stream bytes missing are those the
            # intact chunks after the last DATA account for, plus at most the bad bytes.
            stats.gaps += 1
            self.gap_bytes = known - self._position + tail
            yield GAP
        self._file.close()

    def _take(self, offset: int, payload: bytes) -> Iterator[bytes | _Gap]:
        """The bytes of the DATA payload at stream ``offset`` that are new, after a GAP if
        bytes before it are missing; a chunk with no new byte is a repeated one."""
        end = offset + len(payload)
        if end <= self._position:
            self.stats.chunks_repeated += 1  # a copy of bytes delivered already
            return
        if offset > self._position:
            self.stats.gaps += 1
            self.gap_bytes = offset - self._position
            yield GAP
        elif offset < self._position:
            payload = payload[self._position - offset :]
        self.stats.data_bytes += len(payload)
        self._position = end
        yield payload

    def _continue(self, waiting: dict[int, bytes], force: int = 0) -> Iterator[bytes | _Gap]:
        """Delivers the waiting chunks that continue the stream, in stream order; the first
        ``force`` of them even if bytes before them are missing (a GAP)."""
        while waiting:
            first = min(waiting)
            if first > self._position:
                if not force:
                    return
                force -= 1
            else:
                self.stats.chunks_reordered += 1
            yield from self._take(first, waiting.pop(first))

    def _read_end(self, payload: bytes) -> None:
        end, _ = self._json(payload)
        try:
            check_end(end)
        except MetadataError:
            return  # intact CRC, unusable content: the data is what counts
        self.end = end
        self.stats.complete = True

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> "CaptureReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CaptureInfo:
    """What a capture's metadata says (shared by :class:`Capture` and
    :class:`CaptureEvents`)."""

    metadata: JsonObject

    @property
    def identity(self) -> Identity:
        """The device's :class:`~latscope.link.identity.Identity`, as its metadata stores it."""
        return Identity.from_dict(self.metadata["identity"])

    @property
    def irq_shift(self) -> int:
        """Stamp units the capture's loop calibration moved IRQ stamps (:func:`irq_shift_of`)."""
        return irq_shift_of(self.metadata)

    @property
    def clock_hz(self) -> int:
        """The capture clock (the metadata has it; IRQ periods and widths count
        ``identity.irq_clock_hz``, the link clock)."""
        return self.identity.clock_hz

    @property
    def stamp_hz(self) -> int:
        """Stamp units per second (what stamps and samples count): the capture clock,
        times 2 when DDR inputs stamp half cycles (identity ``stamp_shift``)."""
        return self.identity.stamp_hz


@dataclass
class Capture(CaptureInfo):
    """A capture file read into events: ``metadata`` (dict), ``events``
    (:class:`~latscope.events.Events`, stamps corrected for pin latency), ``parser_stats``,
    ``file_stats``, ``end`` (the END chunk's JSON, None if the capture was not closed)."""

    path: str
    metadata: JsonObject
    events: Events
    parser_stats: ParserStats
    file_stats: FileStats
    end: JsonObject | None = field(default=None)

    @property
    def stats(self) -> dict[str, FileStatsDict | dict[str, int | dict[str, int]]]:
        return {"file": self.file_stats.as_dict(), "parser": self.parser_stats.as_dict()}

    @property
    def event_count(self) -> int:
        return len(self.events)

    def summary(self) -> str:
        """One line: path, events, how the file ended, damage, stream statistics (also
        ``CaptureSummary.summary``): :func:`summary_line`."""
        return summary_line(self.path, self.event_count, self.file_stats, self.parser_stats)


#: What every text output says of a capture file without its END chunk (cut at a chunk
#: boundary by kill -9 or a crash, a copy of a live capture, a second Ctrl-C): such a file
#: reads without damage, so without this line it would look whole.
NOT_CLOSED: Final = "capture not closed: its end may be missing"


def summary_line(
    path: str, event_count: int, file_stats: FileStats, parser_stats: ParserStats
) -> str:
    """A capture's summary in one line: path, events, how the file ended, damage, stream
    statistics, and the :func:`file_notes`."""
    f, p = file_stats, parser_stats
    state = "complete" if f.complete else NOT_CLOSED
    damage = ""
    if f.chunks_bad or f.truncated_bytes or f.gaps or f.header_damaged:
        damage = (
            f", {f.chunks_bad} bad chunk(s), {f.truncated_bytes} truncated bytes, "
            f"{f.gaps} gap(s)" + (", damaged file header" if f.header_damaged else "")
        )
    notes = "".join(f"; {note}" for note in file_notes(f))
    return f"{path}: {event_count} events, {state}{damage}; stream: {p}{notes}"


def file_notes(stats: FileStats) -> list[str]:
    """What the reader decided about the file that a user must know, one phrase each
    (:class:`FileStats`): the copy of the metadata used when the first was damaged, copies
    that disagree with it, captures appended to the file and not read."""
    notes: list[str] = []
    if stats.metadata_at != HEADER_SIZE:
        notes.append(
            f"the METADATA chunk at byte {HEADER_SIZE} is damaged: the copy at byte "
            f"{stats.metadata_at} is used"
        )
    by_fields: dict[str, list[int]] = {}
    for conflict in stats.metadata_conflicts:
        by_fields.setdefault(", ".join(conflict["fields"]), []).append(conflict["at"])
    for fields, offsets in by_fields.items():
        listed = ", ".join(map(str, offsets[:3])) + (
            f" and {len(offsets) - 3} more" if len(offsets) > 3 else ""
        )
        notes.append(
            f"METADATA copies disagree: the copy at byte {stats.metadata_at} is used "
            f"(as {stats.metadata_by} says), the one(s) at byte {listed} differ in "
            f"{fields}"
        )
    if stats.appended_captures:
        notes.append(
            f"{stats.appended_captures} more capture(s) appended at byte "
            f"{stats.appended_at}: not read (split the file there to read them)"
        )
    return notes


def parser_for(metadata: JsonObject, correct_latency: bool = True) -> StreamParser:
    """A :class:`StreamParser` set up from a capture's (checked) metadata: protocol
    version (files of protocol version 1 say so in their identity), marker width and, with
    ``correct_latency``, the pin latencies and the loop calibration the capture applied
    (its ``calibration``: IRQ stamps moved later). A capture uses this parser live too
    (:class:`~latscope.capture.session.CaptureSession`): its file reads back as it ran."""
    return Identity.from_dict(metadata.get("identity")).parser(
        correct_latency=correct_latency, irq_shift=irq_shift_of(metadata)
    )


def calibration_of(metadata: JsonObject) -> Calibration | None:
    """The loop calibration a capture's (checked) metadata says it applied (None: none)."""
    value = metadata.get("calibration")
    return None if value is None else Calibration.from_dict(value)


def irq_shift_of(metadata: JsonObject) -> int:
    """Stamp units the capture's loop calibration moves IRQ stamps later (0: none)."""
    calibration = calibration_of(metadata)
    return 0 if calibration is None else calibration.shift


class CaptureEvents(CaptureInfo):
    """A capture file read as batches of events, in bounded memory.

    The constructor reads the metadata (as :class:`CaptureReader`); iterating (once) yields
    :class:`~latscope.events.Events` batches in stream order, each from at most
    ``batch_bytes`` of stream (so at most that many events, plus one open segment), holes
    included as the parser reports them. Afterwards ``parser_stats``, ``file_stats`` and
    ``end`` are complete."""

    def __init__(
        self, path: PathLike, *, correct_latency: bool = True, batch_bytes: int = 1 << 20
    ) -> None:
        self.path = str(path)
        self.batch_bytes = max(1, int(batch_bytes))
        self.reader = CaptureReader(path)
        self.metadata = self.reader.metadata
        self.parser = parser_for(self.metadata, correct_latency)

    @property
    def parser_stats(self) -> ParserStats:
        return self.parser.stats

    @property
    def file_stats(self) -> FileStats:
        return self.reader.stats

    @property
    def end(self) -> JsonObject | None:
        return self.reader.end

    def _feed(self, data: bytes) -> Iterator[Events]:
        for at in range(0, len(data), self.batch_bytes):
            events = self.parser.feed(data[at : at + self.batch_bytes])
            if len(events):
                yield events

    def __iter__(self) -> Iterator[Events]:
        pending = bytearray()
        for item in self.reader:
            if item is not GAP and not pending and len(item) >= self.batch_bytes:
                # A whole batch or more in one piece (a capture's DATA chunks are 1 MiB): the
                # same batches as through ``pending``, without copying the bytes twice.
                yield from self._feed(item)
                continue
            if item is not GAP:
                pending += item
                if len(pending) < self.batch_bytes:
                    continue
            yield from self._feed(bytes(pending))
            pending.clear()
            if item is GAP:
                # The parser reports the hole with the events after it (or at finish()).
                self.parser.gap(missing_bytes=self.reader.gap_bytes)
        yield from self._feed(bytes(pending))
        events = self.parser.finish()
        if len(events):
            yield events


def load_capture(path: PathLike, *, correct_latency: bool = True) -> Capture:
    """Reads a capture file into a :class:`Capture`. Damaged chunks cost their segments;
    raises only :class:`CaptureFileError` (no capture file, unreadable, no metadata)."""
    stream = CaptureEvents(path, correct_latency=correct_latency)
    events = Events.concatenate(list(stream))
    return Capture(
        str(path), stream.metadata, events, stream.parser_stats, stream.file_stats, stream.end
    )
