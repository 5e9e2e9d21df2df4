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
in, labelled, where the target cannot be traced).  A step the capture lost
trace events in is judged by no verdict and left out of the overall
figures, and each says so (:func:`.delivered.not_judged`).  Every step's
run prints one progress line (:func:`step_line`), on a terminal and off it.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass, replace
from typing import ClassVar, Dict, List, Mapping, Optional, Tuple

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
from tkperf.rwsw.model import load as load_capture
from tkperf.testtypes.realworld import applied, blockstats, exact, exactlog, sidejobs
from tkperf.testtypes.realworld import options as ro
from tkperf.testtypes.realworld.delivered import (
    BLOCK,
    COUNTERS,
    FIGURE_RATIO,
    STEP,
    Measured,
    figures_off,
    measured,
    overall,
    source_verdicts,
    step_rounds,
    step_verdicts,
    touched_steps,
)
from tkperf.testtypes.realworld.stepplan import Placer, step_phases
from tkperf.testtypes.realworld.words import RWSW_PTS, common_deviations

progress = logging.getLogger("tkperf.progress")

#: A step whose delivered queue depth is off by more than this share, or a
#: stream whose share is off by more than this many points (as a fraction),
#: is named in the verdict.
QD_TOLERANCE = 0.10
SHARE_TOLERANCE = 0.03
#: An exact replay whose queue depth, mean or 99th percentile response time
#: (traced as the capture is) is beyond this factor of the capture's (either
#: way) is named in the verdict.
RT_RATIO = FIGURE_RATIO


def load(cfg: ro.ReplaySettings) -> Capture:
    if not cfg.workload:
        raise UsageError("the real-world workload tests need --workload N.xml (a capture by tkperf capture)")
    cap = load_capture(cfg.workload)
    if not any(s.streams for s in cap.steps):
        raise UsageError(f"--workload {os.path.basename(cfg.workload)}: the capture holds no I/O to replay")
    return cap


@dataclass(frozen=True)
class StepReplay(Phases):
    """The steps, as :class:`tkperf.api.Phases`, with the target traced at the
    block tracepoints and its block-layer counters read around every fio run
    (``trace.N.*`` and ``block.N.*`` in the test's data)
    and each round's fio time that of its longest job (they run at once)."""

    unit: ClassVar[str] = "step"  # a capture's time steps, as the capture calls them

    def run(self, ctx, plan, test: TestRun) -> None:
        meter = blockstats.Meter(ctx.fio.settings.filename) if not getattr(ctx.fio, "host", None) else None
        histograms = bool(plan.histograms or ctx.opts.latency_histograms)
        for phase in self.phases:
            if isinstance(phase.place, Placer):
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
            progress.info("[%s] %s", plan.key, step_line(test, test.rounds[-1], phase.label or f"step {index}",
                                                         index, len(self.phases)))

        self._run_phases(ctx, test, record, "all steps run")

    def estimate(self, opts, capacity: int) -> Estimate:
        """Concurrent jobs take the time of the longest: about the capture's duration, plus the calibration runs."""
        jobs = tuple(j for p in self.phases for j in p.jobs)
        busy = sum(max((j.planned_seconds for j in p.jobs), default=0.0) + FIO_GAP_S for p in self.phases)
        idle = sum(p.idle_s for p in self.phases[:-1])
        unrun = self._idle_at_end()
        return Estimate((f"# {len(self.phases)} fio runs, {duration_rough(busy)} of I/O and "
                         f"{duration_rough(idle)} idle",) + ((f"# {unrun}",) if unrun else ()),
                        jobs, busy + idle, busy + idle)


def step_line(test: TestRun, rnd: Round, label: str, index: int, count: int) -> str:
    """One progress line of a replayed step (or calibration run), on a terminal and off it (cron,
    nohup): what it delivered next to what its capture asked, measured as the report measures it."""
    ios = sum(w.read.ios + w.write.ios for w in rnd.workloads)
    seconds = max((w.runtime_ms for w in rnd.workloads), default=0) / 1000.0
    line = f"{label} ({index} of {count}): {ios / seconds if seconds > 0 else 0.0:,.0f} IOPS"
    word, _, number = label.partition(" ")
    asked = stored.number(test, f"step.{number}.kept_iops") if word == STEP and number.isdigit() else 0.0
    if asked > 0:
        line += f" (captured {asked:,.0f})"
    got = measured(test, rnd)
    if got is not None:
        line += f", QD {got.qd:,.2f}, mean response time {got.lat_mean_us:,.0f} µs"
    return line


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
        whole = overall(test)
        if whole is not None and whole.left_out:
            out.append(f"{test.key}: step{'s' if len(whole.left_out) > 1 else ''} "
                       f"{', '.join(map(str, whole.left_out))} left out of the replay's overall figures: the "
                       "capture lost events in them")
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
    """An exact replay's departures from its capture, in words (without the
    test's key): a replay that ran longer than the capture (beyond a tenth and
    a second), as fio waited for the drive with the capture's peak of I/Os
    outstanding; the steps whose timing was off (:func:`.exact.timing_verdicts`);
    flushes and discards of the iolog not seen at the block layer; the whole
    run's queue depth and response times against the capture's, and each
    step's (:func:`.exact.step_verdicts`)."""
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
                + (" (fio 3.33 refuses an iolog's trim actions: 'bad ddir')" if what == "discards" and not seen
                   else "")
                if seen is not None else "not measured at the block layer"))
    return out + _exact_whole(test, got) + exact.step_verdicts(test, RT_RATIO)


def _exact_whole(test: TestRun, got: Optional[Measured]) -> List[str]:
    """The exact replay's whole queue depth and response times against the capture's, where both
    are whole: not where the replay's trace or the capture lost events."""
    if got is None:
        return ["the exact replay's response time is fio's (the target has no block-layer counters here): it "
                "counts completed I/Os fio has not yet reaped while it keeps the captured timing, unlike the "
                "capture's"]
    if got.lost:
        return [f"the kernel lost {got.lost:,} trace events during the exact replay: its queue depth and "
                "response times are of the events recorded, not judged"]
    lost = touched_steps(test)
    if lost:
        return [f"the capture lost events in step{'s' if len(lost) > 1 else ''} {', '.join(map(str, lost))}: its "
                "whole queue depth and response times miss them, and are not judged against the exact replay's "
                "(the other steps are, each on its own)"]
    asked = captured_rt_us(test)
    if got.source == COUNTERS:
        out = source_verdicts([got], got.flushes > 0)
        if asked > 0 and not 1.0 / RT_RATIO <= got.lat_mean_us / asked <= RT_RATIO:
            out.append(f"the exact replay's mean response time was {got.lat_mean_us:,.0f} µs against the captured "
                       f"{asked:,.0f} µs ({COUNTERS}): this drive serves the capture's I/Os at another speed than "
                       "the captured device")
        return out
    off = figures_off(stored.number(test, "capture_qd"), got.qd, asked, got.lat_mean_us,
                      stored.number(test, "capture_lat_p99_us"), got.lat_p99_us, RT_RATIO)
    return [f"the exact replay's {off} ({BLOCK}): this drive serves the capture's I/Os at another speed "
            "than the captured device"] if off else []


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
                                 **{f"step.{st.index + 1}.qd": repr(st.qd) for st in cap.steps},
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
