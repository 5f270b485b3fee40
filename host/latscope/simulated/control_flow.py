"""Where control can go from each instruction of a function (RV32IMAC: branches, jumps,
calls and their compressed forms) and the function's loop: the largest set of its
instructions that all reach one another (a strongly connected component of that graph).

A sweep walks an interrupt through a loop of the DUT's code (``latscope sweep``); its path
is the loop's instructions, not the function's code that runs once before or after it.
Calls return (their successor is the next instruction); a jump out of the function, a
return and an ``mret`` end the path.
"""

import numpy as np

from .code_map import CodeMap, instruction_length

__all__ = ["successors", "loop_instructions"]

_MRET = 0x30200073


def _signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value & (1 << (bits - 1)) else value


def _targets(word: int) -> tuple[list[int], bool]:
    """(offsets of the taken targets, whether it falls through) of one instruction."""
    if instruction_length(word & 0xFFFF) == 4:
        opcode, rd = word & 0x7F, (word >> 7) & 0x1F
        if opcode == 0x63:  # BRANCH: imm[12|10:5] = [31|30:25], imm[4:1|11] = [11:8|7]
            offset = (
                (word >> 31) << 12
                | ((word >> 7) & 1) << 11
                | ((word >> 25) & 0x3F) << 5
                | ((word >> 8) & 0xF) << 1
            )
            return [_signed(offset, 13)], True
        if opcode == 0x6F:  # JAL: imm[20|10:1|11|19:12] = [31|30:21|20|19:12]
            offset = (
                (word >> 31) << 20
                | ((word >> 12) & 0xFF) << 12
                | ((word >> 20) & 1) << 11
                | ((word >> 21) & 0x3FF) << 1
            )
            return ([], True) if rd else ([_signed(offset, 21)], False)  # a call, a jump
        if opcode == 0x67:  # JALR: a call returns; with rd = 0 a return or indirect jump
            return [], bool(rd)
        return [], word != _MRET
    quadrant, funct3 = word & 3, word >> 13
    if quadrant == 1 and funct3 in (1, 5):  # C.JAL (a call), C.J: [12|11|10:9|8|7|6|5:3|2]
        offset = (
            ((word >> 12) & 1) << 11
            | ((word >> 11) & 1) << 4
            | ((word >> 9) & 3) << 8
            | ((word >> 8) & 1) << 10
            | ((word >> 7) & 1) << 6
            | ((word >> 6) & 1) << 7
            | ((word >> 3) & 7) << 1
            | ((word >> 2) & 1) << 5
        )
        return ([], True) if funct3 == 1 else ([_signed(offset, 12)], False)
    if quadrant == 1 and funct3 in (6, 7):  # C.BEQZ, C.BNEZ: offset[8|4:3|7:6|2:1|5]
        offset = (
            ((word >> 12) & 1) << 8
            | ((word >> 10) & 3) << 3
            | ((word >> 5) & 3) << 6
            | ((word >> 3) & 3) << 1
            | ((word >> 2) & 1) << 5
        )
        return [_signed(offset, 9)], True
    if quadrant == 2 and funct3 == 4 and (word >> 7) & 0x1F and not (word >> 2) & 0x1F:
        return [], bool((word >> 12) & 1)  # C.JALR (a call) or C.JR (a return, a jump)
    return [], True


def successors(code: CodeMap, address: int, start: int, end: int) -> list[int]:
    """The instructions in [start, end) that can run right after the one at ``address``."""
    word = code.instruction_at(address)
    offsets, falls_through = _targets(word)
    following = [address + instruction_length(word & 0xFFFF)] if falls_through else []
    return [
        target
        for target in following + [address + offset for offset in offsets]
        if start <= target < end
    ]


def loop_instructions(code: CodeMap, function: str) -> np.ndarray:
    """The addresses of the function's loop: its largest set of instructions that all reach
    one another (empty if it has no loop)."""
    start, end = code.function_range(function)
    nodes = code.instructions(start, end).tolist()
    forward = {node: successors(code, node, start, end) for node in nodes}
    backward: dict[int, list[int]] = {node: [] for node in nodes}
    for node, targets in forward.items():
        for target in targets:
            backward.setdefault(target, []).append(node)
    best: set[int] = set()
    done: set[int] = set()
    for node in nodes:
        if node in done:
            continue
        component = _reach(node, forward) & _reach(node, backward)
        done |= component
        cyclic = len(component) > 1 or node in forward[node]
        if cyclic and len(component) > len(best):
            best = component
    return np.array(sorted(best), dtype=np.int64)


def _reach(node: int, edges: dict[int, list[int]]) -> set[int]:
    seen, stack = {node}, [node]
    while stack:
        for target in edges.get(stack.pop(), []):
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return seen
