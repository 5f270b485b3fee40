"""What an appliance says about itself: the IDENTIFY reply as one object.

:class:`Identity` is made from the reply (:meth:`Identity.from_reply`) when a device is
opened, stored in a capture file's metadata (:meth:`Identity.as_dict`) and read back from it
(:meth:`Identity.from_dict`): one constructor both ways, so the parser, the analysis, the
report and the export read a capture's clock, widths, pin latencies and sources from the
same fields the device sent. One field is the host's, not the device's: the IRQ output's pad
delay (``irq_pad_delay``, :mod:`.pad_delay`), which the host adds to IRQ stamps as it
subtracts the pin latencies from the others.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from latscope_defs.protocol import IDENTIFY_REPLY, MAGIC, VERSION, VERSIONS, Source

if TYPE_CHECKING:
    from .parser import StreamParser

__all__ = ["Identity", "IdentityError"]


class IdentityError(ValueError):
    """An IDENTIFY reply that is not a latscope device's, or of another protocol version."""


#: Defaults of fields a capture file's identity may leave out (files written by tools and
#: tests that know only some of them): a 16-bit marker port, no bus, no edges.
_DEFAULTS: dict[str, int | str] = {
    "version": VERSION,
    "clock_hz": 0,
    "stamp_shift": 0,
    "marker_width": 16,
    "edge_count": 0,
    "bus_width": 0,
    "fifo_depth": 0,
    "board": "",
    "link_clock_hz": 0,
    "trigger_latency": 0,
    "irq_pad_delay": 0,
}


