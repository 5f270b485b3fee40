"""The loop calibration (issue 28, item 2; latscope.link.calibration): saved per board in the
user's calibration file under $XDG_CONFIG_HOME (each test's own), recorded in a capture's
metadata, applied by the parser to IRQ stamps only (live and from the file alike), and shown
by the report."""

import json

import numpy as np
import pytest

from latscope.analysis.batch import latency_skew
from latscope.capture.file import CaptureWriter, load_capture
from latscope.capture.metadata import MetadataError, check_metadata
from latscope.capture.session import capture_metadata
from latscope.link.calibration import (
    Calibration,
    calibration_path,
    load_calibrations,
    save_calibration,
    saved_calibration,
)
from latscope.link.device import IrqSettings
from latscope.link.identity import Identity
from latscope.report.formats import named
from latscope.report.results import results, run_info
from latscope_defs.protocol import Source, StreamEncoder, irq_value

IDENTITY = Identity(
    clock_hz=100_000_000,
    stamp_shift=2,
    edge_count=1,
    board="ulx3s-85f",
    latency={Source.MARKER: 9, Source.IRQ: 0, Source.EDGE0: 5},
)


def calibration(round_trip_units=2.5, board="ulx3s-85f", stamp_hz=400_000_000):
    return Calibration(
        board=board,
        stamp_hz=stamp_hz,
        round_trip_units=round_trip_units,
        spread_units=1,
        samples=68,
        saved_at="2026-11-27T14:00:00+0000",
        port="/dev/ttyUSB0",
        irq_edges=17,
    )


@pytest.fixture
def config_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path / "config"


def test_saved_per_board_in_the_xdg_config_file(config_home):
    assert calibration_path() == config_home / "latscope" / "calibration.json"
    assert saved_calibration(IDENTITY) == (None, "")  # none saved: nothing to say but that
    save_calibration(calibration(1.0, board="icebreaker"))
    save_calibration(calibration(2.5))
    document = json.loads(calibration_path().read_text())
    assert document["format"] == 1 and sorted(document["boards"]) == ["icebreaker", "ulx3s-85f"]
    # The form readers see: the value in units and ns, and the whole units applied (2.5 up).
    assert document["boards"]["ulx3s-85f"]["round_trip_ns"] == 6.25
    assert document["boards"]["ulx3s-85f"]["shift"] == 3
    assert load_calibrations()["ulx3s-85f"] == calibration(2.5)
    assert saved_calibration(IDENTITY) == (calibration(2.5), "")
    # A rebuild at another stamp rate: the saved value is not this bitstream's.
    saved, problem = saved_calibration(Identity(clock_hz=50_000_000, board="ulx3s-85f"))
    assert saved is None and "measured at 400000000 stamps/s" in problem


def test_xdg_config_home_unset_or_relative_is_home_config(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    for value in ("", "relative/dir"):
        monkeypatch.setenv("XDG_CONFIG_HOME", value)
        assert calibration_path() == tmp_path / ".config" / "latscope" / "calibration.json"


@pytest.mark.parametrize(
    "change, field",
    [
        ({"spread_units": 2}, "spread_units"),  # an inconsistent loop is no calibration
        ({"samples": 0}, "samples"),
        ({"round_trip_units": "2"}, "round_trip_units"),
        ({"stamp_hz": True}, "stamp_hz"),
    ],
)
def test_a_wrong_calibration_is_refused_in_file_and_metadata(config_home, change, field):
    value = {**calibration().as_dict(), **change}
    with pytest.raises(MetadataError, match=f"calibration: {field}"):
        check_metadata({"identity": IDENTITY.as_dict(), "calibration": value})
    path = calibration_path()
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"format": 1, "boards": {"ulx3s-85f": value}}))
    saved, problem = saved_calibration(IDENTITY)
    assert saved is None and str(path) in problem and field in problem
    missing = calibration().as_dict()
    del missing["port"]
    with pytest.raises(MetadataError, match="calibration: port: missing"):
        check_metadata({"identity": IDENTITY.as_dict(), "calibration": missing})


def _stream():
    """IRQ edges, each copied 4 units later on EDGE0 and the strobe (after the pin
    latencies), and a marker 40 units after: raw stamps as the device sends them."""
    encoder = StreamEncoder()
    latency = IDENTITY.latency
    for n, irq in enumerate(range(1_000, 9_000, 1_000)):
        level = (n + 1) % 2
        encoder.event(irq, Source.IRQ, irq_value(level))
        encoder.event(irq + 4 + latency[Source.EDGE0], Source.EDGE0, level)
        encoder.event(irq + 40 + latency[Source.MARKER], Source.MARKER, 0x1234)
    encoder.flush()
    return encoder.take()


def _capture(path, saved):
    metadata = capture_metadata(IDENTITY, "/dev/ttyUSB0", IrqSettings(), calibration=saved)
    with CaptureWriter(path, metadata) as writer:
        writer.write(_stream())
    return load_capture(path)


def test_a_capture_applies_and_records_the_calibration(tmp_path):
    plain = _capture(tmp_path / "plain.lsc", None)
    calibrated = _capture(tmp_path / "calibrated.lsc", calibration(2.5))
    assert plain.metadata["calibration"] is None
    assert calibrated.metadata["calibration"] == calibration(2.5).as_dict()
    # IRQ stamps 3 units later (2.5 rounded up); every other source's as before.
    is_irq = plain.events.source == Source.IRQ
    assert np.array_equal(calibrated.events.source, plain.events.source)
    assert np.array_equal(calibrated.events.stamp[is_irq], plain.events.stamp[is_irq] + 3)
    assert np.array_equal(calibrated.events.stamp[~is_irq], plain.events.stamp[~is_irq])
    # The IRQ-to-input spans shorter by it, the spread of the corrections wider.
    irq, edge = (calibrated.events.of(source).stamp for source in (Source.IRQ, Source.EDGE0))
    assert set((edge.astype(int) - irq.astype(int)).tolist()) == {1}
    assert latency_skew(IDENTITY, 3) == latency_skew(IDENTITY) + 3 == 12


def test_the_report_shows_the_calibration_or_its_absence(tmp_path):
    for saved, words in (
        (calibration(2.5), "applied: IRQ round trip 2.50 stamp units (6.25 ns), spread 1"),
        (None, "none: no loop calibration was saved for this board"),
    ):
        capture = _capture(tmp_path / f"{saved is None}.lsc", saved)
        document = results(capture, {})
        assert document["device"]["calibration"] == (saved and saved.as_dict())
        assert run_info(capture)["capture"]["other"] == {}  # not shown twice
        for name in ("markdown", "text"):
            assert f"loop calibration{' | ' if name == 'markdown' else ': '}{words}" in (
                named(name).text(document)
            )
