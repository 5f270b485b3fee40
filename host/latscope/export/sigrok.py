"""sigrok session files (srzip, ``.sr``) and the PulseView setup (``.pvs``) that attaches
the latscope decoders to them; the export format ``sr`` (:class:`SigrokWriter`: both).

Everything is streamed: :class:`SrArchive` generates one block of samples at a time from the
change list, straight into the compressed zip entries, whatever the gaps between events.
"""

import contextlib
import zipfile
from fractions import Fraction
from pathlib import Path

import numpy as np

from latscope_defs.channels import LATENCY_DECODER, MARKER_DECODER

from .levels import Changes
from .writer import ExportWriter, writing

__all__ = [
    "SigrokWriter",
    "SrArchive",
    "write_sr",
    "write_pvs",
    "samplerate_text",
    "scrolled_past",
    "condition_options",
]

#: Samples generated at a time when writing a session file.
BLOCK_SAMPLES = 1 << 20
#: Samples per zip entry of a session file (entries stay well below 4 GiB: no zip64).
ENTRY_SAMPLES = 1 << 26


def _samples(changes, initial, start, stop, unitsize):
    """Bytes of samples ``start .. stop - 1`` (``changes`` in sample numbers)."""
    first = int(np.searchsorted(changes.stamps, start, side="right"))
    last = int(np.searchsorted(changes.stamps, stop, side="left"))
    current = int(changes.words[first - 1]) if first else initial
    if first == last:  # a quiet block: one word repeated
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


class SrArchive:
    """Writes a sigrok session file from changes that come in pieces, in stamp order
    (``add``): every block of samples is written as soon as no later change can fall in
    it, so memory holds one block and the changes not yet written. ``close(samples)``
    writes the rest, up to ``samples`` samples. The file is :func:`write_sr`'s."""

    def __init__(self, path, names, samplerate, *, origin, initial=0):
        self.origin = origin
        self.initial = initial
        self.unitsize = (len(names) + 7) // 8
        self.written = 0  # samples written
        self._stamps, self._words = np.empty(0, np.int64), np.empty(0, np.uint64)
        self._entry = None
        self._archive = None
        metadata = [
            "[global]",
            "sigrok version=0.5.2",
            "",
            "[device 1]",
            "capturefile=logic-1",
            f"total probes={len(names)}",
            f"samplerate={samplerate_text(samplerate)}",
            "total analog=0",
        ]
        metadata += [f"probe{n + 1}={name}" for n, name in enumerate(names)]
        metadata += [f"unitsize={self.unitsize}", ""]
        self._archive = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1)
        try:
            self._archive.writestr("version", "2")
            self._archive.writestr("metadata", "\n".join(metadata))
        except BaseException:
            self.abandon()
            raise

    def add(self, changes):
        """Adds changes later than every change added before."""
        if len(changes):
            self._stamps = np.concatenate([self._stamps, changes.stamps - self.origin])
            self._words = np.concatenate([self._words, changes.words])
            # Later changes come after the last one: the samples up to it are final.
            self._write_until(int(self._stamps[-1]) + 1, final=False)

    def close(self, samples):
        try:
            self._write_until(samples, final=True)
            if self._entry is not None:
                self._entry.close()
        finally:
            self._archive.close()

    def abandon(self):
        """Closes the file if :meth:`close` did not (after an error; a second error while
        closing is the same error and is not raised again)."""
        with contextlib.suppress(OSError):
            if self._entry is not None and not self._entry.closed:
                self._entry.close()
        with contextlib.suppress(OSError):
            if self._archive.fp is not None:
                self._archive.close()

    def _write_until(self, stop, final):
        """Writes the samples before ``stop`` (in whole blocks unless ``final``)."""
        while self.written < stop:
            block = min(BLOCK_SAMPLES, ENTRY_SAMPLES - self.written % ENTRY_SAMPLES)
            end = self.written + block
            if end > stop:
                if not final:
                    return
                end = stop
            if self.written % ENTRY_SAMPLES == 0:
                if self._entry is not None:
                    self._entry.close()
                self._entry = self._archive.open(
                    f"logic-1-{self.written // ENTRY_SAMPLES + 1}", "w"
                )
            self._entry.write(
                _samples(
                    Changes(self._stamps, self._words),
                    self.initial,
                    self.written,
                    end,
                    self.unitsize,
                )
            )
            self.written = end
            # Keep the changes from the last one at or before the next sample on.
            keep = max(int(np.searchsorted(self._stamps, end, side="right")) - 1, 0)
            if keep:
                self.initial = int(self._words[keep - 1])
                self._stamps, self._words = self._stamps[keep:], self._words[keep:]


