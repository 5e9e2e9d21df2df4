"""Replay of a real-world workload capture (the SNIA RWSW PTS's Replay-Native
test; docs/rwsw-tests.rst).

``--replay steps`` (the default): after a purge, every step of the capture
in order, for its duration, as its IO streams at its queue depth: one fio
job per stream (the 16 largest), running at once, their I/O counts held in
the step's proportions by fio's flow control (:mod:`tkperf.testtypes.realworld.applied`).
A step of several streams is preceded by two 1 s calibration runs: the
first (depths by share) gives each stream's response time and so its need
of outstanding I/Os (Little's law); the second tries the total depth the
first suggests, and the step runs at the total depth the two measured
runs point to (:func:`tkperf.testtypes.realworld.applied.total_depth`), so that the
streams' mean outstanding I/Os add up to the step's.  A step without I/O is an idle gap.

``--replay exact``: the captured I/Os themselves, through fio's iolog
replay with the capture's timing, their addresses mapped onto the target's
range (:mod:`.exact`).
"""
from __future__ import annotations

import os
from dataclasses import replace
from typing import Dict, List, Mapping, Sequence, Tuple

from tkperf.api import (
    Blocks,
    Figure,
    FioJob,
    Options,
    OptionSet,
    Phase,
    Phases,
    Plan,
    PtsRules,
    Round,
    TestRun,
    TestType,
    UsageError,
    stored_values,
)
from tkperf.pts import IOLOG_ALIGN, Capture, CaptureStream, load_capture, scan_iolog
from tkperf.testtypes.realworld import applied, exact
from tkperf.testtypes.realworld import options as ro
from tkperf.testtypes.realworld.delivered import CALIBRATION, STEP, outstanding, overall, steps
from tkperf.testtypes.realworld.words import RWSW_PTS, common_deviations

#: Seconds of the calibration run before a step of several streams.
CALIBRATION_S = 1
#: A step whose delivered queue depth is off by more than this share, or a
#: stream whose share is off by more than this many points (as a fraction),
#: is named in the verdict.
QD_TOLERANCE = 0.10
SHARE_TOLERANCE = 0.03


def _job(name: str, s: CaptureStream, runtime: int, depth: int, extra: Tuple[Tuple[str, str], ...]) -> FioJob:
    return FioJob(name=name, rw=applied.fio_rw(s), bs=s.bs, runtime=runtime, iodepth=depth, extra=extra)


def load(cfg: ro.ReplaySettings) -> Capture:
    if not cfg.workload:
        raise UsageError("the real-world workload tests need --workload N.xml (a capture by tkperf capture)")
    cap = load_capture(cfg.workload)
    if not any(s.streams for s in cap.steps):
        raise UsageError(f"--workload {os.path.basename(cfg.workload)}: the capture holds no I/O to replay")
    return cap


class _Placer:
    """Sets each stream job's queue depth from the calibration runs before it:
    the need of each stream (share x response time, Little's law) from the
    first, the total depth from every calibration run so far
    (:func:`tkperf.testtypes.realworld.applied.total_depth`)."""

    def __init__(self, index: Dict[str, int], shares: Sequence[float], qd: float, runs: int):
        self.index, self.shares, self.qd, self.runs = index, tuple(shares), qd, runs

    def __call__(self, job: FioJob, earlier: Sequence[Round]) -> FioJob:
        cal = list(earlier[-self.runs:]) if len(earlier) >= self.runs else []
        if not cal or any(len(r.workloads) != len(self.shares) for r in cal):
            return job
        first = cal[0].workloads
        if not all(w.lat_mean_us > 0 for w in first):
            return job
        need = [s * w.lat_mean_us for s, w in zip(self.shares, first)]
        tried = [(float(sum(w.iodepth for w in r.workloads)), sum(outstanding(w) for w in r.workloads))
                 for r in cal]
        depth = applied.spread(need, applied.total_depth(self.qd, tried))
        return replace(job, iodepth=depth[self.index[job.name]])


def step_phases(cap: Capture, step_time: int) -> Tuple[List[Phase], Dict[str, str]]:
    """The phases of a step replay and the params that say what each step and job asked for."""
    phases: List[Phase] = []
    params: Dict[str, str] = {}
    for step in cap.steps:
        n = step.index + 1
        seconds = step_time or max(1, int(round(step.duration)))
        streams = applied.kept(step.streams)
        params[f"step.{n}.duration"] = str(seconds)
        if not streams:
            if phases:
                phases[-1] = replace(phases[-1], idle_s=phases[-1].idle_s + seconds)
            params[f"step.{n}.idle"] = "true"
            continue
        shares = [s.share for s in streams]
        weights = applied.weights(streams)
        first = applied.first_depths(shares, step.qd)
        names = [applied.job_name(n, k, s) for k, s in enumerate(streams)]
        params.update({f"step.{n}.qd": repr(step.qd), f"step.{n}.iops": repr(step.iops),
                       f"step.{n}.mbps": repr(step.mbps), f"step.{n}.left_out": repr(applied.left_out(step)),
                       f"step.{n}.target_qd": str(applied.target_qd(step.qd))})
        for name, s in zip(names, streams):
            params[f"stream.{name}"] = s.key
            params[f"share.{name}"] = repr(s.share)
        place = None
        if len(streams) > 1:
            for runs, rung in enumerate(("a", "b")):
                cal = [f"cal{n}{rung}-s{k}" for k in range(len(streams))]
                placer = _Placer({c: k for k, c in enumerate(cal)}, shares, step.qd, runs) if runs else None
                phases.append(Phase(tuple(_job(c, s, CALIBRATION_S, first[k], applied.step_extra(k, weights[k]))
                                          for k, (c, s) in enumerate(zip(cal, streams))),
                                    label=f"{CALIBRATION} {n}{rung}", place=placer))
            place = _Placer({name: k for k, name in enumerate(names)}, shares, step.qd, 2)
        phases.append(Phase(tuple(_job(name, s, seconds, first[k], applied.step_extra(k, weights[k]))
                                  for k, (name, s) in enumerate(zip(names, streams))),
                            label=f"{STEP} {n}", place=place))
    return phases, params


