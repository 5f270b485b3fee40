##
## This file is part of latscope (BSD-2-Clause).
##
## Markers written over a memory bus (docs/membus.md) on a logic capture of its pins. The
## channels and the BUS value's fields come from bus.py, generated from latscope's
## definitions; the marker's meaning from latscope_marker, installed beside this decoder.
##

import sigrokdecode as srd
from latscope_marker.encoding import MARKER_BITS, POINT_NAMES
from latscope_marker.pd import IRQ_POLARITY, POINT_ANNOTATIONS, UNCONNECTED, describe

from .bus import ADDRESS, ADDRESS_BITS, CHANNELS, CS, DATA, DATA_BITS, FIELDS, IRQ, WE

POINT_CLASSES = len(POINT_NAMES)
A_WRITE, A_IRQ_ASSERT, A_IRQ_RELEASE = range(POINT_CLASSES, POINT_CLASSES + 3)
MARKER_MASK = (1 << MARKER_BITS) - 1


def active_level(polarity):
    return 0 if polarity == "active-low" else 1


class Decoder(srd.Decoder):
    api_version = 3
    id = "latscope_membus"
    name = "latscope membus"
    longname = "latscope markers on a memory bus"
    desc = "RTOS trace markers written to a memory bus (FMC, SMI): one write each."
    license = "bsd-2-clause"
    inputs = ["logic"]
    outputs = ["latscope_marker"]
    tags = ["Debug/trace"]
    channels = CHANNELS[:1]  # the write strobe
    optional_channels = CHANNELS[1:]
    options = (
        {
            "id": "we_polarity",
            "desc": "Write strobe active level",
            "default": "active-low",
            "values": ("active-low", "active-high"),
        },
        {
            "id": "cs_polarity",
            "desc": "Chip select active level",
            "default": "active-low",
            "values": ("active-low", "active-high"),
        },
        {
            "id": "data_width",
            "desc": "Data lines of the bus",
            "default": DATA_BITS,
            "values": (DATA_BITS, 8),
        },
        IRQ_POLARITY,
    )
    annotations = POINT_ANNOTATIONS + (
        ("write", "Bus write (address, data)"),
        ("irq-assert", "IRQ asserted"),
        ("irq-release", "IRQ released"),
    )
    annotation_rows = (
        ("markers", "Markers", tuple(range(POINT_CLASSES))),
        ("writes", "Writes", (A_WRITE,)),
        ("irq", "IRQ", (A_IRQ_ASSERT, A_IRQ_RELEASE)),
    )

    def reset(self):
        """libsigrokdecode requires it; the decoder's state lives in decode() alone."""

    def start(self):
        self.out_ann = self.register(srd.OUTPUT_ANN)
        self.out_python = self.register(srd.OUTPUT_PYTHON)

    def bus_value(self, pins, data, address):
        """The write's BUS value from the lines' levels in ``pins`` (data low, address
        above, as FIELDS orders them)."""
        lines = {"data": data, "address": address}
        widths = {"data": self.options["data_width"], "address": ADDRESS_BITS}
        value, shift = 0, 0
        for field in FIELDS:
            value |= sum(pins[channel] << bit for bit, channel in lines[field]) << shift
            shift += widths[field]
        return value

    def put_write(self, begin, end, value):
        """A write that ended at ``end`` (its strobe active from ``begin``)."""
        width = self.options["data_width"]
        data, address = value & ((1 << width) - 1), value >> width
        marker = value & MARKER_MASK
        test, point, arg, texts = describe(marker)
        self.put(begin, end, self.out_ann, [point, texts])
        self.put(
            begin,
            end,
            self.out_ann,
            [A_WRITE, ["write 0x%04x to 0x%04x" % (data, address), "0x%04x" % data]],
        )
        self.put(end, end + 1, self.out_python, ["MARKER", [marker, test, point, arg]])

    def put_irq(self, level):
        now = self.samplenum
        texts = ["IRQ asserted", "IRQ", "I"] if level else ["IRQ released", "IRQ off", "i"]
        self.put(now, now + 1, self.out_ann, [A_IRQ_ASSERT if level else A_IRQ_RELEASE, texts])
        self.put(now, now + 1, self.out_python, ["IRQ", level])

    def decode(self):
        width = self.options["data_width"]
        writing = active_level(self.options["we_polarity"])
        selected = active_level(self.options["cs_polarity"])
        irq_level = active_level(self.options["irq_polarity"])
        pins = self.wait({"skip": 0})
        present = [pin != UNCONNECTED for pin in pins]
        data = [(bit, DATA + bit) for bit in range(width) if present[DATA + bit]]
        address = [(bit, ADDRESS + bit) for bit in range(ADDRESS_BITS) if present[ADDRESS + bit]]
        lines = [channel for _, channel in data + address]
        if present[CS]:
            lines.append(CS)
        irq = [{IRQ: "e"}] if present[IRQ] else []
        # While the strobe is active every line is watched: the write takes the levels of
        # the last sample before the strobe's end edge (a line that changes in the edge's
        # own sample, within the hold time, keeps its level from before).
        while_idle = [{WE: "e"}] + irq
        while_writing = [{WE: "e"}] + irq + [{channel: "e"} for channel in lines]
        held, begin = None, None  # the levels before this sample, while the strobe is active
        while True:
            if pins[WE] == writing and held is None:
                held, begin = pins, self.samplenum
            pins = self.wait(while_writing if held is not None else while_idle)
            strobe, irq_edge = self.matched[0], bool(irq) and self.matched[1]
            if strobe and pins[WE] != writing and held is not None:
                if not present[CS] or held[CS] == selected:
                    self.put_write(begin, self.samplenum, self.bus_value(held, data, address))
                held = None
            elif held is not None:
                held = pins
            if irq_edge:
                self.put_irq(int(pins[IRQ] == irq_level))
