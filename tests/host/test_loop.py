"""The IRQ loop pairing (latscope.analysis.loop, docs/tests.md "The IRQ loop"): hand-built event
streams with the samples written out by hand, losses and holes of every kind, and the
command line (capture metadata, --loop on analyze and report)."""

import json

import numpy as np
import pytest

from latscope.analysis.loop import loop_table, parse_loop
from latscope.capture.file import CaptureWriter
from latscope.cli import main
from latscope.events import Events
from latscope_defs.markers import KERNEL_TICK_ENTRY, Test, encode
from latscope_defs.protocol import HOLE_SOURCE, Source, StreamEncoder, loss_value
from support.results_schema import problems

IRQ, E2, E1, MARKER, LOSS = Source.IRQ, Source.EDGE2, Source.EDGE1, Source.MARKER, Source.LOSS
TICK = encode(Test.KERNEL, KERNEL_TICK_ENTRY)  # the kernel's tick marker


def events(*rows):
    stamp, source, value = zip(*rows)
    return Events(stamp, source, value)


def table(*rows, channel="EDGE2"):
    return loop_table(events(*rows), 1e9, channel)


def test_each_irq_edge_pairs_with_the_next_change_of_the_loop_channel():
    t = table(
        (100, IRQ, 1),
        (150, IRQ, 0),
        (170, E2, 1),  # 70
        (1000, IRQ, 1),
        (1040, E1, 1),
        (1055, E2, 0),  # 55 (EDGE1 is not the loop)
        (2000, IRQ, 1),
        (2100, IRQ, 0),  # unanswered
        (3000, IRQ, 1),
        (3010, E2, 1),
        (3020, E2, 0),
    )  # 10, one extra change
    assert t.name == "LOOP-EDGE2"
    assert t.samples.tolist() == [70, 55, 10]
    assert t.starts.tolist() == [100, 1000, 3000]
    assert t.parameters["unanswered"] == 1 and t.parameters["extra_edges"] == 1
    assert t.parameters["irq_edges"] == 4 and t.discarded == 0


def test_a_change_at_or_after_the_next_irq_edge_belongs_to_that_edge():
    t = table(
        (100, E2, 1),  # before any IRQ: extra
        (200, IRQ, 1),
        (200, E2, 0),  # same stamp: not after A
        (300, IRQ, 1),
        (340, E2, 1),
    )
    assert t.samples.tolist() == [40] and t.starts.tolist() == [300]
    assert t.parameters["unanswered"] == 1 and t.parameters["extra_edges"] == 2


def test_losses_of_the_irq_or_the_loop_channel_discard_the_pairs_across_them():
    lost_irq = loss_value(IRQ, 1)
    lost_loop = loss_value(E2, 2)
    t = table(
        (100, IRQ, 1),
        (130, E2, 1),  # 30, kept
        (1000, IRQ, 1),
        (1005, LOSS, lost_loop),
        (1050, E2, 0),  # loop edges lost: out
        (2000, IRQ, 1),
        (2030, E2, 1),  # 30, kept
        (3000, IRQ, 1),
        (3020, LOSS, lost_irq),
        (3090, E2, 0),  # an IRQ edge lost: out
        (4000, IRQ, 1),
        (4030, E2, 1),
    )  # kept
    assert t.samples.tolist() == [30, 30, 30]
    assert t.discarded == 2 and t.discarded_by_holes == 0
    assert t.discarded_starts.tolist() == [1000, 3000]


def test_losses_of_other_sources_leave_loop_pairs_alone():
    t = table((100, IRQ, 1), (110, MARKER, 5), (120, LOSS, loss_value(MARKER, 3)), (130, E2, 1))
    assert t.samples.tolist() == [30] and t.discarded == 0


def test_a_hole_discards_the_pairs_it_may_split():
    hole = (7 << 4) | HOLE_SOURCE
    t = table(
        (100, IRQ, 1),
        (130, E2, 1),
        (1000, IRQ, 1),
        (1500, LOSS, hole),
        (1600, E2, 0),  # across the hole: out
        (2000, IRQ, 1),
        (2030, E2, 1),
    )
    assert t.samples.tolist() == [30, 30]
    assert t.discarded == 1 and t.discarded_by_holes == 1


def test_no_events_no_samples():
    t = loop_table(Events.empty(), 1e9, "EDGE0")
    assert len(t.samples) == 0 and t.stats()["samples"] == 0


def test_channel_names():
    assert parse_loop("edge3") == "EDGE3" and parse_loop("5") == "EDGE5"
    with pytest.raises(ValueError, match="not an edge channel"):
        parse_loop("IRQ")


def write_capture(path, rows, metadata_extra=None):
    encoder = StreamEncoder(marker_width=16)
    for stamp, source, value in rows:
        encoder.event(stamp, source, value)
    encoder.flush()
    metadata = {
        "identity": {
            "clock_hz": 100_000_000,
            "edge_count": 4,
            "board": "test",
            "marker_width": 16,
            "latency": {},
        },
        **(metadata_extra or {}),
    }
    with CaptureWriter(path, metadata) as writer:
        writer.write(encoder.take())
    return path


ROWS = [(100, IRQ, 1), (170, E2, 1), (1000, IRQ, 1), (1055, E2, 0)]


