"""Run the latency capture on every place with a given tag, in parallel, and write one
comparison report of all of them:

    LG_COORDINATOR=coordinator:20408 python examples/labgrid/compare_places.py \
        --tag latscope=nightly --out out/nightly [--duration 600] [-- more pytest options]

Each place runs test_latency.py (pytest, labgrid's plugin, env.yaml) in a process of its own
with LG_PLACE set, into OUT/<place>/; then the captures are compared as `latscope compare`
does: OUT/comparison.txt (the tables side by side, differences to the first place),
OUT/comparison.json and the overlaid distributions OUT/<table>.compare.{png,svg}.
Exit status 1 if any place failed (the others are still compared).
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

from labgrid.remote.client import start_session

from latscope.report import compare, formats

HERE = Path(__file__).resolve().parent


def places_with(coordinator, tags):
    """The names of the coordinator's places whose tags include ``tags``, sorted."""
    session = start_session(coordinator)
    try:
        return sorted(
            name for name, place in session.places.items() if tags.items() <= place.tags.items()
        )
    finally:
        session.loop.run_until_complete(session.stop())
        session.loop.run_until_complete(session.close())


def run_place(place, out, duration, pytest_args):
    """Starts test_latency.py on ``place``; returns the process (output in OUT/<place>.log)."""
    directory = out / place
    directory.mkdir(parents=True, exist_ok=True)
    log = open(out / f"{place}.log", "w")
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        str(HERE / "test_latency.py"),
        "--lg-env",
        str(HERE / "env.yaml"),
        "--latscope-out",
        str(directory),
        "--latscope-duration",
        str(duration),
        *pytest_args,
    ]
    return subprocess.Popen(
        command,
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "LG_PLACE": place},
        cwd=HERE,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tag",
        action="append",
        required=True,
        metavar="KEY=VALUE",
        help="a tag the places must have (repeat for several)",
    )
    parser.add_argument("--out", default="out/lab-compare", help="output directory")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds per capture")
    parser.add_argument(
        "--coordinator", default=os.environ.get("LG_COORDINATOR", "127.0.0.1:20408")
    )
    parser.add_argument("pytest_args", nargs="*", help="more options of test_latency.py")
    args = parser.parse_args()
    tags = dict(tag.split("=", 1) for tag in args.tag)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)

    places = places_with(args.coordinator, tags)
    if not places:
        sys.exit(f"compare_places: no place on {args.coordinator} has the tags {tags}")
    os.environ["LG_COORDINATOR"] = args.coordinator
    running = {place: run_place(place, out, args.duration, args.pytest_args) for place in places}
    failed = [place for place, process in running.items() if process.wait() != 0]
    for place in failed:
        print(f"{place}: failed, see {out / place}.log", file=sys.stderr)

    done = [place for place in places if place not in failed]
    if done:
        runs = compare.load_runs([out / place / "capture.lsc" for place in done], done)
        document = compare.comparison(runs)
        text = formats.named("text").comparison_text(document)
        (out / "comparison.txt").write_text(text)
        compare.write_directory(runs, document, out)  # comparison.json and the figures
        print(text, end="")
        print(f"compared {', '.join(done)}: {out / 'comparison.json'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
