"""latscope host software: capture, parse, store and analyse time-stamped RTOS events."""

from .version import __version__

__all__ = ["__version__", "open"]


def open(port="sim:gateware", **options):
    """Connects to an appliance: the lab-script API, see :func:`latscope.api.open`."""
    from .api import open as open_session

    return open_session(port, **options)


def __getattr__(name):
    # Lazy, so that importing latscope does not start numpy/serial imports for every tool.
    if name == "SuiteSettings":
        from .simulated.soc import SuiteSettings

        return SuiteSettings
    if name in ("IrqSettings", "CaptureResult", "Session"):
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'latscope' has no attribute {name!r}")
