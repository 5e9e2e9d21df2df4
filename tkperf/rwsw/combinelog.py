"""The iolog of a combined capture (:mod:`tkperf.rwsw.combine`): the sources'
iologs (either kind: tkperf's packed, or fio's text of an earlier tkperf)
joined I/O by I/O into a packed one, streamed, never held: ``days`` one after the other, each source's
times moved by where it begins; ``hosts`` merged in time order.  Every
address moves to its device's place in the combined capture, which lays
its devices end to end; a flush (``sync``, no address) stays as it is.

The sources' iologs are untrusted input, read by :func:`tkperf.rwsw.iolog.actions`
(without following another user's link, every action checked): one that is
not an iolog, or an address beyond its capture's devices, is refused with
one line naming the file (exit 7).
"""
from __future__ import annotations

import bisect
import contextlib
import heapq
import os
from typing import IO, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from tkperf.errors import ResultFileError
from tkperf.rwsw import iolog, packedlog
from tkperf.rwsw.model import Capture

#: Rows written to the packed log at a time.
BATCH = 65536


def iolog_path(xml: str, c: Capture) -> Optional[str]:
    """The iolog beside a capture's XML, None where it has none or it is missing."""
    if c.iolog is None:
        return None
    path = os.path.join(os.path.dirname(os.path.abspath(xml)), c.iolog)
    return path if os.path.lexists(path) else None


def _lines(found: Iterator[Tuple[int, str, int, int]], path: str, shift_us: int, bases: Sequence[int],
           sizes: Sequence[int], moved: Sequence[int]) -> Iterator[Tuple[int, str, int, int]]:
    """(time µs, action, offset, length) of every I/O of one source's iolog
    (``found``: :func:`tkperf.rwsw.iolog.actions`, either kind, checked as it
    is read), its time moved by ``shift_us`` and each address from its
    device's base (``bases``) to the combined capture's (``moved``)."""
    for t, action, off, length in found:
        if action == "close":
            continue
        if action in ("sync", "datasync"):
            yield t + shift_us, "sync", 0, 0
            continue
        i = bisect.bisect_right(bases, off) - 1
        if i < 0 or off + length > bases[i] + sizes[i]:
            raise ResultFileError(f"{path}: bytes {off} + {length} at {t} µs lie beyond its capture's devices")
        yield t + shift_us, action, moved[i] + off - bases[i], length


def write(out: IO[bytes], sources: Sequence[Tuple[str, Capture]], moved: Sequence[Sequence[int]],
          shifts: Sequence[float], merge: bool, duration: float) -> int:
    """Write the combined iolog (packed, :mod:`tkperf.rwsw.packedlog`) to
    ``out``: each source's (its XML's path and capture) with its devices
    moved to ``moved`` (each source's devices' new bases) and its times by
    ``shifts`` (seconds); merged in time order (``merge``) or one after the
    other.  Returns the I/Os written."""
    code = {a: i for i, a in enumerate(packedlog.ACTIONS)}
    log = packedlog.Writer(out)
    n = last = 0
    with contextlib.ExitStack() as stack:
        streams: List[Iterator[Tuple[int, str, int, int]]] = []
        for (xml, c), new, shift in zip(sources, moved, shifts):
            path = iolog_path(xml, c)
            assert path is not None
            found = stack.enter_context(iolog.actions(path))
            streams.append(_lines(found, path, int(round(shift * 1e6)), [d.offset for d in c.parts],
                                  [d.size for d in c.parts], new))
        lines = heapq.merge(*streams, key=lambda x: x[0]) if merge else (x for s in streams for x in s)
        rows: List[Tuple[int, int, int, int]] = []
        for t, action, off, length in lines:
            last = max(last, t)  # never backwards (fio refuses it)
            rows.append((last, code[action], off, length))
            if len(rows) >= BATCH:
                n += _flush(log, rows)
        n += _flush(log, rows)
    log.close(max(last, int(round(duration * 1e6))))
    return n


def _flush(log: packedlog.Writer, rows: List[Tuple[int, int, int, int]]) -> int:
    if not rows:
        return 0
    cols = np.array(rows, dtype=np.int64)
    log.add(cols[:, 0], cols[:, 1].astype(np.uint8), cols[:, 2], cols[:, 3])
    count = len(rows)
    rows.clear()
    return count
