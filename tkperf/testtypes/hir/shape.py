"""The host idle recovery loop shape: steady state, then write periods with
idle gaps in fio's own timing, one fio process per idle setting.

1. Rounds of the steady-state job (RND 4KiB W) until its IOPS are steady
   (20/10) or ``--max-rounds`` were run: :class:`tkperf.kit.shapes.Rounds`.
2. Per idle setting, right after, ONE fio process of two stonewalled jobs:

   * ``hir-idle-Ns``: RND 4KiB W with ``thinktime=N s`` and
     ``thinktime_iotime=W s``: fio writes for W seconds, drains its queue
     (``io_u_quiesce``: nothing is in flight while it thinks), sleeps N
     seconds, and again, for ``cycles`` write periods.  Its ``runtime`` is
     ``cycles x (W + N) + N``: fio 3.33 starts its first think time after
     W + N seconds of writes (the rest of the job runs W, N, W, N ...), so
     the job is an N-second lead-in of continuous writes, then ``cycles``
     write periods of W seconds, each followed by N idle seconds;
   * ``hir-return-Ns``: the same writes without idle for ``--hir-return``
     seconds, back to the baseline.

   Both write fio's IOPS log (``write_iops_log``, ``log_avg_msec``) into a
   temporary directory beside the result file; :mod:`.iopslog` turns it into
   one row per write period (series ``periods``) and one per W-second
   interval of the return (series ``return``), both kept in the test.  The
   fio process is recorded as the round after the previous one; the
   setting's idle time and round index are the test's data items
   ``hir.setting.K`` and ``hir.round.K``.

Nothing sleeps in Python and no fio process starts between write periods:
the idle gaps are fio's ``usleep`` with the queue drained, and fio's log has
no line in them (it writes none for a window without I/O).
"""
from __future__ import annotations

import logging
import os
import shutil
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar, List, Sequence, Tuple

import numpy as np

from tkperf import api
from tkperf.api import DataSeries as Series
from tkperf.pts import (
    FIO_GAP_S,
    Estimate,
    OutputError,
    Shape,
    duration,
    duration_rough,
    log_directory,
    progress_of,
    record_round,
)
from tkperf.testtypes.hir import iopslog

if TYPE_CHECKING:  # pragma: no cover
    from tkperf.pts import PlanLike, RunContext

progress = logging.getLogger("tkperf.progress")

PERIODS = "periods"
PERIOD_COLUMNS: Tuple[str, ...] = ("setting", "idle_s", "cycle", "start_s", "length_s", "gap_s", "ios", "iops",
                                   "kind")
RETURN = "return"
RETURN_COLUMNS: Tuple[str, ...] = ("setting", "idle_s", "interval", "end_s", "ios", "iops")
#: Data keys: a setting's idle seconds, its round, fio's logged share of its I/Os.
SETTING, ROUND, LOGGED = "hir.setting.", "hir.round.", "hir.logged."
#: Where the dry run says the logs go.
LOG_PLACEHOLDER = "TMPDIR"
#: The logged I/Os may differ this much from fio's count before a warning.
LOG_TOLERANCE = 0.1


@dataclass(frozen=True)
class Setting:
    """One idle setting: ``cycles`` x (``write_s`` of writes + ``idle_s``
    idle), then ``return_s`` of continuous writes."""

    idle_s: int
    write_s: int
    cycles: int
    return_s: int

    @property
    def idle_runtime(self) -> int:
        """The idle job's runtime: the lead-in, then the cycles."""
        return self.cycles * (self.write_s + self.idle_s) + self.idle_s

    @property
    def seconds(self) -> float:
        return float(self.idle_runtime + self.return_s) + 2 * FIO_GAP_S


