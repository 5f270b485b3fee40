"""The SPI link's host side (docs/spi-link.md): the device-to-host stream read through the
FT2232H's channel A in MPSSE mode (pyftdi), commands still written to the UART.

:class:`SpiStream` is a :class:`~latscope.link.device.Transport`: :class:`Device` reads the
stream from it as from a serial port. Opening it puts the configuration flash, which shares
the lines, into deep power-down and selects the link (READ); closing it gives the stream back
to the UART (RELEASE) and wakes the flash.
"""

import importlib
import time
from collections.abc import Callable
from typing import Protocol

from latscope_defs.spi_link import READ, RELEASE, Dechunker

from .device import DeviceError, Transport

__all__ = [
    "DEFAULT_URL",
    "FLASH_SLEEP",
    "FLASH_WAKE",
    "SpiPort",
    "SpiStream",
    "open_spi_stream",
]

#: pyftdi's URL of the first FT2232H's channel A (``open_device``'s ``spi_url``
#: ``ftdi://ftdi:2232h:SERIAL/1`` picks one board of several by its USB serial number).
DEFAULT_URL = "ftdi://ftdi:2232h/1"

#: The configuration flash's deep power-down command (N25Q032, W25Q128), and its release.
FLASH_SLEEP = 0xB9
FLASH_WAKE = 0xAB
#: Seconds after either: more than both datasheets' entry and exit times (docs/spi-link.md).
FLASH_SETTLE_S = 1e-3
#: pyftdi's chip select 1 is ADBUS4, the flash's CS# on both boards (CS 0 is ADBUS3).
FLASH_CS = 1
#: Bytes a READ transaction reads: large enough that the gaps between transactions cost
#: little, small enough that a reply is not held back long (4096 bytes: 1.1 ms at 30 MHz).
READ_BYTES = 4096


class SpiPort(Protocol):
    """What the stream uses of a pyftdi ``SpiPort``: one transaction, CS# low to high."""

    def exchange(self, out: bytes = b"", readlen: int = 0) -> bytes: ...


class SpiStream:
    """The stream from the SPI link, commands to ``uart``: a :class:`Transport`.

    ``read`` returns what READ transactions of ``read_bytes`` bytes bring, waiting at most
    ``timeout`` seconds for a first byte (as a serial port's read does); ``close`` closes
    ``uart`` and calls ``close_spi``."""

    def __init__(
        self,
        uart: Transport,
        spi: SpiPort,
        close_spi: Callable[[], None] = lambda: None,
        *,
        read_bytes: int = READ_BYTES,
        timeout: float = 0.05,
    ) -> None:
        self._uart, self._spi, self._close_spi = uart, spi, close_spi
        self._read_bytes, self.timeout = read_bytes, timeout
        self._chunks = Dechunker()
        self._held = bytearray()
        self._flash_command(FLASH_SLEEP)
        self._transaction()  # selects the link: the stream comes here from now on

    def _flash_command(self, command: int) -> None:
        self._spi.exchange(bytes([command]))
        time.sleep(FLASH_SETTLE_S)

    def _transaction(self) -> None:
        self._held += self._chunks.feed(self._spi.exchange(bytes([READ]), self._read_bytes))

    @property
    def in_waiting(self) -> int:
        if not self._held:
            self._transaction()
        return len(self._held)

    def read(self, size: int) -> bytes:
        deadline = time.monotonic() + self.timeout
        while not self._held:
            self._transaction()
            if time.monotonic() >= deadline:
                break
        data = bytes(self._held[:size])
        del self._held[:size]
        return data

    def write(self, data: bytes) -> int | None:
        return self._uart.write(data)

    def release(self) -> Transport:
        """Gives the stream back to the UART, wakes the flash, closes the SPI side; returns
        the UART, still open."""
        try:
            self._spi.exchange(bytes([RELEASE]))
            self._flash_command(FLASH_WAKE)
        finally:
            self._close_spi()
        return self._uart

    def close(self) -> None:
        try:
            self.release()
        finally:
            self._uart.close()


def open_spi_stream(uart: Transport, url: str, frequency: float) -> SpiStream:
    """The SPI link of the board whose channel A is the pyftdi ``url`` at ``frequency`` Hz,
    commands to ``uart`` (left open if the link cannot be opened: DeviceError)."""
    try:
        # By name: pyftdi has no type information for mypy to follow.
        SpiController = importlib.import_module("pyftdi.spi").SpiController
    except ImportError:
        raise DeviceError(
            "the SPI link needs pyftdi: .venv/bin/pip install --no-deps pyftdi==0.57.2"
        ) from None
    controller = SpiController(cs_count=FLASH_CS + 1)
    try:
        controller.configure(url, frequency=frequency)
        port = controller.get_port(cs=FLASH_CS, freq=frequency, mode=0)
        return SpiStream(uart, port, controller.close)
    except Exception as error:  # pyftdi's and pyusb's errors have no common base
        controller.close()
        raise DeviceError(f"{url}: cannot open the SPI link: {error}") from None
