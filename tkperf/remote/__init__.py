"""Remote targets: ``HOST:/dev/nvme1n1``.

fio's workloads go through ``fio --client=HOST,PORT`` to a ``fio --server``
on the test host (:mod:`tkperf.remote.fio`); everything else a run does to
the target (resolving it, the safety refusals, the lock and O_EXCL, device
and host facts, the write cache, the purge, health snapshots) is done on
the test host by ``tkperf agent``, the same code a local run uses, reached
over SSH with the user's own OpenSSH configuration (:mod:`tkperf.remote.ssh`,
:mod:`tkperf.remote.agent`, :mod:`tkperf.remote.proxy`).
"""
from __future__ import annotations

import re
from typing import Optional, Tuple

#: fio's default server port (``fio --server``).
FIO_PORT = 8765

_REMOTE = re.compile(r"(?P<host>[A-Za-z0-9_.@%\[\]-]+):(?P<path>/.*)")


def split_target(text: str) -> Optional[Tuple[str, str]]:
    """(host, path) of ``HOST:/dev/...``; None for a path on this host."""
    m = _REMOTE.fullmatch(text)
    if m is None or text.startswith(("/", ".")):
        return None
    return m.group("host"), m.group("path")


def fio_host(host: str) -> str:
    """The address fio's client connects to: the SSH host without a ``user@``."""
    return host.rsplit("@", 1)[-1].strip("[]")
