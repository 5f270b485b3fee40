"""VCD (value change dump) of logic signals: one 1-bit wire per channel, one time unit per
stamp unit; the export format ``vcd`` (:class:`VcdWriter`), written to a file by the export
(:mod:`latscope.export.files`) or piece by piece to a stream by the live view
(:mod:`latscope.export.live`).
"""

import os

from .writer import ExportWriter, FormatError

__all__ = ["VcdError", "VcdWriter", "vcd_timescale"]


class VcdError(FormatError):
    """A sample rate no VCD timescale can express."""


def vcd_timescale(sample_hz):
    """The VCD timescale of one sample (one stamp unit: a capture-clock cycle, or half of one
    with DDR inputs): the period as a whole number of the
    largest unit that holds it exactly (``10 ns`` at 100 MHz, ``20 ns`` at 50 MHz), else in
    femtoseconds, rounded (``20833333 fs`` at 48 MHz). The VCD standard only names 1, 10
    and 100; libsigrok (and GTKWave) read any number, and sigrok makes one sample per unit,
    so one sample is one stamp unit either way."""
    if sample_hz <= 0:
        raise VcdError(f"sample rate {sample_hz} Hz")
    for unit, per_second in (
        ("s", 1),
        ("ms", 10**3),
        ("us", 10**6),
        ("ns", 10**9),
        ("ps", 10**12),
        ("fs", 10**15),
    ):
        if per_second % sample_hz == 0:
            return f"{per_second // sample_hz} {unit}"
    return f"{max(1, round(10**15 / sample_hz))} fs"


class VcdWriter(ExportWriter):
    """Writes changes as a VCD, one 1-bit wire per channel. ``target``: a path (the file is
    made by :meth:`begin` and closed by :meth:`finish`) or a text stream (written to and left
    open: the live stream). The time unit is one stamp unit (:func:`vcd_timescale`); stamp
    ``c`` is at ``#(c - origin)``; ``origin`` may be set after :meth:`begin`, before the
    first change (the live stream learns it from its first event)."""

    name = "vcd"
    suffix = ".vcd"
    help = "VCD file to write"
    sigrok_input = "vcd"

    def __init__(self, target):
        named = isinstance(target, (str, os.PathLike))
        super().__init__(target if named else None)
        self.stream = None if named else target
        self.origin = None
        self.word = None
        self.time = None

    @property
    def files(self):
        return [] if self.path is None else [str(self.path)]

    def begin(self, signals):
        """Writes the header: the signals and their levels at time 0 (``signals.initial``)."""
        self.layout = signals.layout
        self.origin = signals.origin
        self.timescale = vcd_timescale(signals.stamp_hz)
        self.ids = [_vcd_id(n) for n in range(len(self.layout.names))]
        if self.stream is None:
            self.stream = open(self.path, "w")
        out = [f"$comment {signals.comment} $end"] if signals.comment else []
        out += [f"$timescale {self.timescale} $end", "$scope module latscope $end"]
        out += [
            f"$var wire 1 {ident} {name} $end" for ident, name in zip(self.ids, self.layout.names)
        ]
        out += ["$upscope $end", "$enddefinitions $end", "#0", "$dumpvars"]
        out += [f"{(signals.initial >> n) & 1}{ident}" for n, ident in enumerate(self.ids)]
        out += ["$end", ""]
        self.stream.write("\n".join(out))
        self.word, self.time = signals.initial, 0

    def add(self, changes):
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

    def finish(self, stop, view=None):
        """A timestamp for the last cycle before ``stop`` even without a change there:
        readers show the levels up to it (sigrok fills samples only up to the last
        timestamp it read); closes the file it made."""
        time = stop - 1 - self.origin
        if self.time is None or time > self.time:
            self.stream.write(f"#{time}\n")
            self.time = time
        self.close()

    def close(self):
        if self.path is not None and self.stream is not None:
            self.stream.close()


def _vcd_id(n):
    """Short VCD identifier from the printable characters ``!`` .. ``~``."""
    chars = ""
    n += 1
    while n:
        n, digit = divmod(n - 1, 94)
        chars = chr(33 + digit) + chars
    return chars
