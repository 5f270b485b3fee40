# amaranth: UnusedElaboratable=no
"""The SUMP engine's parts, each on its own: command parser, configuration, replies, sampler,
trigger, recorder (memory + RLE) and readback. tests/gateware/test_sump.py tests them together."""

from latscope_defs.protocol import SUMP_ID_REPLY, SumpCommand, SumpFlags, sump_metadata
from latscope_gateware.sump_capture import SumpRecorder, SumpSampler, SumpTrigger
from latscope_gateware.sump_commands import SumpCommandParser, SumpConfiguration, SumpReplies
from latscope_gateware.sump_readback import SumpReadback
from support.gateware_sim import byte_collector, run


async def _pulse(ctx, signal):
    """``signal`` high for one cycle."""
    ctx.set(signal, 1)
    await ctx.tick()
    ctx.set(signal, 0)


def _set(ctx, struct, **fields):
    for name, value in fields.items():
        ctx.set(getattr(struct, name), value)


def test_parser_splits_short_and_long_commands():
    dut = SumpCommandParser()
    # RUN; SET_DIVIDER 0x04030201 (whose argument bytes look like short commands); ID.
    message = [SumpCommand.RUN, SumpCommand.SET_DIVIDER, 0x01, 0x02, 0x00, 0x04, SumpCommand.ID]
    shorts, longs, idle = [], [], []

    async def testbench(ctx):
        for byte in message + [None] * 3:
            ctx.set(dut.rx.valid, byte is not None)
            ctx.set(dut.rx.payload, byte or 0)
            await ctx.tick()
            ctx.set(dut.rx.valid, 0)
            if ctx.get(dut.short.valid):
                shorts.append(ctx.get(dut.short.payload))
            if ctx.get(dut.long.valid):
                longs.append((ctx.get(dut.long.payload.opcode), ctx.get(dut.long.payload.arg)))
            idle.append(ctx.get(dut.idle))

    run(dut, testbench)
    assert shorts == [SumpCommand.RUN, SumpCommand.ID]
    assert longs == [(SumpCommand.SET_DIVIDER, 0x04000201)]
    # Not idle from the long command's opcode (seen a cycle later) to its last argument byte.
    assert idle == [1, 1, 0, 0, 0, 0, 1, 1, 1, 1]


def _configure(dut, commands, *, run_after=True):
    """Sends long commands [(opcode, arg)] (and RUN) to a SumpConfiguration."""

    async def testbench(ctx):
        for opcode, arg in commands:
            ctx.set(dut.long.valid, 1)
            ctx.set(dut.long.payload.opcode, opcode)
            ctx.set(dut.long.payload.arg, arg)
            assert ctx.get(dut.set_divider) == (opcode == SumpCommand.SET_DIVIDER)
            await ctx.tick()
            ctx.set(dut.long.valid, 0)
            assert not ctx.get(dut.set_divider)
        ctx.set(dut.run, run_after)
        await ctx.tick()
        ctx.set(dut.run, 0)
        await ctx.tick()

    return testbench


def test_configuration_keeps_the_settings_and_fixes_the_groups_at_run():
    dut = SumpConfiguration(groups=3)
    # Groups 1 and 3 disabled: groups 0 and 2 are stored, and with RLE group 2's top bit is
    # the count flag.
    flags = (0b1010 << SumpFlags.GROUP_DISABLE_SHIFT) | SumpFlags.RLE
    commands = [
        (SumpCommand.SET_DIVIDER, 0x12345678),
        (SumpCommand.TRIGGER_MASK0, 0xFF00FF),
        (SumpCommand.TRIGGER_VALUE0, 0x120034),
        (0xC4, 0xFFFFFFFF),  # stage 1: ignored
        (SumpCommand.SET_READ_DELAY, 15 | 3 << 16),
        (SumpCommand.SET_FLAGS, flags),
    ]
    seen = {}

    async def check(ctx):
        assert ctx.get(dut.settings.read_entries) == 4  # read count 0 until set
        await _configure(dut, commands)(ctx)
        for name in (
            "divider",
            "trigger_mask",
            "trigger_value",
            "read_entries",
            "enabled",
            "rle",
            "value_mask",
            "last",
            "count_max",
            "count_last",
            "pre_trigger",
            "post_entries",
            "post_entries_after",
        ):
            seen[name] = ctx.get(getattr(dut.settings, name))
        seen["rank"] = [ctx.get(dut.settings.rank[g]) for g in range(3)]

    run(dut, check)
    assert seen == {
        "divider": 0x345678,
        "trigger_mask": 0xFF00FF,
        "trigger_value": 0x120034,
        "read_entries": 64,
        "enabled": 0b0101,
        "rle": 1,
        "value_mask": 0x7F00FF,
        "last": 0b100,
        "rank": [0, 1, 1],
        "count_max": (1 << 15) - 1,
        "count_last": (1 << 15) - 2,
        "pre_trigger": 64 - 16,
        "post_entries": 16,
        "post_entries_after": 15,
    }


