"""The progress line of a running capture (``latscope capture``, the demo)."""

import sys
import time

__all__ = ["Progress", "running_tables"]


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
