"""Statistics of a capture while it runs, in bounded memory: the batch analysis
(:class:`~latscope.analysis.batch.BatchAnalysis`, the one implementation of the pairing rules)
fed the events as they arrive, with the exact
:class:`~latscope.analysis.statistics.TableAccumulator` per table (:func:`live_analysis`).

A sample is counted once no later event can change it: the live figures trail the stream by
the pin-latency spread and, for a sample, until every source with an event in the last 0.1 s
has had one after it. After ``finish()`` they are the tables ``latscope analyze`` gives of the
capture file, unless a LOSS record reached back over samples already counted
(``needs_second_pass``; a source silent for longer than 0.1 s lost events): the live figures
may then include pairs that span discards, and only the file's analysis is exact.
"""

from functools import partial
from typing import TYPE_CHECKING

from .batch import BatchAnalysis, latency_skew
from .statistics import TableAccumulator, interval_stamps

if TYPE_CHECKING:
    from ..link.identity import Identity

__all__ = ["live_analysis"]


def live_analysis(
    identity: "Identity", interval_s: float | None = 60.0, *, irq_shift: int = 0
) -> BatchAnalysis[TableAccumulator]:
    """The live statistics of a capture from the appliance ``identity``
    (:class:`~latscope.link.identity.Identity`) whose IRQ stamps a loop calibration moves
    ``irq_shift`` units later (``CaptureSession.irq_shift``): a :class:`BatchAnalysis` to
    ``feed`` every batch of events and ``finish`` at the end, whose ``tables`` are
    :class:`TableAccumulator` (``count``, ``stats()``, the maximum per ``interval_s``
    seconds), ``running`` names the tests whose window is open and ``summary()`` gives every
    table's statistics."""
    interval = interval_stamps(interval_s, identity.stamp_hz)
    return BatchAnalysis(
        identity.stamp_hz,
        skew=latency_skew(identity, irq_shift),
        live=True,
        table=partial(TableAccumulator, interval_stamps=interval),
    )
