"""The test suite (firmware/suite) built natively with the reference kernel's host port: where
it is, and its dump of marker stores and IRQ edges turned into the events the appliance would
report. Shared by tests/firmware/test_suite_native.py and support/suite_capture.py."""

from pathlib import Path

import numpy as np

from latscope.events import Events
from latscope_defs.protocol import Source

SUITE = Path(__file__).resolve().parents[2] / "firmware" / "suite"


def events_from_stores(stamps, kinds, values):
    """Events as the appliance would report them: a GPIO store is a marker only when it
    changes the strobe (bit 16), with the data pins as value; a trace-window store is a bus
    marker; an IRQ rising edge an IRQ event."""
    stamps = np.asarray(stamps, np.uint64)
    kinds = np.asarray(kinds)
    values = np.asarray(values, np.uint64)
    keep = np.ones(len(stamps), bool)
    source = np.full(len(stamps), int(Source.BUS), np.uint8)
    gpio = kinds == "gpio"
    strobe = (values[gpio] >> 16) & 1
    keep[gpio] = strobe != np.concatenate([[0], strobe[:-1]])  # the pin starts low
    source[gpio] = Source.MARKER
    values = np.where(gpio, values & 0xFFFF, values)
    irq = kinds == "irq"
    source[irq] = Source.IRQ
    keep &= ~irq | (values == 1)
    return Events(stamps[keep], source[keep], values[keep])


def read_native_dump(path):
    stamps, kinds, values = [], [], []
    for line in Path(path).read_text().splitlines():
        stamp, kind, value = line.split()
        stamps.append(int(stamp))
        kinds.append(kind)
        values.append(int(value, 16))
    return stamps, kinds, values
