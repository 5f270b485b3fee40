"""The IRQ loop method on the simulated SoC (docs/tests.md, "The IRQ loop").

``sim/firmware/irq_loop.c`` runs on the Verilated SoC with the appliance: its interrupt
handler toggles GPIO_OUT's loop bit, which rtl/top.v wires to EDGE2. ``latscope capture
--loop EDGE2`` is what the test does (a capture session with ``loop=``), and the capture
file's ``LOOP-EDGE2`` table must equal, sample for sample, the pairing of the harness's
ground-truth log (its own record of the IRQ line and of every GPIO store, made in C++ from
the simulated wires; paired here by a plain loop, not by latscope.analysis.loop).

The ``irq_loop_marked`` build writes the suite's IL marker (ISR_ENTRY, one bus store) first
in the same handler: one capture then has the marker-based IL-a-1 and the loop table of the
same interrupts. The loop sample of each IRQ is its IL-a-1 sample plus the instrumentation
cost: the handler's GPIO toggle after the marker (read GPIO_OUT, flip the bit, write it),
LOOP_COST_CYCLES, constant on this CPU, measured in the truth log and documented in
docs/tests.md.

Builds the appliance-enabled simulator if needed; the two runs take about 10 s.
"""

import tomllib
from pathlib import Path

import numpy as np
import pytest

from latscope.analysis.loop import tables_with_loop
from latscope.analysis.pairing import analyze
from latscope.capture.file import load_capture
from latscope.capture.session import CaptureSession, Until
from latscope.capture.suite import DEMO_IRQ
from latscope.report.results import load_tables
from latscope.simulated.soc import ROOT, SocSimulation, SuiteSettings, build_soc
from latscope_defs.protocol import Source

pytestmark = pytest.mark.verilator

LOOP_BIT = tomllib.loads((ROOT / "sim" / "soc_map.toml").read_text())["gpio"]["loop_bit"]
#: The handler's GPIO toggle after the IL marker's store completed, in CPU cycles: the
#: documented instrumentation cost of the loop (docs/tests.md), VexRiscv_IMAC.
LOOP_COST_CYCLES = 9
#: The IL marker value of the marked build: test IL_A (1), point ISR_ENTRY (2).
IL_ENTRY = (1 << 10) | (2 << 7)


def read_truth(path):
    """From the harness's log: cycles of the IRQ line's rising edges, of the loop pin's
    changes (GPIO stores that flip LOOP_BIT) and of the IL_A/ISR_ENTRY bus stores."""
    irq, loop, marker = [], [], []
    pin = 0
    for line in Path(path).read_text().splitlines():
        if line.startswith("#"):
            continue
        cycle, kind, *fields = line.split()
        if kind == "irq" and fields[0] == "1":
            irq.append(int(cycle))
        elif kind == "gpio":
            level = int(fields[0], 16) >> LOOP_BIT & 1
            if level != pin:
                loop.append(int(cycle))
            pin = level
        elif kind == "trace" and int(fields[1], 16) & ~0x7F == IL_ENTRY:
            marker.append(int(cycle))
    return irq, loop, marker


def truth_pairs(irq, loop):
    """{IRQ edge cycle: cycles to the first loop change after it and before the next edge}."""
    pairs = {}
    for k, edge in enumerate(irq):
        following = irq[k + 1] if k + 1 < len(irq) else float("inf")
        answer = next((change for change in loop if change > edge), None)
        if answer is not None and answer < following:
            pairs[edge] = answer - edge
    return pairs


def run_loop(tmp_path, program):
    build = build_soc(SuiteSettings(program=program))
    truth, output = tmp_path / f"{program}.truth", tmp_path / f"{program}.lsc"
    with CaptureSession(SocSimulation(build, truth=truth)) as session:
        session.configure_irq(DEMO_IRQ)
        run = session.capture(output, loop="EDGE2", until=Until(timeout=120))
        session.port.stop()
        assert session.port.exit_code == 0, session.port.console_text()[-2000:]
    assert run.metadata["loop"] == "EDGE2"
    assert run.parser_stats.lost_total == 0 and run.parser_stats.segments_bad == 0
    # The loop channel from the file's metadata: the file read in batches (what analyze and
    # report do) and the whole capture (the samples themselves) give the same table.
    _, accumulated = load_tables(output)
    capture = load_capture(output)
    tables = tables_with_loop(
        capture.events,
        capture.stamp_hz,
        analyze(capture.events, capture.stamp_hz),
        capture.metadata["loop"],
    )
    for name, table in tables.items():
        got, want = accumulated[name].stats(), table.stats()
        assert [got.get(k) for k in ("samples", "min_ns", "max_ns", "discarded")] == [
            want.get(k) for k in ("samples", "min_ns", "max_ns", "discarded")
        ], name
    return capture, tables, read_truth(truth)


