"""A capture's stream of random markers, as the device encodes it (the SPI link's tests)."""

import random

from latscope_defs.protocol import Source, StreamEncoder


def marker_capture(events, clock_hz, seed, most_apart=200):
    """The stream bytes of ``events`` 16-bit markers 1 to ``most_apart`` cycles apart, in
    segments closed at 1 ms as the device does at ``clock_hz``, and the events themselves
    ((stamp, source, value) triples)."""
    rng = random.Random(seed)
    encoder = StreamEncoder(flush_after=clock_hz // 1000)
    encoder.start()
    stamp, sent = 1000, []
    for _ in range(events):
        stamp += rng.randint(1, most_apart)
        sent.append((stamp, Source.MARKER, rng.getrandbits(16)))
        encoder.event(*sent[-1])
    encoder.flush()
    return encoder.take(), sent
