"""How cross-stimulus recovery results are shown: the SNIA header, the XSR
figures and how they were found, throughput against time across the three
phases (the transitions marked, each phase's level drawn), a zoom on each
transition with the settle band, and tables of the phases, the transitions
and the intervals; in a comparison, the figures side by side and every
run's throughput overlaid.

Everything is read as numpy columns (:mod:`.analysis`).
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
    shown_unit,
    snia_header,
    started_from_purge,
    stored,
)
from tkperf.testtypes import xsr
from tkperf.testtypes.xsr.analysis import LEVEL_PART, RND, SEQ1, SEQ2, SMOOTH, Analysis, PhaseFigures, analyse
from tkperf.testtypes.xsr.stream import COLUMNS, SERIES

MB_LABEL = "Throughput (MB/s)"
TIME_LABEL = "Time"
#: Rows of the interval table per phase: every interval up to this many, else this many bins.
BINS_PER_PHASE = 12

DEFINITIONS = (
    "How the figures are found. Throughput: the bytes written in an interval over fio's run time in it, "
    "in MB/s (10^6 bytes per second). Time: fio's run time since the first phase started (the phases "
    "follow one another with only fio's start between them). Level of a phase: the median throughput "
    "of its last quarter of intervals (rounded up). Smoothed throughput of an interval: the median of "
    "the {smooth} intervals centred on it (fewer at the phase's ends, never across phases), so that one "
    "or two stray intervals do not count. Settle time: the time from the start of a phase to the start "
    "of the first interval from which on the smoothed throughput of every interval of the phase stays "
    "within ±{band:g}% of the phase's level; 0 s when it does from the first interval. A phase whose "
    "smoothed throughput leaves the band within its last quarter never reached a level: it did not "
    "settle. The settle time after a transition is that of the phase it starts. Recovery: the second "
    "SEQ level as a percentage of the first.")


def _settle_text(p: PhaseFigures) -> str:
    if not p.complete:
        return "stopped early"
    s = p.settle
    if not s.settled:
        return "did not settle"
    return f"{duration(s.time_s or 0.0)} (interval {s.row + 1})" if s.row else "0 s (from its first interval)"


def xsr_header(ctx: api.ReportContext, test: api.TestRun, a: Optional[Analysis]) -> Header:
    p = test.params
    planned = ", ".join(f"{label} {duration(stored.number(test, key))}" for key, label in
                        (("seq1", "SEQ 1024KiB W"), ("rnd", "RND 8KiB W"), ("seq2", "SEQ 1024KiB W")))
    middle: List[Tuple[str, str]] = [
        ("Planned phases", planned + ", one right after the other"),
        ("Interval", f"{p.get('interval', NA)} s"),
        ("Level", f"median MB/s of the last 1/{LEVEL_PART} of each phase's intervals"),
        ("Settle band", f"±{p.get('settle_band_pct', NA)}% of the phase's level"),
    ]
    if a is not None:
        middle.append(("Intervals run", f"{a.n} ({duration(float(a.end_s[-1]))}): "
                       + ", ".join(f"{ph.short} {ph.rows} ({duration(ph.seconds)})" for ph in a.phases)))
    return snia_header(ctx.run, test, "SEQ 1024KiB W, then RND 8KiB W, then SEQ 1024KiB W; "
                       "100% write, one continuous job per phase", middle,
                       without_wipc="none: XSR starts from the purge, its first phase "
                       "preconditions the drive",
                       wdpc="none: the phases themselves")


def figures_table(kind: xsr.CrossStimulusRecoveryTest, test: api.TestRun, a: Analysis) -> api.Table:
    rows = [[f.label, f.text.format(f.value), shown_unit(f.unit), f.better] for f in kind.headline(test)]
    for ph in a.phases:
        if ph.complete and not ph.settle.settled and ph.index > 1:
            rows.append([f"{ph.short} settled after", "did not settle", "s", "lower"])
    first = a.phases[0]
    if started_from_purge(test):
        rows.append(["SEQ 1 first interval (FOB)", fmt(first.first_mb_s, "MB/s"), "MB/s", "higher"])
    return api.table(["Figure", "Value", "Unit", "Better"], rows, title="XSR figures", widths=[40, 25, 15, 20])


def phase_table(a: Analysis) -> api.Table:
    rows = []
    for ph in a.phases:
        rows.append([f"{ph.index}: {ph.label}", str(ph.rows), duration(ph.seconds), fmt(ph.first_mb_s, "MB/s"),
                     fmt(ph.level_mb_s, "MB/s"), fmt(ph.level_iops), f"{fmt(ph.min_mb_s, 'MB/s')} - "
                     f"{fmt(ph.max_mb_s, 'MB/s')}", _settle_text(ph)])
    return api.table(["Phase", "Intervals", "Time", "First MB/s", "Level MB/s", "Level IOPS", "Range MB/s",
                      "Settled after"], rows, title="Every phase", widths=[20, 9, 9, 11, 11, 11, 15, 14])


def transition_table(a: Analysis) -> Optional[api.Table]:
    rows = []
    for before, after in zip(a.phases, a.phases[1:]):
        share = (f"{after.first_mb_s / after.level_mb_s:.0%} of the new level"
                 if after.level_mb_s else NA)
        rows.append([f"{before.short} -> {after.short}", duration(after.begin_s), fmt(before.level_mb_s, "MB/s"),
                     f"{fmt(after.first_mb_s, 'MB/s')} ({share})", fmt(after.level_mb_s, "MB/s"),
                     _settle_text(after)])
    if not rows:
        return None
    return api.table(["Transition", "At", "Level before", "First interval after", "Level after", "Settled after"],
                     rows, title="The transitions", widths=[14, 12, 14, 26, 14, 20])


def _phase_curves(a: Analysis, x: np.ndarray) -> Tuple[api.Curve, ...]:
    return tuple(api.Curve(ph.label, x[ph.start:ph.stop], a.mb_s[ph.start:ph.stop]) for ph in a.phases)


def _level_curve(a: Analysis, x: np.ndarray) -> Optional[api.Curve]:
    """Each phase's level drawn over its level window (the intervals it is the
    median of), the segments apart; None before any phase has a level."""
    xs: List[float] = []
    ys: List[float] = []
    for ph in a.phases:
        if ph.level_mb_s is None:
            continue
        first = ph.stop - ph.window
        begin = float(x[first - 1]) if first > ph.start else ph.begin_s
        xs += [begin, float(x[ph.stop - 1]), np.nan]
        ys += [ph.level_mb_s, ph.level_mb_s, np.nan]
    if not xs:
        return None
    return api.Curve("level (median of each phase's last quarter)", np.array(xs[:-1]), np.array(ys[:-1]))


def overall_chart(ctx: api.ReportContext, test: api.TestRun, a: Analysis) -> list:
    marks = tuple((f"{ph.short} starts", ph.begin_s) for ph in a.phases[1:])
    curves = _phase_curves(a, a.end_s)
    level = _level_curve(a, a.end_s)
    spec = api.XYChart(curves + ((level,) if level is not None else ()), TIME_LABEL, MB_LABEL,
                       f"XSR: throughput per {a.interval_s} s interval across the transitions",
                       time_axis=True, vlines=marks)
    levels = "; ".join(f"{ph.short} level {fmt(ph.level_mb_s, 'MB/s')} MB/s" for ph in a.phases
                       if ph.level_mb_s is not None)
    return [api.Heading("Throughput across the transitions", 2, room_cm=10),
            ctx.chart(test, "throughput", spec,
                      f"Throughput of every {a.interval_s} s interval against time, a colour per phase; "
                      "the red lines mark the transitions; the level line of each phase spans the last "
                      "quarter of its intervals, whose median it is" + (f" ({levels})." if levels else "."))]


def transition_charts(ctx: api.ReportContext, test: api.TestRun, a: Analysis) -> list:
    """Per transition: the phase it starts against the time since the
    transition, with the phase's level, its band and the settle point."""
    out: list = []
    for before, after in zip(a.phases, a.phases[1:]):
        x = a.end_s[after.start:after.stop] - after.begin_s
        scale, unit = clock(float(x[-1]))
        lines: Tuple[Tuple[str, float], ...] = ()
        marks: List[Tuple[str, float]] = []
        top = after.max_mb_s
        if after.level_mb_s is not None:
            top = max(top, after.level_mb_s * (1 + after.settle.band_pct / 100))
            band = after.settle.band_pct
            # The label above the band: the data it ends in stay clear of it.
            lines = ((f"{after.short} level {after.level_mb_s:,.0f} ±{band:g}%", after.level_mb_s * (1 + band / 100)),
                     ("", after.level_mb_s), ("", after.level_mb_s * (1 - band / 100)))
        settled_s = after.settle.time_s
        if after.settle.settled and after.settle.row and settled_s is not None:
            marks.append((f"settled after {duration(settled_s)}", settled_s / scale))
        spec = api.XYChart((api.Curve(after.label, x / scale, a.mb_s[after.start:after.stop]),),
                           f"{TIME_LABEL} since the transition ({unit})", MB_LABEL,
                           f"XSR: {before.short} -> {after.short}, "
                           + ("settling into the band" if lines else "stopped early"), hlines=lines,
                           vlines=tuple(marks), ylim=(0.0, top * 1.12 if top > 0 else None))
        out.append(ctx.chart(test, f"transition-{after.kind}", spec,
                             f"{after.label} after {before.label}: throughput of every interval against the "
                             f"time since the transition; the dashed lines are its level and the band of "
                             f"±{after.settle.band_pct:g}% around it. {_settle_sentence(after)}"))
    if out:
        out.insert(0, api.Heading("The transitions", 2, room_cm=10))
    return out


