"""A test type that sweeps thread count x queue depth (PTS-E DIRTH, CBW,
rwsw-dirth): its options, its plan, its points and its PTS rules.

A sweep instance runs one of two round structures (:mod:`.sweepstructure`)
over every TC x QD point, TC (thread count) being fio's ``numjobs`` and QD
(queue depth per thread) fio's ``iodepth``: OIO = TC x QD.  (One public
implementation swapped them.)  ``pts-2.0``: the workload dependent
preconditioning, then rounds of a pre-write at the highest OIO and the
whole sweep until the highest-OIO point is steady, then captures at the
max, mid and min points (:class:`~tkperf.kit.composite.SweepRounds`).
``steady-sweep``: rounds at the highest OIO until steady, then one sweep
whose points keep their response-time histograms
(:class:`~tkperf.kit.composite.SteadyThenSweep`).

Three points of the sweep are shown in detail
(:func:`~tkperf.pts.sweep.points.choose_points`): the max point, the
highest IOPS with a mean response time within the limit; the min point,
the lowest OIO; the mid point, the point under the limit whose IOPS are
nearest the middle of the two.

:func:`sweep_options`, :func:`sweep_plan` and :class:`SweepTest`
(headline, FOB, deviations, data check) take the workload and the names as
arguments: DIRTH sweeps RND at one block size and mix, CBW the JEDEC mix,
rwsw-dirth a capture's applied workload.
"""
from __future__ import annotations

import re
from functools import partial
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from tkperf.errors import UsageError
from tkperf.fio.jobs import FioJob
from tkperf.kit.base import OIO_SWEEP, Figure, Option, Plan, PtsRules, TestType, Tracking, View, stored_values
from tkperf.kit.base import in_range as _in_range
from tkperf.kit.composite import (
    SWEEP_ROUND,
    WDPC_SERIES,
    WDPC_STOP,
    SteadyThenSweep,
    SweepRounds,
    capture_round,
    steady_rounds,
    sweep_round,
)
from tkperf.kit.longrounds import (
    FillFloor,
    floor_bytes,
    floor_params,
    point_params,
    point_seconds,
    round_deviation,
    round_option,
    split_round,
)
from tkperf.kit.options import MAX_IODEPTH, MAX_NUMJOBS, MAX_RUNTIME, parse_duration
from tkperf.model import histogram
from tkperf.model.pts import enterprise_only
from tkperf.model.results import TestRun, Workload
from tkperf.pts.sweep import structure as st
from tkperf.pts.sweep.points import PREWRITE, Choice, Point, capture_name, choose_points, window_points
from tkperf.pts.sweep.settings import Captures

#: The TC and QD of the sweep as the PTS 2.0 implementation runs it: 32, 16,
#: 8, 6, 4, 2, 1 each (49 points); PTS-E 1.1 sweeps 1 to 32 in powers of two
#: (36 points), all of which the 2.0 grid holds.
DEFAULT_TC: Tuple[int, ...] = (1, 2, 4, 6, 8, 16, 32)
DEFAULT_QD: Tuple[int, ...] = (1, 2, 4, 6, 8, 16, 32)
GRID_1_1: Tuple[int, ...] = (1, 2, 4, 8, 16, 32)
DEFAULT_TIME_S = 60
#: The mean response time a point may have to be the max or mid point (µs).
DEFAULT_RT_LIMIT_US = 5000
#: The percentile quoted at the max point, when the sample supports it.
TAIL = "99.99"



# --- options ----------------------------------------------------------------------------

def _counts(limit: int, what: str):
    def parse(text: str, flag: str) -> Tuple[int, ...]:
        out = set()
        for part in (text or "").split(","):
            p = part.strip()
            if not p.isdigit() or not 1 <= int(p) <= limit:
                raise UsageError(f"{flag} {part.strip()!r} is not a {what} from 1 to {limit}")
            out.add(int(p))
        return tuple(sorted(out))
    return parse


parse_tcs = _counts(MAX_NUMJOBS, "thread count")
parse_qds = _counts(MAX_IODEPTH, "queue depth")


def counts_text(values: Sequence[int]) -> str:
    return ",".join(str(v) for v in values)


_RT_UNITS = {"": 1000.0, "ms": 1000.0, "us": 1.0, "µs": 1.0, "s": 1e6}


