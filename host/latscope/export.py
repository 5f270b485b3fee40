"""A capture as logic signals, for sigrok and PulseView: session files (.sr), VCD, and the
PulseView setup (.pvs) that attaches the latscope decoders.

Signals (one sample = one capture-clock cycle; bit n of a sample word = channel n):

====== ============ =============================================================
bits   channels     level
====== ============ =============================================================
0..15  D0 .. D15    data of the last marker (trace port or bus window, low 16 bits)
16     STB          toggles at every marker, in the cycle of its stamp
17     IRQ          1 while the IRQ generator's output is asserted (whatever its polarity)
18     LOSS         high where events may have been lost (below)
19..   E0 .. En-1   edge channels, as captured
then   STB2, D2_0.. second marker lane (only when the capture has two markers in one
       .. D2_15     cycle): strobe and data of the second marker of a cycle
====== ============ =============================================================

So the ``latscope_marker`` decoder (sample delay 0) sees every marker at its stamp and
``latscope_latency`` pairs them exactly as :func:`latscope.analysis.analyze` does.

LOSS is high over the spans in which :func:`latscope.analysis.analyze` takes events to be
possibly lost (its ``_lossy_spans``, the one definition): from the previous event of the
source that lost events to the LOSS record that reports them, high from the span's first
cycle up to (not including) its last; high at sample 0 if the span began before. A sample
(A, B) is discarded when such a span starts before B and ends after A.

A level can only show an edge if it changes. Where a capture has an IRQ or edge event that
does not change the level (its opposite edge was lost: the appliance reports a LOSS there),
the opposite level is shown for the one cycle before it, so the edge still appears; an extra
IRQ *assertion* is never invented this way (a repeated releasing edge is left out, no rule
uses it). Two markers in one cycle (trace port and bus window together) are taken in the
order trace port, bus window (as analyze takes them, docs/tests.md): the first on STB/D*,
the second on the second lane STB2/D2_*, which :func:`export_capture` adds when the capture
has such a cycle and the marker decoder reads after the first. Without that lane (the live
stream) the second one is shown instead of the first and the number dropped is reported.

Sample 0 is cycle ``origin`` (a few cycles before the first event); :class:`ExportInfo` gives
it. Everything is streamed: the writers hold the change list (a few words per event) and one
block of samples, whatever the gaps between events.
"""

import math
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .analysis import _lossy_spans      # the one definition of where events may be lost
from .protocol import Source

__all__ = ["Layout", "LevelTracker", "Changes", "ExportInfo", "ExportError", "export_capture",
           "write_sr", "write_pvs", "VcdWriter", "vcd_timescale", "DATA_BITS"]

DATA_BITS = 16
STROBE_BIT = DATA_BITS
IRQ_BIT = STROBE_BIT + 1
LOSS_BIT = IRQ_BIT + 1
EDGE_BIT = LOSS_BIT + 1
#: Cycles shown before the first event (so that no edge falls on sample 0, where a decoder
#: cannot see it) and after the last.
MARGIN = 16
#: After the last event the export also shows this long: the marker decoder's annotation
#: of the last marker extends this far (its HOLD_SECONDS) when no marker follows.
TAIL_SECONDS = 10e-6
#: Samples generated at a time when writing a session file.
BLOCK_SAMPLES = 1 << 20
#: Samples per zip entry of a session file (entries stay well below 4 GiB: no zip64).
ENTRY_SAMPLES = 1 << 26

MARKER_DECODER = "latscope_marker"
LATENCY_DECODER = "latscope_latency"


class ExportError(ValueError):
    """A capture that cannot be exported (one-line message)."""


