"""``latscope sweep``: an interrupt walked through the DUT's code one cycle at a time, beside
the same number of interrupts at random phases (issue 26; docs/tests.md, "The sweep").

On the simulated SoC, the suite's IL-a test runs alone, built with a short heartbeat and a
kernel path in it (``SUITE_IL_HEARTBEAT``, ``SUITE_IL_SEM_GIVE``: each heartbeat gives and
takes a semaphore). Two captures, each with the simulation's ground-truth log
(:mod:`latscope.analysis.where`) and the same number of interrupts:

* **random**: the demo's IRQ generator (a period plus pseudo-random jitter), as every
  random-phase evaluation does;
* **sweep**: the IRQ trigger (docs/protocol.md, "Triggered IRQs") fires ``delay`` cycles
  after the IL-a thread's THREAD marker (its heartbeat), the delay stepping by one cycle from
  0 across the heartbeat's period (measured in the random run), so that the interrupt meets
  every instruction of the loop and of the kernel path in turn; the periodic generator arms
  one firing per period.

For each run: the coverage of each swept path (its instructions that an interrupt met, out
of those an interrupt could meet: :data:`PATHS`, the log's ``takeable`` instructions), the
worst IL-a-1 sample of all and the worst without the flagged ones (the cold first sample,
those the kernel's tick overlaps: where a tick falls is chance in either run), each with its
trigger delay, where its interrupt met the code and the masked region that held it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from latscope_defs.markers import Point, Test, decode
from latscope_defs.protocol import Source, irq_level

from .analysis.delays import NO_DELAY, TriggerDelays
from .analysis.where import TableWhere, where_of_capture
from .capture.file import load_capture
from .capture.suite import DEMO_IRQ, capture_suite
from .link.device import IrqSettings
from .simulated.code_map import CodeMap
from .simulated.control_flow import FunctionGraph, call_tree_instructions
from .simulated.coverage import coverage
from .simulated.soc import ROOT, SuiteSettings, build_soc

__all__ = [
    "PATHS",
    "SweepPath",
    "SWEEP_TABLE",
    "sweep_settings",
    "heartbeat_cycles",
    "run_summary",
    "sweep",
    "comparison_text",
]

#: The table the sweep measures: IRQ edge to the IL-a handler's first marker.
SWEEP_TABLE = "IL-a-1"
#: Polls between two heartbeats: short, so that one sweep of the heartbeat's period is a few
#: hundred delays, long enough that the THREAD markers (one a period) leave the link idle.
HEARTBEAT = 64
#: The trigger: the IL-a thread's THREAD marker (its heartbeat, and its answer to a call).
TRIGGER = "IL_A:THREAD"
#: Delays past the measured period, in case a period is a few cycles longer than the most
#: common (a cache refill): they start the next period again.
MARGIN = 16
#: The build directory of the sweep's suite (its own settings).
BUILD_DIR = ROOT / "firmware" / "suite" / "build" / "sweep"


@dataclass(frozen=True)
class SweepPath:
    """A path the sweep walks: ``name``, what it is (``what``) and its instructions in a
    firmware (``instructions(code)``); the ground truth's ``takeable`` ones count."""

    name: str
    what: str
    instructions: Callable[[CodeMap], np.ndarray] = field(compare=False)


def between_interrupts(code: CodeMap, function: str = "il_thread") -> np.ndarray:
    """The IL test's interrupted loop: the largest loop of ``function`` less the branch it
    takes when it sees a new handler call. That branch (its THREAD marker, the count)
    runs right after each interrupt, where only a second interrupt during the first one's
    handler could meet it, never one interrupt at a time. It is found by the loop's shape:
    the poll is the smallest loop through the header; the poll's first way out after the
    header (the check of the handler count, the first thing each poll does) leads to it;
    it is what that way out dominates."""
    graph = FunctionGraph(code, function)
    loop = graph.largest_loop()
    poll = min((each for each in graph.loops if each.body <= loop), key=lambda each: len(each.body))
    node = poll.header
    while all(target in poll.body for target in graph.forward[node]):
        node = next(target for target in graph.forward[node] if target in poll.body)
    (answer,) = [target for target in graph.forward[node] if target not in poll.body]
    return np.array(sorted(loop - graph.dominated_by(answer)), dtype=np.int64)


#: The swept paths: the IL test's interrupted loop and a kernel path in it.
PATHS = (
    SweepPath(
        "IL loop",
        "il_thread's loop between interrupts (not its answer to a call)",
        between_interrupts,
    ),
    SweepPath(
        "sem give",
        "bench_sem_give and all it calls",
        lambda code: call_tree_instructions(code, "bench_sem_give"),
    ),
)


