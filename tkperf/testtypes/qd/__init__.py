"""Queue-depth scaling (an enterprise SSD review's "Random & Sequential
Performance" method, 2014): IOPS, MB/s and response times of RND 4KiB
W, R, 70/30 and SEQ 128KiB W, R over queue depths 1 to 128, each sweep on a
drive preconditioned into a random-write steady state.

The sequence (:func:`schedule`) follows that method: a *precondition* (a SEQ
128KiB fill of the active range at QD32, then RND 4KiB W at QD32 for
``--qd-precondition-time``) before every sweep that writes, and each read
sweep right after its write sweep.  A read sweep chosen without its write
sweep follows a precondition of its own, unless the drive was
preconditioned and not written since (reads do not change its state).  The
runner's purge and WIPC come first; the WIPC is a SEQ 128KiB fill, so the
first precondition adds no fill of its own unless ``--wipc-loops 0``.

Every step is one fio process, recorded as one round (the loop shape is
:class:`~tkperf.kit.shapes.Phases` without idle time); every point of a
random sweep is a stonewalled job of its sweep's fio process, every SEQ
point a phase of its own right after the last, at TC 1 and QD = fio
``iodepth``, ``--qd-time`` long, so the drive never rests between points.
A fill has no time limit (it ends with the active range) and so no hang
timeout.

Sequential points continue where the last point of their sweep stopped,
over the whole active range, as TP's workloads do (the review uses the full
LBA range): every SEQ point is its own fio process, started right after the
last, placed by :class:`ContinuingSweep` from the bytes the points before it
moved (one fio process cannot know where its last job stopped).  The
offsets are kept in the test's data as ``offset.PHASE.POINT``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from tkperf import api
from tkperf.pts import (
    MAX_RUNTIME,
    SLOWEST_PLAUSIBLE_BPS,
    Estimate,
    continuing,
    duration,
    duration_rough,
    histogram,
)
from tkperf.testtypes.qd.settings import QdSettings, check_depths, depths_text, parse_depths

DEPTHS: Tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128)
QUICK_DEPTHS: Tuple[int, ...] = (1, 4, 32)
POINT_S = 180
PRECONDITION_S = 2 * 3600
PRECONDITION_QD = 32
FILL_BS = 128 * 1024
FILL_JOB = "pre-seq-128k-fill"
PRECONDITION_JOB = f"pre-rnd-4k-w-qd{PRECONDITION_QD}"
#: Write speed assumed for the duration of a fill in estimates (as the dry run's WIPC).
FILL_ESTIMATE_BPS = 500e6


@dataclass(frozen=True)
class QdWorkload:
    """One workload swept over the queue depths."""

    word: str    # its name in --qd-workloads: rnd4k-w
    key: str     # prefix of its headline figure keys: rnd4k_w
    job: str     # prefix of its fio job names: rnd-4k-w (rnd-4k-w-qd32)
    title: str   # in headings: RND 4KiB 100% W
    short: str   # in headline labels: 4k W
    rw: str
    bs: int
    rwmixread: int = 0

    @property
    def sequential(self) -> bool:
        return self.rw in ("read", "write")

    @property
    def writes(self) -> bool:
        return self.rw not in ("read", "randread")

    @property
    def unit(self) -> str:
        """What its performance is quoted in: MB/s for SEQ, IOPS for RND."""
        return "MB/s" if self.sequential else "IOPS"

    def performance(self, w: api.Workload) -> float:
        """IOPS, or MB/s (decimal) for a sequential workload."""
        return w.bw_bytes / 1e6 if self.sequential else w.iops

    def point(self, qd: int) -> str:
        """The fio job name of one point: rnd-4k-w-qd32."""
        return f"{self.job}-qd{qd}"

    def qd_of(self, job_name: str) -> Optional[int]:
        """The queue depth of one of its points' job names, else None."""
        m = re.fullmatch(re.escape(self.job) + r"-qd(\d+)", job_name)
        return int(m.group(1)) if m else None


