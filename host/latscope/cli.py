"""The ``latscope`` command line."""

import argparse
import contextlib
import csv
import json
import os
import sys
import time

from .device import Device, DeviceError, IrqSettings, open_transport
from .protocol import Source
from .simulation import SIM_PORTS, SimulatedAppliance, capture_metadata, is_simulated

__all__ = ["main"]

DEFAULT_PORT = "sim:gateware"


@contextlib.contextmanager
def open_device(port, baudrate, sim_args=()):
    """A connected, identified :class:`Device` for a serial port, URL or simulation name."""
    with contextlib.ExitStack() as stack:
        simulation = None
        if is_simulated(port):
            simulation = stack.enter_context(SimulatedAppliance(port, sim_args))
            port = simulation.pty
        device = stack.enter_context(Device(open_transport(port, baudrate)))
        device.simulation = simulation     # sim:soc: the CPU waits for release_cpu()
        device.identify()
        yield device


def cmd_info(args):
    with open_device(args.port, args.baud) as device:
        identity = device.identity
        info = identity.as_dict()
        info["resolution_ns"] = identity.resolution_ns
        info["status"] = device.status()
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"board          {identity.board}")
    print(f"protocol       version {identity.version}")
    print(f"capture clock  {identity.clock_hz / 1e6:g} MHz, resolution {identity.resolution_ns:g} ns")
    print(f"marker port    {identity.marker_width} data bits + strobe")
    print(f"bus window     {'yes, %d-bit' % identity.bus_width if identity.bus_width else 'no'}")
    print(f"edge channels  {identity.edge_count}")
    print(f"FIFO           {identity.fifo_depth} entries")
    print("pin latency    " + ", ".join(f"{source.name.lower()} {cycles}"
                                        for source, cycles in identity.latency.items()
                                        if source in identity.sources))
    return 0


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
        line = (f"{elapsed:7.1f} s  {events:10d} events  {rate:9.0f} ev/s  "
                f"{nbytes / 1024:9.1f} KiB  lost {stats.lost_total:d}  "
                f"dropped {stats.records_dropped:d}")
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
            parts.append(f"{name} n={s['samples']} min/avg/max "
                         f"{s['min_ns']:.0f}/{s['avg_ns']:.0f}/{s['max_ns']:.0f} ns")
    return ("  | " + "; ".join(parts)) if parts else ""


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


def irq_settings(args):
    return IrqSettings(period=args.irq_period, jitter_mask=args.irq_jitter,
                       width=args.irq_width, enable=not args.no_irq)


def cmd_simulate(args):
    """Runs a simulated appliance behind its pty for other programs (sigrok-cli's ols
    driver, PulseView, a second latscope) until Ctrl-C."""
    with SimulatedAppliance(args.port) as simulation:
        with Device(open_transport(simulation.pty, args.baud)) as device:
            device.identify()
            device.configure_irq(irq_settings(args))
        if hasattr(simulation, "release_cpu"):      # sim:soc: the DUT runs the suite now
            simulation.release_cpu()
        print(f"PTY {simulation.pty}", flush=True)
        print(f"latscope simulate: {args.port} on {simulation.pty} until Ctrl-C, e.g. "
              f"`latscope capture --port {simulation.pty} -o run.lsc` or, with the pty shim "
              f"of README (SUMP), `sigrok-cli -d ols:conn={simulation.pty} --scan`",
              file=sys.stderr)
        try:
            while simulation.process.poll() is None:
                time.sleep(0.2)
        except KeyboardInterrupt:
            pass
    return 0


