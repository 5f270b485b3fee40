"""First-plug-in self-test (``latscope selftest``, ``Session.selftest``; docs/boards.md has the
bring-up checklist built on it): is the link sound (:func:`check_link`), do the appliance's
own stamps agree with the pin latencies it documents (:func:`check_loopback`), are the
marker wires right (:func:`check_wiring`), and are the clocks of an iCE40 input gearbox in the
phase its stamps assume (:func:`check_clock_phase`)?
"""

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypedDict

import numpy as np

from latscope_defs.protocol import ClockCheck, Source

from ..events import Events
from .calibration import Calibration, irq_shift, save_calibration
from .device import Device, DeviceError, IrqSettings, Port
from .identity import Identity

__all__ = [
    "LinkResult",
    "ClockPhaseResult",
    "LoopbackResult",
    "WiringResult",
    "echo_patterns",
    "check_link",
    "link_hint",
    "check_loopback",
    "loopback_result",
    "save_loopback",
    "check_clock_phase",
    "clock_phase_result",
    "check_wiring",
    "capture_wiring",
    "wiring_pattern",
    "run_selftest",
    "format_results",
]

PATTERN_BITS = 64


def echo_patterns(count: int, seed: int = 1) -> list[int]:
    """All zeros, all ones, alternating bits, walking ones and zeros, then pseudo-random
    patterns: ``count`` in all."""
    full = (1 << PATTERN_BITS) - 1
    fixed = [0, full, 0x5555555555555555, 0xAAAAAAAAAAAAAAAA]
    fixed += [1 << bit for bit in range(PATTERN_BITS)]
    fixed += [full ^ (1 << bit) for bit in range(PATTERN_BITS)]
    rng = random.Random(seed)
    while len(fixed) < count:
        fixed.append(rng.getrandbits(PATTERN_BITS))
    return fixed[:count]


@dataclass
class LinkResult:
    """``sent`` ECHO commands; ``wrong``: replies with another pattern; ``missing``: no
    reply. ``exchanges_per_s`` and ``bytes_per_s`` (both directions together) over the
    exchanges that got a reply."""

    sent: int = 0
    wrong: int = 0
    missing: int = 0
    seconds: float = 0.0
    bytes_written: int = 0
    bytes_read: int = 0
    bytes_skipped: int = 0
    error: str = ""  # why the first missing reply was missing
    hint: str = ""

    @property
    def ok(self) -> bool:
        return self.sent > 0 and self.wrong == 0 and self.missing == 0

    @property
    def exchanges_per_s(self) -> float:
        return (self.sent - self.missing) / self.seconds if self.seconds else 0.0

    @property
    def bytes_per_s(self) -> float:
        return (self.bytes_written + self.bytes_read) / self.seconds if self.seconds else 0.0


def link_hint(result: LinkResult, *, baud: int, port: str) -> str:
    """What to check, from what came back."""
    if result.ok:
        return ""
    if "does not know command" in result.error:
        return (
            "the device answers but does not know ECHO: its bitstream is older than this "
            "host; rebuild and program it (docs/boards.md)"
        )
    if result.bytes_read == 0:
        return (
            f"nothing came back from {port}: check the USB cable, that {port} is the "
            f"board's UART (the second serial port of an FT2232H board) and that the "
            f"board is programmed (docs/boards.md)"
        )
    if result.missing == result.sent or result.bytes_skipped:
        return (
            f"bytes arrive but do not decode: most likely a baud rate mismatch (the host "
            f"uses {baud} baud; the board's rate is in docs/boards.md and `make "
            f"bitstream` prints it), or another program on {port}"
        )
    return (
        f"{result.wrong + result.missing} of {result.sent} patterns were lost or "
        f"corrupted: a marginal cable or USB-serial adapter at {baud} baud; try another "
        f"cable or USB port"
    )


def check_link(
    device: Device, *, count: int = 256, baud: int, port: str, seed: int = 1
) -> LinkResult:
    """ECHO exchanges with ``device`` (a :class:`latscope.link.device.Device`); a
    :class:`LinkResult`. The first missing reply ends the test (the rest would only wait).

    Fixed and pseudo-random 64-bit patterns; counts patterns that came back wrong or not at
    all, measures the sustained exchange rate, and says what is most likely wrong when
    nothing or garbage comes back (:func:`link_hint`)."""
    result = LinkResult()
    read0, written0 = device.bytes_read, device.bytes_written
    skipped0 = device.parser.stats.bytes_skipped
    started = time.monotonic()
    for pattern in echo_patterns(count, seed):
        result.sent += 1
        try:
            if device.echo(pattern) != pattern:
                result.wrong += 1
        except DeviceError as error:
            result.missing += 1
            result.error = str(error)
            break
    result.seconds = time.monotonic() - started
    result.bytes_read = device.bytes_read - read0
    result.bytes_written = device.bytes_written - written0
    result.bytes_skipped = device.parser.stats.bytes_skipped - skipped0
    result.hint = link_hint(result, baud=baud, port=port)
    return result


