"""Fixtures of the host tests."""

import pytest
from test_capture_file import METADATA, make_stream

from latscope.capture.file import CaptureWriter
from support.synthetic_suite import encode, make_run


@pytest.fixture(scope="module")
def suite():
    """The fault campaigns' capture (test_fault_injection.py, test_fault_replay.py): a
    synthetic run of the suite with the kernel's handler markers (the ILH tables), its
    truth and its link stream."""
    run = make_run(seed=11, count=300, handlers=True)
    return run, run.truth(), encode(run.events)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The file tests' closed capture (test_capture_file_integrity.py,
    test_capture_file_copies.py): its stream and the file's bytes, in 100-byte DATA chunks,
    a METADATA copy every 4 of them."""
    stream = make_stream(200, seed=11)
    path = tmp_path_factory.mktemp("w") / "w.lsc"
    with CaptureWriter(path, METADATA, chunk_size=100, metadata_every=4) as writer:
        writer.write(stream)
        writer.close({"events": 200})
    return stream, path.read_bytes()
