"""Write Saturation: after a purge (no WIPC), RND 4KiB 100% W without pause,
reported per interval, until the time limit, the TGBW limit or steady state."""
from __future__ import annotations

from tkperf.fio import FioJob
from tkperf.options import RunOptions

NAME = "wsat"
WORKLOAD = "wsat-rnd-4k-0-100"


def specs(opts: RunOptions):
    from tkperf.tests_pts import TestSpec

    job = FioJob(name=WORKLOAD, rw="randwrite", bs=4096, runtime=opts.wsat_time,
                 numjobs=opts.numjobs, iodepth=opts.iodepth)
    return [TestSpec(
        name=NAME, key=NAME, title="Write Saturation",
        tracking_workload=WORKLOAD, tracking_metric="write.iops",
        tracking_label="RND 4k 0/100 IOPS per interval",
        jobs=(job,), wipc=False, stream=True,
        params={"block_size": "4k", "access": "random", "numjobs": str(opts.numjobs),
                "iodepth": str(opts.iodepth), "interval": str(opts.wsat_interval),
                "time_limit": str(opts.wsat_time), "tgbw": opts.wsat_tgbw,
                "steady_stop": "true" if opts.wsat_steady else "false"},
    )]
