"""rr4k: 4 KiB random reads at one queue depth, in rounds until steady.

The smallest useful tkperf test type: one fio job (random reads of 4 KiB,
one thread at queue depth 32 unless told otherwise), repeated in rounds
until its IOPS are steady by the PTS 20/10 rule (over the last
``--window`` rounds, the range of the IOPS at most 20% of their average
and the excursion of their least-squares line at most 10%), or until
``--max-rounds``.  Its report section is tkperf's generic one with one
paragraph of its own.  It imports only :mod:`tkperf.api`, the plug-in
contract; the entry point in pyproject.toml is all tkperf needs::

    [project.entry-points."tkperf.tests"]
    rr4k = "tkperf_rr4k:RandomRead4kTest"
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, List, Sequence

from tkperf.api import (
    MAX_IODEPTH,
    Block,
    Blocks,
    Figure,
    FioJob,
    GenericView,
    Option,
    Options,
    OptionSet,
    Paragraph,
    Plan,
    ReportContext,
    Rounds,
    Steady,
    TestRun,
    TestType,
    Tracking,
    in_range,
    parse_count,
    report_section,
)

__version__ = "0.1.0"

BLOCK_SIZE = 4096
WORKLOAD = "rr4k"


@dataclass(frozen=True)
class RR4kSettings:
    """rr4k's option values: ``qd`` holds option ``rr4k_qd``."""

    option_prefix: ClassVar[str] = "rr4k_"

    qd: int


class RR4kView(GenericView):
    """tkperf's generic section, and a line saying what was measured."""

    def report_section(self, ctx: ReportContext, tests: Sequence[TestRun]) -> List[Block]:
        blocks: List[Block] = list(report_section(self.kind, ctx, tests))
        blocks.append(Paragraph("rr4k reads 4 KiB blocks at random offsets of the active range, "
                                "one thread at one queue depth, until its IOPS meet the 20/10 rule."))
        return blocks


class RandomRead4kTest(TestType):
    """RND 4KiB read at T1 and one queue depth, in rounds until its IOPS are steady."""

    api_version = 3
    name = "rr4k"
    title = "Random 4KiB read"
    short = "RR4K"
    order = 61
    options = OptionSet(RR4kSettings, (
        Option("rr4k_qd", ("--rr4k-qd",), "rr4k queue depth of its one job (default 32; 4 with --quick)",
               parse=parse_count, default=32, quick=4, check=in_range(1, MAX_IODEPTH, "--rr4k-qd"),
               metavar="QD"),
    ))
    view = RR4kView

    def plan(self, opts: Options, capacity: int) -> List[Plan]:
        qd = opts.of(RR4kSettings).qd
        job = FioJob(name=WORKLOAD, rw="randread", bs=BLOCK_SIZE, runtime=opts.runtime, numjobs=1, iodepth=qd)
        return [Plan(key=self.name, shape=Rounds((job,)), steady=Steady.ONE,
                     tracking=Tracking(WORKLOAD, "read.iops", f"RND 4k read QD{qd} IOPS"),
                     params={"block_size": "4k", "access": "random", "mix": "100/0", "numjobs": "1",
                             "iodepth": str(qd), "runtime": str(opts.runtime)})]

    def blocks(self, opts: Options) -> Blocks:
        return Blocks(smallest=BLOCK_SIZE, largest=BLOCK_SIZE)

    def headline(self, test: TestRun) -> List[Figure]:
        iops = test.window_average(WORKLOAD, "read.iops")
        if iops is None:
            return []
        lat = test.window_average(WORKLOAD, "read.lat_mean_us") or 0.0
        return [Figure("rnd_4k_read_iops", "4k read", iops, "IOPS", "higher"),
                Figure("rnd_4k_read_lat_mean_us", "lat AVE", lat, "us", "lower", "{:,.1f}")]
