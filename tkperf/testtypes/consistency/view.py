"""How performance consistency results are shown: the SNIA header, the
consistency figures and how they were found, the per-second IOPS scatter
(SanDisk's paper: an overall view on a log axis, a linear zoom on the steady part),
the average and maximum response time per 5 s block with AvgMaxRT_5sInt
(IBM 2012), and a table per phase; in a comparison, every run's IOPS and
5 s maxima overlaid and the figures side by side.

Everything is read as numpy columns (:mod:`.analysis`): a day of 1-second
intervals costs no Python work per interval.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from tkperf import api
from tkperf.pts import (
    NA,
    Chart,
    Header,
    clock,
    duration,
    fmt,
    open_test,
    plural,
    snia_header,
    stored,
)
from tkperf.pts.stream.phases import COLUMNS, MAX_COLUMNS, MAX_SERIES, SERIES
from tkperf.testtypes import consistency as cons
from tkperf.testtypes.consistency import figures as fg
from tkperf.testtypes.consistency.analysis import (
    KIND_TITLES,
    MIXED,
    PRECONDITION,
    STIMULUS,
    WRITE,
    Analysis,
    analyse,
    cliff_words,
)

IOPS_LABEL = "IOPS"
LAT_LABEL = "Response time (µs)"
TIME_LABEL = "Time"
#: Phase kinds in the order curves and tables show them.
KINDS = (STIMULUS, PRECONDITION, WRITE, MIXED)

DEFINITIONS = (
    "How the figures are found. Write cliff: the rolling median of the IOPS over about 2% of the "
    "intervals (5 to 61, centred) is compared with the midpoint between the initial level (the median "
    "of the first window) and the final level (the median of the last quarter); a cliff is reported "
    f"only when the final level is at least {fg.CLIFF_DROP:.0%} below the initial one, at the end of "
    "the first interval whose rolling median is below the midpoint. Steady part: {steady}. Spread: "
    "the 99th minus the 1st percentile of the steady part's IOPS per interval, as a share of their "
    "median. Response times are fio's total latency (submission to completion): the mean per "
    "interval from fio's status reports, the maximum per interval from fio's latency log "
    "(log_max_value=1). 5 s blocks: consecutive intervals of one phase; AvgMaxRT_5sInt is the mean "
    "of the blocks' maxima; max/avg is the largest response time over the mean of {measured}.")


def _steady_definition(a: Analysis) -> str:
    if a.workload == "jedec":
        return ("the 40/60 phases, the JEDEC enterprise workload proper; the write-only test phases have "
                "figures of their own")
    return "the second half of the run, or from one rolling window after the write cliff when that is later"


def _measured_words(a: Analysis) -> str:
    return "the 40/60 phases" if a.workload == "jedec" else "the whole stimulus"


def _stimulus(test: api.TestRun) -> str:
    p = test.params
    if p.get("workload") == "jedec":
        return (f"JEDEC enterprise mix (bssplit {p.get('bssplit', NA)}), random_distribution="
                f"{p.get('random_distribution', NA)}, incompressible; write-only preconditioning, then write-only and "
                "40/60 R/W phases")
    return "RND 4KiB 100% W, one continuous job"


def _phases_text(a: Analysis) -> str:
    return ", ".join(f"{p.label} {duration(float(a.end_s[p.stop - 1] - (a.end_s[p.start - 1] if p.start else 0.0)))}"
                     for p in a.phases) or NA


def consistency_header(ctx: api.ReportContext, test: api.TestRun, a: Optional[Analysis]) -> Header:
    p = test.params
    jedec = p.get("workload") == "jedec"
    middle: List[Tuple[str, str]] = [
        ("Workload", "jedec (IBM 2012, experiment #1, shortened)" if jedec else "rnd4k (SanDisk)"),
        ("Interval", f"{p.get('interval', NA)} s; maximum response time from fio's latency log "
         f"({p.get('latency_log', NA)})"),
    ]
    if jedec:
        middle.append(("Planned phases", f"preconditioning {duration(stored.number(test, 'precondition'))}, then "
                                         f"{p.get('cycles', '?')} x (100% W {duration(stored.number(test, 'write'))}"
                                         f" + 40/60 {duration(stored.number(test, 'mixed'))})"))
    else:
        middle.append(("Planned duration", duration(stored.number(test, "duration"))))
    if a is not None:
        middle += [("Intervals run", f"{a.n} ({duration(float(a.end_s[-1]))}): {_phases_text(a)}"),
                   ("Steady part", _steady_definition(a) if jedec else f"{a.steady_label} ({_steady_definition(a)})"),
                   ("Write cliff", cliff_words(a))]
    without = "none: the JEDEC workload preconditions the drive itself" if jedec else ""
    wdpc = (f"JEDEC mix 100% W for {duration(stored.number(test, 'precondition'))} (the preconditioning phase)"
            if jedec else "none: the stimulus starts right after the WIPC")
    return snia_header(ctx.run, test, _stimulus(test), middle, without_wipc=without, wdpc=wdpc)


def _zero(a: Analysis, mask: np.ndarray) -> int:
    return int(np.count_nonzero(a.iops[mask] <= 0))


def figures_table(a: Analysis, test: api.TestRun) -> api.Table:
    sp = a.spread()
    m = a.measured
    mean, peak, avg_max = a.lat_mean(m), a.lat_max(m), a.avg_max_5s(m)
    steady = a.steady_label
    rows = [
        ["Intervals", f"{a.n} of {a.interval_s} s", "", ""],
        ["IOPS, first interval", fmt(float(a.iops[0])), "IOPS", "after the purge" if a.workload == "jedec"
         else "after the WIPC"],
        ["IOPS, steady median", fmt(sp.median if sp else None), "IOPS", steady],
        ["IOPS, 1st / 99th percentile", f"{fmt(sp.low if sp else None)} / {fmt(sp.high if sp else None)}",
         "IOPS", steady],
        ["IOPS spread (p99 - p1) / median", fmt(sp.pct if sp else None), "%", steady],
        ["Intervals without a completed I/O", str(_zero(a, np.ones(a.n, dtype=bool))), "", "the whole run"],
        ["Response time, mean", fmt(mean, "µs"), "µs", _measured_words(a)],
        ["Response time, maximum", fmt(peak, "µs"), "µs", _measured_words(a)],
        ["Max / avg response time", fmt(peak / mean if peak is not None and mean else None), "",
         _measured_words(a)],
        ["AvgMaxRT_5sInt", fmt(avg_max, "µs"), "µs", f"mean of {plural(len(a.blocks_of(m)), 'block')}' maxima"],
        ["Write cliff", fmt(a.cliff.time_s, "s") if a.cliff.found else "none", "s" if a.cliff.found else "",
         "in the preconditioning" if a.workload == "jedec" else "since the stimulus started"],
    ]
    if a.maxima_rows < a.n:
        rows.append(["Maximum response times", f"{a.maxima_rows} of {a.n} intervals", "",
                     "fio's latency log of a phase was not read (stopped run?)"])
    return api.table(["Figure", "Value", "Unit", "Over"], rows, title="Consistency figures", widths=[34, 22, 10, 34])


def phase_table(a: Analysis) -> api.Table:
    rows = []
    for p in a.phases:
        mask = a.phase == p.index
        sp = a.spread(mask)
        ios = float(a.ios[mask].sum())
        reads = float(a.read_ios[mask].sum())
        rows.append([p.label, str(p.rows), fmt(sp.median if sp else None), fmt(sp.pct if sp else None),
                     f"{reads / ios:.0%}" if ios else NA, fmt(a.lat_mean(mask), "µs"),
                     fmt(a.lat_max(mask), "µs"), fmt(a.avg_max_5s(mask), "µs")])
    return api.table(["Phase", "Intervals", "Median IOPS", "Spread %", "Reads", "Lat AVE µs", "Lat MAX µs",
                      "AvgMaxRT 5s µs"], rows, title="Every phase", widths=[16, 11, 13, 10, 9, 13, 14, 14])


def _kind_curves(a: Analysis, x: np.ndarray, y: np.ndarray, mask: Optional[np.ndarray] = None) -> Tuple[api.Curve, ...]:
    """One curve per phase kind (one curve for rnd4k)."""
    out = []
    for kind in KINDS:
        rows = a.kind_mask(kind) & (mask if mask is not None else True)
        if np.any(rows):
            out.append(api.Curve(KIND_TITLES[kind], x[rows], y[rows]))
    return tuple(out)


def _cliff_line(a: Analysis) -> Tuple[Tuple[str, float], ...]:
    """The write cliff as a vertical line on the overall view (none without one)."""
    if not a.cliff.found:
        return ()
    row = a.cliff_start + a.cliff.index
    return (("write cliff", float(a.end_s[row])),) if 0 <= row < a.n else ()


def _steady_lines(sp: Optional[fg.Spread]) -> Tuple[Tuple[str, float], ...]:
    if sp is None:
        return ()
    return ((f"p99 {sp.high:,.0f}", sp.high), (f"median {sp.median:,.0f}", sp.median), (f"p1 {sp.low:,.0f}", sp.low))


def iops_charts(ctx: api.ReportContext, test: api.TestRun, a: Analysis) -> list:
    every = f"one dot per {a.interval_s} s interval" if a.interval_s > 1 else "one dot per second"
    zero = _zero(a, np.ones(a.n, dtype=bool))
    overall = api.XYChart(_kind_curves(a, a.end_s, a.iops), TIME_LABEL, IOPS_LABEL,
                          f"Consistency: IOPS per interval, overall view ({every}, log scale)",
                          ylog=10, dots=True, time_axis=True, vlines=_cliff_line(a))
    out = [api.Heading("IOPS per interval", 2, room_cm=10),
           ctx.chart(test, "iops-overall", overall,
                     f"IOPS of every interval against time, {every}, on a log axis"
                     + (f"; {plural(zero, 'interval')} without a completed I/O cannot be shown on it" if zero
                        else "") + "."
                     + (f" Write cliff at {a.cliff.time_s:,.0f} s." if a.cliff.found else ""))]
    zooms = [(STIMULUS, a.steady, "the steady part")] if a.workload != "jedec" else \
        [(MIXED, a.kind_mask(MIXED), "the 40/60 phases"), (WRITE, a.kind_mask(WRITE), "the 100% W test phases")]
    for kind, mask, words in zooms:
        if not np.any(mask):
            continue
        sp = a.spread(mask)
        # Not a time axis: that one starts at 0, and the zoom is on the end of the run.
        scale, unit = clock(float(a.end_s[-1]))
        spec = api.XYChart((api.Curve(KIND_TITLES[kind], a.end_s[mask] / scale, a.iops[mask]),),
                           f"{TIME_LABEL} ({unit})",
                           IOPS_LABEL, f"Consistency: IOPS per interval, zoom on {words} (linear)", dots=True,
                           ylim=(None, None), hlines=_steady_lines(sp))
        out.append(ctx.chart(test, f"iops-zoom-{kind}", spec,
                             f"IOPS of every interval of {words} on a linear axis, with the median and the 1st "
                             f"and 99th percentiles (spread {fmt(sp.pct if sp else None)}% of the median)."))
    return out


def _broken(x: np.ndarray, y: np.ndarray, phase: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """x and y with a nan between two phases, so that a line does not join them."""
    cuts = np.flatnonzero(np.diff(phase)) + 1
    return np.insert(x.astype(float), cuts, np.nan), np.insert(y.astype(float), cuts, np.nan)


def latency_charts(ctx: api.ReportContext, test: api.TestRun, a: Analysis) -> list:
    """Average and maximum response time per 5 s block: one chart (rnd4k),
    or one per phase kind (jedec: 40/60, 100% W, preconditioning)."""
    bl = a.blocks
    if not len(bl):
        return []
    jedec = a.workload == "jedec"
    groups = ((MIXED, "the 40/60 phases"), (WRITE, "the 100% W test phases"),
              (PRECONDITION, "the preconditioning")) if jedec else ((STIMULUS, "the whole stimulus"),)
    scale, unit = clock(float(a.end_s[-1])) if jedec else (1.0, "")
    out: list = [api.Heading(f"Response time per {fg.BLOCK_S} s", 2, room_cm=10)]
    for kind, words in groups:
        rows = np.isin(bl.phase, [p.index for p in a.phases if p.kind == kind])
        if not np.any(rows):
            continue
        part = bl.where(rows)
        curves = [api.Curve("average", *_broken(part.end_s / scale, part.lat_mean_us, part.phase))]
        if part.lat_max_us is not None:
            curves.append(api.Curve("maximum", *_broken(part.end_s / scale, part.lat_max_us, part.phase)))
        known = part.lat_max_us[~np.isnan(part.lat_max_us)] if part.lat_max_us is not None else np.zeros(0)
        avg_max = float(known.mean()) if known.size else None
        lines = ((f"AvgMaxRT_5sInt {avg_max:,.0f} µs", avg_max),) if avg_max is not None else ()
        title = f"Consistency: response time per {fg.BLOCK_S} s" + (f", {KIND_TITLES[kind]}" if jedec else "")
        # jedec: not a time axis (it starts at 0), the phases of a kind sit later in the run
        spec = api.XYChart(tuple(curves), f"{TIME_LABEL} ({unit})" if jedec else TIME_LABEL, LAT_LABEL, title,
                           ylog=10, time_axis=not jedec, ylim=(None, None), hlines=lines)
        out.append(ctx.chart(test, f"latency-5s-{kind}", spec,
                             f"Mean (by I/O count) and maximum response time of every {fg.BLOCK_S} s block of "
                             f"{words}, log axis; the line is AvgMaxRT_5sInt, the mean of the maxima."
                             + ("" if part.lat_max_us is not None else
                                " The maxima are missing: fio's latency log was not read.")))
    return out


def report_section(ctx: api.ReportContext, tests: Sequence[api.TestRun]) -> list:
    out: list = []
    for test in tests:
        a = analyse(test)
        opening, measured = open_test(test, cons.ConsistencyTest.title, consistency_header(ctx, test, a))
        out += opening
        if not measured or a is None:
            continue
        out += [api.Heading("Consistency figures", 2), figures_table(a, test),
                api.Paragraph(DEFINITIONS.format(steady=_steady_definition(a), measured=_measured_words(a)))]
        out += iops_charts(ctx, test, a)
        out += latency_charts(ctx, test, a)
        out += [api.Heading("Phases", 2), phase_table(a)]
    return out


def _runs(ctx: api.CompareContext) -> List[Tuple[str, Analysis]]:
    return ctx.first_of_each(cons.ConsistencyTest.name, analyse)


def compare_section(ctx: api.CompareContext, runs: Sequence[api.RunResult], labels: Sequence[str]) -> list:
    found = _runs(ctx)
    if not found:
        return []
    out = api.compare_section(cons.ConsistencyTest(), ctx, runs, labels)
    iops = api.XYChart(tuple(api.Curve(label, a.end_s, a.iops) for label, a in found), TIME_LABEL, IOPS_LABEL,
                       "Consistency: IOPS per interval, every run (log scale)", ylog=10, dots=True, time_axis=True)
    out.append(Chart("consistency-iops.png", iops, "IOPS of every interval of every run, on a log axis; "
                     "jedec runs include their preconditioning."))
    maxima = [(label, a.blocks.end_s, worst) for label, a in found
              if (worst := a.blocks.lat_max_us) is not None and len(a.blocks)]
    if maxima:
        lat = api.XYChart(tuple(api.Curve(label, end_s, worst) for label, end_s, worst in maxima),
                          TIME_LABEL, LAT_LABEL, f"Consistency: maximum response time per {fg.BLOCK_S} s, every run",
                          ylog=10, time_axis=True)
        out.append(Chart("consistency-latency-max-5s.png", lat,
                         f"The largest response time of every {fg.BLOCK_S} s block of every run, on a log axis."))
    return out


class ConsistencyView(api.View):
    """How Consistency results are shown."""

    # its sections are this module's functions
    report_section = staticmethod(report_section)
    compare_section = staticmethod(compare_section)

    def summary(self, test: api.TestRun) -> Dict[str, api.SummaryValue]:
        a = analyse(test)
        if a is None or a.workload != "rnd4k":
            return {}
        sp = a.spread()
        if sp is None:
            return {}
        # Not the PTS's 20/10 steady state: a lower rank lets the IOPS test's figure win.
        source = (f"consistency test: median of {a.steady_label}, TC{test.params.get('numjobs', '?')}/"
                  f"QD{test.params.get('iodepth', '?')}")
        return {"rnd_4k_write_iops": api.SummaryValue(sp.median, source, rank=50, definition=(
            "consistency test: median IOPS of its steady part (not the PTS 20/10 window)"))}

    def check_data(self, test: api.TestRun) -> None:
        if test.rounds:
            raise ValueError("a consistency test keeps its intervals as series, not as rounds")
        s = test.series.get(SERIES)
        if s is not None and s.columns != COLUMNS:
            raise ValueError(f"series {SERIES} has columns {' '.join(s.columns)}, not {' '.join(COLUMNS)}")
        m = test.series.get(MAX_SERIES)
        if m is not None:
            if m.columns != MAX_COLUMNS:
                raise ValueError(f"series {MAX_SERIES} has columns {' '.join(m.columns)}, "
                                 f"not {' '.join(MAX_COLUMNS)}")
            if s is None or len(m) > len(s):
                raise ValueError(f"series {MAX_SERIES} has more rows than series {SERIES}")
        unknown = set(test.series) - {SERIES, MAX_SERIES}
        if unknown:
            raise ValueError(f"unknown series {', '.join(sorted(unknown))}")
