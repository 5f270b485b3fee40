"""Talking to an appliance: commands, replies and the event stream over one byte link.

A board's USB serial port, the Verilator full-system simulation and the Amaranth gateware
simulation all appear as a serial port (the simulations open a pseudo-terminal), so there is
one code path: :func:`open_transport` takes a port name or pyserial URL.
"""

import time
from dataclasses import dataclass

import serial

from .parser import StreamParser
from .protocol import (MAGIC, REPLY_LAYOUTS, UNKNOWN_COMMAND_REPLY, Command,
                       IdentifyReply, IrqConfig, Source, StartArgs, StatusReply, VERSIONS,
                       encode_command)

__all__ = ["DeviceError", "Identity", "IrqSettings", "Device", "open_transport"]


class DeviceError(Exception):
    """The device did not answer as the protocol says (one-line message)."""


@dataclass(frozen=True)
class Identity:
    """What the IDENTIFY reply says about a device."""
    version: int
    clock_hz: int
    stamp_shift: int
    marker_width: int
    edge_count: int
    bus_width: int
    fifo_depth: int
    latency: dict          # Source -> cycles from pin to stamp
    board: str

    @property
    def stamp_hz(self):
        """Stamp units per second: the capture clock, times 2 with DDR inputs."""
        return self.clock_hz << self.stamp_shift

    @property
    def resolution_ns(self):
        return 1e9 / self.stamp_hz

    @property
    def sources(self):
        sources = [Source.MARKER]
        if self.bus_width:
            sources.append(Source.BUS)
        sources.append(Source.IRQ)
        sources += [Source(Source.EDGE0 + n) for n in range(self.edge_count)]
        return sources

    def as_dict(self):
        return {
            "version": self.version, "clock_hz": self.clock_hz, "stamp_shift": self.stamp_shift,
            "marker_width": self.marker_width, "edge_count": self.edge_count,
            "bus_width": self.bus_width, "fifo_depth": self.fifo_depth, "board": self.board,
            "latency": {source.name: cycles for source, cycles in self.latency.items()},
        }

    @classmethod
    def from_dict(cls, info):
        info = dict(info)
        info["latency"] = {Source[name]: cycles for name, cycles in info["latency"].items()}
        return cls(**info)

    @classmethod
    def from_reply(cls, payload):
        reply = IdentifyReply.from_bits(int.from_bytes(payload, "little"))
        if reply.magic.to_bytes(4, "little") != MAGIC:
            raise DeviceError(f"not a latscope device: identify magic {reply.magic:#010x}")
        if reply.version not in VERSIONS:
            raise DeviceError(f"device speaks protocol version {reply.version}, this host "
                              f"knows versions {', '.join(map(str, VERSIONS))}")
        latency = {Source.MARKER: reply.marker_latency, Source.BUS: reply.bus_latency,
                   Source.IRQ: reply.irq_latency}
        latency.update({Source(Source.EDGE0 + n): reply.edge_latency for n in range(8)})
        return cls(version=reply.version, clock_hz=reply.clock_hz,
                   stamp_shift=reply.stamp_shift, marker_width=reply.marker_width,
                   edge_count=reply.edge_count, bus_width=reply.bus_width,
                   fifo_depth=reply.fifo_depth, latency=latency,
                   board=bytes(reply.board).rstrip(b"\0").decode("ascii", "replace"))

    def parser(self):
        return StreamParser(marker_width=self.marker_width, latency=self.latency,
                            version=self.version)


@dataclass(frozen=True)
class IrqSettings:
    """IRQ generator settings in cycles; see ``protocol.IrqConfig``."""
    period: int = 5000
    jitter_mask: int = 0
    width: int = 100
    enable: bool = True
    one_shot: bool = False
    active_low: bool = False

    def encode(self):
        return IrqConfig.const({
            "period": self.period, "jitter_mask": self.jitter_mask, "width": self.width,
            "flags": {"enable": self.enable, "one_shot": self.one_shot,
                      "active_low": self.active_low},
        })


def open_transport(port, baudrate=12_000_000, timeout=0.05):
    """A pyserial port for a device name (``/dev/ttyUSB1``), a pty or a pyserial URL."""
    try:
        return serial.serial_for_url(port, baudrate=baudrate, timeout=timeout)
    except (serial.SerialException, ValueError) as error:
        raise DeviceError(f"{port}: cannot open: {error}") from None


class Device:
    """Commands and the event stream of one appliance.

    Every byte read goes through one :class:`StreamParser`, so replies and events can be
    interleaved freely; events that arrive while waiting for a reply are kept for
    :meth:`read_events`.
    """

    def __init__(self, transport, *, reply_timeout=5.0):
        self.transport = transport
        self.reply_timeout = reply_timeout
        self.parser = StreamParser()
        self.identity = None
        self.raw_sink = None      # called with every byte chunk read (the capture file)
        self._events = []

    def close(self):
        self.transport.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- link ---------------------------------------------------------------------------

    def _read(self):
        data = self.transport.read(max(1, self.transport.in_waiting or 4096))
        if data:
            if self.raw_sink is not None:
                self.raw_sink(data)
            events = self.parser.feed(data)
            if len(events):
                self._events.append(events)
        return data

    def command(self, opcode, args=None):
        """Sends one command and returns its reply payload."""
        self.transport.write(encode_command(opcode, args))
        deadline = time.monotonic() + self.reply_timeout
        while time.monotonic() < deadline:
            while self.parser.replies:
                code, payload = self.parser.replies.popleft()
                if code == UNKNOWN_COMMAND_REPLY:
                    raise DeviceError(f"device does not know command {payload.hex()}")
                if code == opcode:
                    expected = REPLY_LAYOUTS.get(opcode)
                    size = 0 if expected is None else expected.as_shape().size // 8
                    if len(payload) != size:
                        raise DeviceError(f"reply to {Command(opcode).name} has {len(payload)} "
                                          f"bytes, expected {size}")
                    return payload
            self._read()
        raise DeviceError(f"no reply to {Command(opcode).name} within {self.reply_timeout} s "
                          f"(is the device connected and at the right baud rate?)")

    # --- commands -----------------------------------------------------------------------

    def identify(self):
        self.identity = Identity.from_reply(self.command(Command.IDENTIFY))
        # Rebuild the parser with the device's widths and pin latencies; nothing is in
        # flight yet because no capture runs.
        self.parser = self.identity.parser()
        return self.identity

    def configure_irq(self, settings):
        self.command(Command.IRQ_CONFIG, settings.encode())

    def start(self, sources=None):
        mask = 0xffff if sources is None else sum(1 << int(source) for source in sources)
        self.command(Command.START, StartArgs.const({"sources": mask}))

    def stop(self):
        self.command(Command.STOP)

    def status(self):
        reply = StatusReply.from_bits(int.from_bytes(self.command(Command.STATUS), "little"))
        return {"capturing": bool(reply.capturing), "events": reply.events,
                "lost": reply.lost, "fifo_max": reply.fifo_max, "irq_edges": reply.irq_edges}

    # --- events -------------------------------------------------------------------------

    def poll(self):
        """Reads what the link has; returns the verified events that arrived."""
        self._read()
        return self.take_events()

    def take_events(self):
        from .parser import Events
        events, self._events = self._events, []
        return Events.concatenate(events)

    def drain(self, quiet=0.3):
        """After STOP: reads until the link has been quiet for ``quiet`` seconds."""
        last = time.monotonic()
        while time.monotonic() - last < quiet:
            if self._read():
                last = time.monotonic()
        return self.take_events()
