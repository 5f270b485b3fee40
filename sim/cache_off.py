"""The VexRiscv core's Verilog with its caches off, for ``make -C sim CACHE=off``.

The pythondata-cpu-vexriscv cores are generated with their caches and have no switch, so
this is a documented edit of the generated Verilog, from the one on stdin to stdout:

* **D-cache** (VexRiscv_IMAC: 4 KiB): every data access is an I/O access. The core sends
  accesses at 0x8000_0000 and up around its D-cache (``isIoAccess`` = address bit 31); here
  ``isIoAccess`` is 1 for every address, so every load is one word read on the bus and no
  line is ever filled or hit. Stores were write-through already: the same bus writes.
* **I-cache** (IMAC 4 KiB, Lite 2 KiB, direct mapped, 32-byte lines): it keeps one line. The
  set index of both memories is tied to 0 and the tag holds the line address: its field
  keeps its width, so it now holds bits 24..5 (IMAC; Lite 25..5) instead of 31..12, and the
  code must lie where the bits above are equal (the SoC's RAM, 0x1000_0000 + 256 KiB). A fetch
  in the line fetched last hits; any other misses and refills the line (8 words, 2 cycles
  each on this SoC's bus). The core cannot fetch without its cache (a forced miss would
  refetch forever), so this is the nearest: a one-line fetch buffer, no reuse of code once
  the fetch has left its line.

What it does not model: a core built without caches (VexRiscv's IBusSimplePlugin and
DBusSimplePlugin: single-word fetches without the cache's refill and redo, and no cache
pipeline stages); the I-side costs a line refill where an uncached fetch would cost a word.

Each edit must match exactly once, or the script fails naming it: a core whose generated
text differs is refused, never half edited.

    sed ... VexRiscv_IMAC.v | python sim/cache_off.py > VexRiscv_IMAC-nocache.v
"""

import re
import sys

#: The set index field of the instruction cache, e.g. ``io_cpu_prefetch_pc[11 : 5]``: 11.
_SET_TOP = re.compile(
    r"assign _zz_fetchStage_read_waysValues_0_tag_valid = "
    r"io_cpu_prefetch_pc\[(\d+) : 5\];"
)


def edits(text):
    """(name, pattern, replacement) of every edit, for the core in ``text``."""
    match = _SET_TOP.search(text)
    if match is None:
        raise ValueError(
            "the instruction cache's set index (io_cpu_prefetch_pc[H : 5]) is not there"
        )
    top = int(match[1])  # the set index is bits top..5
    sets = top - 4  # its width
    tag = 31 - top  # the tag's width: bits 31..top+1
    zero = f"{sets}'h0"
    return [
        (
            "D-cache: every access is an I/O access",
            r"assign DBusCachedPlugin_mmuBus_rsp_isIoAccess = "
            r"DBusCachedPlugin_mmuBus_rsp_physicalAddress\[31\];",
            "assign DBusCachedPlugin_mmuBus_rsp_isIoAccess = 1'b1;",
        ),
        (
            "I-cache: the data memory's read index in the one line",
            rf"assign _zz_fetchStage_read_banksValue_0_dataMem = io_cpu_prefetch_pc\[{top} : 2\];",
            f"assign _zz_fetchStage_read_banksValue_0_dataMem = {{{zero}, io_cpu_prefetch_pc[4 : 2]}};",  # noqa: E501 (a Verilog line as it is)
        ),
        (
            "I-cache: the tag memory's read index 0",
            rf"assign _zz_fetchStage_read_waysValues_0_tag_valid = io_cpu_prefetch_pc\[{top} : 5\];",  # noqa: E501 (a Verilog line as it is)
            f"assign _zz_fetchStage_read_waysValues_0_tag_valid = {zero};",
        ),
        (
            "I-cache: the refill writes the tag of line 0",
            rf"\? lineLoader_address\[{top} : 5\] : lineLoader_flushCounter",
            f"? {zero} : lineLoader_flushCounter",
        ),
        (
            "I-cache: the refill writes the words of line 0",
            rf"assign lineLoader_write_data_0_payload_address = \{{lineLoader_address\[{top} : 5\],"
            r"lineLoader_wordIndex\};",
            f"assign lineLoader_write_data_0_payload_address = {{{zero},lineLoader_wordIndex}};",
        ),
        (
            "I-cache: the tag keeps the line address",
            rf"assign lineLoader_write_tag_0_payload_data_address = lineLoader_address\[31 : {top + 1}\];",  # noqa: E501 (a Verilog line as it is)
            f"assign lineLoader_write_tag_0_payload_data_address = lineLoader_address[{tag + 4} : 5];",  # noqa: E501 (a Verilog line as it is)
        ),
        (
            "I-cache: a hit compares the line address",
            rf"== io_cpu_fetch_mmuRsp_physicalAddress\[31 : {top + 1}\]\)\);",
            f"== io_cpu_fetch_mmuRsp_physicalAddress[{tag + 4} : 5]));",
        ),
    ]


def caches_off(text):
    """``text`` (a VexRiscv core's Verilog) with the edits above. A core without a D-cache
    (VexRiscv_Lite) gets the I-cache edits only."""
    has_dcache = "DBusCachedPlugin_mmuBus_rsp_isIoAccess" in text
    for name, pattern, replacement in edits(text):
        if name.startswith("D-cache") and not has_dcache:
            continue
        text, count = re.subn(pattern, lambda _, new=replacement: new, text)
        if count != 1:
            raise ValueError(f"{name}: {count} matches of {pattern!r}, not 1")
    return text


def main():
    try:
        sys.stdout.write(caches_off(sys.stdin.read()))
    except ValueError as error:
        print(f"sim/cache_off.py: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
