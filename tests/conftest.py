"""What every layer shares: the kinds of work that are always slow, how `make test`
shares the tests out between its two workers, and a user configuration of their own."""

import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import pytest

#: Markers of work that takes minutes, or a build that does (boards, netlists, PulseView, the
#: Verilator SoC), or a tool `make check` should not need (QEMU): a test marked with one is
#: slow too, so `make check` leaves it out.
SLOW_KINDS = ("boards", "netlist", "pulseview", "verilator", "qemu")

#: Units that take minutes, queued first (:func:`work_unit`; tests/README.md, "Two workers"),
#: so that the shorter ones fill both workers' time around them and no long one starts last;
#: the rest follow by test count (pytest-xdist's own order). README's commands are the
#: longest (two full-suite demos, one profile-guided, captures, a sweep: 1871 s in a full
#: run at load 9). The ground-truth pairing is third: pytest-xdist gives a worker its
#: next unit while it runs the last two tests of the one it has, so the third unit follows
#: the first on its worker, and the two need the same profile-guided simulator build (the
#: other worker would wait for it under its build lock). The rest by their durations
#: measured with --durations=0 -p no:xdist at load 8-15 (a first build of a simulator
#: included where the file was its first user).
LONGEST_FIRST = (
    "tests/system/test_readme_commands.py",
    "tests/system/test_capture_command.py",  # 490 s (a simulator build 311 s)
    "tests/system/test_truth_pairing.py",
    "tests/system/test_examples.py",  # 308 s (the Lite simulator's build)
    "tests/system/test_loop_sim.py",  # 243 s (the SUMP simulator's build 230 s)
    "tests/system/test_first_hour.py",  # 167 s
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
    # The longest units first, then by test count (a stable sort: every unit keeps its own
    # order); the scheduler below keeps this order.
    counts = Counter(work_unit(item.nodeid) for item in items)

    def queue_position(item):
        unit = work_unit(item.nodeid)
        rank = LONGEST_FIRST.index(unit) if unit in LONGEST_FIRST else len(LONGEST_FIRST)
        return rank, -counts[unit]

    items.sort(key=queue_position)


def work_unit(nodeid):
    """What one worker runs in a row (tests/README.md, "Two workers"): one board's tests
    (which share its synthesis: the bitstream build, the netlist simulation, the packer's
    checks); else a test file, so that its module fixtures are made once. No two units share a build
    they could change under the other: the suite's SoC builds go into a directory per set
    of settings, the simulators' under their build lock, the rest into directories of
    their own."""
    path, _, name = nodeid.partition("::")
    parts = Path(path).parts
    layer = parts[1] if len(parts) > 2 and parts[0] == "tests" else None
    if layer == "boards" and name.endswith("]"):
        from latscope_boards import BOARDS

        board = name[name.index("[") + 1 : -1]
        if board in BOARDS:
            return f"board {board}"
    return path


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: unknown to pytest alone
def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's scheduling by scope with :func:`work_unit` as the scope (its own
    ``--dist loadgroup`` does not work with pytest 9: it renames a node id pytest no longer
    reads), in the order of the collection (:data:`LONGEST_FIRST`) rather than its own by
    test count."""
    from xdist.scheduler import LoadScopeScheduling

    config.option.loadscopereorder = False

    class WorkUnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return work_unit(nodeid)

    return WorkUnitScheduling(config, log)
