"""How a TC x QD sweep's results are shown (DIRTH, CBW, rwsw-dirth): per instance the SNIA header, the
max, mid and min points and the rule that chose them, IOPS and mean
response time by TC and QD (tables), IOPS vs OIO per TC, the demand-intensity
curve, the response-time histograms and confidence plot of the three
points with their "nines", every point of the sweep, and the steady state
that preceded the sweep; in a comparison, the figures of the three points
per run and the demand-intensity curves and max-point histograms overlaid.

The demand-intensity curve follows the SNIA plots (and Calypso's, the PTS
authors' reference tool): IOPS on x, mean response time on y, one line per
TC, so the "hockey stick" -- response time climbing while IOPS no longer
grow -- reads left to right.

Every part takes the test type and its header as arguments
(:func:`report_section`, :func:`compare_section`; ``sweep_report_section``
and ``sweep_compare_section`` in :mod:`tkperf.api`), so each sweep test
shows its sweep with the same blocks.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from tkperf.kit.composite import WDPC_SERIES, WDPC_STOP, steady_rounds, wdpc_verdict
from tkperf.kit.sections import CompareContext, ReportContext
from tkperf.model import histogram
from tkperf.model.results import RunResult, TestRun, mb
from tkperf.pts.sweep import structure as st
from tkperf.pts.sweep.header import limit_text, structure, wdpc_point_words
from tkperf.pts.sweep.plan import TAIL, SweepTest, choice, response_bins, sweep_points, tail_us
from tkperf.pts.sweep.points import RULE, Choice, Point
from tkperf.render.blocks import (
    Admonition,
    Chart,
    ConfidenceChart,
    Curve,
    Grid,
    Header,
    Heading,
    HistogramChart,
    Paragraph,
    Series,
    Table,
    XYChart,
    table,
)
from tkperf.report.context import chart_name, grid_table
from tkperf.report.header import open_test
from tkperf.report.qos import confidence_curve, histogram_curve, supported_marks
from tkperf.report.steady import Convergence, named_window_blocks, steady_sections
from tkperf.report.words import NA, fmt, test_title, tracking_label, verdict

NINES_SHOWN: Tuple[str, ...] = histogram.NINES
OIO_LABEL = "OIO (TC x QD)"
IOPS_LABEL = "IOPS"
ART_LABEL = "Mean response time (µs)"


# --- data for tables and charts --------------------------------------------------------------

def tc_grid(points: Sequence[Point], value, unit: str) -> Grid:
    """A figure of every point by TC (rows) and QD (columns)."""
    tcs = sorted({p.tc for p in points})
    qds = sorted({p.qd for p in points})
    by = {(p.tc, p.qd): p for p in points}
    values = tuple(tuple(value(by[(tc, qd)]) if (tc, qd) in by else None for qd in qds) for tc in tcs)
    return Grid(rows=tuple(f"TC {tc}" for tc in tcs), row_keys=tuple(float(tc) for tc in tcs),
                  cols=tuple(f"QD {qd}" for qd in qds), values=values, unit=unit, row_title="TC",
                  col_title="QD")


def per_tc(points: Sequence[Point], tc: Optional[int] = None) -> Dict[int, List[Point]]:
    """Points by TC (only ``tc`` when given), each line by rising QD."""
    out: Dict[int, List[Point]] = {}
    for p in sorted(points, key=lambda p: (p.tc, p.qd)):
        if tc is None or p.tc == tc:
            out.setdefault(p.tc, []).append(p)
    return out


def _ticks(values: Sequence[float]) -> Tuple[float, ...]:
    """Every OIO as a tick when few, else the powers of two they span."""
    vals = sorted(set(values))
    if len(vals) <= 12:
        return tuple(vals)
    top = int(np.ceil(np.log2(max(vals))))
    return tuple(float(2 ** k) for k in range(0, top + 1))


def iops_vs_oio(points: Sequence[Point], title: str) -> XYChart:
    curves = tuple(Curve(f"TC {tc}", np.array([float(p.oio) for p in ps]), np.array([p.iops for p in ps]))
                   for tc, ps in per_tc(points).items())
    return XYChart(curves, OIO_LABEL, IOPS_LABEL, title, xlog=2, xticks=_ticks([p.oio for p in points]),
                     legend_title="Thread count")


def _di_limit(limit_us: float, arts: Sequence[float]) -> Tuple[Tuple[str, float], ...]:
    """The limit as a line when it lies near the measured response times
    (far above them it would squash the curves flat)."""
    return ((f"limit {limit_text(limit_us)}", limit_us),) if arts and limit_us <= 2 * max(arts) else ()


def di_curve(points: Sequence[Point], title: str, limit_us: float) -> XYChart:
    curves = tuple(Curve(f"TC {tc}", np.array([p.iops for p in ps]), np.array([p.lat_mean_us for p in ps]))
                   for tc, ps in per_tc(points).items())
    return XYChart(curves, IOPS_LABEL, ART_LABEL, title,
                     hlines=_di_limit(limit_us, [p.lat_mean_us for p in points]),
                     legend_title="Thread count (each line: QD rising)")


def chosen(c: Choice) -> List[Tuple[str, Point]]:
    """The three points, each once: a point chosen twice is named 'max, mid'."""
    out: List[Tuple[str, Point]] = []
    for name, p in c.named():
        for i, (names, q) in enumerate(out):
            if q is p:
                out[i] = (f"{names}, {name}", q)
                break
        else:
            out.append((name, p))
    return out


def histogram_curves(c: Choice) -> List[Tuple[str, Point, histogram.Bins]]:
    """(name, point, bins) of each chosen point that kept its histogram."""
    out = []
    for name, p in chosen(c):
        bins = response_bins(p.workload) if p.workload is not None else ()
        if bins:
            out.append((name, p, bins))
    return out


def tail_cell(p: Point) -> str:
    """The point's 99.99% in µs; 'n/s' where its I/O count does not support it."""
    v = tail_us(p.workload) if p.workload is not None else None
    return fmt(v, "µs") if v is not None else ("n/s" if p.workload is not None else NA)


