"""SUMP device mode, the command side: parsing the host's bytes, the settings they write and
the ID / METADATA replies (see :mod:`.sump` for the engine they belong to)."""

from amaranth.hdl import *
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from latscope_defs.protocol import (
    SUMP_ARG_BYTES,
    SUMP_GROUP_BITS,
    SUMP_ID_REPLY,
    SUMP_LONG_COMMAND,
    SUMP_MAX_GROUPS,
    SumpCommand,
    SumpFlags,
)

__all__ = [
    "DIVIDER_BITS",
    "ENTRY_COUNT_BITS",
    "long_command_layout",
    "settings_layout",
    "SumpCommandParser",
    "SumpConfiguration",
    "SumpReplies",
]

DIVIDER_BITS = 24
#: Read and delay counts in entries: ((16-bit count) + 1) * 4.
ENTRY_COUNT_BITS = 19

#: A long command: its opcode and its argument (little-endian on the wire).
long_command_layout = data.StructLayout({"opcode": 8, "arg": 8 * SUMP_ARG_BYTES})


def settings_layout(groups):
    """The settings :class:`SumpConfiguration` gives the capture and readback parts, for
    ``groups`` channel groups present.

    As set: ``divider``; trigger stage 0 (``trigger_mask``, ``trigger_value``);
    ``read_entries`` (entries to read back).

    Fixed at RUN: ``enabled`` (channel groups sent at readback), ``rle``, ``value_mask``
    (the sample bits stored; with RLE without the count flag), ``rank`` (per group: which
    byte of a count it stores), ``last`` (one-hot: the highest enabled stored group, whose
    top bit flags a count), ``count_max`` and ``count_last`` (= ``count_max - 1``, so that
    no adder comes before the compare), ``pre_trigger`` (entries to have in memory before a
    trigger counts), ``post_entries`` and ``post_entries_after`` (= ``post_entries - 1``).
    """
    width = groups * SUMP_GROUP_BITS
    return data.StructLayout(
        {
            "divider": DIVIDER_BITS,
            "trigger_mask": width,
            "trigger_value": width,
            "read_entries": ENTRY_COUNT_BITS,
            "enabled": SUMP_MAX_GROUPS,
            "rle": 1,
            "value_mask": width,
            "rank": data.ArrayLayout(2, groups),
            "last": groups,
            "count_max": width - 1,
            "count_last": width - 1,
            "pre_trigger": ENTRY_COUNT_BITS,
            "post_entries": ENTRY_COUNT_BITS,
            "post_entries_after": ENTRY_COUNT_BITS,
        }
    )


class SumpCommandParser(wiring.Component):
    """Splits the host's bytes into short commands and long commands with their argument.

    Ports
    -----
    rx : In(stream.Signature(8, always_ready=True))
        Command bytes from the host.
    short : Out(stream.Signature(8, always_ready=True))
        A short command's byte, one cycle after it arrived on ``rx``.
    long : Out(stream.Signature(long_command_layout, always_ready=True))
        A long command, in the cycle after its last argument byte arrived.
    idle : Out(1)
        Between commands (not inside a long command's argument bytes). It follows a byte one
        cycle late (bytes come at most one per UART frame).

    The bytes are registered first: what a command starts (RUN resets most of the engine)
    then depends on a flip-flop, not on the link's mode switch in front.
    """

    def __init__(self):
        super().__init__(
            {
                "rx": In(stream.Signature(8, always_ready=True)),
                "short": Out(stream.Signature(8, always_ready=True)),
                "long": Out(stream.Signature(long_command_layout, always_ready=True)),
                "idle": Out(1),
            }
        )

    def elaborate(self, platform):
        m = Module()
        rx_valid = Signal()
        rx_byte = Signal(8)
        m.d.sync += [rx_valid.eq(self.rx.valid), rx_byte.eq(self.rx.payload)]
        opcode = Signal(8)
        args = Signal(8 * SUMP_ARG_BYTES)
        args_left = Signal(range(SUMP_ARG_BYTES + 1))
        # The argument as it is once this cycle's byte is shifted in (little-endian).
        arg = Cat(args[8:], rx_byte)
        m.d.comb += [
            self.idle.eq(args_left == 0),
            self.short.payload.eq(rx_byte),
            self.long.payload.opcode.eq(opcode),
            self.long.payload.arg.eq(arg),
        ]
        with m.If(rx_valid):
            with m.If(args_left == 0):
                with m.If(rx_byte & SUMP_LONG_COMMAND):
                    m.d.sync += [opcode.eq(rx_byte), args_left.eq(SUMP_ARG_BYTES)]
                with m.Else():
                    m.d.comb += self.short.valid.eq(1)
            with m.Else():
                m.d.sync += [args.eq(arg), args_left.eq(args_left - 1)]
                m.d.comb += self.long.valid.eq(args_left == 1)
        return m


