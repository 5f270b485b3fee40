"""Talking to an appliance: commands, replies and the event stream over one byte link.

A board's USB serial port, the Verilator full-system simulation and the Amaranth gateware
simulation all appear as a serial port (the simulations open a pseudo-terminal), so there is
one code path: :func:`open_transport` takes a port name or pyserial URL.
"""

import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol

import serial

from latscope_defs.markers import ARG_BITS, POINT_BITS, TEST_BITS, encode
from latscope_defs.protocol import (
    ECHO_PATTERN,
    ECHO_REPLY,
    IRQ_CONFIG,
    IRQ_DELAY_BITS,
    START_ARGS,
    STATUS_REPLY,
    TRIGGER_CONFIG,
    TRIGGER_SOURCES,
    UNKNOWN_COMMAND_REPLY,
    Command,
    Source,
    encode_command,
    reply_sizes,
)

from ..events import Events
from .identity import Identity, IdentityError
from .pad_delay import with_irq_pad_delay
from .parser import StreamParser

if TYPE_CHECKING:
    from amaranth.lib import data

__all__ = [
    "DeviceError",
    "IrqSettings",
    "DEFAULT_IRQ",
    "TriggerSettings",
    "Device",
    "Port",
    "Transport",
    "low_latency",
    "open_transport",
]


class Transport(Protocol):
    """The byte link :class:`Device` talks over: what it uses of a pyserial port."""

    @property
    def in_waiting(self) -> int: ...

    def read(self, size: int) -> bytes: ...

    def write(self, data: bytes) -> int | None: ...

    def close(self) -> None: ...


class DeviceError(Exception):
    """The device did not answer as the protocol says (one-line message)."""


#: The IRQ generator's registers are 32 bits wide (``protocol.IrqConfig``).
_U32 = (1 << 32) - 1
_FIELD_NAMES = {"period": "period", "jitter_mask": "jitter mask", "width": "width"}


@dataclass(frozen=True)
class IrqSettings:
    """IRQ generator settings in link clock cycles (``Identity.irq_clock_hz``; the capture
    clock on a one-clock build); see ``protocol.IrqConfig``."""

    period: int = 5000
    jitter_mask: int = 0
    width: int = 100
    enable: bool = True
    one_shot: bool = False
    active_low: bool = False

    def __post_init__(self) -> None:
        for name in ("period", "jitter_mask", "width"):
            value = getattr(self, name)
            if not isinstance(value, int) or not 0 <= value <= _U32:
                raise ValueError(
                    f"IRQ {_FIELD_NAMES[name]} {value!r} is not a number of cycles from 0 to {_U32}"
                )
        if self.period < 2:
            raise ValueError(f"IRQ period {self.period} is below 2 cycles")
        if not 1 <= self.width < self.period:
            raise ValueError(
                f"IRQ width {self.width} must be at least 1 cycle and less "
                f"than the period ({self.period} cycles)"
            )

    def encode(self) -> "data.Const":
        return IRQ_CONFIG.struct().const(
            {
                "period": self.period,
                "jitter_mask": self.jitter_mask,
                "width": self.width,
                "flags": {
                    "enable": self.enable,
                    "one_shot": self.one_shot,
                    "active_low": self.active_low,
                },
            }
        )


#: The IRQ settings of every ``latscope`` command and the demo unless told otherwise: about
#: every 50 us at 100 MHz (the reference report's PCI exerciser), plus 0..255 cycles of
#: pseudo-random jitter so that the IRQ lands on every phase of the code it interrupts (a
#: fixed period can lock to the suite's loops and never show their worst phase); 1 us wide.
DEFAULT_IRQ = IrqSettings(period=5000, jitter_mask=0xFF, width=100)


_DELAY_MAX = (1 << IRQ_DELAY_BITS) - 1
_MATCH_MAX = (1 << TRIGGER_CONFIG["match"].width) - 1
_EVERY_MAX = (1 << TRIGGER_CONFIG["every"].width) - 1


