"""One channel layout (latscope_defs.channels) for every place that names the appliance's
signals: the sigrok decoder's channel list, the gateware's SUMP channels, the boards' pin
maps and the export. Those places cannot all import the definition (the decoders run in
libsigrokdecode's Python; the gateware and boards keep their own order for their own
reasons), so they are checked against it here, each read the way its user reads it."""

import importlib.util
import sys
import types
from pathlib import Path

import pytest
from amaranth.hdl import Fragment

from latscope_boards import recorded_builds
from latscope_defs.channels import MAX_EDGES, Layout, decoder_channels, membus_pins, pins
from latscope_gateware.appliance import Appliance, ApplianceConfig

ROOT = Path(__file__).resolve().parents[2]


def load_marker_decoder():
    """decoders/latscope_marker as libsigrokdecode loads it (a package whose pd.py imports
    sigrokdecode), with a stand-in sigrokdecode that has what the class body needs."""
    fake = types.ModuleType("sigrokdecode")
    fake.Decoder = type("Decoder", (), {})
    fake.OUTPUT_ANN = fake.OUTPUT_PYTHON = 0
    fake.SRD_CONF_SAMPLERATE = 0
    saved = sys.modules.get("sigrokdecode")
    sys.modules["sigrokdecode"] = fake
    try:
        directory = ROOT / "decoders" / "latscope_marker"
        spec = importlib.util.spec_from_file_location(
            "latscope_marker_under_test",
            directory / "__init__.py",
            submodule_search_locations=[str(directory)],
        )
        package = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = package
        spec.loader.exec_module(package)
        return importlib.import_module(f"{spec.name}.pd")
    finally:
        if saved is None:
            sys.modules.pop("sigrokdecode", None)
        else:
            sys.modules["sigrokdecode"] = saved


def test_decoder_channels_are_the_definition():
    pd = load_marker_decoder()
    decoder = pd.Decoder
    listed = [(c["id"], c["name"]) for c in decoder.channels + decoder.optional_channels]
    assert listed == [(c.decoder_id, c.name) for c in decoder_channels()]
    assert [c["id"] for c in decoder.channels] == ["strobe"]  # the one required channel
    # The indices the decoder's logic uses point at the channels they name.
    names = [name for _, name in listed]
    assert names[pd.STROBE] == "STROBE" and names[pd.IRQ] == "IRQ"
    assert names[pd.LOSS] == "LOSS" and names[pd.HOLE] == "HOLE"
    assert [names[pd.DATA + n] for n in range(16)] == [f"D{n}" for n in range(16)]
    assert [names[pd.EDGE + n] for n in range(pd.EDGE_CHANNELS)] == [
        f"EDGE{n}" for n in range(MAX_EDGES)
    ]


@pytest.mark.parametrize("edges", [0, 4, 8])
def test_export_bits_are_the_pins_then_loss_and_hole(edges):
    layout = Layout(edges)
    assert layout.names == [c.name for c in pins(16, edges)] + ["LOSS", "HOLE"]
    assert layout.bit("STROBE") == 16 and layout.bit("IRQ") == 17
    assert layout.bit("LOSS") == 18 + edges and layout.bit("HOLE") == 19 + edges
    # Every decoder channel of the stack is a signal of the export.
    assert {signal for _, signal in layout.decoder_channels()} == set(layout.names)


@pytest.mark.parametrize("edges", [1, 2, 4])
def test_sump_channels_are_the_pins_in_order(edges):
    """SUMP channel n is channel n of the definition (test_sump checks D0..D15, STROBE
    and IRQ against the simulated pins bit by bit)."""
    appliance = Appliance(ApplianceConfig(clock_hz=100_000_000, uart_divisor=4, edge_count=edges))
    assert appliance.sump_channels() == [c.name for c in pins(16, edges)]
    Fragment.get(appliance, None)  # elaborated, as a build would (no unused warnings)


@pytest.mark.parametrize("name", [name for name, _ in recorded_builds()])
def test_board_pins_are_the_definition(name):
    """A build's pin map names every pin of the definition once, with its direction: the
    marker port's, or a memory bus build's (the latscope_membus decoder's channels)."""
    pin_map = dict(recorded_builds())[name].pins
    signals = {signal: direction for signal, _, direction in pin_map.signals()}
    if pin_map.marker_strobe is None:
        channels = membus_pins(len(pin_map.bus_data), len(pin_map.bus_address), len(pin_map.edges))
    else:
        channels = pins(len(pin_map.marker_data), len(pin_map.edges))
    expected = {c.name: c.direction for c in channels}
    assert signals == expected
    assert len(pin_map.signals()) == len(expected)
