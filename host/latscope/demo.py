"""``make demo``: capture from the simulated appliance and show what came back.

The appliance gateware runs in Amaranth's simulator behind a pseudo-terminal; a scripted DUT
answers each IRQ with an "ISR" that writes an entry and an exit marker. The host captures
through the same code as for a board, saves a capture file, prints the first events and the
IRQ statistics measured from the stamps.
"""

import argparse
import os
import sys
import time

import numpy as np

from .capture_file import CaptureWriter
from .cli import Progress
from .device import Device, IrqSettings, open_transport
from .protocol import Source
from .simulation import SimulatedAppliance

__all__ = ["main"]


def describe(stamps, clock_hz):
    ns = np.asarray(stamps, dtype=np.float64) * 1e9 / clock_hz
    return (f"n={len(ns)}  min={ns.min():.0f} ns  max={ns.max():.0f} ns  "
            f"avg={ns.mean():.1f} ns") if len(ns) else "n=0"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m latscope.demo", description=__doc__)
    parser.add_argument("--irqs", type=int, default=25, help="IRQs to capture")
    parser.add_argument("--irq-period", type=int, default=1500, help="cycles")
    parser.add_argument("--output", default="out/demo.lsc")
    parser.add_argument("--show", type=int, default=24, help="events to print")
    args = parser.parse_args(argv)

    os.makedirs(os.path.dirname(args.output) or ".", exist_ok=True)
    print("latscope demo: appliance gateware in simulation (Amaranth), host over a pty",
          file=sys.stderr)
    with SimulatedAppliance("sim:gateware") as sim, \
            Device(open_transport(sim.pty)) as device:
        identity = device.identify()
        clock_hz = identity.clock_hz
        print(f"device: {identity.board}, {clock_hz / 1e6:g} MHz, "
              f"{identity.resolution_ns:g} ns per stamp, pin latency (cycles) "
              + ", ".join(f"{s.name.lower()}={c}" for s, c in identity.latency.items()
                          if s in identity.sources), file=sys.stderr)
        irq = IrqSettings(period=args.irq_period, jitter_mask=0xff, width=40)
        metadata = {"identity": identity.as_dict(), "port": "sim:gateware",
                    "irq": irq.__dict__, "start_time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                    "test_info": "latscope demo (gateware simulation, scripted DUT)"}
        progress = Progress()
        chunks = []
        with CaptureWriter(args.output, metadata) as writer:
            device.raw_sink = writer.write
            device.configure_irq(irq)
            device.start()
            irq_edges = 0
            while irq_edges < args.irqs:
                events = device.poll()
                if len(events):
                    chunks.append(events)
                    irq_edges += int(np.count_nonzero((events.source == Source.IRQ)
                                                      & (events.value == 1)))
                progress.update(sum(len(chunk) for chunk in chunks), 0, device.parser.stats)
            device.stop()
            device.configure_irq(IrqSettings(enable=False))
            chunks.append(device.drain())
            chunks.append(device.parser.finish())
            status = device.status()
            writer.close({"device_status": status, "parser": device.parser.stats.as_dict()})

    from .parser import Events
    events = Events.concatenate(chunks)
    print(f"\nfirst {args.show} of {len(events)} events (stamps in cycles of "
          f"{identity.resolution_ns:g} ns):")
    for stamp, source, value in list(zip(events.stamp.tolist(), events.source.tolist(),
                                         events.value.tolist()))[:args.show]:
        print(f"  {stamp:12d}  {Source(source).name:6s} {value:#06x}")

    irq_mask = (events.source == Source.IRQ) & (events.value == 1)
    irq_stamps = events.stamp[irq_mask].astype(np.int64)
    markers = events.stamp[events.source == Source.MARKER].astype(np.int64)
    marker_values = events.value[events.source == Source.MARKER]
    entries = markers[(marker_values & 0xf000) == 0x1000]
    # Interrupt latency of the scripted ISR: asserting IRQ edge -> next ISR entry marker.
    following = np.searchsorted(entries, irq_stamps)
    paired = following < len(entries)
    latency = entries[following[paired]] - irq_stamps[paired]
    print("\nIRQ statistics (from the appliance's stamps):")
    print(f"  asserting edges   {len(irq_stamps)}")
    if len(irq_stamps) > 1:
        print(f"  period            {describe(np.diff(irq_stamps), clock_hz)}  "
              f"(programmed {args.irq_period} + 0..255 cycles)")
    print(f"  IRQ -> ISR entry  {describe(latency, clock_hz)}")
    stats = device.parser.stats
    print(f"  device status     {status}")
    print(f"  stream            {stats}")
    print(f"\ncapture saved to {args.output}  (try: latscope dump {args.output})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