def write_sr(path, names, changes, samplerate, *, origin, samples, initial=0):
    """Writes a sigrok session file (srzip, version 2): logic channels ``names`` (bit n of
    a sample word is channel n), ``samples`` samples, sample 0 at ``origin`` (in the unit
    of ``changes.stamps``: cycles for a latscope export). The samples are generated block
    by block straight into the compressed zip entries (``logic-1-1``, ``logic-1-2``, ...),
    so memory stays bounded however long the quiet stretches are (they compress about
    1000:1; about 100 million samples a second). :class:`SrArchive` does it."""
    writer = SrArchive(path, names, samplerate, origin=origin, initial=initial)
    writer.add(changes)
    writer.close(samples)


class SigrokWriter(ExportWriter):
    """The export format ``sr``: a sigrok session file and, unless ``pvs`` is False, its
    PulseView setup beside it (``X.pvs`` for ``X.sr``: PulseView loads it with the session,
    the latscope decoders attached, sample delay 0, the view of :meth:`finish`)."""

    name = "sr"
    suffix = ".sr"
    help = "sigrok session file to write"
    switches = {"pvs": "PulseView setup beside OUT.sr"}

    def __init__(self, path, *, pvs=True):
        super().__init__(path)
        self.pvs = Path(path).with_suffix(".pvs") if pvs else None
        self.archive = None

    @property
    def files(self):
        return [str(self.path)] + ([str(self.pvs)] if self.pvs else [])

    def begin(self, signals):
        self.layout = signals.layout
        self.origin = signals.origin
        self.conditions = signals.conditions
        self.archive = SrArchive(
            self.path,
            signals.layout.names,
            signals.stamp_hz,
            origin=signals.origin,
            initial=signals.initial,
        )

    def add(self, changes):
        self.archive.add(changes)

    def finish(self, stop, view=None):
        self.archive.close(stop - self.origin)
        if self.pvs:
            with writing(self.pvs):
                write_pvs(
                    self.pvs,
                    self.path,
                    self.layout,
                    **(view or {}),
                    marker_options={"sample_delay": 0},
                    latency_options=condition_options(self.conditions),
                )

    def close(self):
        if self.archive is not None:
            self.archive.abandon()


def condition_options(conditions):
    """latscope_latency's options ``load``, ``load_param`` and ``cache`` for a capture's
    :class:`~latscope.capture.conditions.Conditions` (strings, as the decoder takes them;
    no ``load_param`` for the profile's default)."""
    options = {"load": conditions.load}
    if conditions.load_param is not None:
        options["load_param"] = str(conditions.load_param)
    options["cache"] = conditions.cache
    return options


def _ini_bytes(data):
    """A QByteArray value in a QSettings INI file (Qt's escaping)."""
    out, escape_hex_digit = [], False
    for byte in data:
        char = chr(byte)
        if byte == 0:
            out.append("\\0")
            escape_hex_digit = True
        elif byte < 0x20 or byte >= 0x7F or char in '"\\;,=':
            out.append(f"\\x{byte:x}")
            escape_hex_digit = True
        elif escape_hex_digit and char in "0123456789abcdefABCDEF":
            out.append(f"\\x{byte:x}")
        else:
            out.append(char)
            escape_hex_digit = False
    return "@ByteArray(" + "".join(out) + ")"


def timestamp_archive(seconds):
    """A time as PulseView 0.4 stores one in a setup (``pv::util::Timestamp``, a Boost
    cpp_dec_float<24> in a Boost text archive): six base-10^8 limbs, most significant first,
    the decimal exponent of the first (a multiple of 8), sign, class (0: finite) and the
    limb count; ``0`` with exponent 0 for zero. Exact to the nanosecond."""
    value = Fraction(round(Fraction(seconds) * 10**9), 10**9)
    negative, value = value < 0, abs(value)
    limbs, exponent = [0] * 6, 0
    if value:
        exponent = 0
        while value >= 10 ** (exponent + 8):
            exponent += 8
        while value < 10**exponent:
            exponent -= 8
        rest = value
        for index in range(6):
            scale = Fraction(10) ** (exponent - 8 * index)
            limbs[index] = int(rest / scale)
            rest -= limbs[index] * scale
    fields = [0, 0, 0, 0] + limbs + [exponent, int(negative), 0, 6]
    return "22 serialization::archive 18 " + " ".join(map(str, fields))


