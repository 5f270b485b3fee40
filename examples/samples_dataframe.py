"""Open a capture, build the per-sample dataframe and print a per-table summary.

    .venv/bin/python examples/samples_dataframe.py out/demo.lsc

A notebook's first cells: every sample of every table as one row of a pandas DataFrame
(``CaptureResult.to_dataframe()``: table, test, load, cache, index, start, time, latency,
flags, trigger delay; pandas from ``pip install 'latscope[data]'``), then whatever pandas does
with it: here count, median, p99 and maximum per table, and the latency of the cold first
sample beside the rest.
"""

import argparse

from latscope.api import CaptureResult


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("capture", help="capture file (.lsc), e.g. out/demo.lsc of make demo")
    args = parser.parse_args()

    frame = CaptureResult.load(args.capture).to_dataframe()
    print(f"{len(frame)} samples in {frame['table'].nunique()} tables, columns: {', '.join(frame)}")
    latency = frame.groupby("table", sort=False)["latency_ns"]
    summary = latency.agg(["count", "median", "max"])
    # numpy's default percentile (linear), as results.json's p99_ns, for every table here.
    summary["p99"] = latency.quantile(0.99)
    summary["cold_first"] = frame[frame["cold"]].set_index("table")["latency_ns"]
    print(summary.to_string(float_format=lambda value: f"{value:.1f}"))


if __name__ == "__main__":
    main()
