"""Every sample of a capture in long format: one row per sample, for pandas, Parquet, a
spreadsheet (``latscope export --samples``, :meth:`latscope.api.CaptureResult.to_dataframe`).

The columns (:data:`SAMPLE_COLUMNS`) name each sample by its table and its index in it, with
the table's test and parameter and the run's load and cache conditions (so that the rows of
several captures can be stacked and grouped), its start stamp and time, its latency, its
flags and its IRQ trigger delay, as the results document names them
(docs/results-schema.md). Parquet needs pyarrow and the dataframe pandas: the ``[data]``
extra (``pip install 'latscope[data]'``); without it they raise :class:`ExtraMissing`, which
says so.
"""

import csv
import importlib
from os import PathLike
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..analysis.delays import NO_DELAY
from ..analysis.summary import CaptureSummary
from ..capture.conditions import Conditions
from ..capture.file import Capture

if TYPE_CHECKING:
    from ..analysis.pairing import SampleTable

__all__ = [
    "SAMPLE_COLUMNS",
    "SAMPLE_FORMATS",
    "ExtraMissing",
    "data_package",
    "sample_columns",
    "write_samples",
]

#: (column, what it holds), in order.
SAMPLE_COLUMNS = [
    ("table", "the table's name (results.json tables[].name)"),
    ("test", "its test (parameters.test)"),
    ("test_n", "the test's parameter N: threads, priorities (parameters.n; empty: none)"),
    ("load", "the DUT's load profile (conditions.load)"),
    ("load_param", "its parameter (empty: the profile's default)"),
    ("cache", "the DUT CPU's caches, on or off"),
    ("index", "the sample's index in its table, 0 the first (worst[].index)"),
    ("start", "stamp of its first event, pin-corrected (stamp units)"),
    ("time_s", "seconds from the capture's first event to its start"),
    ("latency_ns", "the latency"),
    ("cold", "the table's first sample"),
    ("tick", "a kernel tick marker lies in it (empty: ticks not recorded)"),
    ("delay_cycles", "the trigger delay of its IRQ edge, capture cycles (empty: none)"),
]

#: The file formats of :func:`write_samples`, by suffix.
SAMPLE_FORMATS = (".csv", ".parquet")


class ExtraMissing(ImportError):
    """A format or the dataframe needs a package of the ``[data]`` extra."""


def data_package(name: str, purpose: str) -> ModuleType:
    """The module ``name`` of the ``[data]`` extra, or :class:`ExtraMissing` saying how to
    install it."""
    try:
        return importlib.import_module(name)
    except ImportError:
        raise ExtraMissing(
            f"{purpose} needs {name.split('.')[0]}: pip install 'latscope[data]'"
        ) from None


def sample_columns(capture: Capture, tables: "dict[str, SampleTable]") -> dict[str, list[Any]]:
    """``{column: values}`` (:data:`SAMPLE_COLUMNS`) of every sample of ``tables``, a
    loaded ``capture``'s, table by table in their order, each in capture order."""
    summary = CaptureSummary.of_capture(capture)
    origin = summary.first_stamp or 0
    conditions = Conditions.of_metadata(capture.metadata)
    columns: dict[str, list[Any]] = {name: [] for name, _ in SAMPLE_COLUMNS}
    for name, table in tables.items():
        count = len(table.samples)
        ns = table.ns().tolist()
        ticked = table.ticked.tolist() if summary.tick_markers and len(table.ticked) else None
        delays = table.delays.tolist() if len(table.delays) == count else [NO_DELAY] * count
        fixed = {
            "table": name,
            "test": table.parameters.get("test"),
            "test_n": table.parameters.get("n"),
            "load": conditions.load,
            "load_param": conditions.load_param,
            "cache": conditions.cache,
        }
        for key, value in fixed.items():
            columns[key] += [value] * count
        columns["index"] += range(count)
        starts = table.starts.tolist()
        columns["start"] += starts
        columns["time_s"] += [(start - origin) / table.stamp_hz for start in starts]
        columns["latency_ns"] += ns
        columns["cold"] += [index == 0 for index in range(count)]
        columns["tick"] += [bool(t) for t in ticked] if ticked is not None else [None] * count
        columns["delay_cycles"] += [None if d == NO_DELAY else d for d in delays]
    return columns


def write_samples(columns: dict[str, list[Any]], path: str | PathLike[str]) -> None:
    """Writes ``columns`` to ``path``, CSV or Parquet by its suffix (:data:`SAMPLE_FORMATS`;
    an empty CSV cell: null)."""
    suffix = str(path)[str(path).rfind(".") :].lower()
    if suffix == ".csv":
        with open(path, "w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(columns)
            writer.writerows(zip(*columns.values()))
    elif suffix == ".parquet":
        pyarrow = data_package("pyarrow", "Parquet")
        parquet = data_package("pyarrow.parquet", "Parquet")
        parquet.write_table(pyarrow.table(columns), path)
    else:
        raise ValueError(f"{path}: not one of {', '.join(SAMPLE_FORMATS)}")
