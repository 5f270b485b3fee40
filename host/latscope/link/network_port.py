"""Network serial ports (``rfc2217://host:port``, as ser2net and labgrid's exporter serve
them) at an appliance's data rate.

pyserial's RFC 2217 client passes every received byte through a queue on its own, in
Python: far slower than a 12 Mbaud appliance sends (docs/lab.md gives the rates
``bench/ser2net_throughput.py`` measures), so a busy capture would overflow the appliance's
FIFO. :class:`Rfc2217Port`
keeps all of pyserial's RFC 2217 (the telnet option negotiation, baud rate, purge, modem
lines) and replaces only its reader thread's loop: the data between two telnet IAC bytes
goes into the queue as one chunk, and the rare IAC sequences are handled byte by byte as
pyserial does. :func:`latscope.link.device.open_transport` uses it for ``rfc2217://`` URLs.
"""

from serial import rfc2217
from serial.rfc2217 import DO, DONT, IAC, SB, SE, WILL, WONT

__all__ = ["Rfc2217Port"]

_NORMAL, _IAC_SEEN, _NEGOTIATE = range(3)


class TelnetStream:
    """The telnet layer of a byte stream from an RFC 2217 server: data to ``port``'s read
    queue in chunks, commands and (sub)negotiations to ``port``'s handlers."""

    def __init__(self, port: rfc2217.Serial) -> None:
        self.port = port
        self.mode = _NORMAL
        self.suboption: bytearray | None = None  # a subnegotiation being received
        self.command: bytes | None = None  # DO, DONT, WILL or WONT awaiting its option

    def _data(self, data: bytes) -> None:
        if self.suboption is not None:
            self.suboption += data
        else:
            self.port._read_buffer.put(bytes(data))

    def feed(self, data: bytes) -> None:
        position, end = 0, len(data)
        while position < end:
            if self.mode == _NORMAL:
                iac = data.find(IAC, position)
                stop = end if iac < 0 else iac
                if stop > position:
                    self._data(data[position:stop])
                if iac < 0:
                    return
                self.mode, position = _IAC_SEEN, iac + 1
                continue
            byte = data[position : position + 1]
            position += 1
            if self.mode == _NEGOTIATE:
                self.port._telnet_negotiate_option(self.command, byte)
                self.mode = _NORMAL
            elif byte == IAC:  # an escaped 0xFF data byte
                self._data(IAC)
                self.mode = _NORMAL
            elif byte == SB:
                self.suboption, self.mode = bytearray(), _NORMAL
            elif byte == SE:
                suboption, self.suboption = bytes(self.suboption or b""), None
                self.port._telnet_process_subnegotiation(suboption)
                self.mode = _NORMAL
            elif byte in (DO, DONT, WILL, WONT):
                self.command, self.mode = byte, _NEGOTIATE
            else:
                self.port._telnet_process_command(byte)
                self.mode = _NORMAL


class Rfc2217Port(rfc2217.Serial):
    """pyserial's RFC 2217 port with a reader that passes data on in chunks. ``read(n)``
    returns at least ``n`` bytes (or what came before the timeout), possibly more;
    ``in_waiting`` counts chunks, at most the bytes waiting."""

    def _telnet_read_loop(self) -> None:
        stream = TelnetStream(self)
        try:
            while self.is_open:
                try:
                    data = self._socket.recv(65536)
                except TimeoutError:
                    continue  # wake up now and then to see if still open
                except OSError:
                    self._read_buffer.put(None)
                    break
                if not data:  # the server closed the connection
                    self._read_buffer.put(None)
                    break
                stream.feed(data)
        finally:
            if self.logger:
                self.logger.debug("read thread terminated")
