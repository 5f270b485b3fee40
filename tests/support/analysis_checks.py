"""The bounded analysis (latscope.analysis.batch, statistics) checked against the whole-capture
``analyze``: for the host's tests of it and for the system tests' real captures."""

import numpy as np

from latscope.analysis.statistics import TableAccumulator


def assert_same(whole, bounded, label):
    """``bounded`` ({name: TableAccumulator}) is ``whole`` ({name: SampleTable})."""
    assert list(bounded) == list(whole), label
    for name, table in whole.items():
        accumulator = bounded[name]
        samples, starts = accumulator.kept_points()
        assert accumulator.count == len(table.samples), (label, name)
        assert np.array_equal(samples, table.samples[: accumulator.keep_points]), (label, name)
        assert np.array_equal(starts, table.starts[: accumulator.keep_points]), (label, name)
        assert accumulator.parameters == table.parameters, (label, name)
        assert accumulator.discarded == table.discarded, (label, name)
        assert accumulator.discarded_by_holes == table.discarded_by_holes, (label, name)
        got, want = accumulator.stats(), table.stats()
        differing = {key: (got.get(key), want.get(key)) for key in {*got, *want}}
        differing = {key: pair for key, pair in differing.items() if pair[0] != pair[1]}
        assert not differing, (label, name, differing)
        whole_table = TableAccumulator.of_table(table)
        assert accumulator.flags() == whole_table.flags(), (label, name)
        assert accumulator.worst() == whole_table.worst(), (label, name)
