"""Where each interrupt met the code, on the simulated SoC: the samples that start at an IRQ
edge (IL, ILH and IRQ loop tables) matched with the interrupt the simulated CPU took for
that edge, from the harness's ground-truth log (:mod:`latscope.simulated.cpu_truth`), and
named by function and source line of the firmware ELF (:mod:`latscope.simulated.code_map`).

A capture made with the log (``latscope capture --port sim:soc --truth FILE``) records it
and the firmware in its metadata (``truth``: :class:`TruthSource`); :func:`where_of` then
gives, per IRQ table (:class:`TableWhere`):

* per sample the interrupt: the first external interrupt the CPU took after the IRQ edge's
  cycle, if it came no later than the sample's end (else none: the edge was answered
  inside another trap). Its return address (mepc) is where the interrupt met the code;
* the masked stretch that held the interrupt back longest between the edge and the
  interrupt (none if the interrupt was never masked meanwhile), and the masked cycles;
* coverage: per function the interrupts met, its distinct instructions met out of all its
  instructions (:func:`latscope.simulated.coverage.coverage`);
* the masked regions (the instructions that began and ended the stretches) that held its
  samples: how many, the longest stretch, the worst latency each caused.

The IRQ edge's stamp is the harness's cycle (docs/tests.md, "Stamps": after the pin-delay
correction the appliance's time base is the harness's cycle count); every sample's start
must be an IRQ rise of the log, so a log that is not the capture's is refused
(:class:`TruthMismatch`). The capture is read whole (a simulation's captures are short).
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from os import PathLike

import numpy as np

from ..capture.file import Capture, load_capture
from ..simulated.code_map import CodeMap, Location
from ..simulated.coverage import coverage
from ..simulated.cpu_truth import MCAUSE_EXTERNAL, CpuTruth, TruthSource, read_cpu_truth
from .delays import NO_DELAY
from .loop import LOOP_PREFIX, tables_with_loop
from .pairing import SampleTable, analyze_loaded
from .rules import RULES

__all__ = [
    "IRQ_FAMILIES",
    "TruthMismatch",
    "SamplesWhere",
    "FunctionCoverage",
    "RegionHeld",
    "TableWhere",
    "starts_at_irq",
    "where_of",
    "where_of_capture",
]

#: Table families whose samples start at an asserting IRQ edge: the rules' and the IRQ loop's.
IRQ_FAMILIES = frozenset(
    {rule.name.split("-", 1)[0] for rule in RULES if rule.start == "irq"} | {LOOP_PREFIX}
)


def starts_at_irq(name: str) -> bool:
    """Whether the samples of table ``name`` start at an IRQ edge."""
    return name.split("-", 1)[0] in IRQ_FAMILIES


class TruthMismatch(ValueError):
    """The ground-truth log does not belong to the capture."""


@dataclass(frozen=True)
class SamplesWhere:
    """One table's samples in capture order with their interrupts (int64 arrays, one entry
    per sample; -1: none): ``starts`` (the IRQ edges' cycles), ``values`` (latencies in
    stamp units), ``taken`` (the cycle the CPU took the interrupt), ``addresses`` (its mepc),
    ``held_by`` (the index of the masked stretch, :class:`MaskedStretches`, that held it
    longest) and ``masked_cycles`` (cycles from the edge to the interrupt that were masked);
    ``ticked``: whether the kernel's tick overlaps the sample (its flag, bool); ``delays``:
    its IRQ trigger delay (capture cycles; :data:`~latscope.analysis.delays.NO_DELAY`: no
    triggered edge)."""

    starts: np.ndarray
    values: np.ndarray
    taken: np.ndarray
    addresses: np.ndarray
    held_by: np.ndarray
    masked_cycles: np.ndarray
    ticked: np.ndarray
    delays: np.ndarray

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def matched(self) -> int:
        """Samples whose interrupt was found."""
        return int(np.count_nonzero(self.taken >= 0))


@dataclass(frozen=True)
class FunctionCoverage:
    """A function the interrupts of a table met: ``interrupts`` that returned into it,
    ``met`` distinct instructions of it they returned to; ``takeable``: its instructions an
    interrupt could meet in the run (:attr:`CpuTruth.takeable`; None: the log does not say),
    ``instructions``: all of them (None for both: a label without a size, whose
    instructions are not known)."""

    function: str
    interrupts: int
    met: int
    takeable: int | None
    instructions: int | None

    @property
    def fraction(self) -> float | None:
        """Coverage: met / takeable (None: not known)."""
        return self.met / self.takeable if self.takeable else None


@dataclass(frozen=True)
class RegionHeld:
    """A masked region (``start``: the instruction that masked, ``end``: the one that
    unmasked) that held ``samples`` of a table's interrupts; ``longest``: its longest
    stretch among them (cycles); ``worst_value``/``worst_index``: the largest latency among
    them (stamp units) and that sample's index in the table."""

    start: Location
    end: Location
    samples: int
    longest: int
    worst_value: int
    worst_index: int


