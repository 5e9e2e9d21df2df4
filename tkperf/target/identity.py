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
* for a file target, the file's own ``st_dev`` and ``st_ino``.

The inode numbers are written ``MAJ:MIN:INODE`` (``@OFFSET`` added for a
loop device that starts past the file's beginning).
"""
from __future__ import annotations

import fcntl
import os
import struct
from typing import NamedTuple

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


def inode_of(st: os.stat_result) -> str:
    """'MAJ:MIN:INODE' of a file's ``stat``."""
    return f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}:{st.st_ino}"


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
            where = f"{os.major(device)}:{os.minor(device)}:{inode}"
            return where + (f"@{offset}" if offset else "")
        except OSError:
            pass  # not bound to a file (ENXIO), or no such ioctl: sysfs below
        finally:
            os.close(fd)
    backing = read_text(os.path.join(sysdir, "loop", "backing_file"))
    if not backing.startswith("/") or backing.endswith("(deleted)"):
        return ""
    try:
        st = os.stat(backing)
    except OSError:
        return ""
    offset = read_text(os.path.join(sysdir, "loop", "offset"))
    return inode_of(st) + (f"@{offset}" if offset.isdigit() and int(offset) else "")


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
