"""Facts about the test platform for the SNIA report header."""
from __future__ import annotations

import os
import platform
import socket

from tkperf import __version__
from tkperf.model.results import HostInfo


def _first(path: str, key: str) -> str:
    try:
        with open(path) as fh:
            for line in fh:
                if line.startswith(key):
                    return line.split(":", 1)[1].strip() if ":" in line else line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return ""


def collect(fio_version: str) -> HostInfo:
    mem = _first("/proc/meminfo", "MemTotal")
    memory = int(mem.split()[0]) * 1024 if mem else 0
    return HostInfo(
        hostname=socket.gethostname(),
        kernel=platform.release(),
        os=_first("/etc/os-release", "PRETTY_NAME") or platform.system(),
        cpu=_first("/proc/cpuinfo", "model name") or platform.machine(),
        cores=os.cpu_count() or 0,
        memory_bytes=memory,
        fio_version=fio_version,
        tkperf_version=__version__,
        python=platform.python_version(),
    )
