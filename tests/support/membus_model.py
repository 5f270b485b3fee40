"""A bus-functional model of an asynchronous memory bus's writes (an FMC-style write cycle,
docs/membus.md), in sample slots: a write is address setup (chip select, address, no
strobe), the write strobe's pulse (data valid only in its last ``setup`` slots, garbage
before), a hold (strobe inactive, address and data still valid) and a gap (chip select
inactive, garbage on the lines). What a slot is belongs to the user: a sample of the front
end's inputs (tests/gateware/test_memory_bus.py) or of a logic analyzer
(tests/system/test_membus_decoder.py)."""

import random
from dataclasses import dataclass, replace

#: Address lines the model drives unless told.
ADDRESS_BITS = 10


@dataclass(frozen=True)
class Slot:
    """The bus during one slot, as active flags and line values. (The read strobe is
    modelled but has no pin on the front end: a read is a cycle without a write strobe.)"""

    selected: bool = False
    writing: bool = False
    reading: bool = False
    address: int = 0
    data: int = 0


class BusModel:
    """Builds a slot timeline of writes and reads and remembers where each write ends."""

    def __init__(self, data_width, seed=0, address_bits=ADDRESS_BITS):
        self.data_width = data_width
        self.address_bits = address_bits
        self.slots = []
        self.writes = []  # (slot of the strobe's end edge, address, data)
        self.random = random.Random(seed)

    def _garbage(self, bits):
        return self.random.randrange(1 << bits)

    def _garbage_slot(self, **fields):
        """A slot with ``fields`` and garbage on the lines it does not name."""
        lines = {
            "address": self._garbage(self.address_bits),
            "data": self._garbage(self.data_width),
        }
        return Slot(**(lines | fields))

    def write(self, address, data, *, addset=0, datast=1, setup=1, hold=0):
        """One write cycle: ``addset`` slots of address setup, the strobe ``datast`` slots
        (data valid in the last ``setup`` of them), ``hold`` slots after its end edge."""
        assert 1 <= setup <= datast
        for _ in range(addset):
            self.slots.append(self._garbage_slot(selected=True, address=address))
        for n in range(datast):
            valid = n >= datast - setup
            slot = self._garbage_slot(selected=True, writing=True, address=address)
            self.slots.append(replace(slot, data=data) if valid else slot)
        self.writes.append((len(self.slots), address, data))
        for _ in range(hold):
            self.slots.append(Slot(selected=True, address=address, data=data))

    def read(self, address, *, slots=2):
        for _ in range(slots):
            self.slots.append(self._garbage_slot(selected=True, reading=True, address=address))

    def other_bank_write(self, address, data):
        """A write strobe with this chip select inactive (a write to another bank)."""
        self.slots.append(Slot(writing=True, address=address, data=data))

    def idle(self, slots):
        for _ in range(slots):
            self.slots.append(self._garbage_slot())


def slot_of_sample(cycle, k, phases):
    """The slot that sample ``k`` of capture cycle ``cycle`` shows, as the input registers
    present the pins (:mod:`latscope_gateware.ddr_edges`: with more than one sample a cycle,
    sample k of cycle c is slot ``phases*(c-1) + k - 1``; single-rate pins directly)."""
    return cycle if phases == 1 else phases * (cycle - 1) + k - 1


def cycle_of_slot(slot, phases):
    """The capture cycle whose samples first show ``slot`` (the inverse of
    :func:`slot_of_sample`)."""
    return slot if phases == 1 else (slot + 1) // phases + 1


def pins_in_cycle(slots, cycle, *, phases, address_bits, data_width, cs_active_low, we_active_low):
    """{port: value} of the front end's pins (``cs``, ``we``, ``address``, ``data``, each the
    ``Cat`` of its samples, earliest first) in capture cycle ``cycle`` of the timeline
    ``slots``; the bus idles outside it."""
    samples = []
    for k in range(phases):
        index = slot_of_sample(cycle, k, phases)
        samples.append(slots[index] if 0 <= index < len(slots) else Slot())

    def pack(values, bits):
        return sum(value << (k * bits) for k, value in enumerate(values))

    return {
        "cs": pack([s.selected ^ cs_active_low for s in samples], 1),
        "we": pack([s.writing ^ we_active_low for s in samples], 1),
        "address": pack([s.address for s in samples], address_bits),
        "data": pack([s.data for s in samples], data_width),
    }


def first_in_each_cycle(writes, phases):
    """Of ``writes`` (:attr:`BusModel.writes`), the first to end in each capture cycle: the
    ones the front end delivers when writes end closer than a cycle (the others it counts
    lost)."""
    by_cycle = {}
    for write in writes:
        by_cycle.setdefault(cycle_of_slot(write[0], phases), write)
    return sorted(by_cycle.values())
