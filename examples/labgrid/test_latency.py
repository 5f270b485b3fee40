"""The latency capture on one labgrid place, as a nightly run does it:

    LG_COORDINATOR=coordinator:20408 LG_PLACE=rtos-board-3 \
        pytest examples/labgrid/test_latency.py --lg-env examples/labgrid/env.yaml \
        --latscope-out out/rtos-board-3 --latscope-duration 600

acquires the place (conftest.py), identifies its appliance, sets the IRQ generator,
captures (the DUT runs the suite: on a real place, flash and reset it first with the
place's own drivers), and writes capture.lsc, the report (report.html, results.json...)
and identity.json into the output directory. It fails if the link corrupted anything.
"""

import json


def test_latency_capture(appliance, place, out_dir, pytestconfig):
    identity = appliance.identify()
    (out_dir / "identity.json").write_text(json.dumps({"place": place, **identity}, indent=2))

    # By default an IRQ about every 50 us at 100 MHz, with 0..255 cycles of jitter.
    appliance.configure_irq(
        period=pytestconfig.getoption("latscope_irq_period"), jitter_mask=0xFF, width=100
    )
    samples = pytestconfig.getoption("latscope_samples")
    capture = appliance.capture(
        out_dir / "capture.lsc",
        duration=pytestconfig.getoption("latscope_duration"),
        until_samples=("IL-a-1", samples) if samples else None,
        info=f"labgrid place {place}",
    )

    rows = appliance.tables(capture)
    paths = appliance.report(capture, out_dir)
    for row in rows:
        if row["samples"]:
            print(
                f"{place}: {row['name']:10s} {row['samples']:7d} samples, min/avg/max "
                f"{row['min_ns']:.0f}/{row['avg_ns']:.1f}/{row['max_ns']:.0f} ns"
            )
    print(f"{place}: report {paths['html']}")

    # Losses to a full FIFO are counted and reported; a corrupted link is a failure.
    stats = capture.capture.parser_stats
    assert stats.segments_bad == 0 and stats.records_dropped == 0, stats
    assert capture.capture.file_stats.complete
