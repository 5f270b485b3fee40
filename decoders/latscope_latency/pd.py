##
## This file is part of latscope (BSD-2-Clause).
##
## Latency samples from latscope_marker's events. The rules come from rules.py, generated
## from host/latscope/analysis/rules.py; the window logic below mirrors the host's batch
## analysis (host/latscope/analysis/batch.py) and tests/system/test_sigrok.py checks that both give
## the same samples.
##

from bisect import bisect_left, bisect_right

import sigrokdecode as srd

from .rules import (
    ARG_BITS,
    END,
    HANDLER_LINE,
    HANDLER_POINT,
    KERNEL_TEST,
    PARAM,
    RULES,
    START,
    TICK_POINTS,
)

ROWS = ("il", "idl", "tsl", "op")
A_WINDOW, A_DISCARDED, A_TOTALS, A_LOOP = (len(ROWS), len(ROWS) + 1, len(ROWS) + 2, len(ROWS) + 3)
#: Durations are in ticks: sample periods of the logic file (one capture cycle, or half a
#: cycle with DDR inputs, in a latscope export). "samples" are the tables' entries.
#: kernel_tick: 1 when one of the kernel's tick markers lies in [start, end] (the host's
#: tick flag, analysis.tick_overlaps).
CSV_HEADER = b"table,start_sample,end_sample,ticks,ns,kernel_tick\n"
UNITS = {"us": 1e6, "ns": 1e9}


class Window:
    """One START..END window of a test, with the pairing state of each of its rules."""

    def __init__(self, test, start, arg):
        self.test = test
        self.start = start  # sample of the START marker
        self.parameter = arg
        self.parameter_known = False  # until the test's next marker: is it a PARAM?
        self.rules = [rule for rule in RULES if rule[0] == test]
        self.pending = [None] * len(self.rules)  # sample of the unpaired A per rule
        # The A that an A of the pending one's own sample replaced: a B in that sample is
        # not the new A's (B must be later) but may end the older one's sample.
        self.earlier = [None] * len(self.rules)
        self.totals = {}  # table -> [samples, min, max, sum, ticked]

    def table(self, rule):
        return rule[1].format(n=self.parameter)