def test_configuration_without_rle_stores_every_enabled_bit():
    dut = SumpConfiguration(groups=3)
    seen = {}

    async def check(ctx):
        await _configure(
            dut, [(SumpCommand.SET_READ_DELAY, 0 | 7 << 16), (SumpCommand.SET_FLAGS, 0b1000 << 2)]
        )(ctx)
        settings = dut.settings
        seen.update(
            mask=ctx.get(settings.value_mask),
            rle=ctx.get(settings.rle),
            pre=ctx.get(settings.pre_trigger),
            post=ctx.get(settings.post_entries),
        )

    run(dut, check)
    # Fewer entries read than after the trigger: nothing needs to be in memory before it.
    assert seen == {"mask": 0xFFFFFF, "rle": 0, "pre": 0, "post": 32}


def test_replies_send_id_and_metadata_and_reset_drops_a_reply():
    metadata = sump_metadata(
        name="t", version="1", probes=22, memory_bytes=96, max_rate_hz=100_000_000
    )
    dut = SumpReplies(metadata)
    out = []

    async def host(ctx):
        for command, wait in [
            (SumpCommand.ID, 40),
            (SumpCommand.METADATA, 400),
            (SumpCommand.METADATA, 5),
            (SumpCommand.RESET, 40),
        ]:
            ctx.set(dut.short.valid, 1)
            ctx.set(dut.short.payload, command)
            await ctx.tick()
            ctx.set(dut.short.valid, 0)
            await ctx.tick().repeat(wait)

    # The sink takes a byte every third cycle: replies wait for it.
    run(dut, host, processes=[byte_collector(dut.tx, out, ready=lambda n: n % 3 == 0)])
    whole = list(SUMP_ID_REPLY) + list(metadata)
    assert out[: len(whole)] == whole
    # The third reply was cut short by RESET after a few bytes.
    rest = out[len(whole) :]
    assert 0 < len(rest) < 5 and rest == list(metadata[: len(rest)])


def _sampler_run(
    dut, clock_cycles, *, divider, sample=lambda cycle: cycle & 0xFF, masks=(0xFF, 0, 0)
):
    """Runs the sampler for ``clock_cycles`` after setting ``divider``; returns the ticks as
    [(cycle, value, same, match)]."""
    ticks = []

    async def testbench(ctx):
        value_mask, trigger_mask, trigger_value = masks
        _set(
            ctx,
            dut.settings,
            value_mask=value_mask,
            trigger_mask=trigger_mask,
            trigger_value=trigger_value,
            divider=divider,
        )
        await _pulse(ctx, dut.set_divider)
        await ctx.tick().repeat(2)
        ctx.set(dut.sampling, 1)
        for cycle in range(clock_cycles):
            ctx.set(dut.sample, sample(cycle))
            await ctx.tick()
            if ctx.get(dut.sampled):
                ticks.append((cycle, ctx.get(dut.value), ctx.get(dut.same), ctx.get(dut.match)))

    run(dut, testbench)
    return ticks


def test_sampler_ticks_every_divider_plus_one_reference_periods():
    # 100 MHz: every divider + 1 cycles, from the first cycle of `sampling`.
    ticks = _sampler_run(SumpSampler(1, clock_hz=100_000_000), 40, divider=3)
    assert [cycle for cycle, *_ in ticks] == list(range(0, 40, 4))
    assert [value for _, value, _, _ in ticks] == list(range(0, 40, 4))
    # 50 MHz: half as many cycles; divider 0 asks for more than the clock gives: every cycle.
    ticks = _sampler_run(SumpSampler(1, clock_hz=50_000_000), 40, divider=3)
    assert [cycle for cycle, *_ in ticks] == list(range(0, 40, 2))
    ticks = _sampler_run(SumpSampler(1, clock_hz=50_000_000), 10, divider=0)
    assert [cycle for cycle, *_ in ticks] == list(range(10))
    # 72 MHz, divider 99 (1 MHz): 72 cycles per sample on average, 71 or 72 apart.
    ticks = _sampler_run(SumpSampler(1, clock_hz=72_000_000), 72 * 50 + 1, divider=99)
    cycles = [cycle for cycle, *_ in ticks]
    assert cycles[-1] - cycles[0] == 72 * 50 and len(cycles) == 51


