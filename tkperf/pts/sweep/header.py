"""The SNIA header of a TC x QD sweep test (DIRTH, CBW, rwsw-dirth) in the words of its round structure."""
from __future__ import annotations

from typing import Sequence, Tuple

from tkperf.durations import duration
from tkperf.kit.composite import WDPC_SERIES, capture_round, steady_rounds, sweep_round, wdpc_verdict
from tkperf.kit.longrounds import header_fields, last_minute, point_words
from tkperf.kit.sections import ReportContext
from tkperf.model.results import TestRun
from tkperf.pts.sweep import structure as st
from tkperf.pts.sweep.plan import rt_limit_us
from tkperf.render.blocks import Header
from tkperf.report.header import snia_header
from tkperf.report.words import NA, oio, plural, tracking_label, verdict


def limit_text(us: float) -> str:
    """'5 ms', '500 µs'."""
    return f"{us / 1000:g} ms" if us >= 1000 else f"{us:g} µs"


def structure(test: TestRun) -> str:
    """The round structure a test ran (:mod:`tkperf.pts.sweep.structure`)."""
    return st.PTS20 if test.params.get("structure") == st.PTS20 else st.SHORT


def _minutes(text: str) -> str:
    return duration(float(text), rough=True) if text.isdigit() else NA


def _mixed_tracking(test: TestRun) -> str:
    """What a mixed tracking point's figure is: read + write IOPS, where the
    PTS 2.0 implementation (Alan-ADATA/SSS-PTS-TEST, ``BlockStorageTestDirth.php``
    and ``...Cbw.php``) judges the point's write IOPS; '' for a write-only point."""
    w = next((r.workload(test.tracking_workload) for r in test.rounds
              if r.workload(test.tracking_workload) is not None), None)
    if test.type not in ("dirth", "cbw") or test.tracking_metric != "iops" or w is None or w.rwmixread == 0:
        return ""
    return ("; read + write IOPS, as the curve is drawn (the PTS 2.0 implementation judges the point's write "
            "IOPS; with the mix fixed, both move together)")


def _steady_fields(ctx: ReportContext, test: TestRun, tracked: str = "") -> Tuple[Tuple[str, str], ...]:
    """The rule's lines, the rounds run, the tracking figure (``tracked`` after
    it) and the verdict: the same under either structure."""
    return (*header_fields(test.params, test),
            ("Steady-state rounds", f"{len(steady_rounds(test))} of at most {ctx.run.options.get('max_rounds', NA)}"),
            ("Tracking", tracking_label(test) + tracked + _mixed_tracking(test)),
            ("Steady state", f"20/10 over {test.steady.window if test.steady else ctx.window} rounds: "
                             + verdict(test, test.steady)))


