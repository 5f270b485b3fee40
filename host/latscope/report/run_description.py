"""The run in words, as the formats show it: what was lost (:func:`integrity_line`,
:func:`holes_text`) and the run, device and settings as labelled sections
(:func:`settings_items`).
"""

from ..capture.file import NOT_CLOSED
from ..link.calibration import Calibration
from ..link.identity import Identity

__all__ = [
    "HOLES_SHOWN",
    "TICKS_NOT_RECORDED",
    "integrity_line",
    "holes_text",
    "calibration_line",
    "settings_items",
]

#: Holes listed one by one in text output (JSON lists them all).
HOLES_SHOWN = 10

#: What the reports say of the tick flags when the capture holds no tick marker.
TICKS_NOT_RECORDED = "not recorded by this DUT"


def integrity_line(integrity):
    """One line on what was lost: "nothing lost: ..." only when nothing was, else "DATA
    LOST: " and every kind of loss that happened, with its count; led by
    :data:`~latscope.capture.file.NOT_CLOSED` when the file has no END chunk (its end may
    be missing unseen: no damage shows where a file was cut between chunks); followed by the
    tests the capture ended inside."""
    closed = "" if integrity["closed"] else f"{NOT_CLOSED}; "
    return closed + _losses(integrity) + _unfinished(integrity)


def _unfinished(integrity):
    """The tests the capture ended inside, if any: a DUT that stopped inside a test (an IRQ
    that never came: the suite's timeout message is on its console) looks so."""
    tests = integrity.get("unfinished_tests")
    if not tests:
        return ""
    return (
        f"; not ended: {'; '.join(tests)} (no END marker: the capture stopped first, or the "
        f"DUT stopped inside the test: its console says why)"
    )


def _losses(integrity):
    damage = {
        "events lost in the device (FIFO full)": integrity["lost_events"],
        "hole(s)": integrity["holes"],
        "resyncs": integrity["segments_bad"],
        "records dropped": integrity["records_dropped"],
        "file gaps": integrity["file_gaps"],
        "damaged chunks": integrity["chunks_bad"],
        "truncated bytes": integrity["truncated_bytes"],
    }
    if not any(damage.values()):
        return (
            f"nothing lost: 0 events lost, 0 holes, 0 resyncs, "
            f"{integrity['bytes_skipped']} bytes skipped{_integrity_notes(integrity)}"
        )
    parts = []
    for what, count in damage.items():
        if count and what == "hole(s)":
            parts.append(f"{count} hole(s) where {_holes_count(integrity)} events are missing")
        elif count:
            parts.append(f"{count} {what}")
    return (
        f"DATA LOST: {', '.join(parts)}; {integrity['pairs_discarded']} pairs discarded "
        f"({integrity['pairs_discarded_by_holes']} by holes){_integrity_notes(integrity)}"
    )


def _holes_count(integrity):
    """The events missing in the holes, said as exactly as their counts are."""
    total = integrity["hole_events_lost_at_most"]
    if integrity["holes_unbounded"]:
        return f"at least {total} (not every hole is bounded)"
    return f"at most {total}" if integrity["holes_not_exact"] else f"exactly {total}"


def _integrity_notes(integrity):
    """Device resets, rejected old data and how the file was read, after the losses."""
    notes = []
    if integrity["device_resets"]:
        notes.append(
            f"{integrity['device_resets']} device reset(s): the device's sequence "
            f"starts anew (a reset, or another capture in the stream), no sample "
            f"spans one"
        )
    if integrity["segments_old"]:
        notes.append(
            f"{integrity['segments_old']} old segment(s) rejected "
            f"({integrity['records_old']} event records replayed or out of order: "
            f"no new data)"
        )
    return "".join(f"; {note}" for note in notes + integrity["notes"])


