"""The Raspberry Pi SMI marker port (MARKER=bus on Linux; docs/duts/raspberry-pi.md,
"Markers on the SMI"): the set-up programs the SMI through /dev/mem, a marker is one store
to the SMI's data FIFO.

No Pi and no emulator with an SMI here: the port runs natively against a file standing in
for /dev/mem (the peripherals at physical address 0), which keeps every register store; its
contents after the run are checked against the kernel header's fields
(include/linux/broadcom/bcm2835_smi.h) and the BCM2835's alternate functions. What the SMI
then does on its pins only a Pi shows.
"""

import re
import struct
import subprocess

import pytest
from test_duts import SUITE, aarch64_elf, make, need

from latscope_defs.markers import Point, Test, encode

GPIO, CM_SMICTL, SMI = 0x200000, 0x1010B0, 0x600000
SMICS, SMIL, SMIA, SMID, SMIDSW0, SMIDC = 0x00, 0x04, 0x08, 0x0C, 0x14, 0x30
ALT1 = 0b100
SMI_PINS = [*range(0, 6), 7, *range(8, 24)]  # SA5-SA0, SWE, SD0-SD15


def fake_devmem(path):
    """Physical memory from 0 to past the SMI's registers, the SMI's clock on (CM_SMICTL
    ENAB: the kernel's smi driver would have set it)."""
    with open(path, "wb") as f:
        f.truncate(SMI + 4096)
        f.seek(CM_SMICTL)
        f.write(struct.pack("<I", 1 << 4))


def test_smi_setup_and_markers_on_a_stand_in(tmp_path):
    """The suite (SEO-a and SEO-d) with the SMI port runs to its end against the stand-in:
    the SMI's pins at ALT1 (SD0-SD15, SWE, SA0-SA5; SOE left alone), device 0's writes 16
    bits wide with setup, hold, pace and strobe of 1 SMI clock, no DMA, address 0, the
    longest count, an unpacked write transfer started; the data register holds the suite's
    last marker."""
    need("gcc", "make")
    make(SUITE, "linux", "MARKER=bus", "SAMPLES=10", "TESTS=SEO_A,SEO_D", f"BUILD={tmp_path}")
    devmem = tmp_path / "mem"
    fake_devmem(devmem)
    env = {"LATSCOPE_PERI_BASE": "0", "LATSCOPE_DEVMEM": str(devmem)}
    run = subprocess.run(
        [str(tmp_path / "linux-native-smi" / "suite")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0 and "suite: done" in run.stdout, run.stdout + run.stderr
    assert "linux: marker path: SMI" in run.stdout and "AFERR" not in run.stdout
    memory = devmem.read_bytes()

    def word(address):
        return struct.unpack_from("<I", memory, address)[0]

    fsel = [word(GPIO + 4 * n) for n in range(3)]
    for pin in range(24):
        function = (fsel[pin // 10] >> 3 * (pin % 10)) & 7
        assert (function == ALT1) == (pin in SMI_PINS), (pin, function)
    dsw = word(SMI + SMIDSW0)
    fields = {
        "width": dsw >> 30,
        "setup": (dsw >> 24) & 0x3F,
        "format": (dsw >> 22) & 3,
        "hold": (dsw >> 16) & 0x3F,
        "paceall": (dsw >> 15) & 1,
        "pace": (dsw >> 8) & 0x7F,
        "dreq": (dsw >> 7) & 1,
        "strobe": dsw & 0x7F,
    }
    assert fields == {
        "width": 1,  # 16 bits
        "setup": 1,
        "format": 0,
        "hold": 1,
        "paceall": 0,
        "pace": 1,
        "dreq": 0,
        "strobe": 1,
    }, hex(dsw)
    assert word(SMI + SMIDC) == 0 and word(SMI + SMIA) == 0
    assert word(SMI + SMIL) == 0xFFFF_FFFF
    smics = word(SMI + SMICS)
    assert smics & 1 and smics & (1 << 5) and smics & (1 << 3), hex(smics)  # ENABLE WRITE START
    assert not smics & (1 << 14), hex(smics)  # PXLDAT clear: one transfer per FIFO word
    assert word(SMI + SMID) == encode(Test.SEO_D, Point.END)


def test_smi_refuses_without_its_clock(tmp_path):
    """With the SMI's clock off (no dtoverlay=smi) the port says so and the suite does not
    start."""
    need("gcc", "make")
    make(SUITE, "linux", "MARKER=bus", "TESTS=SEO_A", f"BUILD={tmp_path}")
    devmem = tmp_path / "mem"
    fake_devmem(devmem)
    with open(devmem, "r+b") as f:
        f.seek(CM_SMICTL)
        f.write(bytes(4))
    env = {"LATSCOPE_PERI_BASE": "0", "LATSCOPE_DEVMEM": str(devmem)}
    run = subprocess.run(
        [str(tmp_path / "linux-native-smi" / "suite")], env=env, capture_output=True, text=True
    )
    assert run.returncode == 1 and "dtoverlay=smi" in run.stderr
    assert "suite: start" not in run.stdout


@pytest.mark.slow
def test_smi_cross_compiles_for_the_pi_with_one_store_a_marker(tmp_path):
    """The SMI port for a Raspberry Pi (aarch64): a marker (suite_end) is one 32-bit store
    (to the SMI's data register through the mapped pointer), no lock, no call; under
    qemu-aarch64 the program starts and, on a machine that is not a Pi, says what it
    needs."""
    need("aarch64-linux-gnu-gcc", "make", "qemu-aarch64")
    make(SUITE, "linux", "MARKER=bus", "CROSS=aarch64-linux-gnu-", f"BUILD={tmp_path}", "GPIOD=0")
    elf = tmp_path / "linux-aarch64-linux-gnu-smi" / "suite"
    aarch64_elf(elf)
    code = subprocess.run(
        [
            "aarch64-linux-gnu-objdump",
            "-d",
            "--no-show-raw-insn",
            "--disassemble=suite_end",
            str(elf),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("<suite_end>:")[1]
    assert re.findall(r"\bst\w*", code) == ["str"] and re.search(r"\bstr\s+w\d+,", code), code
    assert not re.search(r"\bbl?\s", code), code
    run = subprocess.run(
        ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu", str(elf)],
        env={"LATSCOPE_DEVMEM": str(tmp_path / "absent")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "LATSCOPE_PERI_BASE" in run.stderr or "absent" in run.stderr, run.stderr