def sweep_header(ctx: ReportContext, test: TestRun, stimulus: str, wdpc: str,
                 extra: Sequence[Tuple[str, str]] = ()) -> Header:
    """The SNIA header of a steady-then-sweep test: its steady-state rounds,
    the sweep and the limit, then ``extra`` test parameters."""
    p = test.params
    grid = f"TC {p.get('tc', NA)} x QD {p.get('qd', NA)} (TC = fio numjobs, QD = fio iodepth)"
    top = oio(p.get("numjobs", ""), p.get("iodepth", ""))
    if structure(test) == st.PTS20:
        caps = capture_round(test)
        # results of tkperf before issue 34 pre-wrote the sweep's mix, captures at the highest OIO
        new = st.WDPC_ROUND_PARAM in p
        writes = " of 100% writes" if new else " of the sweep's workload"
        shape: Tuple[Tuple[str, str], ...] = (
            *_wdpc_fields(ctx, test, top),
            ("Rounds", f"each a pre-write{writes} at the highest OIO ({top}, "
                       f"{_minutes(p.get('prewrite_s', ''))}), then "
                       f"the sweep, {grid}: every point {p.get('point_time', NA)} s, from high to low OIO, one fio "
                       "process, no idle between them"),
            *_steady_fields(ctx, test, ", a point of every round's sweep"),
            ("Points", "the mean of each point over the measurement window's rounds (MAX: the mean of the "
                       "rounds' maxima)"),
            ("Captures", f"for each of the max, mid and min points a pre-write{writes} at "
                         + ("the point's own TC and QD" if new else "the highest OIO")
                         + f" ({_minutes(p.get('capture_prewrite_s', ''))}), then "
                         f"{_minutes(p.get('capture_s', ''))} at the point, one fio process"
                         + (f" (round {caps.index})" if caps is not None else ": not run")
                         + "; the histograms and percentiles of the three points come from them"),
        )
    else:
        sweep = sweep_round(test)
        points = len(sweep.workloads) if sweep is not None else 0
        shape = (
            ("Runtime", f"{p.get('runtime', NA)} s per steady-state round"),
            *_steady_fields(ctx, test),
            ("Sweep", f"{grid}: "
                      + (f"{plural(points, 'point')} of {p.get('point_time', NA)} s in round {sweep.index}"
                         if sweep is not None else "not run")
                      + ", from high to low OIO in one fio process, no idle between points"),
        )
    middle = shape + (
        ("Response-time limit", f"{limit_text(rt_limit_us(test))} mean, for the max and mid points"),
        ("Structure", st.WORDS[structure(test)]),
    ) + tuple(extra)
    return snia_header(ctx.run, test, stimulus, middle, wdpc=wdpc)


def _wdpc_fields(ctx: ReportContext, test: TestRun, top: str) -> Tuple[Tuple[str, str], ...]:
    """The header's line on the workload-dependent preconditioning (PTS 2.0 structure; none in older files)."""
    p = test.params
    if st.WDPC_ROUND_PARAM not in p:
        return ()
    v = wdpc_verdict(test, ctx.window)
    s = test.series.get(WDPC_SERIES)
    done = (f"{plural(len(s), 'round')}, " + ("steady" if v is not None and v.steady else "NOT steady")
            + (f" (rounds {v.first_round}-{v.last_round})" if v is not None and v.rounds else "")
            if s is not None and len(s) else "not run")
    what = (f"the JEDEC mix's transfer sizes and zones, writes only ({p.get('prewrite_mix', '0/100')})"
            if test.type == "cbw" else f"RND {p.get('prewrite_mix', '0/100')}")
    return (("Preconditioning", f"workload dependent, before the rounds: {what} at "
                                f"the highest OIO ({top}) in rounds of {_minutes(p.get(st.WDPC_ROUND_PARAM, ''))}, "
                                f"each round's point {wdpc_point_words(p)}, until 20/10 holds: {done}"),)


def wdpc_point_words(p) -> str:
    """What each preconditioning round's tracked point is: its last minute
    (:func:`~tkperf.kit.longrounds.point_words`), or in results from before,
    its first."""
    words = point_words(p, f"the IOPS of its first {p.get('wdpc_tracked_s', NA)} s, as the PTS 2.0 implementation "
                           "tracks it")
    if last_minute(p):  # a departure from the PTS 2.0 implementation here, for one definition: said
        words += " (the PTS 2.0 implementation tracks the first minute of these rounds)"
    return words


def stimulus_words(test: TestRun, long: str, short: str) -> Tuple[str, str]:
    """(stimulus, WDPC) of a sweep test's header in the words of its structure."""
    top = oio(test.params.get("numjobs", ""), test.params.get("iodepth", ""))
    if structure(test) == st.PTS20:
        first = ("the workload dependent preconditioning (100% writes at the highest OIO until steady), then "
                 if st.WDPC_ROUND_PARAM in test.params else "")
        return (f"{long}: {first}rounds of a pre-write and the TC x QD sweep, then captures at three points",
                f"WDPC: {first}rounds of a pre-write{' (100% writes)' if first else ''} at the highest OIO, {top}, "
                "and the sweep of "
                f"{short}, until the highest-OIO point is steady; the captures follow without a pause")
    return (f"{long}: steady state at the highest OIO, then the TC x QD sweep",
            f"WDPC: {short} at the highest OIO, {top}, until steady state; the sweep follows without a pause")
