"""Wiring of the devices under test of docs/duts/ to each board's appliance pins.

The DUT side follows the marker ports (firmware/suite/linux, stm32f4, rp2040: which GPIO
carries which marker bit); the board side comes from the board descriptions, so the tables of
docs/duts/*.md are made here and a test checks they are current:

    python -m latscope_boards.duts          # every table, by DUT and board
"""

from dataclasses import dataclass

from . import BOARDS, get_board

__all__ = ["DUTS", "wiring_table"]


@dataclass(frozen=True)
class DutPins:
    """The DUT's end of every appliance signal: (GPIO name, header pin) by signal name."""

    title: str
    header: str  # what the header-pin column is called
    signals: dict  # "D0".."D15", "STROBE", "EDGE0".."EDGE3", "IRQ"
    ground: tuple


def _signals(data, strobe, edges, irq):
    rows = {f"D{n}": pin for n, pin in enumerate(data)}
    rows["STROBE"] = strobe
    rows.update({f"EDGE{n}": pin for n, pin in enumerate(edges)})
    rows["IRQ"] = irq
    return rows


# BCM GPIO n on the 40-pin header (all Pi models with that header).
_PI_HEADER = {
    0: 27,
    1: 28,
    2: 3,
    3: 5,
    4: 7,
    5: 29,
    6: 31,
    7: 26,
    8: 24,
    9: 21,
    10: 19,
    11: 23,
    12: 32,
    13: 33,
    14: 8,
    15: 10,
    16: 36,
    17: 11,
    22: 15,
    23: 16,
    24: 18,
    25: 22,
}


def _pi(gpio):
    return f"GPIO{gpio}", str(_PI_HEADER[gpio])


# Nucleo-64 morpho headers (UM1724): the STM32 pins the STM32F4 port uses.
_MORPHO = {
    "PB0": "CN7-34",
    "PB1": "CN10-24",
    "PB2": "CN10-22",
    "PB3": "CN10-31",
    "PB4": "CN10-27",
    "PB5": "CN10-29",
    "PB6": "CN10-17",
    "PB7": "CN7-21",
    "PB8": "CN10-3",
    "PB9": "CN10-5",
    "PB10": "CN10-25",
    "PC11": "CN7-2",
    "PB12": "CN10-16",
    "PB13": "CN10-30",
    "PB14": "CN10-28",
    "PB15": "CN10-26",
    "PC8": "CN10-2",
    "PC9": "CN10-1",
    "PC10": "CN7-1",
    "PC12": "CN7-3",
    "PC6": "CN10-4",
    "PA0": "CN7-28",
}


def _nucleo(pin):
    return pin, _MORPHO[pin]


# Raspberry Pi Pico: GPn on the board's pins 1-40.
_PICO_PIN = {
    0: 1,
    1: 2,
    2: 4,
    3: 5,
    4: 6,
    5: 7,
    6: 9,
    7: 10,
    8: 11,
    9: 12,
    10: 14,
    11: 15,
    12: 16,
    13: 17,
    14: 19,
    15: 20,
    16: 21,
    17: 22,
    18: 24,
    19: 25,
    20: 26,
    21: 27,
    22: 29,
}


def _pico(gpio):
    return f"GP{gpio}", str(_PICO_PIN[gpio])


DUTS = {
    "raspberry-pi": DutPins(
        "Raspberry Pi (40-pin header, BCM GPIO numbers)",
        "Pi pin",
        _signals([_pi(n) for n in range(16)], _pi(16), [_pi(n) for n in (22, 23, 24, 25)], _pi(17)),
        ("6", "9", "14", "20", "25", "30", "34", "39"),
    ),
    "nucleo": DutPins(
        "STM32 Nucleo-64 (NUCLEO-F401RE / -F446RE), morpho headers",
        "Nucleo pin",
        _signals(
            [_nucleo(f"PB{n}") if n != 11 else _nucleo("PC11") for n in range(16)],
            _nucleo("PC8"),
            [_nucleo(p) for p in ("PC9", "PC10", "PC12", "PC6")],
            _nucleo("PA0"),
        ),
        ("CN7-8", "CN7-19", "CN7-20", "CN7-22", "CN10-9", "CN10-20"),
    ),
    "pico": DutPins(
        "Raspberry Pi Pico (RP2040)",
        "Pico pin",
        _signals(
            [_pico(n) for n in range(16)],
            _pico(16),
            [_pico(n) for n in (18, 19, 21, 22)],
            _pico(17),
        ),
        ("3", "8", "13", "18", "23", "28", "33", "38"),
    ),
}


def wiring_table(dut_name, board):
    """Markdown: each appliance signal from the DUT's pin to the board's header pin."""
    dut = DUTS[dut_name]
    lines = [
        f"| signal | DUT GPIO | {dut.header} | {board.name} pin |",
        "| --- | --- | --- | --- |",
    ]
    for signal, pin, direction in board.pins.signals():
        gpio, header = dut.signals[signal]
        arrow = "DUT -> board" if direction == "in" else "board -> DUT"
        lines.append(f"| {signal} ({arrow}) | {gpio} | {header} | {pin.label} |")
    lines.append(f"| GND | | {', '.join(dut.ground)} | {', '.join(board.pins.ground)} |")
    return "\n".join(lines)


def main():
    for dut_name in DUTS:
        for name in BOARDS:
            print(f"## {dut_name} -> {name}\n\n{wiring_table(dut_name, get_board(name))}\n")


if __name__ == "__main__":
    main()
