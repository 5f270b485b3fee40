"""Where interrupts met the code: the ground-truth log's ``interrupt`` and ``masked`` lines
(sim/README.md, "Ground-truth log"), read by ``latscope.simulated.cpu_truth``, and the
firmware ELF's functions, lines and instructions (``latscope.simulated.code_map``).

* A program with a known answer (sim/firmware/irq_masked.c, masked_spin.S) runs in bring-up
  mode while the harness fires its IRQ line, on both CPUs, sparse and dense: every
  interrupt returns into its loop or to the instruction that masks; the log's mcause and
  mepc are those the handler itself read; each interrupt masks until its handler's mret; no
  interrupt is taken in a masked cycle; the masked stretches start and end at the labels,
  as long as the instructions run in them.
* The ELF mapping names the labels' function and source line, lists the instructions of
  every function as objdump decodes them (2- and 4-byte RVC instructions, rv32im) and
  gives the source line of every row of the line table as readelf decodes it.
* A short run of the whole suite with the appliance: every interrupt returns to an
  instruction of a function of the firmware and masks until the kernel's trap returns.

Builds ``sim/`` for both CPUs (as test_sim_soc.py) and the appliance-enabled SoC with
a short suite (as test_ground_truth.py).
"""

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from latscope.analysis.pairing import SampleTable
from latscope.analysis.where import where_of
from latscope.capture.file import load_capture
from latscope.capture.suite import DEMO_IRQ, capture_suite
from latscope.report.results import load_tables, results
from latscope.report.worst_samples import worst_of
from latscope.simulated.code_map import CodeMap
from latscope.simulated.control_flow import callees, flow, loop_instructions, successors
from latscope.simulated.coverage import coverage, masked_regions
from latscope.simulated.cpu_truth import MCAUSE_EXTERNAL, MCAUSE_TIMER, read_cpu_truth
from latscope.simulated.soc import ROOT, SuiteSettings, build_soc
from support.bringup import CPUS, bringup_build
from support.results_schema import problems

pytestmark = pytest.mark.verilator

SIM = ROOT / "sim"
FIRMWARE = SIM / "firmware"
#: The harness's IRQ line (bring-up mode): sparse, about one interrupt every 7 rounds of
#: masked_spin, and dense, a new edge about when the handler returns.
IRQS = {"sparse": (331, 64, 8), "dense": (97, 32, 4)}
TRACE_BASE = 0xF000_0100
RESET_VECTOR = 0x1000_0000
#: The RISC-V binutils (scripts/setup.sh installs them with the cross compiler).
CROSS = "riscv64-unknown-elf-"


@pytest.fixture(scope="module", params=CPUS)
def build(request):
    """(simulator binary, firmware directory) of one CPU's bring-up build."""
    return bringup_build(request.param)


