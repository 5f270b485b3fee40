"""The lab-script API: drive an appliance from Python, in loops over configurations.

::

    import latscope

    with latscope.open("sim:soc") as dev:                # or "/dev/ttyUSB1", "sim:gateware"
        dev.configure_irq(period=5000, jitter_mask=0xff, width=100)
        cap = dev.capture(duration=60, until_samples=("IL-a-1", 1000))
        for row in cap.rows():                          # plain dicts: name, samples, min_ns...
            print(row["name"], row["samples"], row["max_ns"])
        cap.save("run1.lsc")
        cap.report("run1-report")                       # HTML, Markdown, CSV, JSON, figures

A capture is written to a capture file as it runs (a temporary one unless ``output`` is
given), exactly as ``latscope capture`` writes it, and analysed with the same rules as
``latscope report``; live statistics (:mod:`latscope.analysis.live`) decide ``until_samples``
and feed ``on_progress``, in bounded memory. ``docs/api.md`` documents every call.

``sim:soc`` runs the test suite once per :func:`open`: the simulated CPU is let out of reset
when the first capture starts, and that capture also ends when the suite's firmware exits.
Pass ``suite=latscope.SuiteSettings(...)`` to choose the CPU variant and suite build.
"""

import shutil
import tempfile
from collections.abc import Callable, Sequence
from os import PathLike
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TextIO, TypedDict, Unpack

from .capture.conditions import Conditions
from .capture.file import Capture, load_capture
from .capture.session import CaptureRun, CaptureSession, Until
from .events import Events
from .link.device import DEFAULT_IRQ, Device, DeviceError, IrqSettings, TriggerSettings
from .link.identity import Identity
from .ports import DEFAULT_PORT

if TYPE_CHECKING:
    from .analysis.batch import BatchAnalysis
    from .analysis.pairing import SampleTable
    from .analysis.statistics import TableAccumulator
    from .link.calibration import Calibration
    from .link.selftest import SelftestResults
    from .simulated.appliance import SimulatedAppliance
    from .simulated.soc import SuiteSettings

    #: The live statistics of a running capture (:func:`latscope.analysis.live.live_analysis`).
    LiveAnalysis = BatchAnalysis[TableAccumulator]

__all__ = ["open", "Session", "CaptureResult", "IrqSettings", "TriggerSettings", "DeviceError"]


class OpenOptions(TypedDict, total=False):
    """The keyword arguments of :func:`open` (described there)."""

    baud: int | None
    board: str | None
    suite: "SuiteSettings | None"
    log: TextIO | None
    sim_args: Sequence[str]


class IrqFields(TypedDict, total=False):
    """The fields of :class:`IrqSettings`, as :meth:`Session.configure_irq` takes them."""

    period: int
    jitter_mask: int
    width: int
    enable: bool
    one_shot: bool
    active_low: bool


def open(
    port: str = DEFAULT_PORT,
    *,
    baud: int | None = None,
    board: str | None = None,
    suite: "SuiteSettings | None" = None,
    log: TextIO | None = None,
    sim_args: Sequence[str] = (),
) -> "Session":
    """Connects to an appliance and identifies it; returns a :class:`Session` (use it as a
    context manager: leaving the block closes the link and ends a simulation).

    ``port``: a serial port, a pyserial URL, ``sim:soc`` (the full-system simulation running
    the test suite; the default, as for the ``latscope`` command) or ``sim:gateware``.
    ``board``: the board's name (docs/boards.md): its link rate, and the device must
    identify as that board. ``baud``: the link rate (default: the board's; with neither, a
    serial port is tried at every board's rate until the device answers).
    ``suite``: for ``sim:soc``, a :class:`latscope.simulated.soc.SuiteSettings` (CPU variant,
    samples, tests). ``log``: a file for the simulation's build and run output. ``sim_args``:
    more arguments of a simulation (``["--loopback"]``: sim:gateware with the self-test's
    jumper)."""
    return Session(port, baud=baud, board=board, suite=suite, log=log, sim_args=sim_args)