class SumpConfiguration(wiring.Component):
    """The settings the long commands write, and what RUN derives from them for a capture.

    Parameters
    ----------
    groups : int
        Channel groups present (bytes of a stored sample).

    Ports
    -----
    long : In(stream.Signature(long_command_layout, always_ready=True))
        Long commands. SET_DIVIDER, SET_READ_DELAY, SET_FLAGS and trigger stage 0's mask and
        value are kept; every other long command (trigger stages 1..3, TRIGGER_CONFIG0, ...)
        is ignored.
    run : In(1)
        RUN: fix the capture's configuration.
    set_divider : Out(1)
        High in the cycle SET_DIVIDER arrives (``settings.divider`` holds it from the next
        cycle on).
    settings : Out(settings_layout(groups))
        The settings (see :func:`settings_layout`); until SET_READ_DELAY, one read count.
    """

    def __init__(self, groups):
        self._groups = groups
        super().__init__(
            {
                "long": In(stream.Signature(long_command_layout, always_ready=True)),
                "run": In(1),
                "set_divider": Out(1),
                "settings": Out(settings_layout(groups), init={"read_entries": 4}),
            }
        )

    def elaborate(self, platform):
        m = Module()
        settings = self.settings
        delay_count = Signal(16)  # capture (delay_count + 1) * 4 after the trigger
        flags = Signal(32)
        arg = self.long.payload.arg
        with m.If(self.long.valid):
            with m.Switch(self.long.payload.opcode):
                with m.Case(SumpCommand.SET_DIVIDER):
                    m.d.sync += settings.divider.eq(arg[:DIVIDER_BITS])
                    m.d.comb += self.set_divider.eq(1)
                with m.Case(SumpCommand.SET_READ_DELAY):
                    m.d.sync += [
                        settings.read_entries.eq((arg[:16] + 1) << 2),
                        delay_count.eq(arg[16:]),
                    ]
                with m.Case(SumpCommand.SET_FLAGS):
                    m.d.sync += flags.eq(arg)
                with m.Case(SumpCommand.TRIGGER_MASK0):
                    m.d.sync += settings.trigger_mask.eq(arg)
                with m.Case(SumpCommand.TRIGGER_VALUE0):
                    m.d.sync += settings.trigger_value.eq(arg)

        read_entries = settings.read_entries
        delay_entries = (delay_count + 1) << 2
        with m.If(self.run):
            m.d.sync += [
                settings.pre_trigger.eq(
                    Mux(read_entries > delay_entries, read_entries - delay_entries, 0)
                ),
                settings.post_entries.eq(delay_entries),
                settings.post_entries_after.eq(delay_entries - 1),
            ]
            self._fix_groups(m, flags)
        return m

    def _fix_groups(self, m, flags):
        """At RUN: the enabled groups, RLE and what they make of a stored entry."""
        groups, settings = self._groups, self.settings
        disabled = flags >> int(SumpFlags.GROUP_DISABLE_SHIFT)
        rle = (flags & int(SumpFlags.RLE)) != 0
        m.d.sync += [settings.enabled.eq(~disabled), settings.rle.eq(rle)]
        stored = ~disabled[:groups]
        rank_so_far = Const(0, 3)
        mask = []
        for g in range(groups):
            m.d.sync += settings.rank[g].eq(rank_so_far)
            rank_so_far = rank_so_far + stored[g]
            above = stored[g + 1 :] if g + 1 < groups else Const(0, 1)
            is_last = stored[g] & (above == 0)
            m.d.sync += settings.last[g].eq(is_last)
            keep = Mux(stored[g], 0xFF, 0)
            mask.append(Mux(rle & is_last, keep & 0x7F, keep))
        m.d.sync += settings.value_mask.eq(Cat(*mask))
        with m.Switch(rank_so_far):
            for n in range(1, groups + 1):
                with m.Case(n):
                    count = (1 << (SUMP_GROUP_BITS * n - 1)) - 1
                    m.d.sync += [settings.count_max.eq(count), settings.count_last.eq(count - 1)]
            with m.Default():
                m.d.sync += [settings.count_max.eq(0), settings.count_last.eq(0)]


class SumpReplies(wiring.Component):
    """Sends the ID and METADATA replies from one ROM.

    Ports
    -----
    short : In(stream.Signature(8, always_ready=True))
        Short commands: ID and METADATA start their reply, RESET drops a reply being sent.
    tx : Out(stream.Signature(8))
        The reply bytes.
    """

    def __init__(self, metadata_reply):
        self._replies = {
            SumpCommand.ID: bytes(SUMP_ID_REPLY),
            SumpCommand.METADATA: bytes(metadata_reply),
        }
        super().__init__(
            {
                "short": In(stream.Signature(8, always_ready=True)),
                "tx": Out(stream.Signature(8)),
            }
        )

    def elaborate(self, platform):
        m = Module()
        rom = b"".join(self._replies.values())
        rom_data = Array(Const(byte, 8) for byte in rom)
        rom_addr = Signal(range(len(rom)))
        rom_left = Signal(range(len(rom) + 1))
        # `rom_left != 0`, kept in a flip-flop: `tx.valid` decides whether the readback may
        # send (sump.py), and a compare there lengthened the readback's paths.
        sending = Signal()
        with m.If(self.short.valid):
            with m.Switch(self.short.payload):
                start = 0
                for command, reply in self._replies.items():
                    with m.Case(command):
                        m.d.sync += [rom_addr.eq(start), rom_left.eq(len(reply)), sending.eq(1)]
                    start += len(reply)
                with m.Case(SumpCommand.RESET):
                    m.d.sync += [rom_left.eq(0), sending.eq(0)]

        m.d.comb += [self.tx.valid.eq(sending), self.tx.payload.eq(rom_data[rom_addr])]
        with m.If(self.tx.valid & self.tx.ready):
            m.d.sync += [
                rom_addr.eq(rom_addr + 1),
                rom_left.eq(rom_left - 1),
                sending.eq(rom_left != 1),
            ]
        return m
