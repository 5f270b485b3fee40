"""The SPI link's framing (docs/spi-link.md): transaction opcodes and chunks.

A READ transaction is CS# low, the opcode byte from the host, then bytes from the device in
chunks: a length byte L (0..255), then L bytes of the stream. The device's framing state and
the host's (:class:`Dechunker`) carry over from one transaction to the next.
"""

__all__ = ["READ", "RELEASE", "MAX_CHUNK", "Dechunker"]

#: Opcode: select the SPI link for the stream and read it (neither flash's command).
READ = 0x4C
#: Opcode: give the stream back to the UART.
RELEASE = 0x55
#: The largest chunk: its length is one byte.
MAX_CHUNK = 255


class Dechunker:
    """The stream bytes of a sequence of READ transactions' bytes (after their opcodes).

    ``feed`` takes what one transaction read and returns the stream bytes in it; a chunk
    cut by the end of a transaction continues in the next one's bytes."""

    def __init__(self) -> None:
        self._left = 0  # stream bytes still to come in the current chunk; 0: a length next

    def feed(self, data: bytes | bytearray) -> bytes:
        out = bytearray()
        at = 0
        while at < len(data):
            if self._left == 0:
                self._left = data[at]
                at += 1
                continue
            take = data[at : at + self._left]
            out += take
            self._left -= len(take)
            at += len(take)
        return bytes(out)
