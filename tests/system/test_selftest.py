"""The first-plug-in self-test against the simulated appliance (sim:gateware, the gateware in
Amaranth's simulator behind a pty), a port where nothing answers, a port that answers
garbage, and wiring faults made up from the program's own pattern."""

import json
import os
import subprocess
import tty
from pathlib import Path

import pytest

import latscope
from latscope.cli import main
from latscope.events import Events
from latscope.link.device import DEFAULT_IRQ, Device, open_transport
from latscope.link.identity import Identity
from latscope.link.selftest import (
    check_link,
    check_wiring,
    clock_phase_result,
    format_results,
    loopback_result,
    loopback_slack,
    wiring_pattern,
)
from latscope_defs.protocol import (
    UNKNOWN_COMMAND_REPLY,
    ClockCheck,
    Command,
    Source,
    encode_record,
)

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_cli_selftest_with_the_simulated_jumper(capsys):
    status = main(["selftest", "--port", "sim:gateware", "--count", "12", "--loopback", "--json"])
    results = json.loads(capsys.readouterr().out)
    assert status == 0
    link, loopback = results["link"], results["loopback"]
    assert link["ok"] and link["sent"] == 12 and link["wrong"] == link["missing"] == 0
    assert link["bytes_written"] == 12 * 9 and link["bytes_read"] >= 12 * 10
    assert loopback["ok"] and loopback["irq_edges"] >= 16
    # The simulated jumper is an ideal wire: after the documented pin latencies, each IRQ
    # change has the same stamp as EDGE0 and MARKER; uncorrected, they differ by exactly
    # the documented latencies.
    assert loopback["offsets"] == {"EDGE0": [0], "MARKER": [0]}
    assert loopback["delays_ns"] == {
        name: [ns, ns] for name, ns in loopback["documented_ns"].items()
    }
    assert loopback["matched"]["EDGE0"] == loopback["matched"]["MARKER"] > 30


@pytest.mark.slow
def test_api_selftest_without_the_jumper_fails_the_loopback():
    """sim:gateware without --loopback: the scripted DUT drives EDGE0 and the strobe, not
    the IRQ output, so the loopback check must fail and say why."""
    with latscope.open("sim:gateware") as session:
        results = session.selftest(loopback=True, count=8)
        irq_after = session.irq
    assert results["link"].ok and results["link"].sent == 8
    assert not results["loopback"].ok and results["loopback"].problems
    # The self-test puts back the session's IRQ settings: the command line's defaults, which
    # latscope.open sets (DEFAULT_IRQ).
    assert irq_after == DEFAULT_IRQ


def _pty():
    master, slave = os.openpty()
    tty.setraw(slave)
    return master, os.ttyname(slave)


def test_silent_port_gets_the_cable_hint():
    master, path = _pty()
    try:
        with Device(open_transport(path), reply_timeout=0.3) as device:
            result = check_link(device, count=8, baud=12_000_000, port=path)
    finally:
        os.close(master)
    assert not result.ok and result.missing == 1 and result.sent == 1
    assert "nothing came back" in result.hint and "cable" in result.hint


def test_garbage_gets_the_baud_hint():
    # pyserial's loop:// sends every byte back: the device end "speaks" command bytes, which
    # are no records, as a wrong baud rate would give garbage.
    with Device(open_transport("loop://"), reply_timeout=0.3) as device:
        result = check_link(device, count=8, baud=3_000_000, port="loop://")
    assert not result.ok and result.bytes_read > 0
    assert "baud" in result.hint and "3000000" in result.hint


@pytest.mark.slow  # waits out the self-test's read timeout on a port that never answers
def test_cli_exit_status_and_hint_on_a_silent_port(capsys):
    master, path = _pty()
    try:
        status = main(["selftest", "--port", path, "--count", "2"])
    finally:
        os.close(master)
    out = capsys.readouterr().out
    assert status == 1 and "link: FAILED" in out and "hint: nothing came back" in out


def _wired(values, fault):
    return [fault(value) for value in values]


def _bit(value, n):
    return value >> n & 1


@pytest.mark.parametrize(
    "fault, expected",
    [
        (lambda v: v | 1 << 3, {"stuck_high": [3]}),
        (lambda v: v & ~(1 << 15), {"stuck_low": [15]}),
        (lambda v: v & ~0x60 | _bit(v, 5) << 6 | _bit(v, 6) << 5, {"swapped": [(5, 6), (6, 5)]}),
        # Wired-OR and wired-AND shorts.
        (lambda v: v | (_bit(v, 9) | _bit(v, 10)) * 0x600, {"shorted": [(9, 10)]}),
        (lambda v: v & ~0x3 | (_bit(v, 0) & _bit(v, 1)) * 0x3, {"shorted": [(0, 1)]}),
    ],
)
def test_wiring_faults_are_named(fault, expected):
    result = check_wiring(_wired(wiring_pattern(), fault))
    assert not result.ok
    found = {
        name: getattr(result, name)
        for name in ("stuck_high", "stuck_low", "swapped", "shorted")
        if getattr(result, name)
    }
    assert found == expected


def test_wiring_clean_and_strobe_faults():
    assert check_wiring(wiring_pattern()).ok
    assert "not connected" in check_wiring([]).problems[0]
    assert "loose" in check_wiring(wiring_pattern()[:-3]).problems[0]


