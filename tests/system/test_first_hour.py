"""The commands as a new user meets them at an 80-column terminal (issue 30): each runs in a
pseudo-terminal of 80 columns, and what a terminal would show of its output is checked: no
line reaches past the last column (a redraw that did would leave a wrapped fragment), and
nothing goes quiet for long while it works (every step that takes seconds shows a progress
line, redrawn twice a second: a silence over :data:`LONGEST_SILENCE_S` means a step without
one). The silence counts from the first output: before it Python imports the package.
"""

import signal
import sys
from pathlib import Path

import pytest

from support.pty_run import columns_reached, run_in_pty
from support.suite_capture import native_suite_capture

pytestmark = pytest.mark.slow

COLUMNS = 80
#: The status line is redrawn every 0.5 s; 2 s is where issue 30 asks for progress, and a
#: loaded 2-core machine delays a redraw by up to a second more.
LONGEST_SILENCE_S = 3.0
LATSCOPE = [sys.executable, "-m", "latscope.cli"]


def as_user(argv, tmp_path, **options):
    """``argv`` run in an 80-column pty in ``tmp_path``; checks the width and the silences
    and returns the run."""
    run = run_in_pty([*LATSCOPE, *argv], columns=COLUMNS, cwd=tmp_path, **options)
    text = run.text.replace("\r\n", "\n")
    widths = columns_reached(text)
    too_wide = [line for line, width in zip(text.split("\n"), widths) if width > COLUMNS]
    assert not too_wide, (argv, too_wide[:3])
    silence, before = run.longest_silence()
    assert silence <= LONGEST_SILENCE_S, (argv, f"{silence:.1f} s without output after", before)
    return run


@pytest.fixture(scope="module")
def captures(tmp_path_factory):
    directory = tmp_path_factory.mktemp("first-hour")
    one, other = directory / "one.lsc", directory / "other.lsc"
    native_suite_capture(one, 1000, tests="IL_A,TSL_A")
    native_suite_capture(other, 1000, tests="IL_A,TSL_A")
    return one, other


def test_the_analysis_commands_fit_the_terminal(captures, tmp_path):
    one, other = captures
    summary = as_user(["analyze", str(one)], tmp_path)
    assert summary.status == 0 and "headline (ns)" in summary.text
    assert "--details" in summary.text  # says how to see the rest
    details = as_user(["analyze", str(one), "--details"], tmp_path)
    assert details.status == 0 and "worst samples" in details.text
    report = as_user(["report", str(one), "-o", "report"], tmp_path)
    assert report.status == 0 and "drawing the figures" in report.text
    assert (tmp_path / "report" / "report.html").is_file()
    compare = as_user(["compare", str(one), str(other), "-o", "cmp"], tmp_path)
    assert compare.status == 0 and "drawing the overlaid distributions" in compare.text
    dump = as_user(["dump", str(one), "--limit", "40"], tmp_path)
    assert dump.status == 0 and "IL_A ISR_ENTRY" in dump.text
    export = as_user(["export", str(one), "--sr", "one.sr"], tmp_path)
    assert export.status == 0 and "sigrok-cli" in export.text
    # Its fix commands are long (an export of SIGROKDECODE_DIR): wrapped at the terminal.
    doctor = as_user(["doctor"], tmp_path)
    assert doctor.status in (0, 1) and "FPGA tools" in doctor.text


@pytest.mark.verilator
def test_the_simulation_commands_fit_the_terminal_and_show_progress(tmp_path):
    """The default port (sim:soc, built if needed: its build shows progress too), a short
    capture, a stream into a file, the demo on one test, and Ctrl-C: 130 as --help says."""
    info = as_user(["info"], tmp_path)
    assert info.status == 0 and "verilator-soc" in info.text
    capture = as_user(["capture", "-o", "run.lsc", "--events", "20000"], tmp_path)
    assert capture.status == 0 and "wrote run.lsc: 2" in capture.text
    stream = as_user(["stream", "-o", "run.vcd", "--events", "10000"], tmp_path)
    assert stream.status == 0 and Path(tmp_path / "run.vcd").stat().st_size > 0
    demo = as_user(
        ["demo", "--tests", "IL_A", "--samples", "200", "-o", "demo.lsc"], tmp_path, timeout=1200
    )
    assert demo.status == 0 and "headline (ns)" in demo.text
    stopped = as_user(["capture", "-o", "stopped.lsc"], tmp_path, interrupt_after=8)
    assert stopped.status == 128 + signal.SIGINT and "interrupted by SIGINT" in stopped.text
