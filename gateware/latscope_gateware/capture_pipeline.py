"""Events in, protocol bytes out: the time-stamper, FIFO, encoder and serializer in a row.

The time-stamper and the FIFO's write side run in the capture clock domain, everything from
the FIFO's read side on in the link domain (``sync``)."""

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

    Capture domain (``capture_domain``; ``"sync"`` for a single-clock build): ports named
    after the sources (``marker``, ``irq``, ...) take the events, as in
    :class:`EventCapture`, while ``enable`` is high (and ``<source>_lost`` the losses of the
    front ends named in ``front_end_losses``); ``clear`` (one cycle) zeroes the loss
    counts; ``now`` is the stamp counter.

    Link domain (``sync``): ``start`` (one cycle) makes the
    next event open a segment with a SYNC; ``stopping`` (the capture is stopped) makes the
    encoder seal its open segment as soon as the FIFO is empty. ``replies`` carries REPLY
    records that go out between event records, ahead of them. ``events``, ``lost``,
    ``fifo_max``: see :class:`.event_capture.WriteStatus` (cleared by ``clear``, a snapshot
    a few cycles old).

    A START reaches the capture domain through a synchronizer (see the appliance), so
    ``start`` comes before the ``clear`` and ``enable`` it causes, and the first event of a
    capture finds the encoder started.

    ``word_crc``: the serializer's CRC unit in word form (:class:`.records.WordCrc32`, for
    `verilog_export --word-xor`).
    """

    def __init__(
        self,
        sources,
        *,
        front_end_losses=None,
        marker_width=16,
        fifo_depth=512,
        flush_after=1 << 16,
        stamp_shift=0,
        capture_domain="sync",
        word_crc=False,
        short_records=True,
    ):
        self._word_crc = word_crc
        self._capture = EventCapture(
            sources,
            front_end_losses=front_end_losses,
            fifo_depth=fifo_depth,
            stamp_shift=stamp_shift,
            write_domain=capture_domain,
            read_domain="sync",
        )
        self._encoder = EventEncoder(
            self._capture.layout,
            sources,
            marker_width=marker_width,
            flush_after=flush_after,
            short_records=short_records,
        )
        members = {
            "enable": In(1),
            "clear": In(1),
            "start": In(1),
            "stopping": In(1),
            "replies": In(stream.Signature(record_layout)),
            "bytes": Out(stream.Signature(8)),
            "now": Out(self._capture.now.shape()),
            "events": Out(32),
            "lost": Out(32),
            "fifo_max": Out(self._capture.fifo_max.shape()),
        }
        members |= self._capture.event_ports()
        if stamp_shift:
            members["phase"] = In(self._capture.phase.shape())  # see EventCapture
        self._sources = dict(sources)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        m.submodules.capture = capture = self._capture
        m.submodules.encoder = encoder = self._encoder
        m.submodules.arbiter = arbiter = RecordArbiter()
        m.submodules.serializer = serializer = RecordSerializer(word_crc=self._word_crc)
        # Register slices between the record stages, so that no combinational path runs from
        # the encoder's delta and SYNC decision through the arbiter into the serializer. (The
        # FIFO's entries come from its own output register.) The serializer takes a record
        # at most every third cycle (and the link is far slower), so the slices need only
        # half rate: one payload register each, no skid.
        m.submodules.encoded = encoded = StreamRegister(record_layout, full_rate=False)
        m.submodules.merged = merged = StreamRegister(record_layout, full_rate=False)

        for source in self._sources:
            name = source.name.lower()
            connect(m, flipped(getattr(self, name)), getattr(capture, name))
        for name in self._capture.loss_port_names():
            m.d.comb += getattr(capture, name).eq(getattr(self, name))
        if "phase" in self.signature.members:
            m.d.comb += capture.phase.eq(self.phase)
        connect(m, capture.entries, encoder.entries)
        connect(m, flipped(self.replies), arbiter.priority)
        connect(m, encoder.records, encoded.i)
        connect(m, encoded.o, arbiter.other)
        connect(m, arbiter.records, merged.i)
        connect(m, merged.o, serializer.records)
        connect(m, serializer.bytes, flipped(self.bytes))

        # `start` fans out to much of the encoder and serializer: it goes to them from a
        # flip-flop of its own, a cycle later. The encoder's `stopping` (it flushes the open
        # segment at once) is registered likewise.
        start = Signal()
        stopping = Signal()
        m.d.sync += [start.eq(self.start), stopping.eq(self.stopping)]
        m.d.comb += [
            capture.enable.eq(self.enable),
            capture.clear.eq(self.clear),
            encoder.start.eq(start),
            encoder.stopping.eq(stopping),
            serializer.clear_crc.eq(start),
            self.now.eq(capture.now),
            self.events.eq(capture.events),
            self.lost.eq(capture.lost),
            self.fifo_max.eq(capture.fifo_max),
        ]
        return m
