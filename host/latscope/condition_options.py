"""The command-line options of a capture's load and cache conditions (``--load``,
``--cache``; :mod:`latscope.capture.conditions`), shared by ``latscope capture`` and the demo."""

import argparse

from .capture.conditions import CACHE_STATES, LOAD_PARAM_RANGE, LOADS, Conditions
from .values import whole

__all__ = ["load_option", "conditions_options", "conditions_of"]

#: The suite's LOAD_PARAM, checked as every numeric option is (latscope.values).
load_param = whole("load parameter", *LOAD_PARAM_RANGE)


def load_option(text):
    """``--load bus:50``: a load profile and its parameter (latscope.capture.conditions)."""
    name, colon, param = text.partition(":")
    value = load_param(param) if colon else None
    try:
        Conditions(name, value)  # the profile, and whether it takes a parameter
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return name, value


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
