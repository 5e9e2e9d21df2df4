"""Replay of a real-world workload capture (the SNIA RWSW PTS's Replay-Native
test; docs/rwsw-tests.rst).

``--replay steps`` (the default): after a purge, every step of the capture
in order, for its duration, as its IO streams: one fio job per stream (the
16 largest), running at once.  At ``--replay-intensity captured`` (the
default) each stream job is held to its captured rate (fio ``rate``, its
captured IOPS times its transfer size, so a stream of less than one I/O a
second stays that light) with room for twice its share of the step's
captured queue depth (fio ``iodepth``, at least 1): the drive is asked for
the capture's intensity, and a step it cannot serve at that rate is named
in the verdict with both figures.  At ``--replay-intensity max`` (the
earlier behaviour, a disclosed departure) the streams run as fast as the
drive serves them, their I/O counts held in the step's proportions by fio's
flow control, at a total depth set from two 1 s calibration runs before a
step of several streams (:func:`tkperf.testtypes.realworld.applied.total_depth`).
A step without I/O is an idle gap.

``--replay exact``: the captured I/Os themselves, through fio's iolog
replay with the capture's timing and at most the capture's peak in-flight
count outstanding, their addresses mapped onto the target's range, flushes
and discards kept (:mod:`.exact`).

Both measure what the drive was given the way the capture measures it,
with one definition on both sides: the target is recorded at the capture's
block tracepoints around every fio run and summed by the capture's own code
(:mod:`.blockstats`), giving each step's data I/Os (flushes and discards
apart), their time-averaged count in flight and their response time, issue
to completion, mean and 99th percentile; the verdict compares each with the
capture's.  The target's block-layer counters are read beside it (and stand
in, labelled, where the target cannot be traced).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

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
from tkperf.pts import (
    FIO_GAP_S,
    Estimate,
    duration_rough,
    record_round,
    stored,
)
from tkperf.rwsw.iolog import ALIGN as IOLOG_ALIGN
from tkperf.rwsw.model import Capture
from tkperf.rwsw.model import Step as CaptureStep
from tkperf.rwsw.model import Stream as CaptureStream
from tkperf.rwsw.model import load as load_capture
from tkperf.testtypes.realworld import applied, blockstats, exact, exactlog, sidejobs
from tkperf.testtypes.realworld import options as ro
from tkperf.testtypes.realworld.delivered import (
    BLOCK,
    CALIBRATION,
    COUNTERS,
    FIGURE_RATIO,
    STEP,
    figures_off,
    measured,
    measured_of,
    outstanding,
    overall,
    source_verdicts,
    step_rounds,
    step_verdicts,
)
from tkperf.testtypes.realworld.words import RWSW_PTS, common_deviations

#: Seconds of the calibration run before a step of several streams.
CALIBRATION_S = 1
#: A step whose delivered queue depth is off by more than this share, or a
#: stream whose share is off by more than this many points (as a fraction),
#: is named in the verdict.
QD_TOLERANCE = 0.10
SHARE_TOLERANCE = 0.03
#: An exact replay whose queue depth, mean or 99th percentile response time
#: (traced as the capture is) is beyond this factor of the capture's (either
#: way) is named in the verdict.
RT_RATIO = FIGURE_RATIO


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
    (:func:`tkperf.testtypes.realworld.applied.total_depth`), each run's
    depth measured at the block layer where the target has counters (``data``,
    set by :class:`StepReplay`), else by fio."""

    def __init__(self, index: Dict[str, int], shares: Sequence[float], qd: float, runs: int):
        self.index, self.shares, self.qd, self.runs = index, tuple(shares), qd, runs
        self.data: Dict[str, str] = {}

    def measured(self, r: Round) -> float:
        got = measured_of(self.data, r)
        return got.qd if got is not None else sum(outstanding(w) for w in r.workloads)

    def __call__(self, job: FioJob, earlier: Sequence[Round]) -> FioJob:
        cal = list(earlier[-self.runs:]) if len(earlier) >= self.runs else []
        if job.name not in self.index or not cal or any(len(r.workloads) != len(self.shares) for r in cal):
            return job
        first = cal[0].workloads
        if not all(w.lat_mean_us > 0 for w in first):
            return job
        need = [s * w.lat_mean_us for s, w in zip(self.shares, first)]
        tried = [(float(sum(w.iodepth for w in r.workloads)), self.measured(r)) for r in cal]
        depth = applied.spread(need, applied.total_depth(self.qd, tried))
        return replace(job, iodepth=depth[self.index[job.name]])


