"""From the I/Os of a capture to its IO streams, steps and iolog.

The stream rule (docs/rwsw.rst): an I/O is *sequential* when it starts at
the byte where a recent run of I/Os of the same direction ended, else
*random*.  Per direction two tables of byte offsets remember where runs
end, each in order of use: up to :data:`RUNS` *runs* (a sequential I/O's
end: a run of two or more I/Os) and up to :data:`NEW_RUNS` *starts* (a
random I/O's end: where a run may begin).  An I/O that starts at either
is sequential and its end becomes a run's; any other is random and its
end becomes a start; when a table is full, the entry unused longest is
forgotten.  So a sequential stream stays sequential however other
streams interleave with it (a database's log writes between its
data-file writes, a video server's many readers), as long as fewer than
:data:`RUNS` other runs went on since its last I/O (:data:`NEW_RUNS`
other starts, for its second I/O).  The first I/O of a run has no
predecessor and counts as random; a random I/O that happens to start
where a recent I/O ended counts as sequential -- for random I/O over N
blocks, some NEW_RUNS/N of them and more where it keeps to a small
region.  A stream is one combination of access,
direction and transfer size; its share is of the I/Os (and of the bytes)
of the step or of the whole capture.

The queue depth is the mean number of I/Os outstanding (issued, not yet
completed) over the step: the time each I/O was outstanding within the
step, summed, divided by the step's length.  An I/O whose completion was
not seen counts as outstanding until the capture's end when it was issued
after the last completion the capture saw (it was still in flight when the
capture ended); otherwise its completion was lost (the trace buffer
overflowed) and it does not count towards the queue depth at all.
"""
from __future__ import annotations

import math
from collections import OrderedDict
from typing import Iterator, List, Tuple

import numpy as np

from tkperf.rwsw.model import Stream
from tkperf.rwsw.trace import IoTrace

#: The runs (two I/Os or more) the stream rule follows at once, per direction.
RUNS = 512
#: The random I/Os whose end the stream rule remembers as a run's possible start, per direction.
NEW_RUNS = 128
#: The file name the iolog gives the device: replay maps it onto a target
#: (fio's ``replay_redirect``); a log replayed as it is opens no real device.
IOLOG_FILE = "rwsw.capture"


class SeqRule:
    """The stream rule's tables (see above), fed the I/Os in issue order."""

    __slots__ = ("runs", "starts", "tables")

    def __init__(self, runs: int = RUNS, starts: int = NEW_RUNS) -> None:
        self.runs, self.starts = runs, starts
        # per direction: (runs' ends, starts), each an ordered set of byte offsets, the longest unused first
        self.tables: Tuple[Tuple[OrderedDict[int, None], OrderedDict[int, None]], ...] = (
            (OrderedDict(), OrderedDict()), (OrderedDict(), OrderedDict()))

    def mark(self, write: np.ndarray, offset: np.ndarray, length: np.ndarray) -> np.ndarray:
        """Per I/O (in issue order), whether it is sequential; the tables move on."""
        seq = np.zeros(offset.size, dtype=bool)
        for i, (w, start, n) in enumerate(zip(write.tolist(), offset.tolist(), length.tolist())):
            runs, starts = self.tables[w]
            if start in runs:
                del runs[start]
            elif start in starts:
                del starts[start]
            else:
                self._put(starts, start + n, self.starts)
                continue
            seq[i] = True
            self._put(runs, start + n, self.runs)
        return seq

    @staticmethod
    def _put(table: OrderedDict[int, None], end: int, most: int) -> None:
        if end in table:
            table.move_to_end(end)
        else:
            table[end] = None
            if len(table) > most:
                table.popitem(last=False)


def sequential(trace: IoTrace) -> np.ndarray:
    """Per I/O, whether it is sequential by the stream rule."""
    return SeqRule().mark(trace.write.astype(np.int64), trace.offset, trace.length)


def streams_of(seq: np.ndarray, write: np.ndarray, length: np.ndarray) -> Tuple[Stream, ...]:
    """The streams of these I/Os, largest share of the I/Os first."""
    if length.size == 0:
        return ()
    code = length.astype(np.int64) * 4 + seq.astype(np.int64) * 2 + write.astype(np.int64)
    keys, inverse, counts = np.unique(code, return_inverse=True, return_counts=True)
    nbytes = np.bincount(inverse, weights=length.astype(float))
    total, total_bytes = int(counts.sum()), float(nbytes.sum())
    out = []
    for k, c, nb in zip(keys.tolist(), counts.tolist(), nbytes.tolist()):
        out.append(Stream(access="sequential" if k & 2 else "random", rw="write" if k & 1 else "read",
                          bs=k // 4, ios=int(c), share=c / total,
                          byte_share=nb / total_bytes if total_bytes > 0 else 0.0))
    out.sort(key=lambda s: (-s.ios, s.key))
    return tuple(out)


def step_bounds(duration: float, step: float) -> List[Tuple[float, float]]:
    """(start, length) of each step; a last step shorter than 1% of ``step`` joins the one before."""
    n = max(1, math.ceil(duration / step - 0.01))
    return [(k * step, (duration - k * step) if k == n - 1 else step) for k in range(n)]


def queue_depth(issue: np.ndarray, done: np.ndarray, start: float, end: float) -> float:
    """Mean outstanding I/Os over [start, end) (times on the trace's clock)."""
    if end <= start:
        return 0.0
    seen = done[~np.isnan(done)]
    last = float(seen.max()) if seen.size else -np.inf
    lost = np.isnan(done) & (issue <= last)
    finish = np.where(np.isnan(done), np.inf, done)
    overlap = np.clip(np.minimum(finish, end) - np.maximum(issue, start), 0.0, None)
    overlap[lost] = 0.0
    return float(overlap.sum() / (end - start))


def iolog_lines(trace: IoTrace, chunk: int = 100_000) -> Iterator[bytes]:
    """The I/Os as a fio iolog (version 3: microseconds since the start,
    file, action, byte offset, length), in pieces of ``chunk`` lines."""
    yield f"fio version 3 iolog\n0 {IOLOG_FILE} add\n0 {IOLOG_FILE} open\n".encode()
    usec = np.maximum(np.rint((trace.issue - trace.t0) * 1e6), 0).astype(np.int64)
    for lo in range(0, len(trace), chunk):
        hi = lo + chunk
        yield "".join(f"{t} {IOLOG_FILE} {'write' if w else 'read'} {off} {n}\n"
                      for t, w, off, n in zip(usec[lo:hi].tolist(), trace.write[lo:hi].tolist(),
                                              trace.offset[lo:hi].tolist(),
                                              trace.length[lo:hi].tolist())).encode()
    end = max(int(round((trace.t1 - trace.t0) * 1e6)), int(usec[-1]) if usec.size else 0)
    yield f"{end} {IOLOG_FILE} close\n".encode()
