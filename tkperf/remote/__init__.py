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

#: fio's default server port (``fio --server``).
FIO_PORT = 8765

# A target named HOST:/dev/... is told from a local path by
# tkperf.target.identity.split_target, which a local run calls too.


def fio_host(host: str) -> str:
    """The address fio's client connects to: the SSH host without a ``user@``."""
    return host.rsplit("@", 1)[-1].strip("[]")
