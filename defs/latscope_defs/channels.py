"""The appliance's pins and the logic channels that show them: the one definition.

The board pin maps (``latscope_boards``), the SUMP device mode's channels (sigrok's ``ols``
driver), the ``.sr`` and VCD exports and the sigrok decoders' channel list (generated into
``decoders/latscope_marker/encoding.py``) all number the channels as :class:`Layout` does.
Plain Python that the gateware can import; tests check the gateware's SUMP order and the
boards' pin maps against it.
"""

from dataclasses import dataclass
from typing import Protocol

from .protocol import IRQ_DELAY_BITS

__all__ = [
    "Channel",
    "MAX_EDGES",
    "EXPORT_DATA_BITS",
    "SECOND_LANE",
    "DELAY_LANE",
    "pins",
    "membus_pins",
    "Layout",
    "MARKER_DECODER",
    "LATENCY_DECODER",
]

#: Edge channels an appliance can have (sources EDGE0 .. EDGE7).
MAX_EDGES = 8
#: Marker data bits the export and the decoders show (the marker encoding's 16 bits).
EXPORT_DATA_BITS = 16

MARKER_DECODER = "latscope_marker"
LATENCY_DECODER = "latscope_latency"


@dataclass(frozen=True)
class Channel:
    """One signal: ``name`` (pin label, SUMP / export channel name, decoder channel name),
    ``decoder_id`` (its channel id in the ``latscope_marker`` decoder), ``direction`` at the
    appliance (``in``, ``out``, or ``derived`` for LOSS and HOLE, which no pin carries) and a
    description."""

    name: str
    decoder_id: str
    direction: str
    description: str


def _data(n: int) -> Channel:
    return Channel(f"D{n}", f"d{n}", "in", f"Marker data bit {n}")


STROBE = Channel("STROBE", "strobe", "in", "Marker strobe (toggles once per marker)")
IRQ = Channel("IRQ", "irq", "out", "Interrupt request line into the DUT")
LOSS = Channel("LOSS", "loss", "derived", "latscope export: high where events may be lost")
HOLE = Channel(
    "HOLE", "hole", "derived", "latscope export: toggles where the host's stream has a hole"
)
STROBE2 = Channel(
    "STROBE2", "strobe2", "derived", "latscope export: strobe of the second marker of a cycle"
)


def _data2(n: int) -> Channel:
    return Channel(f"D2_{n}", f"d2_{n}", "derived", f"Second marker lane, data bit {n}")


#: The second marker lane: strobe first, then its data bits (contiguous in a sample word).
SECOND_LANE = [STROBE2] + [_data2(n) for n in range(EXPORT_DATA_BITS)]


def _delay(n: int) -> Channel:
    return Channel(f"DELAY{n}", f"delay{n}", "derived", f"IRQ trigger delay, bit {n}")


#: The IRQ trigger's delay lane: the delay (capture cycles) of the latest IRQ edge, as its
#: record gives it (protocol.IrqValue), held until the next IRQ edge.
DELAY_LANE = [_delay(n) for n in range(IRQ_DELAY_BITS)]


def _edge(n: int) -> Channel:
    return Channel(f"EDGE{n}", f"edge{n}", "in", f"Edge channel {n}")


def pins(marker_width: int = EXPORT_DATA_BITS, edge_count: int = 0) -> list[Channel]:
    """The appliance's pins in channel order: data, strobe, IRQ, edges."""
    if not 0 <= edge_count <= MAX_EDGES:
        raise ValueError(f"edge_count must be 0..{MAX_EDGES}, not {edge_count}")
    return (
        [_data(n) for n in range(marker_width)]
        + [STROBE, IRQ]
        + [_edge(n) for n in range(edge_count)]
    )


#: The memory bus port's pins (docs/membus.md), as the ``latscope_membus`` decoder names
#: them too: the write strobe (the decoder's one required channel), the chip select, data and
#: address lines.
BUS_WE = Channel("WE", "we", "in", "Write strobe (NWE, SWE)")
BUS_CS = Channel("CS", "cs", "in", "Chip select (NE1; none on the SMI: leave unassigned)")


def _bus_data(n: int) -> Channel:
    return Channel(f"D{n}", f"d{n}", "in", f"Data bit {n}")


def _address(n: int) -> Channel:
    return Channel(f"A{n}", f"a{n}", "in", f"Address bit {n}")