@dataclass(frozen=True)
class TriggerSettings:
    """The IRQ trigger's settings (``protocol.TriggerConfig``; docs/protocol.md, "Triggered
    IRQs"): the IRQ output fires ``delay`` capture cycles (``Identity.clock_hz``) after every
    ``every``-th event of ``source`` whose value has ``(value ^ match) & mask == 0``, for
    ``width`` capture cycles; the delay runs through ``range(start, stop, step)`` over and
    over (``start`` alone where that is empty or ``step`` is 0). With ``arm``, each
    asserting edge of the periodic generator (:class:`IrqSettings`, whose own edges the pin
    no longer shows) arms one firing. ``enable`` False gives the pin back to the periodic
    generator. :meth:`on_marker` and :meth:`on_edge` make the usual ones."""

    source: Source = Source.MARKER
    match: int = 0
    mask: int = 0
    every: int = 1
    start: int = 0
    stop: int = 1
    step: int = 1
    width: int = 100
    arm: bool = False
    enable: bool = True

    def __post_init__(self) -> None:
        if Source(self.source) not in TRIGGER_SOURCES:
            raise ValueError(
                f"no trigger on {Source(self.source).name}: markers, bus writes "
                f"and edge channels only"
            )
        limits = {
            "match": _MATCH_MAX,
            "mask": _MATCH_MAX,
            "every": _EVERY_MAX,
            "start": _DELAY_MAX,
            "stop": _DELAY_MAX,
            "step": _DELAY_MAX,
            "width": _DELAY_MAX + 1,
        }
        for name, high in limits.items():
            value = getattr(self, name)
            if not isinstance(value, int) or not 0 <= value <= high:
                raise ValueError(f"trigger {name} {value!r} is not a number from 0 to {high}")
        if self.every < 1:
            raise ValueError("trigger every must be at least 1 (every trigger)")
        if self.width < 1:
            raise ValueError("trigger width must be at least 1 capture cycle")

    @classmethod
    def on_marker(
        cls,
        test: int,
        point: int,
        arg: int = 0,
        arg_mask: int = 0,
        *,
        bus: bool = False,
        **settings: Any,
    ) -> "TriggerSettings":
        """A trigger on the markers of ``test`` and ``point`` (docs/markers.md) whose
        argument has the bits of ``arg`` where ``arg_mask`` has ones (0: any argument): on
        the trace port, or with ``bus`` on the bus trace window."""
        if not 0 <= arg_mask < 1 << ARG_BITS:
            raise ValueError(f"marker argument mask {arg_mask:#x} wider than {ARG_BITS} bits")
        fields = encode((1 << TEST_BITS) - 1, (1 << POINT_BITS) - 1, arg_mask)
        return cls(
            source=Source.BUS if bus else Source.MARKER,
            match=encode(test, point, arg & arg_mask),
            mask=fields,
            **settings,
        )

    @classmethod
    def on_edge(cls, channel: int, level: int | None = None, **settings: Any) -> "TriggerSettings":
        """A trigger on the edges of edge channel ``channel`` to ``level`` (None: both)."""
        return cls(
            source=Source(Source.EDGE0 + channel),
            match=level or 0,
            mask=0 if level is None else 1,
            **settings,
        )

    def as_dict(self) -> dict[str, object]:
        """The settings as a capture's metadata records them (``trigger``,
        docs/capture-format.md): the fields, ``source`` by name."""
        return {**asdict(self), "source": Source(self.source).name}

    def delays(self) -> list[int]:
        """The delays of one pass of the sweep, in order (capture cycles)."""
        delays = list(range(self.start, self.stop, self.step)) if self.step else []
        return delays or [self.start]

    def encode(self) -> "data.Const":
        return TRIGGER_CONFIG.struct().const(
            {
                "source": int(self.source),
                "flags": {"enable": self.enable, "arm": self.arm},
                "match": self.match,
                "mask": self.mask,
                "every": self.every,
                "start": self.start,
                "stop": self.stop,
                "step": self.step,
                "hold": self.width - 1,
            }
        )


