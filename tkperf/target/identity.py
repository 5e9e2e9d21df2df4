"""What tells one target from another beyond its path and size.

A device path names whatever has that name now: loop numbers are reused
within seconds, and ``/dev/sdb`` after a reboot may be another disk.  A
resumed run must therefore find the *same* target, and the result file
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
import fcntl
import os
import struct
from typing import NamedTuple, Optional, Tuple

#: ``LOOP_GET_STATUS64`` (linux/loop.h) and the head of ``struct loop_info64``:
#: lo_device, lo_inode, lo_rdevice, lo_offset, lo_sizelimit (five __u64).
LOOP_GET_STATUS64 = 0x4C05
LOOP_INFO64_SIZE = 232
_HEAD = struct.Struct("=QQQQQ")

#: What the kernel says when a namespace has no such identifier.
_UNSET = {"", "0", "00000000-0000-0000-0000-000000000000"}


def read_text(path: str) -> str:
    """A small sysfs file's text, stripped; '' when it cannot be read."""
    try:
        with open(path) as fh:
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