class ReplayPts(PtsRules):
    """The RWSW PTS's Replay-Native test, and how this replay departs from it."""

    oio = ""

    def deviations(self, kind: TestType, options: Mapping[str, str], revision) -> List[str]:
        v = stored_values(kind, options)
        out = common_deviations(kind.name)
        if v["rwsw_replay"] == "exact":
            out.append("replay --replay exact: the captured I/Os with their own timing through fio's iolog "
                       f"replay, not the step-by-step stream mix of the {RWSW_PTS}'s Replay-Native test")
            return out
        out.append("replay: each step's streams run as concurrent fio jobs held in proportion by fio's flow "
                   "control, at queue depths set from two 1 s calibration runs (extra I/O) before each "
                   "step of several streams; a step of one stream runs at its queue depth rounded to a whole "
                   "number")
        out.append("replay: offsets are fio's (random streams uniform over the active range, sequential ones "
                   "from its start), not the captured addresses")
        if v["rwsw_replay_step_time"]:
            out.append(f"replay: every step runs {v['rwsw_replay_step_time']} s instead of its captured duration")
        return out

    def result_deviations(self, kind: TestType, test: TestRun, options, revision, capacity: int) -> List[str]:
        out = []
        for key, value in sorted(test.params.items()):
            if key.endswith(".left_out") and float(value) > 0.0005:
                out.append(f"{test.key}: {key.split('.')[1]}: streams beyond the {applied.MAX_STREAMS} largest "
                           f"left out ({100.0 * float(value):.1f}% of the step's I/Os)")
        for got in steps(test):  # what the drive was given, against what the capture asked for
            if got.asked_qd > 0 and abs(got.qd / got.asked_qd - 1.0) > QD_TOLERANCE:
                out.append(f"{test.key}: step {got.step} ran at a queue depth of {got.qd:.2f} against the captured "
                           f"{got.asked_qd:.2f}")
            for x in got.streams:
                if abs(x.share - x.asked_share) > SHARE_TOLERANCE:
                    out.append(f"{test.key}: step {got.step}: {x.key} made {100 * x.share:.1f}% of the I/Os "
                               f"against the captured {100 * x.asked_share:.1f}%")
        moved = test.data.get("exact.moved", "0")
        if moved not in ("", "0"):
            out.append(f"{test.key}: {moved} captured I/Os moved to fit the target's range")
        dropped = test.data.get("exact.dropped", "0")
        if dropped not in ("", "0"):
            out.append(f"{test.key}: {dropped} captured trims, syncs or oversize I/Os left out")
        return out

class ReplayTest(TestType):
    pts = ReplayPts()
    name = "replay"
    title = "Real-World Workload Replay"
    short = "Replay"
    order = 90
    view = "tkperf.testtypes.realworld.replayview:ReplayView"
    options = OptionSet(ro.ReplaySettings, ro.REPLAY_OPTIONS)

    def plan(self, opts: Options, capacity: int) -> List[Plan]:
        cfg = opts.of(ro.ReplaySettings)
        cap = load(cfg)
        params = {"workload": os.path.basename(cfg.workload), "capture": cap.name, "capture_device": cap.device,
                  "capture_size": str(cap.size), "capture_source": cap.source, "mode": cfg.replay,
                  "capture_qd": repr(cap.qd), "capture_iops": repr(cap.iops), "capture_mbps": repr(cap.mbps),
                  "capture_ios": str(sum(s.ios for s in cap.streams))}
        if cfg.replay == "exact":
            log = exact.capture_iolog(cfg.workload, cap)
            found = scan_iolog(log)  # a corrupt iolog is refused here, before the purge (exit 7)
            if not found.ios:
                raise UsageError(f"--replay exact: the capture's iolog {cap.iolog} holds no reads or writes")
            span = opts.test_bytes(capacity) // IOLOG_ALIGN * IOLOG_ALIGN  # wrapped offsets keep their alignment
            return [Plan(key=self.name, shape=exact.ExactReplay(log, span, exact.depth_for(cap)), wipc=False,
                         params={**params, "iolog": os.path.basename(log), "span": str(span),
                                 "iolog_ios": str(found.ios)})]
        phases, more = step_phases(cap, cfg.replay_step_time)
        return [Plan(key=self.name, shape=Phases(tuple(phases)), wipc=False,
                     params={**params, **more, "steps": str(len(cap.steps)),
                             "step_time": str(cfg.replay_step_time)})]

    def blocks(self, opts: Options) -> Blocks:
        cfg = opts.of(ro.ReplaySettings)
        if not cfg.workload:
            return Blocks(0, 0)
        sizes = [s.bs for st in load(cfg).steps for s in st.streams]
        small = min(sizes, default=0)
        return Blocks(small if small < 4096 else 0, max(sizes, default=0))

    def headline(self, test: TestRun) -> List[Figure]:
        figures = overall(test)
        if figures is None:
            return []
        iops, mbps, lat = figures
        return [Figure("iops", "IOPS", iops, "IOPS"), Figure("mbps", "throughput", mbps, "MB/s", "", "{:,.1f}"),
                Figure("lat_mean_us", "mean response time", lat, "us", "lower", "{:,.1f}")]
