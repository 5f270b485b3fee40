"""Where the interrupts met the code, from the simulator's ground-truth log (sim/README.md,
"Ground-truth log"): every interrupt the CPU took (its cycle, mcause and the address it
returned to, mepc as the trap wrote it) and every stretch of cycles in which the external
interrupt could not be taken (mstatus.MIE, mie.MEIE or the mask CSR clear), with the
addresses of the instructions that began and ended it.

:mod:`~latscope.simulated.code_map` names the addresses, :mod:`~latscope.simulated.coverage`
measures a code path with them.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

import numpy as np

__all__ = [
    "CpuTruth",
    "TruthSource",
    "Interrupts",
    "MaskedStretches",
    "read_cpu_truth",
    "MCAUSE_EXTERNAL",
    "MCAUSE_TIMER",
]

#: mcause of the machine external interrupt (the appliance's or the harness's IRQ) and of
#: the machine timer interrupt.
MCAUSE_EXTERNAL = 0x8000000B
MCAUSE_TIMER = 0x80000007


@dataclass(frozen=True)
class Interrupts:
    """One entry per interrupt taken, in cycle order (int64 arrays): ``cycles``, the first
    cycle of the trap (mepc, mcause and mstatus hold its values; the core decided at the end
    of the cycle before); ``causes``, mcause; ``return_addresses``, mepc: the instruction
    the interrupt came before, which runs again after mret."""

    cycles: np.ndarray
    causes: np.ndarray
    return_addresses: np.ndarray

    def __len__(self) -> int:
        return len(self.cycles)

    def of_cause(self, cause: int) -> "Interrupts":
        """The interrupts with mcause ``cause`` only."""
        keep = self.causes == cause
        return Interrupts(self.cycles[keep], self.causes[keep], self.return_addresses[keep])


@dataclass(frozen=True)
class MaskedStretches:
    """The stretches in which the external interrupt was masked and that ended before the
    log did, in cycle order (int64 arrays): ``starts``, the first masked cycle; ``ends``, the
    first cycle it could be taken again; ``start_pcs``, the instruction that masked it (a
    CSR write such as csrrci, or for a trap the trap vector, its first masked instruction;
    the reset vector for the stretch from reset); ``end_pcs``, the instruction that unmasked
    it (csrs, csrw, or mret). ``open_start``/``open_start_pc``: a stretch still masked when
    the log ends (None if there is none)."""

    starts: np.ndarray
    ends: np.ndarray
    start_pcs: np.ndarray
    end_pcs: np.ndarray
    open_start: int | None = None
    open_start_pc: int | None = None

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def lengths(self) -> np.ndarray:
        """Cycles each stretch lasted (end - start)."""
        return self.ends - self.starts

    def containing(self, cycles: np.ndarray) -> np.ndarray:
        """For each cycle of ``cycles``: the index of the (ended) stretch it lies in, -1
        where none does."""
        cycles = np.asarray(cycles, dtype=np.int64)
        index = np.searchsorted(self.starts, cycles, side="right") - 1
        inside = (index >= 0) & (cycles < self.ends[np.maximum(index, 0)])
        return np.where(inside, index, -1)

    def masked_at(self, cycles: np.ndarray) -> np.ndarray:
        """For each cycle of ``cycles``: whether the interrupt was masked in it (an open
        stretch counts to the end)."""
        cycles = np.asarray(cycles, dtype=np.int64)
        inside = self.containing(cycles) >= 0
        if self.open_start is not None:
            inside |= cycles >= self.open_start
        return inside


@dataclass(frozen=True)
class CpuTruth:
    """``interrupts`` and ``masked`` stretches; ``irq_rises``: the cycles in which the IRQ
    line the appliance (or the harness) drives rose (``irq 1``), the stamps of the IRQ
    samples' starts, which tie a capture to its log; ``takeable``: the instructions an
    interrupt could meet in the run (``takeable`` lines: the addresses, ascending, and the
    cycles each sat in decode while an interrupt would have been taken before it; empty in
    a log without them)."""

    interrupts: Interrupts
    masked: MaskedStretches
    irq_rises: np.ndarray
    takeable: np.ndarray
    takeable_cycles: np.ndarray


@dataclass(frozen=True)
class TruthSource:
    """What a capture on ``sim:soc`` records of its ground truth (metadata ``truth``,
    docs/capture-format.md): the harness's log and the firmware ELF the simulated CPU ran
    (:mod:`latscope.analysis.where` reads both)."""

    log: Path
    firmware: Path

    def as_dict(self) -> dict[str, str]:
        return {"log": str(self.log), "firmware": str(self.firmware)}

    @classmethod
    def of_metadata(cls, metadata: Mapping[str, object]) -> "TruthSource | None":
        """The ``truth`` of a capture's metadata (None: not recorded)."""
        truth = metadata.get("truth")
        if not isinstance(truth, dict):
            return None
        return cls(Path(truth["log"]), Path(truth["firmware"]))

    @classmethod
    def of_run(cls, log: str | PathLike[str], firmware: str | PathLike[str]) -> "TruthSource":
        """The source of a run that writes its log to ``log``, both paths made absolute so
        that a report finds them from any directory."""
        return cls(Path(log).resolve(), Path(firmware).resolve())


