"""Bus write snoop: every write into an address window of a Wishbone classic bus is an event."""

from amaranth.hdl import *
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

__all__ = ["WishboneObservation", "BusWriteSnoop"]


class WishboneObservation(wiring.Signature):
    """Every signal of a Wishbone classic bus, as driven onto the bus.

    All members are ``Out``, whoever drives them (the initiator drives ``cyc``, ``stb``, ``we``,
    ``adr``, ``dat_w``, ``sel``; the target drives ``ack``): an observer takes the flipped
    signature and only ever reads. ``adr`` is a word address (granularity = ``data_width``).
    """

    def __init__(self, *, addr_width, data_width):
        if not isinstance(data_width, int) or data_width < 8 or data_width % 8:
            raise ValueError(f"data_width must be a positive multiple of 8, not {data_width!r}")
        if not isinstance(addr_width, int) or addr_width < 1:
            raise ValueError(f"addr_width must be a positive int, not {addr_width!r}")
        self._addr_width = addr_width
        self._data_width = data_width
        super().__init__(
            {
                "cyc": Out(1),
                "stb": Out(1),
                "we": Out(1),
                "ack": Out(1),
                "adr": Out(addr_width),
                "dat_w": Out(data_width),
                "sel": Out(data_width // 8),
            }
        )

    @property
    def addr_width(self):
        return self._addr_width

    @property
    def data_width(self):
        return self._data_width

    def __eq__(self, other):
        return (
            type(other) is type(self)
            and other.addr_width == self.addr_width
            and other.data_width == self.data_width
        )

    def __repr__(self):
        return f"WishboneObservation(addr_width={self.addr_width}, data_width={self.data_width})"


class BusWriteSnoop(wiring.Component):
    """Time-stamps writes into ``[window_base, window_base + window_words)``, as a bus analyzer.

    The snoop is not a bus target: it drives nothing on the bus and never stalls it. The bus
    must be clocked by ``sync`` (no synchronizer: its signals are only meaningful at its clock).

    Parameters
    ----------
    addr_width, data_width : int
        Word address and data widths of the bus.
    window_base : int
        First word address of the window.
    window_words : int, >= 1
        Words in the window; the window must lie inside the address space.

    Ports
    -----
    bus : In(:class:`WishboneObservation`)
        The observed bus.
    events : Out(stream.Signature(data_width, always_ready=True))
        One event per completed write in the window, ``payload`` = ``dat_w`` (the whole word;
        ``sel`` is not looked at, so a partial write reports whatever the initiator drove on
        the unselected lanes).

    Timing
    ------
    A write completes in a cycle in which ``cyc & stb & we & ack`` is high and ``adr`` is in the
    window; ``valid`` is high in that cycle + :attr:`latency` (= 1: the decision is
    registered, which keeps the address comparators off the time-stamper's paths). Wait
    states (``stb`` high for several cycles before ``ack``) give one event, for the ack cycle.
    Writes acked in consecutive cycles give events in consecutive cycles. Reads, writes that
    are not acked, and writes outside the window give none.
    """

    latency = 1

    def __init__(self, *, addr_width=30, data_width=32, window_base, window_words):
        bus_signature = WishboneObservation(addr_width=addr_width, data_width=data_width)
        if not isinstance(window_base, int) or not isinstance(window_words, int):
            raise TypeError("window_base and window_words must be ints")
        if window_words < 1 or window_base < 0 or window_base + window_words > 2**addr_width:
            raise ValueError(
                f"window [{window_base:#x}, +{window_words:#x}) does not fit in a "
                f"{addr_width}-bit word address space"
            )
        self._window_base = window_base
        self._window_words = window_words
        super().__init__(
            {
                "bus": In(bus_signature),
                "events": Out(stream.Signature(data_width, always_ready=True)),
            }
        )

    @property
    def window(self):
        """``(window_base, window_words)``."""
        return self._window_base, self._window_words

    def elaborate(self, platform):
        m = Module()
        bus = self.bus
        in_window = Signal()
        m.d.comb += in_window.eq(
            (bus.adr >= self._window_base) & (bus.adr < self._window_base + self._window_words)
        )
        write_done = Signal()
        m.d.comb += write_done.eq(bus.cyc & bus.stb & bus.we & bus.ack & in_window)
        m.d.sync += self.events.valid.eq(write_done)
        with m.If(write_done):  # payload keeps the last write between events
            m.d.sync += self.events.payload.eq(bus.dat_w)
        return m
