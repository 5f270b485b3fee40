"""The FT2232H's MPSSE commands of the SPI link's transactions (docs/spi-link.md), as bytes
for pyftdi's ``Ftdi.write_data``.

The opcodes are FTDI's (AN_108, "Command Processor for MPSSE and MCU Host Bus Emulation
Modes": 3.2 and 3.3, data shifting, MSB first; 3.6, "Set Data bits LowByte"; 3.8.3 (5.1 in
later issues), "Send Immediate"), the same bytes pyftdi's ``SpiPort.exchange`` sends for an
SPI mode 0 transaction. Writing several transactions' commands in one USB write queues them:
the MPSSE executes them back to back, and their data comes back as it is clocked.
"""

__all__ = [
    "ASSUMED_COMMAND_S",
    "CS",
    "DIRECTION",
    "IDLE",
    "MAX_READ",
    "READ_IN",
    "SEND_IMMEDIATE",
    "SET_BITS_LOW",
    "WRITE_OUT",
    "transaction",
    "transaction_commands",
]

#: Set the levels and directions of ADBUS0..7 (3 bytes: opcode, levels, directions).
SET_BITS_LOW = 0x80
#: Clock bytes out on SCK's falling edge, MSB first, no read (opcode, length - 1 as 16 bits
#: little-endian, the bytes): mode 0's output edge.
WRITE_OUT = 0x11
#: Clock bytes in, sampled on SCK's falling edge, MSB first, no write (opcode, length - 1):
#: what pyftdi's ``SpiPort`` uses in mode 0 (the bit the target drives after one falling edge
#: is sampled at the next one, a whole SCK period later).
READ_IN = 0x24
#: Send what the MPSSE has read to the host now, not when the latency timer expires.
SEND_IMMEDIATE = 0x87

SCK, COPI, CS = 0x01, 0x02, 0x10  # ADBUS0, ADBUS1, ADBUS4 (GPIOL0: the flash's CS#)
#: The lines the MPSSE drives; CIPO (ADBUS2) and the rest (ADBUS3, CDONE, CRESET#) stay
#: inputs, as the boards' pull-ups leave them.
DIRECTION = SCK | COPI | CS
#: Between transactions: SCK low (mode 0), COPI low, CS# high.
IDLE = CS
#: Inside a transaction: CS# low.
SELECTED = 0
#: Seconds the MPSSE takes for a command it executes without clocking: an assumed upper bound
#: (AN_108 gives no execution times), 30 SCK periods at 30 MHz; hardware must measure it.
ASSUMED_COMMAND_S = 1e-6
#: A transaction's largest read (the 16-bit length field).
MAX_READ = 1 << 16


def transaction_commands(opcode: int, read: int = 0) -> list[bytes]:
    """The MPSSE commands of one transaction: CS# low, ``opcode`` out, ``read`` bytes in
    with COPI low, CS# high, and (with a read) the read bytes sent to the host at once."""
    assert 0 <= read <= MAX_READ
    commands = [bytes([SET_BITS_LOW, SELECTED, DIRECTION]), bytes([WRITE_OUT, 0, 0, opcode])]
    if read:
        commands.append(bytes([READ_IN]) + (read - 1).to_bytes(2, "little"))
    commands.append(bytes([SET_BITS_LOW, IDLE, DIRECTION]))
    if read:
        commands.append(bytes([SEND_IMMEDIATE]))
    return commands


def transaction(opcode: int, read: int = 0) -> bytes:
    """The bytes of :func:`transaction_commands`."""
    return b"".join(transaction_commands(opcode, read))