def cmd_capture(args):
    from .capture_file import CaptureWriter
    from .streaming import StreamingAnalyzer

    with open_device(args.port, args.baud) as device:
        identity = device.identity
        irq = irq_settings(args)
        metadata = capture_metadata(identity, args.port, irq, args.info, device.simulation)
        progress = Progress()
        # Live statistics in bounded memory (the capture file keeps every event).
        analyzer = StreamingAnalyzer(identity.stamp_hz, interval=args.interval)
        with CaptureWriter(args.output, metadata) as writer:
            received = 0

            def sink(data):
                nonlocal received
                received += len(data)
                writer.write(data)

            device.raw_sink = sink
            device.configure_irq(irq)
            device.start()
            simulation = device.simulation
            if hasattr(simulation, "release_cpu"):      # sim:soc: run the suite now
                simulation.release_cpu()
            events = 0
            deadline = time.monotonic() + args.duration if args.duration else None
            try:
                while True:
                    arrived = device.poll()
                    events += len(arrived)
                    analyzer.feed(arrived)
                    progress.update(events, received, device.parser.stats, analyzer=analyzer)
                    if deadline is not None and time.monotonic() >= deadline:
                        break
                    if getattr(simulation, "exited", False):   # the suite has run
                        break
                    if args.events and events >= args.events:
                        break
            except KeyboardInterrupt:
                pass
            device.stop()
            device.configure_irq(IrqSettings(enable=False))
            for arrived in (device.drain(), device.parser.finish()):
                events += len(arrived)
                analyzer.feed(arrived)
            status = device.status()
            progress.update(events, received, device.parser.stats, final=True,
                            analyzer=analyzer)
            writer.close({"events": events, "bytes": received, "device_status": status,
                          "parser": device.parser.stats.as_dict(),
                          "tables": analyzer.summary()})
    print(f"wrote {args.output}: {events} events", file=sys.stderr)
    if args.json:
        print(json.dumps({"output": args.output, "events": events, "bytes": received,
                          "device_status": status, "parser": device.parser.stats.as_dict(),
                          "tables": analyzer.summary()}, indent=2))
    return 0


def cmd_dump(args):
    """The events of a capture, read batch by batch (memory does not grow with the file)."""
    from .capture_analysis import CaptureBatches

    batches = CaptureBatches(args.capture)
    stamp_hz = batches.stamp_hz
    sources = None
    if args.source:
        sources = {Source[name.strip().upper()] for name in args.source.split(",")}
    writer = csv.writer(sys.stdout) if args.csv else None
    if writer:
        writer.writerow(["cycle", "time_ns", "source", "value"])
    shown = read = 0
    for events in batches:
        read += len(events)
        if sources is not None:
            events = events.of(*sources)
        if args.limit:
            events = events[:args.limit - shown]
        for stamp, source, value in events:
            time_ns = stamp * 1e9 / stamp_hz
            name = Source(source).name
            if writer:
                writer.writerow([stamp, f"{time_ns:.1f}", name, value])
            elif args.json:
                print(json.dumps({"stamp": stamp, "time_ns": round(time_ns, 1),
                                  "source": name, "value": value}))
            else:
                print(f"{stamp:16d} {time_ns:16.1f} ns  {name:6s} {value:#x}")
        shown += len(events)
        if args.limit and shown >= args.limit:
            break
    if batches.parser_stats is None:              # stopped at the limit: the file's rest unread
        print(f"{batches.path}: {shown} events shown (--limit), reading stopped after "
              f"{read} events", file=sys.stderr)
    else:
        print(batches.summary(read), file=sys.stderr)
    return 0


def cmd_analyze(args):
    """The sample tables of a capture (docs/tests.md) as text, CSV or JSON on stdout."""
    import tempfile
    from pathlib import Path

    from .report import load_tables, results, text_table, write_csv

    capture, tables = load_tables(args.capture)
    document = results(capture, tables)
    if args.format == "json" or args.json:
        print(json.dumps(document, indent=2))
    elif args.format == "csv":
        with tempfile.TemporaryDirectory() as scratch:
            write_csv(document, Path(scratch) / "results.csv")
            sys.stdout.write((Path(scratch) / "results.csv").read_text())
    else:
        device, integrity = document["device"], document["integrity"]
        print(f"{capture.path}: {document['events']} events, {document['duration_s']:.6f} s "
              f"at {device.get('clock_hz', 0) / 1e6:g} MHz ({device.get('board', '?')})")
        print(text_table(document["tables"]) if document["tables"]
              else "no test of the suite in this capture")
        print(f"lost {integrity['lost_events']} events, {integrity['segments_bad']} resyncs, "
              f"{integrity['records_dropped']} records dropped, {integrity['file_gaps']} file "
              f"gaps")
    return 0


