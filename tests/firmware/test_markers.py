"""The marker encoding's C header is generated from latscope_defs.markers: the committed one is
current (the firmware and the host agree on every value, the kernel's tick points too)."""

from pathlib import Path

from latscope_defs.markers import KERNEL_TICK_ENTRY, KERNEL_TICK_EXIT, Point, c_header

HEADER = Path(__file__).resolve().parents[2] / "firmware" / "include" / "latscope" / "markers.h"


def test_committed_header_is_current():
    assert HEADER.read_text() == c_header(), (
        "run: python -m latscope_defs.markers --header > firmware/include/latscope/markers.h"
    )


def test_tick_points_are_not_the_handler_point():
    # The analysis takes KERNEL/ISR_ENTRY as the handler-entry marker of the ILH tables.
    assert {KERNEL_TICK_ENTRY, KERNEL_TICK_EXIT}.isdisjoint({Point.ISR_ENTRY})
