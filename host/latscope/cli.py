"""The ``latscope`` command line.

Each command is a ``cmd_*`` function with the function that declares its options right
above it (registered with :func:`command`). Every value is checked before a device is
opened or a file written: a bad one ends in one line on stderr and exit status 2. Output
files are never overwritten without ``--force``.
"""

import argparse
import json
import os
import signal
import stat
import sys
from collections.abc import Callable
from typing import Any

from latscope_defs.protocol import Source

from . import progress as progress_lines
from .capture.session import Interrupted
from .capture.trigger import check_delays, parse_marker
from .condition_options import conditions_of, conditions_options
from .fail_if_options import fail_if_options, judged
from .hints import latscope_command
from .link.device import DEFAULT_IRQ, DeviceError, IrqSettings
from .ports import DEFAULT_PORT
from .progress import Progress, note, step
from .simulated.appliance import SIM_PORTS
from .terminal import fold_command, output_width, wrap
from .values import duration, miswire, read_by, text, whole
from .values import seconds as seconds_type
from .version import __version__

__all__ = ["main", "Progress", "parse_duration"]


class UsageError(Exception):
    """A command line that makes no sense (exit code 2, one line)."""


# --- values ---------------------------------------------------------------------------------


#: The checked number kinds of the options (latscope.values): one per kind.
parse_duration = duration()
interval = duration("interval")
count = whole("count", 1)
natural = whole("number", 0)
cycle = whole("cycle", 0)
irq_cycles = whole("cycle count", None)  # the IRQ generator's range: IrqSettings says it
baud = whole("baud rate", 1, 1_000_000_000)
seconds = seconds_type()


def board_name(text):
    """``--board ulx3s``: a board of the board definitions (latscope.link.presets)."""
    from .link.presets import board_preset

    try:
        return board_preset(text).name
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def loop_channel(text):
    """``--loop EDGE2``: the IRQ loop's edge channel (latscope.analysis.loop)."""
    from .analysis.loop import parse_loop

    try:
        return parse_loop(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def loop_option(p, recorded):
    p.add_argument(
        "--loop",
        type=loop_channel,
        metavar="EDGEn",
        help="IRQ loop method: the edge channel wired to the GPIO the DUT's "
        "interrupt handler toggles; adds the LOOP-EDGEn table (IRQ edge -> "
        "that pin's next change; docs/tests.md)"
        + (
            ", recorded in the capture's metadata"
            if recorded
            else " (default: the one the capture recorded)"
        ),
    )


def irq_settings(args):
    """The IRQ generator settings of the command line, checked against what the
    generator's 32-bit registers can do (width 1 .. period - 1)."""
    try:
        return IrqSettings(
            period=args.irq_period,
            jitter_mask=args.irq_jitter,
            width=args.irq_width,
            enable=not args.no_irq,
        )
    except ValueError as error:
        raise UsageError(
            f"{error} (--irq-period {args.irq_period}, --irq-width "
            f"{args.irq_width}, --irq-jitter {args.irq_jitter:#x})"
        ) from None


#: Output files this command created (empty) before its work: removed again if it fails
#: before writing them, so a retry does not find them "existing".
_created = []


def new_output(path, force):
    """Creates the output file ``path`` now, with O_EXCL unless ``--force``: of two commands
    given the same file, the second fails here, before any build or capture (an exists
    check alone let both go on and interleave their files). A FIFO, a device or stdout
    (``None``) is written to as it is; a directory is refused."""
    if path is None:
        return
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        raise UsageError(f"{path}: is a directory")
    if mode is not None and not stat.S_ISREG(mode):
        return
    flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if force else os.O_EXCL)
    try:
        os.close(os.open(path, flags, 0o666))
    except FileExistsError:
        raise UsageError(f"{path}: exists; give --force to overwrite it") from None
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(path)) from None
    _created.append(path)


def _remove_unwritten():
    """After a failure: removes the outputs :func:`new_output` created that are still empty."""
    for path in _created:
        try:
            if os.stat(path).st_size == 0:
                os.unlink(path)
        except OSError:
            pass
    _created.clear()


def new_files_in(directory, names, force):
    """Refuses to write ``names`` into ``directory`` where one exists, unless ``--force``,
    and a ``directory`` that exists as something else (``-o /dev/null``)."""
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise UsageError(f"{directory}: not a directory (-o names the directory to write)")
    if force:
        return
    for name in names:
        path = os.path.join(directory, name)
        if os.path.lexists(path):
            raise UsageError(f"{path}: exists; give --force to overwrite it")


# --- commands ---------------------------------------------------------------------------------

#: (name, options(parser), add_parser keywords, cmd_* function: the exit status or None).
COMMANDS: list[
    tuple[
        str,
        Callable[[argparse.ArgumentParser], None],
        dict[str, Any],
        Callable[[argparse.Namespace], int | None],
    ]
] = []


def command(name, options, **parser_arguments):
    """Registers a ``cmd_*`` function as the sub-command ``name``; ``options(parser)``
    declares its options."""

    def register(run):
        COMMANDS.append((name, options, parser_arguments, run))
        return run

    return register


def device_options(p):
    p.add_argument(
        "--port",
        default=DEFAULT_PORT,
        help=f"serial port or pyserial URL of the appliance, or a simulation: "
        f"{', '.join(SIM_PORTS)} (default: {DEFAULT_PORT}, the simulated SoC running the "
        f"suite; built the first time)",
    )
    p.add_argument(
        "--board",
        type=board_name,
        help="the board (its name in docs/boards.md): sets the link rate, and the device "
        "must identify as that board",
    )
    p.add_argument(
        "--baud",
        type=baud,
        help="UART baud rate (default: the --board's; with neither, a serial port is "
        "tried at every board's rate until the device answers)",
    )


