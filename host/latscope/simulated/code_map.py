"""A firmware ELF's code as addresses: which function and source line an address is in
(``.symtab`` and the DWARF line table), and the address of every instruction of a function
or address range (RISC-V, with or without RVC: 2- and 4-byte instructions).

What the simulator's ground truth (:mod:`~latscope.simulated.cpu_truth`) reports as
addresses, this names: where an interrupt met the code, where interrupts were masked.

Read with pyelftools (pure Python, pinned in pyproject.toml) rather than the RISC-V
toolchain's addr2line and objdump: one parse of the file answers every query (a sweep maps
thousands of addresses), nothing depends on the text format of another program, and any
ELF can be read on a host without a cross toolchain (tests compare with objdump).
"""

from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pyelftools is imported when an ELF is read (0.1 s: analyze reads none)
    from elftools.elf.elffile import ELFFile

__all__ = ["CodeMap", "Location", "instruction_length"]


@dataclass(frozen=True)
class Location:
    """Where an address is: ``function`` (None outside every function symbol), ``file``
    (the source file's name as the compiler recorded it, None without line information)
    and ``line`` (0 without)."""

    address: int
    function: str | None
    file: str | None
    line: int

    def __str__(self) -> str:
        where = f"{Path(self.file).name}:{self.line}" if self.file else "?"
        return f"{self.function or '?'} ({where})"


def instruction_length(halfword: int) -> int:
    """Bytes of the RISC-V instruction whose first 16-bit parcel is ``halfword``: 2 (RVC:
    the low two bits are not 11) or 4. Longer encodings are not part of RV32IMAC."""
    if halfword & 0b11 != 0b11:
        return 2
    if halfword & 0b11100 != 0b11100:
        return 4
    raise ValueError(f"instruction parcel 0x{halfword:04x}: longer than 32 bits")