@dataclass
class LoopbackResult:
    """IRQ edges seen as IRQ, EDGE0 and MARKER events. ``offsets``: per jumpered source, the
    offsets its corrected stamps show from the IRQ changes they copy (stamp units, each
    value once); ``delays_ns``: the measured pin-to-stamp delay differences (uncorrected),
    min..max; ``documented_ns``: what the IDENTIFY reply's latencies say they are.

    A consistent loop (``ok``) is the calibration value: ``round_trip_units`` (and
    ``round_trip_ns``), the mean offset of every looped edge, EDGE0's and MARKER's
    together; ``spread_units`` their largest minus smallest offset (0 or 1); ``samples``
    how many (:mod:`latscope.link.calibration`). ``saved``: the file the calibration was
    saved in (``selftest --save``), "" if not."""

    irq_edges: int = 0
    # Each by jumpered source's name (EDGE0, MARKER).
    matched: dict[str, int] = field(default_factory=dict)
    offsets: dict[str, list[int]] = field(default_factory=dict)
    delays_ns: dict[str, tuple[float, float]] = field(default_factory=dict)
    documented_ns: dict[str, float] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    round_trip_units: float | None = None
    round_trip_ns: float | None = None
    spread_units: int | None = None
    samples: int = 0
    saved: str = ""

    @property
    def ok(self) -> bool:
        return self.irq_edges > 0 and not self.problems

    def calibration(self, identity: Identity, *, port: str) -> Calibration:
        """This loop's :class:`~latscope.link.calibration.Calibration` (a consistent one's),
        measured now on ``port``."""
        assert self.ok and self.round_trip_units is not None and self.spread_units is not None
        return Calibration(
            board=identity.board,
            stamp_hz=identity.stamp_hz,
            round_trip_units=self.round_trip_units,
            spread_units=self.spread_units,
            samples=self.samples,
            saved_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            port=port,
            irq_edges=self.irq_edges,
        )


@dataclass
class ClockPhaseResult:
    """The clock-phase probe of an iCE40 input gearbox, from STATUS (``clock_check``,
    :class:`latscope_defs.protocol.ClockCheck`): ``seen``, the samples of a capture cycle
    (0..3) at which the probe saw the capture clock's toggle first; ``irregular``: a cycle
    showed no change or several; ``probed``: the gateware has a probe (the HX8K's; the
    ULX3S needs none, the iCEBreaker has no room: docs/boards.md, bring-up checklist step 8;
    without one the result is ok, "not probed")."""

    probed: bool = False
    seen: list[int] = field(default_factory=list)
    irregular: bool = False
    quarter_ns: float = 0.0  # one stamp unit, the error a wrong phase puts in every stamp
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


#: The sample at which the probe sees the capture clock's toggle first when the clocks are
#: as the gearbox assumes (``ClockCheck.EXPECTED``).
EXPECTED_SAMPLE = int(ClockCheck.EXPECTED).bit_length() - 1


def clock_phase_result(clock_check: int, identity: Identity) -> ClockPhaseResult:
    """The verdict on a STATUS ``clock_check`` value (see :class:`ClockPhaseResult`)."""
    check = ClockCheck(clock_check & 0x1F)
    seen = [sample for sample in range(4) if check & ClockCheck(1 << sample)]
    result = ClockPhaseResult(
        probed=bool(check),
        seen=seen,
        irregular=bool(check & ClockCheck.IRREGULAR),
        quarter_ns=identity.resolution_ns,
    )
    if not result.probed:
        return result
    if seen != [EXPECTED_SAMPLE]:
        result.problems.append(
            f"the capture clock's toggle was first sampled at quarter "
            f"{', '.join(map(str, seen)) or 'none'} of its cycle, the gearbox assumes "
            f"{EXPECTED_SAMPLE}: the capture clock (the PLL's output B) does not rise on the "
            f"edge clock's (output A's) rising edges, so every strobe and edge stamp is a "
            f"quarter cycle ({result.quarter_ns:.2f} ns) off; the stamps of this board "
            f"cannot be trusted (docs/boards.md, bring-up checklist)"
        )
    if result.irregular:
        result.problems.append(
            "the probe's samples were irregular (a cycle with no change or several): the "
            "edge clock and the capture clock are not locked in one phase (PLL not locked, "
            "or skew between its two global clocks)"
        )
    return result