def link_options(p):
    """The stream's link, for the commands that capture or identify over it."""
    p.add_argument(
        "--link",
        choices=("uart", "spi"),
        default="uart",
        help="the stream's link: uart, or spi, the iCE40 boards' faster one through the "
        "FT2232H's channel A (docs/spi-link.md; commands stay on the UART, which the "
        "stream falls back to if the SPI link does not answer)",
    )


def irq_options(p):
    """The IRQ generator's options; their defaults are ``DEFAULT_IRQ``, the demo's too."""
    p.add_argument(
        "--irq-period",
        type=irq_cycles,
        default=DEFAULT_IRQ.period,
        help="IRQ period in link clock cycles (the capture clock on a one-clock "
        f"board; `latscope info` shows both), 2 .. 2**32 - 1 (default {DEFAULT_IRQ.period})",
    )
    p.add_argument(
        "--irq-jitter",
        type=irq_cycles,
        default=DEFAULT_IRQ.jitter_mask,
        help="jitter mask: extra 0..mask cycles per period, so that the IRQ meets every "
        f"phase of the DUT's code, 32 bits (default {DEFAULT_IRQ.jitter_mask:#x}; 0: strictly "
        "periodic)",
    )
    p.add_argument(
        "--irq-width",
        type=irq_cycles,
        default=DEFAULT_IRQ.width,
        help=f"IRQ pulse width in link clock cycles, 1 .. period - 1 (default {DEFAULT_IRQ.width})",
    )
    p.add_argument("--no-irq", action="store_true", help="leave the IRQ generator off")


def force_option(p):
    p.add_argument("--force", action="store_true", help="overwrite existing output files")


def _info_options(p):
    device_options(p)
    link_options(p)
    p.add_argument("--json", action="store_true", help="print JSON")


@command("info", _info_options, help="identify a device")
def cmd_info(args):
    from .capture.session import CaptureSession

    with CaptureSession(args.port, baud=args.baud, board=args.board, link=args.link) as session:
        identity = session.identity
        info = session.info()
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"board          {identity.board}")
    print(f"protocol       version {identity.version}")
    print(
        f"capture clock  {identity.clock_hz / 1e6:g} MHz, resolution "
        f"{identity.resolution_ns:.2f} ns"
    )
    if identity.link_clock_hz:
        print(f"link clock     {identity.link_clock_hz / 1e6:g} MHz")
    print(f"marker port    {identity.marker_width} data bits + strobe")
    # The simulated SoC's bus window (32-bit words) or a board's memory bus port (8 or 16).
    print(f"bus markers    {f'yes, {identity.bus_width}-bit' if identity.bus_width else 'no'}")
    print(f"edge channels  {identity.edge_count}")
    print(f"FIFO           {identity.fifo_depth} entries")
    print(
        "pin latency    "
        + ", ".join(
            f"{source.name.lower()} {identity.latency[source]}" for source in identity.sources
        )
    )
    return 0


def _selftest_options(p):
    device_options(p)
    p.add_argument(
        "--loopback",
        action="store_true",
        help="also the loopback test: a jumper from IRQ to EDGE0 and to the strobe "
        "(sim:gateware and sim:soc simulate it)",
    )
    p.add_argument(
        "--save",
        action="store_true",
        help="with --loopback: save a consistent loop's round trip as this board's "
        "calibration, which later captures on it apply and record (docs/boards.md, "
        '"Loop calibration"; the file: $XDG_CONFIG_HOME/latscope/calibration.json)',
    )
    p.add_argument(
        "--wiring",
        action="store_true",
        help="also the wiring test: run the DUT's wiring program "
        "(firmware/tools/) when asked (sim:soc runs it)",
    )
    p.add_argument(
        "--wait",
        type=seconds,
        default=30.0,
        help="wiring: seconds to wait for the program's first marker (default 30)",
    )
    p.add_argument(
        "--miswire",
        type=miswire,
        action="append",
        default=[],
        metavar="SPEC",
        help="sim:soc only: a fault in the simulated wires from the DUT's marker "
        "pins to the appliance (repeatable): swap:A,B, stuck-low:A, "
        "stuck-high:A, short-and:A,B, short-or:A,B; pins 0..16, D0..D15, "
        "STROBE (sim/README.md)",
    )
    p.add_argument("--count", type=count, default=256, help="echo patterns (default 256)")
    p.add_argument("--json", action="store_true", help="print JSON")


@command("selftest", _selftest_options, help="check the link, the pin latencies and the wiring")
def cmd_selftest(args):
    from dataclasses import asdict

    from .link.presets import open_device
    from .link.selftest import format_results, run_selftest
    from .ports import is_simulated, open_selftest_port

    if args.miswire and args.port != "sim:soc":
        raise UsageError("--miswire: only for --port sim:soc (a simulated wiring fault)")
    if args.save and not args.loopback:
        raise UsageError("--save: saves the loopback test's calibration; give --loopback")

    def prompt():
        if not is_simulated(args.port):
            note(
                f"wiring: capturing; start the DUT's wiring program within {args.wait:g} s "
                f"(firmware/tools/, docs/boards.md)"
            )

    with open_selftest_port(args.port, loopback=args.loopback, miswire=args.miswire) as port:
        device, rate = open_device(port, baud=args.baud, board=args.board, identify=False)
        with device, step(f"self-test on {args.port}"):
            results = run_selftest(
                device,
                port=args.port,
                baud=rate,
                loopback=args.loopback,
                wiring=args.wiring,
                count=args.count,
                dut=port,
                on_wiring_start=prompt,
                wiring_timeout=args.wait,
                save=args.save,
            )
    if args.json:
        print(
            json.dumps(
                {name: {**asdict(result), "ok": result.ok} for name, result in results.items()},
                indent=2,
            )
        )
    else:
        print("\n".join(format_results(**results)))
    if args.save and "loopback" in results and not results["loopback"].ok:
        note("--save: nothing saved: the loopback failed (the saved calibration is unchanged)")
    return 0 if all(result.ok for result in results.values()) else 1


