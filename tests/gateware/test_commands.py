"""The command channel: arguments arrive intact, every command is answered, a stalled command
is abandoned, unknown opcodes get the '?' reply."""

import pytest

from latscope_defs.protocol import (
    UNKNOWN_COMMAND_REPLY,
    Command,
    EchoPattern,
    IdentifyReply,
    IrqConfig,
    Source,
    StartArgs,
    encode_command,
)
from latscope_gateware.commands import CommandProcessor
from support.gateware_sim import run

TIMEOUT = 20
IRQ = IrqConfig.const(
    {
        "period": 0x12345678,
        "jitter_mask": 0x00FF00FF,
        "width": 0x0BADCAFE,
        "flags": {"enable": 1, "one_shot": 0, "active_low": 1},
    }
)
SOURCES = StartArgs.const({"sources": 0xA5C3})


def exchange(messages, *, gap=3):
    """Feeds ``messages`` (a list of (bytes, cycles to wait after)) into the processor one
    byte every ``gap`` cycles; returns the reply bytes, and what start/stop/irq_apply
    pulsed with (in cycle order)."""
    identify = IdentifyReply.const({"magic": 0x4353544C, "version": 1})
    dut = CommandProcessor(identify, timeout=TIMEOUT)
    replies, pulses = [], []

    async def host(ctx):
        for message, wait in messages:
            for byte in message:
                ctx.set(dut.rx.valid, 1)
                ctx.set(dut.rx.payload, byte)
                await ctx.tick()
                ctx.set(dut.rx.valid, 0)
                if gap > 1:
                    await ctx.tick().repeat(gap - 1)
            await ctx.tick().repeat(wait)

    async def watch(ctx):
        ctx.set(dut.replies.ready, 1)
        async for _, _, valid, payload, start, stop, apply, sources, irq in ctx.tick().sample(
            dut.replies.valid,
            dut.replies.payload,
            dut.start,
            dut.stop,
            dut.irq_apply,
            dut.sources,
            dut.irq_config,
        ):
            if valid:
                assert payload.source == Source.REPLY
                replies.append(int(payload.payload))
            if start:
                pulses.append(("start", sources.as_value().value))
            if stop:
                pulses.append(("stop", None))
            if apply:
                pulses.append(("irq", irq.as_value().value))

    run(dut, host, processes=[watch])
    return replies, pulses


def test_arguments_arrive_intact_and_pulse_once():
    replies, pulses = exchange(
        [
            (encode_command(Command.IRQ_CONFIG, IRQ), 40),
            (encode_command(Command.START, SOURCES), 40),
            (encode_command(Command.STOP), 40),
        ]
    )
    assert pulses == [("irq", IRQ.as_value().value), ("start", 0xA5C3), ("stop", None)]
    assert replies == [Command.IRQ_CONFIG, 0, Command.START, 0, Command.STOP, 0]


def test_identify_reply_carries_the_payload():
    replies, _ = exchange([(encode_command(Command.IDENTIFY), 200)], gap=1)
    size = IdentifyReply.as_shape().size // 8
    assert replies[:2] == [Command.IDENTIFY, size]
    payload = int.from_bytes(bytes(replies[2:]), "little")
    assert IdentifyReply.from_bits(payload).magic == 0x4353544C
    assert len(replies) == 2 + size


def test_stalled_command_is_abandoned_and_the_next_one_works():
    partial = encode_command(Command.IRQ_CONFIG, IRQ)[:5]
    replies, pulses = exchange(
        [
            (partial, TIMEOUT + 5),  # the rest never comes
            (encode_command(Command.START, SOURCES), 40),
        ]
    )
    assert pulses == [("start", 0xA5C3)]
    assert replies == [Command.START, 0]


def test_unknown_opcode_is_named_in_the_reply():
    replies, pulses = exchange([(b"Z", 20)])
    assert replies == [UNKNOWN_COMMAND_REPLY, 1, ord("Z")] and pulses == []


def test_echo_sends_its_pattern_back_after_a_longer_command():
    # IRQ_CONFIG's 13 argument bytes pass through the same shift register first: the echo
    # must be its own 8 bytes, in order, not a mix with the longer command's.
    patterns = (0x0123456789ABCDEF, 0xFFFFFFFFFFFFFFFF, 0x8000000000000001)
    messages = [(encode_command(Command.IRQ_CONFIG, IRQ), 40)]
    messages += [
        (encode_command(Command.ECHO, EchoPattern.const({"pattern": pattern})), 40)
        for pattern in patterns
    ]
    replies, pulses = exchange(messages)
    assert replies[:2] == [Command.IRQ_CONFIG, 0]
    replies = replies[2:]
    for pattern in patterns:
        assert replies[:11] == [Command.ECHO, 9, *pattern.to_bytes(8, "little"), 0]
        replies = replies[11:]
    assert replies == [] and pulses == [("irq", IRQ.as_value().value)]


def test_a_command_with_arguments_needs_them():
    with pytest.raises(ValueError, match="START takes arguments"):
        encode_command(Command.START)