def captured_extra(k: int, s: CaptureStream, step: CaptureStep, fsync: int = 0) -> Tuple[Tuple[str, str], ...]:
    """fio lines of stream job ``k`` at the captured intensity: its rate in
    bytes per second (its captured IOPS x transfer size; fio's ``rate_iops``
    is whole I/Os per second, too coarse for a light stream), and for a
    write stream of a step that flushed, a flush every ``fsync`` writes."""
    own: Tuple[Tuple[str, str], ...] = (("rate", str(max(1, int(round(step.iops * s.share * s.bs))))),)
    if fsync and s.rw == "write":
        own += (("fsync", str(fsync)),)
    return own if k == 0 else (("stonewall", "0"), ("new_group", "")) + own


def flush_every(step: CaptureStep, streams: Sequence[CaptureStream]) -> int:
    """Writes per flush of a step whose capture recorded flushes (fio
    ``fsync``: the kept write streams' I/Os over the step's flushes, at
    least 1); 0 when it recorded none, or no write stream runs."""
    flushes = exactlog.seen_figure(step, "flushes")
    writes = sum(s.ios for s in streams if s.rw == "write")
    if not flushes or not writes:
        return 0
    return max(1, int(round(writes / flushes)))


def captured_depth(s: CaptureStream, step: CaptureStep) -> int:
    """Room for twice the stream's share of the step's captured queue depth, at least 1 (fio iodepth)."""
    return max(1, min(applied.MAX_DEPTH, math.ceil(2.0 * step.qd * s.share)))


def _step_params(n: int, step: CaptureStep, streams: Sequence[CaptureStream]) -> Dict[str, str]:
    kept_iops = step.iops * sum(s.share for s in streams)
    return {f"step.{n}.qd": repr(step.qd), f"step.{n}.iops": repr(step.iops), f"step.{n}.mbps": repr(step.mbps),
            f"step.{n}.left_out": repr(applied.left_out(step)), f"step.{n}.target_qd": str(applied.target_qd(step.qd)),
            f"step.{n}.kept_iops": repr(kept_iops)}


def _rest_job(name: str, rest: Sequence[CaptureStream], runtime: int, depth: int,
              extra: Tuple[Tuple[str, str], ...]) -> FioJob:
    rw, bs, mix, more = sidejobs.rest_settings(rest)
    return FioJob(name=name, rw=rw, bs=bs, rwmixread=mix, runtime=runtime, iodepth=depth, extra=extra + more)


