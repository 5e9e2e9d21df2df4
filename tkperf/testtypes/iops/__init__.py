"""IOPS: random I/O over 7 R/W mixes x 8 block sizes, in rounds until the
RND 4KiB 0/100 IOPS are steady (PTS test 1)."""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from tkperf.engine import options
from tkperf.engine.shapes import Rounds
from tkperf.fio.jobs import FioJob
from tkperf.model.results import TestRun, format_bs, mix_label
from tkperf.testtypes.base import Figure, Option, Plan, SummaryValue, TestType, Tracking

BLOCK_SIZES: Tuple[int, ...] = (1024 * 1024, 128 * 1024, 64 * 1024, 32 * 1024, 16 * 1024, 8192, 4096, 512)
MIXES: Tuple[int, ...] = (100, 95, 65, 50, 35, 5, 0)


def workload_name(bs: int, rwmixread: int) -> str:
    """The workload of one cell of a random-I/O matrix: ``rnd-4k-65-35``."""
    return f"rnd-{format_bs(bs)}-{rwmixread}-{100 - rwmixread}"


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


def matrix_params(block_sizes: Sequence[int], mixes: Sequence[int], numjobs: int, iodepth: int,
                  runtime: int) -> Dict[str, str]:
    return {"block_sizes": ",".join(format_bs(b) for b in block_sizes),
            "mixes": ",".join(mix_label(m) for m in mixes),
            "access": "random", "numjobs": str(numjobs), "iodepth": str(iodepth),
            "runtime": str(runtime)}


def sizes_text(sizes: Sequence[int]) -> str:
    return ",".join(format_bs(b) for b in sizes)


def mixes_text(mixes: Sequence[int]) -> str:
    return ",".join(mix_label(m) for m in mixes)


def nonempty(flag: str):
    def check(value: Sequence[object]) -> None:
        if not value:
            raise options.UsageError(f"{flag} is empty")
    return check


def parse_mixes(text: str, flag: str) -> Tuple[int, ...]:
    return options.parse_mixes(text)


def tracking_figure(test: TestRun) -> List[Figure]:
    """The tracking figure over the window, for a narrowed matrix without the PTS cells."""
    if not test.tracking_values():
        return []
    return [Figure("tracking", "tracking", test.window_average(test.tracking_workload,
                                                                test.tracking_metric) or 0.0,
                   "", "", "{:,.6g}")]


class IopsTest(TestType):
    name = "iops"
    title = "IOPS"
    short = "IOPS"
    default_run = True
    order = 10
    options = (
        Option("iops_bs", ("--bs",), "IOPS block sizes, e.g. 4k,64k (default: 1024k,128k,64k,32k,16k,8k,4k,512)",
               parse=options.parse_block_sizes, format=sizes_text, default=BLOCK_SIZES,
               quick=(128 * 1024, 4096), check=nonempty("--iops-bs"), metavar="SIZES"),
        Option("iops_mixes", ("--mix",), "IOPS R/W mixes as read/write, e.g. 65/35,0/100 (default: all seven)",
               parse=parse_mixes, format=mixes_text, default=MIXES, quick=(100, 65, 0),
               check=nonempty("--iops-mixes"), metavar="MIXES"),
    )

    def plan(self, opts, capacity: int) -> List[Plan]:
        bs, mix = tracking_cell(opts.iops_bs, opts.iops_mixes)
        return [Plan(
            key=self.name,
            shape=Rounds(matrix_jobs(opts.iops_bs, opts.iops_mixes, opts.runtime, opts.numjobs,
                                     opts.iodepth)),
            tracking=Tracking(workload_name(bs, mix), "write.iops" if mix == 0 else "iops",
                              f"RND {format_bs(bs)} {mix_label(mix)} IOPS"),
            params=matrix_params(opts.iops_bs, opts.iops_mixes, opts.numjobs, opts.iodepth, opts.runtime),
        )]

    def largest_block(self, opts) -> int:
        return max(opts.iops_bs)

    def headline(self, test: TestRun) -> List[Figure]:
        out = []
        for mix, key, label in ((0, "write", "RND 4k W"), (65, "mixed", "65:35"), (100, "read", "R")):
            v = test.window_average(workload_name(4096, mix), "iops")
            if v is not None:
                out.append(Figure(f"rnd_4k_{key}_iops", label, v, "IOPS"))
        return out or tracking_figure(test)

    def summary(self, test: TestRun) -> Dict[str, SummaryValue]:
        out = {f.key: SummaryValue(f.value) for f in self.headline(test) if f.key != "tracking"}
        if test.rounds:
            w = test.rounds[0].workload(workload_name(4096, 0))
            if w is not None:
                out["fob_iops"] = SummaryValue(w.iops, "IOPS round 1, after WIPC", rank=20)
        return out

    def report_section(self, ctx, tests):
        from tkperf.testtypes.iops import view

        return view.report_section(ctx, tests)

    def compare_section(self, ctx, runs, labels):
        from tkperf.testtypes.iops import view

        return view.compare_section(ctx, runs, labels)
