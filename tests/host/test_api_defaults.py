"""``latscope.open()`` has the ``latscope`` command's defaults, from the same definitions: the
port (``DEFAULT_PORT``, the simulated SoC) and the IRQ generator (``DEFAULT_IRQ``, with
jitter), the latter read back from a real session on the gateware simulation."""

import inspect

import latscope
from latscope.cli import build_parser
from latscope.link.device import DEFAULT_IRQ
from latscope.ports import DEFAULT_PORT


def test_open_defaults_to_the_commands_port():
    from latscope.api import open as api_open

    assert inspect.signature(api_open).parameters["port"].default == DEFAULT_PORT
    # latscope.open (lazy: no API import with the package) leaves the default to it.
    assert inspect.signature(latscope.open).parameters["port"].default is None
    assert build_parser().parse_args(["capture", "-o", "x.lsc"]).port == DEFAULT_PORT


def test_open_sets_the_commands_irq_settings():
    args = build_parser().parse_args(["capture", "-o", "x.lsc"])
    assert (args.irq_period, args.irq_jitter, args.irq_width) == (
        DEFAULT_IRQ.period,
        DEFAULT_IRQ.jitter_mask,
        DEFAULT_IRQ.width,
    )
    with latscope.open("sim:gateware") as dev:
        assert dev.irq == DEFAULT_IRQ
        assert dev.irq.jitter_mask == 0xFF  # what the demo runs: 0..255 cycles of jitter
