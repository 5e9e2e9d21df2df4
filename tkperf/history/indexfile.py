"""The history index's file: an untrusted file in a directory others may write.

``.tkperf-history.sqlite`` sits beside the results, in a folder that other
users or machines may write (a shared NFS folder, a sticky directory).
SQLite is never given its path: it would follow a link planted there (and
so would its journal and WAL files, named after it), and it takes its
locks there.  Instead:

* :func:`read_index` opens the file itself with ``O_NOFOLLOW`` (a link is
  never opened) relative to the directory's descriptor, and trusts what it
  opened only when ``fstat`` on that descriptor shows a regular file with
  one link, owned by the caller (the effective uid) and not writable by
  group or others.  Anything else is not read, not written and not
  deleted: the history is built in memory from the result files, and one
  line says why.
* A writer that holds the file locked (another ``tkperf history`` of an
  older tkperf, or any SQLite program in a write transaction) is waited
  for, at most :data:`LOCK_WAIT_S` seconds; then the file is left as it
  is and the history built in memory.
* The bytes read are copied into a private temporary directory (mode
  0700), where SQLite works on them: its journal goes there too.
* :func:`write_index` puts the result back atomically: a new file made
  beside the index with ``O_CREAT | O_EXCL | O_NOFOLLOW`` and mode 0600,
  written, synced and renamed over the index (a rename never follows a
  link).  A full disk leaves the old index as it was and says so in one
  line; the pages are made from memory.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
import stat
import time
from dataclasses import dataclass
from typing import List, Optional, Tuple

#: How long a writer's lock on the index is waited for.
LOCK_WAIT_S = 5.0
#: Largest index read; a larger one is not an index tkperf wrote.
MAX_INDEX_BYTES = 1 << 30
#: SQLite's lock bytes (``os_unix.c``: PENDING_BYTE at 1 GiB, then the
#: RESERVED byte and the 510 SHARED bytes): a writer holds them.
_PENDING_BYTE = 0x40000000
_LOCK_SPAN = 512
_NOT_SPACE = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


@dataclass(frozen=True)
class Loaded:
    """What :func:`read_index` found: the index's bytes (None: nothing to
    start from), whether it may be replaced when done, and a line for the
    user ("" when there is nothing to say)."""

    data: Optional[bytes]
    writable: bool
    note: str = ""


def cut_short(data: bytes) -> str:
    """Why ``data`` is not a whole SQLite database ("" when its size is the
    one its header records): a copy or a disk that lost its end.  Told from
    what SQLite itself records in the file's header (page size at byte 16,
    page count at byte 28, valid while the change counters at bytes 24 and
    92 agree), not from whether a query happens to fail."""
    if not data:
        return ""
    if len(data) < 100 or not data.startswith(b"SQLite format 3\x00"):
        return f"not an SQLite database ({len(data):,} bytes)"
    page = int.from_bytes(data[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(data[28:32], "big")
    if data[24:28] != data[92:96] or pages == 0 or page < 512:
        return ""  # a header whose size field an older SQLite did not keep: quick_check judges
    if len(data) < pages * page:
        return f"cut short: {len(data):,} bytes of the {pages * page:,} its header records"
    return ""


def _untrusted(path: str, why: str) -> Loaded:
    return Loaded(None, False, f"{path}: {why}; not trusted: the history is built from the result "
                               f"files in memory and the index is left as it is")


def _why_not(st: os.stat_result) -> str:
    """Why an opened index is not trusted ("" when it is)."""
    if not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_uid != os.geteuid():
        return f"owned by uid {st.st_uid}, not by you (uid {os.geteuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"writable by group or others (mode {stat.S_IMODE(st.st_mode):04o})"
    if st.st_nlink != 1:
        return f"has {st.st_nlink} hard links"
    if st.st_size > MAX_INDEX_BYTES:
        return f"{st.st_size} bytes, larger than an index can be ({MAX_INDEX_BYTES})"
    return ""


def _writer_holds(fd: int) -> bool:
    """Whether another process holds SQLite's write locks on the file
    (a shared lock on their bytes cannot be had)."""
    try:
        fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB, _LOCK_SPAN, _PENDING_BYTE, os.SEEK_SET)
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            return True
        if exc.errno == errno.ENOLCK:  # a file system without locks (NFS without lockd): none to wait for
            return False
        raise
    fcntl.lockf(fd, fcntl.LOCK_UN, _LOCK_SPAN, _PENDING_BYTE, os.SEEK_SET)
    return False


def read_all(fd: int) -> bytes:
    """Everything left to read from ``fd``."""
    chunks: List[bytes] = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def read_index(dir_fd: int, name: str, shown: str, wait_s: Optional[float] = None) -> Loaded:
    """The index ``name`` in the directory ``dir_fd`` (``shown``: its path in messages)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except FileNotFoundError:
        return Loaded(None, True)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return _untrusted(shown, "a symbolic link")
        return _untrusted(shown, f"cannot be opened ({exc.strerror})")
    try:
        why = _why_not(os.fstat(fd))
        if why:
            return _untrusted(shown, why)
        wait = LOCK_WAIT_S if wait_s is None else wait_s
        deadline = time.monotonic() + wait
        while _writer_holds(fd):
            if time.monotonic() >= deadline:
                return Loaded(None, False, f"{shown}: held by another process writing it (waited {wait:g} s); "
                                           f"the history is built from the result files in memory and the "
                                           f"index is left as it is")
            time.sleep(0.05)
        return Loaded(read_all(fd), True)
    except OSError as exc:
        return _untrusted(shown, f"cannot be read ({exc.strerror})")
    finally:
        os.close(fd)


def write_index(dir_fd: int, name: str, shown: str, data: bytes) -> Tuple[bool, str]:
    """Replace the index ``name`` by ``data`` atomically: (done, a line for
    the user).  A directory the caller cannot write is no news (the index
    lives in memory for the run, as documented); a full disk is."""
    tmp = f".{name}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                     dir_fd=dir_fd)
    except OSError as exc:
        return False, _write_failed(shown, exc)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        return False, _write_failed(shown, exc)
    return True, ""


def _write_failed(shown: str, exc: OSError) -> str:
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return ""  # a directory the caller cannot write: the index lives in memory for the run
    what = "no space left on the device" if exc.errno in _NOT_SPACE else exc.strerror
    return f"{shown}: not updated ({what}); the history is shown from memory"
