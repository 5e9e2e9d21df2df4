"""TP placement at its edges: byte counts that are not whole MiB (fio moves
whatever it managed in 60 s), block sizes other than 1 MiB, a range of
exactly one block, and earlier rounds lacking a workload, as an
interrupted round does (see tests/unit/test_tp_sweep.py for the sweep itself)."""
from typing import Optional, Sequence, Tuple

import pytest

from tkperf.fio.jobs import FioJob
from tkperf.kit.shapes import blank_test
from tkperf.model.results import IoStats, Round, TestRun, Workload
from tkperf.testtypes.throughput import SequentialSweep, advance, place, workload_name

KiB, MiB = 1024, 1024 * 1024


def sweep(active: int, bs: int) -> SequentialSweep:
    return SequentialSweep(FioJob(name=workload_name(bs, "w"), rw="write", bs=bs, runtime=60, iodepth=32),
                           FioJob(name=workload_name(bs, "r"), rw="read", bs=bs, runtime=60, iodepth=32),
                           active)


def rounds(moved: Sequence[Tuple[Optional[int], Optional[int]]], bs: int) -> TestRun:
    """A TP test whose rounds wrote and read these bytes; None: the round
    lacks that workload."""
    t = blank_test()
    for i, (wrote, read) in enumerate(moved, 1):
        ws = []
        if wrote is not None:
            ws.append(Workload(workload_name(bs, "w"), "write", bs, 0, 1, 32, 60000, write=IoStats(io_bytes=wrote)))
        if read is not None:
            ws.append(Workload(workload_name(bs, "r"), "read", bs, 100, 1, 32, 60000, read=IoStats(io_bytes=read)))
        t.rounds.append(Round(index=i, started="", wall_s=120.0, fio_s=120.0, workloads=tuple(ws)))
    return t


def offsets(s: SequentialSweep, test: TestRun, index: int) -> Tuple[int, int]:
    write, read = s(test, index)
    end = s.active // s.write.bs * s.write.bs
    assert write.offset + write.size == read.offset + read.size == end
    assert write.offset % s.write.bs == 0 and read.offset % s.read.bs == 0
    return write.offset, read.offset


@pytest.mark.parametrize("cursor, expected, end, bs, at", [
    (40 * MiB, 60 * MiB, 100 * MiB, MiB, 40 * MiB),                 # ends exactly at the end
    (150, 50, 200, 64, 150),                                       # ... from where it is, aligned or not
    (40 * MiB, 60 * MiB + 1, 100 * MiB, MiB, 39 * MiB),             # one byte too many: back, aligned down
    (90 * MiB, 30 * MiB + 4 * KiB, 100 * MiB, MiB, 69 * MiB),       # 70 MiB - 4 KiB aligns down to 69 MiB
    (90 * MiB, 30 * MiB + 4 * KiB, 100 * MiB, 4 * KiB, 70 * MiB - 4 * KiB),
    (90 * MiB, 30 * MiB + 4 * KiB, 100 * MiB, 128 * KiB, 70 * MiB - 128 * KiB),
    (5 * MiB, 100 * MiB, 100 * MiB, MiB, 0),                        # the whole range: from 0
    (5 * MiB, 101 * MiB, 100 * MiB, MiB, 0),                        # more than the range: from 0
    (150, 60, 200, 1, 140),                                        # byte granularity
    (150, 260, 200, 1, 0),
])
def test_place(cursor, expected, end, bs, at):
    assert place(cursor, expected, end, bs) == at


@pytest.mark.parametrize("offset, moved, end, bs, nxt", [
    (40 * MiB, 30 * MiB + 4 * KiB, 100 * MiB, MiB, 70 * MiB),        # stopped mid-block: aligned down
    (40 * MiB, 30 * MiB + 4 * KiB, 100 * MiB, 4 * KiB, 70 * MiB + 4 * KiB),
    (40 * MiB, 60 * MiB - 1, 100 * MiB, MiB, 99 * MiB),              # one byte short of the end
    (40 * MiB, 60 * MiB - 1, 100 * MiB, 1, 100 * MiB - 1),
    (40 * MiB, 60 * MiB, 100 * MiB, MiB, 0),                         # exactly at the end: on at 0
    (0, 100 * MiB, 100 * MiB, MiB, 0),                               # the whole range from 0
    (0, 250 * MiB + 4 * KiB, 100 * MiB, MiB, 50 * MiB),              # fio wrapped at 0 twice
    (0, 250 * MiB + 4 * KiB, 100 * MiB, 4 * KiB, 50 * MiB + 4 * KiB),
    (1, 250, 100, 1, 0),                                             # wrapped, but not from 0
    (0, 250, 100, 1, 50),
])
def test_advance(offset, moved, end, bs, nxt):
    assert advance(offset, moved, end, bs) == nxt


def test_byte_counts_that_are_not_whole_blocks():
    bs = 128 * KiB
    s = sweep(10 * MiB + 100 * KiB, bs)  # the range ends mid-block: 10 MiB is used
    t = rounds([(3 * MiB + 5000, 2 * MiB + 131071)] * 3, bs)
    assert offsets(s, t, 1) == (0, 0)
    assert offsets(s, t, 2) == (3 * MiB, 2 * MiB)                    # aligned down to 128 KiB
    assert offsets(s, t, 3) == (6 * MiB, 4 * MiB)  # 4 MiB + 131071 aligns down too
    # round 4's write would pass the end (9 MiB + 10000 + 3 MiB): it starts
    # 3 MiB + 5000 before the end, aligned down
    w, _ = s(t, 4)
    assert w.offset == (10 * MiB - (3 * MiB + 5000)) // bs * bs == 7 * MiB - 128 * KiB
    assert w.size == 10 * MiB - w.offset


def test_a_round_lacking_a_workload_is_skipped_not_the_end():
    # round 2 was interrupted after its write: it has no read
    t = rounds([(30 * MiB, 20 * MiB), (30 * MiB, None), (30 * MiB, 20 * MiB)], MiB)
    s = sweep(100 * MiB, MiB)
    assert offsets(s, t, 3) == (60 * MiB, 20 * MiB)
    assert offsets(s, t, 4) == (70 * MiB, 40 * MiB)  # the write reached the end; the reads go on
    # a first round lacking both workloads (interrupted at once) counts for nothing
    t = rounds([(None, None), (30 * MiB + 4 * KiB, 20 * MiB + 4 * KiB)], MiB)
    assert offsets(s, t, 2) == (0, 0)
    assert offsets(s, t, 3) == (30 * MiB, 20 * MiB)


def test_a_range_of_exactly_one_block():
    s = sweep(MiB, MiB)
    write, read = s(rounds([(MiB, MiB)], MiB), 2)
    assert (write.offset, write.size, read.offset, read.size) == (0, MiB, 0, MiB)


def test_a_range_of_one_byte_at_byte_granularity():
    write, read = sweep(1, 1)(blank_test(), 1)
    assert (write.offset, write.size, read.offset, read.size) == (0, 1, 0, 1)


def test_a_range_below_one_block_is_refused_in_words():
    with pytest.raises(ValueError) as exc:
        sweep(MiB - 1, MiB)(blank_test(), 1)
    assert str(exc.value) == "the active range (1048575 bytes) is smaller than 1024k"
    with pytest.raises(ValueError):
        sweep(0, 4 * KiB)(blank_test(), 1)
