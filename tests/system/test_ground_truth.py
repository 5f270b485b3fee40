"""Ground truth: the appliance's samples equal what the simulated DUT really did, exactly.

A short suite runs on the Verilated SoC with the appliance (``sim:soc``), captured by the
host through the pty exactly as ``make demo`` does. Independently of any gateware, the
harness logs in C++ the cycle of every IRQ line edge, every change of the IRQ_PENDING latch
and of the core's MEIP, and every marker store as the CPU's bus completes it (``--truth``,
sim/README.md). From that log this test builds the events an ideal appliance would report
and checks, for both marker variants:

* every event of every source (markers or bus writes, both IRQ edges, edge channels 0 and 1)
  has exactly the stamp and value of the truth, after the parser removed the documented
  fixed pin delay of its source (identify reply; docs/tests.md); the appliance's time base
  is the harness's cycle count (offset 0);
* the same pairing rules (``latscope.analysis``) give the same tables with identical
  samples from both.

A third run floods the appliance (the IL-a thread marks on every poll) until its FIFO
overflows: every event the host got is a true one, every missing one is counted in a LOSS
record of its source, and every sample the host computed is a true sample (a pair with a
loss between it is discarded, never wrong).

Last, ``latscope analyze`` prints the same tables from the capture file (text, CSV, JSON).

Builds the appliance-enabled simulator (20-40 s the first time) and the suite; the runs
themselves take about 15 s.
"""

import csv
import io
import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from latscope.analysis.pairing import analyze
from latscope.capture.file import CaptureFileError, load_capture
from latscope.capture.suite import DEMO_IRQ, capture_suite
from latscope.events import Events
from latscope.simulated.soc import ROOT, SuiteSettings, build_soc
from latscope_defs.markers import Test
from latscope_defs.protocol import Source
from support.suite_tables import table_names

pytestmark = pytest.mark.verilator

SAMPLES = 12
TESTS = "IL_A,IDL_B,TSL_A,SEO_F,MQ"
BUILD_DIR = ROOT / "firmware" / "suite" / "build" / "pytest-truth"
GPIO_STROBE = 1 << 16
#: Truth log line -> the appliance source that reports it (value: the new level).
LEVEL_SOURCES = {"irq": Source.IRQ, "pending": Source.EDGE0, "meip": Source.EDGE1}
#: The fixed pin-to-stamp delay of each source, in cycles (docs/tests.md): the marker port's
#: 2-flip-flop synchronizer and its 2-cycle sample delay, the registered bus snoop, the edge
#: channels' synchronizer; the IRQ generator stamps the cycle its pin changes.
PIN_DELAY = {Source.MARKER: 4, Source.BUS: 1, Source.IRQ: 0, Source.EDGE0: 2, Source.EDGE1: 2}


def truth_events(path, marker):
    """The events an exact appliance would report, from the harness's ground-truth log.

    GPIO stores are markers only when they flip the strobe (bit 16; the pin starts low), with
    the 16 data pins as value; TRACE-window stores are bus events with the 32-bit data (in
    the GPIO build: the kernel's handler-entry markers only)."""
    stamps, sources, values = [], [], []
    strobe = 0
    for line in Path(path).read_text().splitlines():
        if line.startswith("#"):
            continue
        cycle, kind, *fields = line.split()
        if kind in LEVEL_SOURCES:
            source, value = LEVEL_SOURCES[kind], int(fields[0])
        elif kind == "gpio" and marker == "gpio":
            word = int(fields[0], 16)
            if (word & GPIO_STROBE) == strobe:
                continue
            strobe = word & GPIO_STROBE
            source, value = Source.MARKER, word & 0xFFFF
        elif kind == "trace":
            source, value = Source.BUS, int(fields[1], 16)
        else:
            continue
        stamps.append(int(cycle))
        sources.append(int(source))
        values.append(value)
    return Events(stamps, sources, values)


def by_source(events, source):
    mask = events.source == int(source)
    return events.stamp[mask].astype(np.int64), events.value[mask].astype(np.int64)


def capture_window(host, identity):
    """Cycles in which every source was surely being captured: from the first to the last
    host event, shrunk by the largest pin delay (an event is captured when it reaches the
    time-stamper, its pin delay after its stamp)."""
    margin = max(identity.latency.values())
    return int(host.stamp.min()) + margin, int(host.stamp.max()) - margin


def run_suite(tmp_path, marker, samples=SAMPLES, tests=TESTS, cflags=""):
    settings = SuiteSettings(marker=marker, samples=samples, tests=tests, cflags=cflags)
    build = build_soc(settings, build_dir=BUILD_DIR)
    truth = tmp_path / f"{marker}.truth"
    run = capture_suite(
        build, DEMO_IRQ, output=tmp_path / f"{marker}.lsc", truth=truth, timeout=300
    )
    assert run.exit_code == 0, run.console[-3000:]
    run.capture_path = tmp_path / f"{marker}.lsc"
    run.captured = load_capture(run.capture_path).events  # what the file holds
    return run, truth_events(truth, marker)


