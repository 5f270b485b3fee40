"""The first-plug-in self-test against the simulated appliance (sim:gateware, the gateware in
Amaranth's simulator behind a pty), a port where nothing answers, a port that answers
garbage, and wiring faults made up from the program's own pattern."""

import json
import os
import subprocess
import tty
from pathlib import Path

import numpy as np
import pytest

import latscope
from latscope.capture.file import load_capture
from latscope.cli import main
from latscope.events import Events
from latscope.link.calibration import load_calibrations
from latscope.link.device import DEFAULT_IRQ, Device, IrqSettings, Port, open_transport
from latscope.link.identity import Identity
from latscope.link.selftest import (
    check_link,
    check_loopback,
    check_wiring,
    clock_phase_result,
    format_results,
    loopback_result,
    wiring_pattern,
)
from latscope_defs.protocol import (
    UNKNOWN_COMMAND_REPLY,
    ClockCheck,
    Command,
    Source,
    encode_record,
)
from support.board_process import SIM_REPLY_TIMEOUT, simulated_board

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


@pytest.mark.slow
def test_a_saved_calibration_is_applied_recorded_and_reported(tmp_path, monkeypatch, capsys):
    """sim:gateware as the ULX3S with a loop 2 cycles long to both inputs (board_sim's
    --loop-delay): the self-test passes (main failed it: over its one-unit allowance) and
    reports the round trip; ``save`` stores it as ulx3s-85f's, and the session's next
    capture moves IRQ stamps 2 units later, records the calibration and reports it."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(Port, "reply_timeout", SIM_REPLY_TIMEOUT)
    output = tmp_path / "loop.lsc"
    with (
        simulated_board("ulx3s", "--loopback", "--loop-delay", "2,2") as path,
        latscope.open(path, board="ulx3s") as session,
    ):
        assert session.calibration is None  # none saved yet
        loop = session.selftest(loopback=True, save=True, count=2)["loopback"]
        assert loop.ok and loop.offsets == {"EDGE0": [2], "MARKER": [2]}
        assert (loop.round_trip_units, loop.round_trip_ns, loop.spread_units) == (2, 20, 0)
        assert loop.samples == 4 * loop.irq_edges >= 64  # both inputs, both edges
        saved = load_calibrations()["ulx3s-85f"]
        assert (saved.round_trip_units, saved.samples, saved.port) == (2, loop.samples, path)
        assert session.calibration == saved and loop.saved.startswith(str(tmp_path))
        session.configure_irq(period=500, jitter_mask=0, width=100)
        session.capture(events=30, output=output, timeout=300)
    capture = load_capture(output)
    assert capture.metadata["calibration"] == saved.as_dict()
    irq = capture.events.of(Source.IRQ).stamp
    for source in (Source.EDGE0, Source.MARKER):  # the loop's 2 units are gone
        assert np.array_equal(capture.events.of(source).stamp[: len(irq)], irq[: len(irq)])
    assert main(["analyze", str(output), "--details"]) == 0
    assert f"loop calibration: applied: {saved.describe()}" in capsys.readouterr().out


#: A short loopback for the simulated boards (Amaranth's simulator runs about 1500 cycles a
#: second): 6 IRQ edges, still far apart compared with any loop delay.
SHORT_LOOP = IrqSettings(period=600, jitter_mask=0x3F, width=150)


@pytest.mark.slow
@pytest.mark.parametrize(
    "wires, problem",
    [
        (["--loop-jitter", "2"], "EDGE0: the looped edges' offsets spread over 0..2 stamp units"),
        (["--loop-delay", "0,2"], "EDGE0 and MARKER disagree: offsets EDGE0 0..0, MARKER 2..2"),
    ],
)
def test_an_inconsistent_simulated_loop_fails(wires, problem, monkeypatch):
    """Jitter of 0..2 cycles on EDGE0's wire, or the strobe's wire 2 cycles longer."""
    monkeypatch.setattr(Port, "reply_timeout", SIM_REPLY_TIMEOUT)
    with (
        simulated_board("ulx3s", "--loopback", *wires) as path,
        latscope.open(path, board="ulx3s") as session,
    ):
        loop = check_loopback(session.device, session.identity, edges=6, irq=SHORT_LOOP)
    assert loop.irq_edges >= 6 and not loop.ok and loop.problems[0].startswith(problem), loop


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


QUARTERS = Identity(
    clock_hz=125_000_000,
    stamp_shift=2,
    edge_count=4,
    latency={Source.IRQ: 0, Source.EDGE0: 13, Source.MARKER: 21},
)


def test_a_constant_loop_offset_passes_and_is_the_calibration_value():
    """Any constant offset is the board's round trip (main failed one over its fixed
    allowance, a cycle's worth of stamp units: 2 units of half cycles, or an early -1)."""
    for offset in (2, 0, -1):
        loop = loopback_result(_loopback_events([offset] * 4, marker_offset=offset), IDENTITY)
        assert loop.ok and loop.offsets == {"EDGE0": [offset], "MARKER": [offset]}, loop
        assert (loop.round_trip_units, loop.spread_units, loop.samples) == (offset, 0, 8)
        assert loop.round_trip_ns == offset * 5.0  # 200 M stamps/s
    assert loop.documented_ns == {"EDGE0": 35.0, "MARKER": 55.0}
    assert loop.delays_ns["EDGE0"] == (30.0, 30.0)
    # Within one stamp (where in a sampling period the wire's edge falls): the mean.
    loop = loopback_result(_loopback_events([1, 2, 1, 2], marker_offset=2), QUARTERS)
    assert loop.ok and (loop.round_trip_units, loop.spread_units) == (1.75, 1)
    assert loop.round_trip_ns == 3.5
    line = format_results(loopback=loop)[0]
    assert line == (
        "loopback: ok: 2 IRQ edges, consistent within one stamp; IRQ round trip 1.75 stamp "
        "units (3.50 ns), spread 1, 8 looped edges: the board's calibration value"
    )


