"""Throughput: per block size, purge, WIPC, then rounds of SEQ 100% W and
SEQ 100% R until the write MB/s are steady (PTS test 2).

Each block size is its own test instance (key ``tp-1024k``) with its own
steady state.
"""
from __future__ import annotations

import re
from typing import Dict, List, Tuple

from tkperf.engine import options
from tkperf.engine.shapes import Rounds
from tkperf.fio.jobs import FioJob
from tkperf.model.results import TestRun, format_bs
from tkperf.testtypes.base import Figure, Option, Plan, SummaryValue, TestType, Tracking
from tkperf.testtypes.iops import nonempty, sizes_text

BLOCK_SIZES = {"enterprise": (1024 * 1024, 128 * 1024), "client": (1024 * 1024,)}
#: The block size the summary page quotes.
SUMMARY_BS = 1024 * 1024


def workload_name(bs: int, side: str) -> str:
    """``seq-1024k-w`` (side ``w``) or ``seq-1024k-r`` (side ``r``)."""
    if side not in ("w", "r"):
        raise ValueError(f"side must be w or r, not {side!r}")
    return f"seq-{format_bs(bs)}-{side}"


def block_size(test: TestRun) -> int:
    """The block size of a TP test instance, from its workloads or its parameters."""
    for r in test.rounds:
        for w in r.workloads:
            return w.bs
    m = re.fullmatch(r"(\d+)(k?)", test.params.get("block_size", ""))
    if not m:
        return 0
    return int(m.group(1)) * (1024 if m.group(2) else 1)


def _default_sizes(device_class: str) -> Tuple[int, ...]:
    return BLOCK_SIZES.get(device_class, BLOCK_SIZES["enterprise"])


class ThroughputTest(TestType):
    name = "tp"
    title = "Throughput"
    short = "TP"
    default_run = True
    order = 20
    options = (
        Option("tp_bs", ("--tp-bs",), "TP block sizes (default: enterprise 1024k,128k; client 1024k)",
               parse=options.parse_block_sizes, format=sizes_text, default=_default_sizes,
               quick=(1024 * 1024,), check=nonempty("--tp-bs"), metavar="SIZES"),
    )

    def plan(self, opts, capacity: int) -> List[Plan]:
        out = []
        oio = opts.iodepth * opts.numjobs
        for bs in sorted(opts.tp_bs, reverse=True):
            name = format_bs(bs)
            write = FioJob(name=workload_name(bs, "w"), rw="write", bs=bs, runtime=opts.runtime,
                           numjobs=1, iodepth=oio)
            read = FioJob(name=workload_name(bs, "r"), rw="read", bs=bs, runtime=opts.runtime,
                          numjobs=1, iodepth=oio)
            out.append(Plan(
                key=f"{self.name}-{name}", shape=Rounds((write, read)),
                tracking=Tracking(write.name, "write.bw_bytes", f"SEQ {name} 100% W MB/s"),
                params={"block_size": name, "access": "sequential", "numjobs": "1",
                        "iodepth": str(oio), "runtime": str(opts.runtime)},
            ))
        return out

    def largest_block(self, opts) -> int:
        return max(opts.tp_bs)

    def instance_title(self, test: TestRun) -> str:
        return f"TP {test.params.get('block_size', '')}".strip()

    def headline(self, test: TestRun) -> List[Figure]:
        bs = block_size(test)
        out = []
        for side, key, label in (("w", "seq_write_mb_s", "W"), ("r", "seq_read_mb_s", "R")):
            v = test.window_average(workload_name(bs, side), "bw_bytes") if bs else None
            if v is not None:
                out.append(Figure(key, label, v / 1e6, "MB/s", "higher", "{:,.1f}"))
        return out

    def summary(self, test: TestRun) -> Dict[str, SummaryValue]:
        if block_size(test) != SUMMARY_BS:
            return {}
        return {f.key: SummaryValue(f.value) for f in self.headline(test)}

    def report_section(self, ctx, tests):
        from tkperf.testtypes.throughput import view

        return view.report_section(ctx, tests)

    def compare_section(self, ctx, runs, labels):
        from tkperf.testtypes.throughput import view

        return view.compare_section(ctx, runs, labels)
