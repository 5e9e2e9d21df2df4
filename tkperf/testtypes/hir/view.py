"""How host idle recovery results are shown: the SNIA header, the recovery
per idle setting (a table, the gain and the IOPS against the idle time),
IOPS against time over all settings and per setting with the baseline
level, the write periods and idle gaps as fio's log measured them, and the
steady state that set the baseline; in a comparison, the figures of the
runs side by side and their gains overlaid.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Set

import numpy as np

from tkperf import api
from tkperf.pts import (
    NA,
    Chart,
    Convergence,
    Header,
    Series,
    chart_name,
    duration,
    fmt,
    header_fields,
    last_minute,
    oio,
    open_test,
    plural,
    snia_header,
    steady_sections,
    test_title,
    tracking_label,
    verdict,
)
from tkperf.testtypes.hir import HostIdleRecoveryTest, iopslog
from tkperf.testtypes.hir.analysis import SettingResult, baseline, cycles, settings, steady_round_indices, write_s
from tkperf.testtypes.hir.shape import PERIOD_COLUMNS, PERIODS, RETURN, RETURN_COLUMNS, setting_rounds

IOPS_LABEL = "IOPS"
IDLE_LABEL = "Idle time after each write period (s)"
GAIN_LABEL = "Recovery gain over the baseline (%)"
TIME_LABEL = "Time"

DEFINITIONS = (
    "How the figures are found. Baseline: the steady-state IOPS of RND 4KiB W, averaged over the "
    "measurement window. A write period's IOPS are its I/Os over the set write time, from fio's IOPS "
    "log (log windows of {ms} ms, scaled to fio's own I/O count of the job). Write-period IOPS of an idle "
    "setting: the mean over its write periods. Recovery gain: that mean over the baseline, as a "
    "percentage above it. Host-visible IOPS: the write-period IOPS times write / (write + idle). Return "
    "level: the mean IOPS of the last quarter of the return's intervals. fio 3.33 begins its first think "
    "time after write + idle time, so each idle job opens with that much continuous writing; only the "
    "last write period's worth of it counts as the first write period.")


def _pct(value: Optional[float]) -> str:
    return NA if value is None or np.isnan(value) else f"{value:+,.1f}%"


def round1_words(test: api.TestRun) -> str:
    """What HIR's round 1 is, and why it is not shown as FOB (docs/method.rst, "HIR's round 1 is not FOB")."""
    rnd = test.params.get("round_s", test.params.get("runtime", ""))
    length = f" ({duration(float(rnd), rough=True)} here)" if rnd.isdigit() else ""
    if last_minute(test.params):
        return (f"the last minute of the first steady-state round{length}, not FOB: it follows the rest of a round "
                "of RND 4KiB W (30 min by default), which takes the drive through its write cliff (the FOB figure is "
                "WSAT's first 1-minute interval)")
    return (f"the mean of a whole steady-state round{length}, not FOB: a round of RND 4KiB W (30 min by default) "
            "blends the fresh-out-of-box level, the write cliff and the transition (the FOB figure is WSAT's first "
            "1-minute interval)")


def hir_header(ctx: api.ReportContext, test: api.TestRun) -> Header:
    p = test.params
    rounds = steady_round_indices(test)
    middle = (
        ("Runtime", f"{p.get('runtime', NA)} s per steady-state round"),
        *header_fields(p, test),
        ("Steady-state rounds", f"{len(rounds)} of at most {ctx.run.options.get('max_rounds', NA)}"),
        ("Tracking", tracking_label(test)),
        ("Round 1", round1_words(test)),
        ("Steady state", f"20/10 over {test.steady.window if test.steady else ctx.window} rounds: "
         + verdict(test, test.steady)),
        ("Idle times", f"{p.get('idle', NA).replace(',', ', ')} s, one setting each, in this order"),
        ("Write periods", f"{p.get('cycles', NA)} per idle time, {p.get('write', NA)} s each, each followed "
         "by the idle time (fio thinktime_iotime / thinktime, the queue drained before idling)"),
        ("Return to baseline", f"{p.get('return', NA)} s of continuous writes after each setting"),
        ("IOPS log", f"fio write_iops_log, log_avg_msec={p.get('log_avg_msec', NA)}"),
    )
    wdpc = (f"WDPC: RND 4KiB W, {oio(p.get('numjobs', ''), p.get('iodepth', ''))}, until steady state; "
            "the idle settings follow without a pause")
    # Results of tkperf before --hir-wipc always ran the WIPC (and say so by having one).
    no_wipc = ("none: HIR skips the WIPC, as both open PTS implementations do (--hir-wipc runs it)"
               if p.get("wipc") == "no" else "")
    return snia_header(ctx.run, test, "RND 4KiB 100% W: steady state, then write periods with idle "
                       "gaps per idle time, each setting followed by a return to baseline", middle,
                       without_wipc=no_wipc, wdpc=wdpc)


