"""What a target path names, and what tells one target from another.

**The path**, resolved the way the kernel resolves it.  Every path a user, a
request file or a controlling host names as a target comes through
:func:`resolve`.  The path is opened with ``O_PATH`` (it opens nothing for
I/O: a block device is neither read nor written), so the kernel itself walks
it: symbolic links are followed as an ``open`` follows them, and a component
that is not a directory fails with ``ENOTDIR``.  The real path is then read
back from the opened descriptor (``/proc/self/fd/N``), never worked out from
the text: ``/dev/loop0/../loop1`` is refused, as the kernel refuses it,
instead of being taken for ``/dev/loop1``.  Where ``/proc`` is not mounted,
:func:`os.path.realpath` stands in, and only after the kernel accepted every
component; its answer must then be the very inode the descriptor holds.

What :func:`resolve` returns carries the opened inode's numbers (``st_rdev``
of a device node, ``st_dev``/``st_ino`` of a file), so that whatever opens
the target later for I/O can check it opened the same thing
(:func:`same_node`).

A target on a test host, ``HOST:/dev/...``, is told from a path on this
host by :func:`split_target`, before anything is resolved.

**The identity**: what tells one target from another beyond its path and
size.  A device path names whatever has that name now: loop numbers are
reused within seconds, and ``/dev/sdb`` after a reboot may be another disk.
A resumed run must therefore find the *same* target, and the result file
keeps what identifies it (``docs/resilience.rst``):

* a drive's serial number, model and firmware (read with its other facts
  in :mod:`tkperf.target.device`);
* its world-wide names: ``wwn`` (lsblk's WWN, or sysfs ``wwid``: a SCSI
  disk's VPD page 0x83 designator, an NVMe namespace's ``eui.``/``nvme.``
  /``uuid.`` name), and for an NVMe namespace its ``eui`` (EUI-64),
  ``nguid`` and ``nsid`` from sysfs;
* for a loop device, its backing file: the ``st_dev`` and ``st_ino`` the
  kernel holds for it (``LOOP_GET_STATUS64``: ``lo_device``, ``lo_inode``,
  and the offset into it), or sysfs ``loop/backing_file`` and ``stat``;
* for a file target, the file's own ``st_dev`` and ``st_ino``;
* with each of those files, its birth time where the file system keeps one
  (``statx`` ``STATX_BTIME``): a file deleted and made again often gets
  the same inode number at once, never the same birth time.

The inode numbers are written ``MAJ:MIN:INODE`` (``@OFFSET`` added for a
loop device that starts past the file's beginning, ``~NANOSECONDS`` for
the birth time).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fcntl
import os
import re
import stat
import struct
from dataclasses import dataclass
from typing import NamedTuple, Optional, Tuple

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


#: ``LOOP_GET_STATUS64`` (linux/loop.h) and the head of ``struct loop_info64``:
#: lo_device, lo_inode, lo_rdevice, lo_offset, lo_sizelimit (five __u64).
LOOP_GET_STATUS64 = 0x4C05
LOOP_INFO64_SIZE = 232
_HEAD = struct.Struct("=QQQQQ")

#: What the kernel says when a namespace has no such identifier.
_UNSET = {"", "0", "00000000-0000-0000-0000-000000000000"}


def read_text(path: str) -> str:
    """A small sysfs file's text, stripped; '' when it cannot be read.  A
    loop device's ``backing_file`` is a path, any bytes but NUL: bytes that
    are not UTF-8 come back as the file system's escapes (os.fsdecode's)."""
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            return fh.read().strip()
    except OSError:
        return ""


def _real(value: str) -> str:
    text = value.strip()
    if text in _UNSET or set(text.replace("-", "").replace(":", "").replace(" ", "")) <= {"0"}:
        return ""
    return text


#: statx(2): AT_FDCWD, STATX_BTIME, and where stx_ino, stx_dev and stx_btime
#: stand in ``struct statx`` (linux/stat.h; 256 bytes).
_AT_FDCWD = -100
_STATX_BTIME = 0x800
_STATX = struct.Struct("=I28xQ40xqI")  # stx_mask at 0, stx_ino at 32, stx_btime at 80
_statx_fn: Optional[object] = None


def _statx():
    global _statx_fn
    if _statx_fn is None:
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            fn = libc.statx
            fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_char_p]
            _statx_fn = fn
        except (OSError, AttributeError):  # a C library without statx (glibc < 2.28)
            _statx_fn = False
    return _statx_fn


def birth_ns(path: str, st: os.stat_result) -> Optional[int]:
    """The birth time of the file at ``path`` in nanoseconds, None where the
    file system keeps none or ``path`` is no longer the file ``st`` describes."""
    fn = _statx()
    if not fn:
        return None
    buf = ctypes.create_string_buffer(256)
    if fn(_AT_FDCWD, os.fsencode(path), 0, _STATX_BTIME, buf) != 0:
        return None
    mask, ino, sec, nsec = _STATX.unpack_from(buf.raw)
    if not mask & _STATX_BTIME or ino != st.st_ino:
        return None
    return sec * 1_000_000_000 + nsec


def inode_of(st: os.stat_result, path: str = "") -> str:
    """'MAJ:MIN:INODE' of a file's ``stat``, with '~BIRTH' (ns) when ``path``
    is given and its file system keeps a birth time."""
    born = birth_ns(path, st) if path else None
    return f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}:{st.st_ino}" + (f"~{born}" if born is not None else "")


def loop_backing(devnode: str, sysdir: str) -> str:
    """'MAJ:MIN:INODE[@OFFSET]' of the file under the loop device ``devnode``
    ('' when the kernel says none)."""
    try:
        fd = os.open(devnode, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        fd = -1
    if fd >= 0:
        try:
            buf = fcntl.ioctl(fd, LOOP_GET_STATUS64, bytes(LOOP_INFO64_SIZE))
            device, inode, _rdevice, offset, _limit = _HEAD.unpack_from(buf)
            where = f"{os.major(device)}:{os.minor(device)}:{inode}" + _backing_birth(sysdir, device, inode)
            return where + (f"@{offset}" if offset else "")
        except OSError:
            pass  # not bound to a file (ENXIO), or no such ioctl: sysfs below
        finally:
            os.close(fd)
    found = _backing_file(sysdir)
    if found is None:
        return ""
    offset = read_text(os.path.join(sysdir, "loop", "offset"))
    return inode_of(found[1], found[0]) + (f"@{offset}" if offset.isdigit() and int(offset) else "")


def _backing_file(sysdir: str) -> Optional[Tuple[str, os.stat_result]]:
    """The loop device's backing file as sysfs names it, and its ``stat``
    (None: no file, a deleted one, or one that cannot be read)."""
    backing = read_text(os.path.join(sysdir, "loop", "backing_file"))
    if not backing.startswith("/") or backing.endswith("(deleted)"):
        return None
    try:
        return backing, os.stat(backing)
    except OSError:
        return None


def _backing_birth(sysdir: str, device: int, inode: int) -> str:
    """'~BIRTH' of the loop device's backing file when its path in sysfs still
    names the file the kernel holds (``device``, ``inode``), else ''."""
    found = _backing_file(sysdir)
    if found is None or found[1].st_dev != device or found[1].st_ino != inode:
        return ""
    born = birth_ns(*found)
    return f"~{born}" if born is not None else ""


class BlockIds(NamedTuple):
    """The identifiers a block device has ('' for those it has not)."""

    wwn: str = ""
    eui64: str = ""
    nguid: str = ""
    nsid: str = ""
    inode: str = ""


def block_ids(name: str, sysdir: str, devnode: str, lsblk_wwn: str = "") -> BlockIds:
    """The world-wide names of block device ``name`` (sysfs ``sysdir``) and,
    for a loop device, its backing file."""
    devdir = os.path.join(sysdir, "device")
    return BlockIds(
        wwn=_real(lsblk_wwn) or _real(read_text(os.path.join(sysdir, "wwid")))
        or _real(read_text(os.path.join(devdir, "wwid"))),
        eui64=_real(read_text(os.path.join(sysdir, "eui"))),
        nguid=_real(read_text(os.path.join(sysdir, "nguid"))),
        nsid=_real(read_text(os.path.join(sysdir, "nsid"))),
        inode=loop_backing(devnode, sysdir) if name.startswith("loop") else "",
    )