@pytest.fixture(scope="module", params=["gpio", "bus"])
def exact_run(request, tmp_path_factory):
    marker = request.param
    run, truth = run_suite(tmp_path_factory.mktemp(f"truth-{marker}"), marker)
    return marker, run, truth


def test_no_loss_no_damage(exact_run):
    _, run, _ = exact_run
    stats = run.parser_stats
    assert run.status["lost"] == 0 and stats.lost_total == 0
    assert stats.segments_bad == 0 and stats.records_dropped == 0 and stats.bytes_skipped == 0
    assert run.uart["framing_errors"] == 0 and run.uart["dropped"] == 0


def test_every_event_is_the_truth(exact_run):
    marker, run, truth = exact_run
    first, last = capture_window(run.captured, run.identity)
    sources = [Source.MARKER] * (marker == "gpio") + [
        Source.BUS,
        Source.IRQ,
        Source.EDGE0,
        Source.EDGE1,
    ]
    for source in sources:
        host_stamps, host_values = by_source(run.captured, source)
        true_stamps, true_values = by_source(truth, source)
        inside = (true_stamps >= first) & (true_stamps <= last)
        host_inside = (host_stamps >= first) & (host_stamps <= last)
        assert np.count_nonzero(inside) > 2 * SAMPLES, source
        np.testing.assert_array_equal(
            host_stamps[host_inside], true_stamps[inside], err_msg=f"{source.name} stamps"
        )
        np.testing.assert_array_equal(
            host_values[host_inside], true_values[inside], err_msg=f"{source.name} values"
        )
    # The fixed pin delays: the appliance reports them, and its raw stamps (as stored in the
    # capture file, before the parser's correction) are the truth plus exactly that delay.
    assert {source: run.identity.latency[source] for source in PIN_DELAY} == PIN_DELAY
    raw = load_capture(run.capture_path, correct_latency=False).events
    for source in sources:
        raw_stamps, _ = by_source(raw, source)
        host_stamps, _ = by_source(run.captured, source)
        np.testing.assert_array_equal(raw_stamps - host_stamps, PIN_DELAY[source])
    # The simulation has no pads: the file records that no IRQ pad delay was added (a
    # board's capture adds its own: test_irq_pad_delay.py).
    recorded = load_capture(run.capture_path).metadata["identity"]
    assert (recorded["irq_pad_delay"], recorded["irq_pad_delay_ns"]) == (0, 0.0)
    # The trace port in the bus build and the unused edge channels stay silent (EDGE2 is the
    # IRQ loop's pin, GPIO_OUT bit 24, which the suite never sets); the bus window carries
    # the kernel's handler-entry markers in both builds.
    for source in [Source.MARKER] * (marker == "bus") + [Source.EDGE2, Source.EDGE3]:
        assert not np.any(run.captured.source == int(source))


def assert_bounded_analysis_is_analyze(path):
    """The bounded analysis of the capture file (``latscope analyze``, ``report``), read in
    tiny and in large batches, gives ``analyze``'s tables of the loaded capture."""
    from latscope.analysis.pairing import analyze_loaded
    from latscope.analysis.summary import analyze_capture
    from support.analysis_checks import assert_same

    # As analyze_capture does: the suite's plan (metadata) for each table's lost.
    whole = analyze_loaded(load_capture(path))
    for batch_bytes in (64, 1 << 20):
        assert_same(whole, analyze_capture(path, batch_bytes=batch_bytes)[1], batch_bytes)


def test_every_sample_is_the_truth(exact_run):
    _, run, truth = exact_run
    clock_hz = run.identity.clock_hz
    assert_bounded_analysis_is_analyze(run.capture_path)
    host, true = analyze(run.captured, clock_hz), analyze(truth, clock_hz)
    expected = set(table_names([Test[name] for name in TESTS.split(",")]))
    assert set(host) == set(true) == expected
    for name, table in host.items():
        assert len(table.samples) >= SAMPLES, name
        np.testing.assert_array_equal(table.starts, true[name].starts, err_msg=name)
        np.testing.assert_array_equal(table.samples, true[name].samples, err_msg=name)
        assert table.discarded == 0


#: A THREAD marker every poll of IL-a, the IRQ-timeout check on every 256th of them only:
#: more markers than the link carries. (Every 2 polls, a marker every 55 cycles, was enough
#: until protocol version 4: its repeated marker takes a 2-byte short record, and the
#: simulator's link, a byte every 20 cycles, carries 2 bytes every 55 cycles.)
FLOOD_CFLAGS = "-DSUITE_IL_HEARTBEAT=1u -DSUITE_IL_WATCH_EVERY=256u"


