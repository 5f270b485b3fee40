"""Fmax and utilisation of each FPGA board's bitstream over several nextpnr seeds.

    .venv/bin/python bench/board_fmax.py [--seeds 5] [BOARD ...]

Builds each board once per seed (placement differs by seed, so Fmax does too), one build at a
time, and prints per board: min / median / max Fmax of the capture clock against it and the
goal clock of issue 12, the same of the link clock and of the iCE40 gearbox's edge clock, its
crossing from the edge clock into the capture clock against its budget, the logic and block
RAM used, and the build time. Takes minutes per seed (see docs/boards.md for the time of one
build).
"""

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from latscope_boards import BOARDS, get_board
from latscope_boards.toolchain import UTILISATION_KEYS, build


def measure(name, seeds, root):
    board = get_board(name)
    results = []
    for seed in range(1, seeds + 1):
        result = build(board, build_dir=Path(root) / f"{name}-seed{seed}", seed=seed)
        print(
            f"  {name} seed {seed}: Fmax capture {result.fmax_mhz:.2f} MHz, link "
            f"{result.link_fmax_mhz:.2f} MHz, {result.seconds:.0f} s",
            flush=True,
        )
        results.append(result)
    return board, results


def report(board, results):
    fmax = [result.fmax_mhz for result in results]
    seconds = [result.seconds for result in results]
    met = sum(result.timing_met for result in results)
    first = results[0]
    print(f"{board.title} ({first.device}), {len(results)} seeds")
    print(
        f"  Fmax      min {min(fmax):.2f}  median {statistics.median(fmax):.2f}  "
        f"max {max(fmax):.2f} MHz (capture clock)"
    )
    if board.link_hz:
        link = [result.link_fmax_mhz for result in results]
        print(
            f"  link Fmax min {min(link):.2f}  median {statistics.median(link):.2f}  "
            f"max {max(link):.2f} MHz (link clock {board.link_hz / 1e6:g} MHz)"
        )
    edge = [result.edge_fmax_mhz for result in results]
    if any(edge):
        print(
            f"  edge Fmax min {min(edge):.2f}  median {statistics.median(edge):.2f}  "
            f"max {max(edge):.2f} MHz (edge clock {board.edge_clock_hz / 1e6:g} MHz)"
        )
    crossing = [result.crossing_ns for result in results]
    if any(crossing):
        print(
            f"  crossing  min {min(crossing):.2f}  median {statistics.median(crossing):.2f}  "
            f"max {max(crossing):.2f} ns (edge clock -> capture clock; budget "
            f"{first.crossing_budget_ns:.2f} ns)"
        )
    # Issue 12's goals are clocks with DDR inputs, i.e. resolutions of half their cycle; a
    # gearbox board (4 samples a cycle) reaches one at half the clock, where timing is met.
    goal_ns = 1e9 / board.goal_hz / 2
    resolution_ns = 1e9 / board.clock_hz / board.sample_phases
    reached = min(fmax) >= board.goal_hz / 1e6 or (met == len(results) and resolution_ns <= goal_ns)
    print(
        f"  capture clock {board.clock_hz / 1e6:g} MHz: met with {met} of {len(results)} "
        f"seeds; resolution {resolution_ns:.2f} ns; goal {board.goal_hz / 1e6:g} MHz "
        f"({goal_ns:.2f} ns): {'reached' if reached else 'not reached'}"
    )
    for key, title in UTILISATION_KEYS[board.family]:
        if key in first.utilisation:
            used = [result.utilisation[key]["used"] for result in results]
            available = first.utilisation[key]["available"]
            print(
                f"  {title:8} min {min(used)}  median {statistics.median(used):g}  "
                f"max {max(used)} of {available}"
            )
    print(
        f"  build     min {min(seconds):.0f}  median {statistics.median(seconds):.0f}  "
        f"max {max(seconds):.0f} s"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("boards", nargs="*", help=f"default: all ({', '.join(BOARDS)})")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--build-root", help="default: a temporary directory")
    args = parser.parse_args(argv)
    boards = args.boards or list(BOARDS)
    for name in boards:
        if name not in BOARDS:
            parser.error(f"unknown board {name!r}; boards: {', '.join(BOARDS)}")
    with tempfile.TemporaryDirectory(prefix="latscope-fmax-") as scratch:
        root = args.build_root or scratch
        measured = [measure(name, args.seeds, root) for name in boards]
    print()
    for board, results in measured:
        report(board, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
