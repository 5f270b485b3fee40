"""VCD (value change dump) of logic signals: one 1-bit wire per channel, one time unit per
stamp unit. The export (:mod:`latscope.export.files`) writes a whole file, the live stream
(:mod:`latscope.export.live`) writes it piece by piece.
"""

__all__ = ["VcdError", "VcdWriter", "vcd_timescale"]


class VcdError(ValueError):
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
