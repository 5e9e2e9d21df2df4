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

The helpers here are shared by the other HDD test types (``hdd-lat``
reuses the cells and the repeatability wording; ``hdd-zones`` the wording).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Dict, List, Optional, Sequence, Tuple

from tkperf.api import (
    MAX_RUNTIME,
    Blocks,
    Figure,
    FioJob,
    Option,
    Options,
    OptionSet,
    Plan,
    Rounds,
    Steady,
    TestRun,
    TestType,
    Tracking,
    Workload,
    check_depths,
    format_bs,
    in_range,
    judge_all,
    mix_label,
    nonempty,
    parse_block_sizes,
    parse_depths,
    parse_duration,
    parse_mixes,
    test_title,
)
from tkperf.api import format_block_sizes as sizes_text
from tkperf.api import format_depths as depths_text
from tkperf.api import format_mixes as mixes_text
from tkperf.api import hdd_cell as cell_name

MIXES: Tuple[int, ...] = (100, 70, 0)
BLOCK_SIZES: Tuple[int, ...] = (4096, 64 * 1024, 1024 * 1024)
DEPTHS: Tuple[int, ...] = (1, 4, 16, 32)
CELL_S = 20
#: The summary page's lines come from this rank (the SSD tests' own lines win).
SUMMARY_RANK = 20

#: What the report and the docs say of rounds on an HDD.
REPEATABILITY = ("An HDD has no write history to settle (no flash translation layer, no garbage "
                 "collection), so there is no steady state to reach: every round repeats the same "
                 "measurement, and the SNIA 20/10 rule over the last rounds (range within 20% of "
                 "their average, least-squares excursion within 10%) checks that the rounds agree. "
                 "It is a repeatability check; the figures are the averages over those rounds.")


# --- cells ------------------------------------------------------------------------------

def side_word(mix: int) -> str:
    """A mix in headline keys: read, write or 70_30."""
    return {100: "read", 0: "write"}.get(mix, f"{mix}_{100 - mix}")


def side_label(mix: int) -> str:
    """A mix in headline labels: R, W or 70/30."""
    return {100: "R", 0: "W"}.get(mix, mix_label(mix))


def cell_jobs(block_sizes: Sequence[int], mixes: Sequence[int], depths: Sequence[int],
              seconds: int) -> Tuple[FioJob, ...]:
    """Every cell as a job at TC 1: mixes from 100/0 down, block sizes from
    the largest down, queue depths from the lowest up, whatever the order given."""
    return tuple(FioJob(name=cell_name(bs, mix, qd), rw="randrw", bs=bs, rwmixread=mix,
                        runtime=seconds, numjobs=1, iodepth=qd)
                 for mix in sorted(mixes, reverse=True) for bs in sorted(block_sizes, reverse=True)
                 for qd in sorted(depths))


def tracked_cells(block_sizes: Sequence[int], mixes: Sequence[int],
                  depths: Sequence[int]) -> List[Tuple[int, int, int]]:
    """The cells whose figures must repeat, the primary first: 4KiB (else the
    smallest block size) at the highest queue depth, 100/0 (else the most
    read-heavy mix) and, when the matrix has it, 0/100."""
    bs = 4096 if 4096 in block_sizes else min(block_sizes)
    qd = max(depths)
    primary = 100 if 100 in mixes else max(mixes)
    out = [(bs, primary, qd)]
    if 0 in mixes and primary != 0:
        out.append((bs, 0, qd))
    return out


def direction_metric(mix: int, figure: str) -> str:
    """The tracked metric of a cell: one direction's figure for 100/0 and
    0/100 (``read.iops``), both directions' for a mix (``iops``)."""
    return {100: f"read.{figure}", 0: f"write.{figure}"}.get(mix, figure)


def repeat_plan(key: str, shape: Rounds, cells: Sequence[Tuple[int, int, int]], figure: str,
                label: str, params: Dict[str, str], histograms: bool = False) -> Plan:
    """A round loop judged on the figure ``figure`` (``iops``,
    ``lat_mean_us``) of every one of ``cells``; no WIPC."""
    (bs, mix, qd), rest = cells[0], cells[1:]
    params = dict(params)
    if rest:
        params["also_tracking"] = ",".join(f"{cell_name(*c)}:{direction_metric(c[1], figure)}" for c in rest)
    return Plan(key=key, shape=shape,
                tracking=Tracking(cell_name(bs, mix, qd), direction_metric(mix, figure),
                                  f"RND {format_bs(bs)} {mix_label(mix)} QD{qd} {label}"),
                params=params, wipc=False, judge=judge_all if rest else None, histograms=histograms,
                steady=Steady.SEVERAL if rest else Steady.ONE)


def window_cells(test: TestRun) -> Dict[Tuple[int, int, int], List[Workload]]:
    """(block size, read %, QD) -> the cell's workloads in the measurement
    window, over every cell the test ran."""
    out: Dict[Tuple[int, int, int], List[Workload]] = {}
    for r in test.rounds:
        for w in r.workloads:
            out.setdefault((w.bs, w.rwmixread, w.iodepth), [])
    for r in test.window_rounds():
        for w in r.workloads:
            out[(w.bs, w.rwmixread, w.iodepth)].append(w)
    return out


