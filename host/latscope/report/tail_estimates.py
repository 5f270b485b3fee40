"""The section of the tail estimates (``tables[].tail``): per table the latency one sample
exceeds with probability 1e-3, 1e-6 and 1e-9, with its confidence interval, or the reason it
is not estimable (:mod:`latscope.analysis.tail`), in every format. The table's statistics,
its maximum first, stay what was measured: the estimate is beside them, never instead.
"""

import math

from ..analysis.tail import CONFIDENCE, PROBABILITIES, estimate_table
from .section import Grid, Paragraph, TableSection

__all__ = [
    "TailEstimates",
    "probability_text",
    "interval_text",
    "tail_line",
    "fit_text",
    "TAIL_NOTE",
]

#: What the figures are, in one line (text formats and the capture's end summary).
TAIL_NOTE = (
    f"tail estimate: the latency one sample exceeds with probability p and its "
    f"{CONFIDENCE:.0%} confidence interval [low, high] (open: the samples do not bound it), "
    f"from a generalised Pareto fit to the table's largest samples after checks of "
    f"independence, identical distribution and fit; an estimate, not a bound (docs/tests.md, "
    f'"Tail estimate")'
)


def probability_text(probability):
    """A probability as shown and in CSV column names: 1e-06 -> "1e-6" (powers of ten)."""
    exponent = round(math.log10(probability))
    return f"1e{exponent}" if probability == 10.0**exponent else f"{probability:g}"


def interval_text(quantile):
    """A quantile's interval as "[low, high]" (ns); an open upper end as "[low, open]"."""
    if quantile["high_ns"] is None:
        return f"[{quantile['low_ns']:.1f}, open]"
    return f"[{quantile['low_ns']:.1f}, {quantile['high_ns']:.1f}]"


def tail_line(name, tail):
    """One table's tail estimate (a ``tables[].tail`` dict) in one line."""
    if not tail["estimable"]:
        return f"{name}: {tail['refusal']}"
    quantiles = ", ".join(
        f"p {probability_text(q['probability'])}: {q['ns']:.1f} {interval_text(q)}"
        for q in tail["quantiles"]
    )
    return f"{name}: {quantiles} ns ({fit_text(tail)})"


def fit_text(tail):
    """What an estimable table's fit used, in words."""
    return (
        f"GPD over the {tail['exceedances']} largest of {tail['samples']} samples, above "
        f"{tail['threshold_ns']:.1f} ns, shape {tail['shape']:.2f}; order checked on the "
        f"first {tail['checked_samples']}"
    )


def _column(probability, what):
    """CSV column of a quantile: ``tail_1e-6_ns``, ``tail_1e-6_low_ns``, ..."""
    return f"tail_{probability_text(probability)}_{what}"


class TailEstimates(TableSection):
    """The tail estimate of every table (:func:`latscope.analysis.tail.estimate_table`)."""

    title = "Tail estimate"
    csv_columns = [
        _column(p, what) for p in PROBABILITIES for what in ("ns", "low_ns", "high_ns")
    ] + ["tail_refusal"]

    def fields(self, name, table, context):
        return {"tail": estimate_table(table).as_dict()}

    def intro(self, document):
        return TAIL_NOTE + ":"

    def lines(self, row):
        return [tail_line(row["name"], row["tail"])] if row["samples"] else []

    def blocks(self, row):
        tail = row["tail"]
        if not row["samples"]:
            return []
        if not tail["estimable"]:
            return [Paragraph(f"Tail estimate: {tail['refusal']}")]
        header = ["exceeded with probability", "latency (ns)", f"{CONFIDENCE:.0%} interval (ns)"]
        rows = [
            [probability_text(q["probability"]), f"{q['ns']:.1f}", interval_text(q)]
            for q in tail["quantiles"]
        ]
        return [
            Paragraph(TAIL_NOTE[0].upper() + TAIL_NOTE[1:] + "."),
            Grid(header, rows, numeric={1, 2}, name="tail"),
            Paragraph(fit_text(tail) + "."),
        ]

    def csv_cells(self, row):
        tail = row["tail"]
        by_probability = {q["probability"]: q for q in tail["quantiles"]}
        cells = []
        for p in PROBABILITIES:
            q = by_probability.get(p)
            cells += [None] * 3 if q is None else [q["ns"], q["low_ns"], q["high_ns"]]
        return cells + [tail["refusal"]]


def estimates(tables):
    """``{name: tail dict}`` of ``{name: TableAccumulator}`` (the capture's end summary)."""
    return {name: estimate_table(table).as_dict() for name, table in tables.items()}


def summary_text(tails):
    """The tail estimates of :func:`estimates` as lines under :data:`TAIL_NOTE` ("": none)."""
    if not tails:
        return ""
    return "\n".join([TAIL_NOTE + ":"] + [tail_line(name, tail) for name, tail in tails.items()])
