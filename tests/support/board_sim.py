"""``sim:gateware`` as a given board looks to the host: the appliance's IDENTIFY reply names
that board (its ``identify_name``), and its pty passes bytes only at the board's link rate.

Run as ``python tests/support/board_sim.py --board ulx3s [sim_device options]``: it prints
``PTY <path>`` and runs :func:`latscope_gateware.sim_device.main` with two parts swapped for
the board's: the appliance's configuration names the board, and the pty link is a
:class:`BoardRateLink`. (The simulated appliance keeps sim_device's clock and UART divisor;
only the host side of the wire runs at the board's rate.)

With ``--loopback``, ``--loop-delay E,M`` and ``--loop-jitter J`` make the self-test's jumper
a real loop's (:class:`LoopWires`): EDGE0 sees each IRQ pin change E capture cycles late, plus
0..J more (a different delay per change), the strobe M cycles late.
"""

import argparse
import array
import fcntl
import functools
import random
import sys

import latscope_boards
from latscope_gateware import sim_device

__all__ = ["BoardRateLink", "LoopWires", "misread", "main"]

#: Linux's TCGETS2 ioctl (asm-generic/ioctls.h: _IOR('T', 0x2A, struct termios2)) and the
#: index of c_ospeed in struct termios2 read as ints (4 flag words, c_line and 19 c_cc
#: bytes in 5 words, c_ispeed, c_ospeed).
TCGETS2 = 0x802C542A
_OSPEED = 10


def misread(byte, sent_baud, read_baud):
    """The byte a UART at ``read_baud`` reads from one 8N1 frame sent at ``sent_baud`` (the
    line idle, high, after it): each data bit sampled mid-bit by the reader's clock from the
    falling edge of the start bit. The same rates read the byte itself."""
    frame = [0, *((byte >> bit) & 1 for bit in range(8)), 1]
    value = 0
    for bit in range(8):
        index = int((1.5 + bit) * sent_baud / read_baud)
        value |= (frame[index] if index < len(frame) else 1) << bit
    return value


class BoardRateLink(sim_device.PtyLink):
    """The pty as a board's UART at ``baud``: the host's rate is the pty's speed as the host
    set it (a pty's master reads its follower's termios), and bytes cross between different
    rates as :func:`misread` says."""

    def __init__(self, fd, baud):
        super().__init__(fd)
        self.baud = baud

    def host_baud(self):
        settings = array.array("i", [0] * 64)
        fcntl.ioctl(self.fd, TCGETS2, settings)
        return settings[_OSPEED]

    def send(self, byte):
        host = self.host_baud()
        super().send(byte if host == self.baud else misread(byte, self.baud, host))

    def receive(self, cycle):
        data = super().receive(cycle)
        host = self.host_baud()
        if data and host != self.baud:
            data = bytes(misread(byte, host, self.baud) for byte in data)
        return data


class LoopWires(sim_device.SimulatedDevice):
    """The simulated appliance with the loopback jumper as wires with delays: EDGE0 sees an
    IRQ pin change ``edge_delay`` capture cycles after sim_device's ideal jumper would, plus
    0..``jitter`` more (seeded, per change), the strobe ``marker_delay`` cycles after. All 0:
    the ideal jumper."""

    def __init__(self, *args, edge_delay=0, marker_delay=0, jitter=0, **kwargs):
        super().__init__(*args, **kwargs)
        self.edge_delay, self.marker_delay, self.jitter = edge_delay, marker_delay, jitter

    async def _jumper(self, ctx):
        app, rng = self.appliance, random.Random(1)
        level, cycle, pending = 0, 0, []  # pending: (cycle due, pin, level)
        while True:
            await ctx.tick(self.domain)
            new = ctx.get(app.irq)
            if new != level:
                level = new
                edge_at = cycle + self.edge_delay + rng.randint(0, self.jitter)
                pending += [
                    (edge_at, app.edges, new),
                    (cycle + self.marker_delay, app.marker_strobe, new),
                ]
            for _due, pin, value in [change for change in pending if change[0] <= cycle]:
                ctx.set(pin, value)
            pending = [change for change in pending if change[0] > cycle]
            cycle += 1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--board", required=True, choices=list(latscope_boards.BOARDS))
    parser.add_argument("--loop-delay", default="0,0", help="EDGE0,MARKER capture cycles")
    parser.add_argument("--loop-jitter", type=int, default=0, help="EDGE0: 0..J cycles more")
    args, rest = parser.parse_known_args(argv)
    board = latscope_boards.get_board(args.board)
    sim_device.ApplianceConfig = functools.partial(
        sim_device.ApplianceConfig, board=board.identify_name
    )
    sim_device.PtyLink = functools.partial(BoardRateLink, baud=board.baud)
    edge_delay, marker_delay = (int(cycles) for cycles in args.loop_delay.split(","))
    sim_device.SimulatedDevice = functools.partial(
        LoopWires, edge_delay=edge_delay, marker_delay=marker_delay, jitter=args.loop_jitter
    )
    sim_device.main(rest)


if __name__ == "__main__":
    sys.exit(main())