def cell_average(test: TestRun, bs: int, mix: int, qd: int, metric: str) -> Optional[float]:
    ws = window_cells(test).get((bs, mix, qd), [])
    return sum(w.metric(metric) for w in ws) / len(ws) if ws else None


def headline_bs(test: TestRun) -> int:
    """The block size the headline figures quote: 4KiB, else the smallest run."""
    sizes = {bs for bs, _, _ in window_cells(test)}
    return 4096 if 4096 in sizes or not sizes else min(sizes)


def repeat_source(test: TestRun) -> str:
    """Where a test's figures were measured: 'HDD-IOPS rounds 1-5, repeatable'."""
    s = test.steady if test.steady is not None else (test.evaluate() if test.rounds else None)
    title = test_title(test)
    if s is None or not s.rounds:
        return f"{title}: no rounds"
    return f"{title} rounds {s.first_round}-{s.last_round}, " + ("repeatable (20/10)" if s.steady
                                                                 else "NOT repeatable within 20/10")


between = in_range  # a check that an integer option (seconds, a count) lies in lo..hi


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


class HddIopsTest(TestType):
    name = "hdd-iops"
    title = "HDD random IOPS"
    short = "HDD-IOPS"
    order = 81
    view = "tkperf.testtypes.hdd_iops.view:HddIopsView"
    #: The profiles whose run without ``--tests`` runs it: ``hdd run``, not ``ssd run``.
    default_profiles: Tuple[str, ...] = ("hdd",)
    options = OptionSet(HddIopsSettings, (
        Option("hdd_iops_bs", ("--hdd-iops-bs",), "HDD-IOPS block sizes (default 4k,64k,1024k; --quick 4k)",
               parse=parse_block_sizes, format=sizes_text, default=BLOCK_SIZES,
               quick=(4096,), check=nonempty("--hdd-iops-bs"), metavar="SIZES"),
        Option("hdd_iops_mixes", ("--hdd-iops-mix",),
               "HDD-IOPS R/W mixes as read/write (default 100/0,70/30,0/100; --quick 100/0,0/100)",
               parse=parse_mixes, format=mixes_text, default=MIXES, quick=(100, 0),
               check=nonempty("--hdd-iops-mix"), metavar="MIXES"),
        Option("hdd_iops_qd", ("--hdd-iops-qd",),
               "HDD-IOPS queue depths, each at TC 1 (default 1,4,16,32; --quick 1,4)",
               parse=_depths, format=depths_text, default=DEPTHS, quick=(1, 4),
               check=lambda v: check_depths(v, "--hdd-iops-qd"), metavar="DEPTHS"),
        Option("hdd_iops_time", ("--hdd-iops-time",),
               "HDD-IOPS time per cell: seconds or with s/m/h (default 20s; --quick 1s)",
               parse=parse_duration, default=CELL_S, quick=1,
               check=between(1, MAX_RUNTIME, "--hdd-iops-time"), metavar="DURATION"),
    ))

    def plan(self, opts: Options, capacity: int) -> List[Plan]:
        cfg = opts.of(HddIopsSettings)
        sizes, mixes, depths = cfg.bs, cfg.mixes, cfg.qd
        params = {"block_sizes": sizes_text(sorted(sizes)), "mixes": mixes_text(sorted(mixes, reverse=True)),
                  "depths": depths_text(sorted(depths)), "access": "random", "numjobs": "1",
                  "iodepth": depths_text(sorted(depths)), "runtime": str(cfg.time)}
        return [repeat_plan(self.name, Rounds(cell_jobs(sizes, mixes, depths, cfg.time)),
                            tracked_cells(sizes, mixes, depths), "iops", "IOPS", params)]

    def headline(self, test: TestRun) -> List[Figure]:
        """Per mix at 4KiB: IOPS at QD1 (seek and rotation alone) and the
        highest IOPS over the queue depths (with the drive's reordering)."""
        bs = headline_bs(test)
        cells = window_cells(test)
        out: List[Figure] = []
        for mix in sorted({m for b, m, _ in cells if b == bs}, reverse=True):
            averages = {qd: cell_average(test, bs, mix, qd, "iops") for b, m, qd in cells if (b, m) == (bs, mix)}
            found = {qd: v for qd, v in averages.items() if v is not None}
            if not found:
                continue
            name = f"rnd_{format_bs(bs)}_{side_word(mix)}"
            text = f"{format_bs(bs)} {side_label(mix)}"
            if 1 in found:
                out.append(Figure(f"{name}_qd1_iops", f"{text} QD1", found[1], "IOPS"))
            top = max(found, key=lambda qd: found[qd])
            out.append(Figure(f"{name}_peak_iops", f"{text} peak (QD{top})", found[top], "IOPS"))
        return out

    def blocks(self, opts: Options) -> Blocks:
        return Blocks(0, max(opts.of(HddIopsSettings).bs))


def check_cells(test: TestRun, what: str) -> None:
    """Refuse a stored test that is not random cells at TC 1 named after
    their block size, mix and queue depth."""
    if test.series:
        raise ValueError(f"{what} keeps rounds, not a series")
    for r in test.rounds:
        for w in r.workloads:
            if w.name != cell_name(w.bs, w.rwmixread, w.iodepth) or w.numjobs != 1:
                raise ValueError(f"round {r.index} has a workload {w.name!r} (TC {w.numjobs}/QD {w.iodepth}) "
                                 f"that {what} does not run")