def _capture_options(p):
    device_options(p)
    link_options(p)
    p.add_argument("-o", "--output", required=True, help="capture file to write")
    force_option(p)
    p.add_argument(
        "--duration",
        type=parse_duration,
        default=None,
        help="how long to capture: seconds, or with a unit: 15m, 8h, 1d "
        "(default: 10 s; on sim:soc until the suite has run)",
    )
    p.add_argument(
        "--interval",
        type=interval,
        default=60.0,
        help="max-over-time interval of the live statistics (default 60 s)",
    )
    p.add_argument("--events", type=count, default=None, help="stop after this many events")
    irq_options(p)
    p.add_argument(
        "--irq-trigger",
        type=read_by("IRQ trigger", parse_marker),
        metavar="TEST:POINT[/ARG[/MASK]]",
        help="fire the IRQ a delay after this marker (names of docs/markers.md or numbers; "
        "ARG: its argument, MASK: the argument bits compared); the periodic generator, "
        "unless --no-irq, arms one firing per period and shows no edges of its own",
    )
    p.add_argument(
        "--irq-delay",
        type=read_by("IRQ delay", check_delays),
        metavar="START:STOP:STEP",
        help="with --irq-trigger: the delays swept, range(START, STOP, STEP) over and over, "
        "each in ns, us or capture cycles (a plain number), rounded to the capture clock "
        "(default 0)",
    )
    p.add_argument("--info", type=text, default="", help="free-form test information to store")
    conditions_options(p)
    loop_option(p, recorded=True)
    p.add_argument(
        "--truth",
        metavar="FILE",
        help="sim:soc: write the simulation's ground-truth log there and record it with "
        "the firmware in the capture, so that analyze and report say where each interrupt "
        "met the code (function, source line, coverage, masked regions)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the capture's summary (events, losses, live tables) as JSON",
    )


@command("capture", _capture_options, help="capture events into a file")
def cmd_capture(args):
    from .analysis.live import live_analysis
    from .capture.session import CaptureSession, Until
    from .report.results import rounded_ns
    from .report.tail_estimates import estimates, summary_text
    from .simulated.soc import SuiteSettings

    irq = irq_settings(args)
    if args.truth and args.port != "sim:soc":
        raise UsageError(f"--truth: {args.port} has no ground truth (sim:soc has)")
    _check_trigger(args)
    new_output(args.output, args.force)
    new_output(args.truth, args.force)
    conditions = conditions_of(args)
    # sim:soc builds the suite under them; a board's DUT was built so (the user says).
    suite = None
    if args.port == "sim:soc":
        suite = SuiteSettings(**conditions.as_dict())
    elif args.port in SIM_PORTS and conditions.load != "none":
        raise UsageError(f"--load: {args.port} runs no suite (sim:soc or a board does)")
    with CaptureSession(
        args.port, baud=args.baud, board=args.board, suite=suite, truth=args.truth, link=args.link
    ) as session:
        if not (args.duration or args.events or session.port.dut_ends):
            args.duration = 10.0  # a simulated suite ends by itself
        session.configure_irq(irq)
        if args.irq_trigger:
            session.configure_trigger(_trigger(args, session.identity, irq))
        if args.loop and session.identity.edge_count <= int(args.loop[4:]):
            raise UsageError(
                f"--loop {args.loop}: the appliance has {session.identity.edge_count} edge channels"
            )
        if session.calibration is not None:
            note(f"loop calibration: {session.calibration.describe()}")
        elif session.calibration_problem:
            note(f"no loop calibration: {session.calibration_problem}")
        # Live statistics in bounded memory (the capture file keeps every event).
        analyzer = live_analysis(session.identity, args.interval, irq_shift=session.irq_shift)
        progress = Progress()

        def show(events, run):
            progress.update(run.events, run.bytes, run.parser_stats, analyzer=analyzer)

        with progress:  # redrawn also while no data comes (the drain at the end)
            run = session.capture(
                args.output,
                info=args.info,
                analyzer=analyzer,
                on_batch=show,
                loop=args.loop,
                until=Until(duration=args.duration, events=args.events),
                conditions=conditions,
            )
        progress.update(run.events, run.bytes, run.parser_stats, final=True, analyzer=analyzer)
    if run.interrupted:
        note(
            f"latscope: interrupted by {signal.Signals(run.signum).name}: the capture was "
            f"stopped and drained"
        )
    note(f"wrote {args.output}: {run.events} events{_few_events(args.port, run)}")
    with step("the tables' tail estimates"):
        tables = final_accumulators(analyzer, args.output)
        tails = estimates(tables)
    if tails:
        note(summary_text(tails))
    if args.json:
        summary = {
            "output": args.output,
            "events": run.events,
            "bytes": run.bytes,
            "device_status": run.status,
            "parser": run.parser_stats.as_dict(),
            "tables": {name: table.stats() for name, table in tables.items()},
            "tail": tails,
        }
        print(json.dumps(rounded_ns(summary), indent=2))
    return 128 + run.signum if run.interrupted else 0


def _check_trigger(args):
    """``--irq-delay`` only with ``--irq-trigger`` (each option's own text its argparse type
    checked), before a port is opened; the rounding to the capture clock waits for the
    appliance (:func:`_trigger`)."""
    if args.irq_trigger is None:
        if args.irq_delay is not None:
            raise UsageError(f"--irq-delay {args.irq_delay}: needs --irq-trigger")
        return
    args.irq_delay = "0" if args.irq_delay is None else args.irq_delay


def _trigger_error(args, error):
    return UsageError(f"{error} (--irq-trigger {args.irq_trigger}, --irq-delay {args.irq_delay})")


def _trigger(args, identity, irq):
    """The trigger of ``--irq-trigger`` and ``--irq-delay`` on this appliance, printed as
    used (the delays rounded to its capture clock)."""
    from .capture.trigger import describe_trigger, trigger_settings

    if not identity.has_trigger:
        raise UsageError(
            f"--irq-trigger: the appliance has no trigger (protocol {identity.version}; "
            f"the iCEBreaker's builds other than the shipped one have none, docs/boards.md)"
        )
    try:
        settings = trigger_settings(args.irq_trigger, args.irq_delay, identity, irq)
    except ValueError as error:
        raise _trigger_error(args, error) from None
    print(describe_trigger(settings, identity), file=sys.stderr)
    return settings