def holes_text(integrity, limit=HOLES_SHOWN):
    """The holes, one line each (the first ``limit``)."""
    lines = []
    for hole in integrity["hole_list"][:limit]:
        when = f" (t = {hole['time_s']:.6f} s)" if hole["time_s"] is not None else ""
        after = "the start" if hole["after"] is None else f"stamp {hole['after']}"
        restart = (
            ", then the device's sequence starts anew (a reset, or another capture)"
            if hole["device_restart"]
            else ""
        )
        lines.append(
            f"  hole after {after} until stamp {hole['stamp']}{when}: "
            f"{hole['events_lost']} events missing{restart}"
        )
    if len(integrity["hole_list"]) > limit:
        lines.append(f"  ... and {len(integrity['hole_list']) - limit} more holes")
    return "\n".join(lines)


def _ticks_cell(count):
    """The run's tick markers for the settings table."""
    if count is None:
        return None
    return (
        f"{count} (samples they lie in are flagged tick)"
        if count
        else f"none: tick flags {TICKS_NOT_RECORDED}"
    )


def calibration_line(device):
    """The loop calibration the capture applied (a results document's
    ``device.calibration``), in words."""
    calibration = device.get("calibration")
    if not calibration:
        return (
            "none: no loop calibration was saved for this board when it was captured "
            "(latscope selftest --loopback --save); IRQ-to-input latencies include the IRQ "
            "pin's round trip"
        )
    return "applied: " + Calibration.from_dict(calibration).describe()


def conditions_line(conditions):
    """``"load bus:50, caches on"``: what the tables were measured under (a results
    document's ``conditions``; docs/results-schema.md)."""
    param = conditions["load_param"]
    load = conditions["load"] + ("" if param is None else f":{param}")
    return f"load {load}, caches {conditions['cache']}"


def irq_pad_delay_cell(identity):
    """What was added to the IRQ stamps for the board's IRQ output clock-to-pad delay
    (``latscope.link.pad_delay``)."""
    if not identity.irq_pad_delay_ns:
        return "none (no board's pad: a simulation, or a capture from before it)"
    units = identity.irq_pad_delay
    return (
        f"{identity.irq_pad_delay_ns:g} ns: {units} stamp unit{'s' if units != 1 else ''} "
        f"({units * identity.resolution_ns:g} ns)"
    )


