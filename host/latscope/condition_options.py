"""The command-line options of a capture's load and cache conditions (``--load``,
``--cache``; :mod:`latscope.capture.conditions`), shared by ``latscope capture`` and the demo."""

import argparse

from .capture.conditions import CACHE_STATES, LOADS, Conditions, parse_load

__all__ = ["load_option", "conditions_options", "conditions_of"]


def load_option(text):
    """``--load bus:50``: a load profile and its parameter (latscope.capture.conditions)."""
    try:
        return parse_load(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def conditions_options(p):
    """``--load`` and ``--cache``: what the DUT runs besides the suite (docs/tests.md)."""
    p.add_argument(
        "--load",
        type=load_option,
        default=("none", None),
        metavar="NAME[:PARAM]",
        help=f"background load on the DUT: {', '.join(LOADS)}, with its parameter after ':' "
        "(docs/tests.md, Load profiles); sim:soc builds it, for a board it is recorded "
        "as the DUT's firmware was built (default: none)",
    )
    p.add_argument(
        "--cache",
        choices=CACHE_STATES,
        default="on",
        help="the DUT CPU's caches (sim:soc: off builds the simulator without them; default: on)",
    )


def conditions_of(args):
    """The :class:`~latscope.capture.conditions.Conditions` of ``--load`` and ``--cache``."""
    load, param = args.load
    return Conditions(load, param, args.cache)
