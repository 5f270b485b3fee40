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
    CACHE_STATES,
    END,
    HANDLER_LINE,
    HANDLER_POINT,
    KERNEL_TEST,
    LOADS,
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
#: tick flag, analysis.tick_overlaps). load, load_param, cache: what the table was measured
#: under (the options; empty: not known), the columns of latscope's results.csv.
CSV_HEADER = b"table,start_sample,end_sample,ticks,ns,kernel_tick,load,load_param,cache\n"
#: The options load and cache when the capture does not say (a logic analyzer's capture of a
#: DUT, until the user states them); latscope export sets the capture's own.
UNKNOWN = "unknown"
LOAD_VALUES = (UNKNOWN,) + LOADS
CACHE_VALUES = (UNKNOWN,) + CACHE_STATES
UNITS = {"us": 1e6, "ns": 1e9}
#: The tests that have tables.
RULE_TESTS = {rule[0] for rule in RULES}


class Window:
    """One window of a test: from its START (``parameter`` its argument), or, after a hole,
    from the test's first marker (a window of unknown parameter, docs/tests.md rule 5).
    ``epoch``: the holes before it began (it takes start events only while no later hole
    came). A START's parameter is decided at the test's next marker (a PARAM then holds
    bits 7 and up) or at a hole before it (rule 6: then not certain); samples that end
    before that wait in ``deferred`` (their table's name may hold the parameter)."""

    def __init__(self, test, start, parameter, epoch):
        self.test = test
        self.start = start  # sample of the marker it began at
        self.parameter = parameter  # None: unknown (a window a hole opened)
        self.decided = parameter is None
        self.certain = parameter is not None
        self.epoch = epoch
        self.deferred = []  # (rule, A, B, lossy, ticked) of samples waiting for the name
        self.totals = {}  # table -> [samples, min, max, sum, ticked]

    def table(self, rule):
        """The table of ``rule``'s samples in this window; None where the name holds the
        parameter and it is not certain (those samples count nowhere, as in analyze)."""
        if "{n}" in rule[1] and not self.certain:
            return None
        return rule[1].format(n=self.parameter)


