"""One capture session: the one way every tool opens an appliance and captures from it.

:class:`CaptureSession` opens a port (a board's serial port, or a simulation: see
:func:`latscope.ports.open_port`), identifies the appliance and sets its IRQ generator;
:meth:`CaptureSession.capture` runs the capture loop: configure, start, let a waiting DUT
run, poll until a stop condition (:class:`Until`) holds, stop, drain, close the capture file
with its END chunk. ``latscope capture``, ``latscope stream``, the demo, the suite captures
and the lab-script API all use it.
"""

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, TextIO

from ..events import Events
from ..link.calibration import Calibration, saved_calibration
from ..link.device import (
    DeviceError,
    IrqSettings,
    Port,
    TriggerSettings,
)
from ..link.identity import Identity
from ..link.parser import ParserStats
from ..link.port_lock import PortLock
from ..link.presets import open_device
from .conditions import Conditions
from .metadata import JsonObject

if TYPE_CHECKING:
    from ..analysis.batch import BatchAnalysis
    from ..simulated.soc import SuiteSettings
    from .file import CaptureWriter, PathLike

__all__ = [
    "CaptureSession",
    "CaptureRun",
    "Until",
    "capture_metadata",
    "Interrupted",
    "STOP_SIGNALS",
    "stop_signals_deferred",
]

#: The signals that stop a capture cleanly (stop, drain, END chunk): Ctrl-C, and what CI
#: timeouts, lab runners and a closed terminal send. The command then exits with 128 + the
#: signal's number, as a shell reports a process the signal ended.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """A stop signal ended the work (``signum``: which): raised after a capture that it
    stopped cleanly, or at once by a second one. A KeyboardInterrupt, so code that handles
    Ctrl-C handles all of them."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        return 128 + self.signum


class StopRequest(threading.Event):
    """Set by the first stop signal; ``signum`` says which (None: not set)."""

    signum: int | None = None


@dataclass(frozen=True)
class Until:
    """When a capture ends: the first of ``duration`` seconds, ``events`` events,
    ``samples=(table, n)`` samples of a table in the live statistics, the end of a DUT
    that runs a program of its own (``dut_exit``: the simulated suite), Ctrl-C, or
    ``timeout`` seconds (which then raises :class:`~latscope.link.device.DeviceError`)."""

    duration: float | None = None
    events: int | None = None
    samples: tuple[str, int] | None = None
    timeout: float | None = None
    dut_exit: bool = True


@dataclass
class CaptureRun:
    """What a capture did: events and bytes received, the appliance's STATUS after it,
    the parser's statistics, the metadata written, why it stopped (``duration``,
    ``events``, ``samples``, ``dut_exit``, ``timeout``, ``interrupted``, ``callback``)."""

    output: "PathLike | None"
    metadata: JsonObject
    analyzer: "BatchAnalysis | None" = None
    events: int = 0
    bytes: int = 0
    status: dict[str, int | bool] | None = None
    parser_stats: ParserStats | None = None
    stopped_by: str | None = None
    signum: int | None = None
    started: float = field(default_factory=time.monotonic)
    wall_seconds: float = 0.0

    @property
    def interrupted(self) -> bool:
        return self.stopped_by == "interrupted"

    def raise_if_interrupted(self) -> None:
        """Raises :class:`Interrupted` when a stop signal ended the capture (the file is
        closed: the callers that report the signal run after it)."""
        if self.interrupted:
            raise Interrupted(self.signum or signal.SIGINT)

    def end_stats(self, port: Port) -> JsonObject:
        """The END chunk's ``stats`` (docs/capture-format.md)."""
        stats = {
            "events": self.events,
            "bytes": self.bytes,
            "device_status": self.status,
            "parser": None if self.parser_stats is None else self.parser_stats.as_dict(),
            "wall_seconds": self.wall_seconds,
            **port.dut_end_stats(),
        }
        if self.analyzer is not None:
            stats["tables"] = self.analyzer.summary()
        return stats


