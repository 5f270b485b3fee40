"""What a capture file's METADATA must hold: checked field by field, by the writer before it
writes and by the reader before anything uses it (``docs/capture-format.md``, "METADATA
payload"). One definition, so a file one side writes the other side reads.

:func:`check_metadata` returns nothing or raises :class:`MetadataError` naming the field
(``identity.clock_hz``) and what is wrong with it. A file holds several copies of the
metadata; :func:`choose_copy` says which one to use and which disagree with it.
"""

import json
import re
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Literal, NamedTuple

from latscope_defs.protocol import EDGE_SOURCES, TRIGGER_SOURCES, VERSIONS, Source

from ..link.calibration import Calibration
from .conditions import Conditions

__all__ = [
    "JsonObject",
    "MetadataError",
    "check_metadata",
    "check_end",
    "MetadataCopy",
    "choose_copy",
    "differing_fields",
    "check_text",
    "without_surrogates",
]

#: A JSON object as json.loads gives it (METADATA, END): its values are of whatever JSON type
#: the file holds, known only once the checks below have passed.
JsonObject = dict[str, Any]

#: Sources whose pin delay the identity may give (event sources).
_LATENCY_SOURCES = {
    source.name for source in (Source.MARKER, Source.BUS, Source.IRQ, Source.LOSS, *EDGE_SOURCES)
}


class MetadataError(ValueError):
    """A METADATA field that cannot be used: ``field`` (dotted path) and ``reason``."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def _integer(value: object, field: str, low: int, high: int) -> int:
    # bool is an int in Python, but true is no clock frequency.
    if type(value) is not int:
        raise MetadataError(field, f"must be an integer, not {_kind(value)}")
    if not low <= value <= high:
        raise MetadataError(field, f"{value} is outside {low} .. {high}")
    return value


def _kind(value: object) -> str:
    return {
        type(None): "null",
        bool: "a boolean",
        str: "a string",
        list: "a list",
        dict: "an object",
        float: "a number",
    }.get(type(value), type(value).__name__)


def _optional(
    mapping: dict[str, object], key: str, field: str, check: Callable[[object, str], object]
) -> None:
    if key in mapping and mapping[key] is not None:
        check(mapping[key], f"{field}.{key}" if field else key)


def _text(value: object, field: str) -> None:
    if not isinstance(value, str):
        raise MetadataError(field, f"must be a string, not {_kind(value)}")


def _object(value: object, field: str) -> dict[str, object]:
    """``value`` if it is a JSON object."""
    if not isinstance(value, dict):
        raise MetadataError(field, f"must be an object, not {_kind(value)}")
    return value


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
    ("irq_pad_delay", 0, 255),
]
_IRQ_INTEGERS = [
    ("period", 0, (1 << 32) - 1),
    ("width", 0, (1 << 32) - 1),
    ("jitter_mask", 0, (1 << 32) - 1),
]


def _delay_ns(value: object, field: str) -> None:
    """A delay in ns: a number from 0 to 1000 (a pad delay is a few ns)."""
    # bool is an int in Python, but true is no delay.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MetadataError(field, f"must be a number, not {_kind(value)}")
    if not 0 <= value <= 1000:
        raise MetadataError(field, f"{value} is outside 0 .. 1000 ns")


def _check_identity(value: object) -> None:
    identity = _object(value, "identity")
    if identity.get("clock_hz") is None:
        raise MetadataError("identity.clock_hz", "missing (the capture clock, Hz)")
    for key, low, high in _IDENTITY_INTEGERS:
        _optional(
            identity,
            key,
            "identity",
            partial(_integer, low=low, high=high),
        )
    _optional(identity, "board", "identity", _text)
    _optional(identity, "irq_pad_delay_ns", "identity", _delay_ns)
    if identity.get("latency") is not None:
        latency = _object(identity["latency"], "identity.latency")
        for name, cycles in latency.items():
            if name not in _LATENCY_SOURCES:
                raise MetadataError(f"identity.latency.{name}", "no such event source")
            _integer(cycles, f"identity.latency.{name}", 0, 1 << 16)


def _check_settings(
    value: object,
    field: str,
    integers: Sequence[tuple[str, int, int]],
    flags: Sequence[str],
) -> JsonObject:
    """An object of settings: its ``integers`` ((key, low, high) each) and its ``flags``
    (true or false), where present."""
    settings = _object(value, field)
    for key, low, high in integers:
        _optional(settings, key, field, partial(_integer, low=low, high=high))
    for key in flags:
        if key in settings and not isinstance(settings[key], bool):
            raise MetadataError(
                f"{field}.{key}", f"must be true or false, not {_kind(settings[key])}"
            )
    return settings


def _check_irq(value: object, field: str = "irq") -> None:
    _check_settings(value, field, _IRQ_INTEGERS, ("enable", "one_shot", "active_low"))


#: trigger fields: (key, low, high); the device's own limits are narrower (TriggerConfig).
_TRIGGER_INTEGERS = [
    ("match", 0, (1 << 32) - 1),
    ("mask", 0, (1 << 32) - 1),
    ("every", 1, (1 << 16) - 1),
    ("start", 0, (1 << 16) - 1),
    ("stop", 0, (1 << 16) - 1),
    ("step", 0, (1 << 16) - 1),
    ("width", 1, 1 << 16),
]


def _check_trigger(value: object, field: str) -> None:
    """The IRQ trigger's settings (``latscope capture --irq-trigger``)."""
    trigger = _check_settings(value, field, _TRIGGER_INTEGERS, ("arm", "enable"))
    names = {source.name for source in TRIGGER_SOURCES}
    if trigger.get("source") not in names:
        raise MetadataError(f"{field}.source", f"must be one of {', '.join(sorted(names))}")


