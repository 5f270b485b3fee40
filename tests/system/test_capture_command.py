"""`latscope capture` as a user runs it, on the default port (sim:gateware: the appliance
gateware in Amaranth's simulator behind a pty): Ctrl-C stops a capture without losing what
was read, a killed capture takes its simulation with it, and bad values and outputs end in
one line naming the option or the file."""

import os
import signal
import subprocess
import sys
import time

import pytest
from test_simulate_command import alive, children

from latscope.analysis.summary import analyze_capture
from latscope.capture.file import CaptureFileError, load_capture
from support.cases import parametrize_first_fast

CAPTURE = [sys.executable, "-m", "latscope.cli", "capture", "--port", "sim:gateware"]


def wait_for_data(process, path, timeout=120):
    """Waits until the capture file holds an event (the capture runs and events arrive).
    Its size does not say so: the METADATA chunk and its copy after the first DATA chunk
    are over 600 bytes each, and that chunk may hold only the commands' replies (a loaded
    machine's simulation gave a file of no event so)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read()
        try:
            if len(load_capture(path).events):
                return
        except CaptureFileError:  # not there yet, or its header not yet written
            pass
        time.sleep(0.2)
    pytest.fail(f"no events in {path} within {timeout} s")


@pytest.mark.slow
@pytest.mark.parametrize("attempt", range(3))
def test_ctrl_c_stops_drains_and_closes_the_file(tmp_path, attempt):
    """SIGINT mid-capture: the appliance is stopped and drained, every segment read so far
    verifies, and the file ends with its END chunk. (Before SIGINT was deferred to the
    capture loop, 2 of 3 such runs lost the segment a read was cut off in.)"""
    path = tmp_path / "run.lsc"
    process = subprocess.Popen(
        [*CAPTURE, "-o", str(path), "--duration", "300"], stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for_data(process, path)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 128 + signal.SIGINT
    finally:
        process.kill()
        process.wait()
    assert "interrupted" in process.stderr.read()
    capture = load_capture(path)
    parser, file = capture.parser_stats, capture.file_stats
    assert len(capture.events) > 0
    assert parser.segments_bad == 0 and parser.records_dropped == 0, parser
    assert file.complete and file.gaps == 0 and file.truncated_bytes == 0
    stats = capture.end["stats"]
    assert stats["events"] == len(capture.events)
    assert stats["device_status"]["capturing"] is False
    # The live statistics it ended with are the tables of its file.
    tables = analyze_capture(path)[1]
    assert stats["tables"] == {name: table.stats() for name, table in tables.items()}


def test_killed_capture_takes_its_simulation_with_it(tmp_path):
    """kill -9 of the capture: the sim:gateware child it started ends too (it is told
    by the kernel when its parent dies), so no simulation keeps a core busy."""
    path = tmp_path / "killed.lsc"
    process = subprocess.Popen(
        [*CAPTURE, "-o", str(path), "--duration", "300"], stderr=subprocess.DEVNULL
    )
    try:
        wait_for_data(process, path)
        (simulation,) = children(process.pid)
        assert alive(simulation)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        deadline = time.monotonic() + 20
        while alive(simulation) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(simulation)
    finally:
        process.kill()
        process.wait()


def latscope(*args):
    # The timeout bounds a hang only: the default port's simulator may be built first, or
    # wait for another test's build of it (make test's two workers).
    result = subprocess.run(
        [sys.executable, "-m", "latscope.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    return result.returncode, result.stderr


@parametrize_first_fast(
    "args, message",
    [
        (["--irq-period", "-1"], "IRQ period -1 is not a number of cycles from 0 to 4294967295"),
        (["--irq-period", "99999999999"], "IRQ period 99999999999 is not a number of cycles"),
        (["--irq-jitter", "0x1ffffffff"], "IRQ jitter mask 8589934591 is not a number of cycles"),
        (["--irq-width", "0"], "IRQ width 0 must be at least 1 cycle and less than the period"),
        (
            ["--irq-width", "5000"],
            "IRQ width 5000 must be at least 1 cycle and less than the period",
        ),
        (["--events", "-1"], "argument --events: invalid count value: '-1' (must be 1 .."),
        (["--duration", "0"], "argument --duration: invalid duration value: '0' (must be more"),
        (["--load", "bus:0"], "argument --load: invalid load parameter value: '0' (must be 1 .."),
        (["--load", "bus:x"], "argument --load: invalid load parameter value: 'x'"),
        (["--load", "cpu:0x80000000"], "invalid load parameter value: '0x80000000' (must be 1"),
        (["--load", "mixed:3"], "argument --load: load mixed: takes no parameter"),
        (["--port", "sim:gateware", "--truth", "x.truth"], "--truth: sim:gateware has no ground"),
    ],
)
def test_capture_values_are_checked_before_anything_starts(tmp_path, args, message):
    code, err = latscope("capture", "-o", tmp_path / "x.lsc", *args)
    assert code == 2 and message in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "x.lsc").exists()


@pytest.mark.slow
def test_outputs_are_named_in_errors_and_never_overwritten(tmp_path):
    existing = tmp_path / "old.lsc"
    existing.write_bytes(b"precious")
    code, err = latscope("capture", "-o", existing, "--events", "1")
    assert code == 2 and f"{existing}: exists; give --force to overwrite it" in err
    assert existing.read_bytes() == b"precious"
    code, err = latscope("capture", "-o", "/dev/full", "--events", "1")
    assert code == 2 and "/dev/full: No space left on device" in err, err
    # One error line, the last; before it only the progress of the simulator's build, or of
    # the wait for another process's build of it (another xdist worker's, in CI).
    *progress, error = err.strip().splitlines()
    assert error == "latscope: /dev/full: No space left on device", err
    assert all("build" in line for line in progress), err
