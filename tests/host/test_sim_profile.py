"""bench/sim_profile.py's split of the clocked logic by design block: each sampled instruction
counts for the model variable last addressed through the model's pointer, in whichever
register the function keeps that pointer (Verilator's second clocked function keeps it in
%rax, not %rbx). The annotation below has perf annotate's line format."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import sim_profile  # noqa: E402

CPU = "latscope_sim_top__DOT__soc__DOT__cpu__DOT__decode_PC"
ENCODER = "latscope_sim_top__DOT__appliance__DOT__appliance__DOT__streamer__DOT__encoder__DOT__base"
# (offset, size, name), as member_offsets gives them.
OFFSETS = [(0x10, 4, CPU), (0x20, 4, ENCODER)]


def annotation(self_register):
    lines = [
        " Percent |  Source code & Disassembly of latscope-sim for cpu-clock (40 samples)",
        "    5.00 :   28ae0:  push   %r15",
        f"    5.00 :   28ae2:  mov    %rdi,{self_register}",
        f"   10.00 :   28ae5:  mov    0x10({self_register}),%ecx",
        "   30.00 :   28ae9:  add    $0x4,%ecx",
        f"   10.00 :   28aed:  mov    0x20({self_register}),%edx",
        "   40.00 :   28af1:  shl    $0x3,%edx",
    ]
    return "\n".join(lines) + "\n"


def test_instructions_count_for_the_variable_last_addressed_through_the_model_pointer():
    for register in ("%rbx", "%rax"):
        shares = sim_profile.split_by_block(annotation(register), OFFSETS)
        assert shares == {"(no variable)": 10.0, "cpu": 40.0, "appliance.streamer.encoder": 50.0}