@pytest.fixture(scope="module")
def loop_runs(tmp_path_factory):
    """``run(program)``: its capture, tables and truth, run once on first use."""
    runs = {}

    def run(program):
        if program not in runs:
            runs[program] = run_loop(tmp_path_factory.mktemp(program), program)
        return runs[program]

    return run


@pytest.fixture(params=["irq_loop", "irq_loop_marked"])
def loop_run(request, loop_runs):
    return request.param, loop_runs(request.param)


def test_loop_table_is_the_truth(loop_run):
    _, (capture, tables, (irq, loop, _)) = loop_run
    table = tables["LOOP-EDGE2"]
    pairs = truth_pairs(irq, loop)
    # Every IRQ edge the capture holds (they start with the capture) and its pair.
    events = capture.events
    edges = events.stamp[(events.source == Source.IRQ) & (events.value == 1)].astype(int)
    in_capture = [edge for edge in irq if edges[0] <= edge <= edges[-1]]
    assert edges.tolist() == in_capture
    captured = {int(a): int(s) for a, s in zip(table.starts, table.samples)}
    expected = {a: s for a, s in pairs.items() if a in set(in_capture)}
    assert len(captured) >= 290
    assert captured == expected
    assert table.discarded == 0
    # Unanswered: the edges before the program opened its line and after its last
    # interrupt, as the truth has them.
    assert table.parameters["unanswered"] == len(in_capture) - len(expected)
    assert table.parameters["irq_edges"] == len(in_capture)
    assert table.parameters["extra_edges"] == 0
    stats = table.stats()
    assert stats["min_ns"] == 10 * min(captured.values())  # 100 MHz: 10 ns a cycle


def test_loop_equals_marker_il_plus_the_instrumentation_cost(loop_runs):
    capture, tables, (irq, loop, marker) = loop_runs("irq_loop_marked")
    il, looped = tables["IL-a-1"], tables["LOOP-EDGE2"]
    il_of = dict(zip(il.starts.tolist(), il.samples.tolist()))
    loop_of = dict(zip(looped.starts.tolist(), looped.samples.tolist()))
    both = sorted(set(il_of) & set(loop_of))
    assert len(both) >= 290
    difference = np.array([loop_of[a] - il_of[a] for a in both])
    # In the truth log: each handler's toggle, LOOP_COST_CYCLES after its marker's store.
    cost = np.array(loop[-len(marker) :]) - np.array(marker)
    assert set(cost.tolist()) == {LOOP_COST_CYCLES}
    assert set(difference.tolist()) == {LOOP_COST_CYCLES}


def test_sigrok_decoder_gives_the_loop_table(loop_run, tmp_path):
    """latscope_latency with ``loop=EDGE2`` on the export of the capture: the LOOP-EDGE2
    samples of the host's table, no more, no fewer."""
    from test_sigrok import csv_samples, sigrok_cli

    from latscope.export.files import export_capture
    from latscope_defs.channels import Layout

    program, (capture, tables, _) = loop_run
    out = tmp_path / "loop.sr"
    info = export_capture(capture, [out])
    stack = Layout.for_identity(capture.identity).decoder_stack() + ":loop=EDGE2"
    decoded = csv_samples(
        sigrok_cli("-i", out, "-P", stack, "-B", "latscope_latency=csv"), info.origin
    )
    table = tables["LOOP-EDGE2"]
    assert [row for row in decoded if row[0] == "LOOP-EDGE2"] == sorted(
        ("LOOP-EDGE2", int(a), int(s)) for a, s in zip(table.starts, table.samples)
    )
