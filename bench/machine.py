"""The machine a benchmark ran on, for the line it prints first (issue 31: figures name
their machine): CPU model, cores, Python and numpy versions."""

import os
import platform

import numpy as np


def cpu_model():
    """The CPU's model name from /proc/cpuinfo (the platform's processor string elsewhere)."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def describe():
    """One line: CPU model, cores this process may use, Python and numpy versions."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (
        f"machine: {cpu_model()}, {cores} cores, {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}, numpy {np.__version__}"
    )
