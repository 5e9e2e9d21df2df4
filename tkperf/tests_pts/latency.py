"""Latency: random I/O at OIO 1 (TC1/QD1), 3 mixes x 3 block sizes; tracks 4KiB 0/100 mean latency."""
from __future__ import annotations

from tkperf.fio import FioJob
from tkperf.options import RunOptions
from tkperf.results import format_bs, mix_label
from tkperf.tests_pts.iops import tracking, workload_name

NAME = "lat"


def specs(opts: RunOptions):
    from tkperf.tests_pts import TestSpec

    jobs = [FioJob(name=workload_name(bs, mix), rw="randrw", bs=bs, rwmixread=mix,
                   runtime=opts.runtime, numjobs=1, iodepth=1)
            for mix in sorted(opts.lat_mixes, reverse=True) for bs in sorted(opts.lat_bs, reverse=True)]
    bs, mix = tracking(opts, opts.lat_bs, opts.lat_mixes)
    return [TestSpec(
        name=NAME, key=NAME, title="Latency",
        tracking_workload=workload_name(bs, mix),
        tracking_metric="write.lat_mean_us" if mix == 0 else "lat_mean_us",
        tracking_label=f"RND {format_bs(bs)} {mix_label(mix)} mean latency (us)",
        jobs=tuple(jobs),
        params={"block_sizes": ",".join(format_bs(b) for b in opts.lat_bs),
                "mixes": ",".join(mix_label(m) for m in opts.lat_mixes),
                "access": "random", "numjobs": "1", "iodepth": "1", "runtime": str(opts.runtime)},
    )]
