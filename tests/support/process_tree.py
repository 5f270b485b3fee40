"""The processes below a process, read from /proc (no psutil): for the tests that check that
what a command starts ends with it, and for the CPU time a command and what it started have
spent (the first hour's silences are counted in it)."""

import os

#: /proc/PID/stat counts CPU time in clock ticks.
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid):
    """(command name, the fields after it: state, parent pid, ...) of /proc/PID/stat; None
    once the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            stat = file.read()
    except OSError:  # ended meanwhile
        return None
    return stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()


def _stats():
    """``{pid: _stat(pid)}`` of every process, zombies (ended, not yet reaped) included."""
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (stat := _stat(name)) is not None:
            found[int(name)] = stat
    return found


def processes():
    """``{pid: (parent pid, process group, command name)}`` of every live process."""
    return {
        pid: (int(fields[1]), int(fields[2]), name)
        for pid, (name, fields) in _stats().items()
        if fields[0] != "Z"
    }


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


def cpu_seconds(pid):
    """The CPU seconds (user and system) that ``pid`` and the processes below it have spent so
    far: each one's own and, in its cutime and cstime, those of the children it has reaped.

    Each process is read after its parent, so a child is never counted twice. A child reaped
    between the two reads would be missed (its parent was read without it, and it is gone):
    then the whole tree is read again, its parent now counting it. A reading is exact to the
    clock tick, but for a process started during it (which has spent next to nothing)."""
    while True:
        ticks, vanished = _tree_ticks(pid)
        if not vanished:
            return ticks / CLOCK_TICKS


def _tree_ticks(pid):
    """(clock ticks of ``pid`` and the processes below it, whether a child vanished between
    its parent's read and its own)."""
    parents = {child: int(fields[1]) for child, (_, fields) in _stats().items()}
    ticks, todo = 0, [(pid, None)]
    while todo:
        process, parent = todo.pop(0)
        stat = _stat(process)
        if stat is None or (parent is not None and int(stat[1][1]) != parent):
            if parent is not None:
                return ticks, True  # reaped (or its number taken) since its parent was read
            continue
        ticks += sum(int(field) for field in stat[1][11:15])  # utime stime cutime cstime
        todo += [(child, process) for child, ppid in parents.items() if ppid == process]
    return ticks, False