@dataclass(frozen=True)
class TableWhere:
    """Where the interrupts of one table met the code (see the module)."""

    name: str
    samples: SamplesWhere
    functions: list[FunctionCoverage]
    regions: list[RegionHeld]
    code: CodeMap
    truth: CpuTruth

    def sample_at(self, start: int) -> int | None:
        """The index of the sample that starts at cycle ``start`` (None: none)."""
        found = np.flatnonzero(self.samples.starts == start)
        return int(found[0]) if len(found) else None

    def location(self, index: int) -> Location | None:
        """Where sample ``index``'s interrupt met the code (None: no interrupt found)."""
        address = int(self.samples.addresses[index])
        return self.code.locate(address) if address >= 0 else None

    def by_delay(self) -> list[tuple[int, int, Location | None]]:
        """Per trigger delay (ascending; none without triggered samples): (delay, samples,
        where most of them met the code: the commonest address, the lowest of equals;
        None if no interrupt of them was found)."""
        delays, addresses = self.samples.delays, self.samples.addresses
        rows: list[tuple[int, int, Location | None]] = []
        for delay in np.unique(delays[delays != NO_DELAY]).tolist():
            met = addresses[(delays == delay) & (addresses >= 0)]
            if not len(met):
                rows.append((delay, int((delays == delay).sum()), None))
                continue
            values, counts = np.unique(met, return_counts=True)
            common = int(values[np.argmax(counts)])
            rows.append((delay, int((delays == delay).sum()), self.code.locate(common)))
        return rows

    def held_by(self, index: int) -> tuple[Location, Location] | None:
        """The masking and unmasking instructions of the stretch that held sample
        ``index``'s interrupt longest (None: not masked)."""
        stretch = int(self.samples.held_by[index])
        if stretch < 0:
            return None
        masked = self.truth.masked
        return (
            self.code.locate(int(masked.start_pcs[stretch])),
            self.code.locate(int(masked.end_pcs[stretch])),
        )


def _match(table: SampleTable, truth: CpuTruth, stamps_per_cycle: int, name: str) -> SamplesWhere:
    """The interrupts of ``table``'s samples (:class:`SamplesWhere`)."""
    starts = table.starts.astype(np.int64) // stamps_per_cycle
    values = table.samples.astype(np.int64)
    ends = (table.starts.astype(np.int64) + values) // stamps_per_cycle
    unknown = starts[~np.isin(starts, truth.irq_rises)]
    if len(unknown):
        raise TruthMismatch(
            f"{name}: a sample starts at cycle {int(unknown[0])}, where the ground-truth log "
            f"has no IRQ rise ({len(unknown)} of {len(starts)} such samples): the log is not "
            "this capture's"
        )
    external = truth.interrupts.of_cause(MCAUSE_EXTERNAL)
    first = np.searchsorted(external.cycles, starts, side="right")
    found = first < len(external)
    taken = np.full(len(starts), -1, np.int64)
    addresses = np.full(len(starts), -1, np.int64)
    taken[found] = external.cycles[first[found]]
    addresses[found] = external.return_addresses[first[found]]
    found &= taken <= ends
    taken[~found] = -1
    addresses[~found] = -1
    held_by = np.full(len(starts), -1, np.int64)
    masked_cycles = np.zeros(len(starts), np.int64)
    masked = truth.masked
    # Stretches that overlap [edge, interrupt): from the first that ends after the edge to
    # the last that starts before the interrupt.
    low = np.searchsorted(masked.ends, starts, side="right")
    high = np.searchsorted(masked.starts, taken, side="left")
    for sample in np.flatnonzero(found & (high > low)):
        span = slice(low[sample], high[sample])
        overlap = np.minimum(masked.ends[span], taken[sample]) - np.maximum(
            masked.starts[span], starts[sample]
        )
        held_by[sample] = low[sample] + int(np.argmax(overlap))
        masked_cycles[sample] = int(overlap.sum())
    ticked = table.ticked if len(table.ticked) == len(starts) else np.zeros(len(starts), bool)
    delays = table.delays if len(table.delays) == len(starts) else np.full(len(starts), NO_DELAY)
    return SamplesWhere(starts, values, taken, addresses, held_by, masked_cycles, ticked, delays)


