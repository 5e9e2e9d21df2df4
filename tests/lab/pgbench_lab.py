"""A real application to capture: PostgreSQL with its data directory on an
ext4 file system on a loop device made for it, loaded by ``pgbench``.

Used by tests/e2e/test_rwsw_pgbench.py, benchmarks/rwsw.py and
examples/rwsw/regenerate.py.  Needs root (the loop device, mkfs, mount)
and Debian's ``postgresql`` (server binaries under
/usr/lib/postgresql/VERSION/bin, the ``postgres`` user) and ``pgbench``.
The server listens on a Unix socket in the lab's own directory only; on
exit it is stopped, the file system unmounted and the loop device
detached, whatever happened.
"""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import tempfile
from typing import List, Optional

from tkperf.target.loopdev import LoopDevice

MiB = 1024 * 1024
PORT = 54329


def server_bin() -> Optional[str]:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return os.path.dirname(found[-1]) if found else None


def why_not() -> str:
    """Why the lab cannot run here ('' when it can)."""
    if os.geteuid() != 0:
        return "needs root"
    if server_bin() is None:
        return "needs PostgreSQL's server (Debian postgresql)"
    for tool in ("pgbench", "runuser", "mkfs.ext4", "mount", "umount"):
        if shutil.which(tool) is None:
            return f"needs {tool}"
    try:
        subprocess.run(["id", "postgres"], check=True, capture_output=True)
    except (subprocess.CalledProcessError, OSError):
        return "needs the postgres user"
    return ""


class PgbenchLab:
    """``with PgbenchLab(dir) as lab:`` a running PostgreSQL with a pgbench
    database of ``scale`` on ``lab.device``."""

    def __init__(self, workdir: str, size: int = 512 * MiB, scale: int = 4) -> None:
        self.workdir = workdir
        self.size = size
        self.scale = scale
        self.loop: Optional[LoopDevice] = None
        self.mnt = ""
        self.mounted = False
        self.started = False

    @property
    def device(self) -> str:
        assert self.loop is not None
        return self.loop.path

    def _as_postgres(self, argv: List[str], **kw) -> subprocess.CompletedProcess:
        return subprocess.run(["runuser", "-u", "postgres", "--", *argv], check=True, capture_output=True,
                              text=True, **kw)

    def _client(self, tool: str) -> List[str]:
        return ["runuser", "-u", "postgres", "--", tool, "-h", os.path.join(self.mnt, "sock"), "-p", str(PORT)]

    def __enter__(self) -> PgbenchLab:
        try:
            self.loop = LoopDevice(self.size, self.workdir)
            self.loop.__enter__()
            subprocess.run(["mkfs.ext4", "-q", "-F", self.device], check=True, capture_output=True)
            self.mnt = tempfile.mkdtemp(prefix="tkperf-pgbench-")  # /tmp: the postgres user can reach it
            os.chmod(self.mnt, 0o755)
            subprocess.run(["mount", self.device, self.mnt], check=True, capture_output=True)
            self.mounted = True
            for d in ("data", "sock"):
                os.mkdir(os.path.join(self.mnt, d), 0o700)
                shutil.chown(os.path.join(self.mnt, d), "postgres", "postgres")
            pgbin = server_bin()
            assert pgbin is not None
            data = os.path.join(self.mnt, "data")
            self._as_postgres([os.path.join(pgbin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres",
                               "--no-sync"], timeout=120)
            opts = (f"-k {os.path.join(self.mnt, 'sock')} -p {PORT} -c listen_addresses='' "
                    "-c shared_buffers=16MB -c max_wal_size=64MB")
            self._as_postgres([os.path.join(pgbin, "pg_ctl"), "-D", data, "-o", opts, "-w", "-l",
                               os.path.join(self.mnt, "sock", "server.log"), "start"], timeout=120)
            self.started = True
            subprocess.run([*self._client("pgbench"), "-i", "-q", "-s", str(self.scale), "postgres"],
                           check=True, capture_output=True, timeout=300)
            self.checkpoint()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def checkpoint(self) -> None:
        subprocess.run([*self._client("psql"), "-q", "-c", "CHECKPOINT", "postgres"], check=True,
                       capture_output=True, timeout=120)

    def start_load(self, seconds: int, clients: int = 4) -> subprocess.Popen:
        """pgbench's TPC-B-like transactions for ``seconds`` (its stdout tells the TPS)."""
        return subprocess.Popen([*self._client("pgbench"), "-n", "-T", str(seconds), "-c", str(clients), "-j", "2",
                                 "postgres"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    @staticmethod
    def tps(out: str) -> float:
        """Transactions per second from pgbench's report."""
        m = re.search(r"tps = ([\d.]+)", out)
        if m is None:
            raise ValueError(f"no tps in pgbench's output: {out[-300:]!r}")
        return float(m.group(1))

    def __exit__(self, *exc: object) -> None:
        pgbin = server_bin()
        if self.started and pgbin is not None:
            subprocess.run(["runuser", "-u", "postgres", "--", os.path.join(pgbin, "pg_ctl"), "-D",
                            os.path.join(self.mnt, "data"), "-m", "fast", "-w", "stop"], capture_output=True,
                           timeout=120)
            self.started = False
        if self.mounted:
            subprocess.run(["umount", self.mnt], capture_output=True, timeout=120)
            self.mounted = False
        if self.mnt and os.path.isdir(self.mnt) and not os.listdir(self.mnt):
            os.rmdir(self.mnt)
        if self.loop is not None:
            self.loop.__exit__(None, None, None)
            self.loop = None