def _settle_sentence(p: PhaseFigures) -> str:
    if not p.complete:
        return "The phase was stopped early: no level, no settle time."
    if not p.settle.settled:
        return "It did not settle: its smoothed throughput leaves the band within its last quarter."
    if not p.settle.row:
        return "It was within the band from its first interval (settle time 0 s)."
    return (f"It settled after {duration(p.settle.time_s or 0.0)}, at the start of interval {p.settle.row + 1}, "
            "and stayed within the band.")


def interval_table(a: Analysis) -> api.Table:
    """Every interval of a phase when it has at most :data:`BINS_PER_PHASE`,
    else that many bins of consecutive intervals."""
    rows = []
    for ph in a.phases:
        edges = np.linspace(ph.start, ph.stop, min(ph.rows, BINS_PER_PHASE) + 1).astype(int)
        for lo, hi in zip(edges[:-1], edges[1:]):
            if hi <= lo:
                continue
            chunk = a.mb_s[lo:hi]
            span = str(lo - ph.start + 1) if hi - lo == 1 else f"{lo - ph.start + 1}-{hi - ph.start}"
            rows.append([ph.short, span, duration(float(a.end_s[hi - 1] - ph.begin_s)),
                         fmt(float(chunk.mean()), "MB/s"), fmt(float(chunk.min()), "MB/s"),
                         fmt(float(chunk.max()), "MB/s"), fmt(float(a.iops[lo:hi].mean()))])
    return api.table(["Phase", "Intervals", "Until", "MB/s mean", "MB/s min", "MB/s max", "IOPS mean"], rows,
                     title=f"Throughput per interval (bins of consecutive intervals beyond {BINS_PER_PHASE} per "
                     "phase; Until: time since the phase started)",
                     widths=[10, 12, 14, 16, 16, 16, 16])


