"""What a capture was measured under besides the IRQ settings: the DUT's background load
profile, its one parameter, and whether the CPU's caches were on (docs/tests.md, "Load
profiles" and "Caches off"; docs/results-schema.md, ``conditions``).

A capture file records them in its metadata (``conditions``); the results document, every
report and ``latscope compare`` read them from there with :meth:`Conditions.of_metadata`.
On ``sim:soc`` they are the simulated suite's build settings; on a board the user states
them (``latscope capture --load``), as the DUT's firmware was built with them.
"""

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["LOADS", "CACHE_STATES", "LOAD_PARAM_RANGE", "Conditions", "parse_load"]

#: The suite's load profiles (``firmware/suite/Makefile``, LOAD; a test checks they agree).
LOADS = ("none", "cpu", "memory", "bus", "irq-high", "irq-low", "mixed")
CACHE_STATES = ("on", "off")
#: A profile's parameter: above 0 (firmware/suite/Makefile refuses LOAD_PARAM=0) and an int
#: for the firmware's C code.
LOAD_PARAM_RANGE = (1, 2**31 - 1)


@dataclass(frozen=True)
class Conditions:
    """``load``: a profile of :data:`LOADS`; ``load_param``: its parameter (None: the
    profile's default, suite.h); ``cache``: ``"on"`` or ``"off"``."""

    load: str = "none"
    load_param: int | None = None
    cache: str = "on"

    def __post_init__(self) -> None:
        if self.load not in LOADS:
            raise ValueError(f"load {self.load!r}: not one of {', '.join(LOADS)}")
        low, high = LOAD_PARAM_RANGE
        if self.load_param is not None and (
            type(self.load_param) is not int or not low <= self.load_param <= high
        ):
            raise ValueError(
                f"load parameter {self.load_param!r}: not a whole number from {low} to {high}"
            )
        if self.load_param is not None and self.load in ("none", "mixed"):
            raise ValueError(f"load {self.load}: takes no parameter")
        if self.cache not in CACHE_STATES:
            raise ValueError(f"cache {self.cache!r}: not on or off")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def of_metadata(cls, metadata: dict[str, Any]) -> "Conditions":
        """The conditions a capture's metadata records (a capture made before they were
        recorded: no load, caches on)."""
        return cls(**(metadata.get("conditions") or {}))

    def label(self) -> str:
        """``"bus:50"``, ``"none, caches off"``: the load as ``--load`` takes it."""
        load = self.load if self.load_param is None else f"{self.load}:{self.load_param}"
        return load + (", caches off" if self.cache == "off" else "")


def parse_load(text: str) -> tuple[str, int | None]:
    """``"bus:50"`` -> ``("bus", 50)``, ``"cpu"`` -> ``("cpu", None)`` (``--load``)."""
    name, _, param = text.partition(":")
    try:
        value = int(param, 0) if param else None
    except ValueError:
        raise ValueError(f"load {text!r}: the parameter after ':' is not a number") from None
    Conditions(name, value)  # checks both
    return name, value