@dataclass(frozen=True)
class Identity:
    """What the IDENTIFY reply says about a device."""

    version: int = VERSION
    clock_hz: int = 0  # 0: unknown (a capture file without a clock)
    stamp_shift: int = 0
    marker_width: int = 16
    edge_count: int = 0
    bus_width: int = 0
    fifo_depth: int = 0
    # stamp units from pin to stamp (cycles when stamp_shift is 0: docs/protocol.md, IDENTIFY)
    latency: dict[Source, int] = field(default_factory=dict)
    board: str = ""
    link_clock_hz: int = 0  # the link clock; 0: unknown (older gateware, old files)
    trigger_latency: int = 0  # stamp units, trigger event to IRQ edge at delay 0
    #                                    (0: no trigger, a version 1 or 2 device or a
    #                                    board's bring-up build)
    # The host's: stamp units from an IRQ edge's stamp to its pad, added to IRQ stamps, and
    # the board's figure (ns) they are rounded from (.pad_delay; 0: none, a simulation).
    irq_pad_delay: int = 0
    irq_pad_delay_ns: float = 0.0

    @property
    def stamp_hz(self) -> int:
        """Stamp units per second: the capture clock, times 2 with DDR inputs and 4 with a
        1:4 input gearbox (``stamp_shift``)."""
        return self.clock_hz << self.stamp_shift

    @property
    def irq_clock_hz(self) -> int:
        """The clock IRQ settings (period, jitter mask, width) count: the link clock, which
        the IRQ generator's timing runs on (docs/protocol.md, IRQ_CONFIG); the capture clock
        on a one-clock build and for an identity without ``link_clock_hz`` (gateware from
        before the two clock domains had one clock)."""
        return self.link_clock_hz or self.clock_hz

    @property
    def has_trigger(self) -> bool:
        """Whether the device has the IRQ trigger (TRIGGER_CONFIG: protocol version 3; a
        bring-up build, docs/boards.md, leaves it out and says so with ``trigger_latency``
        0)."""
        return self.version >= 3 and self.trigger_latency > 0

    def trigger_offset(self, source: int) -> int:
        """Stamp units from the stamp the host gives a trigger event of ``source`` (its pin
        change: the parser subtracted the pin latency) to the IRQ edge its firing makes at
        delay 0, for an event stamped at the start of its cycle; one stamped ``p`` units
        into its cycle (a DDR or gearbox board's phase) is ``p`` units closer. So an IRQ edge
        with delay ``d`` comes ``(d << stamp_shift) + trigger_offset(source) - p`` stamp units
        after its trigger's pin change (docs/protocol.md, "Triggered IRQs"). The IRQ edge's
        stamp is the host's: with the board's IRQ pad delay added (``irq_pad_delay``)."""
        return self.trigger_latency + self.latency.get(Source(source), 0) + self.irq_pad_delay

    @property
    def resolution_ns(self) -> float:
        return 1e9 / self.stamp_hz

    @property
    def sources(self) -> list[Source]:
        """The event sources this device has (the reply gives a pin latency for all)."""
        sources = [Source.MARKER]
        if self.bus_width:
            sources.append(Source.BUS)
        sources.append(Source.IRQ)
        sources += [Source(Source.EDGE0 + n) for n in range(self.edge_count)]
        return sources

    def as_dict(self) -> dict[str, int | float | str | dict[str, int]]:
        """The metadata form (``docs/capture-format.md``): latencies by source name."""
        return {
            "version": self.version,
            "clock_hz": self.clock_hz,
            "stamp_shift": self.stamp_shift,
            "marker_width": self.marker_width,
            "edge_count": self.edge_count,
            "bus_width": self.bus_width,
            "fifo_depth": self.fifo_depth,
            "board": self.board,
            "latency": {Source(source).name: cycles for source, cycles in self.latency.items()},
            "link_clock_hz": self.link_clock_hz,
            "trigger_latency": self.trigger_latency,
            "irq_pad_delay": self.irq_pad_delay,
            "irq_pad_delay_ns": self.irq_pad_delay_ns,
        }

    # ``info`` is parsed JSON (capture.metadata checked it), whose values are of any JSON type.
    @classmethod
    def from_dict(cls, info: Mapping[str, Any] | None) -> "Identity":
        """The identity a capture's metadata holds (the inverse of :meth:`as_dict`); fields
        left out or null take the defaults above (as capture.metadata reads null: not
        given; a null ``version`` is the current one, not 0). Raises KeyError, TypeError or
        ValueError on fields of the wrong kind."""
        given = {name: value for name, value in dict(info or {}).items() if value is not None}
        info = {**_DEFAULTS, **given}  # fields a newer writer adds: ignored
        latency = {
            Source[name]: int(cycles)
            for name, cycles in dict(info.pop("latency", None) or {}).items()
        }
        numbers = {name: int(info[name] or 0) for name in _DEFAULTS if name != "board"}
        return cls(
            **numbers,
            latency=latency,
            board=str(info["board"]),
            irq_pad_delay_ns=float(info.get("irq_pad_delay_ns") or 0.0),
        )

    @classmethod
    def from_reply(cls, payload: bytes) -> "Identity":
        """The identity in an IDENTIFY reply's payload bytes. An older reply (shorter: no
        ``link_clock_hz``, no ``trigger_latency``) reads with those 0, unknown."""
        reply = IDENTIFY_REPLY.struct().from_bits(int.from_bytes(payload, "little"))
        if reply.magic.to_bytes(4, "little") != MAGIC:
            raise IdentityError(f"not a latscope device: identify magic {reply.magic:#010x}")
        if reply.version not in VERSIONS:
            raise IdentityError(
                f"device speaks protocol version {reply.version}, this host "
                f"knows versions {', '.join(map(str, VERSIONS))}"
            )
        # Only the sources the device has: a 4-edge device lists no EDGE4..EDGE7.
        latency = {Source.MARKER: reply.marker_latency}
        if reply.bus_width:
            latency[Source.BUS] = reply.bus_latency
        latency[Source.IRQ] = reply.irq_latency
        latency.update(
            {Source(Source.EDGE0 + n): reply.edge_latency for n in range(reply.edge_count)}
        )
        return cls(
            version=reply.version,
            clock_hz=reply.clock_hz,
            stamp_shift=reply.stamp_shift,
            marker_width=reply.marker_width,
            edge_count=reply.edge_count,
            bus_width=reply.bus_width,
            fifo_depth=reply.fifo_depth,
            latency=latency,
            board=bytes(reply.board).rstrip(b"\0").decode("ascii", "replace"),
            link_clock_hz=reply.link_clock_hz,
            trigger_latency=reply.trigger_latency,
        )

    def stamp_latency(self, irq_shift: int = 0) -> dict[Source, int]:
        """What the parser subtracts from each source's stamps: the pin latencies, the IRQ's
        less ``irq_shift``, the stamp units a loop calibration moves IRQ edge stamps later
        (:attr:`latscope.link.calibration.Calibration.shift`; the IRQ's may go below 0)."""
        latency = dict(self.latency)
        if irq_shift:
            latency[Source.IRQ] = latency.get(Source.IRQ, 0) - irq_shift
        return latency

    def parser(self, *, correct_latency: bool = True, irq_shift: int = 0) -> "StreamParser":
        """A stream parser for this device's records (marker width; with
        ``correct_latency``, the pin latencies, ``irq_shift``: :meth:`stamp_latency`, and the
        IRQ output's pad delay)."""
        from .parser import StreamParser

        return StreamParser(
            marker_width=self.marker_width,
            latency=self.stamp_latency(irq_shift) if correct_latency else None,
            version=self.version,
            irq_pad_delay=self.irq_pad_delay if correct_latency else 0,
        )
