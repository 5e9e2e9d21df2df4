"""The PTS block size x R/W mix matrix, as IOPS and LAT run it: its fio jobs
in PTS order, its tracking cell, and a steady state over several tracked
figures (PTS 2.0 tracks three for IOPS; the HDD tests track a cell per
direction)."""
from __future__ import annotations

import dataclasses
from typing import List, Sequence, Tuple

from tkperf.fio.jobs import FioJob
from tkperf.kit.base import Figure
from tkperf.model.names import iops_workload as workload_name
from tkperf.model.results import TestRun
from tkperf.model.steadystate import SteadyState, evaluate


def tracking_cell(block_sizes: Sequence[int], mixes: Sequence[int]) -> Tuple[int, int]:
    """4KiB 0/100 as the PTS says; in a narrowed matrix without it, the smallest
    block size at the most write-heavy mix, so there is always a tracking figure."""
    bs = 4096 if 4096 in block_sizes else min(block_sizes)
    mix = 0 if 0 in mixes else min(mixes)
    return bs, mix


def matrix_jobs(block_sizes: Sequence[int], mixes: Sequence[int], runtime: int, numjobs: int,
                iodepth: int) -> Tuple[FioJob, ...]:
    """PTS order: outer loop over mixes from 100/0 to 0/100, inner loop over
    block sizes from the largest down, whatever order the user gave."""
    return tuple(FioJob(name=workload_name(bs, mix), rw="randrw", bs=bs, rwmixread=mix,
                        runtime=runtime, numjobs=numjobs, iodepth=iodepth)
                 for mix in sorted(mixes, reverse=True) for bs in sorted(block_sizes, reverse=True))


def parse_also(text: str) -> Tuple[Tuple[str, str], ...]:
    """``rnd-64k-65-35:iops,...`` (a test's ``also_tracking`` param) -> (workload, metric) pairs."""
    return tuple(tuple(x.split(":", 1)) for x in text.split(",") if ":" in x)  # type: ignore[misc]


def variable_verdicts(test: TestRun, window: int) -> List[Tuple[str, str, SteadyState]]:
    """(workload, metric, verdict) of every tracked figure, the primary first."""
    out = [(test.tracking_workload, test.tracking_metric, test.evaluate(window))]
    for workload, metric in parse_also(test.params.get("also_tracking", "")):
        pairs = [(r.index, w.metric(metric)) for r in test.rounds
                 for w in (r.workload(workload),) if w is not None]
        out.append((workload, metric, evaluate([p[0] for p in pairs], [p[1] for p in pairs], window)))
    return out


def judge_all(test: TestRun, window: int) -> SteadyState:
    """Steady only when every tracked figure is (a plan's ``judge``): the
    primary's window and figures, with the verdict of all of them."""
    verdicts = variable_verdicts(test, window)
    primary = verdicts[0][2]
    return dataclasses.replace(primary, steady=all(v.steady for _, _, v in verdicts))


def tracking_figure(test: TestRun) -> List[Figure]:
    """The tracking figure over the window, the headline of a narrowed matrix without the PTS cells."""
    if not test.tracking_values():
        return []
    return [Figure("tracking", "tracking", test.window_average(test.tracking_workload,
                                                                test.tracking_metric) or 0.0,
                   "", "", "{:,.6g}")]
