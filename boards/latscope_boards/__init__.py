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
]

BOARDS = {
    "ice40-hx8k-b-evn": ice40_hx8k_b_evn.board,
    "ulx3s": ulx3s.board,
    "icebreaker": icebreaker.board,
}
DEFAULT_BOARD = "ice40-hx8k-b-evn"


def get_board(name, **options):
    """The :class:`~latscope_boards.board.Board` called ``name``; ``options`` (``clock_hz``,
    ``variant`` for the ULX3S) that are None keep the board's defaults."""
    try:
        factory = BOARDS[name]
    except KeyError:
        raise ValueError(f"unknown board {name!r}; boards: {', '.join(BOARDS)}") from None
    return factory(**{key: value for key, value in options.items() if value is not None})


def identify_names(name):
    """Every board name the IDENTIFY reply of board ``name``'s bitstreams gives: one per ECP5
    size for the ULX3S (``ulx3s-85f``, ...), else the one."""
    if name == "ulx3s":
        return tuple(ulx3s.board(variant=variant).identify_name for variant in ulx3s.VARIANTS)
    return (get_board(name).identify_name,)


def record_name(name, variant=None):
    """The name of the record of board ``name``'s shipped build (boards/results/<it>.json):
    the board's name, with the ECP5 size for a ULX3S other than the default one
    (``ulx3s-12f``; the 85F's is ``ulx3s``)."""
    if variant is None or variant.upper() == ulx3s.DEFAULT_VARIANT:
        return name
    return f"{name}-{variant.lower()}"


def recorded_builds():
    """(record name, board) of every build recorded in boards/results, in the docs' order:
    each board as shipped, then each other ULX3S size (issue 28: every size is built once;
    CI builds the 85F)."""
    builds = [(name, get_board(name)) for name in BOARDS]
    builds += [
        (record_name("ulx3s", variant), ulx3s.board(variant=variant))
        for variant in ulx3s.VARIANTS
        if variant != ulx3s.DEFAULT_VARIANT
    ]
    return builds
