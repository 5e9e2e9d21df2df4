"""The plan of a steps replay (``--replay steps``, :mod:`.replay`): every
step of the capture as one fio run of its IO streams, with what each step
and job asked for kept in the test's params (``step.N.*``, ``stream.*``,
``share.*``).

At the captured intensity each stream job is held to its captured rate
with room for twice its share of the step's queue depth, the remainder
stream at its captured bytes per second, the discards as a trim job and
each write stream's flushes as its own fio ``fsync`` (:mod:`.sidejobs`).
At the maximum intensity the streams run in one fio flow at a depth set
from two 1 s calibration runs before a step of several streams
(:class:`Placer`).  A step without I/O is an idle gap after the one
before it.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Dict, List, Mapping, Sequence, Tuple

from tkperf.api import FioJob, Phase, Round
from tkperf.rwsw.model import Capture
from tkperf.rwsw.model import Step as CaptureStep
from tkperf.rwsw.model import Stream as CaptureStream
from tkperf.testtypes.realworld import applied, exactlog, sidejobs
from tkperf.testtypes.realworld.delivered import CALIBRATION, STEP, measured_of, outstanding

#: Seconds of the calibration run before a step of several streams.
CALIBRATION_S = 1


def _job(name: str, s: CaptureStream, runtime: int, depth: int, extra: Tuple[Tuple[str, str], ...]) -> FioJob:
    return FioJob(name=name, rw=applied.fio_rw(s), bs=s.bs, runtime=runtime, iodepth=depth, extra=extra)


class Placer:
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


def _idle_step(n: int, step: CaptureStep, seconds: int, phases: List[Phase], params: Dict[str, str]) -> None:
    """A step without reads or writes: an idle gap after the phase before it (its discards named)."""
    if phases:
        phases[-1] = replace(phases[-1], idle_s=phases[-1].idle_s + seconds)
    params[f"step.{n}.idle"] = "true"
    count = sidejobs.discards(step)[0]
    if count:
        params[f"step.{n}.discards"] = str(count)


def _captured_jobs(n: int, step: CaptureStep, names: Sequence[str], streams: Sequence[CaptureStream],
                   rest: Sequence[CaptureStream], seconds: int, params: Dict[str, str]) -> Tuple[FioJob, ...]:
    """A step's jobs at the captured intensity: each stream at its captured rate, the remainder
    at its captured bytes per second in each direction."""
    fsyncs, rest_fsync = _fsyncs(n, step, streams, rest, params)
    jobs = tuple(_job(name, s, seconds, captured_depth(s, step), captured_extra(k, s, step, fsync))
                 for k, (name, s, fsync) in enumerate(zip(names, streams, fsyncs)))
    if not rest:
        return jobs
    share = sum(s.share for s in rest)
    rates = [sum(s.ios * s.bs for s in rest if s.rw == rw) / max(step.duration, 1e-6) for rw in ("read", "write")]
    extra: Tuple[Tuple[str, str], ...] = (("stonewall", "0"), ("new_group", ""),
                                           ("rate", ",".join(str(max(1, int(round(r)))) for r in rates)))
    if rest_fsync:
        extra += (("fsync", str(rest_fsync)),)
    depth = max(1, min(applied.MAX_DEPTH, math.ceil(2.0 * step.qd * share)))
    return jobs + (_rest_job(sidejobs.rest_name(n), rest, seconds, depth, extra),)


def _max_phases(n: int, step: CaptureStep, names: Sequence[str], streams: Sequence[CaptureStream],
                rest: Sequence[CaptureStream], seconds: int, trims: Tuple[FioJob, ...],
                params: Dict[str, str]) -> List[Phase]:
    """A step at the maximum intensity: one fio flow of its streams (and remainder), after two
    calibration runs when it has several."""
    each, last = _fsyncs(n, step, streams, rest, params)
    fsyncs = each + [last]
    shares = [s.share for s in streams] + ([sum(s.share for s in rest)] if rest else [])
    weights = applied.weights(tuple(streams) + ((replace(rest[0], share=shares[-1]),) if rest else ()))
    first = applied.first_depths(shares, step.qd)
    all_names = list(names) + ([sidejobs.rest_name(n)] if rest else [])
    out: List[Phase] = []
    place = None
    if len(all_names) > 1:
        for runs, rung in enumerate(("a", "b")):
            cal = [f"cal{n}{rung}-s{k}" for k in range(len(all_names))]
            placer = Placer({c: k for k, c in enumerate(cal)}, shares, step.qd, runs) if runs else None
            out.append(Phase(_flow_jobs(cal, streams, rest, weights, CALIBRATION_S, first, fsyncs),
                             label=f"{CALIBRATION} {n}{rung}", place=placer))
        place = Placer({name: k for k, name in enumerate(all_names)}, shares, step.qd, 2)
    out.append(Phase(_flow_jobs(all_names, streams, rest, weights, seconds, first, fsyncs) + trims,
                     label=f"{STEP} {n}", place=place))
    return out


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
            _idle_step(n, step, seconds, phases, params)
            continue
        names = [applied.job_name(n, k, s) for k, s in enumerate(streams)]
        params.update(_step_params(n, step, streams))
        params.update(_side_params(n, step, streams, rest, span))
        for name, s in zip(names, streams):
            params[f"stream.{name}"] = s.key
            params[f"share.{name}"] = repr(s.share)
        trims = _trim_job(n, params, seconds)
        if intensity == "captured":
            phases.append(Phase(_captured_jobs(n, step, names, streams, rest, seconds, params) + trims,
                                label=f"{STEP} {n}"))
        else:
            phases += _max_phases(n, step, names, streams, rest, seconds, trims, params)
    return phases, params