def test_sampler_masks_compares_and_matches():
    # Samples 0x10, 0x11, 0x12, 0x13, ... with bit 0 masked off: pairs of equal values; the
    # trigger matches bit 1 = 1 and bit 4 = 1.
    ticks = _sampler_run(
        SumpSampler(1, clock_hz=100_000_000),
        6,
        divider=0,
        sample=lambda cycle: 0x10 + cycle,
        masks=(0xFE, 0x12, 0x12),
    )
    assert ticks == [
        (0, 0x10, 0, 0),
        (1, 0x10, 1, 0),
        (2, 0x12, 0, 1),
        (3, 0x12, 1, 1),
        (4, 0x14, 0, 0),
        (5, 0x14, 1, 0),
    ]


def test_trigger_counts_once_armed_then_takes_the_post_trigger_entries():
    dut = SumpTrigger(groups=1, depth=64)
    trigger_at = 9  # the sample (counted from 0) that matches once armed
    taken, flushes, sampling_after = [], [], []

    async def testbench(ctx):
        _set(ctx, dut.settings, pre_trigger=4, post_entries=3, post_entries_after=2)
        await _pulse(ctx, dut.run)
        samples = 0
        for cycle in range(80):
            # Sampling until the flush, not in or after it.
            assert ctx.get(dut.sampling) == (not flushes and not ctx.get(dut.flush))
            # A sample every other cycle; samples 1 (too early: not armed) and `trigger_at`
            # match. Every sample taken writes (no RLE).
            sampled = cycle % 2 == 1 and ctx.get(dut.sampling)
            ctx.set(dut.sampled, sampled)
            ctx.set(dut.match, sampled and samples in (1, trigger_at))
            ctx.set(dut.writes, ctx.get(dut.taking))
            if ctx.get(dut.taking):
                taken.append(samples)
            if ctx.get(dut.flush):
                flushes.append(cycle)
            samples += sampled
            await ctx.tick()
            ctx.set(dut.filled, len(taken))
        sampling_after.append(ctx.get(dut.sampling))
        # RUN arms again; RESET stops.
        await _pulse(ctx, dut.run)
        sampling_after.append(ctx.get(dut.sampling))
        ctx.set(dut.reset, 1)
        await ctx.tick()
        sampling_after.append(ctx.get(dut.sampling))

    run(dut, testbench)
    # The trigger sample and two more: 3 post-trigger entries.
    assert taken == list(range(trigger_at + 3))
    assert len(flushes) == 1 and flushes[0] > 2 * (trigger_at + 2)
    assert sampling_after == [0, 1, 0]


def _rle_reference(values, count_max):
    """OLS RLE, oldest first: each run (split at count_max + 1 samples) is its value and, if
    longer than one sample, a count entry (flag | length - 1)."""
    entries, index = [], 0
    while index < len(values):
        length = 1
        while (
            index + length < len(values)
            and values[index + length] == values[index]
            and length < count_max + 1
        ):
            length += 1
        entries.append(values[index])
        if length > 1:
            entries.append(0x80 | (length - 1))
        index += length
    return entries


def _record(values, *, rle, depth=512):
    """Takes ``values`` (one group, 7 bits with RLE) into a recorder, flushes, and returns
    the memory oldest first plus (filled, full, write_addr)."""
    dut = SumpRecorder(groups=1, depth=depth)
    result = {}

    async def testbench(ctx):
        _set(ctx, dut.settings, rle=rle, count_max=127, count_last=126, last=1)
        await _pulse(ctx, dut.run)
        previous = None
        writes = 0
        for value in values:
            ctx.set(dut.taking, 1)
            ctx.set(dut.value, value)
            ctx.set(dut.same, value == previous)
            writes += ctx.get(dut.writes)
            previous = value
            await ctx.tick()
        ctx.set(dut.taking, 0)
        await _pulse(ctx, dut.flush)
        await ctx.tick().repeat(2)
        filled = ctx.get(dut.filled)
        memory = []
        for address in range(filled):
            ctx.set(dut.read_addr, address)
            await ctx.tick()
            memory.append(ctx.get(dut.read_data))
        result.update(
            memory=memory,
            filled=filled,
            full=ctx.get(dut.full),
            write_addr=ctx.get(dut.write_addr),
            writes=writes,
        )

    run(dut, testbench)
    return result


def test_recorder_run_length_encodes():
    values = [5, 5, 5, 7, 9, 9, 2] + [3] * 300 + [4]
    result = _record(values, rle=True)
    expected = _rle_reference(values, 127)
    assert expected[:6] == [5, 0x82, 7, 9, 0x81, 2]  # the reference, by hand
    assert result["memory"] == expected
    # `writes` counts the entries written while taking (the flush writes one more).
    assert result["writes"] == len(expected) - 1


