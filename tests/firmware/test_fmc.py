"""The STM32 FMC port (docs/duts/nucleo-144-fmc.md): markers as one 16-bit store to the FMC's
bank 1, the appliance a 16-bit SRAM there (docs/membus.md).

QEMU emulates no FMC: its build (qemu-stm32-fmc) has the FMC's registers and window in a
range QEMU maps as an unimplemented device that logs every store (firmware/ports/cortex-m/
fmc_stm32.h), so the log holds the set-up and each marker's store, size included.
"""

import re
import subprocess

import numpy as np
import pytest
from test_duts import (
    ROOT,
    SAMPLES,
    SUITE,
    UNIMP_WRITE,
    check_cm_tables,
    check_tick_markers,
    logged_stores,
    make,
    need,
    need_arm,
    suite_under_qemu,
)

from latscope_defs.protocol import Source, memory_bus_write

#: fmc_stm32.h under QEMU: the FMC's registers at their offsets in the backup SRAM's range,
#: the bank's first halfword at 0x200.
STAND_IN = re.compile(
    r"^BKPSRAM: unimplemented device write \(size (\d), offset (0x[0-9a-f]+), "
    r"value (0x[0-9a-f]+)\)$"
)
BCR1, BTR1, WINDOW = 0x000, 0x004, 0x200
#: The bus the port sets up: 16 data lines, A0-A15 (docs/duts/nucleo-144-fmc.md).
BUS = memory_bus_write(16, 16)
PAGE = ROOT / "docs" / "duts" / "nucleo-144-fmc.md"
WIRING_ROW = re.compile(r"^\| (cs|we|data \d+|address \d+) \| (\w+) \| P([A-I])(\d+) \|$", re.M)
GPIO_MODER, GPIO_OSPEEDR, GPIO_AFRL, GPIO_AFRH = 0x00, 0x08, 0x20, 0x24
AF_FMC = 12


def bus_value(address, data):
    """The BUS event the appliance makes of a write (latscope_defs.protocol.memory_bus_write)."""
    return address << BUS["address"].offset | data << BUS["data"].offset


def fmc_stores(log, systicks):
    """(size, offset, value) of the stores to the stand-in range: the set-up's (the
    registers, before the window's offset) and the markers' (``systicks``: as
    test_duts.bsrr_stores, counting both)."""

    def store(line):
        match = STAND_IN.match(line)
        return tuple(int(field, 0) for field in match.groups()) if match else None

    stores = logged_stores(log, store, systicks)
    first = next(k for k, (_, offset, _) in enumerate(stores) if offset >= WINDOW)
    return stores[:first], stores[first:]


def gpio_levels(log):
    """{(port, register offset): last word stored} of QEMU's log of the GPIO ports."""
    last = {}
    for line in log.splitlines():
        match = UNIMP_WRITE.match(line)
        if match:
            last[match[1][-1], int(match[2], 16)] = int(match[3], 16)
    return last


def check_fmc_pins(log):
    """Every pin of the page's wiring table is the FMC's (alternate function 12) at the highest
    speed after the start-up, and no other pin of those ports is."""
    rows = WIRING_ROW.findall(PAGE.read_text())
    assert len(rows) == 2 + 16 + 16, rows
    pins = {}
    for _, _, port, pin in rows:
        pins.setdefault(port, set()).add(int(pin))
    last = gpio_levels(log)
    for port, numbers in pins.items():
        moder = last[port, GPIO_MODER]
        speed = last[port, GPIO_OSPEEDR]
        af = last.get((port, GPIO_AFRL), 0) | last.get((port, GPIO_AFRH), 0) << 32
        for pin in range(16):
            fmc = pin in numbers
            assert ((moder >> 2 * pin) & 3 == 2) == fmc, (port, pin, hex(moder))
            assert ((af >> 4 * pin) & 0xF == AF_FMC) == fmc, (port, pin, hex(af))
            assert not fmc or (speed >> 2 * pin) & 3 == 3, (port, pin, hex(speed))


def check_fmc_setup(setup):
    """BTR1 then BCR1 (the bank enabled last), with RM0390's fields: SRAM, 16 bits, writes
    enabled, mode 1; ADDSET 0 and DATAST 1, the fastest write."""
    assert [(size, offset) for size, offset, _ in setup] == [(4, BTR1), (4, BCR1)]
    btr, bcr = setup[0][2], setup[1][2]
    assert btr & 0xF == 0 and (btr >> 8) & 0xFF == 1 and (btr >> 16) & 0xF == 0, hex(btr)
    assert bcr & 1 and not bcr & 2, hex(bcr)  # MBKEN, not multiplexed
    assert (bcr >> 2) & 3 == 0 and (bcr >> 4) & 3 == 1, hex(bcr)  # SRAM, 16 bits
    assert bcr >> 12 & 1 and not bcr >> 13 & 1 and not bcr >> 14 & 1, hex(bcr)  # WREN, mode 1


@pytest.mark.qemu
def test_fmc_suite_under_qemu(tmp_path):
    """The suite with the FMC marker port runs to its end under QEMU: the FMC pins and bank 1
    set up, every marker ONE 16-bit store to the bank's first halfword, the tick markers
    inside the SysTicks, and the store values, taken as the appliance's BUS events, make
    the tables of the native run."""
    need_arm()
    need("qemu-system-arm")
    board = "qemu-stm32-fmc"
    make(
        SUITE,
        "cortex-m",
        f"CM_BOARD={board}",
        "MARKER=bus",
        f"SAMPLES={SAMPLES}",
        f"BUILD={tmp_path}",
    )
    log = tmp_path / "unimp.log"
    suite_under_qemu(tmp_path / f"cm-{board}-bus" / "suite.elf", log)
    systicks = []
    setup, markers = fmc_stores(log, systicks)
    check_fmc_setup(setup)
    check_fmc_pins(log.read_text())
    assert {(size, offset) for size, offset, _ in markers} == {(2, WINDOW)}
    values = np.array(
        [bus_value((offset - WINDOW) // 2, data) for _, offset, data in markers], np.int64
    )
    check_tick_markers(values & 0xFFFF, systicks, first_store=len(setup), stores_per_marker=1)
    check_cm_tables(values, Source.BUS)


@pytest.mark.slow
def test_fmc_marker_is_one_store(tmp_path):
    """On the Nucleo build a marker (suite_end) is one STRH to the bank, 0x60000000, with no
    interrupt masking and no other store; the GPIO variant is refused."""
    need_arm()
    make(SUITE, "cortex-m", "CM_BOARD=stm32f4-fmc", "MARKER=bus", f"BUILD={tmp_path}")
    elf = tmp_path / "cm-stm32f4-fmc-bus" / "suite.elf"
    code = subprocess.run(
        ["arm-none-eabi-objdump", "-d", "--no-show-raw-insn", "--disassemble=suite_end", str(elf)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("<suite_end>:")[1]
    assert re.findall(r"\bstr\w*", code) == ["strh"], code
    assert "0x60000000" in code and "cpsid" not in code and "msr" not in code, code
    refused = subprocess.run(
        ["make", "-s", "-C", str(SUITE), "cortex-m", "CM_BOARD=stm32f4-fmc", f"BUILD={tmp_path}"],
        capture_output=True,
        text=True,
    )
    assert refused.returncode != 0 and "MARKER=bus" in refused.stdout + refused.stderr