# --- the report ----------------------------------------------------------------------------------

def _max_us(p: Point) -> Optional[float]:
    """The point's MAX: the window mean of the rounds' maxima, else its workload's."""
    return p.lat_max_us if p.lat_max_us is not None else (p.workload.lat_max_us if p.workload is not None else None)


def _point_row(name: str, p: Point) -> List[str]:
    return [name, p.label, str(p.oio), fmt(p.iops), fmt(p.lat_mean_us, "µs"), tail_cell(p), fmt(_max_us(p), "µs")]


def points_blocks(test: TestRun, c: Choice) -> list:
    limit = limit_text(c.limit_us)
    out: list = [Heading("Max, mid and min points", 3),
                 Paragraph(RULE.format(limit=limit))]
    if not c.under_limit:
        out.append(Admonition("warning", (f"No point of the sweep had a mean response time within "
                                            f"{limit}: the max point is the point with the lowest mean "
                                            "response time.",)))
    if structure(test) == st.PTS20:  # IOPS and ART: window means; the tail and MAX: the capture's
        rows = [[n, p.label, str(p.oio), fmt(p.iops), fmt(p.lat_mean_us, "µs"), tail_cell(p),
                 fmt(p.workload.lat_max_us if p.workload is not None else None, "µs")] for n, p in chosen(c)]
        title = (f"The three points of the sweep (limit {limit}): IOPS and ART are means over the measurement "
                 f"window, {TAIL}% and MAX come from each point's capture; n/s where the I/O count does not "
                 "support it")
    else:
        rows = [_point_row(n, p) for n, p in chosen(c)]
        title = f"The three points of the sweep (limit {limit}); {TAIL}% n/s where the I/O count does not support it"
    out.append(table(["Point", "TC/QD", "OIO", "IOPS", "ART µs", f"{TAIL}% µs", "MAX µs"], rows,
                       title=title, widths=[12, 14, 10, 16, 16, 16, 16]))
    return out


