"""HDD random IOPS: random I/O over R/W mixes x block sizes x queue depths,
in rounds until the rounds agree (the 20/10 rule as a repeatability check).

A hard disk drive has no write history to settle: no flash translation
layer, no garbage collection, no write cliff.  Its random IOPS are set by
seek and rotation, and by how well the drive reorders a queue (NCQ), so the
queue depth is part of the matrix: by default 1, 4, 16 and 32, the depths
at which HDDs still gain.  The rounds repeat the same measurement; the
SNIA 20/10 rule over the last ``--window`` rounds says whether they agree.
That is a *repeatability* check, not a steady state, and the report says so.

Every cell is one stonewalled job of the round's fio process, at TC 1 and
QD = fio ``iodepth``: outer loop R/W mix (100/0 first), then block size
(largest first), then queue depth (lowest first).  No purge and no WIPC:
the ``hdd`` profile purges nothing, and the plan asks for no WIPC.

The cells, their jobs and the repeatability plan are the kit's
(``tkperf.api.hdd_cell_jobs`` and the others), shared with ``hdd-lat``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, List, Optional, Tuple

from tkperf import api
from tkperf.pts import (
    MAX_RUNTIME,
    check_depths,
    nonempty,
    parse_depths,
    parse_mixes,
    side_label,
    side_word,
)
from tkperf.pts import format_depths as depths_text
from tkperf.pts import format_mixes as mixes_text
from tkperf.pts import hdd_cell_jobs as cell_jobs
from tkperf.pts import hdd_repeat_plan as repeat_plan
from tkperf.pts import hdd_tracked_cells as tracked_cells
from tkperf.pts import hdd_window_cells as window_cells

MIXES: Tuple[int, ...] = (100, 70, 0)
BLOCK_SIZES: Tuple[int, ...] = (4096, 64 * 1024, 1024 * 1024)
DEPTHS: Tuple[int, ...] = (1, 4, 16, 32)
CELL_S = 20


def cell_average(test: api.TestRun, bs: int, mix: int, qd: int, metric: str) -> Optional[float]:
    """A cell's window average; None where the window has none of it."""
    ws = window_cells(test).get((bs, mix, qd), [])
    return sum(w.metric(metric) for w in ws) / len(ws) if ws else None


def headline_bs(test: api.TestRun) -> int:
    """The block size the headline figures quote: 4KiB, else the smallest run."""
    sizes = {bs for bs, _, _ in window_cells(test)}
    return 4096 if 4096 in sizes or not sizes else min(sizes)


def _depths(text: str, flag: str) -> Tuple[int, ...]:
    return parse_depths(text, "--hdd-iops-qd")


@dataclass(frozen=True)
class HddIopsSettings:
    """The values of hdd-iops's options (typed; ``opts.of(HddIopsSettings)``)."""

    option_prefix: ClassVar[str] = "hdd_iops_"

    #: Block sizes in bytes.
    bs: Tuple[int, ...]
    #: Read shares in percent.
    mixes: Tuple[int, ...]
    #: Queue depths.
    qd: Tuple[int, ...]
    #: Seconds.
    time: int


class HddIopsTest(api.TestType):
    #: Runs over the test range (``--test-range``): the HDD profile has no
    #: preconditioning, so the test range is simply the range it tests
    #: (``RunOptions.for_test``).
    uses_test_range = True
    name = "hdd-iops"
    title = "HDD random IOPS"
    short = "HDD-IOPS"
    order = 81
    view = "tkperf.testtypes.hdd_iops.view:HddIopsView"
    #: The profiles whose run without ``--tests`` runs it: ``hdd run``, not ``ssd run``.
    default_profiles: Tuple[str, ...] = ("hdd",)
    options = api.OptionSet(HddIopsSettings, (
        api.Option("hdd_iops_bs", ("--hdd-iops-bs",), "HDD-IOPS block sizes (default 4k,64k,1024k; --quick 4k)",
                   parse=api.parse_block_sizes, format=api.format_block_sizes, default=BLOCK_SIZES,
                   quick=(4096,), check=nonempty("--hdd-iops-bs"), metavar="SIZES"),
        api.Option("hdd_iops_mixes", ("--hdd-iops-mix",),
                   "HDD-IOPS R/W mixes as read/write (default 100/0,70/30,0/100; --quick 100/0,0/100)",
                   parse=parse_mixes, format=mixes_text, default=MIXES, quick=(100, 0),
                   check=nonempty("--hdd-iops-mix"), metavar="MIXES"),
        api.Option("hdd_iops_qd", ("--hdd-iops-qd",),
                   "HDD-IOPS queue depths, each at TC 1 (default 1,4,16,32; --quick 1,4)",
                   parse=_depths, format=depths_text, default=DEPTHS, quick=(1, 4),
                   check=lambda v: check_depths(v, "--hdd-iops-qd"), metavar="DEPTHS"),
        api.Option("hdd_iops_time", ("--hdd-iops-time",),
                   "HDD-IOPS time per cell: seconds or with s/m/h (default 20s; --quick 1s)",
                   parse=api.parse_duration, default=CELL_S, quick=1,
                   check=api.in_range(1, MAX_RUNTIME, "--hdd-iops-time"), metavar="DURATION"),
    ))

    def plan(self, opts: api.Options, capacity: int) -> List[api.Plan]:
        cfg = opts.of(HddIopsSettings)
        sizes, mixes, depths = cfg.bs, cfg.mixes, cfg.qd
        params = {"block_sizes": api.format_block_sizes(sorted(sizes)),
                  "mixes": mixes_text(sorted(mixes, reverse=True)),
                  "depths": depths_text(sorted(depths)), "access": "random", "numjobs": "1",
                  "iodepth": depths_text(sorted(depths)), "runtime": str(cfg.time)}
        return [repeat_plan(self.name, api.Rounds(cell_jobs(sizes, mixes, depths, cfg.time)),
                            tracked_cells(sizes, mixes, depths), "iops", "IOPS", params)]

    def headline(self, test: api.TestRun) -> List[api.Figure]:
        """Per mix at 4KiB: IOPS at QD1 (seek and rotation alone) and the
        highest IOPS over the queue depths (with the drive's reordering)."""
        bs = headline_bs(test)
        cells = window_cells(test)
        out: List[api.Figure] = []
        for mix in sorted({m for b, m, _ in cells if b == bs}, reverse=True):
            averages = {qd: cell_average(test, bs, mix, qd, "iops") for b, m, qd in cells if (b, m) == (bs, mix)}
            found = {qd: v for qd, v in averages.items() if v is not None}
            if not found:
                continue
            name = f"rnd_{api.format_bs(bs)}_{side_word(mix)}"
            text = f"{api.format_bs(bs)} {side_label(mix)}"
            if 1 in found:
                out.append(api.Figure(f"{name}_qd1_iops", f"{text} QD1", found[1], "IOPS"))
            top = max(found, key=lambda qd: found[qd])
            out.append(api.Figure(f"{name}_peak_iops", f"{text} peak (QD{top})", found[top], "IOPS"))
        return out

    def blocks(self, opts: api.Options) -> api.Blocks:
        return api.Blocks(0, max(opts.of(HddIopsSettings).bs))
