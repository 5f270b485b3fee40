"""Board presets (issue 28, item 1): ``--board`` takes each board's rate and identity from
its definition; with neither board nor rate the host finds the board on a serial port by its
rate; and docs/boards.md's per-board command lines run as written against ``sim:gateware``
made to look like that board (``support/board_sim.py``: its IDENTIFY names the board and its
pty passes bytes only at the board's rate)."""

import re
import shlex
from pathlib import Path

import pytest

import latscope_boards
from latscope.cli import main
from latscope.link.device import DeviceError, Port
from latscope.link.presets import board_presets, detection_rates, open_device
from support.board_process import SIM_REPLY_TIMEOUT, simulated_board

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "boards.md"


def test_presets_are_the_board_definitions():
    presets = board_presets()
    assert list(presets) == list(latscope_boards.BOARDS)
    for name, preset in presets.items():
        board = latscope_boards.get_board(name)
        assert (preset.baud, preset.serial_port) == (board.baud, board.serial_port)
        assert board.identify_name in preset.identities
    # The rates issue 28 names: the FT231X's 2 Mbaud, the FT2232H's 12 Mbaud.
    assert presets["ulx3s"].baud == 2_000_000 and presets["ulx3s"].serial_port == "/dev/ttyUSB0"
    assert presets["ulx3s"].identities == ("ulx3s-12f", "ulx3s-25f", "ulx3s-45f", "ulx3s-85f")
    for name in ("ice40-hx8k-b-evn", "icebreaker"):
        assert (presets[name].baud, presets[name].serial_port) == (12_000_000, "/dev/ttyUSB1")
    assert detection_rates() == [12_000_000, 2_000_000]


def test_auto_detection_finds_the_ulx3s_at_its_rate(capsys):
    # The ULX3S's rate is the second tried: the first attempt, at 12 Mbaud, reaches the
    # simulated board garbled (as a UART at another rate reads it) and gets no reply.
    with simulated_board("ulx3s") as path:
        port = Port(path)
        port.reply_timeout = SIM_REPLY_TIMEOUT
        device, baud = open_device(port, attempt_timeout=10.0)
        with device:
            assert baud == 2_000_000 and device.identity.board == "ulx3s-85f"
    err = capsys.readouterr().err
    assert f"{path}: found ulx3s-85f (ulx3s: --board ulx3s) at 2000000 baud" in err


def test_a_board_of_another_identity_is_refused(monkeypatch, capsys):
    monkeypatch.setattr(Port, "reply_timeout", SIM_REPLY_TIMEOUT)
    with simulated_board("ice40-hx8k-b-evn") as path:
        # Same rate as the HX8K, so IDENTIFY answers, with the other board's name.
        status = main(["info", "--port", path, "--board", "icebreaker"])
        with pytest.raises(DeviceError, match="at any board's rate"):
            open_device(Port(path), baud=None, attempt_timeout=0.01)
    err = capsys.readouterr().err
    assert status != 0
    assert (
        f"{path}: the device says it is 'ice40-hx8k-b-evn', not --board icebreaker "
        "(icebreaker or icebreaker-spi): another board or port?" in err
    )


def test_link_spi_on_an_icebreaker_build_without_the_link_is_one_line(monkeypatch, capsys):
    """What a user sees who asks for the SPI link of an iCEBreaker flashed with its shipped
    build (which identifies as ``icebreaker``): the command stops, status 2, on one line
    that names the build with the link, before channel A is opened."""
    monkeypatch.setattr(Port, "reply_timeout", SIM_REPLY_TIMEOUT)
    with simulated_board("icebreaker") as path:
        status = main(["info", "--port", path, "--board", "icebreaker", "--link", "spi"])
    err = capsys.readouterr().err
    assert status == 2
    (line,) = [line for line in err.splitlines() if "SPI" in line]
    assert line.startswith(f"latscope: {path}: the gateware on the board (icebreaker) has no")
    assert "needs the icebreaker-spi build (make bitstream BOARD=icebreaker VARIANT=spi" in line
    assert "cannot open the SPI link" not in err


def _documented_commands():
    """(board, argv) of every ``latscope ... --board NAME`` line in docs/boards.md."""
    commands = []
    for line in DOCS.read_text().splitlines():
        if line.startswith("latscope ") and (match := re.search(r"--board (\S+)", line)):
            commands.append((match.group(1), shlex.split(line)[1:]))
    return commands


def test_every_board_has_its_documented_commands():
    boards = {board for board, _ in _documented_commands()}
    assert boards == set(latscope_boards.BOARDS)
    for board, argv in _documented_commands():
        # The documented port is the board's (its definition), not another board's.
        assert argv[argv.index("--port") + 1] == board_presets()[board].serial_port


#: The board whose documented self-test lines run too. What a preset changes is the link
#: rate and the identity, which each board's `info` line checks; under them every board's
#: simulation is the same sim:gateware appliance, so its self-test is the same too, and
#: costs minutes in Amaranth's simulator (256 echoes, then the loopback). The ULX3S: the
#: board whose rate is not the default.
SELFTEST_BOARD = "ulx3s"


@pytest.mark.slow  # commands against the Amaranth simulation, ~2 s a reply when loaded
@pytest.mark.parametrize("board", list(latscope_boards.BOARDS))
def test_documented_commands_run_against_the_simulated_board(board, monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(Port, "reply_timeout", SIM_REPLY_TIMEOUT)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))  # the loopback line's --save
    preset = board_presets()[board]
    ran = []
    for name, argv in _documented_commands():
        if name != board or (argv[0] != "info" and board != SELFTEST_BOARD):
            continue
        ran.append(argv[0])
        loopback = ["--loopback"] if "--loopback" in argv else []
        with simulated_board(board, *loopback) as path:
            argv = [path if arg == preset.serial_port else arg for arg in argv]
            # The default 256 echo patterns judge a real cable; through the simulated
            # appliance each takes about a second (Amaranth's simulator: ~1300 cycles of
            # UART frames an exchange), which made this test 349 s of CI's run. 16 still
            # cross at the board's rate both ways.
            status = main(argv + (["--count", "16"] if argv[0] == "selftest" else []))
        out = capsys.readouterr().out
        assert status == 0, (argv, out)
        if argv[0] == "info":
            assert f"board          {latscope_boards.get_board(board).identify_name}" in out
        else:
            assert "link: ok: 16 echo patterns" in out and ("loopback: ok" in out) == bool(
                loopback
            ), out
            saved = f"calibration saved in {tmp_path}" in out
            assert saved == ("--save" in argv), out
    assert "info" in ran and ("selftest" in ran) == (board == SELFTEST_BOARD), ran
