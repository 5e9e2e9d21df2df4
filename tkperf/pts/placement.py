"""Where a sequential workload starts, so that back-to-back workloads of
one test keep moving through the range instead of rereading its start
(TP's block sizes, QD's depths)."""
from __future__ import annotations

from dataclasses import replace
from typing import Iterable

from tkperf.fio.jobs import FioJob
from tkperf.model.results import format_bs


def place(cursor: int, expected: int, end: int, bs: int) -> int:
    """Where a workload expected to move ``expected`` bytes starts: at
    ``cursor``, or early enough to end at ``end`` when it would not fit."""
    if cursor + expected <= end:
        return cursor
    return max(0, end - expected) // bs * bs


def advance(offset: int, moved: int, end: int, bs: int) -> int:
    """Where the next workload of a kind starts after one that started at
    ``offset`` and moved ``moved`` bytes in the region ``[offset, end)``."""
    if offset + moved < end:
        return (offset + moved) // bs * bs
    if offset == 0:  # fio wrapped to 0, the range's own start
        return moved % end // bs * bs
    return 0  # the end was reached: the sweep goes on at the start


def continuing(job: FioJob, active: int, moves: Iterable[int]) -> FioJob:
    """``job`` after the earlier workloads of its kind, which moved ``moves``
    bytes each (in order): within the first ``active`` bytes (whole blocks)
    it starts where they stopped (:func:`place`, :func:`advance`) and its
    ``size`` reaches to the end of that range."""
    end = active // job.bs * job.bs
    if end <= 0:
        raise ValueError(f"the active range ({active} bytes) is smaller than {format_bs(job.bs)}")
    cursor = expected = 0
    for moved in moves:
        offset = place(cursor, expected, end, job.bs)
        expected = moved
        cursor = advance(offset, expected, end, job.bs)
    offset = place(cursor, expected, end, job.bs)
    return replace(job, offset=offset, size=end - offset)
