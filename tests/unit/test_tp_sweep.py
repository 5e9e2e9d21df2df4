"""Throughput sweeps the whole active range: each SEQ workload continues where
the one of its kind in the round before stopped (``SequentialSweep``, the
TP round loop's ``jobs_for``), and PTS 2.0 preconditions with the TP block
size.  The end-to-end run is test_run_e2e.py's test_tp_sweeps_the_active_range.
"""
from __future__ import annotations

from typing import Sequence, Tuple

import pytest

from tkperf.fio.jobs import FioJob
from tkperf.kit import options
from tkperf.kit.shapes import Rounds, blank_test
from tkperf.model.results import IoStats, Round, TestRun, Workload
from tkperf.testtypes.throughput import SequentialSweep, ThroughputTest, advance, place, workload_name

MiB = 1024 * 1024
BS = MiB
W, R = workload_name(BS, "w"), workload_name(BS, "r")


def template(name: str, rw: str, bs: int = BS) -> FioJob:
    return FioJob(name=name, rw=rw, bs=bs, runtime=60, iodepth=32)


def sweep(active: int, bs: int = BS) -> SequentialSweep:
    return SequentialSweep(template(workload_name(bs, "w"), "write", bs),
                           template(workload_name(bs, "r"), "read", bs), active)


def made_up(rounds: Sequence[Tuple[int, int]], bs: int = BS) -> TestRun:
    """A TP test whose rounds wrote and read these (write, read) bytes."""
    t = blank_test()
    for i, (wrote, read) in enumerate(rounds, 1):
        t.rounds.append(Round(index=i, started="", wall_s=120.0, fio_s=120.0, workloads=(
            Workload(workload_name(bs, "w"), "write", bs, 0, 1, 32, 60000, write=IoStats(io_bytes=wrote)),
            Workload(workload_name(bs, "r"), "read", bs, 100, 1, 32, 60000, read=IoStats(io_bytes=read)))))
    return t


def offsets(s: SequentialSweep, test: TestRun, index: int) -> Tuple[int, int]:
    write, read = s(test, index)
    assert write.offset + write.size == read.offset + read.size == s.active // write.bs * write.bs
    return write.offset, read.offset


def test_first_round_starts_at_zero_over_the_whole_range():
    write, read = sweep(100 * MiB)(blank_test(), 1)
    assert (write.name, write.rw, write.offset, write.size) == (W, "write", 0, 100 * MiB)
    assert (read.name, read.rw, read.offset, read.size) == (R, "read", 0, 100 * MiB)
    assert "offset=" not in "\n".join(write.section()) and f"size={100 * MiB}" in write.section()


def test_each_kind_continues_where_it_stopped():
    s = sweep(100 * MiB)
    t = made_up([(30 * MiB, 20 * MiB)] * 4)
    assert offsets(s, t, 2) == (30 * MiB, 20 * MiB)
    assert offsets(s, t, 3) == (60 * MiB, 40 * MiB)
    assert "offset=62914560" in s(t, 3)[0].section()
    # Round 4's write would need 30 MiB after 90 MiB: it starts 30 MiB
    # before the end instead of fio looping over the last 10 MiB.
    assert offsets(s, t, 4) == (70 * MiB, 60 * MiB)
    # ... and, having reached the end, the next write starts at 0.
    assert offsets(s, t, 5) == (0, 80 * MiB)
    assert offsets(s, made_up([(30 * MiB, 20 * MiB)] * 5), 6) == (30 * MiB, 0)  # reads wrap at 100


def test_offsets_align_down_to_the_block_size():
    t = made_up([(30 * MiB + 4096, 20 * MiB + 512 * 1024)])
    assert offsets(sweep(100 * MiB), t, 2) == (30 * MiB, 20 * MiB)
    small = sweep(100 * MiB + 300 * 1024, bs=128 * 1024)  # the range's end aligns down too
    w, r = small(made_up([(130 * 1024, 0)], bs=128 * 1024), 2)
    assert (w.offset, w.offset + w.size) == (128 * 1024, 100 * MiB + 256 * 1024)
    assert (r.offset, r.offset + r.size) == (0, 100 * MiB + 256 * 1024)