def test_recorder_without_rle_stores_every_sample_in_a_ring():
    values = list(range(20))
    result = _record(values, rle=False, depth=16)
    assert (result["filled"], result["full"], result["write_addr"]) == (16, 1, 20 % 16)
    assert result["writes"] == 20
    # The ring holds the newest 16 from address 4 on.
    assert result["memory"] == list(range(16, 20)) + list(range(4, 16))


def test_readback_sends_the_newest_entries_first_in_enabled_groups():
    depth = 16
    memory = [0x030201 + 0x101010 * n for n in range(depth)]
    dut = SumpReadback(groups=3, depth=depth)
    out = []

    async def memory_port(ctx):
        async for _clk, _rst, address in ctx.tick().sample(dut.read_addr):
            ctx.set(dut.read_data, memory[address])

    async def testbench(ctx):
        _set(ctx, dut.settings, enabled=0b0101, read_entries=4)  # groups 0 and 2
        ctx.set(dut.filled, depth)
        ctx.set(dut.write_addr, 3)  # the newest entry is at address 2
        ctx.set(dut.writing, 1)  # the last entry is still being written
        await _pulse(ctx, dut.start)
        await ctx.tick().repeat(3)
        assert not out
        ctx.set(dut.writing, 0)
        await ctx.tick().repeat(60)
        # Fewer entries in memory than asked for: only those.
        ctx.set(dut.filled, 1)
        await _pulse(ctx, dut.start)
        await ctx.tick().repeat(30)
        # RUN or RESET stops a readback under way.
        ctx.set(dut.filled, depth)
        await _pulse(ctx, dut.start)
        await ctx.tick().repeat(8)
        await _pulse(ctx, dut.stop)
        await ctx.tick().repeat(30)

    run(
        dut,
        testbench,
        processes=[memory_port, byte_collector(dut.tx, out, ready=lambda n: n % 2 == 0)],
    )
    first = [
        byte
        for address in (2, 1, 0, 15)
        for byte in (memory[address] & 0xFF, memory[address] >> 16)
    ]
    second = first[:2]
    assert out[: len(first) + len(second)] == first + second
    stopped = out[len(first) + len(second) :]
    assert 0 < len(stopped) < len(first) and stopped == first[: len(stopped)]


def _readback_words(order, read_entries, *, rle):
    """Reads ``order`` (entries newest first, groups 0 and 1; with RLE group 1's top bit is
    the count flag) back with the read count ``read_entries``; returns the 16-bit words
    sent."""
    depth = len(order)
    memory = order[::-1]  # the newest entry is just below write_addr 0
    dut = SumpReadback(groups=3, depth=depth)
    out = []

    async def memory_port(ctx):
        async for _clk, _rst, address in ctx.tick().sample(dut.read_addr):
            ctx.set(dut.read_data, memory[address])

    async def testbench(ctx):
        _set(ctx, dut.settings, enabled=0b0011, rle=rle, last=0b010, read_entries=read_entries)
        ctx.set(dut.filled, depth)
        await _pulse(ctx, dut.start)
        await ctx.tick().repeat(12 * depth + 20)

    run(
        dut,
        testbench,
        processes=[memory_port, byte_collector(dut.tx, out, ready=lambda n: n % 3 != 1)],
    )
    assert len(out) % 2 == 0
    return [out[i] | out[i + 1] << 8 for i in range(0, len(out), 2)]


def test_rle_readback_stops_when_its_samples_reach_the_read_count():
    # sigrok's ols driver, in RLE mode, adds count + 1 samples per value entry and reads
    # nothing more once it has the read count: the readback sends exactly up to there.
    flag = 0x8000
    order = [
        flag | 5,
        0x0101,
        0x0202,
        flag | 2,
        0x0303,
        0x0404,
        flag | 0x7FFF,
        0x0505,
        0x0606,
        0x0707,
        flag | 3,
        0x0808,
        0x0909,
        0x0A0A,
        0x0B0B,
        0x0C0C,
    ]
    expanded = [0, 6, 7, 7, 10, 11, 11, 11 + 0x8000]  # samples after each entry
    # A read count of sigrok's cap, the memory (16 entries x 3 bytes) over 2 groups = 24
    # samples, is not the host's count: every entry. Any other is a count.
    for read, entries in ((8, 5), (11, 6), (12, 8), (16, 8), (24, 16), (4 << 16, 16)):
        sent = _readback_words(order, read, rle=True)
        assert sent == order[:entries], (read, sent)
        if entries < len(order):
            assert expanded[entries - 1] >= read > expanded[entries - 2]
    # Without RLE every entry is one sample: read count entries.
    assert _readback_words(order, 5, rle=False) == order[:5]
