"""The boards' udev rule (scripts/99-latscope.rules) and the host's low-latency request: the
rule is the generator's output, names exactly the boards' USB IDs with the latency timer and
permissions for each, passes ``udevadm verify`` where that exists; opening a pty asks for low
latency, is refused by the kernel and still opens."""

import os
import re
import shutil
import subprocess
import sys
import tty
from pathlib import Path

import pytest
import serial

import latscope_boards
from latscope.link.device import low_latency, open_transport
from latscope.link.udev import LATENCY_TIMER_MS, RULES_NAME, udev_rules

RULES = Path(__file__).resolve().parents[2] / "scripts" / RULES_NAME

_MATCH = re.compile(r'ATTRS?\{(idVendor|idProduct)\}=="([0-9a-f]{4})"')


def _rules() -> list[str]:
    lines = RULES.read_text().splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def _usb_id(rule: str) -> str:
    ids = dict(_MATCH.findall(rule))
    return f"{ids['idVendor']}:{ids['idProduct']}"


def test_the_rule_file_is_the_generators_output():
    assert RULES.read_text() == udev_rules(), "regenerate: python -m latscope.link.udev"


def test_every_board_usb_id_gets_latency_timer_and_permissions():
    boards = {latscope_boards.get_board(name).usb_id for name in latscope_boards.BOARDS}
    assert boards == {"0403:6010", "0403:6015"}  # FT2232H (iCE40 boards), FT231X (ULX3S)
    by_id: dict[str, list[str]] = {}
    for rule in _rules():
        by_id.setdefault(_usb_id(rule), []).append(rule)
    assert set(by_id) == boards
    for usb_id, rules in by_id.items():
        timer = [rule for rule in rules if "ATTR{latency_timer}" in rule]
        assert len(timer) == 1, usb_id
        assert 'SUBSYSTEM=="usb-serial"' in timer[0] and 'DRIVER=="ftdi_sio"' in timer[0]
        assert f'ATTR{{latency_timer}}="{LATENCY_TIMER_MS}"' in timer[0]
        for subsystem in ("tty", "usb"):
            permitted = [r for r in rules if f'SUBSYSTEM=="{subsystem}"' in r and "MODE=" in r]
            assert len(permitted) == 1, (usb_id, subsystem)
            assert 'MODE="0660"' in permitted[0] and "GROUP=" in permitted[0]


def test_udevadm_verify_accepts_the_rule_file():
    udevadm = shutil.which("udevadm")
    if udevadm is None:
        pytest.skip("no udevadm on this machine (systemd's udev not installed)")
    probe = subprocess.run([udevadm, "verify", "--help"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"udevadm has no verify command (systemd 254 added it): {probe.stderr}")
    done = subprocess.run([udevadm, "verify", str(RULES)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_pty_opens_though_it_refuses_low_latency():
    master, slave = os.openpty()
    try:
        tty.setraw(slave)
        transport = open_transport(os.ttyname(slave))
        try:
            # A pyserial port on Linux: open_transport made the request (low_latency's
            # condition); the kernel has no serial_struct for a pty, so it failed, ignored.
            assert sys.platform.startswith("linux") and isinstance(transport, serial.Serial)
            with pytest.raises(ValueError, match="ASYNC_LOW_LATENCY"):
                transport.set_low_latency_mode(True)
            assert low_latency(transport) is False
            os.write(master, b"\x5a")
            assert transport.read(1) == b"\x5a"
        finally:
            transport.close()
    finally:
        os.close(master)
        os.close(slave)
