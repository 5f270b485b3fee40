"""Capture-file reader on crafted files (issue 11, part 4): time and memory stay linear.

Two files, each read in a fresh child process (peak RSS by ``getrusage`` of the child):

* ``fake``: the header, one METADATA chunk, then ``--fake-mb`` MiB of fake chunk headers
  (magic, DATA type, length 16 MiB, CRC 0) and 16 MiB of zeros so every header's claimed
  payload lies inside the file. The format-1 reader CRC-checked every candidate's claimed
  payload (10 MB: 100 s); the reader's CRC budget keeps it linear.
* ``tiny``: ``--tiny`` one-byte DATA chunks of a real stream (format-1 reader: 1.15 GB of
  RSS for 2 M chunks); ``CaptureEvents`` feeds the parser in 1 MiB batches.

Run: ``.venv/bin/python bench/capture_file_scan.py [--fake-mb 10] [--tiny 2000000]``.
"""

import argparse
import json
import os
import resource
import struct
import subprocess
import sys
import tempfile

CHILD = """
import resource, sys, time
from latscope.capture.file import load_capture
started = time.perf_counter()
capture = load_capture(sys.argv[1])
seconds = time.perf_counter() - started
print(len(capture.events), capture.file_stats.chunks_ok, capture.file_stats.chunks_bad,
      seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def metadata():
    return json.dumps({"identity": {"clock_hz": 100_000_000, "marker_width": 16}}).encode()


def fake_file(path, megabytes):
    from latscope.capture.file import MAX_PAYLOAD, ChunkType, encode_chunk, file_header

    fake = struct.pack("<4sB3sIIQI", b"LSCK", ChunkType.DATA, bytes(3), 1, MAX_PAYLOAD, 0, 0)
    with open(path, "wb") as out:
        out.write(file_header() + encode_chunk(ChunkType.METADATA, 0, 0, metadata()))
        out.write(fake * ((megabytes << 20) // len(fake)))
        out.write(bytes(MAX_PAYLOAD))


def tiny_file(path, chunks):
    from latscope.capture.file import ChunkType, encode_chunk, file_header
    from latscope_defs.protocol import Source, StreamEncoder

    encoder = StreamEncoder()
    stamp = 1000
    while len(encoder._out) < chunks:
        stamp += 37
        encoder.event(stamp, Source.MARKER, stamp & 0xFFFF)
    encoder.flush()
    stream = encoder.take()[:chunks]
    with open(path, "wb") as out:
        out.write(file_header() + encode_chunk(ChunkType.METADATA, 0, 0, metadata()))
        block = bytearray()
        for at in range(len(stream)):
            block += encode_chunk(ChunkType.DATA, at + 1, at, stream[at : at + 1])
            if len(block) > 1 << 20:
                out.write(block)
                block.clear()
        out.write(block)


def measure(name, path):
    result = subprocess.run(
        [sys.executable, "-c", CHILD, path], capture_output=True, text=True, check=True
    )
    events, ok, bad, seconds, rss_kib = result.stdout.split()
    size = os.path.getsize(path)
    print(
        f"{name:5s}: {size / 1e6:7.1f} MB, {int(ok):8d} chunks ok, {int(bad)} bad region(s), "
        f"{int(events):8d} events, {float(seconds):6.2f} s "
        f"({size / 1e6 / float(seconds):6.1f} MB/s), peak RSS {int(rss_kib) / 1024:6.0f} MiB"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fake-mb", type=int, default=10)
    parser.add_argument("--tiny", type=int, default=2_000_000)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "fake.lsc")
        fake_file(path, args.fake_mb)
        measure("fake", path)
        os.remove(path)
        path = os.path.join(scratch, "tiny.lsc")
        tiny_file(path, args.tiny)
        measure("tiny", path)
    print(f"(this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
