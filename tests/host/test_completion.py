"""``latscope completion``: the bash script it prints, loaded into a real bash and its
``_latscope`` function driven as bash's completion does (COMP_WORDS, COMP_CWORD), checked
against the command line's own parser; the zsh and fish scripts' coverage of the commands."""

import subprocess
import sys
from pathlib import Path

import pytest

from latscope.cli import build_parser
from latscope.demo import CPUS

ROOT = Path(__file__).resolve().parents[2]


def completion_script(shell):
    done = subprocess.run(
        [sys.executable, "-m", "latscope.cli", "completion", shell],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return done.stdout


@pytest.fixture(scope="module")
def bash_script(tmp_path_factory):
    path = tmp_path_factory.mktemp("completion") / "latscope.bash"
    path.write_text(completion_script("bash"))
    return path


def complete(bash_script, *words):
    """What bash offers for the command line ``words`` (the last one being completed)."""
    program = (
        f"source {bash_script}\n"
        'COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"\n'
        "_latscope\n"
        "printf '%s\\n' \"${COMPREPLY[@]}\"\n"
    )
    done = subprocess.run(
        ["bash", "-c", program, "bash", "latscope", *words],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stderr == ""
    return [line for line in done.stdout.splitlines() if line]


def parser_commands():
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a.choices, dict)]
    return commands.choices


def test_a_command_name_completes(bash_script):
    assert complete(bash_script, "an") == ["analyze"]
    assert complete(bash_script, "co") == ["compare", "completion"]
    assert sorted(complete(bash_script, "")) == sorted(parser_commands())


def test_the_options_of_a_command_complete(bash_script):
    assert complete(bash_script, "capture", "--dur") == ["--duration"]
    # After a file argument too: the command is the first word that is not an option.
    assert complete(bash_script, "analyze", "run.lsc", "--det") == ["--details"]
    flags = {
        flag for action in parser_commands()["capture"]._actions for flag in action.option_strings
    }
    assert set(complete(bash_script, "capture", "-")) == flags


def test_an_options_values_complete(bash_script):
    assert complete(bash_script, "capture", "--cache", "") == ["on", "off"]
    assert complete(bash_script, "demo", "--cpu", "") == list(CPUS)  # the demo's own parser
    assert complete(bash_script, "completion", "") == ["bash", "zsh", "fish"]
    # A free value (a file name) gets nothing from the script: bash's file names (-o default).
    assert complete(bash_script, "capture", "-o", "") == []


def test_bash_registers_the_function(bash_script):
    done = subprocess.run(
        ["bash", "-c", f"source {bash_script}; complete -p latscope"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "complete -o default -F _latscope latscope"


def test_zsh_and_fish_scripts_cover_every_command():
    zsh = completion_script("zsh")
    assert "bashcompinit" in zsh and completion_script("bash") in zsh
    fish = completion_script("fish")
    for name in parser_commands():
        assert f"-n __fish_use_subcommand -a {name} " in fish
    assert "-n '__fish_seen_subcommand_from capture' -l duration -r -F" in fish
