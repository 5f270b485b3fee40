"""Every table of a damaged run of the suite is accounted for (issue 29 point 2), those a hole
swallowed whole too: a table whose window (its START, its markers, its END) fell into a hole,
or whose START or PARAM did, left no trace in the events; the suite's plan (the capture's
metadata: which tests ran, with how many samples) says it ran, and ``analyze`` reports it
with its samples lost (``~N``).

The capture is the real suite, built natively with the reference kernel's host port
(``support.suite_capture``), written in small DATA chunks and damaged in the file at
1e-5 .. 1e-2 per byte (``support.damage``), or cut at a chunk boundary (what
kill -9 leaves). For each damaged file that still reads, the bounded analysis
(``latscope analyze``) and the whole-capture one report exactly the undamaged file's tables,
and per table kept + discarded + lost equals the undamaged count, ``lost`` an estimate
wherever it is not 0.
"""

import random

import pytest

from latscope.analysis.pairing import analyze_loaded
from latscope.analysis.summary import analyze_capture
from latscope.capture.file import CHUNK_MAGIC, CaptureFileError, load_capture
from latscope.cli import main
from support.damage import KINDS, damage, unaccounted
from support.suite_capture import native_suite_capture

SAMPLES = 40
RATES = [1e-5, 1e-4, 1e-3, 1e-2]


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """The undamaged capture's bytes and ``{table: samples}``."""
    path = tmp_path_factory.mktemp("swallowed") / "clean.lsc"
    native_suite_capture(path, SAMPLES, chunk_size=1024)
    _, tables = analyze_capture(path)
    counts = {name: table.stats()["samples"] for name, table in tables.items()}
    assert len(counts) == 23 and all(table.lost.count == 0 for table in tables.values())
    return path.read_bytes(), counts


@pytest.mark.parametrize("kind", KINDS)
def test_damaged_suite_capture(clean, kind, tmp_path):
    data, counts = clean
    path = tmp_path / "damaged.lsc"
    swallowed = 0
    for rate in RATES:
        for seed in range(3):
            where = f"{kind} {rate:g} seed {seed}"
            rng = random.Random(f"swallowed {kind} {rate} {seed}")
            path.write_bytes(damage(data, rate, kind, rng))
            try:
                capture = load_capture(path)
            except CaptureFileError:
                continue  # every copy of the metadata destroyed
            whole = analyze_loaded(capture)
            assert unaccounted(whole, counts) == [], where
            bounded = analyze_capture(path, batch_bytes=4096, background=False)[1]
            assert unaccounted(bounded, counts) == [], where
            swallowed += sum(
                table.stats()["samples"] + table.stats()["discarded"] == 0
                for table in bounded.values()
            )
    # The damage swallowed whole tables (what this test is about), not only parts of them.
    assert swallowed > 0


def test_cut_at_a_chunk_boundary(clean, tmp_path, capsys):
    """A file cut where a DATA chunk begins, halfway through the run: every table after the
    cut is reported, with its samples lost, and the one open at the cut is an estimate."""
    data, counts = clean
    chunks = [at for at in range(len(data)) if data.startswith(CHUNK_MAGIC, at)]
    path = tmp_path / "cut.lsc"
    path.write_bytes(data[: chunks[len(chunks) // 2]])
    _, tables = analyze_capture(path, background=False)
    assert unaccounted(tables, counts) == []
    empty = [name for name, table in tables.items() if table.stats()["samples"] == 0]
    assert "CLK-a-1" in empty and list(tables) == list(counts)  # in the suite's order
    assert main(["analyze", str(path)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line[:8] == "CLK-a-1 ")
    assert row.split()[1] == "0" and row.split()[-1] == f"~{counts['CLK-a-1']}"
