"""One user per port: an advisory lock (``flock``) held while a session has the port open.

Two captures on one serial port each read part of the other's bytes and send commands into
the other's stream: both files end damaged. The lock is a file in the system's lock
directory named after the port's real path (a symbolic link and its target are one port),
holding the pid of the process that has it, so a second session fails at once with a line
naming the port and that process. URLs (``rfc2217://``, ``socket://``) are not locked: the
server decides who connects.
"""

import fcntl
import os
import re
import tempfile

__all__ = ["PortBusy", "PortLock"]


class PortBusy(OSError):
    """The port is in use by another session (``holder``: its pid, or None)."""

    def __init__(self, port: str, holder: int | None) -> None:
        who = f"pid {holder}" if holder else "another process"
        super().__init__(f"{port}: in use by another latscope session ({who})")
        self.port, self.holder = port, holder


def _lock_directory() -> str:
    return "/run/lock" if os.access("/run/lock", os.W_OK) else tempfile.gettempdir()


class PortLock:
    """Holds the lock of port ``path`` from :meth:`acquire` to :meth:`release` (or the
    process's end: the kernel drops a flock with its file)."""

    def __init__(self, path: str) -> None:
        self.port = path
        real = os.path.realpath(path)
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", real.strip("/"))
        self.path = os.path.join(_lock_directory(), f"latscope-port-{name}.lock")
        self._fd: int | None = None

    @staticmethod
    def applies(path: str) -> bool:
        """Ports that are files (serial devices, ptys), not URLs."""
        return "://" not in path and os.path.exists(path)

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip()
            os.close(fd)
            raise PortBusy(self.port, int(holder) if holder.isdigit() else None) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            os.close(self._fd)  # drops the flock
            self._fd = None

    def __enter__(self) -> "PortLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
