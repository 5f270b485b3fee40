"""Memory-bus markers (docs/membus.md) under sigrok-cli: a suite run's markers written as FMC
writes, each one store whose BUS value is ``address << 16 | marker``.

* A plain logic analyzer's capture of the bus pins (NE1, NWE, D0-D15, A0-A15, and the IRQ
  line), a session file written from the bus-functional model of the FMC's write cycle
  (support.membus_model: ADDSET 0 and DATAST 1 as the port's and slower ones, data valid
  only in the strobe's last sample, garbage on the lines elsewhere, reads and another
  bank's writes between the markers),
  decoded by latscope_membus: every write at its strobe's end edge with its address and
  data, nothing else; latscope_latency stacked on it gives every sample of ``analyze`` on
  the same events as the appliance's BUS events.
* The latscope export of those BUS events, decoded by latscope_marker and latscope_latency:
  the same samples.

Needs ``sigrok-cli`` (scripts/setup.sh installs it).
"""

import csv
import random
import re

import numpy as np
import pytest

from latscope.analysis.pairing import analyze
from latscope.capture.file import CaptureWriter, load_capture
from latscope.events import Events
from latscope.export.levels import Changes
from latscope.export.sigrok import write_sr
from latscope_defs.protocol import VERSION, Source, StreamEncoder, memory_bus_write
from support.membus_model import BusModel
from support.sigrok_run import decode, sigrok_cli, table_rows
from support.synthetic_suite import make_run

#: The FMC's fastest write (docs/membus.md: ADDSET 0, DATAST 1, 1 HCLK of hold) and slower
#: ones, one analyzer sample per HCLK: an analyzer as fast as the DUT's bus clock (100 MHz
#: here, the synthetic run's clock). The data are valid in the strobe's last sample only,
#: and without hold the lines change in the end edge's own sample: the decoder must take
#: the last sample before it, as the front end does.
TIMINGS = [(0, 1, 1), (0, 1, 1), (1, 3, 1), (0, 2, 0)]  # (ADDSET, DATAST, hold)
SAMPLE_HZ = 100_000_000
DATA_BITS = ADDRESS_BITS = 16
BUS = memory_bus_write(DATA_BITS, ADDRESS_BITS)
#: The analyzer's channels, in the session file's order.
NAMES = ["NWE", "NE1", *(f"FMC_D{n}" for n in range(16)), *(f"FMC_A{n}" for n in range(16)), "IRQ"]
DECODER = "latscope_membus:" + ":".join(
    ["we=NWE", "cs=NE1", "irq=IRQ"]
    + [f"d{n}=FMC_D{n}" for n in range(DATA_BITS)]
    + [f"a{n}=FMC_A{n}" for n in range(ADDRESS_BITS)]
)


def bus_value(address, data):
    return address << BUS["address"].offset | data << BUS["data"].offset


def bus_run(seed=4, count=12):
    """The synthetic suite run's events with its markers as BUS events of FMC writes, most
    to address 0 (as the STM32 FMC port stores them), some elsewhere; and the BFM's timeline
    of those writes, each ending at its marker's stamp, with reads and another bank's writes
    in the gaps. Gives (events, model, IRQ changes [(stamp, level)])."""
    run = make_run(seed=seed, count=count)
    rng = random.Random(seed)
    model = BusModel(DATA_BITS, seed=seed, address_bits=ADDRESS_BITS)
    stamps, sources, values, irq = [], [], [], []
    for stamp, source, value in run.events:
        if source == Source.IRQ:
            irq.append((stamp, value))
            stamps.append(stamp), sources.append(source), values.append(value)
            continue
        addset, datast, hold = rng.choice(TIMINGS)
        start = stamp - addset - datast
        if start - len(model.slots) >= 8 and rng.random() < 0.3:
            model.read(rng.randrange(1 << ADDRESS_BITS))
            model.idle(1)
            model.other_bank_write(rng.randrange(1 << ADDRESS_BITS), rng.randrange(1 << 16))
        model.idle(start - len(model.slots))
        address = rng.choice([0, 0, 0, 1, 0x1234, 0xFFFF])
        model.write(address, value, addset=addset, datast=datast, setup=1, hold=hold)
        assert model.writes[-1][0] == stamp
        (
            stamps.append(stamp),
            sources.append(int(Source.BUS)),
            values.append(bus_value(address, value)),
        )
    return Events(stamps, sources, values), model, irq


