"""What a capture file's METADATA must hold: checked field by field, by the writer before it
writes and by the reader before anything uses it (``docs/capture-format.md``, "METADATA
payload"). One definition, so a file one side writes the other side reads.

:func:`check_metadata` returns nothing or raises :class:`MetadataError` naming the field
(``identity.clock_hz``) and what is wrong with it.
"""

from latscope_defs.protocol import EDGE_SOURCES, VERSIONS, Source

__all__ = ["MetadataError", "check_metadata", "check_end"]

#: Sources whose pin delay the identity may give (event sources).
_LATENCY_SOURCES = {
    source.name for source in (Source.MARKER, Source.BUS, Source.IRQ, Source.LOSS, *EDGE_SOURCES)
}


class MetadataError(ValueError):
    """A METADATA field that cannot be used: ``field`` (dotted path) and ``reason``."""

    def __init__(self, field, reason):
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def _integer(value, field, low, high):
    # bool is an int in Python, but true is no clock frequency.
    if type(value) is not int:
        raise MetadataError(field, f"must be an integer, not {_kind(value)}")
    if not low <= value <= high:
        raise MetadataError(field, f"{value} is outside {low} .. {high}")
    return value


def _kind(value):
    return {
        type(None): "null",
        bool: "a boolean",
        str: "a string",
        list: "a list",
        dict: "an object",
        float: "a number",
    }.get(type(value), type(value).__name__)


def _optional(mapping, key, field, check):
    if key in mapping and mapping[key] is not None:
        check(mapping[key], f"{field}.{key}" if field else key)


def _text(value, field):
    if not isinstance(value, str):
        raise MetadataError(field, f"must be a string, not {_kind(value)}")


def _object(value, field):
    if not isinstance(value, dict):
        raise MetadataError(field, f"must be an object, not {_kind(value)}")


#: identity fields: (key, low, high); clock_hz is required, the others have defaults.
_IDENTITY_INTEGERS = [
    ("clock_hz", 1, 10**10),
    ("stamp_shift", 0, 4),
    ("marker_width", 1, 32),
    ("edge_count", 0, 8),
    ("bus_width", 0, 32),
    ("fifo_depth", 0, 1 << 24),
    ("link_clock_hz", 0, 10**10),
    ("version", min(VERSIONS), max(VERSIONS)),
    ("trigger_latency", 0, 255),
]
_IRQ_INTEGERS = [
    ("period", 0, (1 << 32) - 1),
    ("width", 0, (1 << 32) - 1),
    ("jitter_mask", 0, (1 << 32) - 1),
]


def _check_identity(identity):
    _object(identity, "identity")
    if identity.get("clock_hz") is None:
        raise MetadataError("identity.clock_hz", "missing (the capture clock, Hz)")
    for key, low, high in _IDENTITY_INTEGERS:
        _optional(
            identity,
            key,
            "identity",
            lambda value, field, low=low, high=high: _integer(value, field, low, high),
        )
    _optional(identity, "board", "identity", _text)
    latency = identity.get("latency")
    if latency is not None:
        _object(latency, "identity.latency")
        for name, cycles in latency.items():
            if name not in _LATENCY_SOURCES:
                raise MetadataError(f"identity.latency.{name}", "no such event source")
            _integer(cycles, f"identity.latency.{name}", 0, 1 << 16)


def _check_irq(irq, field="irq"):
    _object(irq, "irq")
    for key, low, high in _IRQ_INTEGERS:
        _optional(
            irq,
            key,
            "irq",
            lambda value, field, low=low, high=high: _integer(value, field, low, high),
        )
    for key in ("enable", "one_shot", "active_low"):
        if key in irq and not isinstance(irq[key], bool):
            raise MetadataError(f"irq.{key}", f"must be true or false, not {_kind(irq[key])}")


def check_metadata(metadata):
    """Raises :class:`MetadataError` unless ``metadata`` is a METADATA object latscope can
    use: an object with ``identity`` (``clock_hz`` required), optional ``irq``, and text
    ``start_time``, ``port``, ``test_info``, ``loop`` an edge channel name; further keys
    may hold any JSON."""
    if not isinstance(metadata, dict):
        raise MetadataError("METADATA", f"must be a JSON object, not {_kind(metadata)}")
    if "identity" not in metadata:
        raise MetadataError("identity", "missing (the device's identify reply)")
    _check_identity(metadata["identity"])
    _optional(metadata, "irq", "", _check_irq)
    for key in ("start_time", "port", "test_info"):
        _optional(metadata, key, "", _text)
    _optional(metadata, "loop", "", _check_loop)


def _check_loop(loop, field):
    """The IRQ loop's channel: an edge channel's name (``latscope capture --loop``)."""
    names = {source.name for source in EDGE_SOURCES}
    if loop not in names:
        raise MetadataError(field, f"must be an edge channel name (EDGE0 .. EDGE7), not {loop!r}")


def check_end(end):
    """Raises :class:`MetadataError` unless ``end`` is an END object as the writer makes it:
    ``data_bytes`` and ``chunks`` (integers), ``stats`` (object or null) whose
    ``device_status``, if given, is an object; ``metadata`` (format 2) a METADATA object."""
    if not isinstance(end, dict):
        raise MetadataError("END", f"must be a JSON object, not {_kind(end)}")
    for key in ("data_bytes", "chunks"):
        _integer(end.get(key), key, 0, 1 << 62)
    stats = end.get("stats")
    if stats is not None:
        _object(stats, "stats")
        _optional(stats, "device_status", "stats", _object)
    if "metadata" in end:
        check_metadata(end["metadata"])
