"""The reference kernel's scheduling rules (C unit tests on the host port), the porting-layer
smoke test on the host kernel and on Linux pthreads, and the RV32 cross-build.

`make -C firmware test` builds and runs every C test program; each prints one line per case
("PASS name" / "FAIL name: where: what"), then "SUMMARY program: passed=N failed=M". These
tests parse that output, so a failing C case fails here with its own message.
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from support.bringup import bringup_build

FIRMWARE = Path(__file__).resolve().parents[2] / "firmware"

# Every program `make test` runs, with the cases each must report (a case that silently
# disappeared from a program must not go unnoticed).
EXPECTED_CASES = {
    "build/host/test_sched": {
        "preempt_on_create",
        "preempt_on_give",
        "no_preempt_by_lower",
        "fifo_within_priority",
        "yield_rotates_equals",
        "yield_never_to_lower",
        "preempted_resumes_first",
        "round_robin_on_tick",
        "round_robin_off",
        "round_robin_alone",
        "priority_change",
        "all_priority_levels",
        "suspend_resume",
        "delete_threads",
        "isr_give_deferred_switch",
        "irq_pending_while_masked",
        "tick_wakes_and_preempts",
        "timeouts",
        "timeout_cancelled_by_give",
        "deadlock_is_reported",
    },
    "build/host/test_sync": {
        "waitq_priority_order",
        "counting_semaphore",
        "sem_delete_wakes_waiters",
        "pi_basic",
        "pi_transitive",
        "pi_nested_mutexes",
        "pi_undone_by_timeout",
        "pi_follows_waiter_priority",
        "mutex_recursion_and_ownership",
        "delete_owner_releases_mutex",
        "delete_waiter_undoes_inheritance",
        "mutex_delete_wakes_waiters",
    },
    "build/host/test_msgq": {
        "sender_blocks_when_full",
        "receiver_blocks_when_empty",
        "fifo_and_timeouts",
        "blocked_senders_in_priority_order",
        "rendezvous_queue",
        "delete_wakes_waiters",
        "send_from_isr",
    },
    "build/host/bench_smoke": {
        "semaphores",
        "thread_handshake",
        "mutexes",
        "message_queues",
        "thread_control",
        "time_source",
        "preemption_integrity",
        "interrupts",
    },
    "build/linux/bench_smoke": {
        "semaphores",
        "thread_handshake",
        "mutexes",
        "message_queues",
        "thread_control",
        "time_source",
        "preemption_integrity",
        "interrupts",
    },
}

CASE_LINE = re.compile(r"^(PASS|FAIL) (\w+)(?::\s*(.*))?$")
SUMMARY_LINE = re.compile(r"^SUMMARY (\w+): passed=(\d+) failed=(\d+)$")


def parse_run(output):
    """{program: {"cases": {name: (status, detail)}, "summary": (passed, failed) | None}}."""
    programs = {}
    current = None
    for line in output.splitlines():
        if line.startswith("RUN "):
            current = programs.setdefault(line[4:].strip(), {"cases": {}, "summary": None})
        elif current is not None and (match := CASE_LINE.match(line)):
            current["cases"][match[2]] = (match[1], match[3] or "")
        elif current is not None and (match := SUMMARY_LINE.match(line)):
            current["summary"] = (int(match[2]), int(match[3]))
    return programs


@pytest.fixture(scope="module")
def native_run():
    if shutil.which("gcc") is None or shutil.which("make") is None:
        pytest.fail("gcc and make are needed (make setup installs them)")
    result = subprocess.run(
        ["make", "-C", str(FIRMWARE), "--no-print-directory", "test"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    return result, parse_run(result.stdout)


def test_parser_reads_cases_and_summaries():
    programs = parse_run(
        'RUN a/b\nPASS one\nFAIL two: x.c:3: log "A"\n'
        "SUMMARY b: passed=1 failed=1\nRUN c\nSUMMARY c: passed=0 failed=0\n"
    )
    assert programs == {
        "a/b": {
            "cases": {"one": ("PASS", ""), "two": ("FAIL", 'x.c:3: log "A"')},
            "summary": (1, 1),
        },
        "c": {"cases": {}, "summary": (0, 0)},
    }


def test_every_program_ran_to_its_summary(native_run):
    result, programs = native_run
    assert set(programs) == set(EXPECTED_CASES), result.stdout[-3000:] + result.stderr[-3000:]
    for name, program in programs.items():
        assert program["summary"] is not None, f"{name} ended without a summary (crash?)"


def test_no_case_failed(native_run):
    result, programs = native_run
    failures = [
        f"{prog}: {case}: {detail}"
        for prog, program in programs.items()
        for case, (status, detail) in program["cases"].items()
        if status == "FAIL"
    ]
    assert failures == []
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


@pytest.mark.parametrize("program", sorted(EXPECTED_CASES))
def test_program_reports_all_its_cases(native_run, program):
    _, programs = native_run
    cases = programs[program]["cases"]
    assert set(cases) == EXPECTED_CASES[program]
    assert programs[program]["summary"] == (len(cases), 0)


@pytest.fixture(scope="module")
def sim_build():
    if shutil.which("riscv64-unknown-elf-gcc") is None:
        pytest.fail("riscv64-unknown-elf-gcc is needed (make setup installs it)")
    if not (FIRMWARE.parent / "sim" / "firmware" / "link.ld").exists():
        pytest.fail("the SoC runtime (sim/firmware) is not there")
    result = subprocess.run(
        ["make", "-C", str(FIRMWARE), "--no-print-directory", "sim"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return FIRMWARE / "build" / "sim"


def test_rv32_port_cross_compiles_and_links(sim_build):
    elf = sim_build / "bench_smoke.elf"
    header = subprocess.run(
        ["riscv64-unknown-elf-readelf", "-h", str(elf)], capture_output=True, text=True, check=True
    ).stdout
    assert "ELF32" in header and "RISC-V" in header
    # _start sits at the reset vector and the trap entry is linked in.
    symbols = subprocess.run(
        ["riscv64-unknown-elf-nm", str(elf)], capture_output=True, text=True, check=True
    ).stdout
    addresses = {
        parts[2]: int(parts[0], 16)
        for parts in (line.split() for line in symbols.splitlines())
        if len(parts) == 3
    }
    assert addresses["_start"] == 0x1000_0000
    for symbol in ("k_trap_entry", "arch_switch", "k_arch_trap", "bench_run"):
        assert symbol in addresses
    assert (
        addresses["__bss_end"] <= addresses["__noinit_end"] <= 0x1000_0000 + 256 * 1024 - 16 * 1024
    )


@pytest.mark.verilator
def test_rv32_port_runs_on_the_simulated_soc(sim_build):
    """The smoke test on the Verilated SoC (VexRiscv IMAC), with the harness's IRQ driver on
    line 0: timer preemption, context switches from ISR exit, the external-interrupt path
    (mask/pending CSRs, IRQ_PENDING acknowledge). Builds the simulator if needed (about
    30 s; make -C sim, under its build lock: support.bringup)."""
    binary, _ = bringup_build("VexRiscv_IMAC")
    result = subprocess.run(
        [
            str(binary),
            "--max-cycles",
            "60000000",
            "--irq-period",
            "20011",
            "--irq-jitter",
            "997",
            str(sim_build / "bench_smoke_irq.elf"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    console = result.stdout + result.stderr
    cases = {
        match[2]: match[1] for line in console.splitlines() if (match := CASE_LINE.match(line))
    }
    assert cases == {
        name: "PASS"
        for name in (
            "semaphores",
            "thread_handshake",
            "mutexes",
            "message_queues",
            "thread_control",
            "time_source",
            "preemption_integrity",
            "external_interrupts",
        )
    }, console[-3000:]
    assert "SUMMARY bench_smoke: passed=8 failed=0" in console
    assert re.search(r"SIM end=exit code=0 ", console), console[-3000:]
    # The churn was really interrupted by ticks that switched to another thread.
    wakeups = int(re.search(r"tick wake-ups during the churn: (\d+)", console)[1])
    assert wakeups > 0