def _side_params(n: int, step: CaptureStep, streams: Sequence[CaptureStream],
                 rest: Sequence[CaptureStream], span: int = 0) -> Dict[str, str]:
    """What a step asks beyond its kept streams: the remainder job's share, its discards
    (each at most ``span``, the target's range, where given: fio refuses a larger block)."""
    out: Dict[str, str] = {}
    if rest:
        name = sidejobs.rest_name(n)
        out.update({f"step.{n}.left_out": repr(0.0), f"step.{n}.rest": repr(sum(s.share for s in rest)),
                    f"step.{n}.rest_bytes": repr(sum(s.byte_share for s in rest)),
                    f"step.{n}.kept_iops": repr(step.iops * sum(s.share for s in tuple(streams) + tuple(rest))),
                    f"stream.{name}": f"{len(rest)} streams beyond the {applied.MAX_STREAMS} largest",
                    f"share.{name}": repr(sum(s.share for s in rest))})
    count, nbytes = sidejobs.discards(step)
    if count:
        bs = sidejobs.trim_size(count, nbytes)
        if 0 < span < bs:
            bs = max(sidejobs.TRIM_ALIGN, span // sidejobs.TRIM_ALIGN * sidejobs.TRIM_ALIGN)
            out[f"step.{n}.trim_capped"] = str(sidejobs.trim_size(count, nbytes))
        out.update({f"step.{n}.discards": str(count), f"step.{n}.discard_bytes": str(nbytes),
                    f"step.{n}.trim_bs": str(bs), f"step.{n}.trim_rate": str(sidejobs.trim_rate(step, count, bs))})
    return out


def _trim_job(n: int, params: Mapping[str, str], seconds: int) -> Tuple[FioJob, ...]:
    if f"step.{n}.trim_bs" not in params:
        return ()
    return (FioJob(name=sidejobs.trim_name(n), rw=sidejobs.TRIM_RW, bs=int(params[f"step.{n}.trim_bs"]),
                   runtime=seconds, iodepth=1, extra=(("stonewall", "0"), ("new_group", ""),
                                                      ("rate", params[f"step.{n}.trim_rate"]))),)


def _fsyncs(n: int, step: CaptureStep, streams: Sequence[CaptureStream], rest: Sequence[CaptureStream],
            params: Dict[str, str]) -> Tuple[List[int], int]:
    """Each kept stream's fio fsync and the remainder's: each write stream its own flushes
    (:mod:`.sidejobs`), or for a capture without them the step's spread over the write streams."""
    captured = int(exactlog.seen_figure(step, "flushes") or 0)
    if not captured:
        return [0] * len(streams), 0
    if sidejobs.own_flushes(step.streams):
        params[sidejobs.FLUSH_RULE] = "own"
        each = [sidejobs.stream_fsync(s) for s in streams]
        last = sidejobs.rest_fsync(rest)
        unplaced = sidejobs.unplaced_flushes(step, tuple(streams) + tuple(rest))
        if unplaced:
            params[f"step.{n}.flushes_unplaced"] = str(unplaced)
    else:
        every = flush_every(step, streams)
        each = [every if s.rw == "write" else 0 for s in streams]
        last = 0
        params[f"step.{n}.flushes_spread"] = "true"
    given = [str(f) for f in each + [last] if f]
    params[f"step.{n}.flushes"] = str(captured)
    if given:
        params[f"step.{n}.fsync"] = " / ".join(given)
    return each, last


def _flow_jobs(names: Sequence[str], streams: Sequence[CaptureStream], rest: Sequence[CaptureStream],
               weights: Sequence[int], runtime: int, depths: Sequence[int],
               fsyncs: Sequence[int]) -> Tuple[FioJob, ...]:
    """A step's stream jobs (and its remainder's, last) in one fio flow, at the maximum intensity,
    each flushing every ``fsyncs[k]`` of its writes (0: never)."""
    def flushing(k: int) -> Tuple[Tuple[str, str], ...]:
        return applied.step_extra(k, weights[k]) + ((("fsync", str(fsyncs[k])),) if fsyncs[k] else ())

    jobs = tuple(_job(c, s, runtime, depths[k], flushing(k)) for k, (c, s) in enumerate(zip(names, streams)))
    if rest:
        k = len(streams)
        jobs += (_rest_job(names[k], rest, runtime, depths[k], flushing(k)),)
    return jobs


def step_phases(cap: Capture, step_time: int, intensity: str = "captured",
                span: int = 0) -> Tuple[List[Phase], Dict[str, str]]:
    """The phases of a step replay and the params that say what each step and job asked for;
    ``span``: the target's range in bytes (0: not known), which a discard job's block stays within."""
    phases: List[Phase] = []
    params: Dict[str, str] = {"intensity": intensity}
    for step in cap.steps:
        n = step.index + 1
        seconds = step_time or max(1, int(round(step.duration)))
        streams = applied.kept(step.streams)
        rest = sidejobs.rest_streams(step)
        params[f"step.{n}.duration"] = str(seconds)
        if not streams:
            if phases:
                phases[-1] = replace(phases[-1], idle_s=phases[-1].idle_s + seconds)
            params[f"step.{n}.idle"] = "true"
            if sidejobs.discards(step)[0]:
                params[f"step.{n}.discards"] = str(sidejobs.discards(step)[0])
            continue
        names = [applied.job_name(n, k, s) for k, s in enumerate(streams)]
        params.update(_step_params(n, step, streams))
        params.update(_side_params(n, step, streams, rest, span))
        for name, s in zip(names, streams):
            params[f"stream.{name}"] = s.key
            params[f"share.{name}"] = repr(s.share)
        trims = _trim_job(n, params, seconds)
        if intensity == "captured":
            fsyncs, rest_fsync = _fsyncs(n, step, streams, rest, params)
            jobs = tuple(_job(name, s, seconds, captured_depth(s, step), captured_extra(k, s, step, fsync))
                         for k, (name, s, fsync) in enumerate(zip(names, streams, fsyncs)))
            if rest:
                share = sum(s.share for s in rest)
                rates = [sum(s.ios * s.bs for s in rest if s.rw == rw) / max(step.duration, 1e-6)
                         for rw in ("read", "write")]
                extra: Tuple[Tuple[str, str], ...] = (("stonewall", "0"), ("new_group", ""),
                                                       ("rate", ",".join(str(max(1, int(round(r)))) for r in rates)))
                if rest_fsync:
                    extra += (("fsync", str(rest_fsync)),)
                depth = max(1, min(applied.MAX_DEPTH, math.ceil(2.0 * step.qd * share)))
                jobs += (_rest_job(sidejobs.rest_name(n), rest, seconds, depth, extra),)
            phases.append(Phase(jobs + trims, label=f"{STEP} {n}"))
            continue
        each, last = _fsyncs(n, step, streams, rest, params)
        fsyncs = each + [last]
        shares = [s.share for s in streams] + ([sum(s.share for s in rest)] if rest else [])
        weights = applied.weights(tuple(streams) + ((replace(rest[0], share=shares[-1]),) if rest else ()))
        first = applied.first_depths(shares, step.qd)

        all_names = names + ([sidejobs.rest_name(n)] if rest else [])
        place = None
        if len(all_names) > 1:
            for runs, rung in enumerate(("a", "b")):
                cal = [f"cal{n}{rung}-s{k}" for k in range(len(all_names))]
                placer = _Placer({c: k for k, c in enumerate(cal)}, shares, step.qd, runs) if runs else None
                phases.append(Phase(_flow_jobs(cal, streams, rest, weights, CALIBRATION_S, first, fsyncs),
                                    label=f"{CALIBRATION} {n}{rung}", place=placer))
            place = _Placer({name: k for k, name in enumerate(all_names)}, shares, step.qd, 2)
        phases.append(Phase(_flow_jobs(all_names, streams, rest, weights, seconds, first, fsyncs) + trims,
                            label=f"{STEP} {n}", place=place))
    return phases, params


@dataclass(frozen=True)
class StepReplay(Phases):
    """The steps, as :class:`tkperf.api.Phases`, with the target traced at the
    block tracepoints and its block-layer counters read around every fio run
    (``trace.N.*`` and ``block.N.*`` in the test's data)
    and each round's fio time that of its longest job (they run at once)."""

    def run(self, ctx, plan, test: TestRun) -> None:
        meter = blockstats.Meter(ctx.fio.settings.filename) if not getattr(ctx.fio, "host", None) else None
        histograms = bool(plan.histograms or ctx.opts.latency_histograms)
        for phase in self.phases:
            if isinstance(phase.place, _Placer):
                phase.place.data = test.data

        refusal = "the target is a test host's device" if getattr(ctx.fio, "host", None) else \
            sidejobs.discard_refusal(ctx.fio.settings.filename)
        if refusal and any(j.rw == sidejobs.TRIM_RW for p in self.phases for j in p.jobs):
            test.data[sidejobs.TRIM_SKIPPED] = refusal

        def record(index: int, phase: Phase, jobs: Tuple[FioJob, ...]) -> None:
            if refusal:  # fio would fail the run: the discards are named in the verdict instead
                jobs = tuple(j for j in jobs if j.rw != sidejobs.TRIM_RW)
            before = meter.start() if meter is not None else None
            try:
                rnd = record_round(ctx, test, jobs, index, f"{plan.key} {phase.label or index}", histograms)
            except BaseException:
                if meter is not None:
                    meter.abandon()
                raise
            if meter is not None:
                meter.stop(test.data, index, before)
            test.rounds[-1] = replace(rnd, fio_s=max((w.runtime_ms for w in rnd.workloads), default=0) / 1000.0)

        self._run_phases(ctx, test, record, "all steps run")

    def estimate(self, opts, capacity: int) -> Estimate:
        """Concurrent jobs take the time of the longest: about the capture's duration, plus the calibration runs."""
        jobs = tuple(j for p in self.phases for j in p.jobs)
        busy = sum(max((j.planned_seconds for j in p.jobs), default=0.0) + FIO_GAP_S for p in self.phases)
        idle = sum(p.idle_s for p in self.phases[:-1])
        return Estimate((f"# {len(self.phases)} fio runs, {duration_rough(busy)} of I/O and "
                         f"{duration_rough(idle)} idle",), jobs, busy + idle, busy + idle)


def intensity_of(options: Mapping[str, str]) -> str:
    """The replay's intensity; a result from before ``--replay-intensity`` ran as fast as the drive served it."""
    return (options.get("rwsw_replay_intensity") or "max") if isinstance(options, Mapping) else "max"


class ReplayPts(PtsRules):
    """The RWSW PTS's Replay-Native test, and how this replay departs from it."""

    oio = ""

    def deviations(self, kind: TestType, options: Mapping[str, str], revision) -> List[str]:
        v = stored_values(kind, options)
        out = common_deviations(kind.name)
        if v["rwsw_replay"] == "exact":
            out.append("replay --replay exact: the captured I/Os with their own timing through fio's iolog "
                       f"replay, not the step-by-step stream mix of the {RWSW_PTS}'s Replay-Native test")
            out.append("replay --replay exact: the timing is held to the millisecond (fio's iolog wait): the I/Os "
                       "of one captured millisecond are issued one after the other from its start")
            return out
        if intensity_of(options) == "max":
            out.append("replay --replay-intensity max: each step's streams run as fast as the drive serves them "
                       "at the step's queue depth, not at their captured rates")
            out.append("replay: each step's streams run as concurrent fio jobs held in proportion by fio's flow "
                       "control, at queue depths set from two 1 s calibration runs (extra I/O) before each "
                       "step of several streams; a step of one stream runs at its queue depth rounded to a whole "
                       "number")
        else:
            out.append("replay: each step's streams run as concurrent fio jobs, each held to its captured rate "
                       "(fio rate) with room for twice its share of the step's queue depth (fio iodepth)")
        out.append("replay: offsets are fio's (random streams uniform over the active range, sequential ones "
                   "from its start), not the captured addresses")
        if v["rwsw_replay_step_time"]:
            out.append(f"replay: every step runs {v['rwsw_replay_step_time']} s instead of its captured duration")
        return out

    def result_deviations(self, kind: TestType, test: TestRun, options, revision, capacity: int) -> List[str]:
        out = [f"{test.key}: {v}" for v in sidejobs.rules(test.params)]
        for key, value in sorted(test.params.items(), key=lambda kv: _step_order(kv[0])):
            if key.endswith(".rest") and float(value) > 0.0005:
                n = key.split(".")[1]
                out.append(f"{test.key}: step {n}: the streams beyond the {applied.MAX_STREAMS} largest "
                           f"({100.0 * float(value):.1f}% of the step's I/Os, "
                           f"{100.0 * stored.number(test, f'step.{n}.rest_bytes'):.1f}% of its bytes) ran as one "
                           f"mixed job ({sidejobs.rest_name(int(n))})")
            if key.endswith(".left_out") and float(value) > 0.0005:
                out.append(f"{test.key}: step {key.split('.')[1]}: streams beyond the {applied.MAX_STREAMS} largest "
                           f"left out ({100.0 * float(value):.1f}% of the step's I/Os); the kept streams' shares "
                           "are judged among the kept streams")
        out += [f"{test.key}: {v}" for v in step_verdicts(test, QD_TOLERANCE, SHARE_TOLERANCE)]
        counted: Dict[int, Optional[Tuple[int, int]]] = {}
        for number, rnd in step_rounds(test):
            got = blockstats.stored(test.data, rnd.index)
            counted[number] = (got.discards, got.flushes) if got is not None else None
        out += [f"{test.key}: {v}" for v in sidejobs.not_replayed(test.params, test.data, counted)]
        out += [f"{test.key}: {v}" for v in exact_verdicts(test)]
        moved = stored.whole(test, "exact.moved")
        if moved:
            out.append(f"{test.key}: {moved} captured I/Os moved to fit the target's range")
        if test.params.get("capture_folded"):
            out.append(f"{test.key}: the capture is of several devices ({test.params['capture_folded']}), replayed "
                       "onto this one target: their addresses laid end to end and folded into its range, a stream "
                       "of several devices one stream")
        dropped = stored.whole(test, "exact.dropped")
        if dropped:
            out.append(f"{test.key}: {dropped} captured I/Os longer than the target's range left out")
        return out


def captured_p99(cap: Capture) -> Dict[str, str]:
    """Each step's captured 99th percentile response time (µs), where the capture recorded it (version 2)."""
    out = {}
    for st in cap.steps:
        value = exactlog.seen_figure(st, "lat", "p99_us")
        if value is not None:
            out[f"step.{st.index + 1}.lat_p99_us"] = repr(value)
    return out


def captured_rt_us(test: TestRun) -> float:
    """The capture's mean response time (µs): recorded, or its queue depth / its IOPS (Little's law)."""
    recorded = stored.number(test, "capture_lat_mean_us")
    if recorded > 0:
        return recorded
    iops = stored.number(test, "capture_iops")
    return 1e6 * stored.number(test, "capture_qd") / iops if iops > 0 else 0.0


def exact_verdicts(test: TestRun) -> List[str]:
    """An exact replay that could not keep the captured timing: it ran longer
    than the capture (beyond a tenth and a second), as fio waited for the
    drive with the capture's peak of I/Os outstanding."""
    if "exact.length_us" not in test.data or not test.rounds:
        return []
    out = []
    captured = stored.whole(test, "exact.length_us") / 1e6
    took = exact.replayed_s(test)
    if took > captured * 1.1 + 1.0:
        out.append(f"the exact replay took {took:,.1f} s against the capture's {captured:,.1f} s: the drive did not "
                   f"keep the captured timing with at most {test.data.get('exact.iodepth', '?')} I/Os outstanding")
    out += exact.timing_verdicts(test)
    got = measured(test, test.rounds[0])
    for what, key, seen in (("discards", "exact.discards", got.discards if got else None),
                            ("flushes", "exact.flushes", got.flushes if got else None)):
        count = stored.whole(test, key)
        if count and (seen is None or seen < count):
            out.append(f"{count} captured {what} in the iolog, " + (
                f"{seen} seen at the target's block layer: fio's iolog replay did not issue them all"
                + (" (fio 3.33 skips trim actions)" if what == "discards" else "")
                if seen is not None else "not measured at the block layer"))
    if got is None:
        out.append("the exact replay's response time is fio's (the target has no block-layer counters here): it "
                   "counts completed I/Os fio has not yet reaped while it keeps the captured timing, unlike the "
                   "capture's")
        return out
    if got.lost:
        out.append(f"the kernel lost {got.lost:,} trace events during the exact replay: its queue depth and "
                   "response times are of the events recorded, not judged")
        return out
    asked = captured_rt_us(test)
    if got.source == COUNTERS:
        out += source_verdicts([got], got.flushes > 0)
        if asked > 0 and not 1.0 / RT_RATIO <= got.lat_mean_us / asked <= RT_RATIO:
            out.append(f"the exact replay's mean response time was {got.lat_mean_us:,.0f} µs against the captured "
                       f"{asked:,.0f} µs ({COUNTERS}): this drive serves the capture's I/Os at another speed than "
                       "the captured device")
        return out
    off = figures_off(stored.number(test, "capture_qd"), got.qd, asked, got.lat_mean_us,
                      stored.number(test, "capture_lat_p99_us"), got.lat_p99_us, RT_RATIO)
    if off:
        out.append(f"the exact replay's {off} ({BLOCK}): this drive serves the capture's I/Os at another speed "
                   "than the captured device")
    return out


def _step_order(key: str) -> Tuple[int, str]:
    parts = key.split(".")
    return (int(parts[1]) if len(parts) > 2 and parts[1].isdigit() else 0, key)


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
                  "capture_ios": str(sum(s.ios for s in cap.streams)), "capture_duration": repr(cap.duration),
                  "numjobs": "1", **exactlog.captured_params(cap), **captured_p99(cap)}
        if cap.devices:  # several devices onto this one target: named in the verdict (docs/rwsw.rst)
            params["capture_folded"] = ", ".join(d.label for d in cap.devices)
        if cfg.replay == "exact":
            log, found = exact.checked(cfg.workload, cap)  # refused here, before the purge (exit 7)
            span = opts.test_bytes(capacity) // IOLOG_ALIGN * IOLOG_ALIGN  # wrapped offsets keep their alignment
            windows = tuple((s.start, s.duration) for s in cap.steps)
            return [Plan(key=self.name, shape=exact.ExactReplay(log, span, found.depth, windows), wipc=False,
                         params={**params, "iolog": os.path.basename(log), "span": str(span),
                                 "iolog_ios": str(found.ios), "iolog_flushes": str(found.flushes),
                                 "iolog_discards": str(found.discards), "iodepth": str(found.depth),
                                 "access": "the captured I/Os with their timing (fio iolog replay)"})]
        phases, more = step_phases(cap, cfg.replay_step_time, cfg.replay_intensity,
                                   opts.test_bytes(capacity) if capacity > 0 else 0)
        return [Plan(key=self.name, shape=StepReplay(tuple(phases)), wipc=False,
                     params={**params, **more, "steps": str(len(cap.steps)),
                             "step_time": str(cfg.replay_step_time),
                             "access": f"each step's IO streams ({cfg.replay_intensity} intensity)"})]

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
        return [Figure("iops", "IOPS", figures.iops, "IOPS"),
                Figure("mbps", "throughput", figures.mbps, "MB/s", "", "{:,.1f}"),
                Figure("lat_mean_us", f"mean response time ({figures.lat_source})", figures.lat_mean_us, "us",
                       "lower", "{:,.1f}")]