def parse_rt_limit(text: str, flag: str) -> int:
    """'5ms', '5' (ms), '500us', '2.5ms', '1s' -> whole microseconds."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|us|µs|s|)\s*", (text or "").lower())
    if not m:
        raise UsageError(f"{flag} {text!r} is not a response time like 5ms or 500us")
    us = round(float(m.group(1)) * _RT_UNITS[m.group(2)])
    if not 1 <= us <= 60_000_000:
        raise UsageError(f"{flag} {text!r} is out of range (1us..60s)")
    return us


def rt_text(us: int) -> str:
    """The stored form of a response-time limit: '5ms', '500us'."""
    return f"{us // 1000}ms" if us % 1000 == 0 else f"{us}us"


# --- the plan -----------------------------------------------------------------------------

def sweep_order(tcs: Sequence[int], qds: Sequence[int]) -> List[Tuple[int, int]]:
    """Every (TC, QD) as the PTS 2.0 implementation nests its loops: TC the
    outer loop and QD the inner one, both from high to low (TC32/QD32,
    TC32/QD16 ... TC32/QD1, TC16/QD32 ... TC1/QD1)."""
    return [(tc, qd) for tc in sorted(set(tcs), reverse=True) for qd in sorted(set(qds), reverse=True)]


#: ``make(tc, qd, runtime, name) -> FioJob``: the workload of a sweep at one TC x QD.
MakeJob = Callable[[int, int, int, str], FioJob]
def sweep_plan(key: str, make: MakeJob, base: str, tcs: Sequence[int], qds: Sequence[int], runtime: int,
               point_time: int, rt_limit: int, label: str, params: Dict[str, str], capacity: int = 0,
               captures: Optional[Captures] = None, write: Optional[MakeJob] = None, wbase: str = "") -> Plan:
    """One sweep instance, every TC x QD point (``<base>-tcN-qdM``,
    ``point_time`` s each) from high to low OIO, steady state judged on the
    IOPS at the highest OIO and, with ``capacity``, never before that many
    bytes of the test's own random writes followed the WIPC
    (:class:`~tkperf.kit.longrounds.FillFloor`: two drive fills).

    Without ``captures``, tkperf's shorter structure: rounds of ``make`` at
    the highest OIO (``ss-<base>-tcN-qdM``, ``runtime`` s each: the
    ``--<test>-round``) until steady, then one sweep whose points keep their
    histograms.  With ``captures``, the PTS 2.0 structure (:mod:`.sweepstructure`):
    the workload-dependent preconditioning (``wdpc-<wbase>-tcN-qdM``), then
    rounds of a pre-write (``pre-<wbase>-tcN-qdM``) and the whole sweep, then
    the captures; ``write`` makes the preconditioning and the pre-writes
    (100% writes; ``make`` when not given) and ``wbase`` names them.
    ``label`` names the tracking figure (``RND 4k 0/100``);
    ``params`` come first in the plan's params, the sweep's settings after them."""
    tcs, qds = tuple(sorted(set(tcs))), tuple(sorted(set(qds)))
    order = sweep_order(tcs, qds)
    top_tc, top_qd = order[0]
    points = tuple(make(tc, qd, point_time, f"{base}-tc{tc}-qd{qd}") for tc, qd in order)
    common = {**params, "numjobs": str(top_tc), "iodepth": str(top_qd), "tc": counts_text(tcs),
              "qd": counts_text(qds), "point_time": str(point_time), "rt_limit_us": str(rt_limit),
              **(floor_params(capacity) if capacity else {})}
    judge = FillFloor(floor_bytes(capacity)) if capacity else None
    tracking_label = f"{label} TC{top_tc}/QD{top_qd} IOPS"
    if captures is None:
        # each round: the rest of it, then its measured last minute (the tracking figure)
        steady = split_round(lambda rt, name: make(top_tc, top_qd, rt, name), runtime,
                             f"ss-{base}-tc{top_tc}-qd{top_qd}", f"ss-rest-{base}-tc{top_tc}-qd{top_qd}")
        return Plan(key=key, shape=SteadyThenSweep(steady, points),
                    tracking=Tracking(steady[-1].name, "iops", tracking_label),
                    params={**common, "runtime": str(runtime), "round_s": str(runtime), "structure": st.SHORT,
                            **point_params(point_seconds(runtime))},
                    histograms=True, judge=judge)
    writer, wname = write or make, wbase or base
    prewrite = writer(top_tc, top_qd, captures.prewrite_s, f"{PREWRITE}{wname}-tc{top_tc}-qd{top_qd}")
    pick = partial(capture_jobs, make, base, captures, float(rt_limit), writer, wname)
    wdpc = st.wdpc_jobs(writer, wname, (top_tc, top_qd), captures.wdpc_round_s)
    return Plan(key=key,
                shape=SweepRounds(prewrite, points, pick, 3.0 * (captures.capture_prewrite_s + captures.capture_s),
                                  wdpc),
                tracking=Tracking(points[0].name, "iops", tracking_label),
                params={**common, "structure": st.PTS20, "runtime": str(captures.prewrite_s),
                        "prewrite_s": str(captures.prewrite_s), "capture_prewrite_s": str(captures.capture_prewrite_s),
                        "capture_s": str(captures.capture_s), st.WDPC_ROUND_PARAM: str(captures.wdpc_round_s),
                        "wdpc_tracked_s": str(st.wdpc_tracked(wdpc).runtime),
                        **point_params(point_seconds(captures.wdpc_round_s))},
                histograms=True, judge=judge)


def capture_jobs(make: MakeJob, base: str, captures: Captures, limit_us: float, write: MakeJob, wbase: str,
                 test: TestRun) -> List[FioJob]:
    """The captures after the rounds of the PTS 2.0 structure: for the max,
    mid and min points chosen from the window means, a pre-write of 100%
    writes at the point's own TC and QD (as the PTS 2.0 implementation runs
    it), then the point itself (a point chosen twice is captured once)."""
    c = choose_points(sweep_points(test), limit_us)  # the window means, before any capture
    out: List[FioJob] = []
    seen = set()
    for role, p in c.named():
        if (p.tc, p.qd) in seen:
            continue
        seen.add((p.tc, p.qd))
        out.append(write(p.tc, p.qd, captures.capture_prewrite_s, f"{PREWRITE}{role}-{wbase}-tc{p.tc}-qd{p.qd}"))
        out.append(make(p.tc, p.qd, captures.capture_s, capture_name(role, f"{base}-tc{p.tc}-qd{p.qd}")))
    return out


def sweep_points(test: TestRun) -> List[Point]:
    """The measured points of a test's sweep, in the order they ran: under
    the PTS 2.0 structure their means over the window (:mod:`.sweeppoints`)."""
    if test.params.get("structure") == st.PTS20:
        steady = steady_rounds(test)
        return window_points([r for r in test.window_rounds() if r in steady], capture_round(test))
    rnd = sweep_round(test)
    if rnd is None:
        return []
    return [Point(w.numjobs, w.iodepth, w.iops, w.lat_mean_us, w) for w in rnd.workloads]


def rt_limit_us(test: TestRun) -> float:
    text = test.params.get("rt_limit_us", "")
    return float(text) if text.isdigit() else float(DEFAULT_RT_LIMIT_US)


def choice(test: TestRun) -> Optional[Choice]:
    """The three points of a test; None before its sweep."""
    points = sweep_points(test)
    return choose_points(points, rt_limit_us(test)) if points else None


def response_bins(w: Workload) -> histogram.Bins:
    """The response-time histogram of a workload, both directions together."""
    return histogram.merge(w.read.bins, w.write.bins)


def tail_us(w: Workload, p: str = TAIL) -> Optional[float]:
    """Percentile ``p`` of the response time when the sample supports it:
    from the histogram, else the larger of the directions' fio percentiles."""
    bins = response_bins(w)
    if bins:
        n = histogram.total(bins)
        return histogram.percentile_us(bins, float(p)) if histogram.supported(n, p) else None
    sides = [s for s in (w.read, w.write) if s.ios and histogram.supported(s.ios, p)]
    values = [v for v in (s.percentile(p) for s in sides) if v is not None]
    return max(values) if len(values) == len(sides) and values else None


