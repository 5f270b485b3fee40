"""Events in, protocol bytes out: the time-stamper, FIFO, encoder and serializer in a row."""

from amaranth.hdl import *
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from .encoder import EventEncoder
from .event_capture import EventCapture
from .records import RecordArbiter, RecordSerializer, record_layout
from .stream_register import StreamRegister

__all__ = ["CapturePipeline"]


class CapturePipeline(wiring.Component):
    """Stamps the events of ``sources`` and streams them as protocol bytes.

    ``start`` (one cycle) clears the loss and status counters and makes the next event open a
    segment with a SYNC; events are taken while ``capturing`` is high. ``replies`` carries
    REPLY records that go out between event records, ahead of them.

    Ports named after the sources (``marker``, ``irq``, ...) take the events, as in
    :class:`EventCapture`.
    """

    def __init__(self, sources, *, marker_width=16, fifo_depth=512, flush_after=1 << 16,
                 stamp_shift=0):
        self._capture = EventCapture(sources, fifo_depth=fifo_depth, stamp_shift=stamp_shift)
        self._encoder = EventEncoder(self._capture.layout, sources, marker_width=marker_width,
                                     flush_after=flush_after)
        members = {
            "start": In(1),
            "capturing": In(1),
            "replies": In(stream.Signature(record_layout)),
            "bytes": Out(stream.Signature(8)),
            "now": Out(self._capture.now.shape()),
            "events": Out(32),
            "lost": Out(32),
            "fifo_max": Out(self._capture.fifo_max.shape()),
        }
        for source, width in sources.items():
            members[source.name.lower()] = In(stream.Signature(width, always_ready=True))
        if stamp_shift:
            members["half"] = In(len(sources))     # see EventCapture
        self._sources = dict(sources)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        m.submodules.capture = capture = self._capture
        m.submodules.encoder = encoder = self._encoder
        m.submodules.arbiter = arbiter = RecordArbiter()
        m.submodules.serializer = serializer = RecordSerializer()
        # Register slices between the record stages, so that no combinational path runs from
        # the encoder's delta and SYNC decision through the arbiter into the serializer.
        # The FIFO's block-RAM output is slow (about 6 ns on ECP5): register it, too.
        m.submodules.queued = queued = StreamRegister(self._capture.layout)
        m.submodules.encoded = encoded = StreamRegister(record_layout)
        m.submodules.merged = merged = StreamRegister(record_layout)

        for source in self._sources:
            name = source.name.lower()
            connect(m, flipped(getattr(self, name)), getattr(capture, name))
        if "half" in self.signature.members:
            m.d.comb += capture.half.eq(self.half)
        connect(m, capture.entries, queued.i)
        connect(m, queued.o, encoder.entries)
        connect(m, flipped(self.replies), arbiter.priority)
        connect(m, encoder.records, encoded.i)
        connect(m, encoded.o, arbiter.other)
        connect(m, arbiter.records, merged.i)
        connect(m, merged.o, serializer.records)
        connect(m, serializer.bytes, flipped(self.bytes))

        # `start` fans out to much of the capture, encoder and serializer: it goes to them
        # from a flip-flop of its own, a cycle later (an event taken after a start reaches the
        # encoder several cycles after it, so it still finds the encoder started). The
        # encoder's `stopping` (it flushes the open segment at once) is registered likewise.
        start = Signal()
        stopping = Signal()
        m.d.sync += [start.eq(self.start), stopping.eq(~self.capturing)]
        m.d.comb += [
            capture.enable.eq(self.capturing),
            capture.clear.eq(start),
            encoder.start.eq(start),
            encoder.stopping.eq(stopping),
            serializer.clear_crc.eq(start),
            self.now.eq(capture.now),
            self.events.eq(capture.events),
            self.lost.eq(capture.lost),
            self.fifo_max.eq(capture.fifo_max),
        ]
        return m