class Session:
    """One connected appliance. Attributes: ``port`` (the name given), ``identity``
    (:class:`latscope.link.identity.Identity`), ``irq`` (the :class:`IrqSettings` last set; at
    open, ``DEFAULT_IRQ``: an IRQ every 5000 cycles plus 0..255 of jitter, 100 cycles wide),
    ``device`` (the low-level :class:`latscope.link.device.Device`), ``simulation`` (the
    running simulation or None). A thin layer over
    :class:`latscope.capture.session.CaptureSession`."""

    def __init__(
        self,
        port: str,
        *,
        baud: int | None = None,
        board: str | None = None,
        suite: "SuiteSettings | None" = None,
        log: TextIO | None = None,
        sim_args: Sequence[str] = (),
    ) -> None:
        self.port = port
        self.session = CaptureSession(
            port, baud=baud, board=board, suite=suite, log=log, sim_args=sim_args
        )
        self.baud = self.session.baud
        try:
            # The device's IRQ generator is what ``irq`` and the captures' metadata say.
            # The command line's defaults: DEFAULT_IRQ (with jitter, as the demo runs).
            self.session.configure_irq(DEFAULT_IRQ)
        except BaseException:
            self.session.close()
            raise

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> "Session":
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def identity(self) -> Identity:
        return self.session.identity

    @property
    def device(self) -> Device:
        return self.session.device

    @property
    def calibration(self) -> "Calibration | None":
        """The board's saved loop calibration this session's captures apply and record
        (:mod:`latscope.link.calibration`; None: none saved for the board, or the saved one
        does not apply: ``session.calibration_problem`` says why)."""
        return self.session.calibration

    @property
    def irq(self) -> IrqSettings:
        return self.session.irq

    @property
    def simulation(self) -> "SimulatedAppliance | None":
        from .simulated.appliance import SimulatedAppliance

        port = self.session.port
        return port if isinstance(port, SimulatedAppliance) else None

    @property
    def clock_hz(self) -> int:
        return self.identity.clock_hz

    def info(self) -> dict[str, Any]:
        """The identity and the device's STATUS as a plain dict (``latscope info --json``)."""
        return self.session.info()

    def configure_irq(
        self, settings: IrqSettings | None = None, **fields: Unpack[IrqFields]
    ) -> IrqSettings:
        """Sets the IRQ generator: an :class:`IrqSettings` or its fields (``period``,
        ``jitter_mask``, ``width`` in cycles of ``identity.irq_clock_hz``, the link clock;
        ``enable``, ``one_shot``, ``active_low``); fields not given keep their defaults. The
        settings go to the device now and into the metadata of later captures."""
        if settings is None:
            settings = IrqSettings(**fields)
        elif fields:
            raise TypeError("give an IrqSettings or fields, not both")
        self.session.configure_irq(settings)
        return settings

    def configure_trigger(
        self, marker: str | TriggerSettings | None, delays: str = "0"
    ) -> TriggerSettings | None:
        """Fires the IRQ ``delays`` after each ``marker`` in later captures, as ``latscope
        capture --irq-trigger MARKER --irq-delay DELAYS`` (:mod:`latscope.capture.trigger`:
        ``"IL_A:THREAD/5"``, ``"0:520ns:8ns"``; the periodic generator, when on, arms each
        firing), or a :class:`TriggerSettings`; None turns it off. Returns the settings as
        used (delays in capture cycles); each sample of a capture then carries its delay."""
        from .capture.trigger import trigger_settings

        if isinstance(marker, str):
            marker = trigger_settings(marker, delays, self.identity, self.irq)
        self.session.configure_trigger(marker)
        return marker

    def selftest(
        self,
        *,
        loopback: bool = False,
        wiring: bool = False,
        count: int = 64,
        wait: float = 30.0,
        save: bool = False,
    ) -> "SelftestResults":
        """The first-plug-in self-test (:mod:`latscope.link.selftest`): the link (``count`` ECHO
        patterns), and with ``loopback`` the jumper test, with ``wiring`` the wiring
        program's markers (waiting up to ``wait`` s for the first; a simulated DUT that
        waits for the capture is started then). Returns ``{"link": LinkResult, ...}``; each
        result has ``ok``. The IRQ generator is set back to :attr:`irq` afterwards.
        ``save`` (with ``loopback``): a consistent loop's round trip becomes the board's
        saved calibration (``selftest --save``), which this session's later captures apply
        (:attr:`calibration`) as every later session's on the board does."""
        from .link.selftest import run_selftest

        if save and not loopback:
            raise ValueError("save: saves the loopback test's calibration; give loopback=True")
        try:
            return run_selftest(
                self.device,
                port=self.port,
                baud=self.baud,
                identity=self.identity,
                loopback=loopback,
                wiring=wiring,
                count=count,
                dut=self.session.port,
                wiring_timeout=wait,
                save=save,
            )
        finally:
            self.session.configure_irq(self.irq)
            if save:
                self.session.load_calibration()

    def capture(
        self,
        *,
        duration: float | None = None,
        until_samples: tuple[str, int] | None = None,
        events: int | None = None,
        output: str | PathLike[str] | None = None,
        info: str = "",
        interval: float | None = 60.0,
        on_progress: "Callable[[LiveAnalysis, int], object] | None" = None,
        timeout: float | None = None,
        loop: str | None = None,
        conditions: "Conditions | None" = None,
    ) -> "CaptureResult":
        """Captures until the first of: ``duration`` seconds, ``events`` events,
        ``until_samples=(table, n)`` samples of a table (e.g. ``("IL-a-1", 1000)``), the
        suite's end on ``sim:soc``, ``timeout`` seconds (then DeviceError). At least one of
        them must be able to end it. Ctrl-C (or SIGTERM, SIGHUP) stops the capture cleanly
        (the file is complete) and then raises KeyboardInterrupt
        (:class:`~latscope.capture.session.Interrupted`, with the signal). Returns a
        :class:`CaptureResult`.

        ``output``: capture file to write (default: a temporary file, see
        :meth:`CaptureResult.save`). ``interval``: seconds per max-over-time interval of
        the live statistics. ``on_progress(analyzer, events)``: called after every batch
        with the live statistics (:func:`latscope.analysis.live.live_analysis`) and the
        event count.
        ``loop``: the IRQ loop's edge channel (``"EDGE0"``, docs/tests.md), recorded in the
        file: its ``LOOP-<channel>`` table is then among :meth:`CaptureResult.tables`.
        ``conditions``: the DUT's load and cache (a :class:`latscope.Conditions`), recorded in
        the file; on ``sim:soc`` they are ``suite``'s (``SuiteSettings(load=..., cache=...)``)."""
        from .analysis.live import live_analysis

        if not (duration or until_samples or events or timeout or self.session.port.dut_ends):
            raise ValueError("capture needs duration, events, until_samples or timeout")
        temporary = output is None
        if output is None:
            handle = tempfile.NamedTemporaryFile(prefix="latscope-", suffix=".lsc", delete=False)
            handle.close()
            output = handle.name
        analyzer = live_analysis(self.identity, interval, irq_shift=self.session.irq_shift)
        progress = None
        if on_progress is not None:

            def progress(batch: Events, run: CaptureRun) -> None:
                on_progress(analyzer, run.events)

        run = self.session.capture(
            output,
            info=info,
            analyzer=analyzer,
            on_batch=progress,
            loop=loop,
            until=Until(duration=duration, events=events, samples=until_samples, timeout=timeout),
            conditions=conditions,
        )
        run.raise_if_interrupted()
        return CaptureResult(output, analyzer, temporary=temporary)


