"""Where control can go from each instruction of a function (RV32IMAC: branches, jumps,
calls and their compressed forms), the function's loop (its largest natural loop: a header
and what returns to it) and the functions a call can run (its call tree).

A sweep walks an interrupt through a path of the DUT's code (``latscope sweep``): a loop,
not the function's code that runs once before or after it, or a kernel call with all it
calls. Calls return (their successor is the next instruction); a jump out of the function,
a return and an ``mret`` end the path within the function.
"""

from dataclasses import dataclass

import numpy as np

from .code_map import CodeMap, instruction_length

__all__ = [
    "Flow",
    "flow",
    "successors",
    "Loop",
    "FunctionGraph",
    "loop_instructions",
    "callees",
    "call_tree_instructions",
]

_MRET = 0x30200073


def _signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value & (1 << (bits - 1)) else value


@dataclass(frozen=True)
class Flow:
    """Where control goes from one instruction: ``jumps``, the offsets of a branch's or
    jump's target; ``call``, the offset of a direct call's target (None: no such call);
    ``falls_through``: to the next instruction as well (calls return)."""

    jumps: tuple[int, ...] = ()
    call: int | None = None
    falls_through: bool = True


def _jal_offset(word: int) -> int:
    """JAL: imm[20|10:1|11|19:12] = inst[31|30:21|20|19:12]."""
    offset = (
        (word >> 31) << 20
        | ((word >> 12) & 0xFF) << 12
        | ((word >> 20) & 1) << 11
        | ((word >> 21) & 0x3FF) << 1
    )
    return _signed(offset, 21)


def _c_jal_offset(word: int) -> int:
    """C.J, C.JAL: offset[11|4|9:8|10|6|7|3:1|5] = inst[12|11|10:9|8|7|6|5:3|2]."""
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
    return _signed(offset, 12)


def flow(word: int) -> Flow:
    """The :class:`Flow` of one instruction (16 or 32 bits, as :meth:`CodeMap.instruction_at`
    gives it)."""
    if instruction_length(word & 0xFFFF) == 4:
        opcode, rd = word & 0x7F, (word >> 7) & 0x1F
        if opcode == 0x63:  # BRANCH: imm[12|10:5] = inst[31|30:25], imm[4:1|11] = [11:8|7]
            offset = (
                (word >> 31) << 12
                | ((word >> 7) & 1) << 11
                | ((word >> 25) & 0x3F) << 5
                | ((word >> 8) & 0xF) << 1
            )
            return Flow(jumps=(_signed(offset, 13),))
        if opcode == 0x6F:  # JAL: a call (rd set) or a jump
            return Flow(call=_jal_offset(word)) if rd else Flow((_jal_offset(word),), None, False)
        if opcode == 0x67:  # JALR: a call returns; with rd = 0 a return or an indirect jump
            return Flow(falls_through=bool(rd))
        return Flow(falls_through=word != _MRET)
    quadrant, funct3 = word & 3, word >> 13
    if quadrant == 1 and funct3 == 1:  # C.JAL (RV32)
        return Flow(call=_c_jal_offset(word))
    if quadrant == 1 and funct3 == 5:  # C.J
        return Flow((_c_jal_offset(word),), None, False)
    if quadrant == 1 and funct3 in (6, 7):  # C.BEQZ, C.BNEZ: offset[8|4:3|7:6|2:1|5]
        offset = (
            ((word >> 12) & 1) << 8
            | ((word >> 10) & 3) << 3
            | ((word >> 5) & 3) << 6
            | ((word >> 3) & 3) << 1
            | ((word >> 2) & 1) << 5
        )
        return Flow(jumps=(_signed(offset, 9),))
    if quadrant == 2 and funct3 == 4 and (word >> 7) & 0x1F and not (word >> 2) & 0x1F:
        return Flow(falls_through=bool((word >> 12) & 1))  # C.JALR (a call) or C.JR
    return Flow()


def successors(code: CodeMap, address: int, start: int, end: int) -> list[int]:
    """The instructions in [start, end) that can run right after the one at ``address``."""
    word = code.instruction_at(address)
    step = flow(word)
    following = [address + instruction_length(word & 0xFFFF)] if step.falls_through else []
    return [
        target
        for target in following + [address + offset for offset in step.jumps]
        if start <= target < end
    ]