def membus_pins(data_width: int, address_bits: int, edge_count: int = 0) -> list[Channel]:
    """The pins of an appliance whose markers come on a memory bus (a board's bus build, in
    place of the marker port) in channel order: write strobe, chip select, data, address,
    IRQ, edges."""
    if not 0 <= edge_count <= MAX_EDGES:
        raise ValueError(f"edge_count must be 0..{MAX_EDGES}, not {edge_count}")
    return (
        [BUS_WE, BUS_CS]
        + [_bus_data(n) for n in range(data_width)]
        + [_address(n) for n in range(address_bits)]
        + [IRQ]
        + [_edge(n) for n in range(edge_count)]
    )


class _EdgeCount(Protocol):
    """What :meth:`Layout.for_identity` reads of a device's identity (the host's
    ``latscope.link.identity.Identity``, which this package cannot import)."""

    @property
    def edge_count(self) -> int: ...


@dataclass(frozen=True)
class Layout:
    """The exported signals of an appliance with ``edge_count`` edge channels: its pins
    (16 data bits), LOSS and HOLE, in bit order; with ``second_lane``, then the second marker
    lane (STROBE2, D2_0 .. D2_15) for captures with two markers in one cycle.

    Channel order (channel n = SUMP channel n = bit n of an exported sample word):

    ========================= ======== ===========================================================
    channels                  pin      level
    ========================= ======== ===========================================================
    D0 .. D(w-1)              in       marker data (the export shows the low 16 bits of a marker)
    STROBE                    in       marker strobe (toggles once per marker)
    IRQ                       out      the IRQ generator's output
    EDGE0 .. EDGE(n-1)        in       edge channels
    LOSS                      --       export only: high where events may have been lost
    HOLE                      --       export only: toggles at each hole in the host's stream
                                       (where it dropped or could not verify data: events of
                                       any source may be missing, docs/tests.md rules 4-6);
                                       the events of its sample and after came after the hole
    STROBE2, D2_0 .. D2_15    --       export only, when two markers share a cycle: the second
                                       marker lane (strobe and data of a cycle's second marker)
    DELAY0 .. DELAY13         --       export only, when the capture has triggered IRQ edges:
                                       the latest IRQ edge's trigger delay (capture cycles)
    ========================= ======== ===========================================================

    Two markers in one cycle (trace port and bus window together) are taken in the order
    trace port, bus window, as :func:`latscope.analysis.pairing.analyze` takes them
    (docs/tests.md): the first on STROBE/D*, the second on STROBE2/D2_*, which the export adds
    only when a capture has such a cycle (``second_lane``); the marker decoder reads it after
    the first.
    """

    edge_count: int = 0
    second_lane: bool = False
    delay_lane: bool = False

    @classmethod
    def for_identity(cls, identity: _EdgeCount) -> "Layout":
        return cls(identity.edge_count)

    @property
    def channels(self) -> list[Channel]:
        return (
            pins(EXPORT_DATA_BITS, self.edge_count)
            + [LOSS, HOLE]
            + (SECOND_LANE if self.second_lane else [])
            + (DELAY_LANE if self.delay_lane else [])
        )

    @property
    def names(self) -> list[str]:
        return [channel.name for channel in self.channels]

    def bit(self, name: str) -> int:
        """Bit of the channel ``name`` in a sample word."""
        return self.names.index(name)

    def decoder_channels(self) -> list[tuple[str, str]]:
        """(decoder channel id, signal name) of latscope_marker's channels, in the
        decoder's order: the strobe (its one required channel) first, then the others in
        channel order."""
        ordered = decoder_order(self.channels)
        return [(channel.decoder_id, channel.name) for channel in ordered]

    def decoder_stack(self, latency_options: dict[str, str] | None = None) -> str:
        """sigrok-cli's ``-P`` argument for the latscope decoders on these signals;
        ``latency_options``: latscope_latency's (``{"load": "bus"}``), in their order."""
        channels = ":".join(f"{decoder}={signal}" for decoder, signal in self.decoder_channels())
        options = "".join(f":{name}={value}" for name, value in (latency_options or {}).items())
        return f"{MARKER_DECODER}:sample_delay=0:{channels},{LATENCY_DECODER}{options}"


def decoder_order(channels: list[Channel]) -> list[Channel]:
    """The decoder's channel order: STROBE first (required), then the rest as given."""
    return [STROBE] + [channel for channel in channels if channel != STROBE]


def decoder_channels() -> list[Channel]:
    """Every channel the ``latscope_marker`` decoder has (all 8 edge channels, the second
    marker lane, the delay lane)."""
    return decoder_order(Layout(MAX_EDGES, second_lane=True, delay_lane=True).channels)