@dataclass(frozen=True)
class Layout:
    """Channel names in bit order. ``second_lane``: strobe and data of the second marker
    of a cycle, after the edge channels."""
    edge_count: int = 0
    second_lane: bool = False

    @classmethod
    def for_capture(cls, metadata):
        return cls(int(metadata.get("identity", {}).get("edge_count", 0)))

    @property
    def names(self):
        return ([f"D{n}" for n in range(DATA_BITS)] + ["STB", "IRQ", "LOSS"]
                + [f"E{n}" for n in range(self.edge_count)]
                + (["STB2"] + [f"D2_{n}" for n in range(DATA_BITS)] if self.second_lane
                   else []))

    @property
    def strobe2_bit(self):
        """Bit of STB2 (the second lane's data follow it)."""
        return EDGE_BIT + self.edge_count

    def decoder_channels(self):
        """(decoder channel id, signal name) of latscope_marker's channels."""
        return ([("strobe", "STB")] + [(f"d{n}", f"D{n}") for n in range(DATA_BITS)]
                + [("irq", "IRQ"), ("loss", "LOSS")]
                + [(f"e{n}", f"E{n}") for n in range(self.edge_count)]
                + ([("strobe2", "STB2")] + [(f"d2_{n}", f"D2_{n}") for n in range(DATA_BITS)]
                   if self.second_lane else []))

    def decoder_stack(self):
        """sigrok-cli's ``-P`` argument for the latscope decoders on these signals."""
        channels = ":".join(f"{decoder}={signal}" for decoder, signal in self.decoder_channels())
        return f"{MARKER_DECODER}:sample_delay=0:{channels},{LATENCY_DECODER}"


@dataclass
class Changes:
    """Sample words after each change: ``stamps`` (int64 cycles, increasing), ``words``."""
    stamps: np.ndarray
    words: np.ndarray

    def __len__(self):
        return len(self.stamps)


@dataclass
class ExportInfo:
    layout: Layout
    origin: int                 # cycle of sample 0
    samples: int                # samples written
    stamp_hz: int               # samples per second: one per stamp unit
    changes: int                # sample words that differ from the previous one
    markers_dropped: int = 0    # second marker of a cycle
    edges_stretched: int = 0    # repeated levels shown with a one-cycle opposite pulse
    edges_dropped: int = 0      # repeated levels that could not be shown
    files: list = field(default_factory=list)

    def summary(self):
        text = (f"sample 0 = cycle {self.origin}, {self.samples} samples at "
                f"{self.stamp_hz / 1e6:g} MHz, {self.changes} changes")
        if self.markers_dropped:
            text += f"; {self.markers_dropped} second marker(s) of a cycle not shown"
        if self.edges_stretched or self.edges_dropped:
            text += (f"; {self.edges_stretched} edge(s) that repeat a level (the opposite "
                     f"edge is not in the capture) shown after a one-cycle pulse, "
                     f"{self.edges_dropped} not shown")
        return text


