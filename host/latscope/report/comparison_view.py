"""A comparison document (:func:`latscope.report.compare.comparison`) as every format shows
it: the runs' settings as rows that say where a run differs from the first
(:func:`settings_rows`), a percentile's judgement against the baseline as a mark
(:func:`judgement_mark`) and the rule in one line (:func:`judgement_note`).
"""

from ..analysis.statistics import CONFIDENCE
from .columns import STAT_COLUMNS, cell, interval_text

__all__ = [
    "SETTINGS_GROUPS",
    "settings_rows",
    "baseline",
    "difference_text",
    "judged_difference",
    "judgement_mark",
    "judgement_note",
    "judgements_grid",
]

#: The groups of a run's ``measured_under`` in the order shown (compare.measured_under).
SETTINGS_GROUPS = ("load", "IRQ settings", "CPU", "firmware")

#: A judgement (compare.judgement) as shown beside a difference; None: no interval known.
_MARKS = {"higher": "▲ higher", "lower": "▼ lower", "within": "≈ within", None: "–"}


def _shown(value):
    return "–" if value is None else str(value)


def _fields(group, value):
    """(row title, field) of one group of ``measured_under``: one per field of a dict."""
    if not isinstance(value, dict):
        return [(group, None)]
    return [(group if key == group else f"{group}: {key}", key) for key in value]


def settings_rows(comparison):
    """What the runs' tables were measured under, one row per setting: (title, the value
    of every run as text, whether a run's differs from the first run's). The fields of a
    group are those of any run, in first-seen order; a field a run lacks is "–"."""
    settings = [run["measured_under"] for run in comparison["runs"]]
    rows = []
    for group in SETTINGS_GROUPS:
        titles = {}
        for values in settings:
            titles.update({key: title for title, key in _fields(group, values[group])})
        for key, title in titles.items():
            cells = [
                values[group] if key is None else (values[group] or {}).get(key)
                for values in settings
            ]
            differs = any(cell != cells[0] for cell in cells[1:])
            rows.append((title, [_shown(cell) for cell in cells], differs))
    return rows


def baseline(table):
    """The label of a comparison table's baseline: its first run with samples (None: no
    run has any)."""
    return next((e["run"] for e in table["runs"] if e["present"] and e["stats"]["samples"]), None)


def difference_text(key, entry):
    """A statistic's difference to the baseline: "+12.0 +3%" (ns), "+2" (counts)."""
    delta, pct = entry["diff"][key], entry["diff_pct"][key]
    text = "–" if delta is None else f"{delta:+.1f}" if key.endswith("_ns") else f"{delta:+d}"
    if pct is not None and key.endswith("_ns"):
        text += f" {pct:+.0f}%"
    return text


def judged_difference(key, entry):
    """A statistic's difference to the baseline (:func:`difference_text`), a percentile's
    judgement sign after it ("-13511.0 -81% ▼")."""
    return f"{difference_text(key, entry)} {judgement_mark(entry, key, short=True)}".rstrip()


def judgement_mark(entry, key, *, short=False):
    """A run's judgement of percentile ``key`` against the baseline as shown: "▲ higher",
    "▼ lower", "≈ within" or "–" (no interval known); ``short``: the sign alone, nothing
    where no interval is known (the difference beside it is "–" then: a percentile has an
    interval exactly where it is reported); "" for the baseline itself and a statistic not
    judged."""
    if key not in entry.get("judgement", {}):
        return ""
    judged = entry["judgement"][key]
    if short:
        return _MARKS[judged].split()[0] if judged else ""
    return _MARKS[judged]


def judgement_note():
    """The judgement rule in one line, for every format that shows judgements."""
    return (
        f"beside each percentile's difference: ▲ higher / ▼ lower when its {CONFIDENCE:.0%} "
        f"confidence interval and the baseline's do not overlap (a difference the samples "
        f"support), ≈ within when they overlap (no difference shown, none ruled out), – "
        f"where an interval is not known (too few samples); min, max, avg and std have no "
        f"interval and are not judged"
    )


def judgements_grid(table):
    """A comparison table's percentiles: (header, rows), per percentile its title, every
    run's value and confidence interval and every judged run's :func:`judgement_mark`
    against the baseline, each row as (cells, the judgements of its last cells); None when
    no run is judged."""
    present = [entry for entry in table["runs"] if entry["present"]]
    judged = [entry for entry in present if "judgement" in entry]
    if not judged:
        return None
    base = baseline(table)
    header = ["percentile"]
    for entry in present:
        header += [f"{entry['run']} (ns)", f"{entry['run']} {CONFIDENCE:.0%} interval (ns)"]
    header += [f"{entry['run']} against {base}" for entry in judged]
    rows = []
    for key, title, fmt in STAT_COLUMNS:
        if key not in judged[0]["judgement"]:
            continue
        cells = [title.removesuffix(" (ns)")]
        for entry in present:
            cells += [cell(entry["stats"][key], fmt), interval_text(entry["ci"], key)]
        cells += [judgement_mark(entry, key) for entry in judged]
        rows.append((cells, [entry["judgement"][key] for entry in judged]))
    return header, rows
