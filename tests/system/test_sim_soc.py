"""The Verilator full-system simulation in bring-up mode (no appliance): the harness drives
the IRQ line, and its ground-truth log is checked against what the firmware did.

Builds ``sim/`` for both CPU variants (reused when up to date; about 30 s each from
scratch). A missing Verilator, RISC-V toolchain or VexRiscv package fails the build, and
so these tests, with make's message: nothing is skipped.
"""

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import serial

from support.bringup import CPUS, bringup_build

pytestmark = pytest.mark.verilator


# Bring-up IRQ line used for irq_test: rising edges at START + k*PERIOD, WIDTH cycles high.
IRQ_START, IRQ_PERIOD, IRQ_WIDTH = 20_000, 1_500, 8
IRQ_TEST_COUNT = 16  # irq_test.c's IRQ_TEST_COUNT
TRACE_BASE = 0xF000_0100


@pytest.fixture(scope="module", params=CPUS)
def build(request):
    """(simulator binary, firmware directory) of one CPU's bring-up build."""
    return bringup_build(request.param)


def run_sim(build, program, tmp_path, *options, expect_status=0):
    binary, firmware = build
    truth, console = tmp_path / f"{program}.truth", tmp_path / f"{program}.console"
    result = subprocess.run(
        [
            str(binary),
            "--truth",
            str(truth),
            "--console",
            str(console),
            *map(str, options),
            str(firmware / f"{program}.elf"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == expect_status, result.stdout + result.stderr
    return summary(result.stdout), read_truth(truth), console.read_text()


def summary(stdout):
    """The harness's 'SIM key=value ...' line as a dict."""
    line = next(line for line in stdout.splitlines() if line.startswith("SIM "))
    return dict(field.split("=", 1) for field in line.split()[1:])


def read_truth(path):
    """Ground-truth log lines as tuples (cycle, event, *int fields), in time: not the
    ``takeable`` counts the harness writes after the run (test_cpu_truth.py reads those)."""
    events = []
    for line in Path(path).read_text().splitlines():
        if line.startswith("#"):
            continue
        cycle, event, *fields = line.split()
        if event == "takeable":
            continue
        events.append((int(cycle), event, *(int(field, 0) for field in fields)))
    cycles = [event[0] for event in events]
    assert cycles == sorted(cycles), "ground-truth lines out of cycle order"
    return events


def of(events, kind):
    return [event for event in events if event[1] == kind]


def edges(events, line, level):
    return [cycle for cycle, kind, *value in events if kind == line and value == [level]]


def test_hello(build, tmp_path):
    sim, events, console = run_sim(build, "hello", tmp_path, "--max-cycles", 100_000)

    assert console.startswith("hello from the latscope SoC\n")
    assert sim["end"] == "exit" and sim["code"] == "0"
    # One store per marker, strobe (bit 16) toggling, in program order.
    assert [value for _, _, value in of(events, "gpio")] == [
        0x1_0001,
        0x0_1234,
        0x1_BEEF,
        0x0_FFFF,
        0x1_0000,
    ]
    traces = of(events, "trace")
    assert [(address, value, sel) for _, _, address, value, sel in traces[:4]] == [
        (TRACE_BASE + 4 * n, 0xCAFE_0000 + n, 0xF) for n in range(4)
    ]
    # mtime counts cycles from reset release: the value read precedes the store of it.
    cycle, _, address, mtime, _ = traces[4]
    assert address == TRACE_BASE + 0x80 and 0 < cycle - mtime <= 16
    assert len(traces) == 5
    assert of(events, "irq") == [] and of(events, "pending") == []
    exit_cycle, kind, code = events[-1]
    assert (kind, code) == ("exit", 0)
    assert int(sim["cycles"]) == exit_cycle + 1  # cycles 0 .. exit_cycle were simulated


@pytest.mark.parametrize("jitter", [0, 97])
def test_irq_test(build, tmp_path, jitter):
    sim, events, console = run_sim(
        build,
        "irq_test",
        tmp_path,
        "--max-cycles",
        400_000,
        "--irq-start",
        IRQ_START,
        "--irq-period",
        IRQ_PERIOD,
        "--irq-width",
        IRQ_WIDTH,
        "--irq-jitter",
        jitter,
    )
    assert sim["end"] == "exit" and sim["code"] == "0", console
    assert f"irq_test: {IRQ_TEST_COUNT} external IRQs, 1 timer IRQ" in console

    traces = [
        (cycle, address - TRACE_BASE, value) for cycle, _, address, value, _ in of(events, "trace")
    ]
    ((armed, _, _),) = [t for t in traces if t[1:] == (0x08, 0x1_0000)]
    assert armed < IRQ_START

    # The IRQ line: rising edges at the programmed period (plus jitter), WIDTH cycles high.
    rises, falls = edges(events, "irq", 1), edges(events, "irq", 0)
    assert len(rises) >= IRQ_TEST_COUNT
    for k, rise in enumerate(rises):
        base = IRQ_START + k * IRQ_PERIOD
        assert base <= rise < base + max(jitter, 1)
        if jitter == 0:
            assert rise == base
        assert falls[k] == rise + IRQ_WIDTH
    # IRQ_PENDING is set in the cycle after a rising edge (once the firmware stops
    # acknowledging, it stays set), the core's mip.MEIP two cycles after the latch.
    pending = edges(events, "pending", 1)
    assert len(pending) > IRQ_TEST_COUNT
    assert pending == [rise + 1 for rise in rises[: len(pending)]]
    assert edges(events, "meip", 1) == [cycle + 2 for cycle in pending]

    # Each IRQ k: handler entry marker after the edge, acknowledge store (which clears the
    # latch in its own ACK cycle), exit marker; no main-loop marker while the handler runs.
    entries = [t for t in traces if t[1] == 0 and t[2] >> 12 == 2]
    exits = [t for t in traces if t[1] == 0 and t[2] >> 12 == 3]
    acks = [cycle for cycle, _, value in of(events, "irqack") if value == 1]
    gpio_cycles = [cycle for cycle, *_ in of(events, "gpio")]
    latencies = []
    for k in range(IRQ_TEST_COUNT):
        entry, _, value = entries[k]
        assert value == 0x2000 | k and exits[k][2] == 0x3000 | k
        assert rises[k] < entry < acks[k] < exits[k][0]
        if k + 1 < len(rises):
            assert exits[k][0] < rises[k + 1]
        assert not [c for c in gpio_cycles if entry < c < exits[k][0]]
        latencies.append(entry - rises[k])
    assert edges(events, "pending", 0)[:IRQ_TEST_COUNT] == acks
    # Latency from the IRQ edge to the handler's first store: the first includes the
    # instruction-cache misses of the trap path; later ones are warm.
    assert 10 <= min(latencies) and max(latencies) <= 400
    warm = latencies[1:]
    assert max(warm) - min(warm) <= (4 if jitter == 0 else 12), latencies
    assert max(warm) <= 120

    # The main loop: marker n = (n & 0xffff) | strobe, the strobe toggling every store.
    gpio = [value for _, _, value in of(events, "gpio")]
    assert gpio == [(n & 0xFFFF) | ((n + 1) & 1) << 16 for n in range(len(gpio))]
    assert f"{len(gpio)} main-loop markers" in console

    # The machine timer: armed for mtime >= T; MTIP rises exactly in cycle T.
    ((_, _, when),) = [t for t in traces if t[1] == 0x04]
    (mtip,) = edges(events, "mtip", 1)
    assert mtip & 0xFFFF_FFFF == when
    ((timer_entry, _, _),) = [t for t in traces if t[1] == 0 and t[2] == 0x4000]
    assert 10 <= timer_entry - mtip <= 120
    assert timer_entry < edges(events, "mtip", 0)[0]
    assert events[-1][1:] == ("exit", 0)


def test_max_cycles_and_bad_firmware(build, tmp_path):
    # irq_test with no IRQ line waits forever: the harness stops it at --max-cycles.
    sim, events, _ = run_sim(build, "irq_test", tmp_path, "--max-cycles", 5000, expect_status=124)
    assert sim == {**sim, "end": "timeout", "cycles": "5000"}
    assert all(cycle < 5000 for cycle, *_ in events)

    binary, _ = build
    bogus = tmp_path / "bogus.elf"
    bogus.write_bytes(b"\x7fELF" + bytes(60))
    result = subprocess.run([str(binary), str(bogus)], capture_output=True, text=True)
    assert result.returncode == 125 and "not a little-endian ELF32" in result.stderr


def test_hold_cpu_until_sigusr1(build, tmp_path):
    binary, firmware = build
    truth = tmp_path / "hold.truth"
    process = subprocess.Popen(
        [
            str(binary),
            "--hold-cpu",
            "--pty-poll",
            "256",
            "--truth",
            str(truth),
            "--console",
            str(tmp_path / "c"),
            "--max-cycles",
            "200000000",
            str(firmware / "hello.elf"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.3)
    process.send_signal(signal.SIGUSR1)
    stdout, _ = process.communicate(timeout=60)
    assert process.returncode == 0, stdout
    events = read_truth(truth)
    # The CPU probe's lines aside (the interrupt is masked from cycle 0), cpu_run is first.
    (released, kind), *rest = [event for event in events if event[1] != "masked"]
    # Released at a pty poll (every 256 cycles); rtl/top.v registers the hold: one cycle on.
    assert kind == "cpu_run" and released > 0 and (released - 1) % 256 == 0
    # Every store happens after the release; mtime kept counting from reset release.
    assert all(cycle > released for cycle, *_ in rest)
    cycle, _, _, mtime, _ = of(events, "trace")[4]
    assert released < mtime < cycle


def start_pty_sim(build, *options):
    binary, firmware = build
    process = subprocess.Popen(
        [str(binary), "--pty", *map(str, options), str(firmware / "hello.elf")],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    line = process.stdout.readline()
    assert line.startswith("PTY /dev/"), line
    return process, line.split()[1]


def stop_sim(process):
    process.send_signal(signal.SIGTERM)
    stdout, _ = process.communicate(timeout=30)
    assert process.returncode == 128 + signal.SIGTERM
    return stdout


def test_pty_bridge_echo(build):
    """Bring-up mode loops uart_rx back to uart_tx: bytes the host writes to the pty are
    serialised onto uart_rx, decoded from uart_tx and come back through the pty."""
    process, path = start_pty_sim(build, "--linger", 10**12, "--uart-divisor", 4)
    try:
        payload = os.urandom(1000) + bytes(range(256))
        with serial.Serial(path, timeout=0.1) as port:
            port.write(payload)
            received = b""
            deadline = time.monotonic() + 30
            while len(received) < len(payload) and time.monotonic() < deadline:
                received += port.read(len(payload) - len(received))
        assert received == payload
    finally:
        stdout = stop_sim(process)
    uart = dict(field.split("=") for field in stdout.split("UART ")[1].split())
    assert uart == {
        "tx_bytes": "1256",
        "rx_bytes": "1256",
        "framing_errors": "0",
        "dropped": "0",
        "backlog": "0",
    }
    assert summary(stdout)["end"] == "signal"


def test_pty_bridge_never_blocks(build):
    """A host that writes but never reads: the echoed bytes pile up in the harness's
    backlog (beyond the kernel's pty buffers) while the simulation runs on."""
    process, path = start_pty_sim(build, "--linger", 10**12, "--uart-divisor", 2)
    sent = 150_000
    try:
        with serial.Serial(path, timeout=0.1, write_timeout=60) as port:
            port.write(bytes(sent))  # returns once the harness has taken every byte
            port.flush()
            time.sleep(0.5)
    finally:
        stdout = stop_sim(process)
    uart = {
        key: int(value)
        for key, value in (field.split("=") for field in stdout.split("UART ")[1].split())
    }
    assert uart["rx_bytes"] == sent and uart["framing_errors"] == 0
    assert uart["backlog"] > 0 and uart["dropped"] == 0
    # All but the few bytes still being serialised came back out of uart_tx.
    assert sent - 300 <= uart["tx_bytes"] + uart["backlog"] <= sent
    assert int(summary(stdout)["cycles"]) > sent * 20
