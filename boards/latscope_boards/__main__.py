"""``python -m latscope_boards``: build, program and document latscope's FPGA boards.

build BOARD     bitstream with the YoWASP tools; prints utilisation and Fmax, exits 1
                if Fmax is below the capture clock; a build as shipped (the board's seed,
                default clock; any variant) is recorded in boards/results/BOARD.json
                (BOARD-VARIANT.json for another variant than the default: ulx3s-12f,
                icebreaker-bringup), built in build/boards/ under the same name
program BOARD   prints and runs the programming command (openFPGALoader)
pinout BOARD    the pin-out table of docs/boards.md (Markdown)
table           the utilisation/Fmax table of docs/boards.md, from boards/results/*.json
"""

import argparse
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from . import BOARDS, DEFAULT_BOARD, get_board, record_name
from .docs import pinout_table, results_table
from .toolchain import DEFAULT_BUILD_ROOT, DESIGN_NAME, REPO_ROOT, ToolMissing, build, format_result

#: Where ``build`` records the figures the docs table is made from (committed).
RESULTS_DIR = REPO_ROOT / "boards" / "results"


def _board(args):
    return get_board(args.board, clock_hz=args.clock_hz, variant=args.variant)


def _build_dir(args):
    """The build's directory: ``--build-dir``, else one per record name (a variant's
    bitstream does not overwrite the default one's)."""
    return Path(args.build_dir or DEFAULT_BUILD_ROOT / record_name(args.board, args.variant))


def _build(args):
    board = _board(args)
    print(
        f"building {board.title}: capture clock {board.clock_hz / 1e6:g} MHz, link clock "
        f"{board.link_clock_hz / 1e6:g} MHz, UART {board.baud / 1e6:g} Mbaud (divisor "
        f"{board.uart_divisor})",
        flush=True,
    )
    seed = board.seed if args.seed is None else args.seed
    result = build(board, build_dir=_build_dir(args), seed=seed, verbose=args.verbose)
    print(format_result(result, board.family))
    # The docs' table is of each board as shipped: default clock, its seed (every size).
    if args.record and seed == board.seed and args.clock_hz is None:
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        path = RESULTS_DIR / f"{record_name(args.board, args.variant)}.json"
        path.write_text(json.dumps(result.to_json(), indent=2) + "\n")
        print(f"  recorded in {path.relative_to(REPO_ROOT)}")
    print(f"  bitstream {result.bitstream}")
    if not result.timing_met:
        print(
            f"error: {board.name}: timing not met: capture Fmax {result.fmax_mhz:.2f} MHz "
            f"(clock {board.clock_hz / 1e6:g} MHz), link Fmax {result.link_fmax_mhz:.2f} MHz "
            f"(clock {board.link_clock_hz / 1e6:g} MHz)",
            file=sys.stderr,
        )
        return 1
    return 0


def _program(args):
    board = _board(args)
    bitstream = _build_dir(args) / (DESIGN_NAME + board.bitstream_suffix)
    if not bitstream.exists():
        variant = f" VARIANT={args.variant}" if args.variant else ""
        print(
            f"error: {bitstream}: no bitstream; run `make bitstream BOARD={board.name}"
            f"{variant}` first",
            file=sys.stderr,
        )
        return 1
    argv = [part.replace("{bitstream}", str(bitstream)) for part in board.program]
    print(" ".join(shlex.quote(part) for part in argv))
    if shutil.which(argv[0]) is None:
        print(
            f"error: {argv[0]} not found: install it (Debian: apt-get install openfpgaloader)",
            file=sys.stderr,
        )
        return 1
    return subprocess.call(argv)


def _pinout(args):
    print(pinout_table(_board(args)))
    return 0


def _table(args):
    print(results_table(RESULTS_DIR))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m latscope_boards",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for name, handler in (("build", _build), ("program", _program), ("pinout", _pinout)):
        command = commands.add_parser(name)
        command.set_defaults(handler=handler)
        command.add_argument("board", nargs="?", default=DEFAULT_BOARD, choices=list(BOARDS))
        command.add_argument(
            "--variant",
            help="ULX3S: ECP5 size (12F, 25F, 45F, 85F) or membus (85F); HX8K: membus or full; "
            "iCEBreaker: bringup (the clock-phase probe, no IRQ trigger), membus, spi (the SPI "
            "link, no IRQ trigger) or full",
        )
        command.add_argument("--clock-hz", type=int, help="capture clock (default: the board's)")
        command.add_argument("--build-dir", help="default: build/boards/BOARD[-VARIANT]")
        if name == "build":
            command.add_argument(
                "--seed",
                type=int,
                default=None,
                help="nextpnr seed (default: the board's shipped seed)",
            )
            command.add_argument("--verbose", action="store_true", help="show the tools' output")
            command.add_argument(
                "--no-record",
                dest="record",
                action="store_false",
                help="do not update boards/results/BOARD.json",
            )
    commands.add_parser("table").set_defaults(handler=_table)
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except (ValueError, ToolMissing, subprocess.CalledProcessError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
