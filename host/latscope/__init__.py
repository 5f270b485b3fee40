"""latscope host software: capture, parse, store and analyse time-stamped RTOS events."""

from typing import TYPE_CHECKING, Unpack

from .version import __version__

if TYPE_CHECKING:
    from .api import CaptureResult, IrqSettings, OpenOptions, Session
    from .capture.conditions import Conditions
    from .simulated.soc import SuiteSettings

__all__ = ["__version__", "open"]


def open(port: str | None = None, **options: "Unpack[OpenOptions]") -> "Session":
    """Connects to an appliance: the lab-script API, see :func:`latscope.api.open`. ``port``
    None: its default, ``latscope.ports.DEFAULT_PORT`` (named there only, and imported with
    the API, not with this package)."""
    from .api import open as open_session

    return open_session(port, **options) if port is not None else open_session(**options)


def __getattr__(
    name: str,
) -> "type[SuiteSettings | IrqSettings | CaptureResult | Session | Conditions]":
    # Lazy, so that importing latscope does not start numpy/serial imports for every tool.
    if name == "SuiteSettings":
        from .simulated.soc import SuiteSettings

        return SuiteSettings
    if name == "Conditions":
        from .capture.conditions import Conditions

        return Conditions
    if name in ("IrqSettings", "CaptureResult", "Session"):
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'latscope' has no attribute {name!r}")
