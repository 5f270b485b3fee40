"""Types of the batch analysis's compiled passes (``window_loop.c``; its comments say what each
argument is). Array arguments are contiguous numpy arrays of the dtypes batch.py passes."""

from typing import Any

import numpy.typing as npt

_Array = npt.NDArray[Any]

def pair(
    a: _Array,
    a_group: _Array,
    b: _Array,
    b_group: _Array,
    loss_low: _Array,
    loss_high: _Array,
    hole_low: _Array,
    hole_high: _Array,
    keep: _Array,
    lossy: _Array,
    by_hole: _Array,
    lengths: _Array,
) -> None: ...
def route(
    points: _Array,
    stamps: _Array,
    epochs: _Array,
    seg_at: _Array,
    seg_window: _Array,
    seg_epoch: _Array,
    selected: _Array,
    as_start: _Array,
    out_stamp: _Array,
    out_window: _Array,
) -> tuple[int, ...]: ...
def group(
    values: _Array,
    stamps: _Array,
    epochs: _Array,
    value_mask: int,
    test_shift: int,
    test_bits: int,
    point_shift: int,
    point_bits: int,
    arg_bits: int,
    counts: _Array,
    order: _Array,
    out_stamp: _Array,
    out_point: _Array,
    out_arg: _Array,
    out_epoch: _Array,
) -> None: ...