def sweep_settings(
    samples: int, cpu: str = "VexRiscv_IMAC", heartbeat: int = HEARTBEAT
) -> SuiteSettings:
    """The suite the sweep runs: IL-a alone, ``samples`` interrupts, a heartbeat every
    ``heartbeat`` polls with the semaphore in it."""
    return SuiteSettings(
        cpu=cpu,
        samples=samples,
        tests="IL_A",
        cflags=f"-DSUITE_IL_HEARTBEAT={heartbeat} -DSUITE_IL_SEM_GIVE=1",
    )


def heartbeat_cycles(capture_path: str | Path) -> int:
    """The heartbeat's period in a capture of the sweep's suite: the most common time
    between two IL-a THREAD markers with no IRQ edge between them (capture cycles)."""
    capture = load_capture(capture_path)
    events = capture.events
    stamps = events.stamp.astype(np.int64) >> capture.identity.stamp_shift
    marker = np.isin(events.source, (Source.MARKER, Source.BUS))
    tests, points, _ = decode(events.value[marker].astype(np.int64) & 0xFFFF)
    thread = np.flatnonzero(marker)[(tests == Test.IL_A) & (points == Point.THREAD)]
    irq = (events.source == Source.IRQ) & (irq_level(events.value.astype(np.int64)) == 1)
    rises = np.flatnonzero(irq)
    quiet = np.searchsorted(rises, thread[1:]) == np.searchsorted(rises, thread[:-1])
    gaps = np.diff(stamps[thread])[quiet]
    if not len(gaps):
        raise ValueError(f"{capture_path}: no two IL-a heartbeats in a row")
    values, counts = np.unique(gaps, return_counts=True)
    return int(values[np.argmax(counts)])


def _path_coverage(where: TableWhere, code: CodeMap) -> list[dict[str, Any]]:
    met = where.samples.addresses[where.samples.addresses >= 0]
    rows = []
    for path in PATHS:
        instructions = np.intersect1d(path.instructions(code), where.truth.takeable)
        found = coverage(met, instructions)
        rows.append(
            {
                "path": path.name,
                "what": path.what,
                "instructions": len(instructions),
                "met": found.met,
                "coverage": found.fraction,
                "missed": [f"0x{address:08x}" for address in found.missed.tolist()],
            }
        )
    return rows


def _place(location: Any) -> str | None:
    """ "il_thread (test_irq.c:58)"; None: no location."""
    return None if location is None else str(location)


def _worst(
    where: TableWhere, candidates: np.ndarray, stamp_ns: float, delays: np.ndarray
) -> dict[str, Any]:
    """The largest of the samples ``candidates`` (indexes; the first of equal ones), its
    trigger delay (None: not triggered), where its interrupt met the code and the masked
    stretch that held it."""
    samples = where.samples
    worst = int(candidates[np.argmax(samples.values[candidates])])
    held = where.held_by(worst)
    return {
        "ns": float(samples.values[worst] * stamp_ns),
        "index": worst,
        "delay_cycles": None if delays[worst] == NO_DELAY else int(delays[worst]),
        "at": _place(where.location(worst)),
        "address": int(samples.addresses[worst]),
        "masked_cycles": int(samples.masked_cycles[worst]),
        "held_by": None if held is None else [_place(held[0]), _place(held[1])],
    }


def run_summary(capture_path: Path, seconds: float) -> dict[str, Any]:
    """One run's coverage of each path, its worst sample and its worst unflagged one (not
    the cold first, none the kernel's tick overlaps), and where each met the code."""
    found = where_of_capture(capture_path, [SWEEP_TABLE])
    if found is None:
        raise ValueError(f"{capture_path}: no ground truth recorded")
    source, tables = found
    where = tables[SWEEP_TABLE]
    samples = where.samples
    capture = load_capture(capture_path)
    stamp_ns = 1e9 / capture.stamp_hz
    triggered = TriggerDelays()
    events = capture.events
    triggered.feed(events.stamp.astype(np.int64), events.source, events.value)
    delays = triggered.of(samples.starts << capture.identity.stamp_shift)
    every = np.arange(len(samples))
    unflagged = every[(every > 0) & ~samples.ticked]
    return {
        "capture": str(capture_path),
        "truth": str(source.log),
        "seconds": seconds,
        "interrupts": len(samples),
        "matched": samples.matched,
        "ticked": int(samples.ticked.sum()),
        "paths": _path_coverage(where, where.code),
        "worst": _worst(where, every, stamp_ns, delays),
        "worst_unflagged": _worst(where, unflagged, stamp_ns, delays),
    }


