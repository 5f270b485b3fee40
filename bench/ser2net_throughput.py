"""How fast does ser2net carry an appliance's byte stream to a client, as a lab exporter
serves it (RFC 2217 over TCP), on the loopback address?

    .venv/bin/python bench/ser2net_throughput.py [--seconds 5] [--ports 1,2,4]

For each count N of ports: N pseudo-terminals, each fed as fast as the kernel takes it by a
writer thread (a repeating 0..255 pattern, so telnet's 0xFF escaping is exercised), each
served by its own ser2net bound to 127.0.0.1 (the configuration labgrid's exporter starts,
or with FAST_OPTIONS: larger reads, no character delay) and read in a thread by pyserial
as latscope reads it (``latscope.link.device.open_transport``: for ``rfc2217://`` the chunked
reader of ``latscope.link.network_port``), by pyserial's own RFC 2217 client, or by a plain
socket reader on raw TCP (what ser2net itself sustains); every byte read is checked against
the pattern. Printed: MB/s per port and in total, against the 1.2 MB/s of a 12 Mbaud
appliance link (8N1). The pty read directly (no ser2net) is the reference.

Needs Debian's ser2net (scripts/setup.sh). Figures depend on the machine: run it on an
exporter to size it (docs/lab.md).
"""

import argparse
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import tty
from pathlib import Path

import serial

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from lab_farm import FAST_OPTIONS, free_port, ser2net_command, wait_for_port  # noqa: E402

from latscope.lab import network_url  # noqa: E402
from latscope.link.device import open_transport  # noqa: E402

PATTERN = bytes(range(256)) * 256  # 64 KiB
LINK_MB_S = 1.2  # 12 Mbaud, 10 bits per byte


class Feeder(threading.Thread):
    """Writes the pattern into a pty master until stopped."""

    def __init__(self):
        super().__init__(daemon=True)
        self.master, slave = os.openpty()
        tty.setraw(slave)
        self.path = os.ttyname(slave)
        self.slave = slave  # kept open: the pty lives while the bench runs
        self.stopping = False

    def run(self):
        offset = 0
        while not self.stopping:
            try:
                offset += os.write(self.master, PATTERN[offset % 256 : offset % 256 + 32768])
            except OSError:
                time.sleep(0.001)


class SocketLink:
    """A plain TCP reader (``tcp://host:port``): what ser2net itself sustains, without
    pyserial's per-byte handling."""

    def __init__(self, url):
        host, port = url.removeprefix("tcp://").split(":")
        self.socket = socket.create_connection((host, int(port)))
        self.socket.settimeout(0.1)
        self.in_waiting = 0

    def read(self, size):
        try:
            return self.socket.recv(size)
        except TimeoutError:
            return b""

    def close(self):
        self.socket.close()


class Reader(threading.Thread):
    """Reads from a pyserial URL (or ``tcp://``: :class:`SocketLink`) for ``seconds`` as
    latscope's ``Device`` reads (what is waiting, else up to 64 KiB with a timeout) and
    checks the pattern."""

    def __init__(self, url, seconds):
        super().__init__(daemon=True)
        self.url, self.seconds = url, seconds
        self.count, self.errors = 0, 0
        # Opened before the data flows: RFC 2217's purge handshake at open is answered in
        # band, behind whatever the port is already sending (docs/lab.md).
        if url.startswith("tcp://"):
            self.link = SocketLink(url)
        elif url.startswith("pyserial+"):
            self.link = serial.serial_for_url(
                url.removeprefix("pyserial+"), baudrate=12_000_000, timeout=0.1
            )
        else:
            self.link = open_transport(url, timeout=0.1)

    def run(self):
        link, expected = self.link, None
        try:
            end = time.monotonic() + self.seconds
            start = None
            while time.monotonic() < end:
                data = link.read(max(1, link.in_waiting or 65536))
                if not data:
                    continue
                if start is None:  # time from the first byte on
                    start, expected = time.monotonic(), data[0]
                    end = start + self.seconds
                check = bytes((expected + i) & 0xFF for i in range(len(data)))
                self.errors += check != data
                expected = (expected + len(data)) & 0xFF
                self.count += len(data)
            self.elapsed = time.monotonic() - start if start else self.seconds
        finally:
            link.close()


def measure(count, seconds, protocol, options=(), reader="latscope"):
    feeders = [Feeder() for _ in range(count)]
    servers, urls = [], []
    try:
        for feeder in feeders:
            if protocol == "pty":
                urls.append(feeder.path)
                continue
            port = free_port()
            servers.append(
                subprocess.Popen(
                    ser2net_command(feeder.path, port, protocol=protocol, options=options),
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            wait_for_port(port, 10, servers[-1])
            url = network_url("127.0.0.1", port, protocol)
            urls.append(
                {"tcp": f"tcp://127.0.0.1:{port}", "pyserial": f"pyserial+{url}"}.get(reader, url)
            )
        readers = [Reader(url, seconds) for url in urls]
        for feeder in feeders:
            feeder.start()
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join()
    finally:
        for feeder in feeders:
            feeder.stopping = True
        for server in servers:
            server.terminate()
            server.wait()
    rates = [reader.count / reader.elapsed / 1e6 for reader in readers]
    return rates, sum(reader.errors for reader in readers)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--ports", default="1,2,4", help="numbers of ports served at once")
    args = parser.parse_args()
    if shutil.which("ser2net") is None and not os.path.exists("/usr/sbin/ser2net"):
        sys.exit("ser2net is not installed (scripts/setup.sh)")
    print(
        f"{os.cpu_count()} CPUs; pattern checked on every byte; a 12 Mbaud appliance link "
        f"is {LINK_MB_S} MB/s"
    )
    ways = [
        ("pty, read directly", "pty", (), "latscope"),
        ("ser2net as labgrid's exporter runs it, pyserial's rfc2217://", "rfc2217", (), "pyserial"),
        ("ser2net as labgrid's exporter runs it, latscope's rfc2217://", "rfc2217", (), "latscope"),
        ("ser2net with FAST_OPTIONS, latscope's rfc2217://", "rfc2217", FAST_OPTIONS, "latscope"),
        (
            "ser2net as labgrid's exporter runs it but raw TCP, plain socket reader",
            "raw",
            (),
            "tcp",
        ),
        ("ser2net with FAST_OPTIONS, raw TCP, plain socket reader", "raw", FAST_OPTIONS, "tcp"),
    ]
    for what, protocol, options, reader in ways:
        print(what)
        for count in map(int, args.ports.split(",")):
            rates, errors = measure(count, args.seconds, protocol, options, reader)
            print(
                f"  {count} port(s): {min(rates):6.2f} .. {max(rates):6.2f} MB/s per port, "
                f"{sum(rates):6.2f} MB/s total, {sum(rates) / LINK_MB_S:5.2f} appliance "
                f"links, {errors} bad reads"
            )


if __name__ == "__main__":
    main()