def check_clock_phase(device: Device, identity: Identity) -> ClockPhaseResult:
    """The clock-phase verdict from the device's STATUS (:func:`clock_phase_result`)."""
    return clock_phase_result(int(device.status()["clock_check"]), identity)


#: The IRQ generator's settings for the loopback test: edges far apart compared to any pin
#: latency, so that each jumpered event pairs with exactly one IRQ edge.
LOOPBACK_IRQ = IrqSettings(period=2000, jitter_mask=0xFF, width=500)


#: Seconds :func:`check_loopback` waits, before it stops, for the copies of the IRQ changes
#: it has seen (a real board's come within nanoseconds; a simulated one's within a few cycles).
LOOP_SETTLE_S = 2.0


def check_loopback(
    device: Device,
    identity: Identity,
    *,
    edges: int = 16,
    timeout: float = 20.0,
    irq: IrqSettings = LOOPBACK_IRQ,
) -> LoopbackResult:
    """Captures ``edges`` asserting IRQ edges with the IRQ output jumpered to EDGE0 and the
    strobe; a :class:`LoopbackResult`. Leaves the IRQ generator set to ``irq``. It waits
    for the edges however slowly they come (a simulated appliance on a busy machine), and
    gives up only when no IRQ edge came for ``timeout`` seconds.

    Each edge is captured three times, as IRQ, EDGE0 and MARKER events, with the IDENTIFY
    reply's pin latencies alone (no saved calibration: this measures it);
    :func:`loopback_result` judges them."""
    device.parser = identity.parser()  # nothing in flight: no capture runs
    device.configure_irq(irq)
    looped = (Source.EDGE0, Source.MARKER)
    device.start(sources=[Source.IRQ, *looped])
    collected: list[Events] = []
    deadline = time.monotonic() + timeout
    asserted = 0
    counts = dict.fromkeys((Source.IRQ, *looped), 0)
    while asserted < edges + 1 and time.monotonic() < deadline:
        events = device.poll()
        if len(events):
            collected.append(events)
            for source in counts:
                counts[source] += len(events.of(source))
            irq_events = events.of(Source.IRQ)
            new = int(np.count_nonzero(irq_events.value == 1))
            if new:
                asserted += new
                deadline = time.monotonic() + timeout
    # Stopped right after an IRQ change, the capture could miss that change's copies, which
    # come a loop delay and a few cycles of pipeline later: a simulated appliance runs a few
    # cycles in a host's round trip (a CI run saw 19 MARKER copies of 20 IRQ changes). So the
    # stop waits until every change has its copies, or LOOP_SETTLE_S (a missing jumper).
    settle = time.monotonic() + min(timeout, LOOP_SETTLE_S)
    while any(counts[s] < counts[Source.IRQ] for s in looped) and time.monotonic() < settle:
        events = device.poll()
        collected.append(events)
        for source in counts:
            counts[source] += len(events.of(source))
    device.stop()
    collected.append(device.drain())
    return loopback_result(Events.concatenate(collected), identity)


def _copies(seen: np.ndarray, stamps: np.ndarray) -> np.ndarray:
    """For each IRQ change's stamp, the index of the nearest of ``seen`` (a jumpered
    source's stamps): the changes are far apart (:data:`LOOPBACK_IRQ`) compared with any
    loop delay, so the nearest event is the change's copy, however early or late the
    uncalibrated stamps put it."""
    index = np.searchsorted(seen, stamps)
    after = np.minimum(index, len(seen) - 1)
    before = np.maximum(index - 1, 0)
    return np.where(np.abs(seen[after] - stamps) <= np.abs(stamps - seen[before]), after, before)