def sweep(
    directory: Path,
    samples: int = 1000,
    cpu: str = "VexRiscv_IMAC",
    heartbeat: int = HEARTBEAT,
    irq: IrqSettings = DEMO_IRQ,
    build_dir: Path = BUILD_DIR,
    log: Any = None,
) -> dict[str, Any]:
    """Builds the sweep's suite, runs the random and the swept capture into ``directory``
    (both with ``irq``'s generator: the sweep's arms its trigger) and gives the comparison
    (what ``latscope sweep --json`` prints)."""
    directory.mkdir(parents=True, exist_ok=True)
    settings = sweep_settings(samples, cpu, heartbeat)
    build = build_soc(settings, build_dir=build_dir, log=log, sump=False)
    runs = {}
    random_path = directory / "random.lsc"
    started = time.monotonic()
    run = capture_suite(build, irq, output=random_path, truth=directory / "random.truth")
    _check_exit(run)
    runs["random"] = run_summary(random_path, time.monotonic() - started)
    period = heartbeat_cycles(random_path)
    delays = f"0:{period + MARGIN}:1"
    swept = directory / "sweep.lsc"
    started = time.monotonic()
    # The generator arms one firing per period (docs/protocol.md, "Triggered IRQs"): the
    # first THREAD marker after it, a heartbeat (the thread's answer to the interrupt
    # before came long before), fires the IRQ the next delay later.
    run = capture_suite(
        build,
        irq,
        output=swept,
        truth=directory / "sweep.truth",
        trigger=(TRIGGER, delays),
    )
    _check_exit(run)
    runs["sweep"] = run_summary(swept, time.monotonic() - started)
    document = {
        "table": SWEEP_TABLE,
        "cpu": cpu,
        "samples": samples,
        "heartbeat_polls": heartbeat,
        "heartbeat_cycles": period,
        "trigger": TRIGGER,
        "delays": delays,
        "irq": {"period": irq.period, "jitter_mask": irq.jitter_mask, "width": irq.width},
        "runs": runs,
    }
    (directory / "sweep.json").write_text(json.dumps(document, indent=2) + "\n")
    return document


def _check_exit(run: Any) -> None:
    if run.exit_code != 0:
        raise RuntimeError(f"the sweep's suite failed (exit {run.exit_code}): {run.console[-500:]}")


def comparison_text(document: dict[str, Any]) -> str:
    """The two runs side by side: coverage of each path, the maximum (of all samples and
    without the flagged ones), where it met the code and what held it, the time."""
    random, swept = document["runs"]["random"], document["runs"]["sweep"]
    rows = [("", "random phase", f"sweep ({document['trigger']}, delays {document['delays']})")]
    for left, right in zip(random["paths"], swept["paths"]):
        rows.append((f"{left['path']} coverage", _coverage_text(left), _coverage_text(right)))
    for key, title in (("worst", "all samples"), ("worst_unflagged", "without cold, tick")):
        a, b = random[key], swept[key]
        rows.append((f"max {document['table']}, {title} (ns)", f"{a['ns']:.1f}", f"{b['ns']:.1f}"))
        rows.append(("  met", _met_text(a), _met_text(b)))
        rows.append(("  held by (masked)", _held_text(a), _held_text(b)))
    rows.append(("time (s)", f"{random['seconds']:.1f}", f"{swept['seconds']:.1f}"))
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    lines = [
        f"latscope sweep: {document['table']} on the simulated SoC ({document['cpu']}), "
        f"{document['samples']} interrupts a run; heartbeat every {document['heartbeat_polls']} "
        f"polls, {document['heartbeat_cycles']} cycles; paths: "
        + "; ".join(f"{path['path']}: {path['what']}" for path in swept["paths"])
    ]
    lines += [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows
    ]
    return "\n".join(lines)


def _met_text(worst: dict[str, Any]) -> str:
    delay = worst["delay_cycles"]
    return (worst["at"] or "-") + ("" if delay is None else f", delay {delay} cycles")


def _coverage_text(path: dict[str, Any]) -> str:
    return f"{path['met']}/{path['instructions']} ({path['coverage']:.1%})"


def _held_text(worst: dict[str, Any]) -> str:
    held = worst["held_by"]
    if held is None:
        return "none"
    return f"{held[0]} .. {held[1]}, {worst['masked_cycles']} cycles"