class LevelTracker:
    """Turns events into sample-word changes, batch by batch.

    ``feed(events)`` (events in stream order) returns the :class:`Changes` of every event up
    to ``holdback`` cycles before the latest stamp seen; events of different sources can
    arrive a few cycles out of stamp order (pin-latency correction), so the newest ones wait
    for the next batch. ``finish()`` returns the rest. Fed all at once (``final=True``) the
    result is exact; fed in pieces (a live stream), a loss span that begins before what was
    already returned starts at the first cycle not yet returned (``loss_clamped``)."""

    def __init__(self, layout, *, holdback=64):
        self.layout = layout
        self.holdback = holdback
        self.word = 0                       # levels after the last change returned
        self.initial = 0                    # levels before the first change
        self.last_change = {}               # 1-bit channel -> stamp of its last change
        self.last_stamp = None              # stamp of the last change returned
        self.markers_dropped = 0
        self.edges_stretched = 0
        self.edges_dropped = 0
        self.loss_clamped = 0
        self._held = (np.empty(0, np.int64), np.empty(0, np.uint8), np.empty(0, np.int64))
        self._last_of_source = {}           # source -> stamp of its last event (stream order)
        self._rises = np.empty(0, np.int64)     # loss spans not yet shown: their starts
        self._falls = np.empty(0, np.int64)     # ... and ends
        self._loss_open = 0                 # loss spans shown as started, not yet ended

    def _note_losses(self, events):
        """Adds the loss spans of new events (stream order) to the pending ones; a source's
        previous event may be in an earlier batch: it goes in front as a stand-in."""
        known = [(stamp, source) for source, stamp in self._last_of_source.items()]
        stamp = np.concatenate([np.array([k[0] for k in known], np.int64),
                                events.stamp.astype(np.int64)])
        source = np.concatenate([np.array([k[1] for k in known], np.uint8), events.source])
        value = np.concatenate([np.zeros(len(known), np.int64), events.value.astype(np.int64)])
        low, high = _lossy_spans(stamp, source, value, None)
        self._rises = np.concatenate([self._rises, low])
        self._falls = np.concatenate([self._falls, high])
        for n in np.unique(events.source).tolist():
            if n != Source.LOSS:
                self._last_of_source[n] = int(events.stamp[events.source == n][-1])

    def feed(self, events, final=False):
        if len(events):
            self._note_losses(events)
        stamp = np.concatenate([self._held[0], events.stamp.astype(np.int64)])
        source = np.concatenate([self._held[1], events.source])
        value = np.concatenate([self._held[2], events.value.astype(np.int64)])
        order = np.argsort(stamp, kind="stable")
        stamp, source, value = stamp[order], source[order], value[order]
        if final or not len(stamp):
            ready, cut = len(stamp), np.iinfo(np.int64).max
        else:
            cut = stamp[-1] - self.holdback
            ready = int(np.searchsorted(stamp, cut, side="right"))
        self._held = (stamp[ready:], source[ready:], value[ready:])
        return self._changes(stamp[:ready], source[:ready], value[:ready], cut)

    def finish(self):
        return self.feed(_no_events(), final=True)

    # --- internals ----------------------------------------------------------------------

    def _changes(self, stamp, source, value, cut):
        if self.last_stamp is not None and len(stamp) and stamp[0] <= self.last_stamp:
            # Out of order by more than the holdback: show it in the next cycle.
            stamp = np.maximum(stamp, self.last_stamp + 1)
        groups = []                         # (stamps, bit mask, bit values) per channel group

        is_marker = np.isin(source, (Source.MARKER, Source.BUS))
        m_stamp, m_value = stamp[is_marker], value[is_marker] & ((1 << DATA_BITS) - 1)
        order = np.lexsort((source[is_marker], m_stamp))      # one cycle: trace port first
        m_stamp, m_value = m_stamp[order], m_value[order]
        second = np.zeros(len(m_stamp), bool)
        second[1:] = m_stamp[1:] == m_stamp[:-1]
        if self.layout.second_lane:
            lane2 = self.layout.strobe2_bit
            groups.append(self._lane(lane2, lane2 + 1, m_stamp[second], m_value[second]))
            first = ~second
        else:
            first = np.append(~second[1:], True)[:len(second)]   # the later of one cycle's
            self.markers_dropped += int(np.count_nonzero(second))
        groups.append(self._lane(STROBE_BIT, 0, m_stamp[first], m_value[first]))

        groups.append(self._loss_level(cut))

        is_irq = source == Source.IRQ
        groups.append(self._levels(IRQ_BIT, stamp[is_irq], value[is_irq] & 1, never=1))
        for n in range(self.layout.edge_count):
            is_edge = source == Source.EDGE0 + n
            groups.append(self._levels(EDGE_BIT + n, stamp[is_edge], value[is_edge] & 1))
        return self._merge(groups)

    def _lane(self, strobe_bit, data_bit, stamps, values):
        """Changes of a marker lane: its 16 data bits from ``data_bit`` on and its strobe,
        toggled by every marker."""
        strobe = ((self.word >> strobe_bit) + np.arange(1, len(stamps) + 1)) & 1
        mask = ((1 << DATA_BITS) - 1) << data_bit | 1 << strobe_bit
        return stamps, mask, values << data_bit | strobe << strobe_bit

    def _loss_level(self, cut):
        """Changes of the LOSS channel: high while a loss span is open (spans that touch
        are one); the span starts and ends up to ``cut`` are due."""
        rises, falls = self._rises[self._rises <= cut], self._falls[self._falls <= cut]
        self._rises, self._falls = self._rises[self._rises > cut], self._falls[self._falls > cut]
        if self.last_stamp is None:
            # Nothing shown yet: spans that began before the first event start high.
            before = rises == np.iinfo(np.int64).min
            self._loss_open += int(np.count_nonzero(before))
            rises = rises[~before]
            if self._loss_open:
                self.word |= 1 << LOSS_BIT
                self.initial = self.word
        else:
            early = rises <= self.last_stamp
            self.loss_clamped += int(np.count_nonzero(early))
            rises = np.where(early, self.last_stamp + 1, rises)
        points = np.concatenate([rises, falls])
        step = np.concatenate([np.ones(len(rises), np.int64), -np.ones(len(falls), np.int64)])
        order = np.lexsort((-step, points))            # at one stamp, starts before ends
        points, open_spans = points[order], self._loss_open + np.cumsum(step[order])
        if not len(points):
            return points, 1 << LOSS_BIT, points
        self._loss_open = int(open_spans[-1])
        last = np.append(points[1:] != points[:-1], True)  # the level after each stamp
        level = (open_spans[last] > 0).astype(np.int64)
        return points[last], 1 << LOSS_BIT, level << LOSS_BIT

    def _levels(self, bit, stamp, level, never=None):
        """Changes of a 1-bit channel. A level equal to the previous one gets the opposite
        level in the cycle before, if that cycle is free and the pulse is not ``never``."""
        if not len(stamp):
            return stamp, 1 << bit, level
        if self.last_stamp is None and bit not in self.last_change:
            # Nothing shown yet: the channel starts at the level before its first edge.
            self.word = (self.word & ~(1 << bit)) | ((1 - int(level[0])) << bit)
            self.initial = self.word
        previous = np.concatenate([[(self.word >> bit) & 1], level[:-1]])
        before = np.concatenate([[self.last_change.get(bit, np.iinfo(np.int64).min)],
                                 stamp[:-1]])
        repeated = level == previous
        pulse = repeated & (stamp - 1 > before)
        if never is not None:
            pulse &= (1 - level) != never
        self.edges_stretched += int(np.count_nonzero(pulse))
        self.edges_dropped += int(np.count_nonzero(repeated & ~pulse))
        stamp = np.concatenate([stamp, stamp[pulse] - 1])
        level = np.concatenate([level, 1 - level[pulse]])
        order = np.argsort(stamp, kind="stable")
        stamp, level = stamp[order], level[order]
        self.last_change[bit] = int(stamp[-1])
        return stamp, 1 << bit, level << bit

    def _merge(self, groups):
        """One word per distinct stamp: every group's latest value at that stamp."""
        stamps = np.unique(np.concatenate([g[0] for g in groups]))
        if not len(stamps):
            return Changes(stamps.astype(np.int64), np.empty(0, np.uint64))
        words = np.full(len(stamps), self.word, np.int64)
        for g_stamp, mask, g_value in groups:
            if not len(g_stamp):
                continue
            latest = np.searchsorted(g_stamp, stamps, side="right") - 1   # -1: none yet
            known = latest >= 0
            words[known] = (words[known] & ~mask) | g_value[latest[known]]
        # Drop stamps whose word equals the one before (nothing visible changed).
        previous = np.concatenate([[self.word], words[:-1]])
        changed = words != previous
        stamps, words = stamps[changed], words[changed]
        if len(stamps):
            self.word = int(words[-1])
            self.last_stamp = int(stamps[-1])
        return Changes(stamps.astype(np.int64), words.astype(np.uint64))