def analyzer_capture(model, irq, path):
    """The bus pins and the IRQ line as a logic analyzer records them, one sample per slot
    (NWE and NE1 active low), written as a sigrok session file."""
    level = np.zeros(len(model.slots) + 1000, np.uint64)
    for stamp, value in irq:
        level[stamp:] = value
    words = []
    for k, slot in enumerate(model.slots):
        words.append(
            (not slot.writing)
            | (not slot.selected) << 1
            | slot.data << 2
            | slot.address << 18
            | int(level[k]) << 34
        )
    idle = 0b11 | int(level[-1]) << 34
    words += [idle] * 1000
    words = np.array(words, np.uint64)
    changes = np.flatnonzero(np.diff(words, prepend=~words[0])).astype(np.int64)
    write_sr(
        path,
        NAMES,
        Changes(changes, words[changes]),
        SAMPLE_HZ,
        origin=0,
        samples=len(words),
    )


@pytest.fixture(scope="module")
def bus_markers(tmp_path_factory):
    events, model, irq = bus_run()
    path = tmp_path_factory.mktemp("membus") / "analyzer.sr"
    analyzer_capture(model, irq, path)
    return events, model, path


def test_decoder_takes_every_write_at_its_strobe_end(bus_markers):
    """latscope_membus on the analyzer's capture: one write per FMC write of the bank, at
    the sample of its strobe's end edge, with its address and data; reads (no write strobe)
    and another bank's writes (NE1 high) make nothing."""
    _, model, path = bus_markers
    text = sigrok_cli(
        "-i", path, "-P", DECODER, "--protocol-decoder-samplenum", "-A", "latscope_membus=write"
    )
    shown = [
        (int(end), int(address, 16), int(data, 16))
        for end, data, address in re.findall(
            r"^\d+-(\d+) latscope_membus-1: write 0x([0-9a-f]{4}) to 0x([0-9a-f]{4})$", text, re.M
        )
    ]
    assert len(shown) == len(model.writes) > 100
    assert shown == model.writes


def test_latency_decoder_on_the_bus_capture_gives_analyze(bus_markers):
    """latscope_latency stacked on latscope_membus gives every sample of ``analyze`` on the
    same markers as the appliance's BUS events (their low 16 bits are the markers)."""
    events, _, path = bus_markers
    tables = analyze(events, SAMPLE_HZ)
    expected = table_rows(tables)
    assert {"IL-a-1", "IDL-a-1", "TSL-a-2", "SEO-d-1"} <= set(tables) and len(expected) > 100
    rows = csv.DictReader(
        sigrok_cli(
            "-i", path, "-P", f"{DECODER},latscope_latency", "-B", "latscope_latency=csv"
        ).splitlines()
    )
    decoded = sorted(
        (row["table"], int(row["start_sample"]), int(row["ticks"]), row["kernel_tick"] == "1")
        for row in rows
    )
    assert decoded == expected


def test_export_of_bus_markers_decodes_as_markers(bus_markers, tmp_path):
    """A capture of those BUS events (the address above the marker), exported to a session
    file, decoded by latscope_marker and latscope_latency: the samples of ``analyze``."""
    events, _, _ = bus_markers
    encoder = StreamEncoder()
    for stamp, source, value in events:
        encoder.event(stamp, Source(source), value)
    encoder.flush()
    identity = {
        "version": VERSION,
        "clock_hz": SAMPLE_HZ,
        "edge_count": 0,
        "bus_width": 32,
        "latency": {},
    }
    path = tmp_path / "bus.lsc"
    with CaptureWriter(path, {"identity": identity}) as writer:
        writer.write(encoder.take())
    capture = load_capture(path)
    assert np.any(capture.events.value[capture.events.source == Source.BUS] >> 16)
    samples, discarded = decode(capture, tmp_path / "bus.sr")
    assert samples == table_rows(analyze(events, SAMPLE_HZ)) and discarded == 0
