"""Port names to ports: ``sim:soc`` and ``sim:gateware`` start a simulation
(:mod:`latscope.simulated`), anything else is a board's serial port or a pyserial URL. A port
(:class:`~latscope.link.device.Port`) is given not yet started: a capture session starts it."""

from collections.abc import Sequence
from os import PathLike
from typing import TextIO

from .link.device import Port
from .simulated.appliance import SIM_PORTS, SimulatedAppliance
from .simulated.soc import SocSimulation, SuiteSettings, build_soc

__all__ = ["DEFAULT_PORT", "is_simulated", "open_port", "open_selftest_port"]

#: The port of every ``latscope`` command without ``--port``: the full-system simulation,
#: where the suite runs on a simulated DUT (``sim:gateware`` has a scripted DUT that writes a
#: few markers a second, for protocol work).
DEFAULT_PORT = "sim:soc"


def open_port(
    port: str,
    extra_args: Sequence[str] = (),
    *,
    suite: SuiteSettings | None = None,
    truth: str | PathLike[str] | None = None,
    log: TextIO | None = None,
    sump: bool = False,
) -> Port:
    """The :class:`~latscope.link.device.Port` of a port name, not yet started: a simulation for
    ``sim:soc`` (the suite of ``suite``, a :class:`SuiteSettings`, built if needed) and
    ``sim:gateware``, else a serial port or pyserial URL. ``sump``: ``sim:soc``'s appliance
    with its SUMP mode (for sigrok's ``ols`` driver: ``latscope simulate``); without it, the
    simulator the demo builds, the same captures in about 60 % of the time. ``truth``: the
    ground-truth log ``sim:soc`` writes (its captures record it)."""
    for name, value in (("suite", suite), ("truth", truth)):
        if value is not None and port != "sim:soc":
            raise ValueError(f"{name}= is only for the sim:soc simulation")
    if port == "sim:soc":
        build = build_soc(suite or SuiteSettings(), log=log, sump=sump)
        return SocSimulation(build, extra_args, log=log, truth=truth)
    if is_simulated(port):
        return SimulatedAppliance(port, extra_args, log=log)
    return Port(port)


def is_simulated(port: str) -> bool:
    return port in SIM_PORTS


def open_selftest_port(
    port: str,
    *,
    loopback: bool = False,
    miswire: Sequence[str] = (),
    cpu: str = "VexRiscv_IMAC",
    log: TextIO | None = None,
) -> Port:
    """The :class:`~latscope.link.device.Port` ``latscope selftest`` runs against, not yet started.

    ``sim:soc``: the SoC runs the wiring program (``firmware/tools/wiring_sim.c``), held in
    reset until the wiring test's capture has started (:meth:`SocSimulation.release_dut`);
    with ``loopback`` the harness's jumper wires the IRQ output to EDGE0 and the strobe
    until then (``--jumper``), as a user takes the jumper off before starting the DUT's
    program; ``miswire``: the harness's ``--miswire`` faults in the wires from the SoC's
    marker pins to the appliance (``"swap:3,4"``, ``"stuck-low:9"``, ...; sim/README.md).
    ``sim:gateware``: with ``loopback`` its jumper instead of its scripted DUT. Anything
    else: a board's port."""
    if miswire and port != "sim:soc":
        raise ValueError("miswire= is only for the sim:soc simulation")
    if port == "sim:soc":
        build = build_soc(SuiteSettings(cpu=cpu, program="wiring_walk"), log=log, sump=False)
        args = ["--jumper"] if loopback else []
        for spec in miswire:
            args += ["--miswire", spec]
        return SocSimulation(build, args, log=log, release="on_request")
    return open_port(port, ["--loopback"] if loopback and port == "sim:gateware" else [], log=log)
