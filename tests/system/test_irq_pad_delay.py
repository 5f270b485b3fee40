"""The IRQ output's pad delay (issue 28, item 2): a capture from a board adds the board's
IRQ clock-to-pad delay (its definition's, from the FPGA's timing data) to every IRQ stamp,
in whole stamp units, records what it added in the capture's metadata and the report says
so; a simulation (no pads) adds nothing (sim:soc: test_ground_truth.py). The board here is
``sim:gateware`` made to identify as the HX8K (``support/board_sim.py``), its clock set to
the HX8K's stamp rate (336 MHz: the board's quarter cycles of 84 MHz; the simulation has no
gearbox), so that its stamp unit is the board's: 2.43 ns is one 2.98 ns unit."""

import pytest
from test_board_presets import SIM_REPLY_TIMEOUT, simulated_board

import latscope_boards
from latscope.capture.file import load_capture
from latscope.cli import main
from latscope.link.device import Port
from latscope_defs.protocol import Source

BOARD = "ice40-hx8k-b-evn"
#: The HX8K's stamps per second: four a cycle of its 84 MHz capture clock.
STAMP_HZ = 4 * 84_000_000


@pytest.mark.slow  # a capture from the Amaranth simulation: about a minute when loaded
def test_a_board_capture_adds_its_irq_pad_delay_to_irq_stamps(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(Port, "reply_timeout", SIM_REPLY_TIMEOUT)
    preset_ns = latscope_boards.get_board(BOARD).pad_delays.irq_output_ns
    path = tmp_path / "board.lsc"
    with simulated_board(BOARD, "--clock-hz", str(STAMP_HZ)) as port:
        status = main(
            ["capture", "--port", port, "--board", BOARD, "-o", str(path), "--events", "40"]
            + ["--irq-period", "1000", "--irq-jitter", "0", "--irq-width", "100"]
        )
    assert status == 0, capsys.readouterr().err
    capture = load_capture(path)
    identity = capture.identity
    resolution_ns = 1e9 / identity.stamp_hz
    assert identity.stamp_hz == STAMP_HZ == latscope_boards.get_board(BOARD).clock_hz * 4
    assert identity.irq_pad_delay_ns == preset_ns
    assert identity.irq_pad_delay == round(preset_ns / resolution_ns) == 1
    assert capture.metadata["identity"]["irq_pad_delay"] == 1
    # The same file read without corrections: IRQ stamps exactly one unit earlier, every
    # other source's stamps its pin latency later.
    raw = load_capture(path, correct_latency=False).events
    corrected = capture.events
    irq = corrected.source == Source.IRQ
    assert irq.sum() >= 4 and (raw.source == corrected.source).all()
    assert (corrected.stamp[irq] - raw.stamp[irq] == 1).all()
    for source in (Source.MARKER, Source.EDGE0):
        shown = corrected.source == source
        assert (raw.stamp[shown] - corrected.stamp[shown] == identity.latency[source]).all()
    assert main(["report", str(path), "-o", str(tmp_path / "report"), "--no-figures"]) == 0
    report = (tmp_path / "report" / "report.md").read_text()
    assert f"IRQ pad delay (added to IRQ stamps) | {preset_ns:g} ns: 1 stamp unit" in report
