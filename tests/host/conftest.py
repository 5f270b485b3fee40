"""Fixtures of the host tests."""

import pytest

from support.synthetic_suite import encode, make_run


@pytest.fixture(scope="module")
def suite():
    """The fault campaigns' capture (test_fault_injection.py, test_fault_replay.py): a
    synthetic run of the suite, its truth and its link stream."""
    run = make_run(seed=11, count=300)
    return run, run.truth(), encode(run.events)
