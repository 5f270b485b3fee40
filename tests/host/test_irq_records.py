"""The IRQ record of protocol version 3 (docs/protocol.md): its value is an IrqValue, the edge's
level and the delay of the trigger firing it belongs to; version 2 streams, whose IRQ value is
the level alone, still read; and a periodic edge's version 3 value is its level, as before."""

import numpy as np
import pytest

from latscope.events import Events
from latscope.link.parser import StreamParser
from latscope_defs.protocol import (
    IRQ_DELAY_BITS,
    IrqValue,
    Source,
    StreamEncoder,
    irq_delay,
    irq_level,
    irq_triggered,
    irq_value,
    value_width,
)

MAX_DELAY = (1 << IRQ_DELAY_BITS) - 1


def round_trip(events, version):
    encoder = StreamEncoder(version=version)
    for stamp, source, value in events:
        encoder.event(stamp, source, value)
    encoder.flush()
    parser = StreamParser(version=version)
    got = Events.concatenate([parser.feed(encoder.take()), parser.finish()])
    assert parser.stats.segments_bad == parser.stats.holes == 0
    return got


def test_triggered_edges_carry_their_delay_through_the_stream():
    firings = [(0, 0), (1, 1), (MAX_DELAY, 2), (12345, 3)]
    events = []
    for delay, n in firings:
        events += [
            (100_000 * n + 10, int(Source.MARKER), 0x0700),
            (100_000 * n + 18 + delay, int(Source.IRQ), irq_value(1, 1, delay)),
            (100_000 * n + 21 + delay, int(Source.IRQ), irq_value(0, 1, delay)),
        ]
    got = round_trip(events, 3)
    assert list(got) == events
    irq = got.of(Source.IRQ)
    assert irq_delay(irq.value).tolist() == [delay for delay, _ in firings for _ in (1, 0)]
    assert irq_level(irq.value).tolist() == [1, 0] * len(firings)
    assert irq_triggered(irq.value).tolist() == [1] * 2 * len(firings)


def test_periodic_edges_are_their_level_in_every_version():
    """The periodic generator's edges: untriggered, delay 0, so the value is the level, in
    version 3 as in version 2 (code that looks for ``value == 1`` keeps working for them)."""
    events = [(100 * n, int(Source.IRQ), n % 2) for n in range(1, 9)]
    assert irq_value(1) == 1 and irq_value(0) == 0
    for version in (2, 3):
        got = round_trip(events, version)
        assert list(got) == events
        assert irq_delay(got.value).tolist() == [0] * 8


def test_version_2_streams_still_read_and_differ_from_version_3():
    events = [(100, int(Source.IRQ), 1), (140, int(Source.IRQ), 0)]
    encoder = StreamEncoder(version=2)
    for event in events:
        encoder.event(*event)
    encoder.flush()
    version_2 = encoder.take()
    assert value_width(Source.IRQ, version=2) == 1
    assert value_width(Source.IRQ) == IrqValue.as_shape().size == 2 + IRQ_DELAY_BITS
    assert list(round_trip(events, 2)) == events
    # The same edges in version 3: the value is wider, the records longer.
    encoder = StreamEncoder(version=3)
    for event in events:
        encoder.event(*event)
    encoder.flush()
    assert len(encoder.take()) > len(version_2)
    with pytest.raises(ValueError, match="wider than 1 bits"):
        StreamEncoder(version=2).event(100, Source.IRQ, irq_value(1, 1, 3))


def test_the_fields_decode_numpy_arrays():
    values = np.array(
        [irq_value(1, 1, 7), irq_value(0, 0, 0), irq_value(1, 1, MAX_DELAY)], np.uint64
    )
    assert irq_level(values).tolist() == [1, 0, 1]
    assert irq_triggered(values).tolist() == [1, 0, 1]
    assert irq_delay(values).tolist() == [7, 0, MAX_DELAY]
