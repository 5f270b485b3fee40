"""How version3.lsc and version3.events.json were made, with the version 3 code (commit bb3619c,
before version 4): run from the repository root. Kept for the record; the test reads the files."""

import json
import random

from latscope.capture.file import CaptureWriter, load_capture
from latscope_defs.protocol import StreamEncoder, irq_value, loss_value

rng = random.Random(31)
events, stamp = [], 1000
for i in range(600):
    stamp += rng.choice([0, 1, 3, 75, 331, 5000, 1 << 24])
    if i == 300:
        stamp = (1 << 48) - 10  # a 48-bit stamp wrap follows
    source = rng.choice([0, 0, 0, 1, 2, 3, 4, 5, 11])
    if source == 0:
        value = rng.choice([0x94B + i // 3, 0x9CB + i // 3, 0xA80, rng.getrandbits(16)])
    elif source == 1:
        value = rng.getrandbits(32)
    elif source == 2:
        value = irq_value(i & 1, rng.choice([0, 1]), rng.getrandbits(14))
    elif source == 3:
        value = loss_value(rng.randrange(12), rng.getrandbits(32))
    else:
        value = i & 1
    events.append((stamp, source, value))
enc = StreamEncoder(version=3, flush_after=100_000)
for e in events:
    enc.event(*e)
enc.flush()
data = enc.take()
identity = {
    "version": 3,
    "clock_hz": 100_000_000,
    "stamp_shift": 0,
    "marker_width": 16,
    "edge_count": 8,
    "bus_width": 32,
    "fifo_depth": 512,
    "board": "v3-fixture",
    "latency": {},
}
path = "tests/host/data/version3.lsc"
with CaptureWriter(path, {"identity": identity}) as w:
    w.write(data)
    w.close({})
c = load_capture(path, correct_latency=False)
got = list(zip(c.events.stamp.tolist(), c.events.source.tolist(), c.events.value.tolist()))
print(
    len(data),
    len(got),
    got == [(s % (1 << 64), so, v) for s, so, v in events][: len(got)] if False else None,
)
json.dump(got, open("tests/host/data/version3.events.json", "w"))
print(got[:3], got[298:303], c.parser_stats)
print("equal to the encoded events:", got == events)