def capture_metadata(
    identity: Identity,
    port: str,
    irq: IrqSettings,
    test_info: str = "",
    dut: dict[str, object] | None = None,
    loop: str | None = None,
    conditions: Conditions | None = None,
    trigger: TriggerSettings | None = None,
    calibration: Calibration | None = None,
) -> JsonObject:
    """The metadata a capture file starts with (``docs/capture-format.md``): the device's
    identity, the port, the IRQ settings, the start time, the user's test information,
    what ``dut`` (``Port.dut_metadata``) says about the DUT (``cpu``, ``suite``,
    ``conditions``), the IRQ loop's edge channel (``loop``, if given:
    :mod:`latscope.analysis.loop`), the load and cache conditions (``conditions``, a
    :class:`~latscope.capture.conditions.Conditions`; default: what the DUT says, else no
    load, caches on), the IRQ trigger's settings (``trigger``, if on:
    ``TriggerSettings.as_dict``) and the loop calibration the capture applies
    (``calibration``: :class:`~latscope.link.calibration.Calibration`; null: none).
    Conditions that contradict what a simulated DUT runs: ValueError."""
    dut = dict(dut or {})
    known = Conditions.of_metadata(dut)
    dut.pop("conditions", None)
    if conditions is not None and "suite" in dut and conditions != known:
        raise ValueError(
            f"conditions {conditions.label()}: the simulated DUT runs {known.label()} "
            "(choose them with its suite settings)"
        )
    return {
        "identity": identity.as_dict(),
        "port": str(port),
        "irq": asdict(irq),
        "start_time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "test_info": test_info,
        **dut,
        "conditions": (conditions or known).as_dict(),
        **({"loop": loop} if loop else {}),
        **({"trigger": trigger.as_dict()} if trigger else {}),
        "calibration": calibration.as_dict() if calibration else None,
    }