def loopback_result(events: Events, identity: Identity) -> LoopbackResult:
    """The loopback verdict on captured events (see :func:`check_loopback`).

    The loop passes when it is consistent: each jumpered input has one event per IRQ change,
    every looped edge shows the same offset from its IRQ change within one stamp unit
    (where in a sampling period the wire's edge falls), EDGE0's and MARKER's together.
    Their offset itself is no error: it is the board's round trip beyond the pipeline
    latencies (the IRQ output's clock-to-pad delay, the jumper, the input pad), the
    calibration value (``round_trip_units``). Each problem is one line naming the figures."""
    result = LoopbackResult()
    irq = events.of(Source.IRQ)
    stamps = irq.stamp.astype(np.int64)
    result.irq_edges = int(np.count_nonzero(irq.value == 1))
    if not len(irq):
        result.problems.append("the IRQ generator's events did not arrive")
        return result
    unit_ns = identity.resolution_ns
    looped: dict[str, np.ndarray] = {}  # per source: each IRQ change's offset
    for source in (Source.EDGE0, Source.MARKER):
        seen = events.of(source).stamp.astype(np.int64)
        name = source.name
        documented = identity.latency[source] - identity.latency[Source.IRQ]
        result.documented_ns[name] = documented * unit_ns
        if not len(seen):
            result.problems.append(f"no {name} events: is the jumper from IRQ to {name} in place?")
            continue
        copies = _copies(seen, stamps)
        offsets = seen[copies] - stamps
        result.matched[name] = len(np.unique(copies))
        result.offsets[name] = sorted(set(offsets.tolist()))
        low, high = int(offsets.min()), int(offsets.max())
        result.delays_ns[name] = ((documented + low) * unit_ns, (documented + high) * unit_ns)
        if len(seen) != len(irq) or result.matched[name] != len(irq):
            result.problems.append(
                f"{name}: {len(seen)} events for {len(irq)} IRQ changes, "
                f"{result.matched[name]} of them copies of one each: a loose jumper (edges "
                f"missing or added) or one on another pin"
            )
        elif high - low > 1:
            result.problems.append(
                f"{name}: the looped edges' offsets spread over {low}..{high} stamp units "
                f"({low * unit_ns:.2f}..{high * unit_ns:.2f} ns) in {len(offsets)} edges, "
                f"more than one stamp: a loose or long jumper, noise on the line, or an "
                f"unstable clock phase (docs/boards.md, bring-up step 8)"
            )
        else:
            looped[name] = offsets
    if result.problems:
        return result
    every = np.concatenate(list(looped.values()))
    if int(every.max() - every.min()) > 1:
        apart = int(np.abs(looped["EDGE0"] - looped["MARKER"]).max())
        ranges = ", ".join(
            f"{name} {int(offsets.min())}..{int(offsets.max())}" for name, offsets in looped.items()
        )
        result.problems.append(
            f"EDGE0 and MARKER disagree: offsets {ranges} stamp units, the same edges up to "
            f"{apart} units ({apart * unit_ns:.2f} ns) apart, more than one stamp: one "
            f"input's pin latency is not the documented one (latscope info)"
        )
        return result
    result.round_trip_units = float(every.mean())
    result.round_trip_ns = result.round_trip_units * unit_ns
    result.spread_units = int(every.max() - every.min())
    result.samples = len(every)
    return result


def save_loopback(result: LoopbackResult, identity: Identity, *, port: str) -> None:
    """Stores a consistent loop's calibration as its board's (``selftest --save``;
    :func:`latscope.link.calibration.save_calibration`) and notes the file in ``result``;
    an inconsistent loop saves nothing."""
    if result.ok:
        result.saved = str(save_calibration(result.calibration(identity, port=port)))


#: The wiring program's markers: walking ones, then walking zeros, over 16 bits. The same
#: walk as firmware/tools/wiring_walk.h's ls_wiring_value(); the tests compare the two.
def wiring_pattern(width: int = 16) -> list[int]:
    full = (1 << width) - 1
    return [1 << bit for bit in range(width)] + [full ^ (1 << bit) for bit in range(width)]


@dataclass
class WiringResult:
    expected: int = 0
    received: int = 0
    stuck_high: list[int] = field(default_factory=list)
    stuck_low: list[int] = field(default_factory=list)
    swapped: list[tuple[int, int]] = field(default_factory=list)  # (driven bit, bit it shows up on)
    shorted: list[tuple[int, int]] = field(default_factory=list)  # (bit, bit)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (
            self.problems or self.stuck_high or self.stuck_low or self.swapped or self.shorted
        )


