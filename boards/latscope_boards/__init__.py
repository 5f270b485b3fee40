"""latscope on real FPGA boards: platforms, PLLs, pin maps, bitstream builds.

``BOARDS`` maps a board's name (``make bitstream BOARD=<name>``) to the function that
describes it; ``python -m latscope_boards --help`` builds, programs and documents them.
"""

from . import ice40_hx8k_b_evn, icebreaker, ulx3s

__all__ = [
    "BOARDS",
    "DEFAULT_BOARD",
    "get_board",
    "identify_names",
    "record_name",
    "recorded_builds",
    "spi_builds",
    "variants",
]

BOARDS = {
    "ice40-hx8k-b-evn": ice40_hx8k_b_evn.board,
    "ulx3s": ulx3s.board,
    "icebreaker": icebreaker.board,
}
DEFAULT_BOARD = "ice40-hx8k-b-evn"

#: The boards with builds of their own beside the shipped one (``variant``, ``make bitstream
#: VARIANT=``): the module that names them (``VARIANTS``, ``DEFAULT_VARIANT``). The ULX3S's
#: are its ECP5 sizes, the iCEBreaker's its bring-up, memory bus and SPI-link builds, the
#: HX8K's its memory bus build.
_VARIANT_MODULES = {"ice40-hx8k-b-evn": ice40_hx8k_b_evn, "ulx3s": ulx3s, "icebreaker": icebreaker}


def get_board(name, **options):
    """The :class:`~latscope_boards.board.Board` called ``name``; ``options`` (``clock_hz``,
    ``variant`` for a board of :func:`variants`) that are None keep the board's defaults."""
    try:
        factory = BOARDS[name]
    except KeyError:
        raise ValueError(f"unknown board {name!r}; boards: {', '.join(BOARDS)}") from None
    if options.get("variant") is not None and name not in _VARIANT_MODULES:
        raise ValueError(f"board {name!r} has no variants")
    return factory(**{key: value for key, value in options.items() if value is not None})


def variants(name):
    """(variants, the default one) of board ``name``: ``((), None)`` for a board without."""
    module = _VARIANT_MODULES.get(name)
    if module is None:
        return (), None
    return tuple(module.VARIANTS), module.DEFAULT_VARIANT


def spi_builds(name):
    """{variant: board} of board ``name``'s builds that have the SPI link (docs/spi-link.md),
    the shipped one first; the variant None for a board without variants."""
    names, shipped = variants(name)
    builds = {
        variant: get_board(name, variant=variant)
        for variant in sorted(names, key=lambda variant: variant != shipped)
    }
    return {
        variant: board
        for variant, board in (builds or {None: get_board(name)}).items()
        if board.spi_hz
    }


def identify_names(name):
    """Every board name the IDENTIFY reply of board ``name``'s bitstreams gives: one per ECP5
    size for the ULX3S (``ulx3s-85f``, ...), else the one (the iCEBreaker's bring-up build
    identifies as the full one: same pins, clocks and link; its SPI-link build names itself,
    ``icebreaker-spi``, so that the host knows the link is there)."""
    names = [get_board(name, variant=variant).identify_name for variant in variants(name)[0]]
    return tuple(dict.fromkeys(names)) or (get_board(name).identify_name,)


def record_name(name, variant=None):
    """The name of the record of board ``name``'s build (boards/results/<it>.json), and of
    its build directory: the board's name, with the variant for one other than the default
    (``ulx3s-12f``, ``icebreaker-bringup``, ``ice40-hx8k-b-evn-membus``; the 85F's is
    ``ulx3s``)."""
    default = variants(name)[1]
    if variant is None or variant.lower() == default.lower():
        return name
    return f"{name}-{variant.lower()}"


def recorded_builds():
    """(record name, board) of every build recorded in boards/results, in the docs' order:
    each board as shipped, then each other variant (issue 28: every ULX3S size is built once,
    CI builds the 85F; the iCEBreaker's bring-up, memory bus and SPI-link builds; the HX8K's
    memory bus build)."""
    builds = [(name, get_board(name)) for name in BOARDS]
    for name in BOARDS:
        names, default = variants(name)
        builds += [
            (record_name(name, variant), get_board(name, variant=variant))
            for variant in names
            if variant != default
        ]
    return builds
