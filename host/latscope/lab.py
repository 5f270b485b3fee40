"""latscope appliances as labgrid resources: a plugin for labgrid's target factory.

A lab farm that already runs labgrid (coordinator, exporters, places; ``docs/lab.md``)
gets an appliance like any other part of a place. List this module under ``imports:`` of
the environment file and bind :class:`LatscopeDriver` to the appliance's serial port::

    targets:
      main:
        resources:
          RemotePlace: {name: !template "$LG_PLACE"}   # its NetworkSerialPort "latscope"
        drivers:
          LatscopeDriver: {bindings: {port: latscope}}
    imports: [latscope.lab]

The port is a local :class:`LatscopeAppliance`, ``USBSerialPort`` or ``RawSerialPort``, or
the ``NetworkSerialPort`` an exporter serves through ser2net (RFC 2217). The driver opens it
with latscope's own capture session (:mod:`latscope.api`, :mod:`latscope.capture.session`): the
same protocol code, capture loop, capture file and loss accounting as ``latscope capture``
on a local port; only the pyserial URL differs (``rfc2217://host:port``). A network link
that drops ends the capture with a :class:`~latscope.link.device.DeviceError` naming the URL;
the capture file keeps every event read before.
"""

import attr
from labgrid.driver import Driver
from labgrid.factory import target_factory
from labgrid.resource import NetworkSerialPort
from labgrid.resource.common import Resource
from labgrid.step import step
from labgrid.util.proxy import proxymanager

from .api import CaptureResult
from .api import open as open_appliance

__all__ = ["LatscopeAppliance", "LatscopeDriver", "network_url"]

_OPTIONAL_INT = attr.validators.optional(attr.validators.instance_of(int))
_OPTIONAL_STR = attr.validators.optional(attr.validators.instance_of(str))


@target_factory.reg_resource
@attr.s(eq=False)
class LatscopeAppliance(Resource):
    """An appliance on this computer: ``port`` is its serial port (``/dev/ttyUSB1``,
    ``/dev/serial/by-id/...``) or any pyserial URL, ``board`` the board's name
    (docs/boards.md: its UART rate, and the appliance must identify as it), ``speed`` its
    UART rate if not the board's (neither: found by trying the boards' rates)."""

    port = attr.ib(validator=attr.validators.instance_of(str))
    speed = attr.ib(default=None, validator=_OPTIONAL_INT)
    board = attr.ib(default=None, validator=_OPTIONAL_STR)


def network_url(host, port, protocol="rfc2217"):
    """The pyserial URL of a port that ser2net serves: RFC 2217 (what labgrid's exporter
    starts) or a raw TCP socket. ``ign_set_control``: ser2net does not confirm the
    modem-line settings that pyserial asks for, which the appliance does not use."""
    if protocol == "rfc2217":
        return f"rfc2217://{host}:{port}?ign_set_control"
    if protocol == "raw":
        return f"socket://{host}:{port}"
    raise ValueError(f"NetworkSerialPort protocol {protocol!r}: latscope knows rfc2217 and raw")


@target_factory.reg_driver
@attr.s(eq=False)
class LatscopeDriver(Driver):
    """Drives one appliance: identify it, set its IRQ generator, capture into a file until a
    condition holds, and give the tables and report of a capture. While active it holds
    one :class:`latscope.api.Session` (the link stays open between captures)."""

    bindings = {"port": {"LatscopeAppliance", "SerialPort", "NetworkSerialPort"}}
    #: The board's name (docs/boards.md) for a port that does not say it (a SerialPort or
    #: NetworkSerialPort): its rate unless the port names a speed, and the identity to expect.
    board = attr.ib(default=None, validator=_OPTIONAL_STR)

    def __attrs_post_init__(self):
        super().__attrs_post_init__()
        self.session = None

    @property
    def url(self):
        """What latscope opens: the local port, or the URL of the exported one."""
        if isinstance(self.port, NetworkSerialPort):
            host, port = proxymanager.get_host_and_port(self.port)
            return network_url(host, port, self.port.protocol)
        return self.port.port

    @property
    def speed(self):
        # A NetworkSerialPort's speed is what the exporter's USBSerialPort/RawSerialPort
        # says; RFC 2217 sets it on the far end. None: the board's.
        return self.port.speed

    @property
    def board_name(self):
        """The board: the driver's, else the LatscopeAppliance's (None: any)."""
        return self.board or getattr(self.port, "board", None)

    def on_activate(self):
        self.session = open_appliance(self.url, baud=self.speed, board=self.board_name)

    def on_deactivate(self):
        session, self.session = self.session, None
        if session is not None:
            session.close()

    @Driver.check_active
    @step()
    def identify(self):
        """The appliance's identity and STATUS as a plain dict (``latscope info --json``)."""
        return self.session.info()

    @Driver.check_active
    @step(args=["fields"])
    def configure_irq(self, settings=None, **fields):
        """Sets the IRQ generator (an :class:`latscope.IrqSettings` or its fields in cycles:
        ``period``, ``jitter_mask``, ``width``, ``enable``...); returns the settings."""
        return self.session.configure_irq(settings, **fields)

    @Driver.check_active
    @step(args=["marker", "delays"])
    def configure_trigger(self, marker, delays="0"):
        """Fires the IRQ ``delays`` after each ``marker`` in later captures
        (:meth:`latscope.api.Session.configure_trigger`: ``"IL_A:THREAD"``, ``"0:520ns:8ns"``;
        None: off); returns the settings as used, in capture cycles."""
        return self.session.configure_trigger(marker, delays)

    @Driver.check_active
    @step(args=["output"])
    def capture(
        self,
        output,
        *,
        duration=None,
        until_samples=None,
        events=None,
        timeout=None,
        info="",
        load="none",
        cache="on",
    ):
        """Captures into the capture file ``output`` until the first of ``duration``
        seconds, ``events`` events, ``until_samples=(table, n)`` samples, ``timeout``
        seconds (then DeviceError); returns a :class:`latscope.api.CaptureResult`
        (``rows()``, ``report(directory)``). ``info`` goes into the file's metadata; by
        default it names the labgrid target and port. ``load`` (``"bus"``, ``"bus:50"``) and
        ``cache``: what the DUT's firmware runs beside the suite, recorded in the file."""
        from .capture.conditions import Conditions, parse_load

        info = info or f"labgrid target {self.target.name}, {self.url}"
        conditions = Conditions(*parse_load(load), cache)
        return self.session.capture(
            output=output,
            duration=duration,
            until_samples=until_samples,
            events=events,
            timeout=timeout,
            info=info,
            conditions=conditions,
        )

    @step(args=["capture"])
    def tables(self, capture):
        """The sample tables of a capture (a result or a capture file) as plain dicts:
        ``name``, ``samples``, ``min_ns``, ``max_ns``, ``avg_ns``... (``latscope analyze``)."""
        if not isinstance(capture, CaptureResult):
            capture = CaptureResult.load(capture)
        return capture.rows()

    @step(args=["capture", "directory"])
    def report(self, capture, directory):
        """Writes the report of ``latscope report`` for a capture into ``directory``."""
        if not isinstance(capture, CaptureResult):
            capture = CaptureResult.load(capture)
        return capture.report(directory)