class CaptureSession:
    """A connected, identified appliance. ``port``: a port name (serial port, pyserial URL,
    ``sim:soc``, ``sim:gateware``) or a :class:`~latscope.link.device.Port` not yet started.
    ``baud``, ``board``: the link rate and the board preset
    (:func:`latscope.link.presets.open_device`: neither on a board's serial port finds the
    board by its rate). ``sim_args``: more arguments of a simulation; ``suite``: the suite
    of ``sim:soc`` (:class:`latscope.simulated.soc.SuiteSettings`); ``truth``: the
    ground-truth log of ``sim:soc`` (recorded in its captures' metadata); ``log``: a file
    for a simulation's output. ``owns_port``: start the port and stop it on :meth:`close`
    (False: the caller started it and keeps it running). ``link``: "spi" for the board's
    SPI link (docs/spi-link.md), "uart" (the default). Attributes: ``port`` (the Port),
    ``device``, ``baud`` (the rate it runs at), ``identity``, ``irq`` (what the IRQ
    generator is set to; the defaults of :class:`IrqSettings` at first), ``calibration``
    (the board's saved loop calibration its captures apply, or None) and
    ``calibration_problem`` (why a saved one does not apply, or "":
    :func:`~latscope.link.calibration.saved_calibration`)."""

    def __init__(
        self,
        port: str | Port,
        *,
        baud: int | None = None,
        board: str | None = None,
        sim_args: Sequence[str] = (),
        suite: "SuiteSettings | None" = None,
        truth: "PathLike | None" = None,
        log: TextIO | None = None,
        owns_port: bool = True,
        link: str = "uart",
    ) -> None:
        if not isinstance(port, Port):
            from ..ports import open_port

            port = open_port(port, sim_args, suite=suite, truth=truth, log=log)
        self.port = port
        self.irq = IrqSettings()
        self.trigger: TriggerSettings | None = None  # the IRQ trigger of the captures (off)
        self._stack = contextlib.ExitStack()
        try:
            if owns_port:
                self._stack.enter_context(port)
            if PortLock.applies(port.path):  # one session per port (PortBusy)
                self._stack.enter_context(PortLock(port.path))
            device, self.baud = open_device(port, baud=baud, board=board, link=link)
            self.device = self._stack.enter_context(device)
            assert device.identity is not None
            self.identity = device.identity
            self.load_calibration()
        except BaseException:
            self._stack.close()
            raise

    def close(self) -> None:
        self._stack.close()

    def __enter__(self) -> "CaptureSession":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def info(self) -> JsonObject:
        """The identity and the device's STATUS as a plain dict (``latscope info --json``)."""
        info: JsonObject = self.identity.as_dict()
        info["resolution_ns"] = self.identity.resolution_ns
        info["status"] = self.device.status()
        return info

    def load_calibration(self) -> None:
        """Takes the board's saved loop calibration (again: after ``selftest --save``)."""
        self.calibration, self.calibration_problem = saved_calibration(self.identity)

    @property
    def irq_shift(self) -> int:
        """Stamp units the captures' loop calibration moves IRQ stamps later (0: none)."""
        return self.calibration.shift if self.calibration else 0

    def configure_irq(self, irq: IrqSettings) -> None:
        """Sets the IRQ generator now; captures record (and set) it from then on."""
        self.device.configure_irq(irq)
        self.irq = irq

    def configure_trigger(self, trigger: TriggerSettings | None) -> None:
        """Sets the IRQ trigger of later captures (None: off): each capture sets it before
        START (which restarts its sweep) and turns it off after STOP."""
        self.device.configure_trigger(trigger or TriggerSettings(enable=False))
        self.trigger = trigger

    def capture(
        self,
        output: "PathLike | None" = None,
        *,
        info: str = "",
        until: Until = Until(),
        analyzer: "BatchAnalysis | None" = None,
        on_batch: Callable[[Events, CaptureRun], object] | None = None,
        loop: str | None = None,
        conditions: Conditions | None = None,
    ) -> CaptureRun:
        """Captures into the capture file ``output`` (None: events are only counted and
        passed on) until ``until`` says so; returns a :class:`CaptureRun`.

        ``analyzer``: live statistics (:func:`latscope.analysis.live.live_analysis`) fed every
        batch and finished when the stream has been read to its end (needed for
        ``until.samples``). ``on_batch(events, run)``: called after every read
        (``events`` may be empty) and for the events drained after STOP; returning True
        ends the capture (a reader that went away). ``loop``: the IRQ loop's edge channel,
        recorded in the metadata so that analyze and report make its table. ``conditions``:
        the DUT's load and cache (:func:`capture_metadata`), recorded in the metadata."""
        if until.samples and analyzer is None:
            raise ValueError("until.samples needs an analyzer")
        if until.dut_exit and self.port.dut_exited:
            raise DeviceError("the simulated suite has already run: open a new session")
        metadata = capture_metadata(
            self.identity,
            self.port.name,
            self.irq,
            info,
            self.port.dut_metadata(),
            loop,
            conditions,
            self.trigger,
            self.calibration,
        )
        run = CaptureRun(output, metadata, analyzer)
        # The stop signals are deferred from before the file's first bytes: a signal that
        # comes once the file grows (its metadata) stops the capture cleanly too, instead of
        # ending the process (SIGTERM, SIGHUP) with the file unclosed.
        with stop_signals_deferred() as interrupted:
            writer = _open_writer(output, metadata)
            try:
                self._run(run, writer, until, on_batch, interrupted)
                if writer is not None:
                    writer.close(run.end_stats(self.port))
            except BaseException:
                if writer is not None:
                    _abandon(writer)
                raise
        if run.stopped_by == "timeout":
            raise DeviceError(
                f"capture did not end within the timeout of {until.timeout:g} s "
                f"({run.events} events)"
            )
        return run

    def _run(
        self,
        run: CaptureRun,
        writer: "CaptureWriter | None",
        until: Until,
        on_batch: Callable[[Events, CaptureRun], object] | None,
        interrupted: StopRequest,
    ) -> None:
        device = self.device
        write_error: list[OSError] = []

        def sink(data: bytes) -> None:
            run.bytes += len(data)
            if writer is not None and not write_error:
                try:
                    writer.write(data)
                except OSError as error:  # e.g. a full disk: stop, keep the device sane
                    write_error.append(error)

        def take(events: Events, stopping: bool = False) -> str | None:
            run.events += len(events)
            if analyzer is not None and len(events):
                analyzer.feed(events)
            if on_batch is not None and on_batch(events, run) and not stopping:
                return "callback"
            return None

        analyzer = run.analyzer
        # The parser a reader of the file uses (pin latencies, the loop calibration): the
        # live figures are the file's. Nothing is in flight: no capture runs.
        from .file import parser_for

        device.parser = parser_for(run.metadata)
        run.parser_stats = device.parser.stats
        device.raw_sink = sink
        try:
            if self.trigger is not None:
                device.configure_trigger(self.trigger)
            device.configure_irq(self.irq)
            device.start()
            self.port.release_dut()
            run.started = time.monotonic()
            while not run.stopped_by:
                run.stopped_by = (
                    take(device.poll())
                    or self._stop_reason(run, until)
                    or ("interrupted" if interrupted.is_set() else None)
                    or ("write error" if write_error else None)
                )
            run.signum = interrupted.signum if run.stopped_by == "interrupted" else None
            device.stop()
            device.configure_irq(IrqSettings(enable=False))
            if self.trigger is not None:
                device.configure_trigger(TriggerSettings(enable=False))
            take(device.drain(), stopping=True)
            take(device.parser.finish(), stopping=True)
            if analyzer is not None:
                analyzer.finish()
            run.status = device.status()
        finally:
            device.raw_sink = None
            run.parser_stats = device.parser.stats
            run.wall_seconds = time.monotonic() - run.started
        if write_error:
            error = write_error[0]
            raise OSError(error.errno, error.strerror, str(run.output))

    def _stop_reason(self, run: CaptureRun, until: Until) -> str | None:
        elapsed = time.monotonic() - run.started
        if until.duration is not None and elapsed >= until.duration:
            return "duration"
        if until.events and run.events >= until.events:
            return "events"
        if until.samples and run.analyzer is not None:  # capture() checked it is there
            table = run.analyzer.tables.get(until.samples[0])
            if table is not None and table.count >= until.samples[1]:
                return "samples"
        if until.dut_exit and self.port.dut_exited:
            failure = self.port.dut_failure()
            if failure:
                raise DeviceError(failure)
            return "dut_exit"
        if until.timeout is not None and elapsed >= until.timeout:
            return "timeout"
        return None


