"""What keeps a run safe while it goes on: one run per device, signals turned
into a clean stop.

* :class:`DeviceLock`: an ``flock`` on a lock file named after the device, with
  the holder's PID inside, so a second run on the same device is refused
  with that PID.  The kernel drops the lock when the process dies, even by
  SIGKILL, so a crashed run never blocks the next.
* :func:`signals_raise`: SIGINT, SIGTERM and SIGHUP raise
  :class:`~tkperf.errors.Interrupted` in the main thread; the runner then
  stops fio, saves what it has and says where it stopped.  Further signals
  are ignored while that clean-up runs.
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import signal
from typing import Dict, Iterator, Optional

from tkperf import programs
from tkperf.errors import Interrupted, LockedError
from tkperf.model.files import open_own
from tkperf.model.results import DeviceInfo

LOCK_DIRS = ("/run/lock", "/var/lock", "/tmp")
SIGNALS: Dict[int, str] = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP"}


def _lock_name(dev: DeviceInfo) -> str:
    if dev.kind == "block":
        st = os.stat(dev.resolved)
        return f"tkperf-dev-{os.major(st.st_rdev)}-{os.minor(st.st_rdev)}.lock"
    digest = hashlib.sha1(dev.resolved.encode()).hexdigest()[:16]
    return f"tkperf-file-{digest}.lock"


class DeviceLock:
    """Exclusive advisory lock for one device; ``with DeviceLock(dev):``."""

    def __init__(self, dev: DeviceInfo, directory: Optional[str] = None) -> None:
        self.dev = dev
        directory = directory or next((d for d in LOCK_DIRS if os.access(d, os.W_OK)), "/tmp")
        self.path = os.path.join(directory, _lock_name(dev))
        self.fd: Optional[int] = None

    def acquire(self) -> None:
        # The lock directory is writable by others: a planted link or file
        # there must not make root truncate and write whatever it points to.
        fd = open_own(self.path, os.O_RDWR | os.O_CREAT, "lock file")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                holder = os.read(fd, 64).decode(errors="replace").strip() or "unknown"
            finally:
                os.close(fd)
            raise LockedError(f"{self.dev.path}: another tkperf run (PID {holder}) is testing "
                              f"this device (lock {self.path})") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self.fd = fd

    def release(self) -> None:
        # The file stays: unlinking it would let a waiting opener lock a
        # deleted inode while a third process locks a new file.
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> DeviceLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _raise(signum: int) -> None:
    raise Interrupted(signum, SIGNALS.get(signum, str(signum)))


@contextlib.contextmanager
def signals_raise() -> Iterator[None]:
    """Within the block, SIGINT/SIGTERM/SIGHUP raise Interrupted (once)."""
    previous = {s: signal.getsignal(s) for s in SIGNALS}
    owner = os.getpid()

    def handler(signum: int, frame: object) -> None:
        if os.getpid() != owner:  # a forked helper (a drawing process) ends by the signal
            if programs.starting():  # making a temporary file: raised once its name is known
                programs.defer(lambda: _raise(signum))
                return
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            signal.signal(signum, signal.SIG_DFL)  # its own effect, as without tkperf's handler
            os.kill(os.getpid(), signum)
            return
        if programs.starting():  # raised inside fork hooks, it would be lost
            programs.defer(lambda: handler(signum, frame))
            return
        for s in SIGNALS:  # the clean-up that follows must not be cut short
            signal.signal(s, signal.SIG_IGN)
        raise Interrupted(signum, SIGNALS.get(signum, str(signum)))

    for s in SIGNALS:
        signal.signal(s, handler)
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
