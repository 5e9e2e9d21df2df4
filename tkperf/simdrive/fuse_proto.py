"""The little of the FUSE kernel protocol the emulated SSD needs.

The structures are those of the kernel's ``include/uapi/linux/fuse.h``
(protocol 7.x), packed with :mod:`struct`; :func:`mount` and
:func:`unmount` call mount(2) and umount2(2) through ctypes.  One
directory (the root, node 1) holds one regular file (node 2): the drive.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
from typing import Optional

ROOT_ID = 1
FILE_ID = 2
FILE_NAME = b"drive"

# opcodes
LOOKUP, FORGET, GETATTR, SETATTR = 1, 2, 3, 4
OPEN, READ, WRITE, STATFS, RELEASE = 14, 15, 16, 17, 18
FSYNC, GETXATTR, FLUSH, INIT = 20, 22, 25, 26
OPENDIR, READDIR, RELEASEDIR, FSYNCDIR, ACCESS = 27, 28, 29, 30, 34
INTERRUPT, DESTROY, BATCH_FORGET, FALLOCATE, LSEEK, SYNCFS = 36, 38, 42, 43, 46, 50
NO_REPLY = (FORGET, BATCH_FORGET, INTERRUPT)

# INIT flags
ASYNC_READ = 1 << 0
BIG_WRITES = 1 << 5
ASYNC_DIO = 1 << 15
MAX_PAGES = 1 << 22
INIT_EXT = 1 << 30
# fallocate modes
FALLOC_FL_KEEP_SIZE = 0x01
FALLOC_FL_PUNCH_HOLE = 0x02
FALLOC_FL_ZERO_RANGE = 0x10

IN_HEADER = struct.Struct("<IIQQIIIHH")      # len opcode unique nodeid uid gid pid extlen pad
OUT_HEADER = struct.Struct("<IiQ")           # len error unique
INIT_IN = struct.Struct("<IIII")             # major minor max_readahead flags (flags2 after)
INIT_OUT = struct.Struct("<IIIIHHIIHHI28x")  # ... max_background congestion max_write time_gran max_pages
ATTR = struct.Struct("<QQQQQQIIIIIIIIII")    # fuse_attr
ENTRY_OUT = struct.Struct("<QQQQII")         # nodeid generation entry_valid attr_valid nsecs (+ attr)
ATTR_OUT = struct.Struct("<QII")             # attr_valid nsec dummy (+ attr)
OPEN_OUT = struct.Struct("<QII")             # fh open_flags padding
RW_IN = struct.Struct("<QQII")               # fh offset size flags (read_in / write_in head)
WRITE_IN_SIZE = 40
WRITE_OUT = struct.Struct("<II")
FALLOCATE_IN = struct.Struct("<QQQI")        # fh offset length mode
STATFS_OUT = struct.Struct("<QQQQQIII28x")   # fuse_kstatfs
DIRENT = struct.Struct("<QQII")              # ino off namelen type

MAX_WRITE = 1 << 20
BUFFER = MAX_WRITE + 4096


def out(unique: int, error: int = 0, body: bytes = b"") -> bytes:
    """A reply: ``error`` is a positive errno (0 for success)."""
    return OUT_HEADER.pack(OUT_HEADER.size + len(body), -error, unique) + body


def attr(node: int, size: int) -> bytes:
    if node == ROOT_ID:
        return ATTR.pack(ROOT_ID, 0, 0, 0, 0, 0, 0, 0, 0, 0o40755, 2, 0, 0, 0, 4096, 0)
    return ATTR.pack(FILE_ID, size, size // 512, 0, 0, 0, 0, 0, 0, 0o100600, 1, 0, 0, 0, 4096, 0)


def init_reply(unique: int, body: memoryview) -> bytes:
    major, minor, _readahead, flags = INIT_IN.unpack_from(body)
    want = ASYNC_READ | BIG_WRITES | ASYNC_DIO | MAX_PAGES
    return out(unique, 0, INIT_OUT.pack(7, min(minor, 38), 1 << 20, flags & want, 1024, 768, MAX_WRITE, 1,
                                        MAX_WRITE // 4096, 0, 0))


def dirents() -> bytes:
    parts = []
    for i, (ino, name, kind) in enumerate(((ROOT_ID, b".", 4), (ROOT_ID, b"..", 4), (FILE_ID, FILE_NAME, 8))):
        entry = DIRENT.pack(ino, i + 1, len(name), kind) + name
        parts.append(entry + b"\0" * (-len(entry) % 8))
    return b"".join(parts)


_libc: Optional[ctypes.CDLL] = None


def libc() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    return _libc


MS_NOSUID, MS_NODEV = 2, 4
MNT_DETACH = 2


def mount(fd: int, mountpoint: str) -> None:
    data = f"fd={fd},rootmode=40000,user_id=0,group_id=0,allow_other".encode()
    if libc().mount(b"tkperf-simdrive", os.fsencode(mountpoint), b"fuse", MS_NOSUID | MS_NODEV, data) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount of the FUSE file system failed: {os.strerror(err)}")


def unmount(mountpoint: str) -> bool:
    """Lazy unmount; whether something was mounted there."""
    return libc().umount2(os.fsencode(mountpoint), MNT_DETACH) == 0


def punch(fd: int, offset: int, length: int) -> None:
    """Deallocate a range of the data file (reads give zeros after it)."""
    lib = libc()
    lib.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong]
    if lib.fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset, length) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
