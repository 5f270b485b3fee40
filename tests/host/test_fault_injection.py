"""Damage must never become a latency (issue 11): seeded faults on the link's byte stream
and in the capture file, checked against ground truth.

The capture is a synthetic run of the suite (tests/support/synthetic_suite.py: the suite's marker
encoding and pairing, its samples recorded while it is laid out, not by ``analyze``),
encoded by the reference encoder of ``latscope_defs.protocol``. Faults: bit flips, dropped,
inserted and duplicated bytes, bursts of 2..64 random bytes, and all of them mixed, at
1e-6 .. 1e-2 per byte (at least one fault per run). For every damaged run:

* 0 fabricated events: every event delivered is an event of the truth, delivered once;
* 0 altered stamps (a true source and value at a wrong stamp counts here, not above);
* 0 invented samples: every sample ``analyze`` reports equals the true sample of that table
  that starts at the same stamp;
* holes account for what is missing: their counts add up to at least the true events lost;
* every sample is accounted for: every table of the undamaged run is reported, and its
  kept + discarded + lost equals the undamaged count; ``lost`` is exact (0) where no loss
  touched the table's windows, else an estimate from the suite's plan (the samples per
  window times the table's windows; a window a hole swallowed whole, or whose START or
  PARAM it took, still makes its tables, with every sample lost), which must come out
  exact here: every table has one window of the plan's samples. No table is reported that
  the run does not make.


No test here switches itself off: a parser without holes fails them (they once were xfail
when it reported none, which turned the regression they exist for green).
"""

import random
from collections import Counter

import pytest

from latscope.analysis.pairing import analyze, analyze_loaded
from latscope.analysis.spans import HOLE, holes_of
from latscope.capture.file import CaptureFileError, CaptureWriter, load_capture
from latscope.events import Events
from latscope.link.parser import StreamParser
from latscope_defs.protocol import Source
from support.damage import KINDS, damage
from support.synthetic_suite import IDENTITY, LATENCY, TESTS

RATES = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2]
HZ = IDENTITY["clock_hz"]


def parse_link(data, rng):
    """The parser fed the damaged link bytes in pieces of random size, as a port delivers."""
    parser = StreamParser(latency=LATENCY)
    parts, at = [], 0
    while at < len(data):
        size = rng.choice([1, 7, 100, 1000, 4096])
        parts.append(parser.feed(data[at : at + size]))
        at += size
    parts.append(parser.finish())
    return Events.concatenate(parts)


def check(events, run, truth, where, tables=None):
    """The properties of the module doc; ``where`` names the run in failures; ``tables``:
    the analysis of the events (default: ``analyze`` with the run's plan)."""
    delivered = [
        event for event in events if not (event[1] == Source.LOSS and event[2] & 0xF == HOLE)
    ]
    counts = Counter(delivered)
    fabricated = [e for e in counts if e not in truth["events"]]
    altered = [e for e in fabricated if (e[1], e[2]) in truth["values"]]
    assert [e for e in fabricated if e not in altered] == [], f"{where}: fabricated events"
    assert altered == [], f"{where}: altered stamps"
    assert [e for e, n in counts.items() if n > 1] == [], f"{where}: events delivered twice"
    invented = []
    if tables is None:
        tables = analyze(events, HZ, plan=run.plan())
    assert set(tables) == set(run.samples), f"{where}: tables {sorted(tables)}"
    unaccounted = [
        (name, len(table.samples), table.discarded, table.lost, len(run.samples[name]))
        for name, table in tables.items()
        if table.lost.count is None
        or len(table.samples) + table.discarded + table.lost.count != len(run.samples[name])
        or (not table.lost.estimate and table.lost.count != 0)
    ]
    assert unaccounted == [], f"{where}: (table, kept, discarded, lost, truth) {unaccounted}"
    for name, table in tables.items():
        meant = run.samples.get(name, {})
        invented += [
            (name, start, length)
            for start, length in zip(table.starts.tolist(), table.samples.tolist())
            if meant.get(start) != length
        ]
    assert invented == [], f"{where}: invented samples {invented[:5]}"
    missing = len(truth["events"]) - len(counts)
    holes = sum(hole.lost for hole in holes_of(events))
    assert holes >= missing, f"{where}: {missing} events missing, holes account for {holes}"


def test_undamaged_stream_gives_the_truth(suite):
    run, truth, stream = suite
    events = parse_link(stream, random.Random(1))
    assert sorted(events) == sorted(run.events)  # stream order: by raw stamp
    tables = analyze(events, HZ)
    assert {
        name: dict(zip(t.starts.tolist(), t.samples.tolist())) for name, t in tables.items()
    } == run.samples
    assert len(run.samples) == 20 and sum(map(len, run.samples.values())) > 3000


@pytest.mark.parametrize("kind", KINDS)
def test_link_damage(suite, kind):
    run, truth, stream = suite
    for rate in RATES:
        for seed in range(2):
            rng = random.Random(f"link {kind} {rate} {seed}")
            events = parse_link(damage(stream, rate, kind, rng), rng)
            check(events, run, truth, f"link {kind} {rate:g} seed {seed}")


@pytest.mark.parametrize("kind", KINDS)
def test_file_damage(suite, kind, tmp_path):
    """The capture file damaged: the reader's gaps and the parser's holes keep every
    reported sample true; a file damaged beyond its metadata is one CaptureFileError."""
    run, truth, stream = suite
    clean = tmp_path / "clean.lsc"
    metadata = {
        "identity": IDENTITY,
        "suite": {"samples": run.count, "tests": TESTS},
        "handler_markers": run.handlers,
    }
    with CaptureWriter(clean, metadata, chunk_size=2048, metadata_every=8) as writer:
        writer.write(stream)
    data = clean.read_bytes()
    path = tmp_path / "damaged.lsc"
    for rate in RATES:
        for seed in range(2):
            rng = random.Random(f"file {kind} {rate} {seed}")
            path.write_bytes(damage(data, rate, kind, rng))
            where = f"file {kind} {rate:g} seed {seed}"
            try:
                capture = load_capture(path)
            except CaptureFileError as error:
                # Every copy of the metadata destroyed: only at the highest rates.
                assert rate >= 1e-3 and "\n" not in str(error), f"{where}: {error}"
                continue
            check(capture.events, run, truth, where, analyze_loaded(capture))