def _few_events(port, run):
    """Why a simulated capture has so few events, where it does: ``sim:gateware`` is the
    appliance alone, in Amaranth's simulator, with a scripted DUT."""
    if port != "sim:gateware":
        return ""
    return (
        f" in {run.wall_seconds:.1f} s (sim:gateware: the appliance gateware alone in Amaranth's "
        f"simulator, thousands of times slower than a board, with a scripted DUT that runs "
        f"IL_A only; --port sim:soc runs the whole suite on a simulated DUT)"
    )


def final_tables(analyzer, path):
    """``{name: stats}`` of a finished capture: its live statistics, or those of its file
    when a LOSS record reached back over samples the live statistics had counted (they may
    then include pairs it discards; latscope.analysis.live)."""
    return {name: table.stats() for name, table in final_accumulators(analyzer, path).items()}


def final_accumulators(analyzer, path):
    """``{name: TableAccumulator}`` behind :func:`final_tables` (and the tail estimates)."""
    if not analyzer.needs_second_pass:
        return analyzer.ordered_tables()
    from .analysis.summary import analyze_capture

    return analyze_capture(path)[1]


def _dump_options(p):
    p.add_argument("capture")
    output = p.add_mutually_exclusive_group()
    output.add_argument("--csv", action="store_true", help="CSV instead of text")
    output.add_argument("--json", action="store_true", help="JSON Lines: one object per event")
    p.add_argument(
        "--source",
        metavar="SOURCE,...",
        help="the sources to show, comma-separated: " + ", ".join(_source_names()).lower(),
    )
    p.add_argument("--limit", type=natural, default=0, help="show at most this many events")


def _source_names():
    """The event sources a capture holds, in protocol order (``--source``'s values)."""
    return [source.name for source in Source if source not in (Source.REPLY, Source.SYNC)]


def sources_named(text):
    """The sources of ``--source marker,irq``; an unknown name is a usage error."""
    known = _source_names()
    names = [name.strip().upper() for name in text.split(",")]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise UsageError(
            f"--source {text}: unknown source {', '.join(unknown)} (known: {', '.join(known)})"
        )
    return {int(Source[name]) for name in names}


@command(
    "dump",
    _dump_options,
    help="print the events of a capture file",
    description="Every event of a capture: its stamp (capture clock ticks; a quarter tick on "
    "the boards, whose stamps are sub-cycle), its time, its source, its raw value and what it "
    "is, named as analyze names it (a marker's test, point and argument; IRQ rise and fall).",
)
def cmd_dump(args):
    """The events of a capture, read batch by batch (memory does not grow with the file)."""
    import csv

    from .analysis.worst import describe_event
    from .capture.batches import CaptureBatches

    sources = sources_named(args.source) if args.source else None
    batches = CaptureBatches(args.capture)
    stamp_hz = batches.stamp_hz
    writer = csv.writer(sys.stdout) if args.csv else None
    if writer:
        writer.writerow(["stamp", "time_ns", "source", "value", "event"])
    shown = read = 0
    for events in batches:
        read += len(events)
        if sources is not None:
            events = events.of(*sources)
        if args.limit:
            events = events[: args.limit - shown]
        for stamp, source, value in events:
            time_ns = stamp * 1e9 / stamp_hz
            name = Source(source).name
            event = describe_event(source, value)
            if writer:
                writer.writerow([stamp, f"{time_ns:.1f}", name, value, event])
            elif args.json:
                print(
                    json.dumps(
                        {
                            "stamp": stamp,
                            "time_ns": round(time_ns, 1),
                            "source": name,
                            "value": value,
                            "event": event,
                        }
                    )
                )
            else:
                print(f"{stamp:14d} {time_ns:16.1f} ns  {name:6s} {value:#8x}  {event}")
        shown += len(events)
        if args.limit and shown >= args.limit:
            break
    if batches.parser_stats is None:  # stopped at the limit: the file's rest unread
        note(f"{batches.path}: {shown} events shown (--limit), reading stopped after {read} events")
    else:
        note(batches.summary(read))
    return 0


def _analyze_options(p):
    from .report.formats import FORMATS, choices_help

    p.add_argument("capture", help="capture file (.lsc)")
    p.add_argument(
        "--format",
        choices=[fmt.name for fmt in FORMATS],
        default="text",
        help=f"{choices_help(FORMATS)} (default: text)",
    )
    p.add_argument("--json", action="store_true", help="the same as --format json")
    p.add_argument(
        "--details",
        action="store_true",
        help="text: everything, not the summary (headline, short table, losses): every "
        "statistic with its confidence interval, the flagged and worst samples, the tail "
        "estimates",
    )
    worst_option(p, "(default: text 0, with --details and the other formats {default})")
    loop_option(p, recorded=False)
    fail_if_options(p)
    force_option(p)


def worst_option(p, default_text="(default {default})"):
    from .analysis.statistics import WORST_KEPT
    from .analysis.worst import WORST_SHOWN

    p.add_argument(
        "--worst",
        type=whole("worst sample count", 0, WORST_KEPT),
        default=None,
        metavar="N",
        help=f"the N worst samples of every table with the events around them "
        f"{default_text.format(default=WORST_SHOWN)}, at most {WORST_KEPT}; 0: none, and no "
        f"second pass over the capture",
    )


def worst_count(args, shown):
    """``--worst``, else the default: ``WORST_SHOWN`` where worst samples are ``shown``."""
    from .analysis.worst import WORST_SHOWN

    return args.worst if args.worst is not None else (WORST_SHOWN if shown else 0)