# --- data for the charts ---------------------------------------------------------------------

def period_times(s: SettingResult, write: float) -> np.ndarray:
    """The middle of each write period's counted part, seconds since the setting's start."""
    return s.start_s + s.length_s - np.minimum(s.length_s, write) / 2.0


def return_times(s: SettingResult) -> np.ndarray:
    """The middle of each return interval, seconds since the setting's start."""
    starts = np.r_[s.return_start_s, s.return_end_s[:-1]] if s.return_end_s.size else s.return_end_s
    return (starts + s.return_end_s) / 2.0


def setting_end(s: SettingResult) -> float:
    if s.return_end_s.size:
        return float(s.return_end_s[-1])
    return float(s.start_s[-1] + s.length_s[-1] + s.gap_s[-1]) if s.start_s.size else 0.0


def timeline(ss: Sequence[SettingResult], write: float, base: Optional[float], title: str) -> api.XYChart:
    """Every setting's write periods and return on one time axis."""
    curves, offset = [], 0.0
    for s in ss:
        x = np.r_[period_times(s, write)[s.counted], return_times(s)] + offset
        y = np.r_[s.iops[s.counted], s.return_iops]
        curves.append(api.Curve(f"idle {s.idle_s} s", x, y))
        offset += setting_end(s)
    hlines = ((f"baseline {fmt(base)} IOPS", base),) if base else ()
    return api.XYChart(tuple(curves), TIME_LABEL, IOPS_LABEL, title, time_axis=True, hlines=hlines,
                       legend_title="Idle setting (write periods, then the return to baseline)")


def setting_chart(s: SettingResult, write: float, base: Optional[float], title: str) -> api.XYChart:
    curves = (api.Curve(f"write periods ({write:g} s, then {s.idle_s} s idle)", period_times(s, write)[s.counted],
                        s.iops[s.counted]),
              api.Curve("return to baseline (continuous writes)", return_times(s), s.return_iops))
    hlines = ((f"baseline {fmt(base)} IOPS", base),) if base else ()
    vlines = (("return", s.return_start_s),) if s.return_end_s.size else ()
    return api.XYChart(curves, TIME_LABEL, IOPS_LABEL, title, time_axis=True, hlines=hlines, vlines=vlines)


def gain_chart(labels: Sequence[str], runs: Sequence[Sequence[SettingResult]], bases: Sequence[Optional[float]],
               title: str) -> api.XYChart:
    curves: List[api.Curve] = []
    idles: Set[float] = set()
    values: List[float] = []
    for label, ss, base in zip(labels, runs, bases):
        pairs = [(s.idle_s, gain) for s in ss if (gain := s.gain_pct(base)) is not None]
        if not pairs:
            continue
        curves.append(api.Curve(label, np.array([float(i) for i, _ in pairs]), np.array([g for _, g in pairs])))
        idles |= {i for i, _ in pairs}
        values += [g for _, g in pairs]
    low = 0.0 if all(v >= 0 for v in values) else None
    hlines = (("baseline", 0.0),) if low is None else ()
    return api.XYChart(tuple(curves), IDLE_LABEL, GAIN_LABEL, title, xticks=tuple(sorted(float(i) for i in idles)),
                       ylim=(low, None), hlines=hlines)


def iops_chart(ss: Sequence[SettingResult], write: float, base: Optional[float], title: str) -> api.XYChart:
    x = np.array([float(s.idle_s) for s in ss if s.mean_iops is not None])
    mean = np.array([s.mean_iops for s in ss if s.mean_iops is not None])
    host = np.array([s.host_iops(write) for s in ss if s.mean_iops is not None])
    hlines = ((f"baseline {fmt(base)} IOPS", base),) if base else ()
    return api.XYChart((api.Curve("write periods (mean)", x, mean), api.Curve("host-visible (write + idle)", x, host)),
                       IDLE_LABEL, IOPS_LABEL, title, xticks=tuple(float(v) for v in x), hlines=hlines)


# --- tables ------------------------------------------------------------------------------------

