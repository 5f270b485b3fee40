"""The line a benchmark prints for each figure that has a goal, which bench/perf_table.py reads
to write README's performance table: its one definition, written and read here.

    figure: {"name": ..., "value": ..., "goal": ..., "unit": ..., "scale": ..., "at_least": ...}

``value`` and ``goal`` in base units (events per CPU second, bytes per event), ``unit`` as
shown after dividing by ``scale`` ("M events per CPU second" with scale 1e6); ``at_least``:
the goal is a lower bound (a speed), else an upper bound (bytes, memory).
"""

import json
from dataclasses import asdict, dataclass

PREFIX = "figure: "


@dataclass(frozen=True)
class Figure:
    name: str
    value: float
    goal: float
    unit: str
    scale: float = 1.0
    at_least: bool = True

    @property
    def met(self):
        return self.value >= self.goal if self.at_least else self.value <= self.goal

    def shown(self, value):
        return f"{value / self.scale:.3g} {self.unit}"


def report(figure):
    """Prints ``figure``'s line (flushed: the table's command reads it through a pipe)."""
    print(PREFIX + json.dumps(asdict(figure)), flush=True)


def parse(text):
    """The figures of a benchmark's output, in order."""
    return [
        Figure(**json.loads(line[len(PREFIX) :]))
        for line in text.splitlines()
        if line.startswith(PREFIX)
    ]
