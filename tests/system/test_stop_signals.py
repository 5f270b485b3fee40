"""SIGTERM and SIGHUP (what CI timeouts, lab runners and a closed terminal send) stop a
capture as Ctrl-C does (issue 29 point 4): the appliance is stopped and drained, the file
gets its END chunk with every byte received, and the exit status is 128 + the signal."""

import signal
import subprocess
import sys

import pytest
from test_capture_command import CAPTURE, wait_for_data

from latscope.capture.file import load_capture

STREAM = [sys.executable, "-m", "latscope.cli", "stream", "--port", "sim:gateware"]


def stop_with(signum, argv, path):
    """Runs ``argv`` until ``path`` grows, sends ``signum``; returns its exit status and
    stderr."""
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_data(process, path)
        process.send_signal(signum)
        status = process.wait(timeout=120)
    finally:
        process.kill()
        process.wait()
    return status, process.stderr.read()


def assert_closed_with_every_byte(path):
    capture = load_capture(path)
    parser, file = capture.parser_stats, capture.file_stats
    assert file.complete and file.gaps == 0 and file.truncated_bytes == 0 and not file.chunks_bad
    assert parser.segments_bad == 0 and parser.records_dropped == 0, parser
    stats = capture.end["stats"]
    assert stats["bytes"] == capture.end["data_bytes"] > 0
    assert stats["events"] == len(capture.events) > 0
    assert stats["device_status"]["capturing"] is False


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_capture_stops_cleanly_on(tmp_path, signum):
    path = tmp_path / "run.lsc"
    status, err = stop_with(signum, [*CAPTURE, "-o", str(path), "--duration", "300"], path)
    assert status == 128 + signum, err
    assert f"interrupted by {signal.Signals(signum).name}" in err
    assert_closed_with_every_byte(path)


@pytest.mark.slow
def test_stream_stops_cleanly_on_sigterm(tmp_path):
    path, vcd = tmp_path / "run.lsc", tmp_path / "run.vcd"
    argv = [*STREAM, "-o", str(vcd), "--capture", str(path), "--duration", "300"]
    status, err = stop_with(signal.SIGTERM, argv, path)
    assert status == 128 + signal.SIGTERM, err
    assert_closed_with_every_byte(path)
    assert vcd.stat().st_size > 0