def recovery_table(ss: Sequence[SettingResult], write: float, planned: int, base: Optional[float]) -> api.Table:
    rows = []
    for s in ss:
        v = s.iops[s.counted]
        rows.append([f"{s.idle_s} s", f"{s.periods} of {planned}" if planned else str(s.periods),
                     fmt(s.mean_iops), fmt(float(v.min()) if v.size else None),
                     fmt(float(v.max()) if v.size else None), _pct(s.gain_pct(base)),
                     fmt(s.host_iops(write)), fmt(s.return_level)])
    return api.table(["Idle", "Write periods", "Mean IOPS", "Lowest", "Highest", "Gain", "Host-visible",
                      "Return level"], rows,
                     title=f"Write-period IOPS per idle setting against the baseline of {fmt(base)} IOPS",
                     widths=[9, 14, 13, 13, 13, 11, 14, 13])


def _span(values: np.ndarray, unit: str = "s") -> str:
    if not values.size:
        return NA
    lo, hi = float(values.min()), float(values.max())
    return f"{lo:.2f} {unit}" if abs(hi - lo) < 0.005 else f"{lo:.2f}-{hi:.2f} {unit}"


def measured_table(ss: Sequence[SettingResult]) -> api.Table:
    rows = []
    for s in ss:
        lead = s.length_s[s.kind == iopslog.LEAD_IN]
        rows.append([f"{s.idle_s} s", plural(len(s.start_s), "period"), _span(s.whole_lengths()),
                     _span(lead), _span(s.gap_s),
                     " / ".join(f"{x:.1%}" if not np.isnan(x) else NA for x in s.logged)])
    return api.table(["Idle", "Found", "Write periods", "Lead-in period", "Idle gaps", "Logged I/Os idle / return"],
                     rows, title="Write periods and idle gaps as fio's IOPS log shows them (lengths estimated "
                     "to a fraction of a log window); logged I/Os: the log's sum as a share of fio's "
                     "count", widths=[9, 13, 18, 18, 18, 24])


def setting_table(s: SettingResult, write: float) -> api.Table:
    v, t = s.iops[s.counted], period_times(s, write)[s.counted]
    rows = []
    if v.size:
        for what, i in (("first write period", 0), ("lowest write period", int(np.argmin(v))),
                        ("highest write period", int(np.argmax(v))), ("last write period", v.size - 1)):
            rows.append([what, f"{t[i]:,.1f}", fmt(float(v[i]))])
        rows.append(["mean of the write periods", "", fmt(float(v.mean()))])
    r, rt = s.return_iops, return_times(s)
    if r.size:
        rows += [["first return interval", f"{rt[0]:,.1f}", fmt(float(r[0]))],
                 ["last return interval", f"{rt[-1]:,.1f}", fmt(float(r[-1]))],
                 ["return level (last quarter)", "", fmt(s.return_level)]]
    return api.table(["Idle " + f"{s.idle_s} s", "At (s since the setting began)", "IOPS"], rows,
                     title=f"Idle {s.idle_s} s: write periods (at their middle) and the return",
                     widths=[40, 30, 30])


def convergence(test: api.TestRun) -> Convergence:
    wanted = set(steady_round_indices(test))
    rounds = [r for r in test.rounds if r.index in wanted]
    ys = tuple(w.metric(test.tracking_metric) if (w := r.workload(test.tracking_workload)) is not None
               else float("nan") for r in rounds)
    series = (Series(tracking_label(test), tuple(float(r.index) for r in rounds), ys),)
    return Convergence(title="HIR: RND 4KiB W IOPS per steady-state round", ylabel="IOPS", series=series,
                       rounds=tuple(r.index for r in rounds))


# --- the report ----------------------------------------------------------------------------------

def results_blocks(ctx: api.ReportContext, test: api.TestRun) -> list:
    ss, write, base = settings(test), write_s(test), baseline(test)
    out: list = [api.Heading("Recovery per idle setting", 3, room_cm=10),
                 api.Paragraph(DEFINITIONS.format(ms=test.params.get("log_avg_msec", NA)))]
    if not ss:
        return out + [api.Paragraph("No idle setting was measured: the test stopped during its steady-state "
                                    "rounds.")]
    out += [recovery_table(ss, write, cycles(test), base),
            ctx.chart(test, "gain", gain_chart(["gain"], [ss], [base], "HIR: recovery gain per idle setting"),
                      "HIR: the mean IOPS of the write periods of each idle setting, as a percentage above "
                      "the steady-state baseline."),
            ctx.chart(test, "iops-vs-idle", iops_chart(ss, write, base, "HIR: IOPS per idle setting"),
                      "HIR: the mean IOPS of the write periods, and what the host got over write and idle "
                      "time together, against the idle time; dashed: the baseline."),
            api.Heading("IOPS over time", 3, room_cm=10),
            ctx.chart(test, "timeline", timeline(ss, write, base, "HIR: IOPS over time, every idle setting"),
                      "HIR: IOPS of every write period and of every return interval, the settings one after "
                      "the other (idle gaps not drawn: they have no I/O); dashed: the baseline.")]
    for s in ss:
        out += [api.Heading(f"Idle {s.idle_s} s", 4, room_cm=10),
                ctx.chart(test, f"idle-{s.idle_s}s",
                          setting_chart(s, write, base, f"HIR: IOPS over time, idle {s.idle_s} s"),
                          f"HIR, idle {s.idle_s} s: IOPS of each {write:g} s write period at its middle, then of "
                          f"each {write:g} s interval of the return to baseline; dashed: the baseline."),
                setting_table(s, write)]
    out += [api.Heading("Write periods and idle gaps", 3),
            api.Paragraph("fio writes a line in its IOPS log only for a window in which I/O completed, and it "
                          "drains its queue before each think time, so an idle gap is a stretch without lines: "
                          "no I/O was issued or completed in it. Write periods are the runs of lines between "
                          "gaps of at least half the idle time."),
            measured_table(ss)]
    return out