def _no_events():
    from .parser import Events
    return Events.empty()


def _samples(changes, initial, start, stop, unitsize):
    """Bytes of samples ``start .. stop - 1`` (``changes`` in sample numbers)."""
    first = int(np.searchsorted(changes.stamps, start, side="right"))
    last = int(np.searchsorted(changes.stamps, stop, side="left"))
    current = int(changes.words[first - 1]) if first else initial
    if first == last:                  # a quiet block: one word repeated
        return current.to_bytes(8, "little")[:unitsize] * (stop - start)
    points = np.concatenate([[start], changes.stamps[first:last], [stop]])
    words = np.concatenate([[current], changes.words[first:last]]).astype("<u8")
    units = np.ascontiguousarray(words.view(np.uint8).reshape(-1, 8)[:, :unitsize])
    return np.repeat(units.view(f"V{unitsize}").ravel(), np.diff(points)).tobytes()


def samplerate_text(hz):
    """The session-file samplerate, as libsigrok writes it (e.g. ``100 MHz``)."""
    for unit, scale in (("GHz", 10**9), ("MHz", 10**6), ("kHz", 10**3)):
        if hz % scale == 0:
            return f"{hz // scale} {unit}"
    return f"{hz} Hz"


def write_sr(path, names, changes, samplerate, *, origin, samples, initial=0):
    """Writes a sigrok session file (srzip, version 2): logic channels ``names`` (bit n of
    a sample word is channel n), ``samples`` samples, sample 0 at ``origin`` (in the unit
    of ``changes.stamps``: cycles for a latscope export). The samples are generated block
    by block straight into the compressed zip entries (``logic-1-1``, ``logic-1-2``, ...),
    so memory stays bounded however long the quiet stretches are (they compress about
    1000:1; about 100 million samples a second)."""
    shifted = Changes(changes.stamps - origin, changes.words)
    unitsize = (len(names) + 7) // 8
    metadata = ["[global]", "sigrok version=0.5.2", "", "[device 1]", "capturefile=logic-1",
                f"total probes={len(names)}", f"samplerate={samplerate_text(samplerate)}",
                "total analog=0"]
    metadata += [f"probe{n + 1}={name}" for n, name in enumerate(names)]
    metadata += [f"unitsize={unitsize}", ""]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("version", "2")
        archive.writestr("metadata", "\n".join(metadata))
        for entry, start in enumerate(range(0, samples, ENTRY_SAMPLES), 1):
            stop = min(start + ENTRY_SAMPLES, samples)
            with archive.open(f"logic-1-{entry}", "w") as out:
                for block in range(start, stop, BLOCK_SAMPLES):
                    out.write(_samples(shifted, initial, block,
                                       min(block + BLOCK_SAMPLES, stop), unitsize))