#: Height of a logic trace in PulseView 0.4.2 with its default settings, in pixels: the
#: trace (View_DefaultLogicHeight, twice the font height) and half a font height above and
#: below it (pv/views/trace/logicsignal.cpp), for the 17-pixel default font of Debian's Qt
#: (measured on its screenshots under Xvfb: 50 pixels from one label to the next).
PULSEVIEW_TRACE_PITCH = 2 * 17 + 2 * (17 // 2)


def scrolled_past(layout):
    """Signals a .pvs scrolls past at first: the marker data bits, the first traces
    (the decoders show their values; scrolling up shows them)."""
    return [name for name in layout.names if name.startswith("D") and name[1:].isdigit()]


def _gvariant(value):
    """A decoder option's type and value as PulseView 0.4 stores them in a setup
    (``GlobalSettings::store_gvariant``: the GVariant's type string and its serialised
    data): an int as ``x`` (8 bytes, little-endian), a string as ``s`` (UTF-8, then a 0)."""
    if isinstance(value, str):
        return "s", value.encode() + b"\0"
    return "x", int(value).to_bytes(8, "little", signed=True)


def write_pvs(
    path, sr_path, layout, *, scale=None, offset=None, marker_options=None, latency_options=None
):
    """Writes a PulseView 0.4 session setup: the session file ``sr_path`` as device (None:
    no device, for ``pulseview -s``), the decoder stack latscope_marker -> latscope_latency
    with its channels assigned by signal name. PulseView loads ``X.pvs`` by itself when it
    opens ``X.sr``. ``scale``: seconds per pixel of the initial view, ``offset``: seconds
    from sample 0 at its left edge. ``marker_options``, ``latency_options``: the options of
    latscope_marker and latscope_latency, {id: int or str}.

    The view starts scrolled down past the marker data channels D0..D15 (scrolling up
    shows them), to STROBE: PulseView 0.4 puts the decoder rows below all logic traces, and
    with the 16 data bits on screen they sit below a 900-pixel-high window. (Hiding the bits
    instead, ``enabled=false``, leaves PulseView 0.4.2's scroll range short: the first
    traces after them, STROBE and IRQ, end up above the view, out of reach until the user
    scrolls.) The offset is in pixels, for PulseView's default font and trace height."""
    lines = ["[General]", "decode_signals=1", "generated_signals=0", "meta_objs=0", "views=1"]
    if sr_path is not None:
        lines += ["device_type=sessionfile", "", "[device]", f"filename={Path(sr_path).resolve()}"]
    lines += ["", "[decode_signal0]", "name=latscope", "enabled=true", "decoders=2"]
    stack = ((MARKER_DECODER, marker_options), (LATENCY_DECODER, latency_options))
    for index, (decoder, options) in enumerate(stack):
        mine = dict(options or {})
        lines += [
            f"decoder{index}\\id={decoder}",
            f"decoder{index}\\visible=true",
            f"decoder{index}\\options={len(mine)}",
        ]
        for n, (name, value) in enumerate(sorted(mine.items())):
            kind, data = _gvariant(value)
            lines += [
                f"decoder{index}\\option{n}\\name={name}",
                f"decoder{index}\\option{n}\\type={kind}",
                f"decoder{index}\\option{n}\\value=" + _ini_bytes(data),
            ]
    channels = layout.decoder_channels()
    lines.append(f"channels={len(channels)}")
    for index, (_, signal) in enumerate(channels):
        lines += [
            f"channel{index}\\name={signal}",
            f"channel{index}\\initial_pin_state=2",  # SRD_INITIAL_PIN_SAME_AS_SAMPLE0
            f"channel{index}\\assigned_signal_name={signal}",
        ]
    lines += ["", "[view0]"]
    if scale:
        lines.append(f"scale={scale!r}")
    if offset is not None:
        lines.append(f"offset={timestamp_archive(offset)}")
    lines.append(f"v_offset={len(scrolled_past(layout)) * PULSEVIEW_TRACE_PITCH}")
    lines.append("")
    Path(path).write_text("\n".join(lines))