def test_losses_are_counted_never_wrong(tmp_path):
    """The IL-a thread marks every few polls: more markers than the link carries."""
    run, truth = run_suite(tmp_path, "gpio", samples=60, tests="IL_A", cflags=FLOOD_CFLAGS)
    lost = run.parser_stats.lost
    assert run.status["lost"] == sum(lost.values()) > 0
    assert run.parser_stats.segments_bad == 0

    # Every event the host has is true; the ones it misses are exactly the counted losses.
    first, last = capture_window(run.captured, run.identity)
    for source in (Source.MARKER, Source.IRQ, Source.EDGE0, Source.EDGE1):
        host_stamps, host_values = by_source(run.captured, source)
        true_stamps, true_values = by_source(truth, source)
        inside = (true_stamps >= first) & (true_stamps <= last)
        true_set = set(zip(true_stamps.tolist(), true_values.tolist()))
        got = list(zip(host_stamps.tolist(), host_values.tolist()))
        assert set(got) <= true_set, source
        host_inside = (host_stamps >= first) & (host_stamps <= last)
        missing = np.count_nonzero(inside) - np.count_nonzero(host_inside)
        assert missing == lost.get(int(source), 0), source

    # Samples: each one the host computed is the true sample that starts at the same stamp;
    # the ones lost to overflow are missing, not altered: either one of their two events
    # was lost, or both arrived and the pair was discarded (a loss lies between them).
    # Which pairs straddle a loss depends on the phase of the IRQs against the CPU's
    # release, so the counts differ from run to run; the accounting does not.
    clock_hz = run.identity.clock_hz
    assert_bounded_analysis_is_analyze(run.capture_path)
    host, true = analyze(run.captured, clock_hz), analyze(truth, clock_hz)
    arrived = set(
        run.captured.stamp[np.isin(run.captured.source, [Source.MARKER, Source.IRQ])].tolist()
    )
    for name in ("IL-a-1", "IDL-a-1"):
        truth_samples = dict(zip(true[name].starts.tolist(), true[name].samples.tolist()))
        got = dict(zip(host[name].starts.tolist(), host[name].samples.tolist()))
        assert got and all(truth_samples.get(start) == sample for start, sample in got.items()), (
            name
        )
        assert len(got) < len(truth_samples), name
        both_arrived = [
            start
            for start, sample in truth_samples.items()
            if start not in got and start in arrived and start + sample in arrived
        ]
        # (Also discarded: pairs of an A and a later B whose true partner B' was lost.)
        assert host[name].discarded >= len(both_arrived), name


def test_analyze_command_prints_the_tables(exact_run):
    """`latscope analyze` on the capture file: the same tables, as text, CSV and JSON."""
    _, run, truth = exact_run
    true = analyze(truth, run.identity.clock_hz)

    def analyze_command(*options):
        result = subprocess.run(
            [sys.executable, "-m", "latscope.cli", "analyze", str(run.capture_path), *options],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    document = json.loads(analyze_command("--format", "json"))
    assert document["integrity"]["lost_events"] == 0
    rows = {row["name"]: row for row in document["tables"]}
    assert set(rows) == set(true)
    for name, table in true.items():
        ns = table.samples * 1e9 / run.identity.clock_hz
        assert rows[name]["samples"] == len(ns)
        assert rows[name]["min_ns"] == ns.min() and rows[name]["max_ns"] == ns.max()
        # results.json rounds nanoseconds to 0.01 ns (docs/results-schema.md)
        assert rows[name]["avg_ns"] == pytest.approx(ns.mean(), abs=0.005)
        assert rows[name]["p99_ns"] == (
            pytest.approx(np.percentile(ns, 99), abs=0.005) if len(ns) >= 100 else None
        )
    csv_rows = list(csv.DictReader(io.StringIO(analyze_command("--format", "csv"))))
    assert [row["name"] for row in csv_rows] == [row["name"] for row in document["tables"]]
    assert all(int(row["samples"]) == rows[row["name"]]["samples"] for row in csv_rows)
    assert "nothing lost: 0 events lost" in analyze_command()
    details = analyze_command("--details")  # the default is a summary (README, "Using it")
    assert "IDL-b-128" in details and "p99.9 (ns)" in details


def test_damaged_capture_accounts_for_every_table(exact_run, tmp_path):
    """The capture file damaged (issue 29 point 2): ``latscope analyze``'s bounded analysis
    still reports every table of the undamaged capture, each with kept + discarded + lost
    equal to its undamaged count (the tables of a window a hole swallowed too, from the
    suite's plan in the metadata), and only those."""
    from latscope.analysis.summary import analyze_capture
    from support.damage import KINDS, damage, unaccounted

    _, run, _ = exact_run
    _, tables = analyze_capture(run.capture_path)
    counts = {name: table.stats()["samples"] for name, table in tables.items()}
    data = run.capture_path.read_bytes()
    path = tmp_path / "damaged.lsc"
    analysed = 0
    for kind in KINDS:
        for rate in (1e-4, 1e-3, 1e-2):
            rng = random.Random(f"truth {kind} {rate}")
            path.write_bytes(damage(data, rate, kind, rng))
            try:
                _, damaged = analyze_capture(path, background=False)
            except CaptureFileError:
                continue  # every copy of the metadata destroyed
            assert unaccounted(damaged, counts) == [], f"{kind} {rate:g}"
            analysed += 1
    assert analysed >= len(KINDS)