class Run:
    """irq_masked run once under one IRQ setting: its truth, ELF and the handler's reports."""

    def __init__(self, build, irq, scratch):
        binary, firmware = build
        period, jitter, width = IRQS[irq]
        self.irq = irq
        self.elf = firmware / "irq_masked.elf"
        log, console = scratch / "irq_masked.truth", scratch / "console"
        result = subprocess.run(
            [
                str(binary),
                "--truth",
                str(log),
                "--console",
                str(console),
                "--irq-period",
                str(period),
                "--irq-jitter",
                str(jitter),
                "--irq-width",
                str(width),
                "--max-cycles",
                "5000000",
                str(self.elf),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        self.truth = read_cpu_truth(log)
        self.code = CodeMap(self.elf)
        taken, self.rounds = re.search(
            r"irq_masked: (\d+) interrupts in (\d+) rounds", console.read_text()
        ).groups()
        self.handled, self.rounds = int(taken), int(self.rounds)
        lines = [line.split() for line in log.read_text().splitlines()[1:]]
        # What trap_handler stored: mcause to TRACE+0, the mepc it was given to TRACE+4.
        stores = [
            (int(fields[2], 16), int(fields[3], 16)) for fields in lines if fields[1] == "trace"
        ]
        self.reported = list(
            zip(
                *(
                    [value for address, value in stores if address == word]
                    for word in (TRACE_BASE, TRACE_BASE + 4)
                )
            )
        )
        self.meip_rises = np.array(
            [int(fields[0]) for fields in lines if fields[1:] == ["meip", "1"]], dtype=np.int64
        )
        self.handler_stores = np.array(
            [int(fields[0]) for fields in lines if fields[1:3] == ["trace", f"0x{TRACE_BASE:08x}"]],
            dtype=np.int64,
        )

    def address(self, label):
        return self.code.symbol_address(label)

    def run_masked(self):
        """The instructions of masked_spin that run masked: after masked_begin's csrci up to
        masked_end's csrsi, and after masked_tail's csrci."""
        begin, end, tail = (
            self.address(label) for label in ("masked_begin", "masked_end", "masked_tail")
        )
        _, function_end = self.code.function_range("masked_spin")
        return np.concatenate(
            [
                self.code.instructions(begin, end)[1:],
                [end],
                self.code.instructions(tail, function_end)[1:],
            ]
        )


@pytest.fixture(scope="module", params=list(IRQS))
def run(request, build, tmp_path_factory):
    return Run(build, request.param, tmp_path_factory.mktemp(f"irq_masked-{request.param}"))


def test_every_interrupt_returns_into_the_loop_or_to_the_masking_instruction(run):
    interrupts = run.truth.interrupts
    assert len(interrupts) == run.handled >= 30
    assert np.all(interrupts.causes == MCAUSE_EXTERNAL)
    # No interrupt can come before an instruction that runs masked.
    allowed = set(run.code.function_instructions("masked_spin")) - set(run.run_masked())
    met = set(interrupts.return_addresses.tolist())
    assert met <= allowed, sorted(hex(address) for address in met - allowed)
    # Both instructions of the spin loop (addi, bnez) are met: not passed by no interrupt.
    loop = run.code.instructions(run.address("spin"), run.address("masked_tail"))[:2]
    assert coverage(interrupts.return_addresses, loop).met == 2


def test_interrupts_meet_only_takeable_instructions_and_a_dense_irq_meets_them_all(run):
    """The log's ``takeable`` instructions (those an interrupt can meet, sim/README.md) of
    masked_spin are its masking csrci at masked_begin, the loop from spin to the round's
    branch and the final csrci at masked_tail: not the ones that run masked, not the one
    after the csrsi (still in the pipeline when the interrupt is taken), not the first (it
    runs while the CPU is still masked from reset). Every interrupt met a takeable
    instruction, and the dense IRQ met every takeable one but the last (it runs once)."""
    takeable = run.truth.takeable
    assert len(takeable) == len(run.truth.takeable_cycles) and np.all(np.diff(takeable) > 0)
    begin, spin, tail = (run.address(label) for label in ("masked_begin", "spin", "masked_tail"))
    loop = run.code.instructions(spin, tail)
    expected = np.concatenate([[begin], loop, [tail]])
    spin_function = run.code.function_instructions("masked_spin")
    assert np.array_equal(np.intersect1d(takeable, spin_function), expected)
    met = run.truth.interrupts.return_addresses
    assert np.all(np.isin(met, takeable))
    if run.irq == "dense":
        assert coverage(met, expected[:-1]).fraction == 1.0


def test_the_log_holds_what_the_handler_read(run):
    """mcause and mepc as the trap wrote them: trap_entry reads both CSRs and trap_handler
    stores them to the trace window, one interrupt after the other."""
    interrupts = run.truth.interrupts
    assert run.reported == list(
        zip(interrupts.causes.tolist(), interrupts.return_addresses.tolist())
    )


def test_each_interrupt_masks_until_its_handler_returns(run):
    interrupts, masked = run.truth.interrupts, run.truth.masked
    trap = np.isin(masked.starts, interrupts.cycles)
    assert trap.sum() == len(interrupts)
    assert np.all(masked.start_pcs[trap] == run.address("trap_entry"))
    mret = run.code.function_instructions("trap_entry")[-1]
    assert np.all(masked.end_pcs[trap] == mret)
    # The core decides in the cycle before the trap's first: never while masked.
    assert not np.any(masked.masked_at(interrupts.cycles - 1))


def test_the_masked_stretches_are_at_the_labels_and_as_long_as_their_code(run):
    masked, interrupts = run.truth.masked, run.truth.interrupts
    begin, end = run.address("masked_begin"), run.address("masked_end")
    # From reset (the CPU starts masked) to the first round's csrsi, which first sets MIE.
    assert (masked.starts[0], masked.start_pcs[0], masked.end_pcs[0]) == (0, RESET_VECTOR, end)
    assert run.code.function_at(RESET_VECTOR) == "_start"
    rounds = (masked.start_pcs == begin) & (masked.end_pcs == end)
    trap = np.isin(masked.starts, interrupts.cycles)
    assert rounds.sum() == run.rounds - 1
    assert 1 + rounds.sum() + trap.sum() == len(masked)
    assert (masked.open_start_pc, len(masked.starts)) == (run.address("masked_tail"), len(masked))
    # A CSR instruction waits in execute until the memory and writeBack stages are empty
    # (VexRiscv's CsrPlugin: blockedBySideEffects), 2 cycles after the nops: a stretch is the
    # instructions that run masked (the nops and the csrsi) plus 2 cycles. An interrupt that
    # became pending 1 to 3 cycles before the csrci's write halted decode for up to 2 cycles
    # (the core's pipeline liberator begins to empty the pipeline, then sees MIE clear).
    executed = len(run.code.instructions(begin, end))  # the nops and the csrsi
    lengths, starts = masked.lengths[rounds], masked.starts[rounds]
    late = np.array(
        [np.any((run.meip_rises >= start - 3) & (run.meip_rises < start)) for start in starts]
    )
    assert np.all(lengths[~late] == executed + 2), np.unique(lengths[~late])
    assert np.all((lengths[late] > executed + 2) & (lengths[late] <= executed + 4))
    regions = masked_regions(masked, run.code)
    assert [
        (region.function, region.start.address, region.end.address)
        for region in regions
        if region.start.address == begin
    ] == [("masked_spin", begin, end)]


def source_line(path, text, after=None):
    """The 1-based number of the first line of ``path`` that contains ``text`` (after the
    first line containing ``after``)."""
    lines = path.read_text().splitlines()
    start = next(n for n, line in enumerate(lines) if after in line) if after else 0
    return next(n + 1 for n, line in enumerate(lines[start:], start) if text in line)


@pytest.mark.parametrize(
    "label, source, text, after, function",
    [
        ("masked_begin", "masked_spin.S", "csrci mstatus", "masked_begin:", "masked_spin"),
        ("masked_end", "masked_spin.S", "csrsi mstatus", "masked_end:", "masked_spin"),
        ("spin", "masked_spin.S", "addi t0, t0, -1", "spin:", "masked_spin"),
        # -O2: the function's first instruction is its first statement's (no prologue).
        ("trap_handler", "irq_masked.c", "SOC_REG(SOC_TRACE_BASE) = mcause", None, "trap_handler"),
    ],
)
def test_code_map_names_function_and_line(build, label, source, text, after, function):
    code = CodeMap(build[1] / "irq_masked.elf")
    where = code.locate(code.symbol_address(label))
    assert (where.function, Path(where.file).name, where.line) == (
        function,
        source,
        source_line(FIRMWARE / source, text, after),
    )


def test_code_map_names_the_trap_vectors_mret(build):
    code = CodeMap(build[1] / "irq_masked.elf")
    mret = code.locate(code.function_instructions("trap_entry")[-1])
    assert (mret.function, Path(mret.file).name, mret.line) == (
        "trap_entry",
        "start.S",
        source_line(FIRMWARE / "start.S", "mret", "call trap_handler"),
    )


def objdump_instructions(elf):
    """Instruction addresses of the ELF's code as objdump disassembles them."""
    text = subprocess.run(
        [CROSS + "objdump", "-d", str(elf)], capture_output=True, text=True, check=True
    ).stdout
    return np.array(
        [int(match, 16) for match in re.findall(r"(?m)^\s*([0-9a-f]+):\t", text)], dtype=np.int64
    )


def readelf_lines(elf):
    """{address: (file name, line)} of every row of the DWARF line table as binutils' readelf
    decodes it (the last row at an address; ends of sequences left out). Not addr2line:
    binutils 2.40's addr2line and objdump -l name the wrong file where a DWARF 5 line program
    never sets one (the default is file 1, they take 0) and give none at an address where
    one sequence ends and the next begins."""
    text = subprocess.run(
        [CROSS + "readelf", "-W", "--debug-dump=decodedline", str(elf)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = {}
    for fields in (line.split() for line in text.splitlines()):
        if len(fields) >= 3 and fields[2].startswith("0x") and fields[1] != "-":
            rows[int(fields[2], 16)] = (Path(fields[0]).name, int(fields[1]))
    return rows


#: objdump's mnemonics (aliases) by where control goes: to the target and the next
#: instruction, to the target only, to the next only (calls return), nowhere in the function.
BRANCHES = {"beq", "bne", "blt", "bge", "bltu", "bgeu", "beqz", "bnez", "blez", "bgez"}
BRANCHES |= {"bltz", "bgtz", "bgt", "ble", "bgtu", "bleu"}
JUMPS, CALLS, ENDS = {"j"}, {"jal", "jalr"}, {"ret", "jr", "mret"}


def objdump_control_flow(elf):
    """{address: (mnemonic, next address, target or None)} of the ELF's control-flow
    instructions as objdump disassembles them."""
    text = subprocess.run(
        [CROSS + "objdump", "-d", "--no-show-raw-insn", str(elf)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = re.findall(r"(?m)^\s*([0-9a-f]+):\t(\S+)\s*([^\n]*)$", text)
    found = {}
    for (address, mnemonic, operands), following in zip(rows, rows[1:] + [("0", "", "")]):
        if mnemonic in BRANCHES | JUMPS | CALLS | ENDS:
            target = re.search(r"\b([0-9a-f]+) <", operands)
            found[int(address, 16)] = (
                mnemonic,
                int(following[0], 16),
                int(target.group(1), 16) if target else None,
            )
    return found


def check_control_flow(code):
    """Every control-flow instruction's successors are where objdump says it goes."""
    objdump = objdump_control_flow(code.path)
    checked = 0
    for start, end in code.functions.values():
        for address in code.instructions(start, end).tolist():
            if address not in objdump:
                continue
            mnemonic, following, target = objdump[address]
            expected = {
                **dict.fromkeys(BRANCHES, {following, target}),
                **dict.fromkeys(JUMPS, {target}),
                **dict.fromkeys(CALLS, {following}),
                **dict.fromkeys(ENDS, set()),
            }[mnemonic]
            inside = {a for a in expected if a is not None and start <= a < end}
            assert set(successors(code, address, start, end)) == inside, (hex(address), mnemonic)
            call = flow(code.instruction_at(address)).call
            if mnemonic == "jal":
                assert address + call == target, hex(address)
            else:
                assert call is None, hex(address)
            checked += 1
    assert checked > 20


def check_against_binutils(elf):
    """Every function's instructions are objdump's, and the source line at every address of
    the line table readelf's."""
    code = CodeMap(elf)
    decoded = objdump_instructions(elf)
    assert len(code.functions) > 20
    for name, (start, end) in code.functions.items():
        expected = decoded[(decoded >= start) & (decoded < end)]
        assert np.array_equal(code.function_instructions(name), expected), name
    rows = readelf_lines(elf)
    assert len(rows) > 100
    ours = {address: code.line_at(address) for address in rows}
    assert {address: (Path(file).name, line) for address, (file, line) in ours.items()} == rows
    check_control_flow(code)
    return code


def test_instructions_and_lines_are_binutils(build):
    code = check_against_binutils(build[1] / "irq_masked.elf")
    # masked_spin's loop: the rounds, from masked_begin up to masked_tail (the spin loop
    # inside them); not its first instruction nor the tail after the last round.
    begin, tail = code.symbol_address("masked_begin"), code.symbol_address("masked_tail")
    assert np.array_equal(loop_instructions(code, "masked_spin"), code.instructions(begin, tail))
    assert len(loop_instructions(code, "trap_handler")) == 0
    assert callees(code, "masked_spin") == ["masked_spin"]
    assert {"masked_spin", "printf"} <= set(callees(code, "main"))
    lengths = set(np.diff(code.function_instructions("masked_spin")).tolist())
    assert lengths == ({2, 4} if "rv32imac" in str(build[1]) else {4})


SUITE_SAMPLES = 20


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory):
    """A short run of the whole suite on the SoC with the appliance and the demo's IRQs."""
    settings = SuiteSettings(samples=SUITE_SAMPLES)
    build = build_soc(
        settings, build_dir=ROOT / "firmware" / "suite" / "build" / "pytest-cpu-truth"
    )
    scratch = tmp_path_factory.mktemp("suite")
    log, capture = scratch / "suite.truth", scratch / "suite.lsc"
    run = capture_suite(build, DEMO_IRQ, output=capture, truth=log, timeout=600)
    assert run.exit_code == 0, run.console[-3000:]
    return read_cpu_truth(log), CodeMap(build.firmware), capture


def test_suite_interrupts_return_into_functions_of_the_firmware(suite_run):
    truth, code, _ = suite_run
    interrupts = truth.interrupts
    # The appliance's IRQ and the kernel's tick.
    assert set(interrupts.causes.tolist()) == {MCAUSE_EXTERNAL, MCAUSE_TIMER}
    assert len(interrupts.of_cause(MCAUSE_EXTERNAL)) >= 50
    for address in sorted(set(interrupts.return_addresses.tolist())):
        function = code.function_at(address)
        assert function in code.functions, hex(address)
        assert address in code.function_instructions(function), hex(address)
    # Each external interrupt enters the kernel's trap vector and masks it there, and none
    # is taken while it is masked. A tick does so too, unless the external interrupt was
    # masked already (the kernel disables the IRQ line while a test runs that does not use
    # it; `masked` is the external interrupt's state).
    masked, external = truth.masked, interrupts.of_cause(MCAUSE_EXTERNAL)
    at_trap = masked.start_pcs[np.isin(masked.starts, interrupts.cycles)]
    assert np.all(at_trap == code.symbol_address("k_trap_entry"))
    assert np.all(np.isin(external.cycles, masked.starts))
    assert not np.any(masked.masked_at(external.cycles - 1))
    ticks = interrupts.of_cause(MCAUSE_TIMER).cycles
    assert np.all(np.isin(ticks, masked.starts) | masked.masked_at(ticks - 1))
    check_against_binutils(code.path)


# --- where each sample's interrupt met the code (latscope.analysis.where) ------------------


def test_where_names_the_masked_stretch_that_held_each_interrupt(run):
    """irq_masked's IRQ edges as samples (edge to the handler's first store): an edge
    inside a stretch masked_begin .. masked_end is held by that stretch, masked from the
    edge to the stretch's end, and taken after it; an edge while unmasked is held by
    nothing, or by the round's stretch that began before the core took it (an edge 1 to 3
    cycles before the csrci, sim/README.md). Every interrupt met masked_spin. The region
    masked_begin .. masked_end lists those samples and their worst latency."""
    # One store per interrupt: an edge while the handler of an interrupt taken before it
    # runs (its store still to come) is answered by no interrupt of its own.
    stores, taken = run.handler_stores, run.truth.interrupts.cycles
    assert len(stores) == len(taken)
    starts = run.truth.irq_rises[run.truth.irq_rises < stores[-1]]
    answer = np.searchsorted(stores, starts)
    starts, ends = starts[taken[answer] > starts], stores[answer[taken[answer] > starts]]
    table = SampleTable("IL-x-1", 1.0, ends - starts, starts)
    where = where_of({"IL-x-1": table}, run.truth, run.code)["IL-x-1"]
    samples, masked = where.samples, run.truth.masked
    assert samples.matched == len(starts)
    assert {run.code.function_at(address) for address in samples.addresses} == {"masked_spin"}
    begin, end = run.address("masked_begin"), run.address("masked_end")
    inside = masked.containing(starts)
    in_round = (inside >= 0) & (masked.start_pcs[np.maximum(inside, 0)] == begin)
    assert in_round.sum() >= 5
    assert np.array_equal(samples.held_by[in_round], inside[in_round])
    assert np.array_equal(
        samples.masked_cycles[in_round], masked.ends[inside[in_round]] - starts[in_round]
    )
    assert np.all(samples.taken[in_round] > masked.ends[inside[in_round]])
    free = ~masked.masked_at(starts)
    late = free & (samples.held_by >= 0)
    assert (free & ~late).sum() >= 5
    assert np.all(samples.masked_cycles[free & ~late] == 0)
    stretch = samples.held_by[late]
    assert np.all((masked.start_pcs[stretch] == begin) & (masked.starts[stretch] > starts[late]))
    assert np.array_equal(
        samples.masked_cycles[late], masked.ends[stretch] - masked.starts[stretch]
    )
    (region,) = [r for r in where.regions if r.start.address == begin]
    assert region.end.address == end and region.start.function == "masked_spin"
    by_round = (samples.held_by >= 0) & (masked.start_pcs[np.maximum(samples.held_by, 0)] == begin)
    assert region.samples == by_round.sum() >= in_round.sum()
    assert region.worst_value == samples.values[by_round].max()


def test_suite_report_says_where_the_il_interrupts_met_the_code(suite_run, tmp_path):
    """On the suite's capture with its log: every IL-a-1 sample's interrupt is found and
    met il_thread (the only thread that runs while its line is open); each worst sample
    names its place, and no interrupt was taken before its edge or after its sample's end.
    A log that is not the capture's (one cycle off) is refused, not misread."""
    truth, code, capture = suite_run
    summary, tables = load_tables(capture)
    document = results(summary, tables, worst_of(capture, summary, tables, 3))
    assert document["where"]["error"] is None
    assert problems(document) == []  # with where, at the top level and in the IL tables
    rows = {row["name"]: row for row in document["tables"]}
    where = rows["IL-a-1"]["where"]
    assert where["samples"] == where["matched"] == SUITE_SAMPLES
    assert [entry["function"] for entry in where["functions"]] == ["il_thread"]
    functions = where["functions"][0]
    assert functions["instructions"] == len(code.function_instructions("il_thread"))
    assert 0 < functions["met"] <= functions["takeable"] < functions["instructions"]
    assert functions["coverage"] == functions["met"] / functions["takeable"]
    external = truth.interrupts.of_cause(MCAUSE_EXTERNAL)
    assert np.all(np.isin(external.return_addresses, truth.takeable))
    assert len(where["worst"]) == 3
    for entry in where["worst"]:
        assert entry["at"]["function"] == "il_thread" and entry["at"]["line"]
        assert 0 < entry["taken_cycles"] <= entry["ns"] / 10  # 10 ns a cycle
        assert entry["masked_cycles"] <= entry["taken_cycles"]
    assert rows["IDL-a-1"]["where"] is None  # starts at the ISR's exit, not an IRQ edge
    # A log whose IRQ edges are one cycle off: not this capture's.
    shifted = tmp_path / "shifted.truth"
    with open(truth_log(capture)) as source, open(shifted, "w") as out:
        for line in source:
            cycle, rest = line.split(" ", 1)
            out.write(f"{int(cycle) + 1} {rest}" if rest.startswith("irq ") else line)
    moved = load_capture(capture)
    moved.metadata["truth"] = {**moved.metadata["truth"], "log": str(shifted)}
    document = results(moved, load_tables(moved)[1])
    assert "not this capture's" in document["where"]["error"]
    assert all(row["where"] is None for row in document["tables"])


def truth_log(capture):
    return load_capture(capture).metadata["truth"]["log"]
