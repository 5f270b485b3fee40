"""SUMP device mode: the engine answers ID and METADATA, captures scripted pins exactly (with
divider, trigger, channel groups, RLE) and the appliance switches between latscope and SUMP."""

import bisect
import itertools
import os
import random
import subprocess
import time

import numpy as np
import pytest

from latscope.events import Events
from latscope.link.device import Device, IrqSettings, open_transport
from latscope.link.identity import Identity
from latscope.link.parser import StreamParser
from latscope.simulated.soc import ROOT, SocSimulation, SuiteSettings, build_soc
from latscope_defs.protocol import (
    GATEWARE_VERSION,
    SUMP_ID_REPLY,
    SUMP_PROTOCOL_VERSION,
    Command,
    Source,
    StartArgs,
    StatusReply,
    SumpCommand,
    SumpFlags,
    SumpMetadataKey,
    encode_command,
    sump_metadata,
)
from latscope_gateware.appliance import ApplianceConfig
from latscope_gateware.sim_device import ScriptedDut, ScriptedLink, SimulatedDevice
from latscope_gateware.sump import SumpEngine
from support.gateware_sim import byte_collector, run

CHANNELS = 22


def long(opcode, value):
    return bytes([opcode]) + value.to_bytes(4, "little")


#: Channel group 3 (channels 24..31) does not exist; sigrok disables it, as the tests do.
NO_GROUP_3 = 0b1000 << SumpFlags.GROUP_DISABLE_SHIFT