@command(
    "analyze",
    _analyze_options,
    help="the sample tables of a capture",
    description="Pair the events of a capture into the samples of every test "
    "(docs/tests.md) and print the headline (worst and p99 of IL, IDL, TSL) and per table: "
    "number of samples, min, average, max, p99, p99.9 (ns), and what the capture lost; "
    "--details adds standard deviation, p50, confidence intervals, losses per table, the "
    "flagged and worst samples and the tail estimates.",
)
def cmd_analyze(args):
    """The sample tables of a capture (docs/tests.md) in any results format on stdout."""
    from .report.formats import named
    from .report.results import load_tables, results
    from .report.worst_samples import worst_of
    from .terminal import output_width

    name = "json" if args.json else args.format
    text = name == "text"
    details = args.details or args.worst is not None or not text
    worst = worst_count(args, details)
    new_output(args.junit, args.force)
    capture, tables = load_tables(args.capture, args.loop)
    # The text summary shows no tail estimate: not made, scipy.stats not imported.
    document = results(
        capture, tables, worst_of(args.capture, capture, tables, worst), tails=details
    )
    if text:
        sys.stdout.write(
            named(name).text(document, details=details, width=output_width(sys.stdout))
        )
    else:
        sys.stdout.write(named(name).text(document))
    return _judged(args, document)


def _judged(args, document):
    """:func:`latscope.fail_if_options.judged`, a glob that matches no table a usage error."""
    try:
        return judged(args, document)
    except ValueError as error:
        raise UsageError(str(error)) from None


def _report_options(p):
    from .report.formats import report_formats

    files = ", ".join(f"{fmt.report_file} ({fmt.help})" for fmt in report_formats())
    p.description = (
        f"Analyse a capture into the suite's sample tables and write {files} and "
        f"figures/ (PNG, SVG) into a directory; print the tables."
    )
    p.add_argument("capture", help="capture file (.lsc)")
    p.add_argument("-o", "--output", required=True, help="directory to write")
    force_option(p)
    p.add_argument("--no-figures", action="store_true", help="tables only (faster)")
    p.add_argument(
        "--x",
        choices=("index", "time"),
        default="index",
        help="time-series x axis: sample index or capture time",
    )
    p.add_argument(
        "--max-interval",
        type=interval,
        default=None,
        metavar="SECONDS",
        help="also plot the maximum per interval of capture time (e.g. 1m; "
        "default: per minute for runs of 10 minutes or more)",
    )
    p.add_argument("--json", action="store_true", help="print the results JSON")
    worst_option(p)
    p.add_argument(
        "--no-exports",
        action="store_true",
        help="no PulseView window (worst/<table>.<rank>.sr) of each worst sample "
        "(each reads the capture twice)",
    )
    loop_option(p, recorded=False)
    fail_if_options(p)


@command("report", _report_options, help="tables, figures and a self-contained HTML report")
def cmd_report(args):
    from .capture.file import NOT_CLOSED
    from .report.directory import report_files, write_report
    from .report.formats.text import summary
    from .terminal import output_width

    new_files_in(args.output, report_files(), args.force)
    new_output(args.junit, args.force)
    document, paths = write_report(
        args.capture,
        args.output,
        figures=not args.no_figures,
        x=args.x,
        interval_s=args.max_interval,
        loop=args.loop,
        worst=worst_count(args, True),
        exports=not args.no_exports,
    )
    if args.json:
        print(json.dumps(document, indent=2))
    else:
        sys.stdout.write(summary(document, output_width(sys.stdout)))
    if not document["integrity"]["closed"]:
        note(f"latscope report: {args.capture}: {NOT_CLOSED}")
    first, *others = paths.values()
    note(
        f"wrote {first} (and {', '.join(path.name for path in others)}"
        f"{', figures/' if not args.no_figures else ''}) in {args.output}"
    )
    return _judged(args, document)


def _compare_options(p):
    from .report.compare import directory_files
    from .report.formats import choices_help, comparison_formats

    p.add_argument("captures", nargs="+", metavar="CAPTURE", help="capture files (.lsc)")
    p.add_argument(
        "--label",
        action="append",
        help="name of a capture in the output, in order (repeat; default: file name)",
    )
    formats = comparison_formats()
    p.add_argument(
        "--format",
        choices=[fmt.name for fmt in formats],
        default="text",
        help=f"{choices_help(formats, 'comparison_help')} (default: text)",
    )
    p.add_argument(
        "-o",
        "--output",
        help="directory for the overlaid distribution figures and " + ", ".join(directory_files()),
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="overwrite existing output files; compare captures measured under a different "
        "load, cache, IRQ settings, CPU or firmware (with a warning per difference)",
    )
    p.add_argument("--json", action="store_true", help="the same as --format json")


@command(
    "compare",
    _compare_options,
    help="compare the tables of several captures",
    description="Side-by-side tables of several captures with the difference of every "
    "statistic against the first (the baseline), each percentile's judged by the two "
    "confidence intervals (higher / lower: disjoint; within: overlapping), and every "
    "run's settings; with -o, overlaid distributions and comparison.html beside them.",
)
def cmd_compare(args):
    from .report import compare
    from .report.formats import named
    from .terminal import output_width

    if len(args.captures) < 2:
        raise UsageError(
            f"compare needs two captures or more, got {len(args.captures)} "
            f"(one capture's tables: latscope analyze {args.captures[0]})"
        )
    if args.label and len(args.label) != len(args.captures):
        raise UsageError(
            f"{len(args.label)} --label for {len(args.captures)} captures: give one per capture, "
            f"in order, or none (the file names)"
        )
    runs = compare.load_runs(args.captures, args.label)
    unlike = compare.differences(runs)
    if unlike and not args.force:
        raise UsageError(
            "the captures were not measured alike (give --force to compare them anyway): "
            + "; ".join(unlike)
        )
    for line in unlike:
        note(f"latscope compare: warning: {line}")
    document = compare.comparison(runs)
    if args.output:
        new_files_in(args.output, compare.directory_files(), args.force)
        figures = compare.write_directory(runs, document, args.output)
        note(
            f"wrote {len(figures.png)} overlaid distributions and "
            f"{', '.join(compare.directory_files())} in {args.output}"
        )
    name = "json" if args.json else args.format
    if name == "text":
        sys.stdout.write(named(name).comparison_text(document, width=output_width(sys.stdout)))
    else:
        sys.stdout.write(named(name).comparison_text(document))
    return 0


