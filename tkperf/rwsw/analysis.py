"""From the I/Os of a capture to its IO streams, steps and iolog.

The stream rule (docs/rwsw.rst): an I/O is *sequential* when it starts at
the byte where one of the last :data:`HISTORY` I/Os of the same direction
ended, else *random*.  Looking back over several I/Os, not only the last
one, keeps a sequential stream sequential while other streams interleave
with it (a database's log writes between its data-file writes, several
threads each reading a file).  The first I/O of a sequential run has no
predecessor and counts as random; a random I/O that happens to start where
one of the last few ended counts as sequential -- on a device of N blocks
that is about HISTORY/N of them.  A stream is one combination of access,
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
from collections import deque
from typing import Deque, Dict, Iterator, List, Optional, Tuple

import numpy as np

from tkperf.rwsw.model import Capture, Step, Stream
from tkperf.rwsw.trace import IoTrace

HISTORY = 32
#: The file name the iolog gives the device: replay maps it onto a target
#: (fio's ``replay_redirect``); a log replayed as it is opens no real device.
IOLOG_FILE = "rwsw.capture"


def sequential(trace: IoTrace) -> np.ndarray:
    """Per I/O, whether it is sequential by the stream rule."""
    n = len(trace)
    seq = np.zeros(n, dtype=bool)
    recent: Dict[bool, Tuple[Deque[int], Dict[int, int]]] = {False: (deque(), {}), True: (deque(), {})}
    for i, (w, start, length) in enumerate(zip(trace.write.tolist(), trace.offset.tolist(),
                                              trace.length.tolist())):
        order, ends = recent[w]
        if start in ends:
            seq[i] = True
        end = start + length
        order.append(end)
        ends[end] = ends.get(end, 0) + 1
        if len(order) > HISTORY:
            old = order.popleft()
            left = ends[old] - 1
            if left:
                ends[old] = left
            else:
                del ends[old]
    return seq


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


def analyse(trace: IoTrace, step: float, *, name: str, device: str, size: int, source: str, started: str,
            iolog: Optional[str]) -> Capture:
    """The capture of ``trace`` cut into steps of ``step`` seconds."""
    seq = sequential(trace)
    duration = max(trace.t1 - trace.t0, 1e-6)
    steps = []
    rel = trace.issue - trace.t0
    bounds = step_bounds(duration, step)
    for index, (start, length) in enumerate(bounds):
        last = index == len(bounds) - 1
        mask = (rel >= start) & ((rel < start + length) if not last else np.ones_like(rel, dtype=bool))
        nbytes = float(trace.length[mask].sum())
        steps.append(Step(index=index, start=start, duration=length,
                          streams=streams_of(seq[mask], trace.write[mask], trace.length[mask]),
                          qd=queue_depth(trace.issue, trace.done, trace.t0 + start, trace.t0 + start + length),
                          iops=int(mask.sum()) / length, mbps=nbytes / length / 1e6))
    return Capture(name=name, device=device, size=size, source=source, started=started, duration=duration,
                   step=float(step), steps=tuple(steps), streams=streams_of(seq, trace.write, trace.length),
                   qd=queue_depth(trace.issue, trace.done, trace.t0, trace.t1),
                   iops=len(trace) / duration, mbps=float(trace.length.sum()) / duration / 1e6, iolog=iolog)


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