KiB128 = 128 * 1024
WORKLOADS: Tuple[QdWorkload, ...] = (
    QdWorkload("rnd4k-w", "rnd4k_w", "rnd-4k-w", "RND 4KiB 100% W", "4k W", "randwrite", 4096),
    QdWorkload("rnd4k-r", "rnd4k_r", "rnd-4k-r", "RND 4KiB 100% R", "4k R", "randread", 4096, 100),
    QdWorkload("rnd4k-70/30", "rnd4k_70_30", "rnd-4k-70-30", "RND 4KiB 70/30 R/W", "4k 70/30",
               "randrw", 4096, 70),
    QdWorkload("seq128k-w", "seq128k_w", "seq-128k-w", "SEQ 128KiB 100% W", "SEQ 128k W", "write", KiB128),
    QdWorkload("seq128k-r", "seq128k_r", "seq-128k-r", "SEQ 128KiB 100% R", "SEQ 128k R", "read", KiB128, 100),
)
BY_WORD: Dict[str, QdWorkload] = {w.word: w for w in WORKLOADS}
#: Sweeps that share a precondition, the write sweep first (the review's order).
GROUPS: Tuple[Tuple[str, ...], ...] = (("rnd4k-w", "rnd4k-r"), ("rnd4k-70/30",), ("seq128k-w", "seq128k-r"))


# --- options ---------------------------------------------------------------------------

def parse_workloads(text: str, flag: str = "--qd-workloads") -> Tuple[str, ...]:
    """'seq128k-r,rnd4k-w' -> the workloads named, in the review's order, each once."""
    given = []
    for part in (text or "").split(","):
        word = part.strip().lower()
        if not word:
            continue
        if word not in BY_WORD:
            raise api.UsageError(f"{flag}: unknown workload {part.strip()!r}; choose from "
                                 f"{', '.join(BY_WORD)}")
        given.append(word)
    check_workloads(given, flag)
    return tuple(w for w in BY_WORD if w in given)


def check_workloads(words: Sequence[str], flag: str = "--qd-workloads") -> None:
    if not words:
        raise api.UsageError(f"{flag} names no workload; choose from {', '.join(BY_WORD)}")


def _between(lo: int, hi: int, flag: str):
    return api.in_range(lo, hi, flag, " s")


# --- the plan ---------------------------------------------------------------------------

def schedule(chosen: Sequence[str], first_fill: bool) -> List[Tuple[str, str]]:
    """The steps in order: ``("fill", "")``, ``("precondition", "")`` (RND 4KiB
    W QD32) and ``("sweep", word)``.  ``first_fill``: the first precondition
    fills too (no WIPC ran)."""
    steps: List[Tuple[str, str]] = []
    fresh = False  # preconditioned, and no sweep has written since
    for group in GROUPS:
        members = [w for w in group if w in chosen]
        if not members:
            continue
        if not fresh or any(BY_WORD[w].writes for w in members):
            if first_fill or any(kind == "precondition" for kind, _ in steps):
                steps.append(("fill", ""))
            steps.append(("precondition", ""))
            fresh = True
        for w in members:
            steps.append(("sweep", w))
            fresh = fresh and not BY_WORD[w].writes
    return steps


@dataclass(frozen=True)
class ContinuingSweep:
    """``Phase.place`` of a SEQ sweep: a point starts where the points of its
    sweep before it (``names``) stopped, within the first ``active`` bytes,
    with ``size`` reaching to the end of that range (TP's rule, see
    :mod:`tkperf.testtypes.throughput`)."""

    names: Tuple[str, ...]
    active: int

    def __call__(self, job: api.FioJob, earlier: Sequence[api.Round]) -> api.FioJob:
        return continuing(job, self.active, (w.read.io_bytes + w.write.io_bytes for r in earlier
                                             for w in r.workloads if w.name in self.names and w.name != job.name))


def sweep_jobs(w: QdWorkload, depths: Sequence[int], seconds: int) -> Tuple[api.FioJob, ...]:
    """The points of one sweep, in order: TC 1, QD = fio iodepth, time based."""
    return tuple(api.FioJob(name=w.point(d), rw=w.rw, bs=w.bs, rwmixread=w.rwmixread, runtime=seconds,
                            numjobs=1, iodepth=d) for d in depths)