class Port:
    """Where an appliance is reached: here a board's serial port (or a pyserial URL), with
    nothing to start. The simulations (:mod:`latscope.simulated.soc`) are ports too, that start
    a child process, and some run a DUT of their own; so every port offers the same
    methods, and a capture session never asks what kind it has.

    Use as a context manager; ``path`` is what :func:`open_transport` opens."""

    #: Whether the DUT behind this port runs a program that ends (a capture can stop there).
    dut_ends = False
    #: Seconds to wait for a command's reply: a board answers within microseconds, so a
    #: silence this long means nothing answers.
    reply_timeout = 5.0

    def __init__(self, path: object) -> None:
        self.name = str(path)  # what the capture's metadata records as ``port``
        self.path = str(path)

    def __enter__(self) -> "Port":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Ends what the port started (nothing for a board)."""

    def release_dut(self) -> None:
        """Lets a DUT that waits for the capture run (a board's DUT runs on its own)."""

    @property
    def dut_exited(self) -> bool:
        """Whether the DUT's program has ended (never known for a board)."""
        return False

    def dut_failure(self) -> str | None:
        """Why the DUT ended without finishing its program, or None."""
        return None

    def dut_metadata(self) -> dict[str, object]:
        """What the capture's metadata records about the DUT (nothing for a board)."""
        return {}

    def dut_end_stats(self) -> dict[str, object]:
        """What the capture file's END chunk records about the DUT's end."""
        return {}


def open_transport(port: str, baudrate: int = 12_000_000, timeout: float = 0.05) -> Transport:
    """A pyserial port for a device name (``/dev/ttyUSB1``), a pty or a pyserial URL;
    ``rfc2217://`` (a network serial port) with latscope's faster reader
    (:mod:`latscope.link.network_port`)."""
    try:
        if str(port).startswith("rfc2217://"):
            from .network_port import Rfc2217Port

            return Rfc2217Port(port, baudrate=baudrate, timeout=timeout)
        transport = serial.serial_for_url(port, baudrate=baudrate, timeout=timeout)
    except (serial.SerialException, ValueError) as error:
        raise DeviceError(f"{port}: cannot open: {error}") from None
    low_latency(transport)
    return transport


def low_latency(transport: Transport) -> bool:
    """Asks the serial driver for low latency; True when it took the request.

    An FTDI chip holds received bytes that do not fill a USB packet for its latency timer,
    16 ms by default under Linux, so every command reply and small read would wait that long.
    Linux's ftdi_sio driver sets the timer to 1 ms while a port has ASYNC_LOW_LATENCY, which
    any user who can open the port may set (pyserial's ``set_low_latency_mode``); the udev
    rule (``scripts/99-latscope.rules``) sets it for good. A pty, a URL port or another OS
    has no such setting: then nothing changes and False."""
    if not sys.platform.startswith("linux") or not isinstance(transport, serial.Serial):
        return False
    try:
        transport.set_low_latency_mode(True)
    except ValueError:  # pyserial's report of a refused TIOCGSERIAL/TIOCSSERIAL (a pty's)
        return False
    return True


class Device:
    """Commands and the event stream of one appliance.

    Every byte read goes through one :class:`StreamParser`, so replies and events can be
    interleaved freely; events that arrive while waiting for a reply are kept for
    :meth:`read_events`.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        reply_timeout: float = Port.reply_timeout,
        name: str | None = None,
    ) -> None:
        self.transport = transport
        self.name: str = name or getattr(transport, "port", None) or "device"
        self.reply_timeout = reply_timeout
        self.parser = StreamParser()
        self.identity: Identity | None = None
        # Called with every byte chunk read (the capture file).
        self.raw_sink: Callable[[bytes], object] | None = None
        self.bytes_read = 0  # link statistics (the self-test's throughput figures)
        self.bytes_written = 0
        self._events: list[Events] = []

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> "Device":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- link ---------------------------------------------------------------------------

    def _link_lost(self, error: Exception) -> DeviceError:
        # A network port (rfc2217://) whose connection dropped, a USB adapter unplugged:
        # pyserial raises SerialException (an OSError); say which port, as every error does.
        return DeviceError(f"{self.name}: link lost: {error}")

    def _read(self, size: int = 4096) -> bytes:
        # With nothing waiting, pyserial's read returns after `size` bytes or its timeout:
        # streams read in batches; a command's reply wait asks for 1 byte, so the reply
        # ends it at once (else every command took the whole timeout, 50 ms).
        try:
            data = self.transport.read(max(1, self.transport.in_waiting or size))
        except serial.SerialException as error:
            raise self._link_lost(error) from None
        if data:
            self.bytes_read += len(data)
            if self.raw_sink is not None:
                self.raw_sink(data)
            events = self.parser.feed(data)
            if len(events):
                self._events.append(events)
        return data

    def command(self, opcode: int, args: "data.Const | None" = None) -> bytes:
        """Sends one command and returns its reply payload."""
        message = encode_command(opcode, args)
        try:
            self.transport.write(message)
        except serial.SerialException as error:
            raise self._link_lost(error) from None
        self.bytes_written += len(message)
        deadline = time.monotonic() + self.reply_timeout
        while time.monotonic() < deadline:
            while self.parser.replies:
                code, payload = self.parser.replies.popleft()
                if code == UNKNOWN_COMMAND_REPLY:
                    raise DeviceError(f"device does not know command {payload.hex()}")
                if code == opcode:
                    sizes = reply_sizes(opcode)
                    if len(payload) not in sizes:
                        raise DeviceError(
                            f"reply to {Command(opcode).name} has {len(payload)} "
                            f"bytes, expected {sizes[0]}"
                        )
                    return payload
            self._read(1)
        raise DeviceError(
            f"no reply to {Command(opcode).name} within {self.reply_timeout} s "
            f"(is the device connected and at the right baud rate?)"
        )

    # --- commands -----------------------------------------------------------------------

    def identify(self) -> Identity:
        try:
            identity = Identity.from_reply(self.command(Command.IDENTIFY))
        except IdentityError as error:
            raise DeviceError(str(error)) from None
        # The board's IRQ pad delay, which the parser adds to IRQ stamps.
        self.identity = with_irq_pad_delay(identity)
        # Rebuild the parser with the device's widths and pin latencies; nothing is in
        # flight yet because no capture runs.
        self.parser = self.identity.parser()
        return self.identity

    def configure_irq(self, settings: IrqSettings) -> None:
        self.command(Command.IRQ_CONFIG, settings.encode())

    def configure_trigger(self, settings: TriggerSettings) -> None:
        """Sets the IRQ trigger (a :class:`TriggerSettings`); START restarts its sweep."""
        if self.identity is not None and not self.identity.has_trigger:
            raise DeviceError(
                f"{self.name}: the device has no IRQ trigger (protocol version "
                f"{self.identity.version}: a bitstream older than this host; or a bring-up "
                f"bitstream, docs/boards.md)"
            )
        self.command(Command.TRIGGER_CONFIG, settings.encode())

    def start(self, sources: Iterable[int] | None = None) -> None:
        mask = 0xFFFF if sources is None else sum(1 << int(source) for source in sources)
        self.command(Command.START, START_ARGS.struct().const({"sources": mask}))

    def stop(self) -> None:
        self.command(Command.STOP)

    def echo(self, pattern: int) -> int:
        """Sends ECHO with a 64-bit ``pattern``; returns the pattern the device sent back."""
        reply = self.command(Command.ECHO, ECHO_PATTERN.struct().const({"pattern": pattern}))
        return ECHO_REPLY.struct().from_bits(int.from_bytes(reply, "little")).pattern

    def status(self) -> dict[str, int | bool]:
        payload = self.command(Command.STATUS)
        reply = STATUS_REPLY.struct().from_bits(int.from_bytes(payload, "little"))
        return {
            "capturing": bool(reply.capturing),
            "events": reply.events,
            "lost": reply.lost,
            "fifo_max": reply.fifo_max,
            "irq_edges": reply.irq_edges,
            "clock_check": reply.clock_check,
        }

    # --- events -------------------------------------------------------------------------

    def poll(self) -> Events:
        """Reads what the link has; returns the verified events that arrived."""
        self._read()
        return self.take_events()

    def take_events(self) -> Events:
        events, self._events = self._events, []
        return Events.concatenate(events)

    def drain(self, quiet: float = 0.3) -> Events:
        """After STOP: reads until the link has been quiet for ``quiet`` seconds."""
        last = time.monotonic()
        while time.monotonic() - last < quiet:
            if self._read():
                last = time.monotonic()
        return self.take_events()
