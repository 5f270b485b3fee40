"""What a new user reads first (issue 30): the version, the commands printed for them to run
next, the device's own channels only, numbers without float noise, the run described in
words, and a pip-installed latscope that says what the simulation needs."""

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

from latscope import hints
from latscope.cli import main
from latscope.link.device import DeviceError
from latscope.link.identity import Identity
from latscope.report.directory import write_report
from latscope.report.results import load_tables, results
from latscope.report.run_description import settings_items
from latscope.version import __version__
from latscope_defs.protocol import MAGIC, VERSION, IdentifyReply, Source
from support.suite_capture import native_suite_capture

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    path = tmp_path_factory.mktemp("user") / "il.lsc"
    native_suite_capture(path, 1000, tests="IL_A")
    return path


def test_version(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--version"])
    assert exit.value.code == 0 and capsys.readouterr().out == f"latscope {__version__}\n"


def test_identity_lists_only_the_devices_sources():
    """`info --json` and every capture's metadata: a 4-edge device without a bus window has
    MARKER, IRQ and EDGE0..EDGE3, no BUS or EDGE4..EDGE7."""
    reply = IdentifyReply.const(
        {
            "magic": int.from_bytes(MAGIC, "little"),
            "version": VERSION,
            "clock_hz": 100_000_000,
            "marker_width": 16,
            "edge_count": 4,
            "marker_latency": 4,
            "edge_latency": 2,
        }
    )
    payload = reply.as_bits().to_bytes(IdentifyReply.as_shape().size // 8, "little")
    identity = Identity.from_reply(payload)
    assert list(identity.as_dict()["latency"]) == [
        "MARKER",
        "IRQ",
        "EDGE0",
        "EDGE1",
        "EDGE2",
        "EDGE3",
    ]
    assert list(identity.latency) == identity.sources and Source.EDGE4 not in identity.latency


def test_numbers_carry_no_float_noise(capture, tmp_path):
    """results.csv: every ns column rounded to 0.01 ns (results.NS_DECIMALS: 2665.05, not
    2665.0500000001),
    and the test's parameter as ``test_n`` beside the sample count."""
    write_report(capture, tmp_path / "r", figures=False, exports=False)
    rows = list(csv.DictReader((tmp_path / "r" / "results.csv").open()))
    assert rows and "n" not in rows[0] and {"test_n", "samples"} <= set(rows[0])
    values = [
        float(value) for row in rows for key, value in row.items() if key.endswith("_ns") and value
    ]
    assert values and all(value == round(value, 2) for value in values)
    assert any(len(str(value).split(".")[1]) == 2 for value in values if value < 1e6)
    assert any(row["p999_ns"] for row in rows)  # 1000 samples: p99.9 reported


def test_run_description_in_words(capture):
    """The simulated CPU's release and the device's status read as words, not JSON."""
    document = results(*load_tables(capture))
    document["capture"]["other"] = {"cpu_release": {"after_start": 16, "phase": 0}}
    document["device_status"] = {"capturing": False, "events": 10, "fifo_max": 2}
    items = dict(settings_items(document))
    run = dict(items["Run"])
    assert run["simulated CPU released"] == "16 + 0 (phase) cycles after the capture's START"
    status = dict(items["Device status at the end"])
    assert status == {
        "still capturing": "no",
        "events captured": "10",
        "most FIFO entries in use": "2",
    }


def test_printed_commands_run_as_printed(monkeypatch, tmp_path):
    """The next steps the demo prints: ``latscope`` only where that name runs this latscope,
    else the script's path; sigrok gets the decoders' directory unless it finds them."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # the venv not active
    monkeypatch.chdir(ROOT)
    command = hints.latscope_command()
    assert command == str(
        Path(sys.prefix, "bin", "latscope").relative_to(ROOT)
    ) or command.endswith("/bin/latscope")
    assert subprocess.run([command, "--version"], capture_output=True).returncode == 0
    monkeypatch.setenv("PATH", f"{Path(sys.prefix, 'bin')}:/usr/bin:/bin")  # activated
    assert hints.latscope_command() == "latscope"
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))  # no decoders installed
    monkeypatch.delenv("SIGROKDECODE_DIR", raising=False)
    assert hints.sigrok_decoders_prefix() == "SIGROKDECODE_DIR=decoders "
    installed = tmp_path / "libsigrokdecode" / "decoders" / "latscope_marker"
    installed.mkdir(parents=True)
    assert hints.sigrok_decoders_prefix() == ""


def test_an_installed_latscope_says_what_the_simulation_needs(monkeypatch, tmp_path):
    """Without the repository (a wheel, LATSCOPE_ROOT elsewhere) sim:soc fails in one line
    that names LATSCOPE_ROOT and the clone, before any make."""
    from latscope.simulated import soc

    monkeypatch.setattr(soc, "ROOT", tmp_path)
    monkeypatch.setitem(os.environ, "LATSCOPE_ROOT", str(tmp_path))
    with pytest.raises(DeviceError) as error:
        soc.build_soc()
    message = str(error.value)
    assert "\n" not in message and "LATSCOPE_ROOT" in message and str(tmp_path) in message