class Group:
    """The windows of one test that end at the same bound: a START's (or one a hole
    opened) and those the holes inside it opened after it. A start event (A) pairs with
    the first end event (B) of the group after it, so that a pair across a hole is seen
    (and discarded); the sample is its A's window's."""

    def __init__(self, window):
        self.windows = [window]
        self.rules = [rule for rule in RULES if rule[0] == window.test]
        self.pending = [None] * len(self.rules)  # (sample, window) of the unpaired A per rule
        # The A that an A of the pending one's own sample replaced: a B in that sample is
        # not the new A's (B must be later) but may end the older one's sample.
        self.earlier = [None] * len(self.rules)

    @property
    def current(self):
        return self.windows[-1]


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
        {
            "id": "load",
            "desc": "Load profile the DUT ran (latscope capture --load)",
            "default": UNKNOWN,
            "values": LOAD_VALUES,
        },
        {
            "id": "load_param",
            "desc": "The load profile's parameter (empty: its default)",
            "default": "",
        },
        {
            "id": "cache",
            "desc": "The DUT's CPU caches",
            "default": UNKNOWN,
            "values": CACHE_VALUES,
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
    binary = (
        (
            "csv",
            "Samples as CSV: table,start_sample,end_sample,ticks,ns,kernel_tick,"
            "load,load_param,cache",
        ),
    )

    def __init__(self):
        self.reset()

    def reset(self):
        self.samplerate = None
        self.groups = {}  # test -> its open Group
        self.holes = 0  # holes in the stream so far (HOLE toggles)
        self.last_epoch = {}  # test -> holes before its latest marker
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
        self.conditions()

    def conditions(self):
        """The options load, load_param and cache as latscope's results show them: the CSV
        cells (results.csv's columns; empty: not known) and the text of the Tests and
        Totals rows, " (load bus:50, caches off)" as the reports' "measured under" line."""
        load, cache = self.options["load"], self.options["cache"]
        param = str(self.options["load_param"]).strip()
        # libsigrokdecode takes any string for an option with values: checked here.
        if load not in LOAD_VALUES:
            raise ValueError("load %r: not one of %s" % (load, ", ".join(LOAD_VALUES)))
        if param and not param.isdigit():
            raise ValueError("load_param %r: not a whole number" % param)
        if cache not in CACHE_VALUES:
            raise ValueError("cache %r: not one of %s" % (cache, ", ".join(CACHE_VALUES)))
        named = []
        if load != UNKNOWN:
            named.append("load " + load + (":" + param if param else ""))
        if cache != UNKNOWN:
            named.append("caches " + cache)
        self.condition_cells = tuple("" if v == UNKNOWN else v for v in (load, param, cache))
        self.condition_text = " (%s)" % ", ".join(named) if named else ""

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
            pair[0]
            for group in self.groups.values()
            for pair in group.pending + group.earlier
            if pair is not None
        ] + [a for a in [self.loop_pending] if a is not None]
        del self.ticks[: bisect_left(self.ticks, min(oldest, default=ss))]
        self.ticks.append(ss)

    def outcome(self, window, rule, ss, es, lossy, ticked):
        """The pair (A at ``ss``, B at ``es``) of ``rule`` in ``window`` (A's): a sample, or
        a discarded pair if ``lossy``; held while the window's parameter is undecided, and
        counted nowhere if the table's name needs it and it is not certain."""
        if not window.decided:
            window.deferred.append((rule, ss, es, lossy, ticked))
            return
        table = window.table(rule)
        if table is None or not self.shows(table):
            return
        if lossy:
            self.put(
                ss, es, self.out_ann, [A_DISCARDED, ["%s: events lost in between" % table, "lost"]]
            )
        else:
            self.emit(window, table, rule, ss, es, ticked)

    def decide(self, window, certain):
        """``window``'s parameter is settled (``certain`` or not): its waiting pairs out."""
        window.decided, window.certain = True, certain
        deferred, window.deferred = window.deferred, []
        for pair in deferred:
            self.outcome(window, *pair)

    def emit(self, window, table, rule, ss, es, ticked):
        ticks = es - ss
        value = self.text(ticks)
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
        cells = (table, ss, es, ticks, ns, ticked) + self.condition_cells
        line = "%s,%d,%d,%d,%s,%d,%s,%s,%s\n" % cells
        self.put(ss, es, self.out_binary, [0, line.encode()])

    def loop_edge(self, ss, is_irq):
        """The IRQ loop (option loop; host/latscope/analysis/loop.py): an asserting IRQ edge waits
        for the loop channel's first change strictly after it, which makes the sample; an IRQ
        edge with no change before the next one is dropped. A change in the pending edge's
        own sample (IRQ edges come first in a sample) answers nothing and leaves it waiting:
        neither the previous edge's answer nor this one's. The LOSS channel says no source, so
        a pair across any loss is discarded (the host's table only discards losses of the IRQ
        and the loop channel). A sample holding a kernel tick marker is flagged."""
        if is_irq:
            self.loop_pending = ss
            return
        a = self.loop_pending
        if a is None or ss <= a:
            return
        self.loop_pending = None
        table = "LOOP-" + self.options["loop"]
        if not self.shows(table):
            return
        if self.lossy(a, ss):
            self.put(
                a, ss, self.out_ann, [A_DISCARDED, ["%s: events lost in between" % table, "lost"]]
            )
            return
        value = self.text(ss - a)
        ticked = self.ticked(a, ss)
        flag = " (tick)" if ticked else ""
        self.put(
            a,
            ss,
            self.out_ann,
            [
                A_LOOP,
                [
                    "%s %s (%d ticks%s)"
                    % (table, value, ss - a, ", kernel tick inside" if ticked else ""),
                    "%s %s%s" % (table, value, flag),
                    value + flag,
                ],
            ],
        )
        self.csv(table, a, ss, ticked)

    def lossy(self, a, b):
        """Whether a loss span starts before B and ends after A (spans do not overlap and
        come in order, so the open one and the latest closed one are all that matter)."""
        return (self.loss_since is not None and self.loss_since < b) or (
            self.loss_ended is not None and self.loss_ended > a
        )

    def event(self, group, kind, ss):
        """Event ``kind`` ('irq', 'handler' or a marker point) at sample ``ss`` in ``group``:
        it ends the sample of the group's latest A strictly before it (if that one is
        unpaired), then becomes the pending A of the rules whose A it is (an unpaired older
        A is dropped), if the group's latest window takes start events: no hole since it
        began (docs/tests.md rule 5). Events of one sample come in any order: a B never
        pairs with an A of its own sample."""
        window = group.current
        starts = window.epoch == self.holes
        for index, rule in enumerate(group.rules):
            pending = group.pending[index]
            if rule[3] == kind:
                pair = pending if pending is not None and pending[0] < ss else group.earlier[index]
                if pair is not None and pair[0] < ss:
                    a, owner = pair
                    self.outcome(owner, rule, a, ss, self.lossy(a, ss), self.ticked(a, ss))
                    if pair is pending:
                        group.pending[index] = None
                    group.earlier[index] = None
            if rule[2] == kind and starts:
                pending = group.pending[index]
                if pending is None or pending[0] < ss:
                    group.earlier[index] = pending
                group.pending[index] = (ss, window)

    def close(self, group, es):
        """The test's group ends at ``es``: per window its annotation, and per table its
        totals (an annotation, and a meta output "TABLE samples: n" once per table)."""
        for window in group.windows:
            self.close_window(window, group.rules, es)

    def close_window(self, window, rules, es):
        names = ", ".join(sorted({window.table(rule) or rule[1] for rule in rules}))
        if window.parameter is None:
            names += " (unknown parameter: after a hole)"
        count = sum(total[0] for total in window.totals.values())
        self.put(
            window.start,
            es,
            self.out_ann,
            [
                A_WINDOW,
                [
                    "test %d: %s, %d samples%s"
                    % (window.test, names or "no rules", count, self.condition_text),
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
                        "%s: %d samples, min %s, avg %s, max %s, %d with a tick%s"
                        % (
                            table,
                            samples,
                            self.text(low),
                            self.text(total / samples),
                            self.text(high),
                            ticked,
                            self.condition_text,
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

    def hole(self):
        """A hole in the stream (the export's HOLE channel toggled): the open windows take
        no more start events (rule 5), and a START's parameter not yet decided is not
        certain (rule 6: a PARAM may have been lost)."""
        self.holes += 1
        for group in self.groups.values():
            for window in group.windows:
                if not window.decided:
                    self.decide(window, False)

    def marker(self, test, point, arg, ss):
        """A marker of ``test`` (not the kernel's)."""
        group = self.groups.get(test)
        if group is not None and not group.current.decided:
            # The START's next marker, no hole between: a PARAM holds bits 7 and up.
            window = group.current
            if point == PARAM:
                window.parameter |= arg << ARG_BITS
            self.decide(window, True)
        if self.last_epoch.get(test, 0) < self.holes and point != START and test in RULE_TESTS:
            # After a hole the test's markers up to its next START or END lie in one true
            # window whose START may have been lost: a window of unknown parameter from
            # here (rule 5), in the open group, if any.
            window = Window(test, ss, None, self.holes)
            if group is None:
                group = self.groups[test] = Group(window)
            else:
                group.windows.append(window)
        self.last_epoch[test] = self.holes
        if point in (END, START):
            # A START while the test's group is open ends it: its END was lost.
            if group is not None:
                self.close(group, ss)
                del self.groups[test]
            if point == START:
                self.groups[test] = Group(Window(test, ss, arg, self.holes))
        elif group is not None:
            # A marker after its test's START (in the order the markers come, as analyze
            # takes them) is in the window, even in START's own sample.
            self.event(group, point, ss)

    def decode(self, ss, es, data):
        kind, payload = data
        if kind == "HOLE":
            self.hole()
        elif kind == "LOSS":
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
                for group in self.groups.values():
                    if ss > group.current.start:
                        self.event(group, "irq", ss)
        elif kind == "MARKER":
            _, test, point, arg = payload
            if test == KERNEL_TEST and point in TICK_POINTS:
                self.tick_marker(ss)  # pairs with nothing; flags samples
            elif test == KERNEL_TEST and point == HANDLER_POINT:
                # The kernel is about to call the IRQ's handler: an event of every open
                # group (another line's, a load profile's, is none).
                if arg == HANDLER_LINE:
                    for group in self.groups.values():
                        self.event(group, "handler", ss)
            else:
                self.marker(test, point, arg, ss)