# --- the test types ------------------------------------------------------------------------

def sweep_options(prefix: str, what: str) -> Tuple[Option, ...]:
    """The TC, QD, time-per-point and response-time-limit options of a sweep
    test: ``--<prefix>-tc``, ``--<prefix>-qd``, ``--<prefix>-time``,
    ``--<prefix>-rt-limit``, their help starting with ``what`` (DIRTH)."""
    flag = "--" + prefix.replace("_", "-")
    return (
        Option(f"{prefix}_tc", (f"{flag}-tc",), f"{what} thread counts TC (fio numjobs), e.g. 1,2,4 "
               "(default 1,2,4,6,8,16,32, the PTS 2.0 grid; 1,2 with --quick)", parse=parse_tcs, format=counts_text,
               default=DEFAULT_TC, quick=(1, 2), metavar="TCS"),
        Option(f"{prefix}_qd", (f"{flag}-qd",), f"{what} queue depths QD per thread (fio iodepth) "
               "(default 1,2,4,6,8,16,32; 1,4 with --quick)", parse=parse_qds, format=counts_text,
               default=DEFAULT_QD, quick=(1, 4), metavar="QDS"),
        Option(f"{prefix}_time", (f"{flag}-time",), f"{what} seconds per sweep point (default 60s; 1s with "
               "--quick)", parse=parse_duration, default=DEFAULT_TIME_S, quick=1,
               check=_in_range(1, MAX_RUNTIME, f"{flag}-time"), metavar="DURATION"),
        Option(f"{prefix}_rt_limit", (f"{flag}-rt-limit",), f"{what} mean response time limit of the max "
               "and mid points, e.g. 5ms or 500us (default 5ms)", parse=parse_rt_limit, format=rt_text,
               default=DEFAULT_RT_LIMIT_US, metavar="TIME"),
        round_option(prefix, what),
    ) + st.structure_options(prefix, what)


