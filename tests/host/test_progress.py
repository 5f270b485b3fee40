"""The progress line (latscope.progress) and output fitted to the terminal (latscope.terminal):
on a terminal one line redrawn in place, erased before each redraw and never wider than the
terminal; into a log full lines now and then, no carriage returns; every step that takes
seconds shown while it runs. (tests/system/test_first_hour.py drives the commands in a real
pty.)"""

import io
import time

import pytest

from latscope import progress
from latscope.report.columns import STAT_COLUMNS, text_table
from latscope.terminal import fold_command, wrap
from support.pty_run import columns_reached


class Terminal(io.StringIO):
    """What a program writes to a terminal (``isatty``); its width is ``COLUMNS``."""

    def isatty(self):
        return True


@pytest.fixture
def narrow(monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.setattr(progress, "TERMINAL_INTERVAL", 0.02)
    monkeypatch.setattr(progress, "STEP_REPORTED_S", 0.2)
    monkeypatch.setattr(progress, "LOG_INTERVAL", 10.0)
    monkeypatch.setattr(progress, "_status", None)  # enable() here is undone after the test


def test_terminal_line_is_clipped_and_erased_before_each_redraw(narrow):
    out = Terminal()
    line = progress.StatusLine(out)
    line.show("x" * 100)
    line.show("short")
    line.print("a lasting line that is longer than forty columns, so it wraps")
    assert out.getvalue().startswith("\r\x1b[K" + "x" * 39 + "\r\x1b[Kshort")
    assert max(columns_reached(out.getvalue())) <= 40
    assert out.getvalue().endswith("\r\x1b[Kshort")  # the status line is back below it


def test_log_gets_whole_lines_now_and_then(narrow):
    out = io.StringIO()
    line = progress.StatusLine(out)
    for n in range(5):
        line.show(f"{n} " + "y" * 100)
    line.show("forced", force=True)
    assert out.getvalue() == "0 " + "y" * 100 + "\nforced\n"  # no \r, nothing cut


def test_a_step_is_shown_while_it_runs_and_says_how_long_it_took(narrow):
    out = Terminal()
    progress.enable(out)
    with progress.step("building something") as current:
        time.sleep(0.15)
        current.set_detail("2 of 3")
        time.sleep(0.15)
    with progress.step("quick"):
        pass
    text = out.getvalue()
    redraws = text.count("\r\x1b[K")
    assert redraws >= 6, text  # ticked at 0.02 s
    assert "building something (2 of 3)" in text
    assert "building something: 0.3 s\n" in text or "building something: 0.4 s\n" in text
    assert "quick:" not in text  # under STEP_REPORTED_S: no lasting line
    assert max(columns_reached(text)) <= 40


def test_steps_are_silent_unless_enabled(capsys, monkeypatch):
    monkeypatch.setattr(progress, "_status", None)  # as a library user finds it
    with progress.step("a library call"):
        pass
    assert capsys.readouterr() == ("", "")


def test_tables_split_to_the_width_and_lines_wrap():
    rows = [
        {
            "name": f"IL-a-{n}",
            **{key: (1000 if fmt == "{:d}" else 1234.5) for key, _, fmt in STAT_COLUMNS},
        }
        for n in range(3)
    ]
    whole = text_table(rows)
    fitted = text_table(rows, width=60)
    assert max(map(len, whole.splitlines())) > 80
    assert max(map(len, fitted.splitlines())) <= 60
    groups = fitted.split("\n\n")
    assert len(groups) >= 2 and all(g.splitlines()[1].startswith("IL-a-0") for g in groups)
    # Every column is in one of the groups, in order.
    titles = " ".join(g.splitlines()[0] for g in groups)
    assert [t for t in (title for _, title, _ in STAT_COLUMNS) if t in titles] == [
        title for _, title, _ in STAT_COLUMNS
    ]
    assert wrap("word " * 30, 40).count("\n") >= 3 and wrap("x " * 30, None) == "x " * 30


def test_a_folded_command_runs_as_printed():
    """A long command (export's sigrok-cli line, stream's decoder stack) folded to 40
    columns: every line fits, and bash reads the lines as the one command."""
    import subprocess

    stack = ":".join(f"d{n}=D{n}" for n in range(16)) + ",latscope_latency"
    command = f"printf %s\\\\n sigrok-cli -i run.sr -P latscope_marker:{stack} -A latscope_latency"
    folded = fold_command(command, 40)
    assert folded.count("\n") >= 3 and max(map(len, folded.splitlines())) <= 40
    printed = subprocess.run(["bash", "-c", folded], capture_output=True, text=True).stdout
    assert printed.splitlines() == command.split()[2:]  # one argument a line
    assert fold_command(command, None) == command