def settings_items(document):
    """(section, [(label, value)]) of the run description, shared by Markdown and HTML."""
    device, cap, integrity = document["device"], document["capture"], document["integrity"]
    clock = device.get("clock_hz")
    identity = Identity.from_dict(device)
    latency = ", ".join(
        f"{source.name.lower()} {identity.latency[source]}"
        for source in identity.sources
        if source in identity.latency
    )
    sections = [
        (
            "Run",
            [
                ("capture file", cap["path"]),
                ("started", cap["start_time"]),
                ("device reached through", cap["port"]),
                ("test information", cap["test_info"]),
                ("duration", f"{document['duration_s']:.6g} s (first to last event)"),
                ("events", document["events"]),
                ("kernel tick markers", _ticks_cell(document.get("tick_markers"))),
                ("closed cleanly", "yes" if cap["complete"] else f"no ({NOT_CLOSED})"),
            ]
            + [_other_item(key, value) for key, value in cap["other"].items()],
        ),
        (
            "Device",
            [
                ("board", device.get("board")),
                ("protocol version", device.get("version")),
                ("capture clock", f"{clock / 1e6:g} MHz" if clock else None),
                (
                    "resolution",
                    f"{device['resolution_ns']:g} ns" if "resolution_ns" in device else None,
                ),
                ("marker port", f"{device.get('marker_width')} bits"),
                (
                    "bus markers",  # the bus window's or a memory bus port's
                    f"{device.get('bus_width')} bits" if device.get("bus_width") else "no",
                ),
                ("FIFO", f"{device.get('fifo_depth')} entries"),
                ("pin latency (cycles, corrected)", latency or "none"),
                ("loop calibration", calibration_line(device)),
                ("IRQ pad delay (added to IRQ stamps)", irq_pad_delay_cell(identity)),
            ],
        ),
    ]
    irq = document["irq"]
    if irq:
        items = [("enabled", "yes" if irq.get("enable", True) else "no")]
        for key in ("period", "width"):
            if key in irq:
                ns = f" = {irq[key + '_ns']:g} ns" if key + "_ns" in irq else ""
                items.append((key, f"{irq[key]} link cycles{ns}"))
        if "jitter_mask" in irq:
            items.append(("jitter", f"+0..{irq['jitter_mask']} link cycles per period"))
        items += [
            (k.replace("_", " "), "yes" if irq[k] else "no")
            for k in ("one_shot", "active_low")
            if k in irq
        ]
        sections.append(("IRQ generator", items))
    sections.append(("Conditions", [("measured under", conditions_line(document["conditions"]))]))
    if document["suite"]:
        suite = document["suite"]
        items = list(suite.items()) if isinstance(suite, dict) else [("settings", suite)]
        sections.append(("Firmware / test suite", [(str(k), v) for k, v in items]))
    lost = ", ".join(f"{k.lower()} {v}" for k, v in integrity["lost_by_source"].items())
    sections.append(
        (
            "Losses and resyncs",
            [
                ("summary", integrity_line(integrity)),
                (
                    "events lost in the device (LOSS records)",
                    f"{integrity['lost_events']}" + (f" ({lost})" if lost else ""),
                ),
                (
                    "holes (stream data dropped or not verifiable)",
                    f"{integrity['holes']}, {_holes_count(integrity)} events "
                    f"missing"
                    + (
                        "".join(
                            f"; after {'the start' if h['after'] is None else h['after']}"
                            f" until {h['stamp']}: {h['events_lost']}"
                            for h in integrity["hole_list"][:HOLES_SHOWN]
                        )
                    ),
                ),
                (
                    "pairs discarded (by holes)",
                    f"{integrity['pairs_discarded']} ({integrity['pairs_discarded_by_holes']})",
                ),
                ("records dropped (damaged or unclosed segments)", integrity["records_dropped"]),
                (
                    "segments verified / bad (resyncs)",
                    f"{integrity['segments_ok']} / {integrity['segments_bad']}",
                ),
                ("stream bytes skipped", integrity["bytes_skipped"]),
                ("gaps in the capture file", integrity["file_gaps"]),
                (
                    "damaged chunks / truncated bytes",
                    f"{integrity['chunks_bad']} / {integrity['truncated_bytes']}",
                ),
            ],
        )
    )
    if document.get("device_status"):
        sections.append(("Device status at the end", _status_items(document["device_status"])))
    return sections


#: The appliance's STATUS fields (``Device.status``) in words.
_STATUS_LABELS = {
    "capturing": "still capturing",
    "events": "events captured",
    "lost": "events lost (FIFO full)",
    "fifo_max": "most FIFO entries in use",
    "irq_edges": "IRQ edges fired",
    "clock_check": "clock-phase probe (protocol.ClockCheck; 0: none, 2: ok)",
}


def _status_items(status):
    return [
        (_STATUS_LABELS.get(key, key.replace("_", " ")), _readable(value))
        for key, value in status.items()
    ]


def _other_item(key, value):
    """A metadata entry latscope's run description has no row of its own for, in words:
    ``cpu_release`` (sim:soc: when the simulated CPU left reset), else its key and value."""
    if key == "cpu_release" and isinstance(value, dict) and "after_start" in value:
        return (
            "simulated CPU released",
            f"{value['after_start']} + {value.get('phase', 0)} (phase) cycles after the "
            f"capture's START",
        )
    return (key.replace("_", " "), _readable(value))


def _readable(value):
    """A JSON value for a reader: yes/no, "–" for none, a dict as "key value, ..."."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "–"
    if isinstance(value, dict):
        return ", ".join(f"{k.replace('_', ' ')} {_readable(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(_readable(v) for v in value)
    return str(value)
