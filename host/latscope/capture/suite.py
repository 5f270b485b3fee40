"""The test suite run once on the simulated SoC and captured through the appliance exactly
as from a board (:func:`capture_suite`): what the demo, the ground-truth tests and the
benchmarks run."""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..events import Events
from ..link.device import DEFAULT_IRQ, IrqSettings
from ..link.identity import Identity
from ..link.parser import ParserStats
from ..simulated.soc import SocBuild, SocSimulation
from .file import PathLike
from .metadata import JsonObject
from .session import CaptureRun, CaptureSession, Until
from .trigger import trigger_settings

if TYPE_CHECKING:
    from ..analysis.batch import BatchAnalysis

__all__ = ["DEMO_IRQ", "SuiteCapture", "capture_suite"]

#: The appliance's IRQ generator for the suite: latscope's default (``DEFAULT_IRQ``).
DEMO_IRQ = DEFAULT_IRQ


@dataclass
class SuiteCapture:
    """One run of the suite captured through the appliance. The events are in the capture
    file ``path`` (None: the run was only counted, e.g. for a benchmark)."""

    path: PathLike | None
    events: int  # events captured
    identity: Identity
    metadata: JsonObject
    status: dict[str, int | bool]  # the appliance's STATUS after the capture
    parser_stats: ParserStats
    exit_code: int  # the firmware's
    exit_cycle: int
    sim: dict[str, str]  # the harness's SIM line
    uart: dict[str, int]  # the harness's UART line
    wall_seconds: float
    console: str = field(repr=False, default="")
    live: "BatchAnalysis | None" = None  # the live statistics, when capture_suite made them


def capture_suite(
    build: SocBuild,
    irq: IrqSettings = DEMO_IRQ,
    *,
    output: PathLike | None = None,
    truth: PathLike | None = None,
    console: PathLike | None = None,
    on_batch: Callable[[Events, CaptureRun], object] | None = None,
    live: "Callable[..., BatchAnalysis] | None" = None,
    timeout: float = 600.0,
    info: str = "",
    phase: int = 0,
    trigger: tuple[str, str] | None = None,
) -> SuiteCapture:
    """Runs the suite of ``build`` on the simulated SoC and captures it through the appliance,
    exactly as from a board (a :class:`~latscope.capture.session.CaptureSession`): identify,
    configure the IRQ generator, start (the harness lets the CPU run ``phase`` +
    :data:`~latscope.simulated.soc.RELEASE_AFTER_START` cycles later), read until the firmware
    exits, stop, drain. The same build, IRQ settings and phase give the same capture, to the
    cycle (relative to START).

    ``output``: the capture file to write (metadata: identity, CPU variant, suite and IRQ
    settings). ``truth``: the harness's ground-truth log. ``trigger``: the IRQ trigger's
    marker and delays (``("IL_A:THREAD", "0:100:1")``, as ``latscope capture --irq-trigger
    --irq-delay``: :func:`latscope.capture.trigger.trigger_settings`), armed by ``irq``.
    ``live``: keep live statistics, made by ``live(identity, irq_shift=...)`` (the loop
    calibration's, ``CaptureSession.irq_shift``; e.g.
    :func:`latscope.analysis.live.live_analysis`), in ``run.analyzer`` of every batch and
    ``live`` of the result. ``on_batch(events, run)``: as for
    :meth:`~latscope.capture.session.CaptureSession.capture` (progress).
    Raises DeviceError when the firmware does not exit within ``timeout`` seconds or the
    harness ends first, :class:`~latscope.capture.session.Interrupted` after a stop signal
    ended the capture cleanly."""
    info = info or (
        f"latscope test suite on the simulated SoC ({build.settings.cpu}, "
        f"{build.settings.marker} markers)"
    )
    sim = SocSimulation(build, truth=truth, console=console, phase=phase)
    with CaptureSession(sim) as session:
        session.configure_irq(irq)
        if trigger is not None:
            session.configure_trigger(trigger_settings(*trigger, session.identity, irq))
        analyzer = live(session.identity, irq_shift=session.irq_shift) if live else None
        run = session.capture(
            output, info=info, until=Until(timeout=timeout), analyzer=analyzer, on_batch=on_batch
        )
        run.raise_if_interrupted()  # the file is closed; no suite result to give
        sim.stop()
        assert run.status is not None and run.parser_stats is not None  # every capture sets them
        return SuiteCapture(
            output,
            run.events,
            session.identity,
            run.metadata,
            run.status,
            run.parser_stats,
            sim.exit_code,
            sim.exit_cycle,
            sim.summary,
            sim.uart,
            run.wall_seconds,
            sim.console_text(),
            analyzer,
        )