def report_section(ctx: api.ReportContext, tests: Sequence[api.TestRun]) -> list:
    kind = xsr.CrossStimulusRecoveryTest()
    out: list = []
    for test in tests:
        a = analyse(test)
        opening, measured = open_test(test, kind.title, xsr_header(ctx, test, a))
        out += opening
        if not measured or a is None:
            continue
        out += [api.Heading("XSR figures", 2), figures_table(kind, test, a),
                api.Paragraph(DEFINITIONS.format(band=a.band_pct, smooth=SMOOTH))]
        out += overall_chart(ctx, test, a)
        out += transition_charts(ctx, test, a)
        table = transition_table(a)
        out += [api.Heading("Phases and intervals", 2), phase_table(a)] + ([table] if table else [])
        out.append(interval_table(a))
    return out


def _runs(ctx: api.CompareContext) -> List[Tuple[str, Analysis]]:
    return ctx.first_of_each(xsr.CrossStimulusRecoveryTest.name, analyse)


def _broken(a: Analysis) -> Tuple[np.ndarray, np.ndarray]:
    """Time and MB/s with a nan between two phases, so that a line does not join them."""
    cuts = np.flatnonzero(np.diff(a.phase)) + 1
    return np.insert(a.end_s, cuts, np.nan), np.insert(a.mb_s, cuts, np.nan)


