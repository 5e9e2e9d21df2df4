"""Where a run wrote on a block device, told by the device's own bytes: fill
it with one byte value, let tkperf run, read it back (O_DIRECT both ways,
so no page cache stands between the test and the device), and hold every
changed 4 KiB block against the ActiveRange segments regenerated from the
seed the result file stored.  Used on this host (tests/e2e/test_ar_segments_device.py)
and in the QEMU guest, whose kernel has device-mapper (tests/lab/vm_guest.py)."""
from __future__ import annotations

import hashlib
import mmap
import os
from typing import Dict, List

BLOCK = 4096
CHUNK = 1 << 20


def _size(path: str) -> int:
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.lseek(fd, 0, os.SEEK_END)
    finally:
        os.close(fd)


def _chunks(path: str, flags: int, fill: int = -1):
    """(offset, length, buffer) for each 1 MiB chunk of ``path`` opened
    O_DIRECT with ``flags``: read into the buffer (O_RDONLY), or written
    from it, every byte ``fill`` (O_WRONLY)."""
    size = _size(path)
    buf = mmap.mmap(-1, CHUNK)
    if fill >= 0:
        buf.write(bytes([fill]) * CHUNK)
    fd = os.open(path, flags | os.O_DIRECT)
    try:
        for off in range(0, size, CHUNK):
            n = min(CHUNK, size - off)
            view = memoryview(buf)[:n]
            io = os.pwritev if fill >= 0 else os.preadv
            assert io(fd, [view], off) == n
            view.release()
            yield off, n, buf
        if fill >= 0:
            os.fsync(fd)
    finally:
        os.close(fd)


def fill(path: str, byte: int) -> int:
    """Every byte of the device ``path`` set to ``byte``; its size."""
    for _ in _chunks(path, os.O_WRONLY, byte):
        pass
    return _size(path)


def changed_blocks(path: str, byte: int) -> List[int]:
    """The offsets of the 4 KiB blocks of ``path`` holding any other byte than ``byte``."""
    same = bytes([byte]) * BLOCK
    out: List[int] = []
    for off, n, buf in _chunks(path, os.O_RDONLY):
        data = buf[:n]
        if data.count(byte) != n:
            out += [off + i for i in range(0, n, BLOCK) if data[i:i + BLOCK] != same]
    return out


def digest(path: str) -> str:
    """sha256 of the whole device, read with O_DIRECT."""
    h = hashlib.sha256()
    for _, n, buf in _chunks(path, os.O_RDONLY):
        h.update(buf[:n])
    return h.hexdigest()


def judge(changed: List[int], starts: List[int], size: int) -> Dict[str, object]:
    """How the changed blocks lie against segments of ``size`` bytes at ``starts``."""
    import bisect

    hit = set()
    outside = []
    for off in changed:
        i = bisect.bisect_right(starts, off) - 1
        if i >= 0 and off + BLOCK <= starts[i] + size:
            hit.add(i)
        else:
            outside.append(off)
    return {"changed_blocks": len(changed), "segments": len(starts), "segments_written": len(hit),
            "outside": outside[:20], "outside_count": len(outside)}