def _export_options(p):
    from .export.formats import EXPORT_FORMATS

    p.add_argument("capture", help="capture file (.lsc)")
    for writer in EXPORT_FORMATS:
        p.add_argument(f"--{writer.name}", metavar=f"OUT{writer.suffix}", help=writer.help)
        for switch, what in writer.switches.items():
            p.add_argument(f"--no-{switch}", action="store_true", help=f"no {what}")
    force_option(p)
    p.add_argument(
        "--start",
        type=cycle,
        help="first stamp to export (stamp units: cycles, or half or quarter cycles on "
        "DDR and gearbox boards; default: the first event's, less a few)",
    )
    p.add_argument("--stop", type=cycle, help="export stamps before this one only")
    p.add_argument(
        "--samples",
        metavar="FILE.csv|FILE.parquet",
        help="every sample, one row each (table, test, load, cache, index, start stamp, "
        "time, latency in ns, flags, trigger delay): CSV or Parquet by the suffix (Parquet: "
        "pip install 'latscope[data]')",
    )
    p.add_argument("--json", action="store_true", help="print what was written as JSON")


def export_writers(args):
    """The export writers the command line asks for, in the order of ``EXPORT_FORMATS``."""
    from .export.formats import EXPORT_FORMATS

    return [
        writer(
            getattr(args, writer.name),
            **{switch: not getattr(args, f"no_{switch}") for switch in writer.switches},
        )
        for writer in EXPORT_FORMATS
        if getattr(args, writer.name)
    ]


@command(
    "export",
    _export_options,
    help="export a capture for sigrok / PulseView, or its samples (CSV, Parquet)",
    description="Write a capture as logic signals at the capture clock's sample rate: a "
    "sigrok session file (with OUT.pvs beside it, so PulseView opens it with "
    "the latscope decoders attached) and/or a VCD. See README, sigrok and "
    "PulseView. --samples writes every sample instead or besides, one row each.",
)
def cmd_export(args):
    from .export.files import export_capture
    from .export.formats import EXPORT_FORMATS
    from .export.writer import ExportError

    writers = export_writers(args)
    if not writers and not args.samples:
        raise UsageError(
            "nothing to write: give "
            + " and/or ".join(f"--{writer.name} OUT{writer.suffix}" for writer in EXPORT_FORMATS)
            + " and/or --samples FILE.csv|FILE.parquet"
        )
    if args.samples:
        _export_samples(args)
        if not writers:
            return 0
    if args.start is not None and args.stop is not None and args.stop <= args.start:
        raise UsageError(f"--stop {args.stop} is not after --start {args.start}: nothing to export")
    for writer in writers:
        for path in writer.files:
            new_output(path, args.force)
    try:  # read from the file in batches: bounded memory
        with step(f"exporting {args.capture}"):
            info = export_capture(args.capture, writers, start=args.start, stop=args.stop)
    except ExportError as error:
        raise UsageError(str(error)) from None
    note(f"wrote {', '.join(info.files)}: {info.summary()}")
    note("decode with (as it runs from here):")
    note(fold_command(info.decode_command(writers[0]), output_width(sys.stderr)))
    if args.json:
        print(json.dumps(info.as_dict(), indent=2))
    return 0


def _export_samples(args):
    """``export --samples``: every sample of the capture in long format, CSV or Parquet."""
    from .api import CaptureResult
    from .report.samples import SAMPLE_FORMATS, ExtraMissing, data_package, write_samples

    if not args.samples.lower().endswith(SAMPLE_FORMATS):
        raise UsageError(f"--samples {args.samples}: give a .csv or .parquet file")
    if args.samples.lower().endswith(".parquet"):
        try:
            data_package("pyarrow", "--samples FILE.parquet")
        except ExtraMissing as error:
            raise UsageError(str(error)) from None
    new_output(args.samples, args.force)
    with step(f"the samples of {args.capture}"):
        columns = CaptureResult.load(args.capture).samples()
        write_samples(columns, args.samples)
    tables = len(dict.fromkeys(columns["table"]))
    note(f"wrote {args.samples}: {len(columns['table'])} samples of {tables} tables")


def _stream_options(p):
    device_options(p)
    p.add_argument("-o", "--output", help="file or FIFO to write (default: stdout)")
    p.add_argument(
        "--pulseview",
        action="store_true",
        help="pad every flush to PulseView's 4 MiB input blocks (live display)",
    )
    p.add_argument(
        "--pvs",
        metavar="SETUP.pvs",
        help="write a PulseView setup with the decoders attached (pulseview -s)",
    )
    p.add_argument(
        "--view",
        action="store_true",
        help="start PulseView on the stream (padded, decoders attached, the view "
        "following the data; your PulseView settings stay as they are)",
    )
    p.add_argument(
        "--follow",
        choices=["fit", "scroll", "off"],
        default="fit",
        help="with --view: zoom to fit the whole stream as it grows (default), "
        "scroll with its newest data, or neither",
    )
    p.add_argument("--capture", metavar="FILE.lsc", help="also write a capture file")
    force_option(p)
    p.add_argument("--flush", type=seconds, default=0.5, help="seconds between flushes")
    p.add_argument(
        "--duration",
        type=parse_duration,
        default=None,
        help="stop after this long (default: until the simulated firmware exits, "
        "the reader quits or Ctrl-C)",
    )
    p.add_argument("--events", type=count, default=None, help="stop after this many events")
    irq_options(p)


