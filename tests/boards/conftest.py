"""Fixtures of the boards' tests."""

import pytest


@pytest.fixture(scope="session")
def board_builds(tmp_path_factory):
    """Where this test run builds the boards, ``<board_builds>/<board>/``: the bitstream
    tests (test_boards.py) build there, and the netlist simulation (test_netlist.py) takes
    the post-synthesis netlist a build left instead of synthesizing again."""
    return tmp_path_factory.mktemp("board_builds")
