"""How queue-depth scaling is shown: the SNIA header, the headline figures,
the phases in the order run, then per workload a table of its points (QD,
IOPS, MB/s, average and 99.9th-percentile response time), IOPS (MB/s for
SEQ) against queue depth and the response times against queue depth; in a
comparison, every run's curve overlaid per workload, with its table.

A 99.9th percentile is shown only where the point's I/O count supports it
(at least one I/O beyond it: 1,000 I/Os), as in tkperf's QoS tables.
"""
from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence

import numpy as np

from tkperf import api
from tkperf.pts import NA, Chart, Header, duration, fmt, histogram, mb, qos_blocks, snia_header, stored, test_sections
from tkperf.testtypes.qd import (
    BY_WORD,
    FILL_JOB,
    PRECONDITION_JOB,
    PRECONDITION_QD,
    WORKLOADS,
    Point,
    QdWorkload,
    QueueDepthTest,
    points,
    swept,
)

QD_LABEL = "Queue depth (TC 1, QD = fio iodepth)"
LAT_LABEL = "Response time (µs)"
#: Above this ratio of the highest to the lowest response time, the axis is logarithmic.
LOG_SPREAD = 20.0
NOT_SUPPORTED = "n/s"


def _kind() -> QueueDepthTest:
    return QueueDepthTest()


def _perf_label(w: QdWorkload) -> str:
    return "MB/s (decimal)" if w.sequential else "IOPS"


def chosen(test: api.TestRun) -> List[QdWorkload]:
    """The workloads the test was asked to sweep (its params), else those measured."""
    words = [x for x in test.params.get("workloads", "").split(",") if x in BY_WORD]
    return [BY_WORD[x] for x in words] or swept(test)


def qd_header(ctx: api.ReportContext, test: api.TestRun) -> Header:
    p = test.params
    sequence = [s for s in p.get("sequence", "").split(", ") if s]
    pre = duration(stored.number(test, "precondition_time"), rough=True)
    middle = [
        ("Queue depths", f"{p.get('depths', NA).replace(',', ', ')} (TC 1, QD = fio iodepth)"),
        ("Time per point", f"{duration(float(p.get('runtime', '0') or 0), rough=True)}, "
         "the points of a random sweep back to back in one fio process, each SEQ "
         "point its own fio process right after the last; no idle time"),
        ("Sequence", ", ".join(sequence) or NA),
        ("Phases run", f"{len(test.rounds)} of {p.get('phases') or len(sequence) or NA}"),
    ]
    if any(w.sequential for w in chosen(test)):
        slices = any(f"offset.{r.index}.{x.name}" not in test.data for r in test.rounds
                     for x in r.workloads if x.name.startswith("seq-"))
        middle.append(("SEQ placement",
                       "point i of n in slice i of n of the active range (a file from before SEQ points "
                       "continued)" if slices else
                       "each point continues where the last point of its sweep stopped, over the whole "
                       "active range (as TP)"))
    first = "the WIPC is the first one's" if test.wipc is not None else "the first one's too: no WIPC"
    wdpc = (f"before each write sweep (and a read sweep without one), SEQ 128KiB W over the active "
            f"range at QD{PRECONDITION_QD} ({first}), then RND 4KiB W "
            f"QD{p.get('precondition_qd', PRECONDITION_QD)} for {pre}; each read sweep right "
            "after its write sweep")
    no_wipc = ("none (--wipc-loops 0): the first precondition starts with a fill"
               if ctx.run.options.get("wipc_loops") == "0" else "")
    stimulus = "QD sweeps of " + ", ".join(w.title for w in chosen(test))
    return snia_header(ctx.run, test, stimulus, middle, without_wipc=no_wipc, wdpc=wdpc)


def phases_table(test: api.TestRun) -> api.Table:
    """Every phase in the order run: what it was, its fio time and its figure."""
    rows = []
    for r in test.rounds:
        label = test.data.get(f"phase.{r.index}", f"phase {r.index}")
        names = [w.name for w in r.workloads]
        if names == [FILL_JOB] or names == [PRECONDITION_JOB]:
            w = r.workloads[0]
            figure = f"{fmt(mb(w.bw_bytes), 'MB/s')} MB/s" if names == [FILL_JOB] else f"{fmt(w.iops)} IOPS"
        else:
            figure = f"{len(names)} point{'s' if len(names) != 1 else ''}"
        rows.append([str(r.index), label, fmt(r.fio_s, "s"), figure])
    return api.table(["Phase", "What", "fio time (s)", "Result"], rows,
                     title="Phases in the order run (each one fio process)", widths=[8, 56, 14, 22])


def p999(p: Point) -> Optional[float]:
    """The point's 99.9th percentile, None where its I/O count does not support it."""
    return p.p999_us if histogram.supported(p.ios, "99.9") else None


def _p999_text(p: Point) -> str:
    if not histogram.supported(p.ios, "99.9"):
        return NOT_SUPPORTED
    return fmt(p.p999_us, "µs")


def _curve(label: str, pts: Sequence[Point], value) -> api.Curve:
    ys = [value(p) for p in pts]
    return api.Curve(label, np.array([float(p.qd) for p in pts]),
                     np.array([math.nan if y is None else float(y) for y in ys]))


def perf_chart(w: QdWorkload, curves: Sequence[api.Curve], depths: Sequence[int]) -> api.XYChart:
    return api.XYChart(tuple(curves), QD_LABEL, _perf_label(w), f"{w.title}: {w.unit} vs queue depth",
                       xlog=2, xticks=tuple(float(d) for d in sorted(depths)))