def test_a_loop_spread_over_more_than_one_stamp_fails():
    """Quarter-cycle stamps spread over 0..3 units: main passed them (its allowance was 3)."""
    loop = loopback_result(_loopback_events([0, 1, 2, 3], marker_offset=3), QUARTERS)
    assert not loop.ok and loop.round_trip_units is None
    assert loop.problems == [
        "EDGE0: the looped edges' offsets spread over 0..3 stamp units (0.00..6.00 ns) in 4 "
        "edges, more than one stamp: a loose or long jumper, noise on the line, or an "
        "unstable clock phase (docs/boards.md, bring-up step 8)"
    ]
    assert format_results(loopback=loop)[0] == f"loopback: FAILED: 2 IRQ edges; {loop.problems[0]}"


def test_edge0_and_the_marker_port_disagreeing_fails():
    """Each input constant, 3 quarters apart (main passed it)."""
    loop = loopback_result(_loopback_events([0] * 4, marker_offset=3), QUARTERS)
    assert not loop.ok
    assert loop.problems == [
        "EDGE0 and MARKER disagree: offsets EDGE0 0..0, MARKER 3..3 stamp units, the same "
        "edges up to 3 units (6.00 ns) apart, more than one stamp: one input's pin latency "
        "is not the documented one (latscope info)"
    ]
    # One unit apart is within one stamp.
    assert loopback_result(_loopback_events([0] * 4, marker_offset=1), QUARTERS).ok


def test_missing_and_extra_looped_edges_fail():
    missing = loopback_result(_loopback_events([None] * 4), IDENTITY)
    assert not missing.ok and "jumper from IRQ to EDGE0" in missing.problems[0]
    some = loopback_result(_loopback_events([0, None, 0, 0]), IDENTITY)
    assert not some.ok and some.problems[0].startswith("EDGE0: 3 events for 4 IRQ changes")


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