def test_only_earlier_rounds_count():
    t = made_up([(30 * MiB, 20 * MiB)] * 4)
    assert offsets(sweep(100 * MiB), t, 2) == offsets(sweep(100 * MiB), made_up([(30 * MiB, 20 * MiB)]), 2)
    assert offsets(sweep(100 * MiB), t, 1) == (0, 0)


def test_rounds_larger_than_the_range_wrap_at_its_start():
    # 250 MiB a round over 100 MiB: fio wraps at the end to offset 0, the
    # range's start, so the cursor is the bytes modulo the range ...
    assert advance(0, 250 * MiB, 100 * MiB, BS) == 50 * MiB
    # ... and such a round always runs over the whole range (from 0).
    assert offsets(sweep(100 * MiB), made_up([(250 * MiB, 250 * MiB)] * 2), 3) == (0, 0)


def test_place_and_advance():
    end = 100 * MiB
    assert place(40 * MiB, 60 * MiB, end, BS) == 40 * MiB  # fits exactly
    assert place(40 * MiB, 61 * MiB, end, BS) == 39 * MiB  # moved back to end at the end
    assert place(90 * MiB, 0, end, BS) == 90 * MiB  # nothing known yet
    assert advance(40 * MiB, 59 * MiB, end, BS) == 99 * MiB
    assert advance(40 * MiB, 60 * MiB, end, BS) == 0  # reached the end
    assert advance(70 * MiB, 45 * MiB, end, BS) == 0  # ran past it (fio wrapped to 70 MiB)


def test_a_range_below_one_block_is_refused():
    with pytest.raises(ValueError, match="smaller than"):
        sweep(512 * 1024)(blank_test(), 1)


# --- the plan -------------------------------------------------------------------------

def tp_plans(pts: str, capacity: int = 1 << 30, **given):
    opts = options.build({"tests": ("tp",), **given}, pts=pts)
    return ThroughputTest().plan(opts, capacity)


@pytest.mark.parametrize("pts, wipc_bs", [("pts-e-2.0", True), ("pts-c-2.0", True),
                                          ("pts-e-1.1", False), ("pts-c-1.1", False)])
def test_wipc_block_size_follows_the_revision(pts, wipc_bs):
    for plan in tp_plans(pts):
        bs = plan.shape.round_jobs(blank_test(), 1)[0].bs
        assert plan.wipc_bs == (bs if wipc_bs else 0)


def test_plan_sweeps_the_active_range():
    (plan,) = tp_plans("pts-c-2.0", capacity=1 << 30)  # client: AR 75
    assert isinstance(plan.shape, Rounds) and isinstance(plan.shape.jobs_for, SequentialSweep)
    write, read = plan.shape.round_jobs(blank_test(), 1)
    active = options.build({"tests": ("tp",)}, pts="pts-c-2.0").active_bytes(1 << 30)
    assert active == 768 * MiB and write.size == read.size == active
    assert (write.rw, read.rw) == ("write", "read")


@pytest.mark.parametrize("segments", [1, 64])
def test_plan_sweeps_the_test_range_in_one_span_or_in_segments(segments):
    """--test-range narrower than the active range: TP's sequential sweep
    stays in it, one span at the start of the LBA range (--ar-segments 1,
    where each job's own size= would otherwise reach over the whole active
    range) or the segments' map."""
    (plan,) = tp_plans("pts-c-1.1", capacity=1 << 30, test_range=64 * MiB, ar_segments=segments)
    write, read = plan.shape.round_jobs(blank_test(), 1)
    assert write.offset == read.offset == 0 and write.size == read.size == 64 * MiB


def test_dry_run_estimate_shows_round_one():
    opts = options.build({"tests": ("tp",), "runtime": 10, "max_rounds": 7, "window": 3})
    plan = ThroughputTest().plan(opts, 1 << 30)[0]
    est = plan.shape.estimate(opts, 1 << 30)
    assert [j.name for j in est.jobs] == [workload_name(1024 * 1024, "w"), workload_name(1024 * 1024, "r")]
    assert all(j.offset == 0 and j.size == 1 << 30 for j in est.jobs)
    assert est.lines[0].startswith("# each round: 2 workloads") and "3 to 7 rounds" in est.lines[0]


def test_rounds_need_jobs():
    with pytest.raises(ValueError, match="jobs"):
        Rounds()
    fixed = (template(W, "write"),)
    assert Rounds(fixed).round_jobs(made_up([(1, 1)]), 2) == fixed
