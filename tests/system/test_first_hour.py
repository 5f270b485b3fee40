"""The commands as a new user meets them at an 80-column terminal (issue 30): each runs in a
pseudo-terminal of 80 columns, and what a terminal would show of its output is checked: no
line reaches past the last column (a redraw that did would leave a wrapped fragment), and
nothing goes quiet for long while it works (every step that takes seconds shows a progress
line, redrawn twice a second: a silence over :data:`LONGEST_SILENCE_CPU_S` means a step
without one). The silence counts from the first output (before it Python imports the
package), in the command's own CPU seconds (support/pty_run.py): a loaded machine stretches
the wall time between two redraws, not the work done between them.
"""

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from support.process_tree import cpu_seconds
from support.pty_run import columns_reached, run_in_pty
from support.suite_capture import native_suite_capture

pytestmark = pytest.mark.slow

COLUMNS = 80
#: Issue 30 asks for progress within 2 s of work. The status line is redrawn every 0.5 s
#: (wall), in which a command on both cores spends at most 1 CPU second; a step that holds
#: the interpreter (one compiled pass) delays the redraw by its own length.
LONGEST_SILENCE_CPU_S = 2.0
LATSCOPE = [sys.executable, "-m", "latscope.cli"]


def assert_fits_and_shows_progress(run):
    """No line of ``run``'s output wider than the terminal, no silence over the limit."""
    text = run.text.replace("\r\n", "\n")
    widths = columns_reached(text)
    too_wide = [line for line, width in zip(text.split("\n"), widths) if width > COLUMNS]
    assert not too_wide, (run.argv, too_wide[:3])
    silence = run.longest_silence()
    assert silence.cpu <= LONGEST_SILENCE_CPU_S, (
        run.argv,
        f"{silence.cpu:.2f} CPU s ({silence.wall:.1f} s) without output after",
        silence.before,
    )


def as_user(argv, tmp_path, **options):
    """``argv`` run in an 80-column pty in ``tmp_path``; checks the width and the silences
    and returns the run."""
    run = run_in_pty([*LATSCOPE, *argv], columns=COLUMNS, cwd=tmp_path, **options)
    assert_fits_and_shows_progress(run)
    return run


#: A stand-in for a command: says it works, then spins for ``work`` CPU seconds (its own
#: or, ``in_child``, a process's it starts), printing a line every ``every`` CPU seconds.
STAND_IN = textwrap.dedent(
    """
    import subprocess, sys, time
    work, every, in_child = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3] == "1"
    if in_child:
        print("starting a worker", flush=True)
        sys.exit(subprocess.run([sys.executable, *sys.argv[:3], "0"]).returncode)
    print("working", flush=True)
    start = time.process_time()
    shown = 0.0
    while (spent := time.process_time() - start) < work:
        if spent - shown >= every:
            shown = spent
            print(f"{spent:.1f} CPU s", flush=True)
    print("done", flush=True)
    """
)


@pytest.mark.parametrize("in_child", [False, True], ids=["itself", "in-a-child"])
def test_the_check_fails_a_command_that_works_without_showing_it(in_child, tmp_path):
    """The check can fail: a command that spins a CPU second over the limit without a word
    fails it (the reader's lag after its last line may cost some of that second), the same
    work with a line every 0.2 CPU s passes; work in a process the command starts counts as
    the command's."""
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN)
    work, child = LONGEST_SILENCE_CPU_S + 1.0, str(int(in_child))
    silent = run_in_pty([sys.executable, script, str(work), "inf", child], cwd=tmp_path)
    assert silent.status == 0 and "done" in silent.text
    silence = silent.longest_silence()
    assert work - 0.5 <= silence.cpu and silence.before.endswith("working\r\n"), silence
    with pytest.raises(AssertionError, match="CPU s .* without output after"):
        assert_fits_and_shows_progress(silent)
    talking = run_in_pty([sys.executable, script, str(work), "0.2", child], cwd=tmp_path)
    assert talking.status == 0 and talking.text.count("CPU s") >= 10
    assert talking.longest_silence().cpu < 0.5
    assert_fits_and_shows_progress(talking)


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


def test_a_reading_of_cpu_seconds_never_goes_back():
    """A command whose children end one after another (400 of 2 ms each): its CPU seconds,
    read as fast as can be, never go back. A child reaped between its parent's read and its
    own would be missed by that reading (4 of 7,115 readings went back so before
    ``cpu_seconds`` read the tree again then), and the next piece of output would seem to
    follow a silence of that child's work."""
    child = "import time\ns = time.process_time()\nwhile time.process_time() - s < 0.002: pass"
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys\n"
            f"for _ in range(400): subprocess.run([sys.executable, '-c', {child!r}])",
        ]
    )
    readings = []
    while parent.poll() is None:
        readings.append(cpu_seconds(parent.pid))
    assert len(readings) > 100
    assert all(a <= b for a, b in zip(readings, readings[1:]))
