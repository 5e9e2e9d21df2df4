"""Throughput: per block size, purge, WIPC, then rounds of SEQ 100% W and SEQ 100% R.

Each block size is its own test (key ``tp-1024k``) with its own steady
state, tracking the sequential write MB/s.
"""
from __future__ import annotations

from tkperf.fio import FioJob
from tkperf.options import RunOptions
from tkperf.results import format_bs

NAME = "tp"


def specs(opts: RunOptions):
    from tkperf.tests_pts import TestSpec

    out = []
    for bs in sorted(opts.tp_bs, reverse=True):
        name = format_bs(bs)
        write = FioJob(name=f"seq-{name}-w", rw="write", bs=bs, runtime=opts.runtime,
                       numjobs=1, iodepth=opts.iodepth * opts.numjobs)
        read = FioJob(name=f"seq-{name}-r", rw="read", bs=bs, runtime=opts.runtime,
                      numjobs=1, iodepth=opts.iodepth * opts.numjobs)
        out.append(TestSpec(
            name=NAME, key=f"tp-{name}", title=f"Throughput {name}",
            tracking_workload=write.name, tracking_metric="write.bw_bytes",
            tracking_label=f"SEQ {name} 100% W MB/s",
            jobs=(write, read),
            params={"block_size": name, "access": "sequential", "numjobs": "1",
                    "iodepth": str(opts.iodepth * opts.numjobs), "runtime": str(opts.runtime)},
        ))
    return out
