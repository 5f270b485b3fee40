"""What every layer shares: the kinds of work that are always slow."""

import pytest

#: Markers of work that takes minutes, or a build that does (boards, netlists, PulseView, the
#: Verilator SoC), or a tool `make check` should not need (QEMU): a test marked with one is
#: slow too, so `make check` leaves it out.
SLOW_KINDS = ("boards", "netlist", "pulseview", "verilator", "qemu")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items):
    for item in items:
        if any(item.get_closest_marker(kind) for kind in SLOW_KINDS):
            item.add_marker(pytest.mark.slow)
