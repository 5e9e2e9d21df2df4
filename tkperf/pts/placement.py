"""Where a sequential workload starts, so that back-to-back workloads of
one test keep moving through the range instead of rereading its start
(TP's block sizes, QD's depths)."""
from __future__ import annotations


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
