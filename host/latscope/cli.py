"""The ``latscope`` command line.

Each command is a ``cmd_*`` function with the function that declares its options right
above it (registered with :func:`command`). Every value is checked before a device is
opened or a file written: a bad one ends in one line on stderr and exit status 2. Output
files are never overwritten without ``--force``.
"""

import argparse
import json
import os
import stat
import sys
import time

from latscope_defs.protocol import Source

from .link.device import DeviceError, IrqSettings
from .simulated.appliance import SIM_PORTS

__all__ = ["main", "Progress", "parse_duration"]

DEFAULT_PORT = "sim:gateware"


class UsageError(Exception):
    """A command line that makes no sense (exit code 2, one line)."""


# --- values ---------------------------------------------------------------------------------


def parse_duration(text):
    """Seconds from ``90``, ``90s``, ``15m``, ``8h`` or ``1d``."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    scale = units.get(text[-1:].lower())
    try:
        value = float(text[:-1] if scale else text) * (scale or 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 30, 15m, 8h)")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"duration must be positive: {text!r}")
    return value


def count(text):
    """A whole number of 1 or more (``--events``)."""
    return _bounded_int(text, 1)


def natural(text):
    """A whole number of 0 or more (``--limit``, cycle numbers)."""
    return _bounded_int(text, 0)


def _bounded_int(text, low):
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"must be {low} or more: {text!r}")
    return value


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


def seconds(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0: {text!r}")
    return value


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


def new_output(path, force):
    """Refuses to overwrite an existing regular file unless ``--force`` (a FIFO, a device
    or stdout is written to as it is)."""
    if path is None or force:
        return
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if stat.S_ISREG(mode):
        raise UsageError(f"{path}: exists; give --force to overwrite it")
    if stat.S_ISDIR(mode):
        raise UsageError(f"{path}: is a directory")


def new_files_in(directory, names, force):
    """Refuses to write ``names`` into ``directory`` where one exists, unless ``--force``."""
    if force:
        return
    for name in names:
        path = os.path.join(directory, name)
        if os.path.lexists(path):
            raise UsageError(f"{path}: exists; give --force to overwrite it")


# --- commands ---------------------------------------------------------------------------------

COMMANDS = []


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
        f"{', '.join(SIM_PORTS)} (default: {DEFAULT_PORT})",
    )
    p.add_argument("--baud", type=count, default=12_000_000, help="UART baud rate")


def irq_options(p, *, jitter):
    p.add_argument(
        "--irq-period",
        type=lambda text: int(text, 0),
        default=5000,
        help="IRQ period in link clock cycles (the capture clock on a one-clock "
        "board; `latscope identify`), 2 .. 2**32 - 1",
    )
    p.add_argument(
        "--irq-jitter",
        type=lambda text: int(text, 0),
        default=jitter,
        help=f"jitter mask: extra 0..mask cycles per period, 32 bits (default {jitter:#x})",
    )
    p.add_argument(
        "--irq-width",
        type=lambda text: int(text, 0),
        default=100,
        help="IRQ pulse width in link clock cycles (1 .. period - 1)",
    )
    p.add_argument("--no-irq", action="store_true", help="leave the IRQ generator off")


def force_option(p):
    p.add_argument("--force", action="store_true", help="overwrite existing output files")


def _info_options(p):
    device_options(p)
    p.add_argument("--json", action="store_true", help="print JSON")


@command("info", _info_options, help="identify a device")
def cmd_info(args):
    from .capture.session import CaptureSession

    with CaptureSession(args.port, baud=args.baud) as session:
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
    print(f"bus window     {'yes, %d-bit' % identity.bus_width if identity.bus_width else 'no'}")
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

    from .link.device import Device, open_transport
    from .link.selftest import format_results, run_selftest
    from .ports import is_simulated, open_selftest_port

    if args.miswire and args.port != "sim:soc":
        raise UsageError("--miswire: only for --port sim:soc (a simulated wiring fault)")

    def prompt():
        if not is_simulated(args.port):
            print(
                f"wiring: capturing; start the DUT's wiring program within {args.wait:g} s "
                f"(firmware/tools/, docs/boards.md)",
                file=sys.stderr,
            )

    with (
        open_selftest_port(args.port, loopback=args.loopback, miswire=args.miswire) as port,
        Device(open_transport(port.path, args.baud), reply_timeout=port.reply_timeout) as device,
    ):
        results = run_selftest(
            device,
            port=args.port,
            baud=args.baud,
            loopback=args.loopback,
            wiring=args.wiring,
            count=args.count,
            dut=port,
            on_wiring_start=prompt,
            wiring_timeout=args.wait,
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
    return 0 if all(result.ok for result in results.values()) else 1


class Progress:
    """One status line on stderr, rewritten about twice a second on a terminal; into a log
    (not a terminal) a line every 10 s."""

    def __init__(self, stream=sys.stderr, interval=None):
        self.stream = stream
        self.interval = interval or (0.5 if stream.isatty() else 10.0)
        self.started = time.monotonic()
        self.shown = 0.0

    def update(self, events, nbytes, stats, *, final=False, analyzer=None):
        now = time.monotonic()
        if not final and now - self.shown < self.interval:
            return
        self.shown = now
        elapsed = now - self.started
        rate = events / elapsed if elapsed > 0 else 0.0
        line = (
            f"{elapsed:7.1f} s  {events:10d} events  {rate:9.0f} ev/s  "
            f"{nbytes / 1024:9.1f} KiB  lost {stats.lost_total:d}  "
            f"dropped {stats.records_dropped:d}"
        )
        if analyzer is not None:
            line += running_tables(analyzer)
        end = "\n" if final or not self.stream.isatty() else "\r"
        print(line, end=end, file=self.stream, flush=True)


def running_tables(analyzer):
    """`` | IL-a-1 n=512 min/avg/max 40/68/2986 ns`` for the tables of the running tests."""
    parts = []
    for name, table in analyzer.tables.items():
        if table.parameters.get("test") in analyzer.running and table.count:
            s = table.stats()
            parts.append(
                f"{name} n={s['samples']} min/avg/max "
                f"{s['min_ns']:.0f}/{s['avg_ns']:.0f}/{s['max_ns']:.0f} ns"
            )
    return ("  | " + "; ".join(parts)) if parts else ""


def _capture_options(p):
    device_options(p)
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
        type=parse_duration,
        default=60.0,
        help="max-over-time interval of the live statistics (default 60 s)",
    )
    p.add_argument("--events", type=count, default=None, help="stop after this many events")
    irq_options(p, jitter=0)
    p.add_argument(
        "--irq-trigger",
        metavar="TEST:POINT[/ARG[/MASK]]",
        help="fire the IRQ a delay after this marker (names of docs/markers.md or numbers; "
        "ARG: its argument, MASK: the argument bits compared); the periodic generator, "
        "unless --no-irq, arms one firing per period and shows no edges of its own",
    )
    p.add_argument(
        "--irq-delay",
        metavar="START:STOP:STEP",
        help="with --irq-trigger: the delays swept, range(START, STOP, STEP) over and over, "
        "each in ns, us or capture cycles (a plain number), rounded to the capture clock "
        "(default 0)",
    )
    p.add_argument("--info", default="", help="free-form test information to store")
    loop_option(p, recorded=True)
    p.add_argument(
        "--json",
        action="store_true",
        help="print the capture's summary (events, losses, live tables) as JSON",
    )


@command("capture", _capture_options, help="capture events into a file")
def cmd_capture(args):
    from .analysis.live import live_analysis
    from .capture.session import CaptureSession, Until
    from .report.tail_estimates import estimates, summary_text

    irq = irq_settings(args)
    _check_trigger(args)
    new_output(args.output, args.force)
    with CaptureSession(args.port, baud=args.baud) as session:
        if not (args.duration or args.events or session.port.dut_ends):
            args.duration = 10.0  # a simulated suite ends by itself
        session.configure_irq(irq)
        if args.irq_trigger:
            session.configure_trigger(_trigger(args, session.identity, irq))
        if args.loop and session.identity.edge_count <= int(args.loop[4:]):
            raise UsageError(
                f"--loop {args.loop}: the appliance has {session.identity.edge_count} edge channels"
            )
        # Live statistics in bounded memory (the capture file keeps every event).
        analyzer = live_analysis(session.identity, args.interval)
        progress = Progress()

        def show(events, run):
            progress.update(run.events, run.bytes, run.parser_stats, analyzer=analyzer)

        run = session.capture(
            args.output,
            info=args.info,
            analyzer=analyzer,
            on_batch=show,
            loop=args.loop,
            until=Until(duration=args.duration, events=args.events),
        )
        progress.update(run.events, run.bytes, run.parser_stats, final=True, analyzer=analyzer)
    if run.interrupted:
        print("latscope: interrupted: the capture was stopped and drained", file=sys.stderr)
    print(f"wrote {args.output}: {run.events} events", file=sys.stderr)
    tables = final_accumulators(analyzer, args.output)
    tails = estimates(tables)
    if tails:
        print(summary_text(tails), file=sys.stderr)
    if args.json:
        print(
            json.dumps(
                {
                    "output": args.output,
                    "events": run.events,
                    "bytes": run.bytes,
                    "device_status": run.status,
                    "parser": run.parser_stats.as_dict(),
                    "tables": {name: table.stats() for name, table in tables.items()},
                    "tail": tails,
                },
                indent=2,
            )
        )
    return 0


def _check_trigger(args):
    """``--irq-trigger`` and ``--irq-delay`` as far as they can be checked before a port is
    opened (the rounding to the capture clock waits for the appliance: :func:`_trigger`)."""
    from .capture.trigger import check_trigger

    if args.irq_trigger is None:
        if args.irq_delay is not None:
            raise UsageError(f"--irq-delay {args.irq_delay}: needs --irq-trigger")
        return
    args.irq_delay = "0" if args.irq_delay is None else args.irq_delay
    try:
        check_trigger(args.irq_trigger, args.irq_delay)
    except ValueError as error:
        raise _trigger_error(args, error) from None


def _trigger_error(args, error):
    return UsageError(f"{error} (--irq-trigger {args.irq_trigger}, --irq-delay {args.irq_delay})")


def _trigger(args, identity, irq):
    """The trigger of ``--irq-trigger`` and ``--irq-delay`` on this appliance, printed as
    used (the delays rounded to its capture clock)."""
    from .capture.trigger import describe_trigger, trigger_settings

    if not identity.has_trigger:
        raise UsageError(
            f"--irq-trigger: the appliance speaks protocol {identity.version}, no trigger"
        )
    try:
        settings = trigger_settings(args.irq_trigger, args.irq_delay, identity, irq)
    except ValueError as error:
        raise _trigger_error(args, error) from None
    print(describe_trigger(settings, identity), file=sys.stderr)
    return settings


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
    p.add_argument("--source", help="comma-separated sources to show (e.g. marker,irq)")
    p.add_argument("--limit", type=natural, default=0, help="show at most this many events")


def sources_named(text):
    """The sources of ``--source marker,irq``; an unknown name is a usage error."""
    known = {source.name for source in Source if source not in (Source.REPLY, Source.SYNC)}
    names = [name.strip().upper() for name in text.split(",")]
    unknown = [name for name in names if name not in known]
    if unknown:
        raise UsageError(
            f"--source {text}: unknown source {', '.join(unknown)} (known: "
            f"{', '.join(sorted(known, key=lambda name: Source[name]))})"
        )
    return {int(Source[name]) for name in names}


@command("dump", _dump_options, help="print the events of a capture file")
def cmd_dump(args):
    """The events of a capture, read batch by batch (memory does not grow with the file)."""
    import csv

    from .capture.batches import CaptureBatches

    sources = sources_named(args.source) if args.source else None
    batches = CaptureBatches(args.capture)
    stamp_hz = batches.stamp_hz
    writer = csv.writer(sys.stdout) if args.csv else None
    if writer:
        writer.writerow(["cycle", "time_ns", "source", "value"])
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
            if writer:
                writer.writerow([stamp, f"{time_ns:.1f}", name, value])
            elif args.json:
                print(
                    json.dumps(
                        {
                            "stamp": stamp,
                            "time_ns": round(time_ns, 1),
                            "source": name,
                            "value": value,
                        }
                    )
                )
            else:
                print(f"{stamp:16d} {time_ns:16.1f} ns  {name:6s} {value:#x}")
        shown += len(events)
        if args.limit and shown >= args.limit:
            break
    if batches.parser_stats is None:  # stopped at the limit: the file's rest unread
        print(
            f"{batches.path}: {shown} events shown (--limit), reading stopped after {read} events",
            file=sys.stderr,
        )
    else:
        print(batches.summary(read), file=sys.stderr)
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
    worst_option(p)
    loop_option(p, recorded=False)


def worst_count(text):
    from .analysis.statistics import WORST_KEPT

    value = _bounded_int(text, 0)
    if value > WORST_KEPT:
        raise argparse.ArgumentTypeError(f"at most {WORST_KEPT}: {text!r}")
    return value


def worst_option(p):
    from .analysis.statistics import WORST_KEPT
    from .analysis.worst import WORST_SHOWN

    p.add_argument(
        "--worst",
        type=worst_count,
        default=WORST_SHOWN,
        metavar="N",
        help=f"the N worst samples of every table with the events "
        f"around them (default {WORST_SHOWN}, at most {WORST_KEPT}; 0: none, "
        f"and no second pass over the capture)",
    )


@command(
    "analyze",
    _analyze_options,
    help="the sample tables of a capture",
    description="Pair the events of a capture into the samples of every test "
    "(docs/tests.md) and print per table: number of samples, min, max, "
    "average, standard deviation, p50, p99, p99.9 (ns), and the losses and "
    "resyncs of the capture.",
)
def cmd_analyze(args):
    """The sample tables of a capture (docs/tests.md) in any results format on stdout."""
    from .report.formats import named
    from .report.results import load_tables, results
    from .report.worst_samples import worst_of

    capture, tables = load_tables(args.capture, args.loop)
    document = results(capture, tables, worst_of(args.capture, capture, tables, args.worst))
    sys.stdout.write(named("json" if args.json else args.format).text(document))
    return 0


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
        type=parse_duration,
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


@command("report", _report_options, help="tables, figures and a self-contained HTML report")
def cmd_report(args):
    from .report.columns import statistics_note, text_table
    from .report.directory import report_files, write_report

    new_files_in(args.output, report_files(), args.force)
    document, paths = write_report(
        args.capture,
        args.output,
        figures=not args.no_figures,
        x=args.x,
        interval_s=args.max_interval,
        loop=args.loop,
        worst=args.worst,
        exports=not args.no_exports,
    )
    if args.json:
        print(json.dumps(document, indent=2))
    else:
        print(
            text_table(document["tables"])
            if document["tables"]
            else "no test of the suite in this capture"
        )
        if document["tables"]:
            print(statistics_note())
    first, *others = paths.values()
    print(
        f"wrote {first} (and {', '.join(path.name for path in others)}"
        f"{', figures/' if not args.no_figures else ''}) in {args.output}",
        file=sys.stderr,
    )
    return 0


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
    force_option(p)
    p.add_argument("--json", action="store_true", help="the same as --format json")


@command(
    "compare",
    _compare_options,
    help="compare the tables of several captures",
    description="Side-by-side tables of several captures with the difference of every "
    "statistic against the first (the baseline); with -o, overlaid "
    "distributions.",
)
def cmd_compare(args):
    from .report import compare
    from .report.formats import named

    if args.label and len(args.label) > len(args.captures):
        raise UsageError("more --label than captures")
    runs = compare.load_runs(args.captures, args.label)
    document = compare.comparison(runs)
    if args.output:
        new_files_in(args.output, compare.directory_files(), args.force)
        figures = compare.write_directory(runs, document, args.output)
        print(
            f"wrote {len(figures)} figures and {', '.join(compare.directory_files())} in "
            f"{args.output}",
            file=sys.stderr,
        )
    sys.stdout.write(named("json" if args.json else args.format).comparison_text(document))
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
        type=natural,
        help="first cycle to export (default: the first event's, less a few)",
    )
    p.add_argument("--stop", type=natural, help="export cycles before this one only")
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
    help="export a capture for sigrok / PulseView",
    description="Write a capture as logic signals at the capture clock's sample rate: a "
    "sigrok session file (with OUT.pvs beside it, so PulseView opens it with "
    "the latscope decoders attached) and/or a VCD. See README, sigrok and "
    "PulseView.",
)
def cmd_export(args):
    from .export.files import export_capture
    from .export.formats import EXPORT_FORMATS
    from .export.writer import ExportError

    writers = export_writers(args)
    if not writers:
        raise UsageError(
            "nothing to write: give "
            + " and/or ".join(f"--{writer.name} OUT{writer.suffix}" for writer in EXPORT_FORMATS)
        )
    if args.start is not None and args.stop is not None and args.stop <= args.start:
        raise UsageError(f"--stop {args.stop} is not after --start {args.start}: nothing to export")
    for writer in writers:
        for path in writer.files:
            new_output(path, args.force)
    try:  # read from the file in batches: bounded memory
        info = export_capture(args.capture, writers, start=args.start, stop=args.stop)
    except ExportError as error:
        raise UsageError(str(error)) from None
    print(f"wrote {', '.join(info.files)}: {info.summary()}", file=sys.stderr)
    print(f"decode with: {info.decode_command(writers[0])}", file=sys.stderr)
    if args.json:
        print(json.dumps(info.as_dict(), indent=2))
    return 0


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
    irq_options(p, jitter=0xFF)


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
        print("latscope stream: the stream is complete; close PulseView to finish", file=sys.stderr)
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
        default="sim:soc",
        choices=list(SIM_PORTS),
        help="which simulation (default: sim:soc)",
    )
    p.add_argument("--baud", type=count, default=12_000_000, help=argparse.SUPPRESS)
    p.add_argument(
        "--truth",
        metavar="FILE",
        help="write the simulation's ground-truth log there: every pin change of "
        "the DUT with its cycle (JSON lines for sim:gateware, the harness's "
        "log for sim:soc), to check what a capture through this pty got",
    )
    irq_options(p, jitter=0xFF)


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
    from .capture.session import CaptureSession, sigint_deferred
    from .ports import open_port

    irq = irq_settings(args)
    new_output(args.truth, False)
    with open_port(args.port, ["--truth", args.truth] if args.truth else ()) as simulation:
        # Set up, then let go of the pty: the other program is its only user.
        with CaptureSession(simulation, baud=args.baud, owns_port=False) as session:
            session.configure_irq(irq)
        simulation.release_dut()  # sim:soc: the DUT runs the suite now
        print(f"PTY {simulation.pty}", flush=True)
        print(
            f"latscope simulate: {args.port} on {simulation.pty} until Ctrl-C, e.g. "
            f"`latscope capture --port {simulation.pty} -o run.lsc` or, with the pty shim "
            f"of README (SUMP), `sigrok-cli -d ols:conn={simulation.pty} --scan`",
            file=sys.stderr,
        )
        # Ctrl-C only sets a flag: a KeyboardInterrupt raised inside Popen.poll() can leave
        # its waitpid lock taken, and the simulation's stop() would then wait forever.
        with sigint_deferred() as interrupted:
            while simulation.process.poll() is None and not interrupted.wait(0.2):
                pass
    return 0


# --- main -------------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """Errors in one line: ``latscope capture: error: argument --events: ...``."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser():
    parser = _Parser(
        prog="latscope",
        description="Measure RTOS latencies with a time-stamping FPGA appliance.",
        epilog="Every command has --help; commands that print results have --json. Exit "
        "status: 0 done, 2 bad command line, unreadable input or device error (one "
        "line on stderr naming the file or device), 130 interrupted.",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name, options, parser_arguments, run in COMMANDS:
        p = sub.add_parser(name, **parser_arguments)
        options(p)
        p.set_defaults(func=run)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:
        # The reader had enough (`latscope dump ... | head`): not an error. Later writes
        # (the interpreter's final flush) go nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (DeviceError, UsageError) as error:
        print(f"latscope: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        print(f"latscope: {where}{error.strerror or error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("latscope: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
