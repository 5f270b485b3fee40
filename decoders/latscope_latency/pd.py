##
## This file is part of latscope (BSD-2-Clause).
##
## Latency samples from latscope_marker's events. The rules come from rules.py, generated
## from host/latscope/analysis.py; the window logic below mirrors analysis.analyze() and
## tests/test_sigrok.py checks that both give the same samples.
##

import sigrokdecode as srd

from .rules import ARG_BITS, END, PARAM, RULES, START

ROWS = ('il', 'idl', 'tsl', 'op')
A_WINDOW, A_DISCARDED, A_LOOP = len(ROWS), len(ROWS) + 1, len(ROWS) + 2
CSV_HEADER = b'table,start_sample,end_sample,samples,ns\n'


class Window:
    '''One START..END window of a test, with the pairing state of each of its rules.'''

    def __init__(self, test, start, arg):
        self.test = test
        self.start = start                 # sample of the START marker
        self.parameter = arg
        self.parameter_known = False       # until the test's next marker: is it a PARAM?
        self.rules = [rule for rule in RULES if rule[0] == test]
        self.pending = [None] * len(self.rules)    # sample of the unpaired A per rule
        self.samples = 0


class Decoder(srd.Decoder):
    api_version = 3
    id = 'latscope_latency'
    name = 'latscope latency'
    longname = 'latscope latency samples (IL, IDL, TSL)'
    desc = 'Interrupt, dispatch and thread switch latency samples from trace markers.'
    license = 'bsd-2-clause'
    inputs = ['latscope_marker']
    outputs = []
    tags = ['Debug/trace']
    options = (
        {'id': 'loop', 'desc': 'IRQ loop: edge channel the DUT handler toggles (LOOP table)',
         'default': '', 'values': ('',) + tuple('EDGE%d' % n for n in range(8))},
    )
    annotations = (
        ('il', 'Interrupt latency sample'),
        ('idl', 'Interrupt dispatch latency sample'),
        ('tsl', 'Thread switch latency sample'),
        ('op', 'Operation time sample'),
        ('window', 'Test window'),
        ('discarded', 'Pair discarded: events lost in between'),
        ('loop', 'IRQ loop sample: IRQ edge to the loop channel\'s next change'),
    )
    annotation_rows = (
        ('il', 'IL', (0,)),
        ('idl', 'IDL', (1,)),
        ('tsl', 'TSL', (2,)),
        ('op', 'Operations', (3,)),
        ('tests', 'Tests', (A_WINDOW,)),
        ('discarded', 'Discarded', (A_DISCARDED,)),
        ('loop', 'IRQ loop', (A_LOOP,)),
    )
    binary = (
        ('csv', 'Samples as CSV: table,start_sample,end_sample,samples,ns'),
    )

    def __init__(self):
        self.reset()

    def reset(self):
        self.samplerate = None
        self.windows = []
        self.loss_since = None             # start of the open loss span (LOSS high)
        self.loss_ended = None             # end of the latest closed loss span
        self.counts = dict.fromkeys(ROWS, 0)
        self.header_sent = False
        self.loop_pending = None           # sample of the IRQ edge the loop waits on

    def start(self):
        self.out_ann = self.register(srd.OUTPUT_ANN)
        self.out_binary = self.register(srd.OUTPUT_BINARY)
        self.out_meta = {row: self.register(srd.OUTPUT_META,
                                            meta=(int, '%s samples' % row.upper(),
                                                  'Number of %s samples so far' % row.upper()))
                         for row in ROWS}

    def metadata(self, key, value):
        if key == srd.SRD_CONF_SAMPLERATE:
            self.samplerate = value

    def duration(self, samples):
        '''Texts of a sample's length, longest first.'''
        if not self.samplerate:
            return ['%d samples' % samples, '%d' % samples]
        ns = samples * 1e9 / self.samplerate
        return ['%.1f ns (%d samples)' % (ns, samples), '%.1f ns' % ns, '%.0f' % ns], ns

    def emit(self, window, rule, ss, es):
        row = rule[4]
        name = rule[1].format(n=window.parameter)
        samples = es - ss
        texts = self.duration(samples)
        ns = None
        if self.samplerate:
            texts, ns = texts
        self.put(ss, es, self.out_ann,
                 [ROWS.index(row), ['%s: %s' % (name, texts[0]), '%s %s' % (name, texts[1]),
                                    texts[-1]]])
        if not self.header_sent:
            self.put(ss, es, self.out_binary, [0, CSV_HEADER])
            self.header_sent = True
        line = '%s,%d,%d,%d,%s\n' % (name, ss, es, samples, '' if ns is None else '%.3f' % ns)
        self.put(ss, es, self.out_binary, [0, line.encode()])
        self.counts[row] += 1
        window.samples += 1
        self.put(ss, es, self.out_meta[row], self.counts[row])

    def loop_edge(self, ss, is_irq):
        '''The IRQ loop (option loop; host/latscope/loop.py): an asserting IRQ edge waits
        for the loop channel's next change, which makes the sample; an IRQ edge with no
        change before the next one is dropped. The LOSS channel says no source, so a pair
        across any loss is discarded (the host's table only discards losses of the IRQ and
        the loop channel).'''
        a, self.loop_pending = self.loop_pending, (ss if is_irq else None)
        if is_irq or a is None or ss <= a:
            return
        table = 'LOOP-' + self.options['loop']
        if self.lossy(a, ss):
            self.put(a, ss, self.out_ann, [A_DISCARDED, ['%s: events lost in between' % table,
                                                         'lost']])
            return
        texts = self.duration(ss - a)
        ns = None
        if self.samplerate:
            texts, ns = texts
        self.put(a, ss, self.out_ann, [A_LOOP, ['%s: %s' % (table, texts[0]), texts[-1]]])
        if not self.header_sent:
            self.put(a, ss, self.out_binary, [0, CSV_HEADER])
            self.header_sent = True
        line = '%s,%d,%d,%d,%s\n' % (table, a, ss, ss - a, '' if ns is None else '%.3f' % ns)
        self.put(a, ss, self.out_binary, [0, line.encode()])

    def lossy(self, a, b):
        '''Whether a loss span starts before B and ends after A (spans do not overlap and
        come in order, so the open one and the latest closed one are all that matter).'''
        return ((self.loss_since is not None and self.loss_since < b)
                or (self.loss_ended is not None and self.loss_ended > a))

    def event(self, window, kind, ss):
        '''Event ``kind`` ('irq' or a marker point) at sample ``ss`` inside ``window``:
        it ends the pending sample of the rules whose B it is, then starts a new one for
        the rules whose A it is (a later A replaces an unpaired one).'''
        for index, rule in enumerate(window.rules):
            a = window.pending[index]
            if rule[3] == kind and a is not None and ss > a:
                if self.lossy(a, ss):
                    self.put(a, ss, self.out_ann,
                             [A_DISCARDED, ['%s: events lost in between' % rule[1], 'lost']])
                else:
                    self.emit(window, rule, a, ss)
                window.pending[index] = None
            if rule[2] == kind:
                window.pending[index] = ss

    def close(self, window, es):
        names = ', '.join(sorted({rule[1].format(n=window.parameter) for rule in window.rules}))
        self.put(window.start, es, self.out_ann,
                 [A_WINDOW, ['test %d: %s, %d samples' % (window.test, names or 'no rules',
                                                         window.samples),
                             names or 'test %d' % window.test]])

    def decode(self, ss, es, data):
        kind, payload = data
        if kind == 'LOSS':
            if payload:
                self.loss_since = ss
            else:
                self.loss_since, self.loss_ended = None, ss
        elif kind == 'EDGE':
            if self.options['loop'] == 'EDGE%d' % payload[0]:
                self.loop_edge(ss, False)
        elif kind == 'IRQ':
            if payload and self.options['loop']:
                self.loop_edge(ss, True)
            if payload:
                for window in self.windows:
                    if ss > window.start:
                        self.event(window, 'irq', ss)
        elif kind == 'MARKER':
            _, test, point, arg = payload
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
                for window in mine:
                    if ss > window.start:
                        self.event(window, point, ss)