def cmd_report(args):
    from .report import text_table, write_report

    document, paths = write_report(args.capture, args.output, figures=not args.no_figures,
                                   x=args.x, interval_s=args.max_interval)
    if args.json:
        print(json.dumps(document, indent=2))
    else:
        print(text_table(document["tables"]) if document["tables"]
              else "no test of the suite in this capture")
    print(f"wrote {paths['html']} (and report.md, results.csv, results.json"
          f"{', figures/' if not args.no_figures else ''}) in {args.output}", file=sys.stderr)
    return 0


def cmd_compare(args):
    from . import compare

    if args.label and len(args.label) > len(args.captures):
        raise UsageError("more --label than captures")
    runs = compare.load_runs(args.captures, args.label)
    document = compare.comparison(runs)
    if args.output:
        written = compare.write_figures(runs, args.output)
        compare.write_json(document, f"{args.output}/comparison.json")
        print(f"wrote {len(written)} figures and comparison.json in {args.output}",
              file=sys.stderr)
    if args.json:
        print(json.dumps(document, indent=2))
    else:
        print(compare.text_comparison(document))
    return 0


def cmd_export(args):
    from .capture_file import load_capture
    from .export import ExportError, export_capture

    if not (args.sr or args.vcd):
        raise UsageError("nothing to write: give --sr OUT.sr and/or --vcd OUT.vcd")
    capture = load_capture(args.capture)
    try:
        info = export_capture(capture, sr=args.sr, vcd=args.vcd, pvs=not args.no_pvs,
                              start=args.start, stop=args.stop)
    except ExportError as error:
        raise UsageError(str(error)) from None
    print(f"wrote {', '.join(info.files)}: {info.summary()}", file=sys.stderr)
    print(f"decode with: sigrok-cli -i {args.sr or args.vcd}"
          f"{'' if args.sr else ' -I vcd'} -P {info.layout.decoder_stack()} "
          f"-A latscope_latency", file=sys.stderr)
    if args.json:
        print(json.dumps({"files": info.files, "origin": info.origin, "samples": info.samples,
                          "samplerate": info.stamp_hz, "changes": info.changes,
                          "markers_dropped": info.markers_dropped,
                          "edges_stretched": info.edges_stretched,
                          "edges_dropped": info.edges_dropped,
                          "decoders": info.layout.decoder_stack()}, indent=2))
    return 0


def cmd_stream(args):
    from .stream import PULSEVIEW_BLOCK, stream_capture

    irq = irq_settings(args)
    if args.output in (None, "-"):
        out = sys.stdout.buffer
    else:
        out = open(args.output, "wb")
    try:
        stream_capture(args.port, out, baudrate=args.baud, irq=irq,
                       block=PULSEVIEW_BLOCK if args.pulseview else 0,
                       duration=args.duration, max_events=args.events,
                       flush_interval=args.flush, capture=args.capture, pvs=args.pvs)
    finally:
        if out is not sys.stdout.buffer:
            out.close()
    return 0


class UsageError(Exception):
    """A command line that makes no sense (exit code 2, one line)."""


