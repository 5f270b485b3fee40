"""A labgrid farm on the loopback address, nothing mocked: a labgrid coordinator, two
exporters each exporting a simulated appliance (`latscope simulate --port sim:gateware` on a
pty) that the exporter serves through Debian's ser2net, two places tagged alike; then
examples/labgrid/compare_places.py runs the pytest example on both places in parallel
through labgrid (reserve, acquire, RemotePlace, LatscopeDriver over RFC 2217, release) and
writes the comparison report. Every event in the captures is checked against the
simulations' ground truth."""

import json
import os
import subprocess
import sys
import time

import pytest
from test_network_port import captured, truth_events

from latscope.capture.file import load_capture
from latscope_defs.markers import Test
from support.lab_farm import ROOT, Processes, client, coordinator, exporter, start_simulation
from support.suite_tables import table_names

pytestmark = pytest.mark.slow

PLACES = ("sim-a", "sim-b")


def wait_for_resources(address, expected, timeout=60):
    """Waits until every exporter's resource is known and available to the coordinator."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        listed = client(address, "resources")
        if all(resource in listed for resource in expected):
            return
        time.sleep(0.5)
    raise TimeoutError(f"resources {expected} not available; the coordinator lists {listed!r}")


@pytest.mark.timeout(600)
def test_compare_places_captures_every_place_of_a_tag(tmp_path):
    out = tmp_path / "out"
    with Processes(tmp_path / "logs") as processes:
        address = coordinator(processes, tmp_path)
        truths = {place: tmp_path / f"{place}.truth.jsonl" for place in PLACES}
        for place in PLACES:
            pty = start_simulation(processes, f"simulate-{place}", truths[place])
            exporter(processes, tmp_path, address, f"exporter-{place}", pty)
        wait_for_resources(
            address, [f"exporter-{place}/appliance/NetworkSerialPort" for place in PLACES]
        )
        for place in PLACES:
            client(address, "-p", place, "create")
            client(
                address,
                "-p",
                place,
                "add-match",
                f"exporter-{place}/appliance/NetworkSerialPort/latscope",
            )
            client(address, "-p", place, "set-tags", "latscope=ci", f"board={place}")
        client(address, "-p", "console-only", "create")  # a place of another kind

        # Each place captures until IL-a-1 has 5 samples: 5 IRQs of 5 events each (both
        # edges, ISR_ENTRY, ISR_EXIT, THREAD) hold what the checks below want (2 samples,
        # 20 events). The duration only bounds a capture that never gets there.
        result = subprocess.run(
            [
                sys.executable,
                ROOT / "examples" / "labgrid" / "compare_places.py",
                "--tag",
                "latscope=ci",
                "--out",
                out,
                "--duration",
                "90",
                "--",
                "--latscope-irq-period",
                "1200",
                "--latscope-samples",
                "5",
            ],
            capture_output=True,
            text=True,
            timeout=480,
            cwd=tmp_path,
            env={**os.environ, "LG_COORDINATOR": address},
        )
        logs = "".join(
            (out / f"{place}.log").read_text()
            for place in PLACES
            if (out / f"{place}.log").exists()
        )
        assert result.returncode == 0, result.stdout + result.stderr + logs
        assert "acquired" not in client(address, "places", "--acquired")
        assert client(address, "who").count("\n") <= 1  # the header: all released

    document = json.loads((out / "comparison.json").read_text())
    assert [run["label"] for run in document["runs"]] == list(PLACES)
    # The scripted DUT runs the suite's IL_A test: both places have its tables, compared.
    tables = {table["name"]: table for table in document["tables"]}
    assert set(table_names([Test.IL_A], handler=False)) <= set(tables)
    for run in tables["IL-a-1"]["runs"]:
        assert run["stats"]["samples"] >= 2
    assert (
        (out / "comparison.txt")
        .read_text()
        .startswith(
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "latscope.cli",
                    "compare",
                    *(str(out / place / "capture.lsc") for place in PLACES),
                    "--label",
                    PLACES[0],
                    "--label",
                    PLACES[1],
                ],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.rstrip()
        )
    )
    for place in PLACES:
        capture = load_capture(out / place / "capture.lsc")
        assert capture.file_stats.complete
        assert capture.metadata["test_info"] == f"labgrid place {place}"
        assert capture.metadata["port"].startswith("rfc2217://127.0.0.1:")
        assert capture.parser_stats.segments_bad == 0
        events = captured(capture)
        assert len(events) >= 20 and set(events) <= truth_events(truths[place]), place
        identity = json.loads((out / place / "identity.json").read_text())
        assert identity["place"] == place and identity["board"] == "sim"
        results = json.loads((out / place / "results.json").read_text())
        assert results["events"] == len(capture.events)
        assert (out / place / "report.html").exists()