def sweep_blocks(ctx: ReportContext, test: TestRun, points: Sequence[Point], c: Choice, name: str) -> list:
    iops = tc_grid(points, lambda p: p.iops, "IOPS")
    art = tc_grid(points, lambda p: p.lat_mean_us, "µs")
    drawn = _di_limit(c.limit_us, [p.lat_mean_us for p in points])
    dashed = f"; dashed: the {limit_text(c.limit_us)} limit" if drawn else ""
    return [Heading("IOPS and response time by TC and QD", 3, room_cm=10),
            grid_table(iops, f"{name}: IOPS by thread count (TC) and queue depth per thread (QD)", "TC \\ QD"),
            grid_table(art, f"{name}: mean response time (µs) by TC and QD", "TC \\ QD"),
            ctx.chart(test, "iops-vs-oio", iops_vs_oio(points, f"{name}: IOPS vs OIO per thread count"),
                      f"{name}: IOPS against the outstanding I/O (OIO = TC x QD), one line per TC."),
            ctx.chart(test, "demand-intensity", di_curve(points, f"{name}: demand intensity", c.limit_us),
                      f"{name}: demand-intensity curve, mean response time against IOPS, one line per TC "
                      f"with QD rising along it{dashed}.")]


def histogram_blocks(ctx: ReportContext, test: TestRun, c: Choice, name: str) -> list:
    found = histogram_curves(c)
    out: list = [Heading("Response-time histograms", 3, room_cm=10)]
    if not found:
        return out + [Paragraph("The points of this test kept no response-time histograms, so "
                                  "there is none to show; their fio percentiles are in the table of points.")]
    labels = [f"{n}: {p.label}" for n, p, _ in found]
    curves = [(lab, bins) for lab, (_, _, bins) in zip(labels, found)]
    most = max(histogram.total(bins) for _, bins in curves)
    out += [ctx.chart(test, "histograms",
                      HistogramChart(tuple(histogram_curve(lab, bins) for lab, bins in curves),
                                       f"{name}: response-time histograms at the max, mid and min points"),
                      f"{name}: share of each point's I/Os per response-time bin (fio's log-spaced bins), "
                      "at the max, mid and min points."),
            ctx.chart(test, "confidence",
                      ConfidenceChart(tuple(confidence_curve(lab, bins) for lab, bins in curves),
                                        f"{name}: response-time confidence at the max, mid and min points",
                                        marks=supported_marks(most)),
                      f"{name}: share of I/Os completed within each response time, on a nines scale; "
                      "dotted: the percentiles the largest sample supports.")]
    rows = []
    for lab, bins in curves:
        rows.append([lab, f"{histogram.total(bins):,}"] + [fmt(v, "µs") if ok else "n/s"
                                                           for _, v, ok in histogram.nines_rows(bins)])
    out.append(table(["Point", "I/Os"] + [f"{p}% µs" for p in NINES_SHOWN], rows,
                       title="Response-time percentiles from the histograms (n/s: not supported by the "
                             "I/O count)", widths=[22, 13, 13, 13, 13, 13, 13]))
    return out


def all_points_table(points: Sequence[Point], means: bool = False) -> Table:
    """Every point; with ``means`` (the PTS 2.0 structure) the figures are
    window means and the percentiles are left to the three points' tables."""
    rows = []
    for i, p in enumerate(points, 1):
        w = p.workload
        rate = p.mb_s if p.mb_s is not None else (mb(w.bw_bytes) if w is not None else None)
        rows.append([str(i), str(p.tc), str(p.qd), str(p.oio), fmt(p.iops), fmt(rate, "MB/s"),
                     fmt(p.lat_mean_us, "µs"), fmt(_max_us(p), "µs")] + ([] if means else [tail_cell(p)]))
    if means:
        return table(["#", "TC", "QD", "OIO", "IOPS", "MB/s", "ART µs", "MAX µs"], rows,
                       title="Every point of the sweep in the order it ran: means over the measurement window's "
                             "rounds (MAX: the mean of the rounds' maxima)", widths=[6, 7, 7, 8, 16, 14, 16, 18])
    return table(["#", "TC", "QD", "OIO", "IOPS", "MB/s", "ART µs", "MAX µs", f"{TAIL}% µs"], rows,
                   title="Every point of the sweep in the order it ran", widths=[6, 7, 7, 8, 14, 12, 14, 16, 16])