def _ini_bytes(data):
    """A QByteArray value in a QSettings INI file (Qt's escaping)."""
    out, escape_hex_digit = [], False
    for byte in data:
        char = chr(byte)
        if byte == 0:
            out.append("\\0")
            escape_hex_digit = True
        elif byte < 0x20 or byte >= 0x7f or char in '"\\;,=':
            out.append(f"\\x{byte:x}")
            escape_hex_digit = True
        elif escape_hex_digit and char in "0123456789abcdefABCDEF":
            out.append(f"\\x{byte:x}")
        else:
            out.append(char)
            escape_hex_digit = False
    return "@ByteArray(" + "".join(out) + ")"


def write_pvs(path, sr_path, layout, *, scale=None, marker_options=None):
    """Writes a PulseView 0.4 session setup: the session file ``sr_path`` as device (None:
    no device, for ``pulseview -s``), the decoder stack latscope_marker -> latscope_latency
    with its channels assigned by signal name. PulseView loads ``X.pvs`` by itself when it
    opens ``X.sr``. ``scale``: seconds per pixel of the initial view. ``marker_options``:
    latscope_marker options {id: int}."""
    lines = ["[General]", "decode_signals=1", "generated_signals=0", "meta_objs=0", "views=1"]
    if sr_path is not None:
        lines += ["device_type=sessionfile", "", "[device]",
                  f"filename={Path(sr_path).resolve()}"]
    lines += ["", "[decode_signal0]", "name=latscope", "enabled=true", "decoders=2"]
    options = dict(marker_options or {})
    for index, decoder in enumerate((MARKER_DECODER, LATENCY_DECODER)):
        mine = options if decoder == MARKER_DECODER else {}
        lines += [f"decoder{index}\\id={decoder}", f"decoder{index}\\visible=true",
                  f"decoder{index}\\options={len(mine)}"]
        for n, (name, value) in enumerate(sorted(mine.items())):
            lines += [f"decoder{index}\\option{n}\\name={name}",
                      f"decoder{index}\\option{n}\\type=x",
                      f"decoder{index}\\option{n}\\value="
                      + _ini_bytes(int(value).to_bytes(8, "little", signed=True))]
    channels = layout.decoder_channels()
    lines.append(f"channels={len(channels)}")
    for index, (_, signal) in enumerate(channels):
        lines += [f"channel{index}\\name={signal}",
                  f"channel{index}\\initial_pin_state=2",     # SRD_INITIAL_PIN_SAME_AS_SAMPLE0
                  f"channel{index}\\assigned_signal_name={signal}"]
    lines += ["", "[view0]"]
    if scale:
        lines.append(f"scale={scale!r}")
    lines.append("")
    Path(path).write_text("\n".join(lines))