@command(
    "stream",
    _stream_options,
    help="live VCD stream for sigrok-cli / PulseView",
    description="Capture and write the events as they come as a VCD stream (the "
    "signals of `latscope export`), e.g. `latscope stream --port sim:soc | "
    "sigrok-cli -i - -I vcd ...` or, with --pulseview, into `pulseview -i "
    "/dev/stdin -I vcd -s live.pvs`. See README, sigrok and PulseView.",
)
def cmd_stream(args):
    from .export.live import PULSEVIEW_BLOCK, stream_capture

    irq = irq_settings(args)
    if args.view:
        return _stream_to_pulseview(args, irq)
    to_stdout = args.output in (None, "-")
    for path in (None if to_stdout else args.output, args.capture, args.pvs):
        new_output(path, args.force)
    out = sys.stdout.buffer if to_stdout else _open_output(args.output)
    try:
        stream_capture(
            args.port,
            out,
            baudrate=args.baud,
            board=args.board,
            irq=irq,
            block=PULSEVIEW_BLOCK if args.pulseview else 0,
            duration=args.duration,
            max_events=args.events,
            flush_interval=args.flush,
            capture=args.capture,
            pvs=args.pvs,
        )
    finally:
        if not to_stdout:
            out.close()
    return 0


def _stream_to_pulseview(args, irq):
    """stream --view: PulseView reads the padded stream from a pipe, with the setup (in
    --pvs or a temporary directory) and a private settings copy that follows the data."""
    import tempfile
    from pathlib import Path

    from .export.live import PULSEVIEW_BLOCK, stream_capture
    from .export.pulseview import start_pulseview

    if args.output not in (None, "-"):
        raise UsageError("stream: --view and --output exclude each other")
    for path in (args.capture, args.pvs):
        new_output(path, args.force)
    with tempfile.TemporaryDirectory(prefix="latscope-pulseview-") as home:
        pvs = args.pvs or Path(home) / "live.pvs"
        viewer = start_pulseview(pvs, home, follow=None if args.follow == "off" else args.follow)
        try:
            stream_capture(
                args.port,
                viewer.stdin,
                baudrate=args.baud,
                board=args.board,
                irq=irq,
                block=PULSEVIEW_BLOCK,
                duration=args.duration,
                max_events=args.events,
                flush_interval=args.flush,
                capture=args.capture,
                pvs=pvs,
            )
        except BaseException:
            viewer.terminate()  # no stream (device error, second Ctrl-C): no window
            raise
        finally:
            try:
                viewer.stdin.close()
            except BrokenPipeError:
                pass
        note("latscope stream: the stream is complete; close PulseView to finish")
        viewer.wait()
    return 0


def _open_output(path):
    try:
        return open(path, "wb")
    except OSError as error:
        raise OSError(error.errno, error.strerror, path) from None


def _simulate_options(p):
    p.add_argument(
        "--port",
        default=DEFAULT_PORT,
        choices=list(SIM_PORTS),
        help=f"which simulation (default: {DEFAULT_PORT})",
    )
    p.add_argument("--baud", type=baud, default=12_000_000, help=argparse.SUPPRESS)
    p.add_argument(
        "--truth",
        metavar="FILE",
        help="write the simulation's ground-truth log there: every pin change of "
        "the DUT with its cycle (JSON lines for sim:gateware, the harness's "
        "log for sim:soc), to check what a capture through this pty got",
    )
    irq_options(p)


@command(
    "simulate",
    _simulate_options,
    help="run a simulated appliance behind a pty",
    description="Start a simulation (sim:soc: the RISC-V DUT runs the suite; "
    "sim:gateware: the appliance alone), set its IRQ generator, print "
    "`PTY <path>` and keep it running until Ctrl-C, for programs that open "
    "the pty themselves: sigrok-cli's or PulseView's ols driver (SUMP mode), "
    "or `latscope capture --port <path>`.",
)
def cmd_simulate(args):
    """Runs a simulated appliance behind its pty for other programs (sigrok-cli's ols
    driver, PulseView, a second latscope) until Ctrl-C."""
    from .capture.session import CaptureSession, stop_signals_deferred
    from .ports import open_port

    irq = irq_settings(args)
    new_output(args.truth, False)
    # SUMP mode too: sigrok's ols driver is one of the programs this is for.
    extra = ["--truth", args.truth] if args.truth else ()
    with open_port(args.port, extra, sump=True) as simulation:
        # Set up, then let go of the pty: the other program is its only user.
        with CaptureSession(simulation, baud=args.baud, owns_port=False) as session:
            session.configure_irq(irq)
        simulation.release_dut()  # sim:soc: the DUT runs the suite now
        print(f"PTY {simulation.pty}", flush=True)
        note(
            f"latscope simulate: {args.port} on {simulation.pty} until Ctrl-C, e.g. "
            f"`{latscope_command()} capture --port {simulation.pty} -o run.lsc` or, with the "
            f"pty shim of README (SUMP), `sigrok-cli -d ols:conn={simulation.pty} --scan`"
        )
        # A stop signal only sets a flag: a KeyboardInterrupt raised inside Popen.poll() can
        # leave its waitpid lock taken, and the simulation's stop() would then wait forever.
        with stop_signals_deferred() as interrupted:
            while simulation.process.poll() is None and not interrupted.wait(0.2):
                pass
    if interrupted.is_set():  # ended as --help says: 128 + the signal (Ctrl-C: 130)
        return 128 + interrupted.signum
    return 0


def _doctor_options(p):
    p.add_argument("--json", action="store_true", help="print the checks as JSON")