def convergence(test: TestRun, name: str) -> Convergence:
    rounds = steady_rounds(test)
    ys = []
    for r in rounds:
        w = r.workload(test.tracking_workload)
        ys.append(float("nan") if w is None else w.metric(test.tracking_metric))
    series = (Series(tracking_label(test), tuple(float(r.index) for r in rounds), tuple(ys)),)
    return Convergence(title=f"{name}: IOPS at the highest OIO per steady-state round", ylabel="IOPS",
                              series=series,
                              rounds=tuple(r.index for r in rounds))


#: ``more(ctx, test, points) -> blocks``: a test type's own blocks after the table of every point.
More = Callable[[ReportContext, TestRun, Sequence[Point]], list]


def report_section(ctx: ReportContext, tests: Sequence[TestRun], kind: SweepTest,
                   header_of: Callable[[ReportContext, TestRun], Header], more: Optional[More] = None) -> list:
    """The section of ``kind`` with ``header_of``'s header per instance
    (:func:`~tkperf.pts.sweep.header.sweep_header`, given the type's
    words) and ``more``'s blocks after the table of every point."""
    out: list = [Heading(kind.title)]
    for test in tests:
        title = test_title(test)
        opening, measured = open_test(test, title, header_of(ctx, test), level=2)
        out += opening
        if not measured:
            continue
        points = sweep_points(test)
        c = choice(test)
        if c is None:
            out.append(Paragraph("The sweep did not run: the test stopped during its steady-state rounds."))
        else:
            out += (points_blocks(test, c) + sweep_blocks(ctx, test, points, c, title)
                    + histogram_blocks(ctx, test, c, title))
            out += [Heading("Every point of the sweep", 3), all_points_table(points, structure(test) == st.PTS20)]
            out += more(ctx, test, points) if more is not None else []
        out += wdpc_blocks(ctx, test, 3)
        out += steady_sections(ctx, test, convergence(test, title), 3)
    return out


def wdpc_test(test: TestRun, window: int = 5) -> Optional[TestRun]:
    """The workload-dependent preconditioning of a PTS 2.0 DIRTH/CBW as a
    test of its own (its rounds a series, its verdict its steady state), to
    draw with the steady-state blocks; None without that phase."""
    s = test.series.get(WDPC_SERIES)
    if s is None or not len(s):
        return None
    p = test.params
    label = (f"preconditioning {p.get('prewrite_mix', '0/100')} TC{p.get('numjobs', '')}/QD{p.get('iodepth', '')} "
             f"IOPS (first {p.get('wdpc_tracked_s', '60')} s of each round)")
    phase = replace(test, rounds=[], series={WDPC_SERIES: s}, tracking_workload=WDPC_SERIES, tracking_metric="iops",
                    tracking_label=label, steady=None)
    return replace(phase, steady=wdpc_verdict(phase, window))


def wdpc_blocks(ctx: ReportContext, test: TestRun, level: int) -> list:
    """The preconditioning's rounds, window chart and verdict, before the sweep rounds' own."""
    phase = wdpc_test(test, ctx.window)
    if phase is None:
        return []
    rows = [[str(int(r)), fmt(float(v), "IOPS"), f"{float(w) / 1e9:,.2f}"]
            for r, v, w in zip(phase.series[WDPC_SERIES].column("round"), phase.series[WDPC_SERIES].column("iops"),
                                phase.series[WDPC_SERIES].column("io_bytes"))]
    stop = test.data.get(WDPC_STOP, "")
    said = (f"Workload dependent preconditioning before the sweep rounds: {len(rows)} rounds, "
            + ("steady (20/10)" if stop == "steady state" else "no steady state within the rounds allowed"
               if stop == "max rounds" else "not finished") + ". Each round is one fio process of 100% writes at "
            f"the highest OIO; the tracked figure is {wdpc_point_words(test.params)}; the sweep rounds follow "
            "without a pause.")
    return ([Heading("Workload dependent preconditioning", level, room_cm=10), Paragraph(said),
             table(["Round", "IOPS (tracked)", "GB written"], rows,
                     title="Workload dependent preconditioning rounds", widths=[20, 30, 30])]
            + named_window_blocks(ctx, phase, level + 1, "wdpc-window",
                                         "Workload dependent preconditioning: measurement window"))