def sample_ms(write_s: int) -> int:
    """fio's log window: a twentieth of the write period, 50 to 250 ms."""
    return int(min(250, max(50, write_s * 1000 // 20)))


def idle_name(idle_s: int) -> str:
    return f"hir-idle-{idle_s}s"


def return_name(idle_s: int) -> str:
    return f"hir-return-{idle_s}s"


def log_extra(prefix: str, ms: int) -> Tuple[Tuple[str, str], ...]:
    return (("write_iops_log", prefix), ("log_avg_msec", str(ms)))


def setting_jobs(base: api.FioJob, s: Setting, logdir: str) -> Tuple[api.FioJob, api.FioJob]:
    """The idle job and the return job of one setting, logging into ``logdir``."""
    ms = sample_ms(s.write_s)
    idle = replace(base, name=idle_name(s.idle_s), runtime=s.idle_runtime,
                   extra=base.extra + (("thinktime", f"{s.idle_s}s"), ("thinktime_iotime", f"{s.write_s}s"))
                   + log_extra(os.path.join(logdir, idle_name(s.idle_s)), ms))
    back = replace(base, name=return_name(s.idle_s), runtime=s.return_s,
                   extra=base.extra + log_extra(os.path.join(logdir, return_name(s.idle_s)), ms))
    return idle, back




@dataclass(frozen=True)
class Measured:
    """What one setting's logs gave: its write periods, the return's I/Os
    per interval, and the logged share of fio's I/O count of each job."""

    periods: List[iopslog.Period]
    returned: Tuple[np.ndarray, np.ndarray]
    logged: Tuple[float, float]


def measure(s: Setting, idle: Tuple[iopslog.Windows, float, float],
            back: Tuple[iopslog.Windows, float, float]) -> Measured:
    """The figures of one setting from each job's (windows, fio's I/O count,
    fio's runtime in ms).  The idle job's windows are scaled to fio's count;
    what the return job's log misses is its unlogged end (fio writes no line
    for the part-window its job ends in), added there."""
    w, ios, end_ms = idle
    logged = w.total / ios if ios else 1.0
    w = iopslog.scaled(w, ios)[0]
    periods = iopslog.write_periods(w, s.write_s * 1000.0, s.idle_s * 1000.0, end_ms)
    # A fio that thinks first after W seconds (not W + N, as 3.33 does) ends
    # the job with one period more than planned: not part of the figures.
    periods = [p if n <= s.cycles else replace(p, kind=iopslog.PART) for n, p in enumerate(periods, 1)]
    r, r_ios, r_end = back
    r_logged = r.total / r_ios if r_ios else 1.0
    r = iopslog.scaled(iopslog.with_tail(r, r_end, r_ios), r_ios)[0]
    return Measured(periods, iopslog.intervals(r, s.write_s * 1000.0, s.return_s * 1000.0),
                    (logged, r_logged))


@dataclass(frozen=True)
class HostIdleShape(Shape):
    """Rounds of ``steady`` until steady state, then every setting in order
    (see the module doc)."""

    keeps_steady_on_resume: ClassVar[bool] = False

    steady: api.FioJob
    settings: Tuple[Setting, ...]
    #: The jobs of one steady-state round, one fio process: the rest of the
    #: round, then its measured last minute, named as ``steady`` (the tracking
    #: figure); empty: ``steady`` alone (the whole round measured).
    round_jobs: Tuple[api.FioJob, ...] = ()

    @property
    def rounds(self) -> Tuple[api.FioJob, ...]:
        """The jobs of every steady-state round."""
        return self.round_jobs or (self.steady,)

    def fob(self, headline: api.Headline, test: api.TestRun) -> List[api.Figure]:
        """None: HIR's round 1 is measured over its last minute (older
        results: the mean of the whole round), after up to 29 minutes of
        random writes that take the drive through its write cliff; FOB is a
        first minute (WSAT's first interval), which HIR does not record on
        its own.  Its report header says so."""
        return []

    def first_figures(self, headline: api.Headline, test: api.TestRun) -> List[api.Figure]:
        """Round 1 of the steady-state loop, right after the purge (and WIPC, with ``--hir-wipc``)."""
        if not test.rounds or not test.tracking_workload:
            return []
        w = test.rounds[0].workload(test.tracking_workload)
        if w is None:
            return []
        return [api.Figure("baseline_iops", "baseline", w.metric(test.tracking_metric), "IOPS")]

    def __post_init__(self) -> None:
        if not self.settings:
            raise ValueError("host idle recovery needs at least one idle setting")
        idles = [s.idle_s for s in self.settings]
        if len(set(idles)) != len(idles):
            raise ValueError("every idle setting needs an idle time of its own")
        if self.rounds[-1].name != self.steady.name:
            raise ValueError("a steady-state round ends with its measured job, named as the steady job")

    def jobs(self, logdir: str) -> Tuple[api.FioJob, ...]:
        return tuple(j for s in self.settings for j in setting_jobs(self.steady, s, logdir))

    def run(self, ctx: RunContext, plan: PlanLike, test: api.TestRun) -> None:
        if plan.tracking is None or plan.tracking.workload != self.steady.name:
            raise ValueError(f"{plan.key}: the tracking figure must be the steady-state job's")
        test.rounds.clear()  # steady state and idle settings are one unbroken run
        for key in [k for k in test.data if k.startswith("hir.")]:
            del test.data[key]
        periods, back = Series(PERIODS, PERIOD_COLUMNS), Series(RETURN, RETURN_COLUMNS)
        test.series = {}
        progress_of(ctx).rounds_then(sum(s.seconds for s in self.settings))
        api.Rounds(self.rounds).run(ctx, plan, test)
        reached = test.stop_reason
        test.series = {PERIODS: periods, RETURN: back}
        logdir = log_directory(ctx.xml_path, ".tkperf-hir-", "IOPS logs")
        try:
            for k, s in enumerate(self.settings, 1):
                self._setting(ctx, plan, test, k, s, logdir, periods, back)
        finally:
            shutil.rmtree(logdir, ignore_errors=True)
        test.stop_reason = f"all idle settings run after {reached}"
        ctx.save()

    def _setting(self, ctx: RunContext, plan: PlanLike, test: api.TestRun, k: int, s: Setting, logdir: str,
                 periods: Series, back: Series) -> None:
        label = f"idle {s.idle_s} s"
        ctx.phase = label
        # the first call starts the clock of all the settings; later ones name the phase
        progress_of(ctx).once_started(f"{label}: {s.cycles} x ({s.write_s} s write + {s.idle_s} s idle), "
                                      f"then {duration(float(s.return_s))} back to baseline",
                                      sum(x.seconds for x in self.settings))
        progress.info("[%s] %s: %d write periods of %d s, then %s of continuous writes", plan.key, label,
                      s.cycles, s.write_s, duration(float(s.return_s)))
        jobs = setting_jobs(self.steady, s, logdir)
        index = len(test.rounds) + 1
        rnd = record_round(ctx, test, jobs, index, f"{plan.key} {label}")
        test.data[f"{SETTING}{k}"] = str(s.idle_s)
        test.data[f"{ROUND}{k}"] = str(index)
        got = measure(s, self._read(jobs[0], rnd), self._read(jobs[1], rnd))
        test.data[f"{LOGGED}{k}"] = f"{got.logged[0]!r},{got.logged[1]!r}"
        for n, p in enumerate(got.periods, 1):
            periods.append((k, s.idle_s, n, p.start_ms / 1000.0, p.length_ms / 1000.0, p.gap_ms / 1000.0,
                            round(p.ios, 1), p.iops, p.kind))
        first = rnd.workload(jobs[0].name)
        start = first.runtime_ms / 1000.0 if first else 0.0
        ios, lengths = got.returned
        ends = start + np.cumsum(lengths) / 1000.0
        for n, (count, end, ms) in enumerate(zip(ios, ends, lengths), 1):
            back.append((k, s.idle_s, n, float(end), round(float(count), 1), float(count) * 1000.0 / float(ms)))
        self._warn(ctx, plan, s, got)
        ctx.save()

    def _read(self, job: api.FioJob, rnd: api.Round) -> Tuple[iopslog.Windows, float, float]:
        w = rnd.workload(job.name)
        prefix = dict(job.extra)["write_iops_log"]
        windows, files = iopslog.read_windows(prefix, float(dict(job.extra)["log_avg_msec"]))
        if w is None or not files:
            raise OutputError(f"fio wrote no IOPS log for {job.name} ({prefix}_iops.*.log)")
        return windows, float(w.write.ios), float(w.runtime_ms)

    def _warn(self, ctx: RunContext, plan: PlanLike, s: Setting, got: Measured) -> None:
        whole = sum(1 for p in got.periods if p.kind != iopslog.PART)
        if whole != s.cycles:
            ctx.event("warning", f"idle {s.idle_s} s: fio's log shows {whole} write periods, not "
                      f"{s.cycles}", plan.key)
        for what, share in zip(("idle job", "return job"), got.logged):
            if abs(share - 1.0) > LOG_TOLERANCE:
                ctx.event("warning", f"idle {s.idle_s} s: fio's IOPS log of the {what} holds "
                          f"{share:.0%} of the I/Os fio counted", plan.key)

    def estimate(self, opts, capacity: int) -> Estimate:
        per_round = sum(j.planned_seconds for j in self.rounds) + FIO_GAP_S
        rest = sum(s.seconds for s in self.settings)
        first = min(opts.window, opts.max_rounds)
        what = ("the first job below" if len(self.rounds) == 1 else
                f"the first {len(self.rounds)} jobs below (the rest of the round, then its measured last minute, "
                f"{self.rounds[-1].runtime} s, whose IOPS are the point)")
        lines = [f"# steady state: rounds of {what}, one fio process each, about "
                 f"{duration_rough(per_round)} a round; {first} to {opts.max_rounds} rounds",
                 f"# then per idle setting one fio process: the idle job (write periods with fio's "
                 f"thinktime) and the return job, {duration_rough(rest)} in all"]
        lines += [f"#   idle {s.idle_s} s: {s.idle_s} s lead-in, {s.cycles} x ({s.write_s} s write + {s.idle_s} s "
                  f"idle), then {duration_rough(s.return_s)} continuous" for s in self.settings]
        lines.append(f"# {LOG_PLACEHOLDER}: a temporary directory beside the result file for fio's IOPS "
                     "logs, removed once read")
        return Estimate(tuple(lines), self.rounds + self.jobs(LOG_PLACEHOLDER),
                        first * per_round + rest, opts.max_rounds * per_round + rest)


def setting_rounds(test: api.TestRun) -> Sequence[Tuple[int, int, int]]:
    """(setting number, idle seconds, round index) of every setting run."""
    out = []
    k = 1
    while f"{SETTING}{k}" in test.data:
        idle, index = test.data[f"{SETTING}{k}"], test.data.get(f"{ROUND}{k}", "")
        if idle.isdigit() and index.isdigit():
            out.append((k, int(idle), int(index)))
        k += 1
    return out
