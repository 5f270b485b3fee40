"""latscope host software: capture, parse, store and analyse time-stamped RTOS events."""

__version__ = "0.1.0"
