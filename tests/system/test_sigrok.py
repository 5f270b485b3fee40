"""sigrok and PulseView: the latscope protocol decoders (decoders/) under Debian's sigrok-cli,
on exports of captures from the full-system simulation (``sim:soc``), must give every latency
sample that ``latscope.analysis.pairing.analyze`` computes from the same capture; the marker decoder
must read a plain logic-analyzer capture of the trace port; the live VCD stream must decode
while the capture runs; PulseView must open an export with the decoders attached.

Needs ``sigrok-cli`` (scripts/setup.sh installs it; its absence fails these tests). The
PulseView test needs ``pulseview``, ``Xvfb``, ``xwd`` and ``tesseract`` and is skipped only when
``pulseview`` is absent.
"""

import csv
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest
from test_ground_truth import FLOOD_CFLAGS

from latscope.analysis.pairing import analyze
from latscope.capture.file import CaptureWriter, load_capture
from latscope.capture.suite import DEMO_IRQ, capture_suite
from latscope.export import sigrok_rules
from latscope.export.files import export_capture
from latscope.export.formats import EXPORT_FORMATS
from latscope.export.levels import Changes
from latscope.export.live import PULSEVIEW_BLOCK, stream_capture
from latscope.export.sigrok import write_sr
from latscope.report.run_description import conditions_line
from latscope.simulated.soc import ROOT, SocSimulation, SuiteSettings, build_soc
from latscope_defs.channels import Layout
from latscope_defs.markers import Point, Test, encode
from latscope_defs.protocol import VERSION, Source, StreamEncoder, irq_value
from support.suite_tables import table_names

DECODERS = ROOT / "decoders"
#: Suite builds (firmware, per settings: one directory each, so that they do not overwrite
#: each other's firmware).
BUILD_DIR = ROOT / "firmware" / "suite" / "build" / "pytest-sigrok"
LOSSY_BUILD_DIR = ROOT / "firmware" / "suite" / "build" / "pytest-sigrok-loss"
LOADED_BUILD_DIR = ROOT / "firmware" / "suite" / "build" / "pytest-sigrok-load"
SAMPLES = 20


def sigrok_env():
    return dict(os.environ, SIGROKDECODE_DIR=str(DECODERS))