class CaptureResult:
    """A finished capture: ``path`` (its capture file), ``live`` (the live statistics
    gathered while it ran: :mod:`latscope.analysis.live`). Tables and reports are made from
    the file, with the rules of ``latscope report``."""

    def __init__(
        self,
        path: str | PathLike[str],
        live: "LiveAnalysis | None" = None,
        *,
        temporary: bool = False,
    ) -> None:
        self.path = str(path)
        self.live = live
        self.temporary = temporary
        self._capture: Capture | None = None
        self._tables: dict[str, SampleTable] | None = None

    @classmethod
    def load(cls, path: str | PathLike[str]) -> "CaptureResult":
        """A :class:`CaptureResult` of an existing capture file."""
        return cls(path)

    @property
    def capture(self) -> Capture:
        """The capture file read into events (:class:`latscope.capture.file.Capture`)."""
        if self._capture is None:
            self._capture = load_capture(self.path)
        return self._capture

    def tables(self) -> "dict[str, SampleTable]":
        """``{name: SampleTable}``: samples in stamp units (numpy), ``stats()`` in ns (with
        the IRQ loop's table if the capture recorded a loop channel)."""
        if self._tables is None:
            from .analysis.loop import tables_with_loop
            from .analysis.pairing import analyze_loaded

            capture = self.capture
            self._tables = tables_with_loop(
                capture.events,
                capture.stamp_hz,
                analyze_loaded(capture),
                capture.metadata.get("loop"),
            )
        return self._tables

    def results(self) -> dict[str, Any]:
        """The results document (docs/results-schema.md) as plain Python objects."""
        from .report.results import results

        return results(self.capture, self.tables())

    def rows(self) -> list[dict[str, Any]]:
        """One plain dict per table: ``name``, ``samples``, ``min_ns``, ``max_ns``,
        ``avg_ns``, ``std_ns``, percentiles, ``discarded``, ``parameters``."""
        return self.results()["tables"]

    def samples(self) -> dict[str, list[Any]]:
        """Every sample in long format, ``{column: values}``: one row per sample with its
        table, test, conditions, index, start stamp and time, latency (ns), flags and trigger
        delay (:data:`latscope.report.samples.SAMPLE_COLUMNS`; ``latscope export --samples``)."""
        from .report.samples import sample_columns

        return sample_columns(self.capture, self.tables())

    def to_dataframe(self) -> Any:
        """:meth:`samples` as a pandas DataFrame (pandas: ``pip install 'latscope[data]'``;
        without it :class:`latscope.report.samples.ExtraMissing` says so)."""
        from .report.samples import data_package

        pandas = data_package("pandas", "CaptureResult.to_dataframe()")
        return pandas.DataFrame(self.samples())

    def save(self, path: str | PathLike[str]) -> str:
        """Copies the capture file to ``path`` (and uses that copy from now on)."""
        path = str(path)
        if Path(path).resolve() != Path(self.path).resolve():
            shutil.copyfile(self.path, path)
            if self.temporary:
                Path(self.path).unlink(missing_ok=True)
                self.temporary = False
            self.path = path
            if self._capture is not None:
                self._capture.path = path
        return path

    def report(self, directory: str | PathLike[str], *, figures: bool = True) -> dict[str, Path]:
        """Writes the report of ``latscope report`` into ``directory``; returns the paths
        (``html``, ``markdown``, ``csv``, ``json``, ``worst``; PulseView windows of the
        worst samples in ``worst/``)."""
        from .report.directory import write_report

        return write_report(self.capture, directory, figures=figures)[1]

    def __repr__(self) -> str:
        return f"<CaptureResult {self.path}>"
