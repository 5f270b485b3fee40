"""Types of the compiled record loop (``record_loop.c``; its comments say what each argument is).
Array arguments are contiguous numpy arrays of the dtypes the parser passes."""

from typing import Any

import numpy.typing as npt

_Array = npt.NDArray[Any]

def count_leads(buf: bytes, /) -> int: ...
def find_leads(buf: bytes, out: _Array, /) -> int: ...
def decode(
    buf: bytes,
    starts: _Array,
    committed: int,
    source_table: _Array,
    payload_mask: _Array,
    short_value: _Array,
    short_edge: _Array,
    back_at: _Array,
    step_at: _Array,
    fixed: _Array,
    width: _Array,
    valid: _Array,
    max_length: int,
    delta_bits: int,
    event_sources: int,
    reply: int,
    sync: int,
    seal: int,
    back_mask: int,
    level_at: int,
    source: _Array,
    value: _Array,
    ok: _Array,
    is_event: _Array,
    events_before: _Array,
    delta_sum: _Array,
    syncs: _Array,
    seals: _Array,
    /,
) -> tuple[int, int, int]: ...
def gather(
    first: _Array,
    end: _Array,
    base: _Array,
    is_event: _Array,
    delta_sum: _Array,
    source: _Array,
    value: _Array,
    latency: _Array,
    later: _Array,
    pad_delay: _Array,
    out_stamp: _Array,
    out_source: _Array,
    out_value: _Array,
    /,
) -> int: ...
def clean_run(
    crc_bytes: memoryview,
    crc_table: _Array,
    pos: _Array,
    sync: _Array,
    close: _Array,
    ok: _Array,
    tally: _Array,
    events: _Array,
    sent: _Array,
    captured: _Array,
    stamp48: _Array,
    crc: _Array,
    segment_sum: _Array,
    k: int,
    done: int,
    done_byte: int,
    seal_length: int,
    last_sent: int,
    last_stamp48: int,
    last_stamp64: int,
    stamp_mask: int,
    sequence_mask: int,
    out_first: _Array,
    out_end: _Array,
    out_base: _Array,
    /,
) -> tuple[int, int, int, int, int, int, int]: ...
