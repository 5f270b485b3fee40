##
## This file is part of latscope (BSD-2-Clause).
##
## Trace markers (docs/markers.md) on a logic capture. The encoding tables come from
## encoding.py, generated from defs/latscope_defs/markers.py.
##

from collections import deque

import sigrokdecode as srd

from .encoding import (
    ARG_MASK,
    CHANNELS,
    DATA,
    DATA2,
    DELAY,
    DELAY_BITS,
    EDGE,
    EDGE_CHANNELS,
    HOLE,
    IRQ,
    KERNEL_POINT_NAMES,
    KERNEL_TEST,
    LOSS,
    MARKER_BITS,
    POINT_MASK,
    POINT_NAMES,
    POINT_SHIFT,
    STROBE,
    STROBE2,
    TEST_MASK,
    TEST_NAMES,
    TEST_SHIFT,
    TICK_POINTS,
)

#: Longest an annotation of the Markers, IRQ or Edges row extends towards the row's next
#: event, so that it is wide enough to read (latscope export adds this much after the last
#: event, so that the last annotation shows).
HOLD_SECONDS = 10e-6
UNCONNECTED = 0xFF

# Annotation classes: one per marker point (so that PulseView colours them apart), then:
POINT_CLASSES = len(POINT_NAMES)
A_IRQ_ASSERT, A_IRQ_RELEASE, A_EDGE, A_LOSS, A_WARNING, A_HOLE = range(
    POINT_CLASSES, POINT_CLASSES + 6
)


#: What a decoder of markers shares with this one (latscope_membus): the IRQ line's option
#: and one annotation class per marker point.
IRQ_POLARITY = {
    "id": "irq_polarity",
    "desc": "IRQ asserting level",
    "default": "active-high",
    "values": ("active-high", "active-low"),
}
POINT_ANNOTATIONS = tuple(
    (name.lower().replace("_", "-"), "Marker: %s" % name) for _, name in sorted(POINT_NAMES.items())
)


def fields(value):
    return (value >> TEST_SHIFT) & TEST_MASK, (value >> POINT_SHIFT) & POINT_MASK, value & ARG_MASK


def is_tick(value):
    """Whether a marker is one of the kernel's tick markers."""
    test, point, _ = fields(value)
    return test == KERNEL_TEST and point in TICK_POINTS


def describe(value):
    """Test, point, argument and the annotation texts (longest first) of a marker. The
    kernel's own markers by their names: "tick entry", "tick exit", "handler 0"."""
    test, point, arg = fields(value)
    if test == KERNEL_TEST and point in KERNEL_POINT_NAMES:
        name = KERNEL_POINT_NAMES[point]
        if point not in TICK_POINTS:
            name = "%s %d" % (name, arg)
        return test, point, arg, ["kernel %s (0x%04x)" % (name, value), name, name, "%04x" % value]
    test_name = TEST_NAMES.get(test, "test%d" % test)
    point_name = POINT_NAMES[point]
    texts = [
        "%s %s %d (0x%04x)" % (test_name, point_name, arg, value),
        "%s %s %d" % (test_name, point_name, arg),
        "%s %d" % (point_name, arg),
        "%04x" % value,
    ]
    return test, point, arg, texts