def sigrok_cli(*args):
    """Runs sigrok-cli with the repository's decoders; returns its stdout."""
    result = subprocess.run(
        ["sigrok-cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=sigrok_env(),
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "srd: " not in result.stderr, result.stderr
    return result.stdout


def csv_samples(text, origin):
    """(table, start cycle, cycles) of latscope_latency's CSV output."""
    rows = list(csv.DictReader(text.splitlines()))
    return sorted(
        (row["table"], int(row["start_sample"]) + origin, int(row["ticks"])) for row in rows
    )


def analyze_samples(capture):
    tables = analyze(capture.events, capture.stamp_hz)
    return tables, sorted(
        (name, int(start), int(cycles))
        for name, table in tables.items()
        for start, cycles in zip(table.starts, table.samples)
    )


def suite_capture(
    tmp_path,
    marker,
    *,
    samples=SAMPLES,
    tests="all",
    cflags="",
    truth=False,
    build_dir=BUILD_DIR,
    **conditions,
):
    """``conditions``: the suite's load and cache (SuiteSettings ``load``, ``load_param``,
    ``cache``)."""
    settings = SuiteSettings(
        marker=marker, samples=samples, tests=tests, cflags=cflags, **conditions
    )
    build = build_soc(settings, build_dir=build_dir)
    path = tmp_path / f"{marker}.lsc"
    truth_path = tmp_path / f"{marker}.truth" if truth else None
    run = capture_suite(build, DEMO_IRQ, output=path, truth=truth_path, timeout=300)
    assert run.exit_code == 0, run.console[-3000:]
    return load_capture(path), truth_path, build


@pytest.fixture(scope="module")
def suite_runs(tmp_path_factory):
    """``run(marker)``: the whole suite (every test, a few samples each) on the simulated
    SoC, markers on the GPIO trace port ("gpio") or the bus window ("bus"); run once each,
    on first use: (capture, ground-truth log, build, directory)."""
    runs = {}

    def run(marker):
        if marker not in runs:
            tmp = tmp_path_factory.mktemp(f"sigrok-{marker}")
            runs[marker] = (*suite_capture(tmp, marker, truth=True), tmp)
        return runs[marker]

    return run


def test_generated_tables_are_current():
    assert sigrok_rules.stale(DECODERS) == [], "run: python -m latscope.export.sigrok_rules --write"


@pytest.mark.verilator
@pytest.mark.parametrize("marker", ["gpio", "bus"])
@pytest.mark.parametrize("fmt", EXPORT_FORMATS, ids=lambda writer: writer.name)
def test_decoders_give_every_sample_of_analyze(suite_runs, marker, fmt):
    """Every export format, decoded by sigrok-cli, gives the samples of analyze."""
    capture, _, _, tmp = suite_runs(marker)
    out = tmp / f"export{fmt.suffix}"
    info = export_capture(capture, [fmt(out)])
    layout = Layout.for_identity(capture.identity)
    source = ["-i", out] + (["-I", fmt.sigrok_input] if fmt.sigrok_input else [])
    decoded = sigrok_cli(*source, "-P", layout.decoder_stack(), "-B", "latscope_latency=csv")

    tables, expected = analyze_samples(capture)
    # Every table of the suite (27, docs/tests.md), each with samples.
    assert len(tables) == 27 and all(len(t.samples) for t in tables.values()), {
        name: len(t.samples) for name, t in tables.items()
    }
    assert csv_samples(decoded, info.origin) == expected
    # The kernel's tick flags (the sim port marks its tick on the bus window): the same
    # samples flagged as analyze flags, and some are.
    flagged = sorted(
        (row["table"], int(row["start_sample"]) + info.origin)
        for row in csv.DictReader(decoded.splitlines())
        if row["kernel_tick"] == "1"
    )
    assert flagged == sorted(
        (name, int(start))
        for name, table in tables.items()
        for start, ticked in zip(table.starts, table.ticked)
        if ticked
    )
    assert flagged

    # Meta output: once per table, at its test's END, the number of its samples.
    meta = sigrok_cli(*source, "-P", layout.decoder_stack(), "-M", "latscope_latency")
    counts = re.findall(r"^latscope_latency-1: (\S+) samples: (\d+)$", meta, re.M)
    assert sorted(counts) == sorted((name, str(len(t.samples))) for name, t in tables.items())


@pytest.mark.verilator
def test_latency_annotations_name_the_table_and_unit(suite_runs):
    """Each annotation names its table and gives the latency with its unit; the options
    choose the tables (prefixes) and the unit; the totals per table come at its test's END."""
    capture, _, _, tmp = suite_runs("gpio")
    out = tmp / "annotated.sr"
    export_capture(capture, [out])
    stack = Layout.for_identity(capture.identity).decoder_stack()
    tables, _ = analyze_samples(capture)
    cycle_ns = 1e9 / capture.stamp_hz

    def lines(options, rows="il:idl:tsl:op"):
        text = sigrok_cli("-i", out, "-P", stack + options, "-A", f"latscope_latency={rows}")
        return re.findall(
            r"^latscope_latency-1: (\S+) (\d+\.\d+) (us|ns) \((\d+) ticks"
            r"(?:, kernel tick inside)?\)$",
            text,
            re.M,
        )

    default = lines("")
    assert len(default) == sum(len(t.samples) for t in tables.values())
    for _, value, unit, ticks in default:
        assert unit == "us" and float(value) == pytest.approx(int(ticks) * cycle_ns / 1e3, abs=5e-4)
    chosen = lines(":tables=IL-a/TSL:unit=ns")
    assert {name for name, *_ in chosen} == {
        name for name in tables if name.startswith(("IL-a", "TSL"))
    }
    assert all(
        unit == "ns" and float(value) == pytest.approx(int(ticks) * cycle_ns)
        for _, value, unit, ticks in chosen
    )
    totals = sigrok_cli("-i", out, "-P", stack, "-A", "latscope_latency=totals")
    il = tables["IL-a-1"].samples * cycle_ns / 1e3
    found = re.search(
        r"^latscope_latency-1: IL-a-1: (\d+) samples, min (\S+) us, "
        r"avg (\S+) us, max (\S+) us, (\d+) with a tick$",
        totals,
        re.M,
    )
    assert found, totals
    count, low, mean, high, ticked = found.groups()
    assert (int(count), low, high) == (len(il), f"{il.min():.3f}", f"{il.max():.3f}")
    assert int(ticked) == np.count_nonzero(tables["IL-a-1"].ticked)
    # A sample with a tick in it says so, in every form; the kernel's markers by name.
    text = sigrok_cli("-i", out, "-P", stack, "-A", "latscope_latency=il:idl:tsl:op")
    flagged = re.findall(
        r"^latscope_latency-1: \S+ \S+ us \(\d+ ticks, kernel tick inside\)$", text, re.M
    )
    assert len(flagged) == sum(np.count_nonzero(t.ticked) for t in tables.values()) > 0
    markers = sigrok_cli("-i", out, "-P", stack, "-A", "latscope_marker=markers")
    assert "kernel tick entry" in markers and "kernel tick exit" in markers
    assert not re.search(r"KERNEL T[12]", markers)
    # The average is shown to 1 ns: one rounding apart at most (an exact x.xxx5 us).
    assert float(mean) == pytest.approx(il.mean(), abs=1.01e-3)


@pytest.mark.verilator
def test_window_export_carries_its_test_context(suite_runs):
    """A window that starts inside a test (after its START and PARAM markers) is decoded as
    the whole capture is: its START and PARAM are repeated at samples 1 and 2."""
    capture, _, _, tmp = suite_runs("gpio")
    tables, expected = analyze_samples(capture)
    # Inside IDL-b-128 (parameter 128: a START with argument 0 and a PARAM with 1), from
    # its third sample to its last but two.
    table = tables["IDL-b-128"]
    start, stop = int(table.starts[2]) - 5, int(table.starts[-2])
    out = tmp / "window.sr"
    info = export_capture(capture, [out], start=start, stop=stop)
    assert info.context == 2 and "repeated at samples 1..2" in info.summary()
    stack = Layout.for_identity(capture.identity).decoder_stack()
    decoded = csv_samples(
        sigrok_cli("-i", out, "-P", stack, "-B", "latscope_latency=csv"), info.origin
    )
    inside = [
        (name, first, cycles)
        for name, first, cycles in expected
        if first >= start and first + cycles < stop
    ]
    assert decoded == inside and {name for name, *_ in decoded} == set(
        table_names([Test.IDL_B], parameters={Test.IDL_B: (128,)})
    )
    assert len([name for name, *_ in decoded if name == "IDL-b-128"]) == len(table.starts) - 4


def latscope_cli(*args, cwd=None):
    """``latscope ARGS`` with the repository's decoders; its stderr (it must succeed)."""
    run = subprocess.run(
        [sys.executable, "-m", "latscope.cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=sigrok_env(),
        cwd=cwd,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stderr


def pvs_options(text, decoder):
    """The options a PulseView setup gives decoder number ``decoder`` of its stack, string
    options decoded: {name: value}."""
    found = re.findall(rf"^decoder{decoder}\\option(\d+)\\(name|type|value)=(.*)$", text, re.M)
    fields = {}
    for index, key, value in found:
        fields.setdefault(index, {})[key] = value
    strings = {}
    for option in fields.values():
        assert option["type"] == "s", option  # what PulseView stores of a string option
        found = re.fullmatch(r"@ByteArray\((.*)\\0\)", option["value"])
        assert found, option
        strings[option["name"]] = found.group(1)
    return strings


@pytest.mark.verilator
def test_decoders_name_the_load_and_caches_as_the_results_do(tmp_path):
    """A capture of a loaded suite (the bus load at 50 % duty): ``latscope export`` writes
    its load and caches into the .pvs (latscope_latency's options) and into the sigrok-cli
    command it prints; that command, run as printed, names them in every Totals and Tests
    annotation as the reports' "measured under" line does, and its CSV carries them in
    the columns of results.csv."""
    capture, _, _ = suite_capture(
        tmp_path,
        "gpio",
        samples=5,
        tests="IL_A",
        build_dir=LOADED_BUILD_DIR,
        load="bus",
        load_param=50,
    )
    latscope_cli("report", capture.path, "-o", tmp_path / "report", "--no-figures", "--worst", 0)
    document = json.loads((tmp_path / "report" / "results.json").read_text())
    conditions = document["conditions"]
    assert conditions == {"load": "bus", "load_param": 50, "cache": "on"}
    with open(tmp_path / "report" / "results.csv") as rows:
        expected_cells = {
            row["name"]: (row["load"], row["load_param"], row["cache"])
            for row in csv.DictReader(rows)
        }

    printed = latscope_cli("export", capture.path, "--sr", "loaded.sr", cwd=tmp_path)
    lines = printed.splitlines()
    command = "\n".join(lines[lines.index("decode with (as it runs from here):") + 1 :])
    decoded = subprocess.run(
        command, shell=True, cwd=tmp_path, env=sigrok_env(), capture_output=True, text=True
    )
    assert decoded.returncode == 0 and "Traceback" not in decoded.stderr, decoded.stderr
    measured = f"({conditions_line(conditions)})"
    totals = re.findall(
        r"^latscope_latency-1: (\S+): \d+ samples, min .* with a tick (.*)$", decoded.stdout, re.M
    )
    tests = re.findall(r"^latscope_latency-1: test \d+: .* samples (.*)$", decoded.stdout, re.M)
    assert sorted(name for name, _ in totals) == sorted(expected_cells), decoded.stdout
    assert {text for _, text in totals} == set(tests) == {measured}, decoded.stdout

    stack = re.search(r" -P (\S+) ", command).group(1)
    rows = csv.DictReader(
        sigrok_cli(
            "-i", tmp_path / "loaded.sr", "-P", stack, "-B", "latscope_latency=csv"
        ).splitlines()
    )
    cells = {(row["table"], (row["load"], row["load_param"], row["cache"])) for row in rows}
    assert cells == set(expected_cells.items())

    pvs = (tmp_path / "loaded.pvs").read_text()
    assert "decoder1\\id=latscope_latency" in pvs
    assert pvs_options(pvs, 1) == {
        key: str(value) for key, value in conditions.items() if value is not None
    }


def readme_ols_stack():
    """The ``-P`` argument README gives for a capture through SUMP / ``ols`` (channels
    named 0..21)."""
    text = (ROOT / "README.md").read_text()
    found = re.findall(r"^P=(latscope_marker:\S*strobe=16\S*)$", text, re.M)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.verilator
def test_readme_ols_mapping_decodes_sump_channel_numbers(suite_runs, tmp_path):
    """README's ``-P`` for an ``ols`` capture, on the export with its channels named as
    SUMP names them (channel n = "n", the same bit order), decodes every sample the
    export's own stack decodes."""
    capture, _, _, _ = suite_runs("gpio")
    named = tmp_path / "named.sr"
    export_capture(capture, [named])
    numbered = tmp_path / "numbered.sr"
    with zipfile.ZipFile(named) as source, zipfile.ZipFile(numbered, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "metadata":
                data = re.sub(
                    rb"^probe(\d+)=.*$",
                    lambda m: b"probe%s=%d" % (m[1], int(m[1]) - 1),
                    data,
                    flags=re.M,
                )
            target.writestr(item, data)
    stack = Layout.for_identity(capture.identity).decoder_stack()
    expected = sigrok_cli("-i", named, "-P", stack, "-B", "latscope_latency=csv")
    got = sigrok_cli("-i", numbered, "-P", readme_ols_stack(), "-B", "latscope_latency=csv")
    assert len(expected.splitlines()) > 200
    assert sorted(got.splitlines()) == sorted(expected.splitlines())


@pytest.mark.verilator
def test_decoders_discard_pairs_across_a_loss(tmp_path):
    """The IL-a thread marks every poll (test_ground_truth's flood): more markers than the
    link carries, the FIFO overflows and the appliance reports LOSS records; pairs across one
    are discarded."""
    capture, _, _ = suite_capture(
        tmp_path,
        "gpio",
        samples=60,
        tests="IL_A",
        cflags=FLOOD_CFLAGS,
        build_dir=LOSSY_BUILD_DIR,
    )
    assert capture.parser_stats.lost_total > 0
    out = tmp_path / "lossy.sr"
    info = export_capture(capture, [out])
    layout = Layout.for_identity(capture.identity)
    stack = layout.decoder_stack()
    tables, expected = analyze_samples(capture)
    discarded = sum(table.discarded for table in tables.values())
    assert discarded > 0 and expected

    assert (
        csv_samples(sigrok_cli("-i", out, "-P", stack, "-B", "latscope_latency=csv"), info.origin)
        == expected
    )
    lines = sigrok_cli("-i", out, "-P", stack, "-A", "latscope_latency=discarded").splitlines()
    assert len(lines) == discarded
    # Each names its table with the test's parameter filled in ("TSL-a-3: ...").
    assert all(re.search(r": [A-Z]+-[a-z]-\d+: events lost in between$", line) for line in lines), (
        lines[:5]
    )


def test_marker_decoder_shows_each_irq_edges_trigger_delay(tmp_path):
    """A capture with triggered IRQ edges exports the delay lane (DELAY0 ..: each edge's
    delay from its IRQ record, latscope_defs.channels.DELAY_LANE), and the marker decoder
    names the delay of every asserting edge; one without has no lane."""
    delays = [0, 7, 300, 16383, 5]
    encoder = StreamEncoder()
    for n, delay in enumerate(delays):
        at = 1000 + 400 * n
        encoder.event(at, Source.MARKER, encode(Test.IL_A, Point.PARAM, n))
        encoder.event(at + 20 + delay % 50, Source.IRQ, irq_value(1, 1, delay))
        encoder.event(at + 120, Source.IRQ, irq_value(0, 1, delay))
    encoder.flush()
    identity = {"version": VERSION, "clock_hz": 100_000_000, "edge_count": 0, "latency": {}}
    path = tmp_path / "triggered.lsc"
    with CaptureWriter(path, {"identity": identity}) as writer:
        writer.write(encoder.take())
    out = tmp_path / "triggered.sr"
    info = export_capture(load_capture(path), [out])
    assert info.layout.delay_lane and "DELAY13" in info.layout.names
    lines = sigrok_cli("-i", out, "-P", info.layout.decoder_stack(), "-A", "latscope_marker=irq")
    shown = re.findall(r"IRQ asserted, trigger delay (\d+) cycles", lines)
    assert [int(delay) for delay in shown] == delays, lines
    untriggered = Layout()  # the lane only with triggered edges: none in a plain capture
    assert not untriggered.delay_lane and "DELAY0" not in untriggered.names


def truth_lines(path):
    for line in Path(path).read_text().splitlines():
        if not line.startswith("#"):
            cycle, kind, *fields = line.split()
            yield int(cycle), kind, fields


@pytest.mark.verilator
def test_plain_logic_analyzer_capture(suite_runs):
    """The trace port as a 16-channel logic analyzer (fx2lafw) at 24 MHz sees it: data bits
    0..13 on D0..D13, the strobe on D14, the IRQ line on D15, sampled from the harness's
    ground-truth log of the pins; saved by sigrok-cli as VCD (100 ps timescale) and decoded
    with latscope_marker, sampling the data one analyzer sample after the strobe edge. The
    latency decoder on the analyzer's capture gives every sample of analyze, each within the
    analyzer's resolution."""
    capture, truth, _, tmp = suite_runs("gpio")
    clock_hz, la_hz, delay = capture.clock_hz, 24_000_000, 1
    # Pin words in analyzer samples: a change in cycle c is seen from sample
    # ceil(c * la_hz / clock_hz) on.
    word, stamps, words = 0, [], []
    markers, irq_rises = [], []
    for cycle, kind, fields in truth_lines(truth):
        sample = -(-cycle * la_hz // clock_hz)
        if kind == "gpio":
            pins = int(fields[0], 16)
            if (pins >> 16) & 1 != (word >> 14) & 1:
                markers.append((sample, pins & 0x3FFF))
            word = (word & ~0x7FFF) | (pins & 0x3FFF) | (((pins >> 16) & 1) << 14)
        elif kind == "irq":
            word = (word & ~(1 << 15)) | (int(fields[0]) << 15)
            if int(fields[0]):
                irq_rises.append(sample)
        else:
            continue
        if stamps and stamps[-1] == sample:
            words[-1] = word
        else:
            stamps.append(sample)
            words.append(word)
    # The analyzer records on after the DUT's last marker, as one does: the decoder puts a
    # marker's annotation when the row's next event comes or 10 us (its HOLD_SECONDS) have
    # passed, so a capture ending sooner after the last marker does not show that one.
    samples = stamps[-1] + la_hz // 50_000
    la_sr, la_vcd = tmp / "analyzer.sr", tmp / "analyzer.vcd"
    write_sr(
        la_sr,
        [f"D{n}" for n in range(16)],
        Changes(np.array(stamps, np.int64), np.array(words, np.uint64)),
        la_hz,
        origin=0,
        samples=samples,
    )
    sigrok_cli("-i", la_sr, "-O", "vcd", "-o", la_vcd)
    header = la_vcd.read_text()[:2000]
    timescale_ps = int(re.search(r"\$timescale (\d+) ps", header).group(1))
    per_sample = 10**12 / timescale_ps / la_hz  # VCD samples per analyzer sample

    channels = ":".join([f"d{n}=D{n}" for n in range(14)] + ["strobe=D14", "irq=D15"])
    text = sigrok_cli(
        "-I",
        "vcd",
        "-i",
        la_vcd,
        "-P",
        f"latscope_marker:sample_delay={round(delay * per_sample)}:{channels}",
        "--protocol-decoder-samplenum",
        "-A",
        "latscope_marker=start:end:isr-entry:isr-exit:t1:t2:thread:param:irq-assert",
    )
    decoded, irq = {}, []
    for start, _, label in re.findall(r"^(\d+)-(\d+) latscope_marker-1: (.*)$", text, re.M):
        at = round(int(start) / per_sample)
        if label == "IRQ asserted":
            irq.append(at)
        else:
            decoded[at] = int(re.search(r"\(0x([0-9a-f]{4})\)", label).group(1), 16)

    # A marker shows if its strobe edge falls between two analyzer samples of its own and
    # its data holds until the sample after; those must all be decoded, exactly.
    readable = [
        (at, value)
        for (prev, _), (at, value), (after, _) in zip(
            [(-9, 0)] + markers, markers, markers[1:] + [(1 << 62, 0)]
        )
        if prev < at and after > at + delay
    ]
    assert len(readable) > 500
    assert all(decoded.get(at) == value for at, value in readable)
    # Every decoded marker is a real strobe edge (no invented marker).
    assert set(decoded) <= {at for at, _ in markers}
    assert irq == irq_rises and len(irq) > 10

    # The latency decoder on the analyzer's own session file: every table, every sample,
    # each within one analyzer period of the exact one (the analyzer's quantisation).
    decoded = sigrok_cli(
        "-i",
        la_sr,
        "-P",
        f"latscope_marker:sample_delay={delay}:{channels},latscope_latency",
        "-B",
        "latscope_latency=csv",
    )
    period = clock_hz / la_hz  # cycles per analyzer sample
    # The analyzer sees the trace port only, not the kernel's markers on the bus (ILH).
    tables = analyze(capture.events[capture.events.source != Source.BUS], clock_hz)
    rows = list(csv.DictReader(decoded.splitlines()))
    assert sorted(row["table"] for row in rows) == sorted(
        name for name, table in tables.items() for _ in table.samples
    )
    for name, table in tables.items():
        mine = [row for row in rows if row["table"] == name]
        starts = np.array([int(row["start_sample"]) for row in mine]) * period
        cycles = np.array([int(row["ticks"]) for row in mine]) * period
        assert np.all(np.abs(starts - table.starts) < period), name
        assert np.all(np.abs(cycles - table.samples) < period), name


@pytest.mark.verilator
def test_live_stream_decodes_while_the_capture_runs(suite_runs, tmp_path):
    """``latscope stream`` into ``sigrok-cli -i - -I vcd``, padded for PulseView: the samples
    of the live stream are those of analyze on the capture written alongside, and the first
    ones come out while the simulation still runs."""
    capture, _, build, _ = suite_runs("gpio")
    build = build_soc(build.settings, build_dir=BUILD_DIR)  # (still) the suite's firmware
    layout = Layout.for_identity(capture.identity)
    reader = subprocess.Popen(
        [
            "stdbuf",
            "-oL",
            "sigrok-cli",
            "-i",
            "-",
            "-I",
            "vcd",
            "-P",
            layout.decoder_stack(),
            "-B",
            "latscope_latency=csv",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=sigrok_env(),
    )
    lines, first_line_at = [], []

    def read():
        for line in reader.stdout:
            if not first_line_at and line.startswith(b"IL"):
                first_line_at.append(time.monotonic())
            lines.append(line.decode())

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    capture_path = tmp_path / "live.lsc"
    try:
        live = stream_capture(
            SocSimulation(build),
            reader.stdin,
            irq=DEMO_IRQ,
            block=PULSEVIEW_BLOCK,
            capture=capture_path,
        )
        stream_ended = time.monotonic()
    finally:
        reader.stdin.close()
        try:
            reader.wait(timeout=120)
        finally:
            reader.kill()
    assert reader.returncode == 0
    thread.join(timeout=10)

    capture = load_capture(capture_path)
    _, expected = analyze_samples(capture)
    assert len(expected) > 200
    assert csv_samples("".join(lines), live.origin) == expected
    # Decoded before the stream ended (and sigrok-cli saw its end of input).
    assert first_line_at and first_line_at[0] < stream_ended


# --- PulseView ------------------------------------------------------------------------------


def xwd_to_png(xwd, png):
    """A 24/32-bit TrueColor X window dump (xwd -root) as a PNG file."""
    data = Path(xwd).read_bytes()
    header = struct.unpack(">25I", data[:100])
    header_size, width, height = header[0], header[4], header[5]
    byte_order, bits_per_pixel, bytes_per_line, ncolors = (
        header[7],
        header[11],
        header[12],
        header[19],
    )
    assert bits_per_pixel == 32, bits_per_pixel
    pixels = np.frombuffer(data, np.uint8, bytes_per_line * height, header_size + 12 * ncolors)
    pixels = pixels.reshape(height, bytes_per_line)[:, : width * 4].reshape(height, width, 4)
    rgb = pixels[:, :, [2, 1, 0]] if byte_order == 0 else pixels[:, :, [1, 2, 3]]

    def chunk(kind, body):
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    raw = b"".join(b"\0" + row.tobytes() for row in np.ascontiguousarray(rgb))
    Path(png).write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw, 6))
        + chunk(b"IEND", b"")
    )
    return rgb


#: The window size the screenshot test checks: a common laptop screen.
SCREEN = (1600, 900)
#: Screen rows of the ruler in a 1600x900 PulseView window at +0+0.
RULER_ROWS = (90, 125)


@pytest.fixture
def xserver(tmp_path):
    """A virtual X display (Xvfb) of SCREEN's size; its number."""
    read_fd, write_fd = os.pipe()
    server = subprocess.Popen(
        [
            "Xvfb",
            "-displayfd",
            str(write_fd),
            "-screen",
            "0",
            f"{SCREEN[0]}x{SCREEN[1]}x24",
            "-nolisten",
            "tcp",
        ],
        pass_fds=(write_fd,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_fd)
    with os.fdopen(read_fd) as pipe:
        display = pipe.readline().strip()
    assert display, "Xvfb did not start"
    yield f":{display}"
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=10)


def write_gray_png(gray, png):
    """An 8-bit grayscale image as a PNG file."""

    def chunk(kind, body):
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    height, width = gray.shape
    raw = b"".join(b"\0" + row.tobytes() for row in np.ascontiguousarray(gray))
    Path(png).write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw, 6))
        + chunk(b"IEND", b"")
    )


def screen_text(rgb, tmp_path):
    """The text on a screenshot, read by tesseract: dark text on PulseView's light
    annotation boxes, made black on white at two thresholds and scaled 3x first (what
    tesseract reads best); the two readings one after the other."""
    rgb = rgb.astype(np.int32)
    luminance = (rgb[:, :, 0] * 299 + rgb[:, :, 1] * 587 + rgb[:, :, 2] * 114) // 1000
    texts = []
    for threshold in (90, 128):
        black_on_white = np.where(luminance < threshold, 0, 255).astype(np.uint8)
        image = tmp_path / f"screen-bw{threshold}.png"
        write_gray_png(black_on_white.repeat(3, 0).repeat(3, 1), image)
        result = subprocess.run(
            ["tesseract", str(image), "-", "--psm", "11"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        texts.append(result.stdout)
    return "\n".join(texts)


#: A latency annotation as tesseract reads it: a table name (1 and l look alike), a value
#: and the unit (the digits themselves are not always read right).
LATENCY_TEXT = re.compile(r"\b(I[DL1l]{1,2}-a-[1lI]) +(\d+\.\d+) *us\b")


@pytest.mark.pulseview
@pytest.mark.verilator
@pytest.mark.skipif(shutil.which("pulseview") is None, reason="pulseview is not installed")
def test_pulseview_shows_named_latencies_in_a_laptop_window(suite_runs, xserver, tmp_path):
    """PulseView 0.4.2 opens OUT.sr in a 1600x900 window, finds OUT.pvs beside it and runs
    the decoder stack; on the screenshot (an artifact: pulseview.png in this test's
    tmp_path) tesseract reads the IL and IDL rows' annotations of the first IL-a samples:
    table names with latencies in us, and the IL-a-1 totals."""
    capture, _, _, _ = suite_runs("gpio")
    tables = analyze(capture.events, capture.stamp_hz)
    export = tmp_path / "suite.sr"
    export_capture(capture, [export])
    home = tmp_path / "home"
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    env = dict(
        sigrok_env(),
        DISPLAY=xserver,
        HOME=str(home),
        XDG_RUNTIME_DIR=str(runtime),
        QT_QPA_PLATFORM="xcb",
    )
    log = tmp_path / "pulseview.log"
    with open(log, "w") as out:
        viewer = subprocess.Popen(
            ["pulseview", "-geometry", f"{SCREEN[0]}x{SCREEN[1]}+0+0", str(export)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    try:
        deadline = time.monotonic() + 60
        while "Acquisition took" not in log.read_text() and time.monotonic() < deadline:
            assert viewer.poll() is None, log.read_text()
            time.sleep(0.5)
        # Decoding and drawing go on after the data is in: screenshots until the text shows
        # (or 120 s passed: at a load of 4+ on two cores, 40 s once ended on a window still
        # reloading the session; a passing run breaks out at its first readable screenshot).
        deadline = time.monotonic() + 120
        while True:
            time.sleep(2)
            shot = tmp_path / "pulseview.xwd"
            subprocess.run(["xwd", "-root", "-silent", "-out", str(shot)], env=env, check=True)
            rgb = xwd_to_png(shot, tmp_path / "pulseview.png")
            seen = screen_text(rgb, tmp_path)
            if shows_latencies(seen, tables) or time.monotonic() > deadline:
                break
    finally:
        viewer.terminate()
        viewer.wait(timeout=10)
    text = log.read_text()
    print(f"screenshot: {tmp_path / 'pulseview.png'}")
    assert "Acquisition took" in text, text
    assert '"latscope"' in text, text  # the decode signal of suite.pvs exists
    assert "Decoder reported an error" not in text and "Traceback" not in text, text
    assert rgb.shape[:2] == (SCREEN[1], SCREEN[0])

    print(seen)
    assert shows_latencies(seen, tables), seen
    # The marker strobe and the IRQ output are on screen too, above the decoder rows.
    layout = Layout.for_identity(capture.identity)
    assert label_shown(rgb, layout, "STROBE") and label_shown(rgb, layout, "IRQ")


#: PulseView 0.4.2's logic trace colours, by channel index modulo 10
#: (pv/views/trace/logicsignal.cpp: SignalColors); a trace's label box is filled with it.
PULSEVIEW_COLOURS = [
    (0x16, 0x19, 0x1A),
    (0x8F, 0x52, 0x02),
    (0xCC, 0x00, 0x00),
    (0xF5, 0x79, 0x00),
    (0xED, 0xD4, 0x00),
    (0x73, 0xD2, 0x16),
    (0x34, 0x65, 0xA4),
    (0x75, 0x50, 0x7B),
    (0x88, 0x8A, 0x85),
    (0xEE, 0xEE, 0xEC),
]
#: Screen columns of the trace labels and rows of the trace area in a 1600x900 window.
LABEL_COLUMNS, TRACE_ROWS = (30, 110), (RULER_ROWS[1], SCREEN[1] - 30)


def label_shown(rgb, layout, name):
    """Whether the label of logic trace ``name`` (a box of its colour at least 10 pixels
    high in the label column) is inside the trace area of a screenshot."""
    colour = PULSEVIEW_COLOURS[layout.bit(name) % len(PULSEVIEW_COLOURS)]
    column = rgb[TRACE_ROWS[0] : TRACE_ROWS[1], LABEL_COLUMNS[0] : LABEL_COLUMNS[1]].astype(int)
    filled = (np.abs(column - np.array(colour)).sum(axis=2) < 12).sum(axis=1) > 10
    return filled.sum() >= 10


def shows_latencies(seen, tables):
    """Whether screen text ``seen`` has IL and IDL annotations with values in us, and a
    count of samples the decoder put at test 1's end: the totals of IL-a-1 or of ILH-a-1
    (the same window's tables: their totals share the window's span, and PulseView draws
    the last on top) with its number of samples (a colon may read as a semicolon), or the
    Tests row's line for the window with the sum over its tables (the row above Totals: a
    CI run's screenshots at load 4+ showed it and not the Totals row)."""
    latencies = LATENCY_TEXT.findall(seen)
    count = len(tables["IL-a-1"].samples)
    window_count = sum(len(tables[name].samples) for name in ("IDL-a-1", "IL-a-1", "ILH-a-1"))
    totals = rf"I[L1l|]H?-a-[1lI][:;] {count} samples, min \d+\.\d{{3}} us"
    window = rf"test 1: I[DL1l|]{{1,2}}-a-[1lI], .*-a-[1lI], {window_count} samples"
    return (
        {"IDL" if "D" in name else "IL" for name, _ in latencies} == {"IL", "IDL"}
        # microseconds (the digits themselves are not always read right)
        and all(0.1 < float(value) < 100 for _, value in latencies)
        and (re.search(totals, seen) is not None or re.search(window, seen) is not None)
    )


#: A time label on PulseView's ruler, as tesseract reads it ("+20 ms", "+1.5 s").
RULER_LABEL = re.compile(r"\+ ?(\d+(?:\.\d+)?) ?(ms|us|µs|s)\b")


def ruler_end(rgb, tmp_path):
    """The largest time on the ruler of a screenshot (seconds), None if none is read."""
    strip = rgb[RULER_ROWS[0] : RULER_ROWS[1]]
    scale = {"s": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6}
    times = [
        float(value) * scale[unit]
        for value, unit in RULER_LABEL.findall(screen_text(strip, tmp_path))
    ]
    return max(times, default=None)


@pytest.mark.pulseview
@pytest.mark.verilator
@pytest.mark.skipif(shutil.which("pulseview") is None, reason="pulseview is not installed")
def test_pulseview_live_view_follows_the_data(xserver, tmp_path):
    """``latscope stream --view``'s PulseView (start_pulseview: a private copy of the
    user's settings with "zoom to fit during acquisition" on) zooms out as the stream
    grows: the ruler's last label, read from screenshots while the simulation streams,
    grows (with the setting off it stays at PulseView's initial 0..1500 ms). The user's own
    PulseView.conf is left as it was; the copy keeps its settings."""
    from latscope.export.pulseview import start_pulseview

    # (Enough samples for the stream to outlast several screenshots, 3 s apart, on the
    # faster simulator builds: the data then spans about 0.5 s of DUT time.)
    build = build_soc(
        SuiteSettings(tests="IL_A", samples=10000),
        build_dir=ROOT / "firmware" / "suite" / "build" / "pytest-live",
    )
    home = tmp_path / "home"
    user_conf = home / ".config" / "sigrok" / "PulseView.conf"
    user_conf.parent.mkdir(parents=True)
    user_conf.write_text("[Settings]\nView_ColoredBG=false\nView_ZoomToFitDuringAcq=false\n")
    before = user_conf.read_bytes()
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    env = dict(
        sigrok_env(),
        DISPLAY=xserver,
        HOME=str(home),
        XDG_RUNTIME_DIR=str(runtime),
        QT_QPA_PLATFORM="xcb",
    )
    env.pop("XDG_CONFIG_HOME", None)
    config_home = tmp_path / "view-config"
    log = tmp_path / "pulseview.log"
    with open(log, "w") as out:
        viewer = start_pulseview(
            tmp_path / "live.pvs",
            config_home,
            follow="fit",
            environ=env,
            args=["-geometry", f"{SCREEN[0]}x{SCREEN[1]}+0+0"],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    ends, streaming = [], threading.Event()
    streaming.set()

    def watch():
        while streaming.is_set():
            time.sleep(3)
            shot = tmp_path / "live.xwd"
            subprocess.run(["xwd", "-root", "-silent", "-out", str(shot)], env=env, check=True)
            rgb = xwd_to_png(shot, tmp_path / "live.png")
            if streaming.is_set():
                ends.append(ruler_end(rgb, tmp_path))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        live = stream_capture(
            SocSimulation(build),
            viewer.stdin,
            irq=DEMO_IRQ,
            block=PULSEVIEW_BLOCK,
            pvs=tmp_path / "live.pvs",
        )
        streaming.clear()
        watcher.join(timeout=30)
        viewer.stdin.close()
    finally:
        viewer.terminate()
        viewer.wait(timeout=10)
    print("ruler ends while streaming (s):", ends)
    assert live.events > 20000
    assert "Traceback" not in log.read_text(), log.read_text()
    read = [end for end in ends if end is not None]
    assert len(read) >= 3, ends
    # Zoomed to fit as the data came: the ruler ends below PulseView's initial 1.5 s at
    # first (the stream starts with milliseconds), then further out with every few
    # screenshots (tesseract may miss a decimal point in one of them).
    assert read[0] < 1.0 and read[-1] > 2 * read[0] and len(set(read)) >= 3, ends
    assert user_conf.read_bytes() == before
    copy = (config_home / "sigrok" / "PulseView.conf").read_text()
    assert "View_ColoredBG=false" in copy and "View_ZoomToFitDuringAcq=true" in copy, copy


def test_private_pulseview_settings_copy_the_users_and_turn_following_on(tmp_path):
    """The settings copy for ``stream --view``: the user's file byte for byte but for the
    one key (replaced in [Settings], or added), the user's file untouched; no user file:
    only the key."""
    from latscope.export.pulseview import write_private_config

    user = tmp_path / "xdg" / "sigrok" / "PulseView.conf"
    user.parent.mkdir(parents=True)
    text = (
        "[General]\nsessions=1\n\n[Settings]\nView_ColoredBG=false\n"
        "View_StickyScrolling=false\n\n[Session0]\nD0\\enabled=false\n"
    )
    user.write_text(text)
    environ = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path)}
    copy = write_private_config(tmp_path / "view", "scroll", environ).read_text()
    assert copy == text.replace("View_StickyScrolling=false", "View_StickyScrolling=true")
    copy = write_private_config(tmp_path / "view", "fit", environ).read_text()
    assert copy == text.replace("[Settings]\n", "[Settings]\nView_ZoomToFitDuringAcq=true\n")
    assert user.read_text() == text
    alone = write_private_config(tmp_path / "alone", "fit", {"HOME": str(tmp_path / "none")})
    assert alone.read_text() == "[Settings]\nView_ZoomToFitDuringAcq=true\n"