def setup(*, divider=0, read=64, delay=64, flags=NO_GROUP_3, mask=0, value=0):
    """The commands sigrok's ols driver sends before RUN (read/delay in samples)."""
    return (
        bytes([SumpCommand.RESET] * 5)
        + long(SumpCommand.TRIGGER_MASK0, mask)
        + long(SumpCommand.TRIGGER_VALUE0, value)
        + long(SumpCommand.TRIGGER_CONFIG0, 1 << 27)
        + long(SumpCommand.SET_DIVIDER, divider)
        + long(SumpCommand.SET_READ_DELAY, (read // 4 - 1) | (delay // 4 - 1) << 16)
        + long(SumpCommand.SET_FLAGS, flags)
    )


def exchange(
    message,
    *,
    pins=lambda cycle: 0,
    expect,
    depth=64,
    clock_hz=100_000_000,
    max_cycles=20_000,
    linger=0,
):
    """Sends ``message`` one byte every 2 cycles while ``pins(cycle)`` drives the sample
    input; returns the first ``expect`` bytes the engine sends (with ``linger``: every byte
    sent until ``linger`` cycles after those) and the cycle the last byte (RUN) arrived in."""
    dut = SumpEngine(channels=CHANNELS, depth=depth, clock_hz=clock_hz)
    out, state = [], {"cycle": 0, "run": None}

    async def host(ctx):
        for index, byte in enumerate(message):
            ctx.set(dut.rx.valid, 1)
            ctx.set(dut.rx.payload, byte)
            if index == len(message) - 1:
                state["run"] = state["cycle"]
            await ctx.tick()
            ctx.set(dut.rx.valid, 0)
            await ctx.tick()
        for _ in range(max_cycles):
            if len(out) >= expect:
                break
            await ctx.tick()
        assert len(out) >= expect, f"engine sent {len(out)} bytes, expected {expect}"
        if linger:
            await ctx.tick().repeat(linger)

    async def drive(ctx):
        async for _ in ctx.tick():
            state["cycle"] += 1
            ctx.set(dut.sample, pins(state["cycle"]))

    run(dut, host, processes=[drive, byte_collector(dut.tx, out)])
    return bytes(out if linger else out[:expect]), state["run"]


def samples(data, groups=3):
    """Readback bytes -> samples, newest first (as the OLS sends them)."""
    return [int.from_bytes(data[i : i + groups], "little") for i in range(0, len(data), groups)]


def test_id_reply():
    data, _ = exchange(bytes([SumpCommand.RESET] * 5 + [SumpCommand.ID]), expect=4)
    assert data == SUMP_ID_REPLY == b"1ALS"


def test_metadata_bytes():
    expected = sump_metadata(
        name="latscope", version="1", probes=CHANNELS, memory_bytes=64 * 3, max_rate_hz=100_000_000
    )
    data, _ = exchange(bytes([SumpCommand.METADATA]), expect=len(expected))
    assert data == expected
    # The format the ols driver parses: key, then a NUL-terminated string or a 32-bit
    # big-endian value.
    fields, i = {}, 0
    while data[i] != SumpMetadataKey.END:
        key = data[i]
        if key >> 5 == 0:
            end = data.index(0, i + 1)
            fields[key] = data[i + 1 : end].decode()
            i = end + 1
        else:
            fields[key] = int.from_bytes(data[i + 1 : i + 5], "big")
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
    data, run_cycle = exchange(
        setup(divider=divider, read=32, delay=32) + bytes([SumpCommand.RUN]),
        pins=lambda cycle: cycle & 0x3FFFFF,
        expect=32 * 3,
    )
    got = samples(data)
    assert [a - b for a, b in zip(got, got[1:])] == [divider + 1] * 31
    # Oldest sample: the first tick, a fixed number of cycles (pipeline) after RUN arrived.
    assert 0 < got[-1] - run_cycle < 6


def test_divider_counts_100_mhz_periods_at_any_clock():
    # At 72 MHz, 10 MHz (divider 9) is a sample every 7.2 cycles: 7 or 8, 7.2 on average.
    data, _ = exchange(
        setup(divider=9, read=64, delay=64) + bytes([SumpCommand.RUN]),
        pins=lambda cycle: cycle & 0x3FFFFF,
        expect=64 * 3,
        clock_hz=72_000_000,
    )
    got = samples(data)
    gaps = [a - b for a, b in zip(got, got[1:])]
    assert set(gaps) == {7, 8} and abs(sum(gaps) - 63 * 7.2) < 1


@pytest.mark.parametrize("trigger_cycle", [700, 0])
def test_trigger_starts_the_post_trigger_count(trigger_cycle):
    # Channel 20 rises in `trigger_cycle`; 8 of the 32 samples read back come before the
    # trigger. A trigger condition that holds from the start counts only once those 8 are in.
    def pins(cycle):
        return (cycle & 0xFFFF) | (cycle >= trigger_cycle) << 20

    data, run_cycle = exchange(
        setup(divider=1, read=32, delay=24, mask=1 << 20, value=1 << 20) + bytes([SumpCommand.RUN]),
        pins=pins,
        expect=32 * 3,
    )
    got = samples(data)
    assert [(a & 0xFFFF) - (b & 0xFFFF) for a, b in zip(got, got[1:])] == [2] * 31
    if trigger_cycle:
        after = [s for s in got if s >> 20 & 1]
        assert len(after) == 24 and len(got) - len(after) == 8
        assert trigger_cycle <= (after[-1] & 0xFFFF) < trigger_cycle + 2
    else:
        assert 0 < (got[-1] & 0xFFFF) - run_cycle < 6  # the first sample is the oldest


def test_disabled_groups_are_not_sent():
    # Groups 1 and 3 disabled: one byte of channels 0..7 and one of 16..23 per sample.
    flags = 0b1010 << SumpFlags.GROUP_DISABLE_SHIFT
    data, _ = exchange(
        setup(read=16, delay=16, flags=flags) + bytes([SumpCommand.RUN]),
        pins=lambda cycle: 0x155A5 if cycle > 0 else 0,
        expect=16 * 2,
    )
    assert data == bytes([0xA5, 0x01]) * 16


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


def assert_ends_at_the_read_count(data, read, groups=3):
    """The RLE readback ends with the value entry whose samples reach the read count, as
    sigrok's ols driver counts them (it reads nothing after that)."""
    words = samples(data, groups)
    flag = 1 << (8 * groups - 1)
    assert not words[-1] & flag
    before = words[:-2] if len(words) > 1 and words[-2] & flag else words[:-1]
    assert (
        len(rle_decode(data, groups))
        >= read
        > len(rle_decode(b"".join(w.to_bytes(groups, "little") for w in before), groups))
    )


def test_rle_capture_decodes_to_the_samples():
    # Value v (0..63 in each group; channel 23, the RLE flag, stays 0) lasts v % 8 + 1
    # cycles, then v + 1 follows.
    edges = list(itertools.accumulate(k % 8 + 1 for k in range(2000)))

    def pins(now):
        return bisect.bisect_right(edges, now) % 64 * 0x10101

    # 100 samples, below the memory's 128 entries: the readback ends at the read count.
    data, _ = exchange(
        setup(read=100, delay=16, flags=SumpFlags.RLE | NO_GROUP_3) + bytes([SumpCommand.RUN]),
        pins=pins,
        expect=3,
        depth=128,
        linger=3000,
    )
    assert_ends_at_the_read_count(data, 100)
    got = runs(rle_decode(data))
    # A value and its count per run; the oldest run is cut at the read count.
    assert len(got) >= 15
    first = got[0][0] // 0x10101
    values = [(first + n) % 64 for n in range(1, len(got) - 1)]
    assert got[1:-1] == [(v * 0x10101, v % 8 + 1) for v in values]


def test_rle_splits_runs_longer_than_a_count_holds():
    # Only channels 0..7: channel 7 is the flag, a count holds up to 127.
    flags = SumpFlags.RLE | (0b1110 << SumpFlags.GROUP_DISABLE_SHIFT)

    def pins(now):
        return 0x25 if now < 400 else 0x5A

    # A read count of sigrok's cap (16 entries x 3 bytes over 1 group = 48 samples) is not
    # its sample count: every entry comes back.
    data, _ = exchange(
        setup(read=48, delay=4, flags=flags) + bytes([SumpCommand.RUN]),
        pins=pins,
        expect=4,
        depth=16,
        max_cycles=3000,
        linger=500,
    )
    assert len(data) == 16
    # Newest first: the count of the run still open at the end, then full runs of 128.
    assert data[0] & 0x80 and data[1] == 0x5A
    assert data[2:] == bytes([0x80 | 127, 0x5A]) * 7
    assert runs(rle_decode(data, groups=1)) == [(0x5A, (data[0] & 0x7F) + 1 + 7 * 128)]


def test_reset_ends_an_rle_readback_at_once_and_id_answers_cleanly():
    """A host that has the samples it asked for while the readback goes on (sigrok's ols
    driver in RLE mode) sends RESET x 5 and ID (its scan): the readback stops within the
    byte under way and the next bytes are exactly the ID reply. The sink takes one byte every
    8 cycles, like a UART."""
    dut = SumpEngine(channels=CHANNELS, depth=256, clock_hz=100_000_000)
    message = setup(read=256, delay=256, flags=SumpFlags.RLE | NO_GROUP_3) + bytes(
        [SumpCommand.RUN]
    )
    full = 256 * 3  # bytes of the whole readback
    out, marks = [], {}

    async def send(ctx, data):
        for byte in data:
            ctx.set(dut.rx.valid, 1)
            ctx.set(dut.rx.payload, byte)
            await ctx.tick()
            ctx.set(dut.rx.valid, 0)
            await ctx.tick()

    async def host(ctx):
        await send(ctx, message)
        while len(out) < 30:  # a tenth of the readback is in
            await ctx.tick()
        marks["reset"] = len(out)
        await send(ctx, bytes([SumpCommand.RESET] * 5))
        marks["after_reset"] = len(out)
        await send(ctx, bytes([SumpCommand.ID]))
        for _ in range(2000):
            await ctx.tick()

    async def drive(ctx):
        cycle = 0
        async for _ in ctx.tick():
            cycle += 1
            ctx.set(dut.sample, (cycle // 7) * 0x10101 & 0x3FFFFF)

    run(dut, host, processes=[drive, byte_collector(dut.tx, out, ready=lambda c: c % 8 == 0)])
    # At most the byte under way when the first RESET came, then only the ID reply.
    assert marks["after_reset"] - marks["reset"] <= 2
    assert bytes(out[marks["after_reset"] :]) == SUMP_ID_REPLY
    assert len(out) < full


# --- The appliance: latscope and SUMP modes on one link ---------------------------------------


@pytest.mark.slow
def test_appliance_switches_between_latscope_and_sump_modes():
    """latscope identify and capture; SUMP reset/ID stops the capture and answers; a SUMP
    capture of the IRQ output and the DUT's markers; latscope identify brings latscope back."""

    irq = IrqSettings(period=500, jitter_mask=0, width=50)
    sump_setup = setup(divider=9, read=64, delay=64) + bytes([SumpCommand.RUN])
    script = [
        # A latscope reply byte takes about 40 cycles here (2 bytes per REPLY record).
        (100, encode_command(Command.IDENTIFY)),
        (3500, encode_command(Command.IRQ_CONFIG, irq.encode())),
        (4500, encode_command(Command.START, StartArgs.const({"sources": 0xFFFF}))),
        (7000, bytes([SumpCommand.RESET] * 5 + [SumpCommand.ID])),
        (8000, bytes([SumpCommand.METADATA])),
        (11000, sump_setup),
        (21000, encode_command(Command.IDENTIFY)),
        (24500, encode_command(Command.STATUS)),
    ]
    config = ApplianceConfig(
        clock_hz=100_000_000, uart_divisor=4, fifo_depth=64, flush_after=300, sump_depth=64
    )
    link = ScriptedLink(script)
    device = SimulatedDevice(
        config, ScriptedDut(isr_delay=(10, 20), isr_length=(5, 10)), link=link, max_cycles=26000
    )
    channels = device.appliance.sump_channels()
    assert channels[16:18] == ["STROBE", "IRQ"] and len(channels) == CHANNELS
    device.run()
    received = bytes(link.received)

    metadata = sump_metadata(
        name="latscope",
        version=str(GATEWARE_VERSION),
        probes=CHANNELS,
        memory_bytes=64 * 3,
        max_rate_hz=100_000_000,
    )
    sump_start = received.index(SUMP_ID_REPLY + metadata)
    readback_start = sump_start + len(SUMP_ID_REPLY + metadata)
    readback = received[readback_start : readback_start + 64 * 3]

    # Before: a latscope identify reply and a running capture (IRQ events).
    before = StreamParser(version=GATEWARE_VERSION)
    events = Events.concatenate([before.feed(received[:sump_start]), before.finish()])
    assert Command.IDENTIFY in dict(before.replies)
    assert (events.source == Source.IRQ).sum() >= 2

    # The SUMP capture: one sample every 10 cycles; the IRQ output (channel 17) is high for
    # 50 of every 500 cycles, the strobe toggles with every marker of the scripted DUT.
    words = samples(readback)[::-1]
    irq_runs = runs([word >> 17 & 1 for word in words])
    assert len(irq_runs) >= 3  # the first and last runs are cut by the capture
    assert all(length == (5 if level else 45) for level, length in irq_runs[1:-1])
    marker_values = {value for _, name, value in device.dut.truth if name == "MARKER"}
    strobe_runs = runs([(word >> 16 & 1, word & 0xFFFF) for word in words])
    assert len(strobe_runs) >= 2
    assert {value for (_, value), _ in strobe_runs[1:]} <= marker_values

    # After: latscope again, the capture stopped.
    after = StreamParser(version=GATEWARE_VERSION)
    after.feed(received[readback_start + len(readback) :])
    replies = dict(after.replies)
    assert replies[Command.IDENTIFY] == dict(before.replies)[Command.IDENTIFY]
    status = StatusReply.from_bits(int.from_bytes(replies[Command.STATUS], "little"))
    assert status.capturing == 0


def stray_bytes(rng, count):
    """``count`` bytes of line noise: none a latscope opcode (a stray opcode is a command),
    SUMP's RESET and ID half of them, RESETs never five in a row (the SUMP reset)."""
    opcodes = {int(command) for command in Command}
    others = [byte for byte in range(1, 256) if byte not in opcodes]
    noise, zeros = [], 0
    for _ in range(count):
        pick = rng.choice(
            [SumpCommand.RESET, SumpCommand.ID, rng.choice(others)] if zeros < 4 else others
        )
        zeros = zeros + 1 if pick == SumpCommand.RESET else 0
        noise.append(pick)
    assert noise.count(SumpCommand.RESET) >= count // 8 and SumpCommand.ID in noise
    return bytes(noise)


@pytest.mark.slow
def test_stray_bytes_do_not_stop_a_capture():
    """Bytes of noise on the receive line during a capture, SUMP's RESET and ID among them:
    the capture goes on (STATUS says so after them), nothing is lost, the stream stays whole;
    the SUMP reset (five RESETs) still switches to SUMP mode."""
    rng = random.Random(28)
    # A light capture (the IRQ output's edges): every noise byte the command processor takes
    # is an unknown opcode, answered with a 3-record reply ahead of the events, and the link
    # must have room for both.
    irq = IrqSettings(period=2000, jitter_mask=0, width=100)
    script = [
        # A latscope reply byte takes about 40 cycles here (2 bytes per REPLY record).
        (100, encode_command(Command.IDENTIFY)),
        (3500, encode_command(Command.IRQ_CONFIG, irq.encode())),
        (4500, encode_command(Command.START, StartArgs.const({"sources": 1 << Source.IRQ}))),
        *((7000 + 2500 * burst, stray_bytes(rng, 16)) for burst in range(4)),
        (17000, encode_command(Command.STATUS)),
        (19000, encode_command(Command.STOP)),
        (20500, bytes([SumpCommand.RESET] * 5 + [SumpCommand.ID])),
    ]
    config = ApplianceConfig(
        clock_hz=100_000_000, uart_divisor=4, fifo_depth=256, flush_after=300, sump_depth=64
    )
    link = ScriptedLink(script)
    device = SimulatedDevice(
        config, ScriptedDut(isr_delay=(10, 20), isr_length=(5, 10)), link=link, max_cycles=22000
    )
    device.run()
    received = bytes(link.received)
    sump_start = received.index(SUMP_ID_REPLY)

    probe = StreamParser(version=GATEWARE_VERSION)
    probe.feed(received[:sump_start])
    parser = Identity.from_reply(dict(probe.replies)[Command.IDENTIFY]).parser()
    events = Events.concatenate([parser.feed(received[:sump_start]), parser.finish()])
    stats = parser.stats
    assert (stats.segments_bad, stats.holes, stats.bytes_skipped) == (0, 0, 0)
    replies = dict(parser.replies)
    status = StatusReply.from_bits(int.from_bytes(replies[Command.STATUS], "little"))
    assert status.capturing == 1 and status.lost == 0
    assert not (events.source == Source.LOSS).any()
    # IRQ edges all along, from before the noise to the STATUS after it.
    irq_stamps = events.stamp[events.source == Source.IRQ]
    assert irq_stamps.min() < 7000 and irq_stamps.max() > 16500
    assert len(irq_stamps) >= 2 * (16500 - 7000) // irq.period
    # The noise reached the command processor (its unknown opcodes answered, SUMP's ID among
    # them), SUMP's RESET bytes did not.
    unknown = [payload[0] for opcode, payload in parser.replies if opcode == ord("?")]
    assert SumpCommand.ID in unknown and SumpCommand.RESET not in unknown
    assert Command.STOP in dict(parser.replies)


# --- Stock sigrok-cli (driver ols) against the simulated SoC and appliance --------------------
#
# libserialport refuses a pty (sigrok bug 1642); sim/pty_shim.c, preloaded into sigrok-cli,
# answers its sysfs lookup and its modem-line ioctls (see the file).

IRQ_PERIOD, IRQ_WIDTH = 2000, 100


@pytest.fixture(scope="module")
def shim(tmp_path_factory):
    source = ROOT / "sim" / "pty_shim.c"
    library = tmp_path_factory.mktemp("sump") / "pty_shim.so"
    subprocess.run(
        [
            "gcc",
            "-shared",
            "-fPIC",
            "-O2",
            "-Wall",
            "-Werror",
            "-o",
            str(library),
            str(source),
            "-ldl",
        ],
        check=True,
    )
    return library


def drain(pty, quiet=0.2):
    """Reads the pty until it has been quiet for ``quiet`` seconds."""
    with open_transport(pty, timeout=quiet) as port:
        while port.read(4096):
            pass


def assert_quiet(pty, quiet=0.5):
    """Nothing more comes from the appliance within ``quiet`` seconds."""
    with open_transport(pty, timeout=quiet) as port:
        left = port.read(4096)
    assert not left, f"{len(left)}+ bytes still came after sigrok-cli ended"


def sigrok(shim, pty, *args, samples=None, output=None, attempts=3, drain_first=True, refused=None):
    """Runs sigrok-cli on the simulated appliance; returns its output.

    The ols driver gives a device 10 ms to answer ID when probing and ends a readback after
    30 ms without a byte; the simulation runs about 1000 times slower than a board, so on a
    loaded machine it can miss these windows. Such a run (no device found, or fewer samples
    than asked for) is repeated; any other failure is not. ``refused``, a list, gets the
    number of runs that found no device."""
    count = 0
    for _ in range(attempts):
        if drain_first:
            drain(pty)
        result = subprocess.run(
            ["sigrok-cli", "-d", f"ols:conn={pty}", *args],
            env={**os.environ, "LD_PRELOAD": str(shim)},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            errors="replace",
            timeout=60,
        )
        # A capture says so; a scan lists no device.
        not_found = "No devices found" in result.stdout or (
            "--scan" in args and "devices were found" not in result.stdout
        )
        count += not_found
        late = not_found or (
            samples is not None and result.returncode == 0 and os.path.getsize(output) < 4 * samples
        )
        if not late:
            break
    if refused is not None:
        refused.append(count)
    assert result.returncode == 0, result.stdout
    return result.stdout


def pin_changes(words):
    """(sample index, pins) at every change of D0..D15, STROBE and IRQ."""
    pins = [word & 0x3FFFF for word in words]
    return [
        (index, value) for index, value in enumerate(pins) if index and value != pins[index - 1]
    ]


def truth_changes(path):
    """(cycle, pins) at every change of the same pins, from the harness's ground truth."""
    gpio = irq = 0
    changes = []
    for line in open(path):
        fields = line.split()
        if len(fields) < 3 or fields[1] not in ("gpio", "irq"):
            continue
        if fields[1] == "gpio":
            gpio = int(fields[2], 16) & 0x1FFFF
        else:
            irq = int(fields[2])
        pins = gpio | irq << 17
        if not changes or changes[-1][1] != pins:
            changes.append((int(fields[0]), pins))
    return changes


@pytest.mark.verilator
def test_sigrok_cli_captures_the_simulated_appliance(shim, tmp_path):
    build = build_soc(
        SuiteSettings(tests="IL_A", samples=2000),
        build_dir=ROOT / "firmware" / "suite" / "build" / "pytest-sump",
    )
    truth = tmp_path / "truth.txt"
    with SocSimulation(build, truth=truth) as sim:
        # latscope's own protocol first: the IRQ generator, which the DUT's ISR answers.
        with Device(open_transport(sim.pty)) as device:
            device.identify()
            device.configure_irq(IrqSettings(period=IRQ_PERIOD, width=IRQ_WIDTH))

        scan = sigrok(shim, sim.pty, "--scan")
        assert "ols - latscope" in scan and "with 22 channels" in scan, scan

        sim.release_dut()
        deadline = time.monotonic() + 30
        while "IL-a" not in sim.console_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.1)
        # Every cycle (100 MHz = the simulated clock), the whole sample memory.
        plain = tmp_path / "plain.bin"
        sigrok(
            shim,
            sim.pty,
            "--config",
            "samplerate=100m",
            "--samples",
            "4096",
            "-O",
            "binary",
            "-o",
            str(plain),
            samples=4096,
            output=plain,
        )
        # Every 10th cycle, run-length encoded: many more samples than the memory holds.
        rle = tmp_path / "rle.bin"
        sigrok(
            shim,
            sim.pty,
            "--config",
            "samplerate=10m:rle=on",
            "--samples",
            "40000",
            "-O",
            "binary",
            "-o",
            str(rle),
            samples=40000,
            output=rle,
        )
        # Triggered on the IRQ output (channel 17) going high, a quarter before the trigger.
        triggered = tmp_path / "triggered.bin"
        sigrok(
            shim,
            sim.pty,
            "--config",
            "samplerate=100m:captureratio=25",
            "--triggers",
            "17=1",
            "--samples",
            "4096",
            "-O",
            "binary",
            "-o",
            str(triggered),
            samples=4096,
            output=triggered,
        )
        # latscope's protocol works again afterwards.
        drain(sim.pty)
        with Device(open_transport(sim.pty)) as device:
            assert device.identify().board == "verilator-soc"
    assert sim.summary.get("end") == "signal"

    # The plain capture is the pins exactly: every change of the markers and of the IRQ
    # output, cycle for cycle, as the harness logged them (same delay for every channel).
    words = np.fromfile(plain, "<u4").tolist()
    assert len(words) == 4096
    captured = pin_changes(words)
    strobe = [word >> 16 & 1 for word in words]
    assert len(runs(strobe)) >= 3, "no markers in the capture"
    logged = truth_changes(truth)

    def logged_window(offset):
        return [
            (cycle - offset, pins)
            for cycle, pins in logged
            if captured[0][0] <= cycle - offset < len(words)
        ]

    # Where in the log the capture is: the offsets that put its first change on a logged one
    # with the same pins; one must reproduce every change. (The suite's markers repeat every
    # 128 IRQs, so several places in the log may match.)
    matches = [
        cycle - captured[0][0]
        for cycle, pins in logged
        if pins == captured[0][1] and logged_window(cycle - captured[0][0]) == captured
    ]
    assert matches, f"capture not found in the log: {captured[:8]}"

    words = np.fromfile(triggered, "<u4").tolist()
    irq = [word >> 17 & 1 for word in words]
    # The trigger sample is the 1025th: the IRQ output is high there, in a pulse that it
    # usually starts (unless the pre-trigger part filled up during a pulse).
    assert len(words) == 4096 and irq[1024] == 1
    start = end = 1024
    while irq[start - 1]:
        start -= 1
    while irq[end]:
        end += 1
    assert end - start == IRQ_WIDTH

    # The RLE capture: 40000 samples; the IRQ output keeps its period and width (in samples
    # of 10 cycles), and the marker values are the firmware's.
    words = np.fromfile(rle, "<u4").tolist()
    assert len(words) == 40000
    irq_runs = runs([word >> 17 & 1 for word in words])[1:-1]
    assert len(irq_runs) >= 100
    assert all(
        length == (IRQ_WIDTH if level else IRQ_PERIOD - IRQ_WIDTH) // 10
        for level, length in irq_runs
    )
    marker_values = {pins & 0x1FFFF for _, pins in logged}
    assert {word & 0x1FFFF for word in words} <= marker_values


@pytest.mark.verilator
@pytest.mark.parametrize("count", [2048, 40000], ids=["below-memory", "cap"])
def test_sigrok_cli_rle_captures_back_to_back_then_scan(shim, tmp_path, count):
    """Two RLE captures, then a scan, with nothing drained in between.

    Below the memory size (2048 samples) the readback ends where sigrok's ols driver stops
    reading (its sample count), so no byte is left over and every command succeeds at once.

    At or above it (40000 samples: the driver sends only the memory size, its cap) every
    entry is sent, and the rest of the readback keeps coming after the driver has its
    samples (libsigrok 0.5.2 sends no RESET then). The port drops what came while it was
    closed (sim/pty_shim.c, as a real serial port does), the next command's RESET stops the
    readback at once, and only the bytes already on their way ahead of it (the simulation
    is slow: on a board the readback is long over) can spoil that one command's ID reply:
    its next attempt succeeds, and then nothing more comes."""
    build = build_soc(
        SuiteSettings(tests="IL_A", samples=2000),
        build_dir=ROOT / "firmware" / "suite" / "build" / "pytest-sump",
    )
    refused = []
    with SocSimulation(build) as sim:
        with Device(open_transport(sim.pty)) as device:
            device.identify()
            device.configure_irq(IrqSettings(period=IRQ_PERIOD, width=IRQ_WIDTH))
        sim.release_dut()
        for n in range(2):
            rle = tmp_path / f"rle{n}.bin"
            sigrok(
                shim,
                sim.pty,
                "--config",
                "samplerate=10m:rle=on",
                "--samples",
                str(count),
                "-O",
                "binary",
                "-o",
                str(rle),
                samples=count,
                output=rle,
                drain_first=False,
                refused=refused,
            )
            if count < 4096:
                assert_quiet(sim.pty)
            words = np.fromfile(rle, "<u4").tolist()
            assert len(words) == count
            # The IRQ output's pulses (10 samples of 10 cycles each, every 200 samples)
            # were run-length encoded: a few entries stood for the samples.
            irq_runs = runs([word >> 17 & 1 for word in words])[1:-1]
            assert len(irq_runs) >= 15
            assert all(
                length == (IRQ_WIDTH if level else IRQ_PERIOD - IRQ_WIDTH) // 10
                for level, length in irq_runs
            )
        scan = sigrok(shim, sim.pty, "--scan", drain_first=False, refused=refused)
        assert "ols - latscope" in scan and "with 22 channels" in scan, scan
        # The scan's RESET stopped any readback: nothing more comes.
        assert_quiet(sim.pty)
    # The first capture finds the device at once; after a capture, at most one refusal
    # (none below the memory size, barring a missed 10 ms window on a loaded machine).
    assert refused[0] == 0 and max(refused) <= 1, refused
