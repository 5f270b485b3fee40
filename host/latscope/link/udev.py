"""The udev rule for the boards' USB serial chips (``scripts/99-latscope.rules``), made from
the board definitions: ``python -m latscope.link.udev > scripts/99-latscope.rules``.

For each board's USB ID (``Board.usb_id``) it sets the FTDI latency timer to
:data:`LATENCY_TIMER_MS` and lets the ``dialout`` group use the tty (the link) and the
``plugdev`` group the USB device (programming: openFPGALoader through libftdi).
``make install-udev`` installs it (docs/boards.md, "The FTDI latency timer (Linux)").
"""

import sys

from .presets import board_presets

__all__ = ["LATENCY_TIMER_MS", "RULES_NAME", "udev_rules"]

#: The FTDI latency timer latscope wants, in ms. An FTDI chip holds received bytes that do
#: not fill a USB packet for up to this long before sending them (FTDI AN232B-04, "Data
#: Throughput, Latency and Handshaking"; the Linux ftdi_sio default is 16 ms): every command
#: reply and the tail of the live view wait that long.
LATENCY_TIMER_MS = 1

#: The file's name in ``scripts/`` and in ``/etc/udev/rules.d``: late (99), after the
#: distribution's rules that set the tty's group, so these win.
RULES_NAME = "99-latscope.rules"

_HEADER = f"""\
# latscope's FPGA boards: their USB serial chips' tty and USB device for the dialout and
# plugdev groups, the FTDI latency timer {LATENCY_TIMER_MS} ms (Linux's default, 16 ms, delays
# every reply). Made from the board definitions (boards/latscope_boards, Board.usb_id):
#   .venv/bin/python -m latscope.link.udev > scripts/{RULES_NAME}
# Install: sudo make install-udev (docs/boards.md, "The FTDI latency timer (Linux)").
"""


def _rules_for(usb_id: str) -> list[str]:
    vendor, product = usb_id.split(":")
    # ATTRS looks up the device's parents (the tty's and the usb-serial port's USB device).
    parents = f'ATTRS{{idVendor}}=="{vendor}", ATTRS{{idProduct}}=="{product}"'
    return [
        f'SUBSYSTEM=="usb", ENV{{DEVTYPE}}=="usb_device", ATTR{{idVendor}}=="{vendor}", '
        f'ATTR{{idProduct}}=="{product}", MODE="0660", GROUP="plugdev"',
        f'SUBSYSTEM=="tty", {parents}, MODE="0660", GROUP="dialout"',
        # Not on "add" only: the port's driver binds after its add event, and `udevadm
        # trigger` (make install-udev) sends "change".
        f'ACTION!="remove", SUBSYSTEM=="usb-serial", DRIVER=="ftdi_sio", {parents}, '
        f'ATTR{{latency_timer}}="{LATENCY_TIMER_MS}"',
    ]


def udev_rules() -> str:
    """The rule file's text: per USB ID (in the boards' order) a comment naming its boards
    and its three rules."""
    boards: dict[str, list[str]] = {}
    for preset in board_presets().values():
        boards.setdefault(preset.usb_id, []).append(preset.name)
    blocks = [
        "\n".join([f"# {usb_id}: {', '.join(names)}", *_rules_for(usb_id)])
        for usb_id, names in boards.items()
    ]
    return "\n\n".join([_HEADER.rstrip("\n"), *blocks]) + "\n"


if __name__ == "__main__":
    sys.stdout.write(udev_rules())
