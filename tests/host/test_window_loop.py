"""The batch analysis's compiled passes (host/latscope/analysis/window_loop.c) against the
numpy expressions they replaced, on random sorted inputs with ties, groups and spans."""

import numpy as np
import pytest

from latscope.analysis.batch import pair
from latscope.analysis.spans import merge_spans, overlaps


def numpy_pair(a, a_window, b, b_window, loss_spans, hole_only):
    """batch.pair as numpy passes (the code before window_loop.pair)."""
    none = np.zeros(len(a), bool)
    if not len(a) or not len(b):
        return none, none, none, np.zeros(len(a), np.int64)
    index = np.searchsorted(b, a, side="right")
    clipped = np.minimum(index, len(b) - 1)
    has_end = (index < len(b)) & (b_window[clipped] == a_window)
    end = np.where(has_end, b[clipped], 0)
    same_window_next = np.append(a_window[1:] == a_window[:-1], False)
    next_a = np.where(same_window_next, np.append(a[1:], 0), np.iinfo(np.int64).max)
    paired = has_end & (end <= next_a)
    lossy = paired & overlaps(loss_spans, a, end)
    return paired & ~lossy, lossy, lossy & overlaps(hole_only, a, end), end - a


def sorted_stamps(rng, n, high):
    return np.sort(rng.integers(0, high, n)).astype(np.int64)


def windows_of(rng, n, windows):
    return np.sort(rng.integers(0, windows, n)).astype(np.int64)


def spans(rng, n, high):
    low = rng.integers(0, high, n).astype(np.int64)
    return merge_spans(
        (np.zeros(0, np.int64), np.zeros(0, np.int64)), (low, low + rng.integers(0, 50, n))
    )


@pytest.mark.parametrize("seed", range(40))
def test_pair_is_the_numpy_passes(seed):
    rng = np.random.default_rng(seed)
    na, nb = (int(x) for x in rng.integers(0, 300, 2))
    high = int(rng.choice([50, 1000, 10**6]))  # few stamps: many ties between a and b
    windows = int(rng.integers(1, 6))
    a, b = sorted_stamps(rng, na, high), sorted_stamps(rng, nb, high)
    a_window, b_window = windows_of(rng, na, windows), windows_of(rng, nb, windows)
    loss = spans(rng, int(rng.integers(0, 20)), high)
    holes = merge_spans(loss, (np.zeros(0, np.int64), np.zeros(0, np.int64)))
    holes = (holes[0][::2], holes[1][::2])  # a subset of the loss spans
    got = pair(a, a_window, b, b_window, loss, holes)
    want = numpy_pair(a, a_window, b, b_window, loss, holes)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.array_equal(g, w)


def test_pair_over_unsorted_starts():
    """Starts need not be sorted for the same answer (the search restarts below)."""
    rng = np.random.default_rng(7)
    a = rng.integers(0, 1000, 200).astype(np.int64)
    b = sorted_stamps(rng, 150, 1000)
    group = np.zeros(200, np.int64)
    loss = spans(rng, 10, 1000)
    got = pair(a, group, b, np.zeros(150, np.int64), loss, loss)
    want = numpy_pair(a, group, b, np.zeros(150, np.int64), loss, loss)
    for g, w in zip(got, want):
        assert np.array_equal(g, w)
