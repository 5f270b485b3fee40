#!/usr/bin/env python3
"""Wrap a flat binary in UF2 blocks for the RP2040 boot ROM (drag onto the RPI-RP2 drive).

    python3 bin2uf2.py IMAGE.bin BASE_ADDRESS OUT.uf2

UF2 (https://github.com/microsoft/uf2): 512-byte blocks, each carrying 256 bytes of the image
at its target address, with the RP2040 family id. An image based in SRAM (0x20000000) is a
"RAM only binary": the boot ROM loads it and runs it from its lowest address.
"""

import struct
import sys
from pathlib import Path

MAGIC_START0, MAGIC_START1, MAGIC_END = 0x0A324655, 0x9E5D5157, 0x0AB16F30
FLAG_FAMILY_ID = 0x00002000
RP2040_FAMILY = 0xE48BFF56
PAYLOAD = 256


def uf2_blocks(image, base):
    """The UF2 file for image (bytes) loaded at base."""
    chunks = [image[i : i + PAYLOAD] for i in range(0, len(image), PAYLOAD)]
    out = bytearray()
    for number, chunk in enumerate(chunks):
        header = struct.pack(
            "<8I",
            MAGIC_START0,
            MAGIC_START1,
            FLAG_FAMILY_ID,
            base + number * PAYLOAD,
            PAYLOAD,
            number,
            len(chunks),
            RP2040_FAMILY,
        )
        data = chunk.ljust(476, b"\0")
        out += header + data + struct.pack("<I", MAGIC_END)
    return bytes(out)


def main(argv):
    if len(argv) != 4:
        sys.exit("usage: bin2uf2.py IMAGE.bin BASE_ADDRESS OUT.uf2")
    image = Path(argv[1]).read_bytes()
    if not image:
        sys.exit(f"bin2uf2: {argv[1]}: empty image")
    Path(argv[3]).write_bytes(uf2_blocks(image, int(argv[2], 0)))


if __name__ == "__main__":
    main(sys.argv)
