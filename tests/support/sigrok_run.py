"""sigrok-cli with the repository's decoders on a capture's export: what the tests that compare
the decoders with ``analyze`` share."""

import csv
import os
import subprocess

from latscope.export.files import export_capture
from latscope.export.sigrok import SigrokWriter
from latscope.simulated.soc import ROOT
from latscope_defs.channels import Layout


def sigrok_cli(*args):
    """Runs sigrok-cli with the repository's decoders (``decoders/``); its stdout."""
    result = subprocess.run(
        ["sigrok-cli", *map(str, args)],
        capture_output=True,
        text=True,
        env=dict(os.environ, SIGROKDECODE_DIR=str(ROOT / "decoders")),
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "srd: " not in result.stderr, result.stderr
    return result.stdout


def decode(capture, sr, options=""):
    """``capture`` (a loaded Capture) exported to the session file ``sr`` and decoded by
    latscope_marker and latscope_latency (``options``: more of the latter's, e.g.
    ``":loop=EDGE2"``): (sorted (table, start stamp, stamp units, tick flag) of its CSV,
    the number of its "discarded" annotations)."""
    info = export_capture(capture, [SigrokWriter(sr, pvs=False)])
    assert info.markers_dropped == 0
    stack = Layout(capture.identity.edge_count, info.layout.second_lane).decoder_stack() + options
    rows = csv.DictReader(
        sigrok_cli("-i", sr, "-P", stack, "-B", "latscope_latency=csv").splitlines()
    )
    samples = sorted(
        (
            row["table"],
            int(row["start_sample"]) + info.origin,
            int(row["ticks"]),
            row["kernel_tick"] == "1",
        )
        for row in rows
    )
    discarded = sigrok_cli("-i", sr, "-P", stack, "-A", "latscope_latency=discarded")
    return samples, len(discarded.splitlines())


def table_rows(tables):
    """The same tuples of ``analyze``'s tables (``{name: SampleTable}``)."""
    return sorted(
        (name, int(start), int(length), bool(ticked))
        for name, table in tables.items()
        for start, length, ticked in zip(table.starts, table.samples, table.ticked)
    )
