"""Memory and time of an analysis bounded through device resets and long quiet times (issue
29, point 6): a reset does not move the time line 2**48 ahead, and a table keeps the maximum
of the intervals that hold samples only, so neither the number of resets nor the stamp span
of a valid file makes the analysis grow.

Bounds (tracemalloc peak of the in-process analysis, numpy's arrays included): 64 MiB, twice
what the analysis of the 1000-reset capture below takes (30 MiB; before, the dense interval
array of 16 tables over 1000 * 2**48 stamps wanted terabytes). CPU time: 90 s, four times
what it takes on the 2-core development machine (21 s: 16,000 test windows of about 8 samples
each; the time goes into adding the windows' samples to their tables)."""

import time
import tracemalloc

import pytest

from latscope.analysis.summary import analyze_capture
from latscope.capture.file import CaptureWriter
from latscope_defs.markers import Point, Test
from latscope_defs.markers import encode as marker
from latscope_defs.protocol import Source
from support.synthetic_suite import IDENTITY, encode, make_run

PEAK_BYTES = 64 << 20
CPU_SECONDS = 90


def analyzed(path):
    """(summary, tables, tracemalloc peak, CPU seconds) of ``analyze_capture`` in this
    process (no helper process, so that every allocation is traced)."""
    tracemalloc.start()
    try:
        started = time.process_time()
        summary, tables = analyze_capture(path, background=False)
        cpu = time.process_time() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return summary, tables, peak, cpu


def write(path, stream):
    with CaptureWriter(path, {"identity": IDENTITY}) as writer:
        writer.write(stream)
    return path


@pytest.mark.slow  # about 45 s
def test_a_thousand_resets_in_bounded_memory_and_time(tmp_path):
    runs = [make_run(seed=k, count=2) for k in range(1001)]
    path = write(tmp_path / "resets.lsc", b"".join(encode(run.events) for run in runs))
    summary, tables, peak, cpu = analyzed(path)
    assert summary.parser_stats.resets == 1000
    assert tables["IL-a-1"].count == sum(len(run.samples["IL-a-1"]) for run in runs)
    span = sum(max(s for s, _, _ in run.events) for run in runs)
    assert summary.stamp_max < span  # not 2**48 per reset
    assert peak < PEAK_BYTES, f"peak {peak / 2**20:.1f} MiB"
    assert cpu < CPU_SECONDS, f"{cpu:.1f} s"


def quiet_il_stream(samples, quiet):
    """A valid capture of one IL_A window whose interrupts come ``quiet`` stamp units apart
    (each in a segment of its own, linked to the one before), and its IL-a-1 samples."""
    events, now = [(1000, Source.MARKER, marker(Test.IL_A, Point.START, 1))], 1000
    for k in range(samples):
        now += quiet
        events += [
            (now, Source.IRQ, 1),
            (now + 100 + k % 50, Source.MARKER, marker(Test.IL_A, Point.ISR_ENTRY, k)),
            (now + 200, Source.IRQ, 0),
            (now + 300, Source.MARKER, marker(Test.IL_A, Point.ISR_EXIT, k)),
            (now + 400, Source.MARKER, marker(Test.IL_A, Point.THREAD, 0)),
        ]
    events.append((now + 1000, Source.MARKER, marker(Test.IL_A, Point.END)))
    return encode([(stamp, int(source), value) for stamp, source, value in events]), [
        100 + k % 50 for k in range(samples)
    ]


@pytest.mark.slow  # about 10 s each
@pytest.mark.parametrize("quiet", [1 << 40, (1 << 47) - 1])
def test_long_quiet_times_in_bounded_memory(tmp_path, quiet):
    """30,000 interrupts 2**40 (3 hours at 100 MHz) or almost 2**47 stamp units apart: a
    valid file spanning centuries of stamps, analysed in the same memory as any other."""
    stream, expected = quiet_il_stream(30_000, quiet)
    summary, tables, peak, cpu = analyzed(write(tmp_path / "quiet.lsc", stream))
    table = tables["IL-a-1"]
    assert (summary.parser_stats.holes, table.count) == (0, len(expected))
    assert sorted(table.values.repeat(table.counts).tolist()) == sorted(expected)
    intervals, maxima = table.interval_maxima()
    assert len(intervals) == len(expected)  # one interval per sample
    assert peak < PEAK_BYTES, f"peak {peak / 2**20:.1f} MiB"
    assert cpu < CPU_SECONDS, f"{cpu:.1f} s"
