"""The SPI link's host side (docs/spi-link.md): the device-to-host stream read through the
FT2232H's channel A in MPSSE mode (pyftdi's ``Ftdi``), commands still written to the UART.

:class:`SpiStream` is a :class:`~latscope.link.device.Transport`: :class:`Device` reads the
stream from it as from a serial port. Opening it puts the configuration flash, which shares
the lines, into deep power-down and selects the link (READ); closing it gives the stream back
to the UART (RELEASE) and wakes the flash.

It keeps READ transactions queued ahead in the MPSSE (:data:`QUEUE_DEPTH` of them, written in
one USB write) and reads their data as it comes, topping the queue up after each read: the
MPSSE clocks them back to back, pausing only for CS# between them, instead of waiting for
each transaction's command to reach it and its data to reach the host.
"""

import importlib
import time
from collections.abc import Callable
from typing import Protocol

from latscope_defs.spi_link import READ, RELEASE, Dechunker

from .device import DeviceError, Transport
from .mpsse import DIRECTION, IDLE, transaction

__all__ = [
    "DEFAULT_URL",
    "FLASH_SLEEP",
    "FLASH_WAKE",
    "QUEUE_DEPTH",
    "READ_BYTES",
    "Mpsse",
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
#: Bytes a READ transaction reads: large enough that the pause between transactions costs
#: little, small enough that a reply is not held back long (4096 bytes: 1.1 ms at 30 MHz).
READ_BYTES = 4096
#: READ transactions kept queued in the MPSSE: while the host takes one transaction's data
#: the MPSSE has the next ones to clock (3 more: 3.3 ms at 30 MHz of slack for the host).
QUEUE_DEPTH = 4
#: pyftdi's ``read_data_bytes`` attempts: USB reads that may come back empty (a packet of
#: status bytes only) before it returns what it has.
READ_ATTEMPTS = 4


class Mpsse(Protocol):
    """What the stream uses of pyftdi's ``Ftdi`` in MPSSE mode: commands out, data in."""

    def write_data(self, data: bytes) -> int: ...

    def read_data_bytes(self, size: int, attempt: int = 1) -> bytes: ...


class SpiStream:
    """The stream from the SPI link, commands to ``uart``: a :class:`Transport`.

    ``read`` returns what the queued READ transactions of ``read_bytes`` bytes bring, waiting
    at most ``timeout`` seconds for a first byte (as a serial port's read does); ``close``
    closes ``uart`` and calls ``close_mpsse``."""

    def __init__(
        self,
        uart: Transport,
        mpsse: Mpsse,
        close_mpsse: Callable[[], None] = lambda: None,
        *,
        read_bytes: int = READ_BYTES,
        depth: int = QUEUE_DEPTH,
        timeout: float = 0.05,
    ) -> None:
        self._uart, self._mpsse, self._close_mpsse = uart, mpsse, close_mpsse
        self._read_bytes, self._depth, self.timeout = read_bytes, depth, timeout
        self._chunks = Dechunker()
        self._held = bytearray()
        self._queued = 0  # bytes of queued READ transactions not read back yet
        self._flash_command(FLASH_SLEEP)
        self._top_up()  # the first READ selects the link: the stream comes here from now on

    def _flash_command(self, command: int) -> None:
        self._mpsse.write_data(transaction(command))
        time.sleep(FLASH_SETTLE_S)

    def _top_up(self) -> None:
        """Queues READ transactions, in one USB write, until ``depth`` are outstanding."""
        missing = self._depth - -(-self._queued // self._read_bytes)
        if missing > 0:
            self._mpsse.write_data(transaction(READ, self._read_bytes) * missing)
            self._queued += missing * self._read_bytes

    def _take(self, size: int) -> None:
        """Reads up to ``size`` bytes of the queued transactions' data."""
        data = self._mpsse.read_data_bytes(min(size, self._queued), READ_ATTEMPTS)
        self._queued -= len(data)
        self._held += self._chunks.feed(data)

    def _pump(self) -> None:
        # One transaction's data at a time, then the queue topped up again: while the host
        # waits for that data the MPSSE still has the other transactions to clock.
        self._take(self._read_bytes)
        self._top_up()

    @property
    def in_waiting(self) -> int:
        if not self._held:
            self._pump()
        return len(self._held)

    def read(self, size: int) -> bytes:
        deadline = time.monotonic() + self.timeout
        while not self._held:
            self._pump()
            if time.monotonic() >= deadline:
                break
        data = bytes(self._held[:size])
        del self._held[:size]
        return data

    def write(self, data: bytes) -> int | None:
        return self._uart.write(data)

    def release(self) -> Transport:
        """Gives the stream back to the UART (the queued transactions' data read first,
        its stream bytes dropped), wakes the flash, closes the MPSSE; returns the UART,
        still open."""
        try:
            while self._queued:
                before = self._queued
                self._take(self._queued)
                if self._queued == before:
                    break  # nothing comes: the device is gone
            self._mpsse.write_data(transaction(RELEASE))
            self._flash_command(FLASH_WAKE)
        finally:
            self._close_mpsse()
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
        Ftdi = importlib.import_module("pyftdi.ftdi").Ftdi
    except ImportError:
        raise DeviceError(
            "the SPI link needs pyftdi: .venv/bin/pip install --no-deps pyftdi==0.57.2"
        ) from None
    ftdi = Ftdi()
    try:
        ftdi.open_mpsse_from_url(url, direction=DIRECTION, initial=IDLE, frequency=frequency)
        return SpiStream(uart, ftdi, ftdi.close)
    except Exception as error:  # pyftdi's and pyusb's errors have no common base
        ftdi.close()
        raise DeviceError(f"{url}: cannot open the SPI link: {error}") from None