def vcd_timescale(sample_hz):
    """The VCD timescale of one sample (one stamp unit: a capture-clock cycle, or half of one
    with DDR inputs): the period as a whole number of the
    largest unit that holds it exactly (``10 ns`` at 100 MHz, ``20 ns`` at 50 MHz), else in
    femtoseconds, rounded (``20833333 fs`` at 48 MHz). The VCD standard only names 1, 10
    and 100; libsigrok (and GTKWave) read any number, and sigrok makes one sample per unit,
    so one sample is one stamp unit either way."""
    if sample_hz <= 0:
        raise ExportError(f"sample rate {sample_hz} Hz")
    for unit, per_second in (("s", 1), ("ms", 10**3), ("us", 10**6), ("ns", 10**9),
                             ("ps", 10**12), ("fs", 10**15)):
        if per_second % sample_hz == 0:
            return f"{per_second // sample_hz} {unit}"
    return f"{max(1, round(10**15 / sample_hz))} fs"


class VcdWriter:
    """Writes changes as a VCD, one 1-bit wire per channel. ``stream``: a text stream.
    The time unit is one stamp unit (:func:`vcd_timescale`); stamp ``c`` is at ``#(c - origin)``."""

    def __init__(self, stream, layout, sample_hz, origin, *, comment=""):
        self.stream = stream
        self.layout = layout
        self.origin = origin
        self.timescale = vcd_timescale(sample_hz)
        self.ids = [_vcd_id(n) for n in range(len(layout.names))]
        self.word = None
        self.time = None
        self.comment = comment

    def header(self, initial=0):
        out = [f"$comment {self.comment} $end"] if self.comment else []
        out += [f"$timescale {self.timescale} $end", "$scope module latscope $end"]
        out += [f"$var wire 1 {ident} {name} $end"
                for ident, name in zip(self.ids, self.layout.names)]
        out += ["$upscope $end", "$enddefinitions $end", "#0", "$dumpvars"]
        out += [f"{(initial >> n) & 1}{ident}" for n, ident in enumerate(self.ids)]
        out += ["$end", ""]
        self.stream.write("\n".join(out))
        self.word, self.time = initial, 0

    def changes(self, changes):
        out = []
        for stamp, word in zip(changes.stamps.tolist(), changes.words.tolist()):
            diff = word ^ self.word
            if not diff:
                continue
            time = stamp - self.origin
            out.append(f"#{time}")
            bit = 0
            while diff:
                if diff & 1:
                    out.append(f"{(word >> bit) & 1}{self.ids[bit]}")
                diff >>= 1
                bit += 1
            self.word, self.time = word, time
        if out:
            out.append("")
            self.stream.write("\n".join(out))

    def until(self, stamp):
        """A timestamp for cycle ``stamp`` with no change: readers show the levels up to
        there (sigrok fills samples only up to the last timestamp it read)."""
        time = stamp - self.origin
        if self.time is None or time > self.time:
            self.stream.write(f"#{time}\n")
            self.time = time


