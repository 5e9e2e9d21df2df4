"""IOPS: random I/O over 7 R/W mixes x 8 block sizes, in rounds until the
RND 4KiB 0/100 IOPS are steady (PTS test 1).  PTS 2.0 tracks three
figures, RND 4KiB 0/100, 64KiB 65/35 and 1024KiB 100/0 IOPS, and every one
of them must pass 20/10 in the same window of rounds."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar, List, Mapping, Sequence, Tuple

from tkperf import api
from tkperf.pts import (
    format_mixes,
    judge_all,
    matrix_jobs,
    nonempty,
    parse_also,
    parse_mixes,
    tracking_cell,
    tracking_figure,
)
from tkperf.pts import iops_matrix_params as matrix_params
from tkperf.pts import iops_workload as workload_name

BLOCK_SIZES: Tuple[int, ...] = (1024 * 1024, 128 * 1024, 64 * 1024, 32 * 1024, 16 * 1024, 8192, 4096, 512)
MIXES: Tuple[int, ...] = (100, 95, 65, 50, 35, 5, 0)


sizes_text = api.format_block_sizes
mixes_text = format_mixes


def metric_of(mix: int) -> str:
    """The tracked figure of a cell: write IOPS at 0/100, else all IOPS."""
    return "write.iops" if mix == 0 else "iops"


def also_tracked(revision, block_sizes: Sequence[int], mixes: Sequence[int],
                 primary: Tuple[int, int]) -> Tuple[Tuple[int, int], ...]:
    """The revision's further tracking cells that the matrix has."""
    return tuple(c for c in revision.iops_tracking
                 if c != primary and c[0] in block_sizes and c[1] in mixes)


def cell_of(workload: str) -> Tuple[int, int]:
    """``rnd-64k-65-35`` -> (65536, 65): the block size and read share of a cell."""
    _, size, read, _ = workload.split("-")
    return api.parse_block_sizes(size, "workload")[0], int(read)


@dataclass(frozen=True)
class IopsSettings:
    """The values of IOPS's options (typed; ``opts.of(IopsSettings)``)."""

    option_prefix: ClassVar[str] = "iops_"

    #: Block sizes in bytes.
    bs: Tuple[int, ...]
    #: Read shares in percent.
    mixes: Tuple[int, ...]


class IopsRounds(api.Rounds):
    """The IOPS round loop, whose steady state may track several figures (PTS 2.0)."""

    def tracking_variables(self, test: api.TestRun) -> List[api.TestRun]:
        also = parse_also(test.params.get("also_tracking", ""))
        if not also:
            return []
        out = [dataclasses.replace(test, steady=None)]
        for workload, metric in also:
            bs, mix = cell_of(workload)
            out.append(dataclasses.replace(test, tracking_workload=workload, tracking_metric=metric,
                                           tracking_label=f"RND {api.format_bs(bs)} {api.mix_label(mix)} IOPS",
                                           steady=None))
        return out


class IopsPts(api.PtsRules):
    """Iops's SNIA PTS rules."""

    oio = api.OIO_OPERATOR

    def deviations(self, kind: api.TestType, options: Mapping[str, str], revision) -> List[str]:
        v = api.stored_values(kind, options)
        sizes, mixes = tuple(v["iops_bs"]), tuple(v["iops_mixes"])
        out: List[str] = []
        if set(sizes) != set(BLOCK_SIZES) or set(mixes) != set(MIXES):
            bs, mix = tracking_cell(sizes, mixes)
            out.append(f"IOPS matrix narrowed to {sizes_text(sorted(sizes, reverse=True))} x "
                       f"{mixes_text(sorted(mixes, reverse=True))} (the PTS runs 8 block sizes x 7 mixes)"
                       + ("" if (bs, mix) == (4096, 0) else
                          f"; the tracking variable becomes RND {api.format_bs(bs)} {api.mix_label(mix)} "
                          "instead of RND 4k 0/100"))
            tracked = 1 + len(also_tracked(revision, sizes, mixes, (bs, mix)))
            if tracked < len(revision.iops_tracking):
                out.append(f"IOPS steady state tracks {tracked} of the {len(revision.iops_tracking)} "
                           f"figures {revision.title} requires")
        return out


class IopsTest(api.TestType):
    pts = IopsPts()
    #: Runs over the test range (``--test-range``, in its ActiveRange segments):
    #: SNIA defines them for IOPS, TP and LAT; every other test runs over the
    #: whole active range (``RunOptions.for_test``).
    uses_test_range = True
    name = "iops"
    title = "IOPS"
    short = "IOPS"
    default_profiles = ("ssd",)
    order = 10
    view = "tkperf.testtypes.iops.view:IopsView"
    options = api.OptionSet(IopsSettings, (
        api.Option("iops_bs", ("--bs",), "IOPS block sizes, e.g. 4k,64k (default: 1024k,128k,64k,32k,16k,8k,4k,512)",
                   parse=api.parse_block_sizes, format=sizes_text, default=BLOCK_SIZES,
                   quick=(128 * 1024, 4096), check=nonempty("--iops-bs"), metavar="SIZES"),
        api.Option("iops_mixes", ("--mix",), "IOPS R/W mixes as read/write, e.g. 65/35,0/100 (default: all seven)",
                   parse=parse_mixes, format=mixes_text, default=MIXES, quick=(100, 65, 0),
                   check=nonempty("--iops-mixes"), metavar="MIXES"),
    ))

    def plan(self, opts: api.Options, capacity: int) -> List[api.Plan]:
        cfg = opts.of(IopsSettings)
        bs, mix = tracking_cell(cfg.bs, cfg.mixes)
        params = matrix_params(cfg.bs, cfg.mixes, opts.numjobs, opts.iodepth, opts.runtime)
        also = also_tracked(opts.revision, cfg.bs, cfg.mixes, (bs, mix))
        if also:
            params["also_tracking"] = ",".join(f"{workload_name(b, m)}:{metric_of(m)}" for b, m in also)
        return [api.Plan(
            key=self.name,
            shape=IopsRounds(matrix_jobs(cfg.bs, cfg.mixes, opts.runtime, opts.numjobs,
                                         opts.iodepth)),
            tracking=api.Tracking(workload_name(bs, mix), metric_of(mix),
                                  f"RND {api.format_bs(bs)} {api.mix_label(mix)} IOPS"),
            params=params,
            judge=judge_all if also else None, steady=api.Steady.SEVERAL if also else api.Steady.ONE,
        )]

    def headline(self, test: api.TestRun) -> List[api.Figure]:
        out = []
        for mix, key, label in ((0, "write", "RND 4k W"), (65, "mixed", "65:35"), (100, "read", "R")):
            v = test.window_average(workload_name(4096, mix), "iops")
            if v is not None:
                out.append(api.Figure(f"rnd_4k_{key}_iops", label, v, "IOPS"))
        return out or tracking_figure(test)

    def blocks(self, opts: api.Options) -> api.Blocks:
        return api.Blocks(min(opts.of(IopsSettings).bs), max(opts.of(IopsSettings).bs))