def test_the_firmware_wiring_walk_is_the_pattern_the_host_checks(tmp_path):
    """firmware/tools/wiring_walk.h, compiled for the host with a store that prints each
    marker word: the values are wiring_pattern(), each with its own strobe toggle."""
    tools = REPO_ROOT / "firmware" / "tools"
    program = tmp_path / "wiring_host"
    subprocess.run(
        [
            "gcc",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-std=c99",
            "-I",
            str(tools / "host"),
            "-I",
            str(REPO_ROOT / "firmware" / "include"),
            "-I",
            str(tools),
            "-o",
            str(program),
            str(tools / "wiring_host.c"),
        ],
        check=True,
    )
    words = [
        int(line, 16)
        for line in subprocess.run(
            [str(program)], check=True, capture_output=True, text=True
        ).stdout.split()
    ]
    assert [word & 0xFFFF for word in words] == wiring_pattern()
    strobes = [word >> 16 for word in words]
    assert all(a != b for a, b in zip([0] + strobes, strobes))
    assert check_wiring([word & 0xFFFF for word in words]).ok


def _loopback_events(edge_offsets, marker_offset=0):
    """IRQ changes every 40 stamps; EDGE0 and MARKER copies at the given offsets."""
    irq = [(100 + 40 * n, (n + 1) % 2) for n in range(len(edge_offsets))]
    rows = [(stamp, Source.IRQ, level) for stamp, level in irq]
    rows += [
        (stamp + offset, Source.EDGE0, level)
        for (stamp, level), offset in zip(irq, edge_offsets)
        if offset is not None
    ]
    rows += [(stamp + marker_offset, Source.MARKER, 0xFFFF) for stamp, _ in irq]
    rows.sort(key=lambda row: row[0])
    return Events(*zip(*rows))


IDENTITY = Identity(
    clock_hz=100_000_000,
    stamp_shift=1,
    edge_count=4,
    latency={Source.IRQ: 0, Source.EDGE0: 7, Source.MARKER: 11},
)


def test_loopback_verdict_on_made_up_captures():
    good = loopback_result(_loopback_events([0, 1, 0, 1]), IDENTITY)
    assert good.ok and good.offsets == {"EDGE0": [0, 1], "MARKER": [0]}
    assert good.documented_ns == {"EDGE0": 35.0, "MARKER": 55.0}
    assert good.delays_ns["EDGE0"] == (35.0, 40.0)
    late = loopback_result(_loopback_events([0, 2, 0, 0]), IDENTITY)
    assert not late.ok and "documented pin latencies" in late.problems[0]
    early = loopback_result(_loopback_events([0, -1, 0, 0]), IDENTITY)
    assert not early.ok
    missing = loopback_result(_loopback_events([None] * 4), IDENTITY)
    assert not missing.ok and "jumper from IRQ to EDGE0" in missing.problems[0]


def test_loopback_slack_is_the_rest_of_a_capture_cycle():
    """With the gearbox's quarter-cycle stamps (stamp_shift 2) the IRQ pin's output delay may
    put the jumpered inputs up to three quarters later; a whole cycle is too late."""
    quarters = Identity(
        clock_hz=125_000_000,
        stamp_shift=2,
        edge_count=4,
        latency={Source.IRQ: 0, Source.EDGE0: 13, Source.MARKER: 21},
    )
    assert [loopback_slack(Identity(stamp_shift=shift)) for shift in (0, 1, 2)] == [1, 1, 3]
    good = loopback_result(_loopback_events([0, 1, 2, 3], marker_offset=3), quarters)
    assert good.ok and good.offsets == {"EDGE0": [0, 1, 2, 3], "MARKER": [3]}
    assert good.documented_ns == {"EDGE0": 26.0, "MARKER": 42.0}
    late = loopback_result(_loopback_events([0, 4, 0, 0]), quarters)
    assert not late.ok and "within 3 stamp units" in late.problems[0]


def test_a_device_without_echo_gets_the_rebuild_hint():
    # What an older bitstream answers to ECHO: the unknown-command reply, '?' and the opcode.
    reply = b"".join(
        encode_record(Source.REPLY, byte) for byte in (UNKNOWN_COMMAND_REPLY, 1, Command.ECHO)
    )

    class OldDevice:
        def __init__(self):
            self.pending = b""

        def write(self, data):
            self.pending += reply
            return len(data)

        def read(self, size):
            data, self.pending = self.pending, b""
            return data

        in_waiting = 0

        def close(self):
            pass

    with Device(OldDevice(), reply_timeout=0.5) as device:
        result = check_link(device, count=4, baud=12_000_000, port="old")
    assert not result.ok and result.missing == 1
    assert "does not know ECHO" in result.hint


def test_clock_phase_verdicts_name_what_the_probe_saw():
    """STATUS clock_check -> the self-test's verdict: 0 no probe (ok, "not probed"), quarter
    1 alone ok, any other quarter or an irregular cycle a failure that names the phase and
    the error in ns (the HX8K's 84 MHz: 2.98 ns quarters). The netlist tests
    (tests/boards/test_netlist.py) give the probe the two phases."""
    hx8k = Identity(clock_hz=84_000_000, stamp_shift=2)
    absent = clock_phase_result(0, hx8k)
    assert absent.ok and not absent.probed
    assert format_results(clock_phase=absent)[0].startswith("clock phase: not probed")
    assert clock_phase_result(ClockCheck.EXPECTED, hx8k).ok
    for wrong in (ClockCheck.SEEN_2, ClockCheck.SEEN_0, ClockCheck.SEEN_1 | ClockCheck.SEEN_2):
        result = clock_phase_result(wrong, hx8k)
        assert not result.ok and "does not rise on the edge clock's" in result.problems[0]
        assert "(2.98 ns)" in result.problems[0]
        assert format_results(clock_phase=result)[0].startswith("clock phase: FAILED")
    irregular = clock_phase_result(ClockCheck.EXPECTED | ClockCheck.IRREGULAR, hx8k)
    assert not irregular.ok and irregular.problems == [
        problem for problem in irregular.problems if "irregular" in problem
    ]