class Decoder(srd.Decoder):
    api_version = 3
    id = "latscope_marker"
    name = "latscope marker"
    longname = "latscope trace markers"
    desc = "RTOS trace markers (16-bit data + strobe), IRQ and edge channels."
    license = "bsd-2-clause"
    inputs = ["logic"]
    outputs = ["latscope_marker"]
    tags = ["Debug/trace"]
    channels = CHANNELS[:1]  # the strobe; the channel list is generated
    optional_channels = CHANNELS[1:]
    options = (
        {
            "id": "sample_delay",
            "desc": "Samples from strobe edge to data sample (0 for a latscope export)",
            "default": 0,
        },
        IRQ_POLARITY,
    )
    annotations = POINT_ANNOTATIONS + (
        ("irq-assert", "IRQ asserted"),
        ("irq-release", "IRQ released"),
        ("edge", "Edge channel edge"),
        ("loss", "Events lost (latscope)"),
        ("warning", "Warning"),
        ("hole", "Hole in the host's stream (latscope)"),
    )
    annotation_rows = (
        ("markers", "Markers", tuple(range(POINT_CLASSES))),
        ("irq", "IRQ", (A_IRQ_ASSERT, A_IRQ_RELEASE)),
        ("edges", "Edges", (A_EDGE,)),
        ("loss", "Loss", (A_LOSS, A_HOLE)),
        ("warnings", "Warnings", (A_WARNING,)),
    )

    def __init__(self):
        self.reset()

    def reset(self):
        # Events waiting for output, in sample order: [ss, kind, payload, due, data
        # channels]; a marker is complete once its data is sampled (due is None). An IRQ
        # edge's last field is its trigger delay (the delay lane at the edge; None: no lane).
        self.queue = deque()
        # Per row ('markers', 'irq', 'edges'), the last event's annotation: it spans to the
        # row's next event, at most HOLD_SECONDS, and is put when either comes:
        # row -> [ss, annotation, deadline sample].
        self.shown = {}
        self.samplerate = None
        self.loss_since = None  # start of the LOSS span being shown

    def metadata(self, key, value):
        if key == srd.SRD_CONF_SAMPLERATE:
            self.samplerate = value

    def start(self):
        self.out_ann = self.register(srd.OUTPUT_ANN)
        self.out_python = self.register(srd.OUTPUT_PYTHON)

    def flush(self):
        """Outputs the complete events at the front of the queue. Everything after an
        incomplete marker waits for it, so stacked decoders see events in sample order."""
        delay = self.options["sample_delay"]
        while self.queue and self.queue[0][3] is None:
            self.ticks_first()
            ss, kind, payload, _, trigger_delay = self.queue.popleft()
            es = ss + max(delay, 1)
            if kind == "MARKER":
                value = payload
                test, point, arg, texts = describe(value)
                self.show("markers", ss, [point, texts])
                self.put(ss, es, self.out_python, ["MARKER", [value, test, point, arg]])
            elif kind == "IRQ":
                texts = (
                    ["IRQ asserted", "IRQ", "I"] if payload else ["IRQ released", "IRQ off", "i"]
                )
                if payload and trigger_delay is not None:
                    texts = [
                        "IRQ asserted, trigger delay %d cycles" % trigger_delay,
                        "IRQ delay %d" % trigger_delay,
                        "I %d" % trigger_delay,
                        "I",
                    ]
                self.show("irq", ss, [A_IRQ_ASSERT if payload else A_IRQ_RELEASE, texts])
                self.put(ss, es, self.out_python, ["IRQ", payload])
            elif kind == "EDGE":
                channel, level = payload
                arrow = "rise" if level else "fall"
                self.show(
                    "edges",
                    ss,
                    [
                        A_EDGE,
                        [
                            "EDGE%d %s" % (channel, arrow),
                            "E%d %s" % (channel, arrow),
                            "E%d" % channel,
                        ],
                    ],
                )
                self.put(ss, es, self.out_python, ["EDGE", [channel, level]])
            elif kind == "HOLE":
                # The host's stream has a hole here: the events of this sample and later came
                # after it (latscope_latency: docs/tests.md rules 5 and 6).
                self.put(
                    ss,
                    es,
                    self.out_ann,
                    [A_HOLE, ["Hole: events of any source may be missing", "Hole", "H"]],
                )
                self.put(ss, es, self.out_python, ["HOLE", None])
            else:
                if payload:
                    self.loss_since = ss
                elif self.loss_since is not None:
                    self.put(
                        self.loss_since,
                        ss,
                        self.out_ann,
                        [A_LOSS, ["Events may be lost in here", "Loss", "L"]],
                    )
                    self.loss_since = None
                self.put(ss, es, self.out_python, ["LOSS", payload])

    def ticks_first(self):
        """Moves the kernel's tick markers of the front event's sample before the other
        events of that sample. They pair with nothing, so the order changes no sample; but a
        stacked decoder that flags the samples a tick marker lies in, [A, B] (latscope_latency,
        as the host's analysis), then knows every tick marker of B's sample when B comes."""
        queue = self.queue
        run = 0  # complete events of the front event's sample
        while run < len(queue) and queue[run][0] == queue[0][0] and queue[run][3] is None:
            run += 1
        events = [queue.popleft() for _ in range(run)]
        tick = [entry[1] == "MARKER" and is_tick(entry[2]) for entry in events]
        queue.extendleft(
            reversed(
                [entry for entry, t in zip(events, tick) if t]
                + [entry for entry, t in zip(events, tick) if not t]
            )
        )

    def show(self, row, ss, annotation):
        """Puts the row's open annotation (ending here) and opens ``annotation`` at ``ss``."""
        self.close_shown(ss, row)
        self.shown[row] = [ss, annotation, ss + self.hold]

    def close_shown(self, until, row=None):
        """Puts the open annotation of ``row`` (None: of every row whose deadline passed),
        ending at ``until`` or at its deadline."""
        for key in [row] if row is not None else list(self.shown):
            entry = self.shown.get(key)
            if entry is not None and (row is not None or entry[2] <= until):
                ss, annotation, deadline = self.shown.pop(key)
                self.put(ss, max(ss + 1, min(until, deadline)), self.out_ann, annotation)

    def warn(self, text):
        self.put(self.samplenum, self.samplenum + 1, self.out_ann, [A_WARNING, [text]])

    def decode(self):
        delay = self.options["sample_delay"]
        if delay < 0:
            raise ValueError("sample_delay must be 0 or more")
        assert_level = 1 if self.options["irq_polarity"] == "active-high" else 0
        # Which optional channels are connected: libsigrokdecode gives unconnected ones the
        # value 0xff. (Not self.has_channel(): libsigrokdecode 0.5.3 returns Py_True/False
        # without a reference, and some 30 calls crash Python 3.11; bug 1671.)
        pins = self.wait({"skip": 0})
        present = [pin != UNCONNECTED for pin in pins]
        data = [(bit, DATA + bit) for bit in range(MARKER_BITS) if present[DATA + bit]]
        data2 = [(bit, DATA2 + bit) for bit in range(MARKER_BITS) if present[DATA2 + bit]]
        lane_data = {STROBE: data, STROBE2: data2}
        edges = [(n, EDGE + n) for n in range(EDGE_CHANNELS) if present[EDGE + n]]
        delay_lane = [(bit, DELAY + bit) for bit in range(DELAY_BITS) if present[DELAY + bit]]
        # Watched channels in the order their events are queued within one sample: a hole
        # first (the sample's events came after it).
        watched = [channel for channel in (HOLE, LOSS, STROBE, STROBE2, IRQ) if present[channel]]
        watched += [channel for _, channel in edges]
        conditions = [{channel: "e"} for channel in watched]
        queue = self.queue
        if present[LOSS] and pins[LOSS]:
            queue.append([0, "LOSS", 1, None, None])  # a loss span began before the capture
        self.hold = max(1, int(HOLD_SECONDS * self.samplerate)) if self.samplerate else 1000

        while True:
            pending = [entry for entry in queue if entry[3] is not None]
            deadlines = [pending[0][3]] if pending else []
            deadlines += [entry[2] for entry in self.shown.values()]
            if deadlines:
                pins = self.wait(conditions + [{"skip": min(deadlines) - self.samplenum}])
            else:
                pins = self.wait(conditions)
            now = self.samplenum
            self.close_shown(now)
            # Data of a marker is sampled first: what the lines hold in its due sample.
            for entry in pending:
                if entry[3] <= now:
                    entry[2] = sum(pins[channel] << bit for bit, channel in entry[4])
                    entry[3] = None
            for channel, matched in zip(watched, self.matched):
                if not matched:
                    continue
                if channel == HOLE:
                    queue.append([now, "HOLE", None, None, None])
                elif channel == LOSS:
                    queue.append([now, "LOSS", pins[LOSS], None, None])
                elif channel in lane_data:
                    lane = lane_data[channel]
                    if any(entry[3] is not None and entry[4] is lane for entry in queue):
                        self.warn("Strobe edge before the previous marker was sampled")
                    entry = [now, "MARKER", None, now + delay, lane]
                    if delay == 0:
                        entry[2] = sum(pins[ch] << bit for bit, ch in lane)
                        entry[3] = None
                    queue.append(entry)
                elif channel == IRQ:
                    trigger_delay = (
                        sum(pins[ch] << bit for bit, ch in delay_lane) if delay_lane else None
                    )
                    level = int(pins[IRQ] == assert_level)
                    queue.append([now, "IRQ", level, None, trigger_delay])
                else:
                    queue.append([now, "EDGE", (channel - EDGE, pins[channel]), None, None])
            self.flush()
            self.close_shown(now)