def latency_chart(w: QdWorkload, pts: Sequence[Point]) -> api.XYChart:
    curves = (_curve("average", pts, lambda p: p.result.lat_mean_us),
              _curve("99.9th percentile", pts, p999))
    values = np.concatenate([c.y for c in curves])
    values = values[np.isfinite(values) & (values > 0)]
    wide = values.size > 1 and float(values.max()) / float(values.min()) > LOG_SPREAD
    return api.XYChart(curves, QD_LABEL, LAT_LABEL, f"{w.title}: response time vs queue depth",
                       xlog=2, ylog=10 if wide else 0, xticks=tuple(float(p.qd) for p in pts),
                       ylim=(None, None) if wide else (0.0, None))


def workload_blocks(ctx: api.ReportContext, test: api.TestRun, w: QdWorkload) -> list:
    pts = sorted(points(test, w), key=lambda p: p.qd)
    if not pts:
        return [api.Heading(w.title, 2), api.Paragraph("No point of this sweep was measured.")]
    rows = [[str(p.qd), fmt(p.result.iops, "IOPS"), fmt(mb(p.result.bw_bytes), "MB/s"),
             fmt(p.result.lat_mean_us, "µs"), _p999_text(p)] for p in pts]
    out: list = [api.Heading(w.title, 2, room_cm=10),
                 api.table(["QD", "IOPS", "MB/s", "Average (µs)", "99.9% (µs)"], rows,
                           title=f"{w.title} at TC 1, by queue depth (response times)",
                           widths=[10, 22, 22, 23, 23])]
    if any(not histogram.supported(p.ios, "99.9") for p in pts):
        out.append(api.Paragraph(f"{NOT_SUPPORTED}: fewer than 1,000 I/Os, too few for a 99.9th percentile."))
    unit = "MB/s" if w.sequential else "IOPS"
    out += [
        ctx.chart(test, f"{w.job}-{'mbs' if w.sequential else 'iops'}-vs-qd",
                  perf_chart(w, [_curve(ctx.run.name, pts, lambda p: w.performance(p.result))],
                             [p.qd for p in pts]),
                  f"{w.title}: {unit} at each queue depth (TC 1), log2 axis of queue depths."),
        ctx.chart(test, f"{w.job}-latency-vs-qd", latency_chart(w, pts),
                  f"{w.title}: average and 99.9th-percentile response time at each queue depth "
                  "(points whose I/O count does not support a 99.9th percentile are left out)."),
    ]
    return out


def report_section(ctx: api.ReportContext, tests: Sequence[api.TestRun]) -> list:
    return test_sections(ctx, tests, QueueDepthTest.title, qd_header, measured_blocks)


def measured_blocks(ctx: api.ReportContext, test: api.TestRun) -> list:
    """The blocks of one test that measured something."""
    out: list = []
    headline = api.headline_table(_kind(), test)
    out += [api.Heading("Figures and phases", 2)] + ([headline] if headline is not None else [])
    out.append(phases_table(test))
    out += [x for w in chosen(test) for x in workload_blocks(ctx, test, w)]
    if ctx.run.options.get("latency_histograms") == "true":
        out += qos_blocks(ctx, test, f"{test.key}, every phase")
    return out


# --- comparison -----------------------------------------------------------------------------

def _run_points(runs: Sequence[api.RunResult], w: QdWorkload) -> List[Dict[int, Point]]:
    """Per run, its points of ``w`` by queue depth (empty where it has none)."""
    out = []
    for run in runs:
        tests = run.tests_of(QueueDepthTest.name)
        out.append({p.qd: p for p in points(tests[0], w)} if tests else {})
    return out


def compare_section(ctx: api.CompareContext, runs: Sequence[api.RunResult], labels: Sequence[str]) -> list:
    out = api.compare_section(_kind(), ctx, runs, labels)
    if not out:
        return []
    for w in WORKLOADS:
        per_run = _run_points(ctx.runs, w)
        depths = sorted({d for found in per_run for d in found})
        if not depths:
            continue
        unit = "MB/s" if w.sequential else "IOPS"

        def value(i: int, j: int, per_run=per_run, depths=depths, w=w) -> Optional[float]:
            p = per_run[j].get(depths[i])
            return None if p is None else w.performance(p.result)

        grid = ctx.by_runs([(str(d), float(d)) for d in depths], value, unit, "QD")
        curves = [_curve(label, [found[d] for d in sorted(found)], lambda p, w=w: w.performance(p.result))
                  for label, found in zip(ctx.labels, per_run) if found]
        out += [api.Heading(w.title, 2, room_cm=10),
                ctx.grid_table(grid, f"{w.title}: {unit} by queue depth (TC 1)"),
                Chart(f"qd-{w.job}-vs-qd.png", perf_chart(w, curves, depths),
                      f"{w.title}: {unit} at each queue depth, every run overlaid.")]
    return out


class QueueDepthView(api.View):
    """How QueueDepth results are shown."""

    shows_histograms = True

    # its sections are this module's functions
    report_section = staticmethod(report_section)
    compare_section = staticmethod(compare_section)

    def summary(self, test: api.TestRun) -> Dict[str, api.SummaryValue]:
        return {}  # peaks at different queue depths are none of the PTS summary lines

    def check_data(self, test: api.TestRun) -> None:
        if test.series:
            raise ValueError("a QD test keeps its phases as rounds, not as a series")
        for r in test.rounds:
            for res in r.workloads:
                if res.name in (FILL_JOB, PRECONDITION_JOB):
                    continue
                qds = [w.qd_of(res.name) for w in WORKLOADS if w.qd_of(res.name) is not None]
                if not qds:
                    raise ValueError(f"phase {r.index} has a workload {res.name!r} that a QD test does not run")
                if qds[0] != res.iodepth or res.numjobs != 1:
                    raise ValueError(f"workload {res.name!r} ran at TC {res.numjobs}/QD {res.iodepth}, "
                                     f"not TC 1/QD {qds[0]}")