def _vcd_id(n):
    """Short VCD identifier from the printable characters ``!`` .. ``~``."""
    chars = ""
    n += 1
    while n:
        n, digit = divmod(n - 1, 94)
        chars = chr(33 + digit) + chars
    return chars


def export_capture(capture, *, sr=None, vcd=None, pvs=True, start=None, stop=None):
    """Exports a loaded capture (:class:`latscope.capture_file.Capture`) to a session file
    ``sr`` (and its ``.pvs`` beside it unless ``pvs`` is False) and/or a VCD file ``vcd``.
    ``start``/``stop``: only the events of cycles ``[start, stop)`` (levels before the
    first of them are taken as low). Returns :class:`ExportInfo`."""
    stamp_hz = int(capture.stamp_hz or 0)        # one sample per stamp unit
    if stamp_hz <= 0:
        raise ExportError(f"{capture.path}: metadata has no capture clock (identity.clock_hz)")
    events = capture.events
    if start is not None or stop is not None:
        stamp = events.stamp.astype(np.int64)
        inside = np.ones(len(events), bool)
        if start is not None:
            inside &= stamp >= start
        if stop is not None:
            inside &= stamp < stop
        events = events[inside]
    layout = Layout.for_capture(capture.metadata)
    marker_stamps = events.stamp[np.isin(events.source, (Source.MARKER, Source.BUS))]
    if len(np.unique(marker_stamps)) < len(marker_stamps):
        layout = Layout(layout.edge_count, second_lane=True)
    tracker = LevelTracker(layout)
    changes = tracker.feed(events, final=True)
    initial = tracker.initial
    if len(events):
        first = int(events.stamp.min())
        origin = first - MARGIN if start is None else min(start, first - MARGIN)
        tail = MARGIN + math.ceil(TAIL_SECONDS * stamp_hz)
        end = int(events.stamp.max()) + tail if stop is None else stop
    else:
        origin = start or 0
        end = stop if stop is not None else origin + 2 * MARGIN
    samples = max(end - origin, 1)
    info = ExportInfo(layout, origin, samples, stamp_hz, len(changes), tracker.markers_dropped,
                      tracker.edges_stretched, tracker.edges_dropped)
    if sr is not None:
        write_sr(sr, layout.names, changes, stamp_hz, origin=origin, samples=samples,
                 initial=initial)
        info.files.append(str(sr))
        if pvs:
            pvs_path = Path(sr).with_suffix(".pvs")
            # Fit the whole export into about 1500 pixels.
            write_pvs(pvs_path, sr, layout, scale=samples / stamp_hz / 1500,
                      marker_options={"sample_delay": 0})
            info.files.append(str(pvs_path))
    if vcd is not None:
        with open(vcd, "w") as stream:
            writer = VcdWriter(stream, layout, stamp_hz, origin,
                               comment=f"latscope export of {Path(capture.path).name}: "
                                       f"sample 0 = cycle {origin}, {stamp_hz} samples/s")
            writer.header(initial)
            writer.changes(changes)
            writer.until(origin + samples - 1)
        info.files.append(str(vcd))
    return info

