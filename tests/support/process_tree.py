"""The processes below a process, read from /proc (no psutil): for the tests that check that
what a command starts ends with it."""

from pathlib import Path


def processes():
    """``{pid: (parent pid, process group, command name)}`` of every live process."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # ended meanwhile
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        state, ppid, pgid = stat[stat.rindex(")") + 2 :].split()[:3]
        if state != "Z":
            table[int(entry.name)] = (int(ppid), int(pgid), name)
    return table


def descendants(pid):
    """``{pid: command name}`` of the live processes below ``pid``."""
    table = processes()
    found, todo = {}, [pid]
    while todo:
        parent = todo.pop()
        for child, (ppid, _, name) in table.items():
            if ppid == parent and child not in found:
                found[child] = name
                todo.append(child)
    return found