# --- the comparison -------------------------------------------------------------------------------

def _instances(ctx: CompareContext, kind: SweepTest) -> List[str]:
    keys: List[str] = []
    for run in ctx.runs:
        keys += [t.key for t in run.tests_of(kind.name) if t.key not in keys]
    return keys


def _figure_rows(tests: Sequence[Optional[TestRun]]) -> List[List[str]]:
    choices = [choice(t) if t is not None else None for t in tests]

    def row(title: str, get) -> List[str]:
        return [title] + [NA if c is None else get(c) for c in choices]

    # What the figures are differs by structure: a reader sees it before the numbers (issue 34).
    source = ["Figures are"] + [NA if t is None else
                                ("means over the window's rounds, histograms from captures (pts-2.0)"
                                 if structure(t) == st.PTS20 else "one sweep after steady state (steady-sweep)")
                                for t in tests]
    return [source, row("Max point", lambda c: c.max.label + ("" if c.under_limit else " (none within the limit)")),
            row("Max IOPS", lambda c: fmt(c.max.iops)),
            row("ART at max (µs)", lambda c: fmt(c.max.lat_mean_us, "µs")),
            row(f"{TAIL}% at max (µs)", lambda c: tail_cell(c.max)),
            row("Mid point", lambda c: f"{c.mid.label}: {fmt(c.mid.iops)} IOPS"),
            row("Min point", lambda c: c.min.label),
            row("ART at min (µs)", lambda c: fmt(c.min.lat_mean_us, "µs")),
            row("Limit", lambda c: limit_text(c.limit_us)),
            ["Steady state"] + [NA if t is None else verdict(t, t.steady) for t in tests]]


def _curve_rows(tests: Sequence[Optional[TestRun]], labels: Sequence[str]) -> List[List[str]]:
    """Every point of each run's line at the TC of its max point."""
    rows = []
    for label, t in zip(labels, tests):
        c = choice(t) if t is not None else None
        if t is None or c is None:
            continue
        rows += [[label, p.label, fmt(p.iops), fmt(p.lat_mean_us, "µs")]
                 for p in per_tc(sweep_points(t), c.max.tc)[c.max.tc]]
    return rows


def compare_section(ctx: CompareContext, runs: Sequence[RunResult], labels: Sequence[str],
                    kind: SweepTest) -> list:
    """The comparison section of ``kind``."""
    keys = _instances(ctx, kind)
    if not keys:
        return []
    out: list = [Heading(kind.title)]
    for key in keys:
        tests = [next((t for t in r.tests_of(kind.name) if t.key == key), None) for r in ctx.runs]
        name = test_title(next(t for t in tests if t is not None))
        out += [Heading(name, 2, room_cm=10),
                ctx.runs_table("Figure", _figure_rows(tests), f"{name}: the three points per run")]
        di, hist = [], []
        for label, t in zip(ctx.labels, tests):
            c = choice(t) if t is not None else None
            if t is None or c is None:
                continue
            line = per_tc(sweep_points(t), c.max.tc)[c.max.tc]
            di.append(Curve(f"{label} (TC {c.max.tc})", np.array([p.iops for p in line]),
                              np.array([p.lat_mean_us for p in line])))
            bins = response_bins(c.max.workload) if c.max.workload is not None else ()
            if bins:
                hist.append(histogram_curve(f"{label} ({c.max.label})", bins))
        if di:
            out.append(table(["Run", "TC/QD", "IOPS", "ART µs"],
                               _curve_rows(tests, ctx.labels),
                               title=f"{name}: the points of the curves below", widths=[34, 22, 22, 22]))
            out.append(Chart(chart_name(f"{key}-demand-intensity"),
                               XYChart(tuple(di), IOPS_LABEL, ART_LABEL, f"{name}: demand intensity per run"),
                               f"{name}: each run's demand-intensity curve at the TC of its max point "
                               "(mean response time against IOPS, QD rising along the line)."))
        if hist:
            out.append(Chart(chart_name(f"{key}-max-histograms"),
                               HistogramChart(tuple(hist),
                                                f"{name}: response-time histograms at each run's max point"),
                               f"{name}: share of I/Os per response-time bin at each run's max point."))
    return out