_SURROGATE = re.compile("[\ud800-\udfff]")


def without_surrogates(value: object) -> object:
    """``value`` (parsed JSON) with every lone surrogate (``"\\ud800"`` in the JSON text:
    no character, so not printable or writable as UTF-8) replaced by U+FFFD, in keys too."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [without_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {without_surrogates(k): without_surrogates(v) for k, v in value.items()}
    return value


def check_text(value: object, field: str = "METADATA") -> None:
    """Raises :class:`MetadataError` naming the first string in ``value`` (in keys too) that
    holds a lone surrogate: the writer stores text only (a reader would show U+FFFD)."""
    if isinstance(value, str):
        if _SURROGATE.search(value):
            raise MetadataError(field, f"not text: {value!r} holds a lone surrogate")
    elif isinstance(value, list):
        for item in value:
            check_text(item, field)
    elif isinstance(value, dict):
        for key, item in value.items():
            check_text(key, field)
            check_text(item, f"{field}.{key}" if field != "METADATA" else str(key))


def check_metadata(metadata: object) -> None:
    """Raises :class:`MetadataError` unless ``metadata`` is a METADATA object latscope can
    use: an object with ``identity`` (``clock_hz`` required), optional ``irq`` and
    ``trigger``, and text ``start_time``, ``port``, ``test_info``, ``loop`` an edge channel
    name, ``truth`` the simulation's ground-truth log and firmware (two paths),
    ``calibration`` the loop calibration applied; further keys may hold any JSON."""
    if not isinstance(metadata, dict):
        raise MetadataError("METADATA", f"must be a JSON object, not {_kind(metadata)}")
    if "identity" not in metadata:
        raise MetadataError("identity", "missing (the device's identify reply)")
    _check_identity(metadata["identity"])
    _optional(metadata, "irq", "", _check_irq)
    for key in ("start_time", "port", "test_info"):
        _optional(metadata, key, "", _text)
    _optional(metadata, "loop", "", _check_loop)
    _optional(metadata, "trigger", "", _check_trigger)
    _optional(metadata, "conditions", "", _check_conditions)
    _optional(metadata, "truth", "", _check_truth)
    _optional(metadata, "calibration", "", _check_calibration)


def _check_calibration(calibration: object, field: str) -> None:
    """The loop calibration a capture applied (:class:`latscope.link.calibration.Calibration`,
    its own checks: one definition for the calibration file and the metadata)."""
    value = _object(calibration, field)
    try:
        Calibration.from_dict(value)
    except ValueError as error:
        raise MetadataError(field, str(error)) from None


def _check_truth(truth: object, field: str) -> None:
    """The ground-truth log and firmware ELF of a capture on sim:soc (``latscope capture
    --truth``; :class:`latscope.simulated.cpu_truth.TruthSource`): two paths."""
    values = _object(truth, field)
    if sorted(values) != ["firmware", "log"]:
        raise MetadataError(field, f"must hold log and firmware, not {sorted(values)}")
    for key in ("log", "firmware"):
        _text(values[key], f"{field}.{key}")


def _check_conditions(conditions: object, field: str) -> None:
    """The load profile, its parameter and the cache state (``latscope capture --load``)."""
    values: JsonObject = _object(conditions, field)
    try:
        Conditions(**values)
    except TypeError:
        raise MetadataError(field, f"unknown keys in {sorted(values)}") from None
    except ValueError as error:
        raise MetadataError(field, str(error)) from None


def _check_loop(loop: object, field: str) -> None:
    """The IRQ loop's channel: an edge channel's name (``latscope capture --loop``)."""
    names = {source.name for source in EDGE_SOURCES}
    if loop not in names:
        raise MetadataError(field, f"must be an edge channel name (EDGE0 .. EDGE7), not {loop!r}")


def check_end(end: object) -> None:
    """Raises :class:`MetadataError` unless ``end`` is an END object as the writer makes it:
    ``data_bytes`` and ``chunks`` (integers), ``stats`` (object or null) whose
    ``device_status``, if given, is an object; ``metadata`` (format 2) a METADATA object."""
    if not isinstance(end, dict):
        raise MetadataError("END", f"must be a JSON object, not {_kind(end)}")
    for key in ("data_bytes", "chunks"):
        _integer(end.get(key), key, 0, 1 << 62)
    if end.get("stats") is not None:
        stats = _object(end["stats"], "stats")
        _optional(stats, "device_status", "stats", _object)
    if "metadata" in end:
        check_metadata(end["metadata"])


# --- which copy ----------------------------------------------------------------------------


class MetadataCopy(NamedTuple):
    """One copy of the metadata in a file: ``at`` (file offset of its chunk), ``kind``
    ("METADATA" or "END"), ``value`` (the JSON value) and ``is_json`` (False: a METADATA
    chunk whose payload is no JSON)."""

    at: int
    kind: Literal["METADATA", "END"]
    value: Any  # parsed JSON of any shape (None if the payload is no JSON)
    is_json: bool = True

    @property
    def key(self) -> str:
        """Copies with equal keys say the same (JSON text, keys sorted: ``true`` is not
        ``1``)."""
        return json.dumps(self.value, sort_keys=True) if self.is_json else ""


def differing_fields(a: Any, b: Any, prefix: str = "") -> list[str]:  # parsed JSON values
    """Dotted paths of the fields in which two metadata values differ (``identity.clock_hz``);
    ``METADATA`` when they differ as a whole (not both objects)."""
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return [prefix or "METADATA"]
    fields: list[str] = []
    for key in sorted(set(a) | set(b)):
        path = f"{prefix}.{key}" if prefix else key
        if key not in a or key not in b:
            fields.append(path)
        elif json.dumps(a[key], sort_keys=True) != json.dumps(b[key], sort_keys=True):
            fields += differing_fields(a[key], b[key], path)
    return fields


def choose_copy(
    copies: Sequence[MetadataCopy],
) -> tuple[MetadataCopy | None, list[tuple[MetadataCopy, list[str]]]]:
    """Which of a file's metadata ``copies`` (:class:`MetadataCopy`, file order; at least
    one) to use: ``(chosen, others)``, ``others`` being ``(copy, differing fields)`` of every
    copy that disagrees with the chosen one. Copies that all agree: the first. Otherwise the
    one the END confirms (a clean close wrote it last), else the one most copies say; None
    when neither decides (a tie without an END)."""
    groups: dict[str, list[MetadataCopy]] = {}
    for copy in copies:
        groups.setdefault(copy.key, []).append(copy)
    ends = [copy for copy in copies if copy.kind == "END"]
    if len(groups) == 1:
        chosen = copies[0]
    elif ends:
        chosen = groups[ends[-1].key][0]
    else:
        sizes = sorted((len(group) for group in groups.values()), reverse=True)
        if sizes[0] == sizes[1]:
            return None, [
                (copy, differing_fields(copies[0].value, copy.value))
                for copy in copies[1:]
                if copy.key != copies[0].key
            ]
        chosen = max(groups.values(), key=len)[0]
    return chosen, [
        (copy, differing_fields(chosen.value, copy.value))
        for copy in copies
        if copy.key != chosen.key
    ]
