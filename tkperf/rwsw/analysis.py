"""From the I/Os of a capture to its IO streams, steps and iolog.

The stream rule (docs/rwsw.rst): an I/O is *sequential* when it starts at
the byte where a run of I/Os of the same direction is expected to go on,
else *random*.  The expected places are a table of at most :data:`RUNS`
byte offsets per direction -- where each recent run's last I/O ended --
kept in order of use: an I/O that starts at one takes it over (the run
goes on where the I/O ends), any other starts a run of its own there, and
when the table is full the run unused longest is forgotten.  So a
sequential stream stays sequential while up to some hundreds of others
interleave with it (a database's log writes between its data-file writes,
a video server's many readers), however its I/Os interleave, as long as
fewer than :data:`RUNS` other runs were started since its last I/O.  The
first I/O of a sequential run has no predecessor and counts as random; a
random I/O that happens to start where a recent run ended counts as
sequential -- on a device of N blocks that is about RUNS/N of them
(0.2% of 4 KiB random I/O over 1 GiB).  A stream is one combination of access,
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

#: The runs the stream rule follows at once, per direction.
RUNS = 512
#: The file name the iolog gives the device: replay maps it onto a target
#: (fio's ``replay_redirect``); a log replayed as it is opens no real device.
IOLOG_FILE = "rwsw.capture"


class SeqRule:
    """The stream rule's table of runs (see above), fed one I/O at a time in issue order."""

    __slots__ = ("runs", "ends")

    def __init__(self, runs: int = RUNS) -> None:
        self.runs = runs
        self.ends: Tuple[OrderedDict[int, None], OrderedDict[int, None]] = (OrderedDict(), OrderedDict())

    def mark(self, write: np.ndarray, offset: np.ndarray, length: np.ndarray) -> np.ndarray:
        """Per I/O (in issue order), whether it is sequential; the table moves on."""
        seq = np.zeros(offset.size, dtype=bool)
        runs = self.runs
        for i, (w, start, n) in enumerate(zip(write.tolist(), offset.tolist(), length.tolist())):
            ends = self.ends[w]
            if start in ends:
                seq[i] = True
                del ends[start]
            end = start + n
            if end in ends:
                ends.move_to_end(end)
            else:
                ends[end] = None
                if len(ends) > runs:
                    ends.popitem(last=False)
        return seq


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