@command(
    "doctor",
    _doctor_options,
    help="check this machine: decoders, serial ports, simulator, PulseView, toolchains",
    description="One line per check, `ok` or `problem`, a problem with the command that fixes "
    "it: the latscope decoders as sigrok-cli lists them, the USB serial ports' permissions, "
    "the FTDI latency timer (1 ms wanted), the simulators built (the demo's: make demo), "
    "PulseView, the RISC-V compiler, Verilator, the YoWASP Yosys and nextpnr. Exit status 0 "
    "when nothing is a problem, 1 otherwise.",
)
def cmd_doctor(args):
    from dataclasses import asdict

    from .doctor import check_line, run_checks

    checks = run_checks()
    if args.json:
        print(json.dumps([asdict(check) for check in checks], indent=2))
    else:
        for check in checks:
            print(wrap(check_line(check), output_width(sys.stdout)))
    return 0 if all(check.ok for check in checks) else 1


def _completion_options(p):
    from .completion import SHELLS

    p.add_argument("shell", choices=list(SHELLS), help="the shell to complete in")


@command(
    "completion",
    _completion_options,
    help="print a shell completion script (bash, zsh, fish)",
    description="Prints the completion script of `latscope` for a shell, generated from its "
    'options. Install: bash `eval "$(latscope completion bash)"` in ~/.bashrc; zsh the same '
    "with zsh in ~/.zshrc; fish `latscope completion fish > "
    "~/.config/fish/completions/latscope.fish`.",
)
def cmd_completion(args):
    from .completion import Command, options_of, script
    from .demo import demo_parser

    commands = []
    for name, options, parser_arguments, _ in COMMANDS:
        if name == "demo":  # its options are the demo's own parser's
            parser = demo_parser()
        else:
            parser = _Parser(prog=f"latscope {name}")
            options(parser)
        commands.append(Command(name, parser_arguments["help"], *options_of(parser)))
    top, _ = options_of(build_parser())
    print(script(args.shell, top, commands), end="")
    return 0


# --- main -------------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """Errors in one line: ``latscope capture: error: argument --events: ...``."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(command=None):
    """The command line's parser; ``command``: declare only that sub-command's options (the
    one a command line names: parsing it needs no other's, nor the modules they import)."""
    parser = _Parser(
        prog="latscope",
        description="Measure RTOS latencies with a time-stamping FPGA appliance.",
        epilog="Every command has --help; commands that print results have --json. Exit "
        "status: 0 done, 1 a self-test failed (or the demo's build or suite), 2 bad command "
        "line, unreadable input or device error (one line on stderr naming the file or "
        "device), 3 a --fail-if condition held (analyze, report, demo), 128 + the signal's "
        "number when SIGINT (130), SIGHUP (129) or SIGTERM (143) ended it (a capture or "
        "stream is then stopped, drained and its file closed first).",
    )
    parser.add_argument("--version", action="version", version=f"latscope {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, options, parser_arguments, run in COMMANDS:
        p = sub.add_parser(name, **parser_arguments)
        if command is None or name == command:
            options(p)
        p.set_defaults(func=run)
    return parser


def _sweep_options(p):
    from .demo import CPUS

    p.add_argument(
        "-o", "--output", default="out/sweep", help="directory for its captures (default out/sweep)"
    )
    force_option(p)
    p.add_argument("--cpu", choices=CPUS, default="VexRiscv_IMAC", help="simulated core")
    p.add_argument(
        "--samples",
        type=whole("sample count", 1, 2**31 - 1),
        default=1000,
        help="interrupts of each run (default 1000)",
    )
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")


@command(
    "sweep",
    _sweep_options,
    help="walk an interrupt through the IL test's loop and a kernel path, beside random phases",
    description="On the simulated SoC: the IL-a test with a semaphore give in its loop, "
    "once with the demo's random-phase IRQ and once with the IRQ triggered a delay after the "
    "loop's marker, the delay stepped one cycle at a time across the loop; prints each run's "
    "coverage of the loop and of the kernel path (from the simulation's ground truth), its "
    "worst IL-a-1 sample, where that interrupt met the code and the masked region that held "
    'it (docs/tests.md, "The sweep").',
)
def cmd_sweep(args):
    from pathlib import Path

    from .sweep import comparison_text, sweep

    directory = Path(args.output)
    names = ["random.lsc", "random.truth", "sweep.lsc", "sweep.truth", "sweep.json"]
    new_files_in(directory, names, args.force)
    document = sweep(directory, samples=args.samples, cpu=args.cpu, log=sys.stderr)
    print(json.dumps(document, indent=2) if args.json else comparison_text(document))
    return 0


def _demo_options(p):
    p.add_argument("options", nargs="*", help="python -m latscope.demo's (latscope demo -h)")


@command(
    "demo",
    _demo_options,
    add_help=False,
    help="build the simulated SoC and run the test suite on it (make demo)",
)
def cmd_demo(args):
    from .demo import main as demo_main

    return demo_main(args.options)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    progress_lines.enable()
    if argv[:1] == ["demo"]:  # its options are the demo's own (argparse would take them)
        return _run(argparse.Namespace(func=cmd_demo, options=argv[1:]))
    # The top level takes no option with a value: the first other word names the command.
    named = next((word for word in argv if not word.startswith("-")), None)
    known = named in (name for name, *_ in COMMANDS)
    args = build_parser(named if known else None).parse_args(argv)
    status = 2
    try:
        status = _run(args)
        return status
    finally:
        if status not in (0, None):
            _remove_unwritten()
        _created.clear()


def _run(args):
    try:
        return args.func(args)
    except BrokenPipeError:
        # The reader had enough (`latscope dump ... | head`): not an error. Later writes
        # (the interpreter's final flush) go nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (DeviceError, UsageError) as error:
        note(f"latscope: {error}")
        return 2
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        note(f"latscope: {where}{error.strerror or error}")
        return 2
    except KeyboardInterrupt as stop:
        # Interrupted: a stop signal (SIGINT, SIGTERM, SIGHUP) after a clean stop, or a
        # second one; a plain KeyboardInterrupt: Ctrl-C outside a capture.
        signum = stop.signum if isinstance(stop, Interrupted) else signal.SIGINT
        note(f"latscope: interrupted by {signal.Signals(signum).name}")
        return 128 + signum


if __name__ == "__main__":
    sys.exit(main())
