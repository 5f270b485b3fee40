"""Where the full-system simulation's CPU time goes: a `perf` profile of the appliance build.

Runs the simulator of ``make -C sim APPLIANCE=1 SUMP=0 LTO=0`` (the demo's build but for
link-time optimisation, which may inline the functions below into their callers; ``--make``
adds or overrides variables) on sim/firmware/irq_test.elf for ``--cycles`` cycles under
``perf record`` and prints

1. the share of each function (Verilator's ``_nba_sequent__TOP__0`` and ``__1`` are the
   clocked logic of the CPU and the appliance together, split by size, evaluated in full on
   every rising edge; ``_eval`` and ``_eval_triggers__act`` are the scheduler; ``main`` the
   harness);
2. those functions' samples split by block of the design: each sampled instruction counts
   for the model variable of the nearest preceding load or store through the model's
   ``this`` pointer (``perf annotate``; the register that holds it is the first copy of
   ``%rdi``, which differs per function; the variables' offsets come from compiling
   ``offsetof`` of every member of the model's root class). A heuristic: the compiler
   interleaves statements, so the split is good to a few per cent, not exact.

The appliance is idle here (no capture runs): Verilator evaluates its logic all the same.

Needs ``perf`` (Debian: linux-perf) and permission to use it, and a C++ compiler.

    .venv/bin/python bench/sim_profile.py [--cycles N] [--make VAR=VALUE ...]
"""

import argparse
import bisect
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from sim_make import make

ROOT_CLASS = "Vlatscope_sim_top___024root"
# The clocked logic, which Verilator splits into functions of a bounded size (the second holds
# most of the CPU's fetch and decode logic).
NBA = tuple(f"{ROOT_CLASS}___nba_sequent__TOP__{n}" for n in (0, 1))
# A member of the root class: a port (VL_IN8(clk,0,0);) or a variable (CData/*0:0*/ name;).
MEMBER = re.compile(
    r"^\s+(?:VL_(?:IN|OUT)(?:8|16|64|W)?\((\w+),|(?:CData|SData|IData|QData|"
    r"VlWide<\d+>|VlUnpacked<[^;]*>)(?:/\*[^*]*\*/)?\s+(\w+);)",
    re.M,
)
ANNOTATION_SAMPLES = re.compile(r"\((\d+) samples")
ANNOTATED = re.compile(r"\s+([0-9.]+)\s+:\s+[0-9a-f]+:\s+(.*)")
# The model's pointer arrives in %rdi; the compiler may keep it in another register.
SELF_COPY = re.compile(r"mov\s+%rdi,(%r\w+)$")


def through_self(registers):
    """A memory operand through one of ``registers`` (which hold the model's pointer)."""
    names = "|".join(re.escape(r) for r in registers)
    return re.compile(rf"(?:0x([0-9a-f]+))?\(({names})\)")


