"""Fixtures of the boards' tests."""

import pytest

from latscope_boards import recorded_builds
from latscope_boards.toolchain import synthesize


@pytest.fixture(scope="session")
def board_builds(tmp_path_factory):
    """Where this test run builds the boards, ``<board_builds>/<record>/`` (a record name:
    a board's, or a variant's, boards/results)."""
    return tmp_path_factory.mktemp("board_builds")


@pytest.fixture(scope="session")
def synthesized(board_builds):
    """A function of a record name: its build synthesized in ``board_builds`` (a
    ``toolchain.Synthesis``), once a run. Yosys takes 40-60 s a board here; a board's tests
    share its synthesis: the bitstream test places and routes it, the netlist tests
    simulate its netlist, the I/O and placement tests pack it (one board's tests run on one
    worker: tests/conftest.py, ``work_unit``)."""
    boards = dict(recorded_builds())
    done = {}

    def synthesis(record):
        if record not in done:
            board = boards[record]
            done[record] = synthesize(board, board_builds / record, seed=board.seed)
        return done[record]

    return synthesis
