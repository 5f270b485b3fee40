"""What every layer shares: the kinds of work that are always slow, how `make test`
shares the tests out between its two workers, and a user configuration of their own."""

import os
import shutil
import tempfile
from pathlib import Path

import pytest

#: Markers of work that takes minutes, or a build that does (boards, netlists, PulseView, the
#: Verilator SoC), or a tool `make check` should not need (QEMU): a test marked with one is
#: slow too, so `make check` leaves it out.
SLOW_KINDS = ("boards", "netlist", "pulseview", "verilator", "qemu")

#: The layers whose tests build in the repository's own directories with make (the suite's
#: default firmware/suite/build, the demo's, the sim/firmware programs): run side by side,
#: two of them could rebuild the other's binary between its build and its run.
REPOSITORY_BUILDS = ("system", "firmware")

#: Files of those layers that build only in directories of their own (their BUILD_DIR under
#: firmware/suite/build, the simulator in sim/build under its build lock) or build nothing
#: (the gateware in Amaranth's simulator, sim:gateware), so they may run beside the others.
OWN_BUILD_DIRS = (
    "system/test_board_presets.py",
    "system/test_cpu_truth.py",
    "system/test_end_to_end.py",
    "system/test_ground_truth.py",
    "system/test_irq_timeout_shown.py",
    "system/test_lab_farm.py",
    "system/test_loads_soc.py",
    "system/test_network_port.py",
    "system/test_selftest.py",
    "system/test_sigrok.py",
    "system/test_sim_variants.py",
    "system/test_stop_signals.py",
    "system/test_sweep.py",
)


def pytest_configure(config):
    """The tests' own empty ``$XDG_CONFIG_HOME`` (subprocesses inherit it): no test reads or
    writes the user's configuration, where a saved loop calibration
    (``latscope.link.calibration``) would change every capture on its board. A test that
    saves one points ``XDG_CONFIG_HOME`` at its own ``tmp_path``."""
    home = tempfile.mkdtemp(prefix="latscope-tests-config-")
    os.environ["XDG_CONFIG_HOME"] = home
    config.add_cleanup(lambda: shutil.rmtree(home, ignore_errors=True))


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items):
    for item in items:
        if any(item.get_closest_marker(kind) for kind in SLOW_KINDS):
            item.add_marker(pytest.mark.slow)
    # The repository's builds first (a stable sort: every unit keeps its own order).
    items.sort(key=lambda item: work_unit(item.nodeid) != REPOSITORY_UNIT)


def work_unit(nodeid):
    """What one worker runs in a row (tests/README.md, "Two workers"): all of
    :data:`REPOSITORY_BUILDS` but :data:`OWN_BUILD_DIRS`, which share build directories;
    one board's tests (its bitstream build, then its netlist simulation, which takes the
    netlist the build left); else a test file, so that its module fixtures are made once."""
    path, _, name = nodeid.partition("::")
    parts = Path(path).parts
    layer = parts[1] if len(parts) > 2 and parts[0] == "tests" else None
    if layer in REPOSITORY_BUILDS and "/".join(parts[1:]) not in OWN_BUILD_DIRS:
        return REPOSITORY_UNIT
    if layer == "boards" and name.endswith("]"):
        from latscope_boards import BOARDS

        board = name[name.index("[") + 1 : -1]
        if board in BOARDS:
            return f"board {board}"
    return path


#: The longest unit: first in the queue, so that the boards' units run beside it.
REPOSITORY_UNIT = "repository builds"


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: unknown to pytest alone
def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's scheduling by scope with :func:`work_unit` as the scope (its own
    ``--dist loadgroup`` does not work with pytest 9: it renames a node id pytest no longer
    reads)."""
    from xdist.scheduler import LoadScopeScheduling

    class WorkUnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return work_unit(nodeid)

    return WorkUnitScheduling(config, log)