def member_offsets(model_dir, scratch):
    """Sorted (offset, size, name) of the root class's members."""
    header = (model_dir / f"{ROOT_CLASS}.h").read_text()
    names = [m.group(1) or m.group(2) for m in MEMBER.finditer(header)]
    lines = [
        f'#include "{ROOT_CLASS}.h"',
        "#include <cstddef>",
        "#include <cstdio>",
        "int main() {",
    ]
    lines += [
        f'  std::printf("%zu %zu {n}\\n", offsetof({ROOT_CLASS}, {n}), '
        f"sizeof((({ROOT_CLASS} *)0)->{n}));"
        for n in names
    ]
    source, program = scratch / "offsets.cpp", scratch / "offsets"
    source.write_text("\n".join(lines + ["}"]) + "\n")
    include = Path(
        subprocess.run(
            ["verilator", "--getenv", "VERILATOR_ROOT"], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    subprocess.run(
        [
            "g++",
            "-std=c++17",
            "-w",
            f"-I{model_dir}",
            f"-I{include}/include",
            f"-I{include}/include/vltstd",
            str(source),
            "-o",
            str(program),
        ],
        check=True,
    )
    rows = subprocess.run([str(program)], capture_output=True, text=True, check=True).stdout
    return sorted((int(o), int(s), n) for o, s, n in (row.split() for row in rows.splitlines()))


def block_of(name):
    """The design block a model variable belongs to."""
    if name is None:
        return "(no variable)"
    found = re.search(
        r"appliance__DOT__appliance__DOT__(\w+?)(?:__DOT__(\w+?))?(?:__DOT__|$)", name
    )
    if found:
        block = found.group(1)
        return f"appliance.{block}" + (
            f".{found.group(2)}" if block == "streamer" and found.group(2) else ""
        )
    if "appliance" in name:
        return "appliance (ports)"
    if "__DOT__soc__DOT__cpu" in name:
        return "cpu"
    if "__DOT__soc__DOT__" in name:
        return "soc (RAM, peripherals)"
    return "top (wiring, harness inputs)"


def split_by_block(annotation, offsets):
    starts = [o for o, _, _ in offsets]

    def variable(offset):
        i = bisect.bisect_right(starts, offset) - 1
        return offsets[i][2] if i >= 0 and offset < offsets[i][0] + offsets[i][1] else None

    instructions = [m for m in map(ANNOTATED.match, annotation.splitlines()) if m]
    # The first copy of %rdi names the register the function addresses the model through.
    copies = (SELF_COPY.search(m.group(2).strip()) for m in instructions)
    self_copy = next((c.group(1) for c in copies if c), None)
    operands = through_self(["%rdi"] + ([self_copy] if self_copy else []))
    shares, current = collections.Counter(), "(no variable)"
    for found in instructions:
        operand = operands.search(found.group(2))
        if operand:
            current = block_of(variable(int(operand.group(1) or "0", 16)))
        shares[current] += float(found.group(1))
    return shares


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=2_000_000)
    parser.add_argument("--cpu", default="VexRiscv_IMAC")
    parser.add_argument(
        "--make",
        action="append",
        default=[],
        metavar="VAR=VALUE",
        help="more sim/Makefile variables (default APPLIANCE=1 SUMP=0 LTO=0)",
    )
    args = parser.parse_args(argv)
    if not shutil.which("perf"):
        sys.exit("sim_profile: perf not found (apt-get install linux-perf)")
    options = ["APPLIANCE=1", "SUMP=0", "LTO=0", *args.make]
    make(args.cpu, *options, "sim", "firmware")
    binary = Path(make(args.cpu, *options, "print-binary").strip())
    firmware = Path(make(args.cpu, "print-firmware-dir").strip()) / "irq_test.elf"
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        data = str(scratch / "perf.data")
        run = subprocess.run(
            [
                "perf",
                "record",
                "-q",
                "-F",
                "2000",
                "-o",
                data,
                str(binary),
                "--max-cycles",
                str(args.cycles),
                "--console",
                os.devnull,
                str(firmware),
            ],
            capture_output=True,
            text=True,
        )
        sim = next((line for line in run.stdout.splitlines() if line.startswith("SIM ")), None)
        if sim is None:
            sys.exit(f"sim_profile: the run failed:\n{run.stdout}{run.stderr}")
        print(f"{' '.join(options)}, irq_test.elf, {args.cycles:,} cycles: {sim}")
        report = subprocess.run(
            ["perf", "report", "-i", data, "--stdio", "--sort", "sym"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        print("functions (share of all samples):")
        for line in [row for row in report.splitlines() if row.strip() and not row.startswith("#")][
            :6
        ]:
            print("  " + " ".join(line.split()))
        offsets = member_offsets(binary.parent, scratch)
        shares = collections.Counter()
        for function in NBA:
            annotation = subprocess.run(
                ["perf", "annotate", "-i", data, "--stdio", "-s", function],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            # Each function's percentages are of its own samples: weighted by their count.
            samples = ANNOTATION_SAMPLES.search(annotation)
            weight = int(samples.group(1)) / 100 if samples else 0.0
            for block, share in split_by_block(annotation, offsets).items():
                shares[block] += share * weight
    total = sum(shares.values()) or 1.0
    print(
        f"{' and '.join(NBA)} (the clocked logic) by block (share of their samples, "
        "nearest-variable heuristic):"
    )
    appliance = sum(v for k, v in shares.items() if k.startswith("appliance"))
    print(f"  {100 * appliance / total:5.1f} %  appliance, of which:")
    for block, value in shares.most_common():
        if block.startswith("appliance") and 100 * value / total >= 0.5:
            print(f"      {100 * value / total:5.1f} %  {block}")
    for block, value in shares.most_common():
        if not block.startswith("appliance"):
            print(f"  {100 * value / total:5.1f} %  {block}")


if __name__ == "__main__":
    main()
