"""The cells of the HDD round tests (``hdd-iops``, ``hdd-lat``): random I/O
at TC 1 over R/W mixes x block sizes x queue depths, one stonewalled job per
cell named after its block size, mix and queue depth, in rounds judged for
repeatability on the figure of one or two tracked cells."""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from tkperf.fio.jobs import FioJob
from tkperf.kit.base import Plan, Tracking
from tkperf.kit.policy import Steady
from tkperf.kit.shapes import Rounds
from tkperf.model.names import hdd_cell as cell_name
from tkperf.model.results import TestRun, Workload, format_bs, mix_label
from tkperf.pts.matrix.plan import judge_all

#: The summary page's lines of the HDD tests come from this rank (the SSD tests' own lines win).
HDD_SUMMARY_RANK = 20


def side_word(mix: int) -> str:
    """A mix in headline keys: read, write or 70_30."""
    return {100: "read", 0: "write"}.get(mix, f"{mix}_{100 - mix}")


def side_label(mix: int) -> str:
    """A mix in headline labels: R, W or 70/30."""
    return {100: "R", 0: "W"}.get(mix, mix_label(mix))


def hdd_cell_jobs(block_sizes: Sequence[int], mixes: Sequence[int], depths: Sequence[int],
              seconds: int) -> Tuple[FioJob, ...]:
    """Every cell as a job at TC 1: mixes from 100/0 down, block sizes from
    the largest down, queue depths from the lowest up, whatever the order given."""
    return tuple(FioJob(name=cell_name(bs, mix, qd), rw="randrw", bs=bs, rwmixread=mix,
                        runtime=seconds, numjobs=1, iodepth=qd)
                 for mix in sorted(mixes, reverse=True) for bs in sorted(block_sizes, reverse=True)
                 for qd in sorted(depths))


def hdd_tracked_cells(block_sizes: Sequence[int], mixes: Sequence[int],
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


def hdd_repeat_plan(key: str, shape: Rounds, cells: Sequence[Tuple[int, int, int]], figure: str,
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


def hdd_window_cells(test: TestRun) -> Dict[Tuple[int, int, int], List[Workload]]:
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


def hdd_check_cells(test: TestRun, what: str) -> None:
    """Refuse a stored test that is not random cells at TC 1 named after
    their block size, mix and queue depth."""
    if test.series:
        raise ValueError(f"{what} keeps rounds, not a series")
    for r in test.rounds:
        for w in r.workloads:
            if w.name != cell_name(w.bs, w.rwmixread, w.iodepth) or w.numjobs != 1:
                raise ValueError(f"round {r.index} has a workload {w.name!r} (TC {w.numjobs}/QD {w.iodepth}) "
                                 f"that {what} does not run")
