"""Fixtures shared by test modules."""

import pytest


@pytest.fixture(scope="session")
def default_board_build(tmp_path_factory):
    """Build directory of the default board for this test run: the bitstream test
    (test_boards.py) builds there, and the netlist simulation (test_netlist.py) takes the
    post-synthesis netlist that build left, instead of synthesizing again."""
    return tmp_path_factory.mktemp("default_board_build")
