"""SUMP device mode: the engine answers ID and METADATA, captures scripted pins exactly (with
divider, trigger, channel groups, RLE) and the appliance switches between latscope and SUMP."""

import bisect
import itertools

import pytest

from latscope.protocol import (SUMP_ID_REPLY, SUMP_PROTOCOL_VERSION, SumpCommand, SumpFlags,
                               SumpMetadataKey, sump_metadata)
from latscope_gateware.sump import SumpEngine

from gateware_sim import byte_collector, run

CHANNELS = 22


def long(opcode, value):
    return bytes([opcode]) + value.to_bytes(4, "little")


#: Channel group 3 (channels 24..31) does not exist; sigrok disables it, as the tests do.
NO_GROUP_3 = 0b1000 << SumpFlags.GROUP_DISABLE_SHIFT


def setup(*, divider=0, read=64, delay=64, flags=NO_GROUP_3, mask=0, value=0):
    """The commands sigrok's ols driver sends before RUN (read/delay in samples)."""
    return (bytes([SumpCommand.RESET] * 5)
            + long(SumpCommand.TRIGGER_MASK0, mask) + long(SumpCommand.TRIGGER_VALUE0, value)
            + long(SumpCommand.TRIGGER_CONFIG0, 1 << 27)
            + long(SumpCommand.SET_DIVIDER, divider)
            + long(SumpCommand.SET_READ_DELAY, (read // 4 - 1) | (delay // 4 - 1) << 16)
            + long(SumpCommand.SET_FLAGS, flags))


def exchange(message, *, pins=lambda cycle: 0, expect, depth=64, clock_hz=100_000_000,
             max_cycles=20_000):
    """Sends ``message`` one byte every 2 cycles while ``pins(cycle)`` drives the sample
    input; returns the first ``expect`` bytes the engine sends and the cycle RUN arrived in."""
    dut = SumpEngine(channels=CHANNELS, depth=depth, clock_hz=clock_hz)
    out, state = [], {"cycle": 0, "run": None}

    async def host(ctx):
        for byte in message:
            ctx.set(dut.rx.valid, 1)
            ctx.set(dut.rx.payload, byte)
            if byte == SumpCommand.RUN and state["run"] is None:
                state["run"] = state["cycle"]
            await ctx.tick()
            ctx.set(dut.rx.valid, 0)
            await ctx.tick()
        for _ in range(max_cycles):
            if len(out) >= expect:
                break
            await ctx.tick()
        assert len(out) >= expect, f"engine sent {len(out)} bytes, expected {expect}"

    async def drive(ctx):
        async for _ in ctx.tick():
            state["cycle"] += 1
            ctx.set(dut.sample, pins(state["cycle"]))

    run(dut, host, processes=[drive, byte_collector(dut.tx, out)])
    return bytes(out[:expect]), state["run"]


def samples(data, groups=3):
    """Readback bytes -> samples, newest first (as the OLS sends them)."""
    return [int.from_bytes(data[i:i + groups], "little") for i in range(0, len(data), groups)]


def test_id_reply():
    data, _ = exchange(bytes([SumpCommand.RESET] * 5 + [SumpCommand.ID]), expect=4)
    assert data == SUMP_ID_REPLY == b"1ALS"


def test_metadata_bytes():
    expected = sump_metadata(name="latscope", version="1", probes=CHANNELS,
                             memory_bytes=64 * 3, max_rate_hz=100_000_000)
    data, _ = exchange(bytes([SumpCommand.METADATA]), expect=len(expected))
    assert data == expected
    # The format the ols driver parses: key, then a NUL-terminated string or a 32-bit
    # big-endian value.
    fields, i = {}, 0
    while data[i] != SumpMetadataKey.END:
        key = data[i]
        if key >> 5 == 0:
            end = data.index(0, i + 1)
            fields[key] = data[i + 1:end].decode()
            i = end + 1
        else:
            fields[key] = int.from_bytes(data[i + 1:i + 5], "big")
            i += 5
    assert i == len(data) - 1
    assert fields[SumpMetadataKey.DEVICE_NAME] == "latscope"
    assert fields[SumpMetadataKey.PROBES] == CHANNELS
    assert fields[SumpMetadataKey.SAMPLE_MEMORY] == 64 * 3
    assert fields[SumpMetadataKey.MAX_SAMPLE_RATE] == 100_000_000
    assert fields[SumpMetadataKey.PROTOCOL_VERSION] == SUMP_PROTOCOL_VERSION


@pytest.mark.parametrize("divider", [0, 2])
def test_capture_reads_back_every_sample_newest_first(divider):
    # The pins show the cycle number, so every sample says which cycle it was taken in.
    data, run_cycle = exchange(setup(divider=divider, read=32, delay=32)
                               + bytes([SumpCommand.RUN]),
                               pins=lambda cycle: cycle & 0x3fffff, expect=32 * 3)
    got = samples(data)
    assert [a - b for a, b in zip(got, got[1:])] == [divider + 1] * 31
    # Oldest sample: the first tick, a fixed number of cycles (pipeline) after RUN arrived.
    assert 0 < got[-1] - run_cycle < 6


def test_trigger_starts_the_post_trigger_count():
    # Channel 20 rises in cycle 700; 8 of the 32 samples read back come before the trigger.
    trigger_cycle = 700
    pins = lambda cycle: (cycle & 0xffff) | (cycle >= trigger_cycle) << 20
    data, _ = exchange(setup(divider=1, read=32, delay=24, mask=1 << 20, value=1 << 20)
                       + bytes([SumpCommand.RUN]), pins=pins, expect=32 * 3)
    got = samples(data)
    assert [(a & 0xffff) - (b & 0xffff) for a, b in zip(got, got[1:])] == [2] * 31
    after = [s for s in got if s >> 20 & 1]
    assert len(after) == 24 and len(got) - len(after) == 8
    assert trigger_cycle <= (after[-1] & 0xffff) < trigger_cycle + 2


def test_disabled_groups_are_not_sent():
    # Groups 1 and 3 disabled: one byte of channels 0..7 and one of 16..23 per sample.
    flags = (0b1010 << SumpFlags.GROUP_DISABLE_SHIFT)
    data, _ = exchange(setup(read=16, delay=16, flags=flags) + bytes([SumpCommand.RUN]),
                       pins=lambda cycle: 0x155a5 if cycle > 0 else 0, expect=16 * 2)
    assert data == bytes([0xa5, 0x01]) * 16


def rle_decode(data, groups=3):
    """What sigrok's ols driver does with an RLE readback: a count (top bit of the last byte)
    repeats the value after it; the result is in time order."""
    flag = 1 << (8 * groups - 1)
    out, repeat = [], 0
    for word in samples(data, groups):
        if word & flag:
            repeat = word & ~flag
            continue
        out += [word] * (repeat + 1)
        repeat = 0
    return out[::-1]


def runs(values):
    return [(value, len(list(group))) for value, group in itertools.groupby(values)]


def test_rle_capture_decodes_to_the_samples():
    # Value k lasts k + 1 cycles; channel 23, the RLE flag, stays 0.
    edges = list(itertools.accumulate(range(1, 60)))
    pins = lambda now: bisect.bisect_right(edges, now) * 0x10101
    data, _ = exchange(setup(read=32, delay=32, flags=SumpFlags.RLE | NO_GROUP_3)
                       + bytes([SumpCommand.RUN]), pins=pins, expect=32 * 3)
    got = runs(rle_decode(data))
    # 32 entries: a value and its count per run (the oldest count's value is not read back).
    assert len(got) == 16
    first = got[0][0] // 0x10101
    assert got[1:-1] == [((first + n) * 0x10101, first + n + 1) for n in range(1, 15)]


def test_rle_splits_runs_longer_than_a_count_holds():
    # Only channels 0..7: channel 7 is the flag, a count holds up to 127.
    flags = SumpFlags.RLE | (0b1110 << SumpFlags.GROUP_DISABLE_SHIFT)
    pins = lambda now: 0x25 if now < 400 else 0x5a
    data, _ = exchange(setup(read=16, delay=16, flags=flags) + bytes([SumpCommand.RUN]),
                       pins=pins, expect=16, max_cycles=2000)
    # Newest first: the sample that opened the last run, then full runs of 128 (count 127).
    assert data[:10] == bytes([0x5a, 0x80 | 127]) * 5
    (old, old_length), (new, new_length) = runs(rle_decode(data, groups=1))
    assert (old, new, new_length) == (0x25, 0x5a, 5 * 128 + 1)
    assert 128 < old_length <= 2 * 128      # the oldest count's value was not read back


# --- The appliance: latscope and SUMP modes on one link ---------------------------------------

def test_appliance_switches_between_latscope_and_sump_modes():
    """latscope identify and capture; SUMP reset/ID stops the capture and answers; a SUMP
    capture of the IRQ output and the DUT's markers; latscope identify brings latscope back."""
    from latscope.device import IrqSettings
    from latscope.parser import StreamParser
    from latscope.protocol import Command, StartArgs, StatusReply, encode_command
    from latscope_gateware.appliance import ApplianceConfig
    from latscope_gateware.sim_device import ScriptedDut, ScriptedLink, SimulatedDevice

    irq = IrqSettings(period=500, jitter_mask=0, width=50)
    sump_setup = setup(divider=9, read=64, delay=64) + bytes([SumpCommand.RUN])
    script = [
        (100, encode_command(Command.IDENTIFY)),
        (1500, encode_command(Command.IRQ_CONFIG, irq.encode())),
        (2000, encode_command(Command.START, StartArgs.const({"sources": 0xffff}))),
        (5000, bytes([SumpCommand.RESET] * 5 + [SumpCommand.ID])),
        (6000, bytes([SumpCommand.METADATA])),
        (9000, sump_setup),
        (19000, encode_command(Command.IDENTIFY)),
        (21000, encode_command(Command.STATUS)),
    ]
    config = ApplianceConfig(clock_hz=100_000_000, uart_divisor=4, fifo_depth=64,
                             flush_after=2000, sump_depth=64)
    link = ScriptedLink(script)
    device = SimulatedDevice(config, ScriptedDut(isr_delay=(10, 20), isr_length=(5, 10)),
                             link=link, max_cycles=23000)
    channels = device.appliance.sump_channels()
    assert channels[16:18] == ["STROBE", "IRQ"] and len(channels) == CHANNELS
    device.run()
    received = bytes(link.received)

    metadata = sump_metadata(name="latscope", version="1", probes=CHANNELS,
                             memory_bytes=64 * 3, max_rate_hz=100_000_000)
    sump_start = received.index(SUMP_ID_REPLY + metadata)
    readback_start = sump_start + len(SUMP_ID_REPLY + metadata)
    readback = received[readback_start:readback_start + 64 * 3]

    # Before: a latscope identify reply and a running capture (IRQ events).
    before = StreamParser()
    events = before.feed(received[:sump_start])
    assert Command.IDENTIFY in dict(before.replies)
    assert (events.source == 2).sum() >= 8

    # The SUMP capture: one sample every 10 cycles; the IRQ output (channel 17) is high for
    # 50 of every 500 cycles, the strobe toggles with every marker of the scripted DUT.
    words = samples(readback)[::-1]
    irq_runs = runs([word >> 17 & 1 for word in words])
    assert [length for level, length in irq_runs[1:-1]] in ([5, 45] * 2, [45, 5] * 2)[:1] \
        or all(length == (5 if level else 45) for level, length in irq_runs[1:-1])
    assert sum(level for level, _ in irq_runs) >= 1
    marker_values = {value for _, name, value in device.dut.truth if name == "MARKER"}
    strobe_runs = runs([(word >> 16 & 1, word & 0xffff) for word in words])
    assert len(strobe_runs) >= 2
    assert {value for (_, value), _ in strobe_runs[1:]} <= marker_values

    # After: latscope again, the capture stopped.
    after = StreamParser()
    after.feed(received[readback_start + len(readback):])
    replies = dict(after.replies)
    assert replies[Command.IDENTIFY] == dict(before.replies)[Command.IDENTIFY]
    status = StatusReply.from_bits(int.from_bytes(replies[Command.STATUS], "little"))
    assert status.capturing == 0