def report_section(ctx: api.ReportContext, tests: Sequence[api.TestRun]) -> list:
    out: list = [api.Heading(HostIdleRecoveryTest.title)]
    for test in tests:
        opening, measured = open_test(test, test_title(test),
                                      hir_header(ctx, test), level=2)
        out += opening
        if not measured:
            continue
        out += results_blocks(ctx, test)
        out += steady_sections(ctx, test, convergence(test), 3)
    return out


# --- the comparison -------------------------------------------------------------------------------

def _figure_rows(tests: Sequence[Optional[api.TestRun]]) -> List[List[str]]:
    found = [(settings(t), baseline(t)) if t is not None else ([], None) for t in tests]
    idles: List[int] = []
    for ss, _ in found:
        idles += [s.idle_s for s in ss if s.idle_s not in idles]
    rows = [["Baseline (IOPS)"] + [fmt(base) for _, base in found]]
    for idle in idles:
        picked = [(next((s for s in ss if s.idle_s == idle), None), base) for ss, base in found]
        rows.append([f"Idle {idle} s: write periods (IOPS)"] + [fmt(s.mean_iops) if s else NA for s, _ in picked])
        rows.append([f"Idle {idle} s: gain"] + [_pct(s.gain_pct(base)) if s else NA for s, base in picked])
    rows.append(["Steady state"] + [NA if t is None else verdict(t, t.steady) for t in tests])
    return rows


def compare_section(ctx: api.CompareContext, runs: Sequence[api.RunResult], labels: Sequence[str]) -> list:
    tests = [next(iter(r.tests_of(HostIdleRecoveryTest.name)), None) for r in ctx.runs]
    if not any(t is not None for t in tests):
        return []
    out: list = [api.Heading(HostIdleRecoveryTest.title),
                 ctx.runs_table("Figure", _figure_rows(tests), "HIR: baseline and recovery per idle setting, per run")]
    present = [(label, t) for label, t in zip(ctx.labels, tests) if t is not None]
    spec = gain_chart([label for label, _ in present], [settings(t) for _, t in present],
                      [baseline(t) for _, t in present], "HIR: recovery gain per idle setting, per run")
    if spec.curves:
        out.append(Chart(chart_name("hir-gain"), spec,
                         "HIR: each run's write-period IOPS per idle setting as a percentage above its own "
                         "baseline (the gains are in the table above)."))
    return out


class HostIdleRecoveryView(api.View):
    """How HostIdleRecovery results are shown."""

    # its sections are this module's functions
    report_section = staticmethod(report_section)
    compare_section = staticmethod(compare_section)

    def check_data(self, test: api.TestRun) -> None:
        for name, columns in ((PERIODS, PERIOD_COLUMNS), (RETURN, RETURN_COLUMNS)):
            s = test.series.get(name)
            if s is not None and s.columns != columns:
                raise ValueError(f"series {name} has columns {' '.join(s.columns)}, not {' '.join(columns)}")
        unknown = set(test.series) - {PERIODS, RETURN}
        if unknown:
            raise ValueError(f"unknown series {', '.join(sorted(unknown))}")
        indices = {r.index for r in test.rounds}
        known = set()
        for k, idle, index in setting_rounds(test):
            if index not in indices:
                raise ValueError(f"idle setting {k} ({idle} s) names round {index}, which the test does not have")
            known.add(k)
        for name in (PERIODS, RETURN):
            s = test.series.get(name)
            if s is not None and len(s) and not set(int(v) for v in s.column("setting")) <= known:
                raise ValueError(f"series {name} has rows of an idle setting the test does not name")