def check_wiring(values: Sequence[int], width: int = 16) -> WiringResult:
    """Compares the MARKER values of one run of the wiring program with
    :func:`wiring_pattern`; a :class:`WiringResult` naming bad bits.

    The wiring program (``firmware/tools/``) walks ones then zeros over the 16 marker bits,
    one strobe toggle each; what it finds: stuck, swapped or shorted bits, and a strobe that
    loses or adds toggles."""
    expected = wiring_pattern(width)
    result = WiringResult(expected=len(expected), received=len(values))
    if len(values) != len(expected):
        result.problems.append(
            f"{len(values)} markers for the program's {len(expected)} strobe toggles: "
            + (
                "the strobe is not connected"
                if not values
                else "the strobe wire is loose or picks up noise"
            )
        )
        return result
    ones, zeros = values[:width], values[width:]
    for bit in range(width):
        mask = 1 << bit
        if all(value & mask for value in values):
            result.stuck_high.append(bit)
        elif not any(value & mask for value in values):
            result.stuck_low.append(bit)
    stuck = set(result.stuck_high) | set(result.stuck_low)
    for bit in sorted(set(range(width)) - stuck):
        # Where driving `bit` alone high, then alone low, shows up.
        high = {b for b in range(width) if ones[bit] >> b & 1} - stuck
        low = {b for b in range(width) if not zeros[bit] >> b & 1} - stuck
        others = (high | low) - {bit}
        if high == low == {bit}:
            continue
        if len(high) == 1 and high == low:
            result.swapped.append((bit, next(iter(high))))
        elif others:
            # Two wires touching: one shows the other's level (wired-OR or wired-AND).
            result.shorted += [
                pair
                for pair in ((min(bit, other), max(bit, other)) for other in others)
                if pair not in result.shorted
            ]
        else:
            result.problems.append(f"D{bit} does not follow the program (open wire?)")
    return result


def capture_wiring(
    device: Device,
    *,
    width: int = 16,
    timeout: float = 30.0,
    quiet: float = 2.0,
    dut: Port | None = None,
    on_start: Callable[[], object] | None = None,
) -> WiringResult:
    """Captures the wiring program's markers: waits up to ``timeout`` s for the first, then
    until none came for ``quiet`` s (or all arrived, or the DUT's program ended); a
    :class:`WiringResult`. Once the capture runs, ``on_start()`` is called (the CLI's
    prompt to start the program) and ``dut`` (the :class:`~latscope.link.device.Port`) releases
    a DUT that waits for it (``sim:soc``; a board's DUT is started by its user)."""
    device.start(sources=[Source.MARKER])
    if on_start is not None:
        on_start()
    if dut is not None:
        dut.release_dut()
    values: list[int] = []
    started = last = time.monotonic()
    expected = len(wiring_pattern(width))
    while time.monotonic() - (last if values else started) < (quiet if values else timeout):
        exited = dut is not None and dut.dut_exited  # before the poll: it gets the last
        markers = device.poll().of(Source.MARKER)
        if len(markers):
            values += markers.value.tolist()
            last = time.monotonic()
        if len(values) >= expected or exited:
            break
    device.stop()
    values += device.drain().of(Source.MARKER).value.tolist()
    return check_wiring([int(value) for value in values], width)


#: The IRQ generator during the wiring test: off. A DUT's interrupt must not run into the
#: walk, and on sim:soc the loopback jumper, on the strobe until the DUT starts, must add no
#: strobe toggles between the capture's start and the DUT's.
WIRING_IRQ = IrqSettings(enable=False)


class SelftestResults(TypedDict, total=False):
    """The parts :func:`run_selftest` ran, by name (the arguments of :func:`format_results`)."""

    link: LinkResult
    clock_phase: ClockPhaseResult
    loopback: LoopbackResult
    wiring: WiringResult


