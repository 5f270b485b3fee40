"""Writes the simulated SoC's memory map and CPU table, from sim/soc_map.toml, in the forms the
harness (C++), firmware (C, linker script), RTL (Verilog) and makefiles read.

    python sim/soc_map.py            write the files that differ
    python sim/soc_map.py --check    exit 1, naming them, if any file differs
"""

import argparse
import sys
import tomllib
from pathlib import Path

SIM = Path(__file__).resolve().parent
SOURCE = SIM / "soc_map.toml"
NOTICE = "generated from sim/soc_map.toml by sim/soc_map.py: do not edit"


def load(path=SOURCE):
    """The map, checked: {"ram": {...}, "peripherals": {...}, "gpio": {...}, "load_irq": {...},
    "bus_load": {...}, "cpus": {...}}."""
    with open(path, "rb") as file:
        soc = tomllib.load(file)
    for name in ("ram", "peripherals"):
        size = soc[name]["bytes"]
        if size & (size - 1) or soc[name]["base"] % size:
            raise ValueError(
                f"{path}: [{name}]: bytes must be a power of two that divides the base"
            )
    page = soc["peripherals"]
    for name, offset in [*page["registers"].items(), ("trace", page["trace"]["offset"])]:
        if offset % 4 or offset >= page["bytes"]:
            raise ValueError(f"{path}: {name}: offset 0x{offset:x} is not a word in the page")
    window = soc["bus_load"]["window_cycles"]
    if window & (window - 1) or not 2 <= window <= 1 << 16:
        raise ValueError(f"{path}: [bus_load]: window_cycles must be a power of two, 2..65536")
    if not 1 <= soc["load_irq"]["line"] < 32:
        raise ValueError(f"{path}: [load_irq]: line must be 1..31 (0 is IRQ_PENDING's)")
    return soc


def constants(soc):
    """The map's numbers that are not addresses, by C name (without the SOC_ prefix)."""
    return {
        "GPIO_STROBE_BIT": soc["gpio"]["strobe_bit"],
        "GPIO_LOOP_BIT": soc["gpio"]["loop_bit"],
        "LOAD_IRQ_LINE": soc["load_irq"]["line"],
        "BUS_LOAD_WINDOW": soc["bus_load"]["window_cycles"],
    }


def addresses(soc):
    """Byte addresses, by C name (without the SOC_ prefix)."""
    page = soc["peripherals"]
    result = {
        "RAM_BASE": soc["ram"]["base"],
        "RAM_BYTES": soc["ram"]["bytes"],
        "PERIPHERAL_BASE": page["base"],
        "PERIPHERAL_BYTES": page["bytes"],
    }
    result |= {name: page["base"] + offset for name, offset in page["registers"].items()}
    result |= {
        "TRACE_BASE": page["base"] + page["trace"]["offset"],
        "TRACE_BYTES": page["trace"]["bytes"],
    }
    return result


def c_header(soc):
    lines = [
        f"/* The simulated SoC's memory map, {NOTICE}. */",
        "#ifndef LATSCOPE_SOC_MAP_H",
        "#define LATSCOPE_SOC_MAP_H",
        "",
    ]
    lines += [f"#define SOC_{name:<20} 0x{value:08X}u" for name, value in addresses(soc).items()]
    lines += [f"#define SOC_{name:<20} {value}" for name, value in constants(soc).items()]
    lines += ["", "#endif"]
    return "\n".join(lines) + "\n"


def linker_memory(soc):
    ram = soc["ram"]
    return (
        f"/* The simulated SoC's RAM, {NOTICE}. */\n"
        f"MEMORY\n{{\n    ram (rwx) : ORIGIN = 0x{ram['base']:08X}, "
        f"LENGTH = 0x{ram['bytes']:X}\n}}\n"
    )


def verilog_header(soc):
    """Word addresses, as the Wishbone buses carry them (30 bits)."""
    ram, page = soc["ram"], soc["peripherals"]
    page_bits = (page["bytes"] // 4).bit_length() - 1
    defines = {
        "SOC_RESET_VECTOR": f"32'h{ram['base']:08X}",
        "SOC_RAM_BASE_WORD": f"30'h{ram['base'] >> 2:07X}",
        "SOC_RAM_WORDS_LOG2": f"{(ram['bytes'] // 4).bit_length() - 1}",
        # The page: word address bits 29..PAGE_WORD_BITS, the register: the bits below.
        "SOC_PAGE_WORD_BITS": f"{page_bits}",
        "SOC_PERIPHERAL_PAGE": f"{30 - page_bits}'h{page['base'] >> (2 + page_bits):X}",
    }
    defines |= {
        f"SOC_{name}_WORD": f"{page_bits}'h{offset >> 2:03X}"
        for name, offset in page["registers"].items()
    }
    defines |= {f"SOC_{name}": f"{value}" for name, value in constants(soc).items()}
    lines = [
        f"// The simulated SoC's memory map, {NOTICE}.",
        "`ifndef LATSCOPE_SOC_MAP_VH",
        "`define LATSCOPE_SOC_MAP_VH",
    ]
    lines += [f"`define {name:<24} {value}" for name, value in defines.items()]
    return "\n".join(lines + ["`endif"]) + "\n"


def makefile(soc):
    lines = [
        f"# The simulated SoC's CPUs and TRACE window, {NOTICE}.",
        f"SOC_CPUS := {' '.join(soc['cpus'])}",
    ]
    lines += [f"SOC_MARCH_{cpu} := {march}" for cpu, march in soc["cpus"].items()]
    where = addresses(soc)
    lines += [
        f"SOC_TRACE_BASE := 0x{where['TRACE_BASE']:08X}",
        f"SOC_TRACE_BYTES := 0x{where['TRACE_BYTES']:X}",
    ]
    return "\n".join(lines) + "\n"


def outputs(soc):
    """{path: text} of every file written from the map."""
    return {
        SIM / "firmware" / "soc_map.h": c_header(soc),
        SIM / "firmware" / "soc_map.ld": linker_memory(soc),
        SIM / "rtl" / "soc_map.vh": verilog_header(soc),
        SIM / "soc_map.mk": makefile(soc),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="only report the files that differ (exit status 1)"
    )
    args = parser.parse_args(argv)
    files = outputs(load())
    stale = [path for path, text in files.items() if not path.exists() or path.read_text() != text]
    for path in stale:
        if args.check:
            print(
                f"{path.relative_to(SIM.parent)}: differs from sim/soc_map.toml "
                f"(run: make -C sim soc-map)",
                file=sys.stderr,
            )
        else:
            path.write_text(files[path])
            print(f"wrote {path.relative_to(SIM.parent)}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