def _open_writer(output: "PathLike | None", metadata: JsonObject) -> "CaptureWriter | None":
    """A :class:`CaptureWriter` for ``output`` (None: no file); errors name the file."""
    if output is None:
        return None
    from .file import CaptureWriter

    try:
        return CaptureWriter(output, metadata)
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(output)) from None


def _abandon(writer: "CaptureWriter") -> None:
    """Closes a capture file without its END chunk (the capture failed); a second write
    error (the disk is still full) must not hide the first."""
    try:
        writer.abandon()
    except OSError:
        pass


@contextlib.contextmanager
def stop_signals_deferred() -> Iterator[StopRequest]:
    """While the block runs, the :data:`STOP_SIGNALS` (SIGINT, SIGTERM, SIGHUP) set the
    :class:`StopRequest` yielded instead of ending the process; a second one raises
    :class:`Interrupted`. Only in the main thread (where Python runs signal handlers), and
    not for a signal that is ignored (SIGINT of a background job, SIGHUP under nohup).

    A stop signal during a capture is a stop condition like the others: it only sets a flag
    that the loop checks between reads, so no read is cut off half way (which lost the last
    segment before STOP), and the appliance is stopped and drained and the file closed
    cleanly. (SIGTERM and SIGHUP used to end the process at once, without END: the tail was
    lost.) A second signal aborts at once. The previous handlers are restored at the end.
    """
    request = StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield request
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        if request.is_set():
            raise Interrupted(signum)
        request.signum = signum
        request.set()

    previous = {}
    for signum in STOP_SIGNALS:
        if signal.getsignal(signum) not in (signal.SIG_IGN, None):
            previous[signum] = signal.signal(signum, handler)
    try:
        yield request
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