class CodeMap:
    """The code of the ELF file ``path``: functions, lines and instructions by address."""

    def __init__(self, path: str | Path) -> None:
        from elftools.elf.constants import SH_FLAGS
        from elftools.elf.elffile import ELFFile

        self.path = Path(path)
        with open(self.path, "rb") as stream:
            elf = ELFFile(stream)
            if elf["e_machine"] != "EM_RISCV":
                raise ValueError(f"{self.path}: not a RISC-V ELF ({elf['e_machine']})")
            self._code = [
                (section["sh_addr"], section.data())
                for section in elf.iter_sections()
                if section["sh_flags"] & SH_FLAGS.SHF_EXECINSTR
            ]
            self._read_symbols(elf)
            self._read_lines(elf)

    # --- functions -------------------------------------------------------------------------

    def _read_symbols(self, elf: "ELFFile") -> None:
        """Function symbols with their size; for code without one (assembly that gives no
        ``.type``/``.size``), the text labels, which then reach to the next one."""
        from elftools.elf.sections import SymbolTableSection

        symtab = elf.get_section_by_name(".symtab")
        if not isinstance(symtab, SymbolTableSection):
            raise ValueError(f"{self.path}: no symbol table (stripped?)")
        functions: dict[str, tuple[int, int]] = {}
        labels: dict[str, tuple[int, bool]] = {}
        for symbol in symtab.iter_symbols():
            name, value, kind = symbol.name, symbol["st_value"], symbol["st_info"]["type"]
            if not name or name.startswith(("$", ".L")) or not self._in_code(value):
                continue
            if kind == "STT_FUNC" and symbol["st_size"]:
                functions[name] = (value, value + symbol["st_size"])
            elif kind in ("STT_FUNC", "STT_NOTYPE"):
                labels[name] = (value, symbol["st_info"]["bind"] != "STB_LOCAL")
        self.functions = dict(sorted(functions.items(), key=lambda item: item[1]))
        self._starts = [start for start, _ in self.functions.values()]
        self._names = list(self.functions)
        self.labels = {name: value for name, (value, _) in labels.items()}
        # Where labels share an address, a global one names it rather than a local one:
        # sorted by (address, is global), a global label comes last and replaces the others.
        by_address: dict[int, str] = {}
        for name, (value, _) in sorted(labels.items(), key=lambda item: item[1]):
            by_address[value] = name
        self._label_starts = sorted(by_address)
        self._label_names = [by_address[value] for value in self._label_starts]

    def _in_code(self, address: int) -> bool:
        return any(base <= address < base + len(data) for base, data in self._code)

    def function_at(self, address: int) -> str | None:
        """The function whose symbol covers ``address``; else the nearest text label before
        it (assembly without sizes); None outside the code."""
        index = bisect_right(self._starts, address) - 1
        # Functions do not overlap, so only the last one starting at or before can cover it.
        if index >= 0 and address < self.functions[self._names[index]][1]:
            return self._names[index]
        index = bisect_right(self._label_starts, address) - 1
        if index >= 0 and self._in_code(address):
            return self._label_names[index]
        return None

    def function_range(self, name: str) -> tuple[int, int]:
        """(start, end) byte addresses of the function ``name`` (end exclusive)."""
        try:
            return self.functions[name]
        except KeyError:
            raise KeyError(f"{self.path}: no function {name!r} with a size in .symtab") from None

    def symbol_address(self, name: str) -> int:
        """The address of the function or text label ``name``."""
        if name in self.functions:
            return self.functions[name][0]
        if name in self.labels:
            return self.labels[name]
        raise KeyError(f"{self.path}: no code symbol {name!r}")

    # --- source lines ----------------------------------------------------------------------

    def _read_lines(self, elf: "ELFFile") -> None:
        """The line table as sorted rows (address, file, line); a sequence's end is a row with
        line 0, so that the addresses after it until the next sequence have no line."""
        rows: list[tuple[int, int, str | None, int]] = []
        if elf.has_dwarf_info():
            dwarf = elf.get_dwarf_info()
            for unit in dwarf.iter_CUs():
                program = dwarf.line_program_for_CU(unit)
                if program is None:
                    continue
                files = self._file_names(program)
                for entry in program.get_entries():
                    state = entry.state
                    if state is None:
                        continue
                    if state.end_sequence:
                        rows.append((state.address, 0, None, 0))
                    else:
                        rows.append((state.address, 1, files.get(state.file), state.line))
        # At one address a sequence's end comes before the next sequence's first row.
        rows.sort(key=lambda row: (row[0], row[1]))
        self._line_addresses = [row[0] for row in rows]
        self._line_rows = [(file, line) for _, _, file, line in rows]

    @staticmethod
    def _file_names(program: Any) -> dict[int, str]:
        """{file number as the line program uses it: path}. DWARF 5 numbers the files from 0,
        earlier versions from 1; the path joins the file's directory where it has one."""
        header = program.header
        directories = [
            entry if isinstance(entry, bytes) else entry.DW_LNCT_path
            for entry in header.get("include_directory", [])
        ]
        first = 0 if header["version"] >= 5 else 1
        names = {}
        for number, entry in enumerate(header["file_entry"], start=first):
            name = entry.name.decode(errors="replace")
            index = entry.dir_index
            if header["version"] < 5:
                index -= 1  # DWARF 4: 0 is the compilation directory
            if 0 <= index < len(directories) and not name.startswith("/"):
                name = f"{directories[index].decode(errors='replace')}/{name}"
            names[number] = name
        return names

    def line_at(self, address: int) -> tuple[str | None, int]:
        """(file, line) of ``address`` from the DWARF line table, or (None, 0)."""
        index = bisect_right(self._line_addresses, address) - 1
        if index < 0:
            return None, 0
        file, line = self._line_rows[index]
        return (file, line) if line else (None, 0)

    def locate(self, address: int) -> Location:
        """The :class:`Location` of ``address``."""
        address = int(address)
        return Location(address, self.function_at(address), *self.line_at(address))

    # --- instructions ----------------------------------------------------------------------

    def instructions(self, start: int, end: int) -> np.ndarray:
        """Addresses of the instructions in [start, end) as an int64 array, decoded from the
        code's bytes by their length: ``start`` must be an instruction's first byte (a
        function's or label's address is)."""
        for base, data in self._code:
            if base <= start and end <= base + len(data):
                break
        else:
            raise ValueError(
                f"{self.path}: 0x{start:08x}..0x{end:08x} is not inside one code section"
            )
        addresses: list[int] = []
        address = start
        while address < end:
            addresses.append(address)
            offset = address - base
            address += instruction_length(int.from_bytes(data[offset : offset + 2], "little"))
        if address != end:
            raise ValueError(
                f"{self.path}: 0x{end:08x} is inside an instruction (the one "
                f"at 0x{addresses[-1]:08x})"
            )
        return np.array(addresses, dtype=np.int64)

    def instruction_at(self, address: int) -> int:
        """The instruction that starts at ``address``: its 16 bits (RVC) or 32 bits."""
        for base, data in self._code:
            if base <= address < base + len(data):
                offset = address - base
                first = int.from_bytes(data[offset : offset + 2], "little")
                length = instruction_length(first)
                return int.from_bytes(data[offset : offset + length], "little")
        raise ValueError(f"{self.path}: 0x{address:08x} is not in the code")

    def function_instructions(self, name: str) -> np.ndarray:
        """Addresses of every instruction of the function ``name``."""
        return self.instructions(*self.function_range(name))
