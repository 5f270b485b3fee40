"""The SPI link's host side (latscope.link.spi_link) against a fake of the board's channel A:
the FT2232H's MPSSE executing the host's queued commands, and on its lines the gateware
target's chunk framing (SpiTarget, step for step) behind the flash that shares them, with a
capture's stream in the device (docs/spi-link.md)."""

from collections import deque

import pytest

from latscope.link import mpsse
from latscope.link.parser import StreamParser
from latscope.link.spi_link import FLASH_SLEEP, FLASH_WAKE, QUEUE_DEPTH, SpiStream
from latscope_defs.protocol import GATEWARE_VERSION, Source
from latscope_defs.spi_link import MAX_CHUNK, READ, RELEASE
from support.marker_stream import marker_capture

#: The gateware's asynchronous FIFO (SpiTarget's default depth).
TARGET_FIFO = 256
#: The FT2232H's buffer of data read, on its way to the host (pyftdi's ``Ftdi.FIFO_SIZES``;
#: FT2232H datasheet, 4 kB per channel): the MPSSE stops clocking while it is full.
RX_BUFFER = 4096


class FakeChannelA:
    """Channel A's MPSSE, and the bus it drives: the appliance's SPI target and the flash.

    The host writes commands (``write_data``); the MPSSE executes them in order, as far as
    its receive buffer has room for what a read command clocks in (it stops clocking while
    the buffer is full), and ``read_data_bytes`` takes from that buffer, the MPSSE going on
    as room frees. It knows the commands of :mod:`latscope.link.mpsse` only (a real MPSSE
    answers others with 0xFA: bad command) and checks the mode 0 transaction shape: CS# low,
    an opcode byte out, bytes in, CS# high. ``ran_dry`` counts the times the MPSSE, streaming,
    ran out of commands: SCK stopped until the host's next write, not for want of room.

    The target is :class:`latscope_gateware.spi_target.SpiTarget` as the tests of
    tests/gateware/test_spi_target.py prove it: a byte held for the next bit times (0 at
    power-up), loaded at the end of every byte of a READ transaction: a length byte (what
    its FIFO holds, at most 255) or the chunk's next byte. Its FIFO is refilled from the
    device's ``stream`` before every load, as the link domain fills it faster than SCK
    empties it. The flash must be asleep during every READ, and 0xAB never starts a READ."""

    def __init__(self, stream=b""):
        self.pending = deque(stream)  # the device's bytes not yet in the target's FIFO
        self.fifo = deque()
        self.held, self.left = 0, 0
        self.flash_asleep = False
        self.selected = False
        self.log = []  # each transaction's opcode
        self.commands = bytearray()  # written, not yet executed
        self.rx = bytearray()  # read, not yet taken by the host
        self.cs_low = False
        self.phase = None  # None: CS# high; "opcode", "read", "other"
        self.reading = 0  # bytes still to clock of the read command being executed
        self.ran_dry = 0
        self.busy = False  # executed a command since it last ran out of them

    def write_data(self, data):
        self.commands += data
        self._execute()
        return len(data)

    def read_data_bytes(self, size, attempt=1):
        data = bytearray()
        while len(data) < size and self.rx:
            take = min(size - len(data), len(self.rx))
            data += self.rx[:take]
            del self.rx[:take]
            self._execute()
        return bytes(data)

    def _execute(self):
        while True:
            while self.reading and len(self.rx) < RX_BUFFER:
                self.rx.append(self._clock_in())
                self.reading -= 1
            if self.reading:
                return  # the buffer is full: the MPSSE waits for the host to take data
            if not self.commands:
                # Nothing more to do: after a READ while streaming, SCK stops until the
                # host's next command comes (counted once per stop).
                if self.busy and self.selected:
                    self.ran_dry += 1
                self.busy = False
                return
            self.busy = True
            self._command()

    def _command(self):
        opcode = self.commands[0]
        if opcode == mpsse.SET_BITS_LOW:
            level, direction = self.commands[1:3]
            assert direction == mpsse.DIRECTION
            cs_low = not level & mpsse.CS
            assert level & ~mpsse.CS & 0xFF == 0, "SCK and COPI idle low (mode 0)"
            if cs_low and not self.cs_low:
                self.phase = "opcode"
            elif not cs_low and self.cs_low:
                self.phase = None
            self.cs_low = cs_low
            del self.commands[:3]
        elif opcode == mpsse.WRITE_OUT:
            count = int.from_bytes(self.commands[1:3], "little") + 1
            assert count == 1 and self.phase == "opcode", "one opcode byte after CS# falls"
            self._opcode(self.commands[3])
            del self.commands[:4]
        elif opcode == mpsse.READ_IN:
            assert self.phase in ("read", "other"), "bytes in after an opcode"
            self.reading = int.from_bytes(self.commands[1:3], "little") + 1
            del self.commands[:3]
        elif opcode == mpsse.SEND_IMMEDIATE:
            del self.commands[:1]
        else:
            raise AssertionError(f"not a command of the link: {opcode:#04x}")

    def _opcode(self, opcode):
        self.log.append(opcode)
        self.phase = "other"
        if opcode == FLASH_SLEEP:
            self.flash_asleep = True
        elif opcode == FLASH_WAKE:
            assert not self.selected, "0xAB while streaming"
            self.flash_asleep = False
        elif opcode == RELEASE:
            self.selected = False
        elif opcode == READ:
            assert self.flash_asleep, "a READ with the flash awake: both drive CIPO"
            self.selected, self.phase = True, "read"

    def _clock_in(self):
        if self.phase != "read":
            return 0xFF  # nobody drives CIPO: the flash's DO is high impedance, pulled up
        sent = self.held
        while self.pending and len(self.fifo) < TARGET_FIFO:
            self.fifo.append(self.pending.popleft())
        if self.left == 0:
            self.held = self.left = min(len(self.fifo), MAX_CHUNK)
        else:
            self.held, self.left = self.fifo.popleft(), self.left - 1
        return sent


