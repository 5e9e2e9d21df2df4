"""fio's per-interval maximum response times, read from its latency logs.

fio 3.33 writes one value kind per log: with ``write_lat_log=PREFIX``,
``log_avg_msec=MS`` and ``log_max_value=1`` every job writes
``PREFIX_lat.N.log`` (N = 1 .. numjobs; also ``_clat`` and ``_slat`` logs,
which tkperf does not read), one line per direction and window::

    time (ms since the job started), value (ns), direction, block size, offset[, ...]

``value`` is the largest response time (fio's total latency, submission to
completion) of the I/Os of that direction completed in the window.  fio
closes a window at the first completion past its end and stamps it with
that time (the window's end while I/O flows); a stall across the end
stretches the window until the next completion.  At the end of the job it
flushes the part-window left over, stamped with the job's end.

tkperf logs windows of a tenth of its interval (:data:`DIVISIONS`), so that
a window stretched by a stall moves at most a tenth of an interval's I/Os
into the next interval.  :func:`interval_maxima` puts the entries on the
interval grid: an entry stamped ``t`` belongs to interval
``ceil(t / interval)`` (the one in which its window ended), entries past the
last interval (the end-of-job flush) to the last one, as the interval
stream merges fio's short last report; with several jobs (TC > 1) the
largest value of all jobs counts.  Directions are
kept apart (reads in the 40/60 phases of the JEDEC workload).  An interval
without any entry of a direction gets 0: no I/O of that direction completed
in it.
"""
from __future__ import annotations

from typing import Iterator, List, Sequence, Tuple

import numpy as np

from tkperf.fio.logs import log_files as logs_log_files
from tkperf.fio.logs import parse_log

#: Log windows per interval.
DIVISIONS = 10
#: fio's direction numbers in its logs.
READ, WRITE = 0, 1


def log_files(prefix: str) -> List[str]:
    """The lat logs fio wrote for ``write_lat_log=prefix``, in job order."""
    return logs_log_files(prefix, "lat")


def interval_maxima(logs: Sequence[np.ndarray], interval_ms: float, count: int) -> Tuple[np.ndarray, np.ndarray]:
    """(read, write) maximum response time in us of each of ``count``
    intervals of ``interval_ms``, from parsed logs (:func:`parse_log`, one
    per job or part of one); 0 where no I/O of that direction completed."""
    if interval_ms <= 0:
        raise ValueError("the interval must be positive")
    out = np.zeros((2, max(count, 0)), dtype=np.float64)
    for rows in logs:
        _add(out, rows, interval_ms)
    return out[0], out[1]


def _add(out: np.ndarray, rows: np.ndarray, interval_ms: float) -> None:
    count = out.shape[1]
    if not rows.size or not count:
        return
    # A window ending at t is in interval ceil(t / interval); later stamps (the
    # end-of-job flush) go to the last interval.
    index = np.ceil(rows[:, 0] / interval_ms - 1e-9).astype(np.int64)
    index = np.clip(index, 1, count) - 1
    us = rows[:, 1] / 1000.0
    for side, direction in ((0, READ), (1, WRITE)):
        mine = rows[:, 2] == direction
        np.maximum.at(out[side], index[mine], us[mine])


#: Lines parsed at a time: bounds the memory of reading a day of log windows.
CHUNK_LINES = 65536


def _chunks(path: str) -> Iterator[str]:
    """The log's text in pieces of whole lines (a torn last line included,
    for :func:`parse_log` to drop)."""
    with open(path, encoding="ascii", errors="replace") as fh:
        while True:
            lines = fh.readlines(CHUNK_LINES * 32)
            if not lines:
                return
            yield "".join(lines)


def read_maxima(prefix: str, interval_ms: float, count: int) -> Tuple[np.ndarray, np.ndarray, int]:
    """(read, write, number of log files) for the logs of ``write_lat_log=prefix``."""
    files = log_files(prefix)
    out = np.zeros((2, max(count, 0)), dtype=np.float64)
    if interval_ms <= 0:
        raise ValueError("the interval must be positive")
    for path in files:
        for text in _chunks(path):
            _add(out, parse_log(text, path), interval_ms)
    return out[0], out[1], len(files)