class SweepPts(PtsRules):
    """Sweep's SNIA PTS rules."""

    oio = OIO_SWEEP

    def deviations(self, kind: TestType, options: Mapping[str, str], revision) -> List[str]:
        v, what = stored_values(kind, options), kind.short
        out = enterprise_only(what, revision)
        tcs, qds = v[f"{kind.name}_tc"], v[f"{kind.name}_qd"]
        if revision.id.endswith("-2.0"):
            pts_grid = set(tcs) == set(DEFAULT_TC) and set(qds) == set(DEFAULT_QD)
            words = "the PTS 2.0 grid is TC and QD 32, 16, 8, 6, 4, 2, 1"
        else:  # 1.1's powers of two, or the 2.0 grid, which holds every one of them
            pts_grid = all(set(x) in (set(GRID_1_1), set(DEFAULT_TC)) for x in (tcs, qds))
            words = "the PTS sweeps TC and QD 1 to 32 in powers of two"
        if not pts_grid:
            out.append(f"{what} sweep narrowed to TC {counts_text(tcs)} x QD "
                       f"{counts_text(qds)} ({words})")
        point_s = int(v[f"{kind.name}_time"])
        if point_s != DEFAULT_TIME_S:
            out.append(f"{what} sweep points run {point_s} s each instead of {DEFAULT_TIME_S} s")
        limit = int(v[f"{kind.name}_rt_limit"])
        if limit != DEFAULT_RT_LIMIT_US:
            out.append(f"{what} max and mid points chosen under a mean response time of {rt_text(limit)} instead of "
                       f"{rt_text(DEFAULT_RT_LIMIT_US)} (the PTS 2.0 implementation's limit)")
        used, structure = st.structure_deviations(options, v, kind.name, what, revision.id)
        return out + structure + (round_deviation(v, kind.name, what) if used == st.SHORT else [])

    def result_deviations(self, kind: TestType, test: TestRun, options, revision, capacity: int) -> List[str]:
        """A PTS 2.0 structure whose workload dependent preconditioning did
        not reach steady state: the sweep rounds then start from a drive
        never brought to a random-write steady state."""
        if test.data.get(WDPC_STOP) != "max rounds":
            return []
        rounds = len(test.series[WDPC_SERIES]) if WDPC_SERIES in test.series else 0
        return [f"{test.key}: workload dependent preconditioning not steady within {rounds} rounds"]


class SweepView(View):
    """How Sweep results are shown."""

    shows_histograms = True  # the three points' histograms are in its own section

    def check_data(self, test: TestRun) -> None:
        text = test.data.get(SWEEP_ROUND)
        if text is None:
            return
        rnd = sweep_round(test)
        if rnd is None:
            raise ValueError(f"the sweep round {text!r} names no round of the test")
        seen = set()
        for w in rnd.workloads:
            if (w.numjobs, w.iodepth) in seen:
                raise ValueError(f"the sweep measures TC{w.numjobs}/QD{w.iodepth} twice")
            seen.add((w.numjobs, w.iodepth))


class SweepTest(TestType):
    """A PTS-E test run over TC x QD (DIRTH, CBW, rwsw-dirth) by
    :class:`~tkperf.kit.composite.SweepRounds` or
    :class:`~tkperf.kit.composite.SteadyThenSweep`: its options are
    :func:`sweep_options` of ``name``; its headline figures, FOB figures,
    deviations and data check are the same for any workload."""

    pts = SweepPts()

    def headline(self, test: TestRun) -> List[Figure]:
        c = choice(test)
        if c is None:
            return []
        top = c.max
        out = [Figure("max_iops", f"max IOPS ({top.label})", top.iops, "IOPS"),
               Figure("max_iops_lat_mean_us", "ART at max", top.lat_mean_us, "us", "lower", "{:,.1f}")]
        tail = tail_us(top.workload) if top.workload is not None else None
        if tail is not None:
            out.append(Figure("max_iops_lat_99_99_us", f"{TAIL}% at max", tail, "us", "lower", "{:,.1f}"))
        out.append(Figure("min_oio_lat_mean_us", f"ART at {c.min.label}", c.min.lat_mean_us, "us",
                          "lower", "{:,.1f}"))
        steady = test.window_average(test.tracking_workload, test.tracking_metric) if test.tracking_workload else None
        if steady is not None:  # the steady-state rounds at the highest OIO, as FOB is their round 1
            w = test.rounds[0].workload(test.tracking_workload)
            out.append(Figure("max_oio_iops", f"IOPS at TC{w.numjobs}/QD{w.iodepth}" if w else "IOPS at max OIO",
                              steady, "IOPS"))
        return out