def _functions(samples: SamplesWhere, truth: CpuTruth, code: CodeMap) -> list[FunctionCoverage]:
    """Coverage of every function the interrupts met, most interrupts first."""
    addresses = samples.addresses[samples.addresses >= 0]
    by_function: dict[str, list[int]] = {}
    for address in addresses.tolist():
        by_function.setdefault(code.function_at(address) or "?", []).append(address)
    result = []
    for function, met in by_function.items():
        if function not in code.functions:
            result.append(FunctionCoverage(function, len(met), len(set(met)), None, None))
            continue
        instructions = code.function_instructions(function)
        takeable = np.intersect1d(instructions, truth.takeable) if len(truth.takeable) else None
        result.append(
            FunctionCoverage(
                function,
                len(met),
                coverage(met, instructions).met,
                None if takeable is None else len(takeable),
                len(instructions),
            )
        )
    return sorted(result, key=lambda entry: (-entry.interrupts, entry.function))


def _regions(samples: SamplesWhere, truth: CpuTruth, code: CodeMap) -> list[RegionHeld]:
    """The masked regions that held the samples' interrupts, worst latency first."""
    masked = truth.masked
    held = np.flatnonzero(samples.held_by >= 0)
    groups: dict[tuple[int, int], list[int]] = {}
    for sample in held.tolist():
        stretch = samples.held_by[sample]
        key = (int(masked.start_pcs[stretch]), int(masked.end_pcs[stretch]))
        groups.setdefault(key, []).append(sample)
    regions = []
    for (start_pc, end_pc), members in groups.items():
        indexes = np.array(members)
        values = samples.values[indexes]
        worst = int(indexes[np.argmax(values)])  # the first of equal maxima: the earliest
        regions.append(
            RegionHeld(
                code.locate(start_pc),
                code.locate(end_pc),
                len(members),
                int(masked.lengths[samples.held_by[indexes]].max()),
                int(samples.values[worst]),
                worst,
            )
        )
    return sorted(regions, key=lambda region: (-region.worst_value, region.start.address))


def where_of(
    tables: Mapping[str, SampleTable],
    truth: CpuTruth,
    code: CodeMap,
    stamps_per_cycle: int = 1,
) -> dict[str, TableWhere]:
    """:class:`TableWhere` of every table of ``tables`` whose samples start at an IRQ edge
    (``stamps_per_cycle``: the capture's stamp units per clock cycle, 1 on the simulated
    SoC). Raises :class:`TruthMismatch` when a sample's start is no IRQ rise of ``truth``."""
    result = {}
    for name, table in tables.items():
        if not starts_at_irq(name):
            continue
        samples = _match(table, truth, stamps_per_cycle, name)
        result[name] = TableWhere(
            name,
            samples,
            _functions(samples, truth, code),
            _regions(samples, truth, code),
            code,
            truth,
        )
    return result


def _loop_channel(names: Iterable[str]) -> str | None:
    """The IRQ loop's channel of a ``LOOP-<channel>`` table among ``names``."""
    return next(
        (name.split("-", 1)[1] for name in names if name.startswith(f"{LOOP_PREFIX}-")), None
    )


def where_of_capture(
    capture: Capture | str | PathLike[str], names: Iterable[str] = ()
) -> tuple[TruthSource, dict[str, TableWhere]] | None:
    """Where the interrupts of a capture (a loaded :class:`Capture` or a file's path) met the
    code, from the ground-truth log its metadata names (None: it names none). ``names``:
    the tables analysed (a ``LOOP-<channel>`` one adds the IRQ loop's table). Raises
    OSError or ValueError (naming the file) when the log or the ELF cannot be read,
    :class:`TruthMismatch` when the log is not the capture's."""
    if not isinstance(capture, Capture):
        capture = load_capture(capture)
    source = TruthSource.of_metadata(capture.metadata)
    if source is None:
        return None
    truth = read_cpu_truth(source.log)
    code = CodeMap(source.firmware)
    tables = tables_with_loop(
        capture.events,
        capture.stamp_hz,
        analyze_loaded(capture),
        _loop_channel(names),
    )
    return source, where_of(tables, truth, code, capture.stamp_hz // capture.clock_hz)
