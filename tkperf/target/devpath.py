"""Target paths resolved the way the kernel resolves them.

Every path a user, a request file or a controlling host names as a target
comes through :func:`resolve`.  The path is opened with ``O_PATH`` (it
opens nothing for I/O: a block device is neither read nor written), so the
kernel itself walks it: symbolic links are followed as an ``open`` follows
them, and a component that is not a directory fails with ``ENOTDIR``.  The
real path is then read back from the opened descriptor
(``/proc/self/fd/N``), never worked out from the text: ``/dev/loop0/../loop1``
is refused, as the kernel refuses it, instead of being taken for
``/dev/loop1``.  Where ``/proc`` is not mounted, :func:`os.path.realpath`
stands in, and only after the kernel accepted every component; its answer
must then be the very inode the descriptor holds.

What :func:`resolve` returns carries the opened inode's numbers (``st_rdev``
of a device node, ``st_dev``/``st_ino`` of a file), so that whatever opens
the target later for I/O can check it opened the same thing
(:func:`same_node`).

A target on a test host, ``HOST:/dev/...``, is told from a path on this
host by :func:`split_target`, before anything is resolved.
"""
from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from typing import Optional, Tuple

from tkperf.errors import TargetError

_REMOTE = re.compile(r"(?P<host>[A-Za-z0-9_.@%\[\]-]+):(?P<path>/.*)")


def split_target(text: str) -> Optional[Tuple[str, str]]:
    """(host, path) of ``HOST:/dev/...``, a target on a test host
    (:mod:`tkperf.remote`); None for a path on this host."""
    m = _REMOTE.fullmatch(text)
    if m is None or text.startswith(("/", ".")):
        return None
    return m.group("host"), m.group("path")


@dataclass(frozen=True)
class Resolved:
    """A target path as the kernel resolved it."""

    given: str
    #: The kernel's absolute path of what the path names (for a file still
    #: to be created: its resolved directory and its name).
    real: str
    #: ``fstat`` of the opened path; None for a file still to be created.
    st: Optional[os.stat_result]

    @property
    def devnum(self) -> str:
        """'MAJ:MIN' of a device node, '' otherwise."""
        if self.st is None or not (stat.S_ISBLK(self.st.st_mode) or stat.S_ISCHR(self.st.st_mode)):
            return ""
        return f"{os.major(self.st.st_rdev)}:{os.minor(self.st.st_rdev)}"


def _not_a_directory(path: str) -> TargetError:
    return TargetError(f"{path}: a component of the path is not a directory (the kernel refuses it: "
                       "ENOTDIR); name the device itself, e.g. /dev/sdb")


def _real_of(fd: int, path: str, st: os.stat_result) -> str:
    """The absolute path of the inode open as ``fd``."""
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        real = ""
    if real.startswith("/") and not real.endswith(" (deleted)"):
        return real
    # No /proc: every component was checked by the kernel's walk above, so a
    # textual resolution now follows the same links; it must land on the same inode.
    real = os.path.realpath(path)
    try:
        again = os.stat(real)
    except OSError as exc:
        raise TargetError(f"{path}: {exc.strerror}") from None
    if (again.st_dev, again.st_ino) != (st.st_dev, st.st_ino):
        raise TargetError(f"{path}: changed while it was being resolved")
    return real


def _open_path(path: str, flags: int = 0) -> int:
    try:
        return os.open(path, os.O_PATH | os.O_CLOEXEC | flags)
    except NotADirectoryError:
        raise _not_a_directory(path) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise TargetError(f"{path}: too many levels of symbolic links") from None
        raise


def resolve(path: str, may_create: bool = False) -> Resolved:
    """``path`` resolved by the kernel (TargetError, exit 4, when it cannot
    be).  ``may_create``: a missing last component is a file still to be
    created in an existing directory (a file target with ``--size``)."""
    if not path:
        raise TargetError("no target given")
    if "\0" in path:
        raise TargetError(f"{path!r}: a path cannot hold a NUL character")
    try:
        fd = _open_path(path)
    except FileNotFoundError:
        if may_create:
            return _to_create(path)
        raise TargetError(f"{path}: no such device or file") from None
    except OSError as exc:
        raise TargetError(f"{path}: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        return Resolved(given=path, real=_real_of(fd, path, st), st=st)
    finally:
        os.close(fd)


def _to_create(path: str) -> Resolved:
    """A file that does not exist yet: its directory resolved by the kernel."""
    head, name = os.path.split(path)
    if name in ("", ".", ".."):
        raise TargetError(f"{path}: no such device or file")
    directory = head or "."
    try:
        fd = _open_path(directory, os.O_DIRECTORY)
    except TargetError:
        raise
    except FileNotFoundError:
        raise TargetError(f"{path}: no such device or file (its directory {directory} does not exist)") from None
    except OSError as exc:
        if exc.errno == errno.ENOTDIR:
            raise _not_a_directory(path) from None
        raise TargetError(f"{path}: {exc.strerror}") from None
    try:
        real_dir = _real_of(fd, directory, os.fstat(fd))
    finally:
        os.close(fd)
    return Resolved(given=path, real=os.path.join(real_dir, name), st=None)


def same_node(fd: int, devnum: str) -> bool:
    """Whether the descriptor ``fd`` holds the device node ``devnum``
    ('MAJ:MIN', as :attr:`Resolved.devnum`)."""
    st = os.fstat(fd)
    if not stat.S_ISBLK(st.st_mode):
        return False
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}" == devnum