class Decoder(srd.Decoder):
    api_version = 3
    id = "latscope_latency"
    name = "latscope latency"
    longname = "latscope latency samples (IL, IDL, TSL)"
    desc = "Interrupt, dispatch and thread switch latency samples from trace markers."
    license = "bsd-2-clause"
    inputs = ["latscope_marker"]
    outputs = []
    tags = ["Debug/trace"]
    options = (
        {
            "id": "tables",
            "desc": "Tables (names or prefixes, e.g. IL-a/TSL; empty: all)",
            "default": "",
        },
        {
            "id": "unit",
            "desc": "Unit of the latencies",
            "default": "us",
            "values": ("us", "ns", "ticks"),
        },
        {
            "id": "loop",
            "desc": "IRQ loop: edge channel the DUT handler toggles (LOOP table)",
            "default": "",
            "values": ("",) + tuple("EDGE%d" % n for n in range(8)),
        },
    )
    annotations = (
        ("il", "Interrupt latency sample"),
        ("idl", "Interrupt dispatch latency sample"),
        ("tsl", "Thread switch latency sample"),
        ("op", "Operation time sample"),
        ("window", "Test window"),
        ("discarded", "Pair discarded: events lost in between"),
        ("totals", "Per table: samples, min, avg, max (at the test's END)"),
        ("loop", "IRQ loop sample: IRQ edge to the loop channel's next change"),
    )
    annotation_rows = (
        ("il", "IL", (0,)),
        ("idl", "IDL", (1,)),
        ("tsl", "TSL", (2,)),
        ("op", "Operations", (3,)),
        ("tests", "Tests", (A_WINDOW,)),
        ("totals", "Totals", (A_TOTALS,)),
        ("discarded", "Discarded", (A_DISCARDED,)),
        ("loop", "IRQ loop", (A_LOOP,)),
    )
    binary = (("csv", "Samples as CSV: table,start_sample,end_sample,ticks,ns"),)

    def __init__(self):
        self.reset()

    def reset(self):
        self.samplerate = None
        self.windows = []
        self.loss_since = None  # start of the open loss span (LOSS high)
        self.loss_ended = None  # end of the latest closed loss span
        self.header_sent = False
        self.out_meta = {}  # table -> its meta output (registered on use)
        self.loop_pending = None  # sample of the IRQ edge the loop waits on
        self.ticks = []  # samples of the kernel's tick markers, in order

    def start(self):
        self.out_ann = self.register(srd.OUTPUT_ANN)
        self.out_binary = self.register(srd.OUTPUT_BINARY)
        # '/' or spaces between names: ',' and ':' separate decoders and options in -P.
        self.wanted = tuple(self.options["tables"].replace("/", " ").split())
        self.unit = self.options["unit"]

    def metadata(self, key, value):
        if key == srd.SRD_CONF_SAMPLERATE:
            self.samplerate = value

    def shows(self, table):
        return not self.wanted or table.startswith(self.wanted)

    def text(self, ticks):
        """A duration in the chosen unit ("3.720 us"); in ticks without a samplerate."""
        if self.unit == "ticks" or not self.samplerate:
            return "%d ticks" % round(ticks)
        value = ticks * UNITS[self.unit] / self.samplerate
        return ("%.3f us" if self.unit == "us" else "%.1f ns") % value

    def ticked(self, ss, es):
        """Whether a kernel tick marker lies in [ss, es]: the host's rule
        (analysis.tick_overlaps). latscope_marker puts the tick markers of a sample before
        its other events, so those of B's own sample are known when B comes."""
        return bisect_left(self.ticks, ss) < bisect_right(self.ticks, es)

    def tick_marker(self, ss):
        """Keeps a tick marker's sample, dropping those before every A still unpaired
        (no sample can hold them any more)."""
        oldest = [
            a for window in self.windows for a in window.pending + window.earlier if a is not None
        ]
        del self.ticks[: bisect_left(self.ticks, min(oldest, default=ss))]
        self.ticks.append(ss)

    def emit(self, window, rule, ss, es):
        table = window.table(rule)
        if not self.shows(table):
            return
        ticks = es - ss
        value = self.text(ticks)
        ticked = self.ticked(ss, es)
        flag = " (tick)" if ticked else ""
        detail = "%d ticks%s" % (ticks, ", kernel tick inside" if ticked else "")
        self.put(
            ss,
            es,
            self.out_ann,
            [
                ROWS.index(rule[4]),
                [
                    "%s %s (%s)" % (table, value, detail),
                    "%s %s%s" % (table, value, flag),
                    value + flag,
                ],
            ],
        )
        self.csv(table, ss, es, ticked)
        total = window.totals.setdefault(table, [0, ticks, ticks, 0, 0])
        total[0] += 1
        total[1], total[2], total[3] = min(total[1], ticks), max(total[2], ticks), total[3] + ticks
        total[4] += ticked

    def csv(self, table, ss, es, ticked=False):
        """One line of the binary CSV output (after its header, once)."""
        if not self.header_sent:
            self.put(ss, es, self.out_binary, [0, CSV_HEADER])
            self.header_sent = True
        ticks = es - ss
        ns = "" if not self.samplerate else "%.3f" % (ticks * 1e9 / self.samplerate)
        line = "%s,%d,%d,%d,%s,%d\n" % (table, ss, es, ticks, ns, ticked)
        self.put(ss, es, self.out_binary, [0, line.encode()])

    def loop_edge(self, ss, is_irq):
        """The IRQ loop (option loop; host/latscope/analysis/loop.py): an asserting IRQ edge waits
        for the loop channel's next change, which makes the sample; an IRQ edge with no
        change before the next one is dropped. The LOSS channel says no source, so a pair
        across any loss is discarded (the host's table only discards losses of the IRQ and
        the loop channel)."""
        a, self.loop_pending = self.loop_pending, (ss if is_irq else None)
        if is_irq or a is None or ss <= a:
            return
        table = "LOOP-" + self.options["loop"]
        if not self.shows(table):
            return
        if self.lossy(a, ss):
            self.put(
                a, ss, self.out_ann, [A_DISCARDED, ["%s: events lost in between" % table, "lost"]]
            )
            return
        value = self.text(ss - a)
        self.put(
            a,
            ss,
            self.out_ann,
            [
                A_LOOP,
                ["%s %s (%d ticks)" % (table, value, ss - a), "%s %s" % (table, value), value],
            ],
        )
        self.csv(table, a, ss)

    def lossy(self, a, b):
        """Whether a loss span starts before B and ends after A (spans do not overlap and
        come in order, so the open one and the latest closed one are all that matter)."""
        return (self.loss_since is not None and self.loss_since < b) or (
            self.loss_ended is not None and self.loss_ended > a
        )

    def event(self, window, kind, ss):
        """Event ``kind`` ('irq' or a marker point) at sample ``ss`` inside ``window``:
        it ends the sample of the latest A strictly before it (if that one is unpaired),
        then becomes the pending A of the rules whose A it is (an unpaired older A is
        dropped). Events of one sample come in any order: a B never pairs with an A of
        its own sample."""
        for index, rule in enumerate(window.rules):
            pending = window.pending[index]
            if rule[3] == kind:
                a = pending if pending is not None and pending < ss else window.earlier[index]
                if a is not None and a < ss:
                    if self.lossy(a, ss):
                        if self.shows(window.table(rule)):
                            self.put(
                                a,
                                ss,
                                self.out_ann,
                                [
                                    A_DISCARDED,
                                    ["%s: events lost in between" % window.table(rule), "lost"],
                                ],
                            )
                    else:
                        self.emit(window, rule, a, ss)
                    if a == pending:
                        window.pending[index] = None
                    window.earlier[index] = None
            if rule[2] == kind:
                pending = window.pending[index]
                if pending is None or pending < ss:
                    window.earlier[index] = pending
                window.pending[index] = ss

    def close(self, window, es):
        """The test's window ends at ``es``: its annotation, and per table its totals
        (an annotation, and a meta output "TABLE samples: n" once per table)."""
        names = ", ".join(sorted({window.table(rule) for rule in window.rules}))
        count = sum(total[0] for total in window.totals.values())
        self.put(
            window.start,
            es,
            self.out_ann,
            [
                A_WINDOW,
                [
                    "test %d: %s, %d samples" % (window.test, names or "no rules", count),
                    names or "test %d" % window.test,
                ],
            ],
        )
        for table, (samples, low, high, total, ticked) in sorted(window.totals.items()):
            self.put(
                window.start,
                es,
                self.out_ann,
                [
                    A_TOTALS,
                    [
                        "%s: %d samples, min %s, avg %s, max %s, %d with a tick"
                        % (
                            table,
                            samples,
                            self.text(low),
                            self.text(total / samples),
                            self.text(high),
                            ticked,
                        ),
                        "%s: %d samples" % (table, samples),
                        table,
                    ],
                ],
            )
            if table not in self.out_meta:
                self.out_meta[table] = self.register(
                    srd.OUTPUT_META, meta=(int, "%s samples" % table, "Samples of table %s" % table)
                )
            self.put(window.start, es, self.out_meta[table], samples)

    def decode(self, ss, es, data):
        kind, payload = data
        if kind == "LOSS":
            if payload:
                self.loss_since = ss
            else:
                self.loss_since, self.loss_ended = None, ss
        elif kind == "EDGE":
            if self.options["loop"] == "EDGE%d" % payload[0]:
                self.loop_edge(ss, False)
        elif kind == "IRQ":
            if payload and self.options["loop"]:
                self.loop_edge(ss, True)
            if payload:
                for window in self.windows:
                    if ss > window.start:
                        self.event(window, "irq", ss)
        elif kind == "MARKER":
            _, test, point, arg = payload
            if test == KERNEL_TEST and point in TICK_POINTS:
                self.tick_marker(ss)  # pairs with nothing; flags samples
                return
            if test == KERNEL_TEST and point == HANDLER_POINT:
                # The kernel is about to call the IRQ's handler: an event of every open
                # window (another line's, a load profile's, is none).
                if arg == HANDLER_LINE:
                    for window in self.windows:
                        self.event(window, "handler", ss)
                return
            mine = [window for window in self.windows if window.test == test]
            for window in mine:
                # A parameter of 128 or more continues in a PARAM marker that is the
                # test's very next marker.
                if not window.parameter_known:
                    window.parameter_known = True
                    if point == PARAM:
                        window.parameter |= arg << ARG_BITS
            if point in (END, START):
                # A START whose test's window is still open ends that window: its END was lost.
                for window in mine:
                    self.close(window, ss)
                self.windows = [window for window in self.windows if window.test != test]
                if point == START:
                    self.windows.append(Window(test, ss, arg))
            else:
                # A marker after its test's START (in the order the markers come, as
                # analyze takes them) is in the window, even in START's own sample.
                for window in mine:
                    self.event(window, point, ss)
