"""The simulated SoC's memory map and CPU table are written once (sim/soc_map.toml): the files
generated from it are current, no other harness, RTL, firmware or build file spells one of
its addresses or -march values, and the makefiles give each CPU the -march it lists."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SIM = ROOT / "sim"
GENERATED = {
    SIM / "firmware" / "soc_map.h",
    SIM / "firmware" / "soc_map.ld",
    SIM / "rtl" / "soc_map.vh",
    SIM / "soc_map.mk",
}
#: Where a copy of the map would be used: the harness, the RTL, the firmware of the SoC and
#: its ports, their makefiles, and the Python that builds or exports for the simulation.
READERS = [
    *SIM.glob("harness/*"),
    *SIM.glob("rtl/*"),
    *SIM.glob("firmware/*"),
    SIM / "Makefile",
    *(ROOT / "firmware" / "ports" / "sim").glob("*"),
    *(ROOT / "firmware" / "suite").glob("sim/*"),
    ROOT / "firmware" / "Makefile",
    ROOT / "firmware" / "suite" / "Makefile",
    ROOT / "host" / "latscope" / "simulated" / "soc.py",
    ROOT / "gateware" / "latscope_gateware" / "verilog_export.py",
]
HEX = re.compile(r"(?:0[xX]|'[hH])([0-9A-Fa-f_]+)")
#: Comments may name the values (docs); code may not.
COMMENT = {
    ".py": re.compile(r"#.*"),
    "": re.compile(r"#.*"),
    ".mk": re.compile(r"#.*"),
    ".ld": re.compile(r"/\*.*?(\*/|$)|^\s*\*.*"),
}
C_COMMENT = re.compile(r"//.*|/\*.*?(\*/|$)|^\s*\*.*")


def _code_lines(path):
    """(line number, line without its comment) of a source file."""
    comment = COMMENT.get(path.suffix, C_COMMENT)
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        yield number, comment.sub("", line)


def _map():
    with open(SIM / "soc_map.toml", "rb") as file:
        return tomllib.load(file)


def test_generated_files_are_current():
    result = subprocess.run(
        [sys.executable, str(SIM / "soc_map.py"), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_no_other_file_spells_an_address_or_march():
    soc = _map()
    page = soc["peripherals"]
    addresses = {soc["ram"]["base"], page["base"], page["base"] + page["trace"]["offset"]}
    addresses |= {page["base"] + offset for offset in page["registers"].values()}
    # The word address forms (RTL) too.
    addresses |= {address >> 2 for address in addresses} | {page["base"] >> 12}
    marches = set(soc["cpus"].values())
    readers = [path for path in READERS if path.is_file() and path not in GENERATED]
    assert len(readers) > 20
    copies = []
    for path in readers:
        for number, line in _code_lines(path):
            found = {int(digits.replace("_", ""), 16) for digits in HEX.findall(line)}
            words = set(re.findall(r"\brv32\w+", line))
            if found & addresses or words & marches:
                copies.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not copies, "the map is spelt out here (use sim/soc_map.toml):\n" + "\n".join(copies)


def test_makefiles_give_each_cpu_its_march():
    for cpu, march in _map()["cpus"].items():
        for directory in (SIM, ROOT / "firmware" / "suite"):
            result = subprocess.run(
                [
                    "make",
                    "-s",
                    "--no-print-directory",
                    "-C",
                    str(directory),
                    f"CPU={cpu}",
                    "print-march",
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            assert result.stdout.strip() == march, (directory, cpu)
    result = subprocess.run(
        ["make", "-s", "-C", str(SIM), "CPU=VexRiscv_Nope", "print-march"],
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0 and "VexRiscv_Lite" in result.stderr
