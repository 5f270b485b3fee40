"""SUMP / Openbench Logic Sniffer device mode: a small logic analyzer on the appliance's pins.

Stock sigrok-cli and PulseView (driver ``ols``) talk to it over the appliance's serial link;
``docs/protocol.md`` ("SUMP device mode") describes the subset, ``latscope_defs.protocol`` holds
its opcodes and metadata keys.
"""

from amaranth.hdl import *
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out, connect, flipped

from latscope_defs.protocol import SUMP_GROUP_BITS, SUMP_MAX_GROUPS, SumpCommand, sump_metadata

from .sump_capture import DIVIDER_FRACTION_BITS, SumpRecorder, SumpSampler, SumpTrigger
from .sump_commands import SumpCommandParser, SumpConfiguration, SumpReplies
from .sump_readback import SumpReadback

__all__ = ["SumpEngine", "DIVIDER_FRACTION_BITS"]


class SumpEngine(wiring.Component):
    """Parses SUMP commands, captures ``sample`` into a block RAM and reads it back.

    Parameters
    ----------
    channels : int, <= 32
        Width of ``sample``; the metadata advertises this many probes.
    depth : int, power of two
        Entries of the sample memory (samples, or RLE entries).
    clock_hz : int
        The capture clock; the maximum sample rate, and the clock the divider is converted to.

    Ports
    -----
    rx : In(stream.Signature(8, always_ready=True))
        Command bytes from the host.
    sample : In(channels)
        The pins, already synchronised to the clock.
    tx : Out(stream.Signature(8))
        Reply and readback bytes.
    idle : Out(1)
        The parser is between commands (not inside a long command's argument bytes). It
        follows a byte one cycle late (bytes come at most one per UART frame).

    Behaviour
    ---------
    RUN arms: every sample tick writes ``sample`` (masked to the enabled channel groups) into
    a ring. Once ``read count - delay count`` entries (the part before the trigger) are in
    memory, the first sample that matches trigger stage 0 (``sample & mask == value & mask``;
    mask 0 matches at once) starts the post-trigger count (delay count entries, the trigger
    sample being the first); then the newest ``min(read count, entries written)`` entries
    (with RLE: see below) go out newest first, each as the bytes of its enabled groups, channel
    group 0 first.

    Sample ticks: the divider counts periods of ``SUMP_REFERENCE_HZ``, as sigrok computes it,
    so a tick comes every ``(divider + 1) * clock_hz / SUMP_REFERENCE_HZ`` cycles on average
    (exactly every ``divider + 1`` cycles at 100 MHz), at most one per cycle.

    RLE (flag bit 8): the top channel of the highest enabled group becomes the count flag, as
    in the original OLS; an entry with it set is a count ``n``: the value next to it in the
    readback (the older one) lasted ``n + 1`` samples. Counts saturate at what the enabled
    groups hold (a longer run is split). Pre- and post-trigger counts are in entries; the
    readback ends once its entries stand for ``read count`` samples (as sigrok's ols driver
    counts them), unless the read count is sigrok's cap, the memory size over the enabled
    groups (see :class:`.sump_readback.SumpReadback`).

    Parts: :class:`.sump_commands.SumpCommandParser` (bytes to commands),
    :class:`.sump_commands.SumpConfiguration` (the settings),
    :class:`.sump_commands.SumpReplies` (ID, METADATA), :class:`.sump_capture.SumpSampler`
    (ticks, stage 1), :class:`.sump_capture.SumpTrigger` (the capture's course),
    :class:`.sump_capture.SumpRecorder` (memory, RLE) and
    :class:`.sump_readback.SumpReadback`.
    """

    def __init__(self, *, channels, depth=512, clock_hz, name="latscope", version="1"):
        if not 1 <= channels <= SUMP_MAX_GROUPS * SUMP_GROUP_BITS:
            raise ValueError(f"channels must be 1..32, not {channels!r}")
        if depth < 4 or depth & (depth - 1):
            raise ValueError(f"depth must be a power of two >= 4, not {depth!r}")
        self.channels = channels
        self.depth = depth
        self.clock_hz = clock_hz
        #: Channel groups present; a sample is stored as that many bytes.
        self.groups = -(-channels // SUMP_GROUP_BITS)
        self.metadata_reply = sump_metadata(
            name=name,
            version=version,
            probes=channels,
            memory_bytes=depth * self.groups,
            max_rate_hz=clock_hz,
        )
        super().__init__(
            {
                "rx": In(stream.Signature(8, always_ready=True)),
                "sample": In(channels),
                "tx": Out(stream.Signature(8)),
                "idle": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        groups, depth = self.groups, self.depth
        m.submodules.parser = parser = SumpCommandParser()
        m.submodules.configuration = config = SumpConfiguration(groups)
        m.submodules.replies = replies = SumpReplies(self.metadata_reply)
        m.submodules.sampler = sampler = SumpSampler(groups, clock_hz=self.clock_hz)
        m.submodules.trigger = trigger = SumpTrigger(groups, depth)
        m.submodules.recorder = recorder = SumpRecorder(groups, depth)
        m.submodules.readback = readback = SumpReadback(groups, depth)

        connect(m, flipped(self.rx), parser.rx)
        connect(m, parser.long, config.long)
        connect(m, parser.short, replies.short)
        short = parser.short
        run = short.valid & (short.payload == SumpCommand.RUN)
        reset = short.valid & (short.payload == SumpCommand.RESET)
        m.d.comb += [
            self.idle.eq(parser.idle),
            config.run.eq(run),
            [part.settings.eq(config.settings) for part in (sampler, trigger, recorder, readback)],
            # Stage 1 (the sampler) feeds stage 2 (trigger and recorder).
            sampler.sample.eq(self.sample),
            sampler.sampling.eq(trigger.sampling),
            sampler.set_divider.eq(config.set_divider),
            trigger.sampled.eq(sampler.sampled),
            trigger.match.eq(sampler.match),
            recorder.value.eq(sampler.value),
            recorder.same.eq(sampler.same),
            # The capture's course.
            trigger.run.eq(run),
            trigger.reset.eq(reset),
            trigger.writes.eq(recorder.writes),
            trigger.filled.eq(recorder.filled),
            trigger.full.eq(recorder.full),
            recorder.run.eq(run),
            recorder.taking.eq(trigger.taking),
            recorder.flush.eq(trigger.flush),
            # The readback, once the capture is over, from the recorder's memory.
            readback.start.eq(trigger.flush),
            readback.stop.eq(run | reset),
            readback.writing.eq(recorder.writing),
            readback.filled.eq(recorder.filled),
            readback.write_addr.eq(recorder.write_addr),
            readback.read_data.eq(recorder.read_data),
            recorder.read_addr.eq(readback.read_addr),
        ]
        # A reply goes out whole, ahead of the readback's bytes.
        with m.If(replies.tx.valid):
            connect(m, replies.tx, flipped(self.tx))
        with m.Else():
            connect(m, readback.tx, flipped(self.tx))
        return m