def sweep_phases(w: QdWorkload, depths: Sequence[int], seconds: int, active: int) -> List[api.Phase]:
    """A random sweep: one phase, its points back to back in one fio process.
    A sequential sweep: a phase per point, each continuing where the last
    stopped (:class:`ContinuingSweep`)."""
    jobs = sweep_jobs(w, depths, seconds)
    title = f"sweep: {w.title}, QD {depths_text(depths)}"
    if not w.sequential:
        return [api.Phase(jobs, label=title)]
    placer = ContinuingSweep(tuple(j.name for j in jobs), active)
    return [api.Phase((j,), label=f"{title}: point {i} of {len(jobs)}, QD{j.iodepth}", place=placer)
            for i, j in enumerate(jobs, 1)]


@dataclass(frozen=True)
class QdPhases(api.Phases):
    """:class:`Phases` whose estimate also counts its fills (no time limit of
    their own) at :data:`FILL_ESTIMATE_BPS`."""

    fill_bytes: int = 0

    def estimate(self, opts, capacity: int) -> Estimate:
        est = super().estimate(opts, capacity)
        fill_s = self.fill_bytes / FILL_ESTIMATE_BPS
        lines = list(est.lines)
        if self.fill_bytes:
            lines.append(f"# and SEQ 128k fills of {self.fill_bytes / 1e9:.1f} GB in all, about "
                         f"{duration_rough(fill_s)} at {FILL_ESTIMATE_BPS / 1e6:.0f} MB/s")
        # The job file below lists every phase's jobs; each phase is its own fio process.
        lines += [f"# phase {i} (one fio process): {p.label}: {', '.join(j.name for j in p.jobs)}"
                  for i, p in enumerate(self.phases, 1)]
        return Estimate(tuple(lines), est.jobs, est.low_s + fill_s, est.high_s + fill_s)


# --- reading results ----------------------------------------------------------------------

@dataclass(frozen=True)
class Point:
    """One measured point of a sweep."""

    qd: int
    result: api.Workload

    @property
    def p999_us(self) -> Optional[float]:
        """99.9th percentile response time of all its I/Os: fio's own for one
        direction, from the merged histograms for a mix (None without them)."""
        sides = [s for s in (self.result.read, self.result.write) if s.ios]
        if len(sides) == 1:
            return sides[0].percentile("99.9")
        if not sides or not all(s.bins for s in sides):
            return None
        return histogram.percentile_us(histogram.merge(*(s.bins for s in sides)), 99.9)

    @property
    def ios(self) -> int:
        return self.result.read.ios + self.result.write.ios


def points(test: api.TestRun, w: QdWorkload) -> List[Point]:
    """The measured points of one workload's sweep, in the order run."""
    found: Dict[int, Point] = {}
    for r in test.rounds:
        for res in r.workloads:
            qd = w.qd_of(res.name)
            if qd is not None:
                found[qd] = Point(qd, res)
    return list(found.values())


def swept(test: api.TestRun) -> List[QdWorkload]:
    """The workloads of the test with at least one measured point."""
    return [w for w in WORKLOADS if points(test, w)]


def peak(w: QdWorkload, pts: Sequence[Point]) -> Point:
    """The point of the highest IOPS (MB/s for SEQ)."""
    return max(pts, key=lambda p: w.performance(p.result))


LATENCY_AT_QD1 = ("rnd4k-r", "rnd4k-w")


