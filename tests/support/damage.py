"""Seeded damage to a byte stream or a capture file, and the check that a damaged capture's
tables still account for every sample of the undamaged one (issue 29: ``kept + discarded +
lost``): shared by the host's fault campaigns and the ground-truth runs on the SoC."""

import numpy as np

#: The kinds of fault :func:`damage` applies ("mixed": each fault one of the others).
KINDS = ["flip", "drop", "insert", "duplicate", "burst", "mixed"]


def damage(data, rate, kind, rng):
    """``data`` with faults at ``rate`` per byte (at least one), applied from the end so
    that positions stay meaningful: bit flips, dropped, inserted and duplicated bytes,
    bursts of 2..64 random bytes (``rng``: a ``random.Random``)."""
    out = bytearray(data)
    count = max(1, int(np.random.default_rng(rng.getrandbits(32)).binomial(len(out), rate)))
    for at in sorted(rng.sample(range(len(out)), count), reverse=True):
        fault = rng.choice(KINDS[:-1]) if kind == "mixed" else kind
        if fault == "flip":
            out[at] ^= 1 << rng.randrange(8)
        elif fault == "drop":
            del out[at]
        elif fault == "insert":
            out[at:at] = bytes([rng.randrange(256)])
        elif fault == "duplicate":
            out[at:at] = out[at : at + 1]
        else:
            out[at : at + rng.randint(2, 64)] = rng.randbytes(rng.randint(2, 64))
    return bytes(out)


def unaccounted(tables, counts):
    """What of ``tables`` (a damaged capture's, ``{name: table}`` with ``stats()`` and
    ``lost``) does not account for the undamaged ``counts`` (``{name: samples}``): tables
    missing or not made by the run, and tables whose kept + discarded + lost is not the
    undamaged count or whose loss is not labelled as the estimate it is. Empty: all
    accounted for."""
    wrong = sorted(set(tables) ^ set(counts))
    for name, table in tables.items():
        stats, lost = table.stats(), table.lost
        if (
            name not in counts
            or lost.count is None
            or stats["samples"] + stats["discarded"] + lost.count != counts[name]
            or (lost.count and not lost.estimate)
        ):
            wrong.append((name, stats["samples"], stats["discarded"], lost.text()))
    return wrong