@dataclass(frozen=True)
class Loop:
    """A natural loop: its ``header`` and ``body`` (the header included)."""

    header: int
    body: frozenset[int]


class FunctionGraph:
    """A function's instructions and where control goes between them: ``nodes`` (in address
    order), ``forward`` and ``backward`` edges, ``dominators`` (of every instruction the
    entry reaches: the instructions every path from the entry to it passes, itself
    included) and its natural ``loops``, one per back edge (an edge into an instruction that
    dominates its source: the loop's header), each the header and the instructions that
    reach the back edge's source without passing the header. A path that merely rejoins
    code before a loop (a shared call of a function that does not return, whose call looks
    like one that does) is no loop: its target does not dominate it."""

    def __init__(self, code: CodeMap, function: str) -> None:
        start, end = code.function_range(function)
        self.nodes: list[int] = code.instructions(start, end).tolist()
        self.forward = {node: successors(code, node, start, end) for node in self.nodes}
        self.backward: dict[int, list[int]] = {node: [] for node in self.nodes}
        for node, targets in self.forward.items():
            for target in targets:
                self.backward[target].append(node)
        self.dominators = self._dominators()
        self.loops = [
            Loop(header, frozenset(self._body(header, node)))
            for node, targets in self.forward.items()
            for header in targets
            if header in self.dominators.get(node, ())
        ]

    def _body(self, header: int, source: int) -> set[int]:
        body, stack = {header}, [source]
        while stack:
            node = stack.pop()
            if node not in body:
                body.add(node)
                stack += self.backward[node]
        return body

    def _dominators(self) -> dict[int, set[int]]:
        entry = self.nodes[0]
        order: list[int] = []  # reverse postorder of what the entry reaches
        seen = {entry}
        stack = [(entry, iter(self.forward[entry]))]
        while stack:
            node, rest = stack[-1]
            target = next(rest, None)
            if target is None:
                stack.pop()
                order.append(node)
            elif target not in seen:
                seen.add(target)
                stack.append((target, iter(self.forward[target])))
        order.reverse()
        dominators = {node: set(order) for node in order}
        dominators[entry] = {entry}
        changed = True
        while changed:
            changed = False
            for node in order[1:]:
                common = set.intersection(
                    *(dominators[p] for p in self.backward[node] if p in seen)
                ) | {node}
                if common != dominators[node]:
                    dominators[node], changed = common, True
        return dominators

    def dominated_by(self, node: int) -> set[int]:
        """The instructions ``node`` dominates."""
        return {other for other, above in self.dominators.items() if node in above}

    def largest_loop(self) -> set[int]:
        """The largest loop: the union of the loops of the header whose union is largest
        (empty if there is none)."""
        by_header: dict[int, set[int]] = {}
        for loop in self.loops:
            by_header.setdefault(loop.header, set()).update(loop.body)
        return max(by_header.values(), key=len, default=set())


def loop_instructions(code: CodeMap, function: str) -> np.ndarray:
    """The addresses of the function's largest loop (:meth:`FunctionGraph.largest_loop`)."""
    return np.array(sorted(FunctionGraph(code, function).largest_loop()), dtype=np.int64)


def callees(code: CodeMap, function: str) -> list[str]:
    """``function`` and every function it can call or jump into, directly or through
    others (calls and jumps that name their target, not those through a register), in
    the order found."""
    found = [function]
    for name in found:
        start, end = code.function_range(name)
        for address in code.instructions(start, end).tolist():
            step = flow(code.instruction_at(address))
            offsets = step.jumps + (() if step.call is None else (step.call,))
            for target in (address + offset for offset in offsets):
                callee = code.function_at(target)
                if not start <= target < end and callee in code.functions:
                    if callee not in found:
                        found.append(callee)
    return found


def call_tree_instructions(code: CodeMap, function: str) -> np.ndarray:
    """The addresses of every instruction of :func:`callees` of ``function``, ascending."""
    return np.unique(
        np.concatenate([code.function_instructions(name) for name in callees(code, function)])
    )
