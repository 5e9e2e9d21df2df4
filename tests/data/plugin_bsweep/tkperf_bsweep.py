"""bsweep: sequential read throughput over a list of block sizes.

A second plug-in, written from docs/extending.rst alone (the first is
examples/plugin): one ``Sweep`` over block sizes, no steady state, its
options as typed settings, and a view of its own (a table and an
``XYChart`` of MB/s over the block size).  It imports nothing of tkperf
but :mod:`tkperf.api`; tests/e2e/test_plugin.py runs mypy --strict on it and
runs it on a loop device.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, List, Sequence, Tuple

import numpy as np

from tkperf.api import (
    Blocks,
    Curve,
    Figure,
    FioJob,
    GenericView,
    Heading,
    Option,
    Options,
    OptionSet,
    Plan,
    RunResult,
    Steady,
    Sweep,
    TestRun,
    TestType,
    XYChart,
    format_block_sizes,
    format_bs,
    parse_block_sizes,
    report_section,
    table,
)

DEFAULT_SIZES = (4096, 65536, 1048576)


def parse_sizes(text: str, flag: str) -> Tuple[int, ...]:
    return parse_block_sizes(text, flag)


@dataclass(frozen=True)
class BsweepSettings:
    """The values of bsweep's options: field ``sizes`` holds ``bsweep_sizes``."""

    option_prefix: ClassVar[str] = "bsweep_"

    sizes: Tuple[int, ...]


def point_name(bs: int) -> str:
    return f"seq-read-{format_bs(bs)}"


class BsweepView(GenericView):
    """The generic section, then MB/s per block size as a table and a chart."""

    def report_section(self, ctx: Any, tests: Sequence[TestRun]) -> List[Any]:
        out = report_section(self.kind, ctx, tests)
        for test in tests:
            points = [(w.bs, (w.read.bw_bytes or 0) / 1e6) for r in test.rounds for w in r.workloads]
            if not points:
                continue
            out.append(Heading("Throughput by block size", 2))
            out.append(table(["Block size", "MB/s"], [[format_bs(bs), f"{mbs:,.1f}"] for bs, mbs in points],
                             title="Sequential read"))
            curve = Curve("read", np.array([float(bs) for bs, _ in points]), np.array([m for _, m in points]))
            out.append(ctx.chart(test, "mbs", XYChart((curve,), "Block size (bytes)", "MB/s", xlog=2),
                                 "Sequential read MB/s over the block size"))
        return out

    def compare_section(self, ctx: Any, runs: Sequence[RunResult], labels: Sequence[str]) -> List[Any]:
        return super().compare_section(ctx, runs, labels)


class BlockSizeSweepTest(TestType):
    """Sequential read MB/s at each block size of ``--bsweep-sizes``."""

    api_version = 3
    name = "bsweep"
    title = "Sequential read by block size"
    short = "BSWEEP"
    default_profiles = ()
    order = 70
    options = OptionSet(BsweepSettings, (
        Option("bsweep_sizes", ("--bsweep-sizes",), "bsweep block sizes (default 4k,64k,1m)",
               parse=parse_sizes, format=format_block_sizes, default=DEFAULT_SIZES, metavar="SIZES"),
    ))
    pts = None
    view = BsweepView

    def plan(self, opts: Options, capacity: int) -> List[Plan]:
        sizes = opts.of(BsweepSettings).sizes
        points = tuple(FioJob(name=point_name(bs), rw="read", bs=bs, runtime=opts.runtime, iodepth=8)
                       for bs in sizes)
        return [Plan(key=self.name, shape=Sweep(points), steady=Steady.NONE,
                     params={"access": "sequential", "numjobs": "1", "iodepth": "8",
                             "runtime": str(opts.runtime), "sizes": format_block_sizes(sizes)})]

    def blocks(self, opts: Options) -> Blocks:
        sizes = opts.of(BsweepSettings).sizes
        return Blocks(smallest=min(sizes), largest=max(sizes))

    def headline(self, test: TestRun) -> List[Figure]:
        mbs = [(w.read.bw_bytes or 0) / 1e6 for r in test.rounds for w in r.workloads]
        if not mbs:
            return []
        return [Figure("peak_mb_s", "peak", max(mbs), "MB/s", "higher", "{:,.1f}"),
                Figure("points", "points", float(len(mbs)), "", "", "{:,.0f}")]
