"""SUMP device mode: the engine answers ID and METADATA, captures scripted pins exactly (with
divider, trigger, channel groups, RLE) and the appliance switches between latscope and SUMP."""

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


def test_rle_capture_decodes_to_the_samples():
    # Runs of 1, 2, 3, ... cycles, 0x7fffff at most so that channel 23 (the flag) stays 0.
    edges, cycle, level = [], 0, 0
    for length in range(1, 40):
        cycle += length
        edges.append(cycle)
    def pins(now):
        return sum(1 for edge in edges if edge <= now) * 0x10101
    # read = entries; expect every entry back: 16 runs give at most 32 entries.
    data, run_cycle = exchange(setup(read=32, delay=32, flags=SumpFlags.RLE | NO_GROUP_3)
                               + bytes([SumpCommand.RUN]), pins=pins, expect=32 * 3,
                               max_cycles=4000)
    decoded = rle_decode(data)
    # The decoded samples are the pins, one per cycle, in order, up to the capture end.
    first = decoded.index(decoded[0])
    expected = [pins(c) for c in range(run_cycle, run_cycle + 2000)]
    start = expected.index(decoded[0])
    assert decoded == expected[start:start + len(decoded)][:len(decoded)]
    assert len(set(decoded)) > 8