class FakeUart:
    def __init__(self):
        self.written, self.closed = bytearray(), False

    def write(self, data):
        self.written += data
        return len(data)

    def close(self):
        self.closed = True


def read_through(link, stream):
    """Reads ``link`` until as many bytes as ``stream`` has came; whether they are it."""
    received = bytearray()
    while len(received) < len(stream):
        received += link.read(1 << 16)
    return received == stream


@pytest.mark.parametrize("read_bytes", [7, 4096])
def test_a_capture_read_over_spi_parses_exact(read_bytes):
    """Every byte of the device's stream comes out of the transport's reads in order (with
    transactions that cut chunks, and ones longer than the stream), and parses exact."""
    stream, sent = marker_capture(5000, 84_000_000, seed=5, most_apart=500)
    bus = FakeChannelA(stream)
    assert read_through(SpiStream(FakeUart(), bus, read_bytes=read_bytes, timeout=0), stream)
    parser = StreamParser(version=GATEWARE_VERSION)
    events = parser.feed(stream)
    got = list(zip(events.stamp.tolist(), events.source.tolist(), events.value.tolist()))
    assert [event for event in got if event[1] == Source.MARKER] == sent


@pytest.mark.parametrize("depth", [1, QUEUE_DEPTH])
def test_queued_reads_keep_the_mpsse_clocking_while_the_host_takes_data(depth):
    """With READ transactions queued ahead the MPSSE never runs out of commands while the
    host takes a busy stream's data: it only ever waits for room in its buffer (the host's
    reading). One transaction at a time (depth 1, how the link read before) leaves SCK
    stopped after every transaction, until the host's next command arrives."""
    stream, sent = marker_capture(20000, 84_000_000, seed=9, most_apart=500)
    bus = FakeChannelA(stream)
    assert read_through(SpiStream(FakeUart(), bus, depth=depth, timeout=0), stream)
    transactions = bus.log.count(READ)
    assert transactions > 3 * QUEUE_DEPTH  # the stream took many transactions' data
    assert bus.ran_dry == (0 if depth > 1 else transactions)


def test_the_flash_sleeps_before_the_link_is_selected_and_wakes_after_it_is_released():
    """Open: deep power-down, then READ; close: RELEASE, then the release from deep
    power-down (never first in a READ); commands go to the UART, which close closes."""
    bus, uart, closed = FakeChannelA(), FakeUart(), []
    link = SpiStream(uart, bus, lambda: closed.append(True), timeout=0)
    assert link.read(10) == b""  # nothing in the device: empty chunks, no bytes
    link.write(b"I")
    link.close()
    assert bus.log[0] == FLASH_SLEEP and bus.log[1] == READ
    assert bus.log[-2:] == [RELEASE, FLASH_WAKE]
    assert set(bus.log[2:-2]) == {READ}
    assert uart.written == b"I" and uart.closed and closed == [True]


def identity_of(board):
    """What a board's IDENTIFY reply says (only its name matters here)."""
    from latscope.link.identity import Identity
    from latscope_defs.protocol import MAGIC, VERSION, IdentifyReply

    name = board.encode("ascii").ljust(16, b"\0")
    reply = IdentifyReply.const(
        {
            "magic": int.from_bytes(MAGIC, "little"),
            "version": VERSION,
            "clock_hz": 84_000_000,
            "marker_width": 16,
            "board": list(name),
        }
    )
    return Identity.from_reply(
        reply.as_bits().to_bytes(IdentifyReply.as_shape().size // 8, "little")
    )


def test_without_the_ftdi_device_the_stream_stays_on_the_uart(capsys):
    """--link spi where pyftdi finds no FT2232H (this machine): a note says why, and the
    device keeps its UART; a board without the SPI link is an error."""
    from latscope.link.device import Device, DeviceError, Port
    from latscope.link.presets import use_spi_link

    uart = FakeUart()
    device = Device(uart, name="board")
    device.identity = identity_of("ice40-hx8k-b-evn")
    use_spi_link(device, Port("board"))
    assert device.transport is uart
    assert "cannot open the SPI link" in capsys.readouterr().err
    device.identity = identity_of("ulx3s")
    with pytest.raises(DeviceError, match="has no SPI link"):
        use_spi_link(device, Port("board"))


def test_link_spi_on_an_icebreaker_build_without_the_link_names_the_build_with_it(capsys):
    """The iCEBreaker's link is in its ``spi`` build only, which names itself in IDENTIFY:
    on any other iCEBreaker gateware --link spi is one line naming that build; on the spi
    build the host goes on to channel A (none here: the note, and the UART)."""
    from latscope.link.device import Device, DeviceError, Port
    from latscope.link.presets import use_spi_link

    uart = FakeUart()
    device = Device(uart, name="board")
    device.identity = identity_of("icebreaker")
    with pytest.raises(DeviceError) as raised:
        use_spi_link(device, Port("board"))
    assert str(raised.value) == (
        "board: the gateware on the board (icebreaker) has no SPI link: --link spi needs the "
        "icebreaker-spi build (make bitstream BOARD=icebreaker VARIANT=spi; "
        "docs/spi-link.md), else --link uart"
    )
    device.identity = identity_of("icebreaker-spi")
    use_spi_link(device, Port("board"))
    assert device.transport is uart
    assert "cannot open the SPI link" in capsys.readouterr().err