class QueueDepthTest(api.TestType):
    name = "qd"
    title = "Queue-depth scaling"
    short = "QD"
    order = 60
    view = "tkperf.testtypes.qd.view:QueueDepthView"
    # Its section shows the 99.9th percentiles it reads from the histograms;
    # tkperf's QoS part is added there only with --latency-histograms.
    options = api.OptionSet(QdSettings, (
        api.Option("qd_depths", ("--qd-depths",),
                   "queue depths swept, in order, each at TC 1 (default 1,2,4,8,16,32,64,128; --quick 1,4,32)",
                   parse=parse_depths, format=depths_text, default=DEPTHS, quick=QUICK_DEPTHS,
                   check=check_depths, metavar="DEPTHS"),
        api.Option("qd_time", ("--qd-time",),
                   "time at each queue depth, no rest between points: seconds or with s/m/h (default 3m; --quick 2s)",
                   parse=api.parse_duration, default=POINT_S, quick=2,
                   check=_between(1, MAX_RUNTIME, "--qd-time"), metavar="DURATION"),
        api.Option("qd_workloads", ("--qd-workloads",),
                   "workloads swept (default all): " + ", ".join(BY_WORD),
                   parse=parse_workloads, format=",".join, default=tuple(BY_WORD),
                   check=check_workloads, metavar="WORKLOADS"),
        api.Option("qd_precondition_time", ("--qd-precondition-time",),
                   f"RND 4KiB W QD{PRECONDITION_QD} before each write sweep (after a SEQ 128KiB fill): "
                   "seconds or with s/m/h/d (default 2h; --quick 3s)",
                   parse=api.parse_duration, default=PRECONDITION_S, quick=3,
                   check=_between(1, 366 * 86400, "--qd-precondition-time"), metavar="DURATION"),
    ))

    def plan(self, opts: api.Options, capacity: int) -> List[api.Plan]:
        cfg = opts.of(QdSettings)
        active = opts.active_bytes(capacity)
        fill = api.FioJob(name=FILL_JOB, rw="write", bs=FILL_BS, numjobs=1, iodepth=PRECONDITION_QD)
        pre = api.FioJob(name=PRECONDITION_JOB, rw="randwrite", bs=4096, runtime=cfg.precondition_time,
                         numjobs=1, iodepth=PRECONDITION_QD)
        steps = schedule(cfg.workloads, first_fill=opts.wipc_loops == 0)
        phases, n = [], 0
        for kind, word in steps:
            if kind == "fill":
                phases.append(api.Phase((fill,), label=f"precondition {n + 1}: SEQ 128KiB W fill, QD{PRECONDITION_QD}",
                                        timeout_s=active / SLOWEST_PLAUSIBLE_BPS + 60))
            elif kind == "precondition":
                n += 1
                phases.append(api.Phase((pre,), label=f"precondition {n}: RND 4KiB W QD{PRECONDITION_QD}, "
                                        f"{duration(float(cfg.precondition_time), rough=True)}"))
            else:
                phases += sweep_phases(BY_WORD[word], cfg.depths, cfg.time, active)
        fills = sum(1 for kind, _ in steps if kind == "fill")
        kinds = {"sequential" if BY_WORD[w].sequential else "random" for w in cfg.workloads}
        access = " and ".join(k for k in ("random", "sequential") if k in kinds)
        sequence = ", ".join("fill" if k == "fill" else "precondition" if k == "precondition"
                             else w for k, w in steps)
        return [api.Plan(
            key=self.name,
            shape=QdPhases(tuple(phases), fill_bytes=fills * active),
            params={"access": access,
                    "numjobs": "1", "iodepth": depths_text(cfg.depths),
                    "depths": depths_text(cfg.depths), "workloads": ",".join(cfg.workloads),
                    "runtime": str(cfg.time), "precondition_time": str(cfg.precondition_time),
                    "precondition_qd": str(PRECONDITION_QD), "sequence": sequence,
                    "phases": str(len(phases))},
            # The 99.9th percentile of a mix needs both directions' histograms.
            histograms="rnd4k-70/30" in cfg.workloads,
        )]

    def headline(self, test: api.TestRun) -> List[api.Figure]:
        out: List[api.Figure] = []
        for w in WORKLOADS:
            pts = points(test, w)
            if not pts:
                continue
            best = peak(w, pts)
            if w.sequential:
                out.append(api.Figure(f"{w.key}_peak_mb_s", f"{w.short} peak", w.performance(best.result),
                                      "MB/s", "higher", "{:,.1f}"))
            else:
                out.append(api.Figure(f"{w.key}_peak_iops", f"{w.short} peak", best.result.iops, "IOPS"))
            out.append(api.Figure(f"{w.key}_peak_qd", f"{w.short} peak QD", float(best.qd), "", ""))
            qd1 = [p for p in pts if p.qd == 1]
            if w.word in LATENCY_AT_QD1 and qd1:
                out.append(api.Figure(f"{w.key}_qd1_lat_mean_us", f"{w.short} QD1 lat AVE",
                                      qd1[0].result.lat_mean_us, "us", "lower", "{:,.1f}"))
        return out

    def blocks(self, opts: api.Options) -> api.Blocks:
        return api.Blocks(0, FILL_BS)