def read_cpu_truth(path: str | PathLike[str]) -> CpuTruth:
    """The ``interrupt``, ``masked``, ``irq 1`` and ``takeable`` lines of the ground-truth
    log ``path``. Raises
    ValueError (naming the file and line) where the masked lines do not alternate, starting
    masked at cycle 0, as the harness writes them; a log written without them (an older
    harness) has neither."""
    path = Path(path)
    interrupts: list[tuple[int, int, int]] = []
    starts: list[int] = []
    ends: list[int] = []
    start_pcs: list[int] = []
    end_pcs: list[int] = []
    masked: tuple[int, int] | None = None
    irq_rises: list[int] = []
    takeable: list[tuple[int, int]] = []
    with open(path) as log:
        for number, line in enumerate(log, 1):
            # Split only the lines wanted: the log holds a line per marker as well.
            if " interrupt " in line:
                cycle_text, _, cause, address = line.split()
                interrupts.append((int(cycle_text), int(cause, 16), int(address, 16)))
            elif " takeable " in line:
                _, _, address, cycles = line.split()
                takeable.append((int(address, 16), int(cycles)))
            elif line.endswith(" irq 1\n"):
                irq_rises.append(int(line.split(maxsplit=1)[0]))
            elif " masked " in line:
                cycle_text, _, level, pc_text = line.split()
                cycle, pc = int(cycle_text), int(pc_text, 16)
                if level == "1" and masked is None and (starts or cycle == 0):
                    masked = (cycle, pc)
                elif level == "0" and masked is not None:
                    starts.append(masked[0])
                    start_pcs.append(masked[1])
                    ends.append(cycle)
                    end_pcs.append(pc)
                    masked = None
                else:
                    raise ValueError(
                        f"{path}:{number}: 'masked {level}' out of turn (the log "
                        "starts masked at cycle 0, then alternates)"
                    )
    table = np.array(interrupts, dtype=np.int64).reshape(-1, 3)
    starts_array, ends_array, start_pcs_array, end_pcs_array = (
        np.array(column, dtype=np.int64) for column in (starts, ends, start_pcs, end_pcs)
    )
    stretches = MaskedStretches(
        starts_array,
        ends_array,
        start_pcs_array,
        end_pcs_array,
        open_start=masked[0] if masked else None,
        open_start_pc=masked[1] if masked else None,
    )
    return CpuTruth(
        Interrupts(table[:, 0], table[:, 1], table[:, 2]),
        stretches,
        np.array(irq_rises, dtype=np.int64),
        *np.array(takeable, dtype=np.int64).reshape(-1, 2).T,
    )
