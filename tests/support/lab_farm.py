"""A labgrid farm on the loopback address for the tests: simulated appliances behind ptys
(`latscope simulate`), Debian's ser2net serving them over RFC 2217, a labgrid coordinator
and exporters. Nothing listens on any address but 127.0.0.1.

Everything started here stops by itself: each process gets SIGTERM when the process that
started it dies (PR_SET_PDEATHSIG; ser2net through ``setpriv --pdeathsig``, since the
exporter starts it), and :class:`Processes` ends them in reverse order when the test is done.
"""

import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

from latscope.simulated.appliance import die_with

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SER2NET = shutil.which("ser2net") or "/usr/sbin/ser2net"
LOOPBACK = "127.0.0.1"


def free_port():
    """A TCP port free on the loopback address."""
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


def wait_for_port(port, timeout, process=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} ended with {process.returncode}")
        with socket.socket() as probe:
            if probe.connect_ex((LOOPBACK, port)) == 0:
                return
        time.sleep(0.1)
    raise TimeoutError(f"nothing listens on {LOOPBACK}:{port} after {timeout} s")


class Processes:
    """The processes a test started; :meth:`stop` ends them, newest first."""

    def __init__(self, log_dir):
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.running = []

    def start(self, name, command, *, env=None, stdout=None, cwd=None):
        log = open(self.log_dir / f"{name}.log", "w")
        process = subprocess.Popen(
            [str(part) for part in command],
            stdout=stdout or log,
            stderr=log,
            text=True,
            cwd=cwd,
            env={**os.environ, **(env or {})},
            start_new_session=True,
            preexec_fn=die_with(os.getpid()),
        )
        self.running.append((name, process, log))
        return process

    def log(self, name):
        return (self.log_dir / f"{name}.log").read_text(errors="replace")

    def stop(self):
        while self.running:
            name, process, log = self.running.pop()
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def start_simulation(processes, name, truth, *args):
    """``latscope simulate --port sim:gateware`` with its ground truth in ``truth``;
    returns its pty."""
    process = processes.start(
        name,
        [BIN / "latscope", "simulate", "--port", "sim:gateware", "--truth", truth, *args],
        stdout=subprocess.PIPE,
    )
    line = process.stdout.readline()
    if not line.startswith("PTY /dev/"):
        raise RuntimeError(f"latscope simulate printed {line!r}: {processes.log(name)}")
    return line.split()[1]


#: ser2net options for an appliance's link (docs/lab.md): by default ser2net forwards at
#: most 64 bytes per read and waits at least 1 ms before sending, about 0.1 MB/s; a 12 Mbaud
#: appliance sends up to 1.2 MB/s.
FAST_OPTIONS = ("dev-to-net-bufsize: 65536", "chardelay: false")


def ser2net_command(pty, port, speed=12_000_000, protocol="rfc2217", options=()):
    """ser2net serving ``pty`` on 127.0.0.1:``port``: over RFC 2217, configured as labgrid's
    exporter configures it (docs/lab.md), or as a raw TCP stream (``protocol="raw"``);
    ``options``: more lines of its ``options:`` (e.g. :data:`FAST_OPTIONS`)."""
    accepter = "telnet(rfc2217,mode=server),tcp" if protocol == "rfc2217" else "tcp"
    command = [
        SER2NET,
        "-d",
        "-n",
        "-Y",
        f"connection: &latscope#  accepter: {accepter},{LOOPBACK},{port}",
        "-Y",
        f"  connector: serialdev(nouucplock=true),{pty},{speed}n81,local",
        "-Y",
        "  options:",
        "-Y",
        "    max-connections: 10",
    ]
    for option in options:
        command += ["-Y", f"    {option}"]
    return command


def loopback_ser2net(directory):
    """A ``ser2net`` for labgrid's exporter (found first on PATH) that runs Debian's
    ser2net unchanged except that its RFC 2217 accepter listens on 127.0.0.1 only (the
    exporter asks for every address) and that it ends with the exporter."""
    wrapper = Path(directory) / "ser2net"
    wrapper.write_text(
        "#!/bin/bash\n"
        "# Written by tests/support/lab_farm.py: bind the accepter to the loopback address.\n"
        "args=()\n"
        'for arg in "$@"; do args+=("${arg/,tcp,/,tcp,127.0.0.1,}"); done\n'
        f'exec setpriv --pdeathsig TERM {SER2NET} "${{args[@]}}"\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return wrapper


def coordinator(processes, directory):
    """A labgrid coordinator on 127.0.0.1 (its places.yaml in ``directory``); returns its
    address."""
    port = free_port()
    process = processes.start(
        "coordinator",
        [BIN / "labgrid-coordinator", "--listen", f"{LOOPBACK}:{port}"],
        cwd=directory,
    )
    wait_for_port(port, 60, process)
    return f"{LOOPBACK}:{port}"


def exporter(processes, directory, address, name, pty):
    """A labgrid exporter ``name`` exporting ``pty`` as the RawSerialPort ``latscope``
    (ser2net makes it a NetworkSerialPort on 127.0.0.1 for the clients)."""
    directory = Path(directory)
    config = directory / f"{name}.yaml"
    config.write_text(
        f"appliance:\n  latscope:\n    cls: RawSerialPort\n    port: {pty}\n    speed: 12000000\n"
    )
    bin_dir = directory / "bin"
    bin_dir.mkdir(exist_ok=True)
    loopback_ser2net(bin_dir)
    return processes.start(
        name,
        [
            BIN / "labgrid-exporter",
            "--coordinator",
            address,
            "--name",
            name,
            "--hostname",
            LOOPBACK,
            config,
        ],
        env={"PATH": f"{bin_dir}:{os.environ['PATH']}"},
    )


def client(address, *args, timeout=60, check=True):
    """``labgrid-client`` against the coordinator at ``address``."""
    result = subprocess.run(
        [BIN / "labgrid-client", "--coordinator", address, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check and result.returncode != 0:
        raise RuntimeError(f"labgrid-client {' '.join(args)}: {result.stderr}")
    return result.stdout


def signal_group(process, signum=signal.SIGTERM):
    os.killpg(process.pid, signum)