def run_selftest(
    device: Device,
    *,
    port: str,
    baud: int,
    identity: Identity | None = None,
    link: bool = True,
    loopback: bool = False,
    wiring: bool = False,
    count: int = 256,
    dut: Port | None = None,
    on_wiring_start: Callable[[], object] | None = None,
    wiring_timeout: float = 30.0,
    save: bool = False,
) -> SelftestResults:
    """The self-test's parts in order (link first: without it nothing else can work; then
    the clock-phase probe, one STATUS, always); returns ``{"link": LinkResult,
    "clock_phase": ClockPhaseResult, "loopback": ..., "wiring": ...}`` with the parts run.
    ``save``: a consistent loopback's calibration is saved as the board's
    (:func:`save_loopback`; later captures on it apply it).
    ``dut``, ``on_wiring_start``, ``wiring_timeout``: :func:`capture_wiring`'s ``dut``,
    ``on_start`` and ``timeout``; the wiring test turns the IRQ generator off
    (:data:`WIRING_IRQ`)."""
    results: SelftestResults = {}
    if link:
        results["link"] = check_link(device, count=count, baud=baud, port=port)
        if not results["link"].ok:
            return results
    identity = identity or device.identify()
    results["clock_phase"] = check_clock_phase(device, identity)
    if loopback:
        results["loopback"] = check_loopback(device, identity)
        if save:
            save_loopback(results["loopback"], identity, port=port)
    if wiring:
        device.configure_irq(WIRING_IRQ)
        results["wiring"] = capture_wiring(
            device,
            width=identity.marker_width,
            dut=dut,
            on_start=on_wiring_start,
            timeout=wiring_timeout,
        )
    return results


def format_results(
    link: LinkResult | None = None,
    clock_phase: ClockPhaseResult | None = None,
    loopback: LoopbackResult | None = None,
    wiring: WiringResult | None = None,
) -> list[str]:
    """Lines for the terminal (arguments: the results of :func:`run_selftest`)."""
    lines: list[str] = []
    if link is not None:
        verdict = "ok" if link.ok else "FAILED"
        lines.append(
            f"link: {verdict}: {link.sent} echo patterns, {link.wrong} wrong, "
            f"{link.missing} missing; {link.exchanges_per_s:.0f} exchanges/s, "
            f"{link.bytes_per_s / 1000:.1f} kB/s both ways"
        )
        if link.hint:
            lines.append(f"  hint: {link.hint}")
    if clock_phase is not None:
        if not clock_phase.probed:
            lines.append(
                "clock phase: not probed (a clock-phase probe is in the HX8K's bitstream and "
                "the iCEBreaker's bring-up bitstream)"
            )
        else:
            verdict = "ok" if clock_phase.ok else "FAILED"
            lines.append(
                f"clock phase: {verdict}: capture clock toggle first sampled at quarter "
                f"{clock_phase.seen} (expected [{EXPECTED_SAMPLE}]: the capture clock rises "
                f"on the edge clock's rising edges)"
            )
        lines += [f"  problem: {problem}" for problem in clock_phase.problems]
    if loopback is not None:
        lines += _loopback_lines(loopback)
    if wiring is not None:
        verdict = "ok" if wiring.ok else "FAILED"
        lines.append(f"wiring: {verdict}: {wiring.received} of {wiring.expected} markers")
        for label, bits in (("stuck high", wiring.stuck_high), ("stuck low", wiring.stuck_low)):
            if bits:
                lines.append(f"  {label}: " + ", ".join(f"D{bit}" for bit in bits))
        for driven, seen in wiring.swapped:
            lines.append(f"  D{driven} arrives on D{seen} (swapped wires)")
        for a, b in wiring.shorted:
            lines.append(f"  D{a} and D{b} are shorted")
        lines += [f"  problem: {problem}" for problem in wiring.problems]
    return lines


def _loopback_lines(loopback: LoopbackResult) -> list[str]:
    if loopback.ok:
        assert loopback.round_trip_ns is not None
        verdict = (
            f"ok: {loopback.irq_edges} IRQ edges, consistent within one stamp; IRQ round "
            f"trip {loopback.round_trip_units:.2f} stamp units ({loopback.round_trip_ns:.2f} "
            f"ns), spread {loopback.spread_units}, {loopback.samples} looped edges: the "
            f"board's calibration value"
        )
    else:
        verdict = f"FAILED: {loopback.irq_edges} IRQ edges; {loopback.problems[0]}"
    lines = [f"loopback: {verdict}"]
    for name, documented in loopback.documented_ns.items():
        low, high = loopback.delays_ns.get(name, (float("nan"),) * 2)
        lines.append(
            f"  IRQ -> {name}: measured {low:.2f}..{high:.2f} ns (pin-to-stamp "
            f"difference), documented {documented:.2f} ns; corrected stamps "
            f"differ by {loopback.offsets.get(name)} units"
        )
    lines += [f"  problem: {problem}" for problem in loopback.problems[1:]]
    if loopback.saved:
        lines.append(
            f"  calibration saved in {loopback.saved}: later captures on this board move "
            f"IRQ stamps {irq_shift(loopback.round_trip_units or 0.0):+d} units"
        )
    return lines
