"""IOPS: random I/O over 7 R/W mixes x 8 block sizes; tracks RND 4KiB 0/100 IOPS."""
from __future__ import annotations

from typing import List

from tkperf.fio import FioJob
from tkperf.options import RunOptions
from tkperf.results import format_bs, mix_label

NAME = "iops"


def workload_name(bs: int, rwmixread: int) -> str:
    return f"rnd-{format_bs(bs)}-{rwmixread}-{100 - rwmixread}"


def tracking(opts: RunOptions, bs_list, mixes) -> tuple:
    """4KiB 0/100 as the PTS says; in a narrowed matrix without it, the smallest
    block size at the most write-heavy mix, so there is always a tracking figure."""
    bs = 4096 if 4096 in bs_list else min(bs_list)
    mix = 0 if 0 in mixes else min(mixes)
    return bs, mix


def specs(opts: RunOptions):
    from tkperf.tests_pts import TestSpec

    jobs: List[FioJob] = []
    # PTS order: outer loop over mixes from 100/0 to 0/100, inner loop over
    # block sizes from the largest down, whatever order the user gave.
    for mix in sorted(opts.iops_mixes, reverse=True):
        for bs in sorted(opts.iops_bs, reverse=True):
            jobs.append(FioJob(name=workload_name(bs, mix), rw="randrw", bs=bs, rwmixread=mix,
                               runtime=opts.runtime, numjobs=opts.numjobs, iodepth=opts.iodepth))
    bs, mix = tracking(opts, opts.iops_bs, opts.iops_mixes)
    metric = "write.iops" if mix == 0 else "iops"
    return [TestSpec(
        name=NAME, key=NAME, title="IOPS",
        tracking_workload=workload_name(bs, mix), tracking_metric=metric,
        tracking_label=f"RND {format_bs(bs)} {mix_label(mix)} IOPS",
        jobs=tuple(jobs),
        params={"block_sizes": ",".join(format_bs(b) for b in opts.iops_bs),
                "mixes": ",".join(mix_label(m) for m in opts.iops_mixes),
                "access": "random", "numjobs": str(opts.numjobs), "iodepth": str(opts.iodepth),
                "runtime": str(opts.runtime)},
    )]
