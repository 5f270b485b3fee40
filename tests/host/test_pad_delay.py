"""The IRQ output's pad delay as the host takes it (latscope.link.pad_delay): the figure of
the board the IDENTIFY reply names (its definition's, from the FPGA's timing data), rounded
to whole stamp units of that device; none for a name of no board; kept through a capture
file's metadata, which checks it."""

import pytest

import latscope_boards
from latscope.capture.metadata import MetadataError, check_metadata
from latscope.link.identity import Identity
from latscope.link.pad_delay import with_irq_pad_delay
from latscope_defs.protocol import Source


@pytest.mark.parametrize(
    "name, board, stamp_hz, units",
    [
        # HX8K: 2.43 ns of 2.98 ns stamps; ULX3S (every size): 3.53 ns of 2.00 ns;
        # iCEBreaker: 3.28 ns of 6.94 ns, under half a stamp: nothing is added.
        ("ice40-hx8k-b-evn", "ice40-hx8k-b-evn", 336_000_000, 1),
        ("ulx3s", "ulx3s-12f", 500_000_000, 2),
        ("ulx3s", "ulx3s-85f", 500_000_000, 2),
        ("icebreaker", "icebreaker", 144_000_000, 0),
    ],
)
def test_a_boards_identity_takes_its_irq_output_delay(name, board, stamp_hz, units):
    """``board``: the IDENTIFY reply's name of board ``name`` (one per ULX3S size)."""
    delay_ns = latscope_boards.get_board(name).pad_delays.irq_output_ns
    device = Identity(
        clock_hz=stamp_hz >> 2, stamp_shift=2, board=board, latency={Source.MARKER: 5}
    )
    identity = with_irq_pad_delay(device)
    assert (identity.irq_pad_delay, identity.irq_pad_delay_ns) == (units, delay_ns)
    # A triggered IRQ edge comes that much later in the host's stamps too.
    assert identity.trigger_offset(Source.MARKER) == device.trigger_offset(Source.MARKER) + units
    assert Identity.from_dict(identity.as_dict()) == identity


def test_a_simulation_takes_no_pad_delay():
    identity = with_irq_pad_delay(Identity(clock_hz=100_000_000, board="sim"))
    assert (identity.irq_pad_delay, identity.irq_pad_delay_ns) == (0, 0.0)


@pytest.mark.parametrize(
    "field, value",
    [("irq_pad_delay", -1), ("irq_pad_delay", 1.5), ("irq_pad_delay_ns", "2 ns")]
    + [("irq_pad_delay_ns", True), ("irq_pad_delay_ns", 1e6)],
)
def test_metadata_with_a_wrong_pad_delay_is_refused(field, value):
    with pytest.raises(MetadataError, match=f"identity.{field}"):
        check_metadata({"identity": {"clock_hz": 1, field: value}})
    check_metadata({"identity": {"clock_hz": 1, "irq_pad_delay": 2, "irq_pad_delay_ns": 3.5}})
