"""The iolog of a combined capture (:mod:`tkperf.rwsw.combine`): the sources'
iologs (fio iolog version 3, as ``tkperf capture`` writes them) joined line
by line, streamed, never held: ``days`` one after the other, each source's
times moved by where it begins; ``hosts`` merged in time order.  Every
address moves to its device's place in the combined capture, which lays
its devices end to end; a flush (``sync``, no address) stays as it is.

The sources' iologs are untrusted input, opened without following another
user's link (:func:`tkperf.model.files.open_to_read`): a line that is not
``TIME FILE ACTION [OFFSET LENGTH]`` with an action of fio's, or an
address beyond its capture's devices, is refused with one line naming the
file and the line (exit 7).
"""
from __future__ import annotations

import bisect
import heapq
import os
from typing import IO, Iterator, List, Optional, Sequence, Tuple

from tkperf.errors import ResultFileError
from tkperf.model.files import open_to_read
from tkperf.rwsw.analysis import IOLOG_FILE
from tkperf.rwsw.model import Capture

HEADER = b"fio version 3 iolog"
_IO = (b"read", b"write", b"trim")
_NO_ADDRESS = (b"sync", b"datasync")
_FILE = (b"add", b"open", b"close")
#: A line longer than this is not an iolog line.
MAX_LINE = 4096


def iolog_path(xml: str, c: Capture) -> Optional[str]:
    """The iolog beside a capture's XML, None where it has none or it is missing."""
    if c.iolog is None:
        return None
    path = os.path.join(os.path.dirname(os.path.abspath(xml)), c.iolog)
    return path if os.path.lexists(path) else None


def _lines(path: str, shift_us: int, bases: Sequence[int], sizes: Sequence[int],
           moved: Sequence[int]) -> Iterator[Tuple[int, bytes, int, int]]:
    """(time µs, action, offset, length) of every I/O line of one source's iolog,
    its time moved by ``shift_us`` and each address from its device's base
    (``bases``) to the combined capture's (``moved``)."""
    fd = open_to_read(path, "iolog", ResultFileError)
    with os.fdopen(fd, "rb") as fh:
        for n, line in enumerate(fh, 1):
            if len(line) > MAX_LINE:
                raise ResultFileError(f"{path}: line {n}: longer than {MAX_LINE} bytes; not an iolog line")
            f = line.split()
            if n == 1:
                if line.strip() != HEADER:
                    raise ResultFileError(f"{path}: not a fio iolog of version 3 (its first line)")
                continue
            if len(f) == 3 and f[2] in _FILE and f[0].isdigit():
                continue
            if len(f) != 5 or f[2] not in _IO + _NO_ADDRESS or not all(x.isdigit() for x in (f[0], f[3], f[4])):
                raise ResultFileError(f"{path}: line {n}: not TIME FILE ACTION OFFSET LENGTH of a fio iolog")
            t, off, length = int(f[0]), int(f[3]), int(f[4])
            if f[2] in _NO_ADDRESS:
                yield t + shift_us, f[2], 0, 0
                continue
            i = bisect.bisect_right(bases, off) - 1
            if i < 0 or off + length > bases[i] + sizes[i]:
                raise ResultFileError(f"{path}: line {n}: bytes {off} + {length} lie beyond its capture's devices")
            yield t + shift_us, f[2], moved[i] + off - bases[i], length


def write(out: IO[bytes], sources: Sequence[Tuple[str, Capture]], moved: Sequence[Sequence[int]],
          shifts: Sequence[float], merge: bool, duration: float) -> int:
    """Write the combined iolog to ``out``: each source's (its XML's path and
    capture) with its devices moved to ``moved`` (each source's devices'
    new bases) and its times by ``shifts`` (seconds); merged in time order
    (``merge``) or one after the other.  Returns the I/O lines written."""
    streams: List[Iterator[Tuple[int, bytes, int, int]]] = []
    for (xml, c), new, shift in zip(sources, moved, shifts):
        path = iolog_path(xml, c)
        assert path is not None
        streams.append(_lines(path, int(round(shift * 1e6)), [d.offset for d in c.parts], [d.size for d in c.parts],
                              new))
    name = IOLOG_FILE.encode()
    out.write(HEADER + b"\n0 " + name + b" add\n0 " + name + b" open\n")
    lines = heapq.merge(*streams, key=lambda x: x[0]) if merge else (x for s in streams for x in s)
    n = last = 0
    buf: List[bytes] = []
    for t, action, off, length in lines:
        last = max(last, t)  # never backwards (fio refuses it)
        buf.append(b"%d %s %s %d %d\n" % (last, name, action, off, length))
        n += 1
        if len(buf) >= 65536:
            out.write(b"".join(buf))
            buf = []
    out.write(b"".join(buf))
    out.write(b"%d %s close\n" % (max(last, int(round(duration * 1e6))), name))
    return n
