"""The tables of docs/boards.md, made from the board descriptions and the recorded builds."""

import json
from pathlib import Path

from . import BOARDS, get_board, recorded_builds
from .toolchain import UTILISATION_KEYS

__all__ = ["pinout_table", "results_table", "pad_delay_table"]


def pinout_table(board):
    """Markdown: every appliance pin of ``board``, header pin and FPGA ball."""
    platform = board.platform_class()
    lines = ["| signal | dir | header pin | FPGA pin |", "| --- | --- | --- | --- |"]
    for signal, pin, direction in board.pins.signals():
        lines.append(f"| {signal} | {direction} | {pin.label} | {board.balls(platform, [pin])} |")
    lines.append(f"| GND | | {', '.join(board.pins.ground)} | |")
    return "\n".join(lines)


def results_table(results_dir):
    """Markdown: utilisation and Fmax of each board's recorded build (``BOARD.json``)."""
    # Deterministic figures only (same tools, same seed, same numbers), so a rebuild does not
    # make the docs stale; build times vary and are in the bench's output instead.
    lines = [
        "| board | device | capture clock | Fmax (shipped seed) | goal | link clock | "
        "link Fmax | logic | block RAM | I/O | nextpnr |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, board in recorded_builds():
        path = Path(results_dir) / f"{name}.json"
        if not path.exists():
            lines.append(f"| {name} | | | not built | | | | | | | |")
            continue
        result = json.loads(path.read_text())
        family = board.family
        used = {}
        for key, title in UTILISATION_KEYS[family]:
            if key in result["utilisation"]:
                cell = result["utilisation"][key]
                used[title] = f"{cell['used']} / {cell['available']}"
        logic = used.get("LCs") or f"{used.get('LUT4', '?')} LUT4, {used.get('FF', '?')} FF"
        verdict = "met" if result["timing_met"] else "NOT MET"
        nextpnr = f"yowasp-nextpnr-{family}"
        tools = f"{nextpnr} {result['tool_versions'].get(nextpnr, '?')}"
        # A one-clock build (no link clock of its own) runs the link on the capture clock.
        link_hz = result.get("link_clock_hz") or 0
        link = (
            f"{link_hz / 1e6:g} MHz | {result['link_fmax_mhz']:.1f} MHz"
            if link_hz
            else "(capture clock) | (as capture)"
        )
        goal = (
            f"{result['goal_hz'] / 1e6:g} MHz: "
            f"{'reached' if result['goal_reached'] else 'not reached'}"
            if result.get("goal_hz")
            else ""
        )
        if result.get("goal_reached") and result["clock_hz"] < result["goal_hz"]:
            # Reached by resolution (the gearbox): the stamps of the goal clock's half cycles.
            goal += f" ({1e9 / result['clock_hz'] / result['sample_phases']:.2f} ns stamps)"
        lines.append(
            f"| {result['title']} | {result['device']} | {result['clock_hz'] / 1e6:g} MHz | "
            f"{result['fmax_mhz']:.1f} MHz ({verdict}, seed {result['seed']}) | {goal} | {link} | "
            f"{logic} | {used.get('BRAM', '')} | {used.get('I/O', '')} | {tools} |"
        )
    return "\n".join(lines)


def pad_delay_table():
    """Markdown: every board's output (IRQ) and input (strobe, edges) pad delays, step by
    step with their sources, and what the host adds to IRQ stamps (docs/boards.md, "Pad
    delays")."""
    lines = [
        "| board | delay | rising / falling pad edge (ns) | step | source (file: cell, entry) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name in BOARDS:
        board = get_board(name)
        delays = board.pad_delays
        stamp_hz = board.clock_hz * board.sample_phases
        units = delays.irq_stamp_units(stamp_hz)
        for kind, steps, total in (
            ("output (IRQ)", delays.output, delays.output_ns),
            ("input (strobe, edges)", delays.inputs, delays.input_ns),
        ):
            lines.append(f"| {name} | {kind} | **{total[0]:g} / {total[1]:g}** | total | |")
            for step in steps:
                where, entry = step.source.split(", ", 1)
                lines.append(
                    f"| | | {step.rise_ns:g} / {step.fall_ns:g} | {entry.split(':')[0]} | "
                    f"`{where}`: {entry} |"
                )
        lines.append(
            f"| {name} | added to IRQ stamps | {delays.irq_output_ns:g} (the mean) | "
            f"{units} stamp unit{'s' if units != 1 else ''} of {1e9 / stamp_hz:.2f} ns | |"
        )
    return "\n".join(lines)