def test_analyze_takes_the_loop_from_the_metadata_or_the_command_line(tmp_path, capsys):
    tagged = write_capture(tmp_path / "tagged.lsc", ROWS, {"loop": "EDGE2"})
    plain = write_capture(tmp_path / "plain.lsc", ROWS)
    for argv in (
        ["analyze", str(tagged), "--json"],
        ["analyze", str(plain), "--loop", "EDGE2", "--json"],
    ):
        assert main(argv) == 0
        document = json.loads(capsys.readouterr().out)
        row = {r["name"]: r for r in document["tables"]}["LOOP-EDGE2"]
        assert row["samples"] == 2 and row["min_ns"] == 550.0 and row["max_ns"] == 700.0
        assert problems(document) == []  # the loop table's parameters too
    assert main(["analyze", str(plain), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tables"] == []
    with pytest.raises(SystemExit) as exit:
        main(["analyze", str(plain), "--loop", "IRQ"])
    assert exit.value.code == 2
    assert "not an edge channel" in capsys.readouterr().err


@pytest.mark.slow
def test_report_has_the_loop_table_and_its_figures(tmp_path, capsys):
    rows = [
        row for k in range(50) for row in ((1000 * k, IRQ, 1), (1000 * k + 40 + k % 7, E2, k % 2))
    ]
    capture = write_capture(tmp_path / "run.lsc", rows, {"loop": "EDGE2"})
    assert main(["report", str(capture), "-o", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    document = json.loads((tmp_path / "out" / "results.json").read_text())
    row = document["tables"][0]
    assert row["name"] == "LOOP-EDGE2" and row["samples"] == 50
    assert "IRQ loop" in row["description"]
    assert list((tmp_path / "out" / "figures").glob("LOOP-EDGE2*.png"))
    assert "LOOP-EDGE2" in (tmp_path / "out" / "report.html").read_text()


def test_the_events_read_in_batches_give_the_same_table():
    """loop_events (what a capture file read in batches keeps) loses nothing the table
    needs, whatever the batch borders: holes, losses and other sources' events included."""
    from latscope.analysis.loop import loop_events

    rng = np.random.default_rng(7)
    rows, t = [], 0
    for k in range(300):
        t += 1000
        rows += [(t, IRQ, 1), (t + 5, MARKER, k), (t + 40 + k % 9, E2, k % 2), (t + 60, IRQ, 0)]
        if k % 37 == 5:
            rows.append((t + 20, LOSS, (3 << 4) | HOLE_SOURCE))  # a hole inside a pair
        if k % 41 == 7:
            rows.append((t + 30, LOSS, loss_value(E2, 1)))
        if k % 29 == 3:
            rows.append((t + 70, LOSS, (1 << 4) | HOLE_SOURCE))  # a hole after the pair
        if k % 11 == 2:
            rows.append((t + 20, MARKER, TICK))  # flags the pair
    rows.sort(key=lambda row: row[0])
    everything = events(*rows)
    whole = loop_table(everything, 1e9, "EDGE2")
    assert whole.discarded_by_holes > 0 and whole.discarded > whole.discarded_by_holes
    assert whole.ticked.any()
    # Random borders, and every batch starting at a hole (its low end in the batch before).
    at_holes = [
        i
        for i, (_, source, value) in enumerate(rows)
        if source == LOSS and value & 0xF == HOLE_SOURCE
    ]
    for cuts in [np.sort(rng.choice(len(rows), 12, replace=False)) for _ in range(5)] + [
        np.array(at_holes)
    ]:
        batches = [everything[a:b] for a, b in zip(np.r_[0, cuts], np.r_[cuts, len(rows)])]
        part = loop_table(loop_events(batches, "EDGE2"), 1e9, "EDGE2")
        assert part.samples.tolist() == whole.samples.tolist()
        assert part.starts.tolist() == whole.starts.tolist()
        assert part.ticked.tolist() == whole.ticked.tolist()
        assert (part.discarded, part.discarded_by_holes) == (
            whole.discarded,
            whole.discarded_by_holes,
        )


def test_the_decoder_pairs_the_loop_as_analyze(tmp_path):
    """latscope_latency's loop option on the export gives the host's table, flags included:
    a change in the IRQ edge's own cycle answers nothing (the edge waits on), nor does the
    previous edge's late answer in the next edge's cycle (that edge waits on too); a sample
    holding a tick marker is flagged, in the table and by the decoder."""
    from latscope.analysis.statistics import TableAccumulator
    from latscope.capture.file import load_capture
    from support.sigrok_run import decode, table_rows

    rows = [
        (100, IRQ, 1),
        (100, E2, 1),  # in A's own cycle: no answer
        (120, IRQ, 0),
        (160, E2, 0),  # 60
        (1000, IRQ, 1),
        (1020, IRQ, 0),  # unanswered: its answer comes in the next edge's cycle
        (2000, IRQ, 1),
        (2000, E2, 1),  # extra
        (2020, IRQ, 0),
        (2050, E2, 0),  # 50
        (3000, IRQ, 1),
        (3010, MARKER, TICK),
        (3020, IRQ, 0),
        (3040, E2, 1),  # 40, ticked
        (4000, IRQ, 1),
        (4020, IRQ, 0),
        (4030, E2, 0),  # 30
    ]
    capture = load_capture(write_capture(tmp_path / "loop.lsc", sorted(rows)))
    host = loop_table(capture.events, capture.stamp_hz, "EDGE2")
    assert table_rows({host.name: host}) == [
        ("LOOP-EDGE2", 100, 60, False),
        ("LOOP-EDGE2", 2000, 50, False),
        ("LOOP-EDGE2", 3000, 40, True),
        ("LOOP-EDGE2", 4000, 30, False),
    ]
    assert TableAccumulator.of_table(host).flags()["tick"] == 1
    decoded, discarded = decode(capture, tmp_path / "loop.sr", ":loop=EDGE2")
    assert decoded == table_rows({host.name: host}) and discarded == 0