def build_parser():
    parser = argparse.ArgumentParser(
        prog="latscope",
        description="Measure RTOS latencies with a time-stamping FPGA appliance.",
        epilog="Every command has --help; commands that print results have --json. Exit "
               "status: 0 done, 2 bad command line, unreadable input or device error (one "
               "line on stderr naming the file or device), 130 interrupted.")
    sub = parser.add_subparsers(dest="command", required=True)

    def device_options(p):
        p.add_argument("--port", default=DEFAULT_PORT,
                       help=f"serial port or pyserial URL of the appliance, or a simulation: "
                            f"{', '.join(SIM_PORTS)} (default: {DEFAULT_PORT})")
        p.add_argument("--baud", type=int, default=12_000_000, help="UART baud rate")

    def irq_options(p, *, jitter):
        p.add_argument("--irq-period", type=int, default=5000, help="IRQ period in cycles")
        p.add_argument("--irq-jitter", type=lambda text: int(text, 0), default=jitter,
                       help=f"jitter mask: extra 0..mask cycles per period (default {jitter:#x})")
        p.add_argument("--irq-width", type=int, default=100, help="IRQ pulse width in cycles")
        p.add_argument("--no-irq", action="store_true", help="leave the IRQ generator off")

    p = sub.add_parser("info", help="identify a device")
    device_options(p)
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_info)

    p = sub.add_parser("capture", help="capture events into a file")
    device_options(p)
    p.add_argument("-o", "--output", required=True, help="capture file to write")
    p.add_argument("--duration", type=parse_duration, default=None,
                   help="how long to capture: seconds, or with a unit: 15m, 8h, 1d "
                        "(default: 10 s; on sim:soc until the suite has run)")
    p.add_argument("--interval", type=parse_duration, default=60.0,
                   help="max-over-time interval of the live statistics (default 60 s)")
    p.add_argument("--events", type=int, default=None, help="stop after this many events")
    irq_options(p, jitter=0)
    p.add_argument("--info", default="", help="free-form test information to store")
    p.add_argument("--json", action="store_true",
                   help="print the capture's summary (events, losses, live tables) as JSON")
    p.set_defaults(func=cmd_capture)

    p = sub.add_parser("dump", help="print the events of a capture file")
    p.add_argument("capture")
    output = p.add_mutually_exclusive_group()
    output.add_argument("--csv", action="store_true", help="CSV instead of text")
    output.add_argument("--json", action="store_true", help="JSON Lines: one object per event")
    p.add_argument("--source", help="comma-separated sources to show (e.g. marker,irq)")
    p.add_argument("--limit", type=int, default=0, help="show at most this many events")
    p.set_defaults(func=cmd_dump)

    p = sub.add_parser("analyze", help="the sample tables of a capture",
                       description="Pair the events of a capture into the samples of every "
                                   "test (docs/tests.md) and print per table: number of "
                                   "samples, min, max, average, standard deviation, p50, p99, "
                                   "p99.9 (ns), and the losses and resyncs of the capture.")
    p.add_argument("capture", help="capture file (.lsc)")
    p.add_argument("--format", choices=("text", "csv", "json"), default="text",
                   help="text (default), CSV (one row per table) or JSON "
                        "(docs/results-schema.md)")
    p.add_argument("--json", action="store_true", help="the same as --format json")
    p.set_defaults(func=cmd_analyze)

    p = sub.add_parser("report", help="tables, figures and a self-contained HTML report",
                       description="Analyse a capture into the suite's sample tables and "
                                   "write report.html (self-contained), report.md, "
                                   "results.csv, results.json (docs/results-schema.md) and "
                                   "figures/ (PNG, SVG) into a directory; print the tables.")
    p.add_argument("capture", help="capture file (.lsc)")
    p.add_argument("-o", "--output", required=True, help="directory to write")
    p.add_argument("--no-figures", action="store_true", help="tables only (faster)")
    p.add_argument("--x", choices=("index", "time"), default="index",
                   help="time-series x axis: sample index or capture time")
    p.add_argument("--max-interval", type=parse_duration, default=None, metavar="SECONDS",
                   help="also plot the maximum per interval of capture time (e.g. 1m; "
                        "default: per minute for runs of 10 minutes or more)")
    p.add_argument("--json", action="store_true", help="print the results JSON")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("compare", help="compare the tables of several captures",
                       description="Side-by-side tables of several captures with the "
                                   "difference of every statistic against the first "
                                   "(the baseline); with -o, overlaid distributions.")
    p.add_argument("captures", nargs="+", metavar="CAPTURE", help="capture files (.lsc)")
    p.add_argument("--label", action="append",
                   help="name of a capture in the output, in order (repeat; default: "
                        "file name)")
    p.add_argument("-o", "--output", help="directory for the overlaid distribution figures "
                                          "and comparison.json")
    p.add_argument("--json", action="store_true", help="print the comparison JSON")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("export", help="export a capture for sigrok / PulseView",
                       description="Write a capture as logic signals at the capture clock's "
                                   "sample rate: a sigrok session file (with OUT.pvs beside "
                                   "it, so PulseView opens it with the latscope decoders "
                                   "attached) and/or a VCD. See README, sigrok and PulseView.")
    p.add_argument("capture", help="capture file (.lsc)")
    p.add_argument("--sr", metavar="OUT.sr", help="sigrok session file to write")
    p.add_argument("--vcd", metavar="OUT.vcd", help="VCD file to write")
    p.add_argument("--no-pvs", action="store_true", help="no PulseView setup beside OUT.sr")
    p.add_argument("--start", type=int, help="first cycle to export (default: the first "
                                             "event's, less a few)")
    p.add_argument("--stop", type=int, help="export cycles before this one only")
    p.add_argument("--json", action="store_true", help="print what was written as JSON")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("stream", help="live VCD stream for sigrok-cli / PulseView",
                       description="Capture and write the events as they come as a VCD "
                                   "stream (the signals of `latscope export`), e.g. "
                                   "`latscope stream --port sim:soc | sigrok-cli -i - -I vcd "
                                   "...` or, with --pulseview, into `pulseview -i /dev/stdin "
                                   "-I vcd -s live.pvs`. See README, sigrok and PulseView.")
    device_options(p)
    p.add_argument("-o", "--output", help="file or FIFO to write (default: stdout)")
    p.add_argument("--pulseview", action="store_true",
                   help="pad every flush to PulseView's 4 MiB input blocks (live display)")
    p.add_argument("--pvs", metavar="SETUP.pvs",
                   help="write a PulseView setup with the decoders attached (pulseview -s)")
    p.add_argument("--capture", metavar="FILE.lsc", help="also write a capture file")
    p.add_argument("--flush", type=float, default=0.5, help="seconds between flushes")
    p.add_argument("--duration", type=parse_duration, default=None,
                   help="stop after this long (default: until the simulated firmware exits, "
                        "the reader quits or Ctrl-C)")
    p.add_argument("--events", type=int, default=None, help="stop after this many events")
    irq_options(p, jitter=0xff)
    p.set_defaults(func=cmd_stream)

    p = sub.add_parser("simulate", help="run a simulated appliance behind a pty",
                       description="Start a simulation (sim:soc: the RISC-V DUT runs the "
                                   "suite; sim:gateware: the appliance alone), set its IRQ "
                                   "generator, print `PTY <path>` and keep it running until "
                                   "Ctrl-C, for programs that open the pty themselves: "
                                   "sigrok-cli's or PulseView's ols driver (SUMP mode), or "
                                   "`latscope capture --port <path>`.")
    p.add_argument("--port", default="sim:soc", choices=list(SIM_PORTS),
                   help="which simulation (default: sim:soc)")
    p.add_argument("--baud", type=int, default=12_000_000, help=argparse.SUPPRESS)
    irq_options(p, jitter=0xff)
    p.set_defaults(func=cmd_simulate)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if args.command == "capture" and not (args.duration or args.events or args.port == "sim:soc"):
        args.duration = 10.0          # sim:soc ends with the suite
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
        print(f"latscope: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("latscope: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