def compare_section(ctx: api.CompareContext, runs: Sequence[api.RunResult], labels: Sequence[str]) -> list:
    found = _runs(ctx)
    if not found:
        return []
    out = api.compare_section(xsr.CrossStimulusRecoveryTest(), ctx, runs, labels)
    # The transitions are marked when every run's come within an interval of the first run's.
    first_starts = np.array([ph.begin_s for ph in found[0][1].phases])
    same = all(len(a.phases) == first_starts.size and
               np.all(np.abs(np.array([ph.begin_s for ph in a.phases]) - first_starts) <= found[0][1].interval_s)
               for _, a in found)
    marks: Tuple[Tuple[str, float], ...] = ()
    if same:
        first = found[0][1]
        marks = tuple((f"{ph.short} starts", ph.begin_s) for ph in first.phases[1:])
    spec = api.XYChart(tuple(api.Curve(label, *_broken(a)) for label, a in found), TIME_LABEL, MB_LABEL,
                       "XSR: throughput per interval, every run", time_axis=True, vlines=marks)
    out.append(Chart("xsr-throughput.png", spec,
                     "Throughput of every interval of every run against time"
                     + ("; the red lines mark the transitions." if same and marks else
                        "; the runs' phases differ in length, so no transition is marked.")))
    rows = [[f"{label}: {ph.short}", fmt(ph.level_mb_s, "MB/s"), _settle_text(ph)]
            for label, a in found for ph in a.phases]
    out.append(api.table(["Run: phase", "Level MB/s", "Settled after"], rows, title="XSR phases of every run",
                         widths=[40, 25, 35]))
    return out


class CrossStimulusRecoveryView(api.View):
    """How CrossStimulusRecovery results are shown."""

    # its sections are this module's functions
    report_section = staticmethod(report_section)
    compare_section = staticmethod(compare_section)

    def summary(self, test: api.TestRun) -> Dict[str, api.SummaryValue]:
        a = analyse(test)
        value = a.level_of(SEQ1) if a is not None else None
        if value is None:
            return {}
        # Not TP's steady-state window: a high rank lets the TP test's figure win.
        source = (f"XSR test: level of the first SEQ 1024KiB W phase (median of its last quarter), "
                  f"TC{test.params.get('numjobs', '?')}/QD{test.params.get('iodepth', '?')}")
        return {"seq_write_mb_s": api.SummaryValue(value, source, rank=60, definition=(
            "XSR: level of the first SEQ 1024KiB W phase after a purge, no WIPC (not a steady-state window)"))}

    def check_data(self, test: api.TestRun) -> None:
        if test.rounds:
            raise ValueError("an XSR test keeps its intervals as a series, not as rounds")
        kinds = [test.data.get(f"phase.{i}.kind") for i in (1, 2, 3)]
        if any(k is not None for k in kinds) and kinds != [SEQ1, RND, SEQ2]:
            raise ValueError(f"the phases are {', '.join(str(k) for k in kinds)}, not {SEQ1}, {RND}, {SEQ2}")
        unknown = set(test.series) - {SERIES}
        if unknown:
            raise ValueError(f"unknown series {', '.join(sorted(unknown))}")
        s = test.series.get(SERIES)
        if s is None:
            return
        if s.columns != COLUMNS:
            raise ValueError(f"series {SERIES} has columns {' '.join(s.columns)}, not {' '.join(COLUMNS)}")
        phase = s.column("phase")
        if len(s) and (phase.min() < 1 or phase.max() > 3 or (phase[1:] < phase[:-1]).any()
                       or (phase != phase.round()).any()):
            raise ValueError(f"series {SERIES}: the phase column must number the phases 1, 2, 3 in order")
