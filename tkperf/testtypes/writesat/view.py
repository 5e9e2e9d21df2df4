"""How Write Saturation results are shown: the WSAT figures, IOPS per
interval against time and against data written, and a table of the
intervals (binned beyond :data:`TABLE_ROWS`); in a comparison, every run's
curves overlaid, absolute and normalised to each drive's maximum.

Everything is read from the test's series of intervals (``wall_s fio_s
ios io_bytes iops lat_mean_us``, one row per interval) as numpy columns: a
day of 1-second intervals costs no Python work per interval.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

import numpy as np

from tkperf import api
from tkperf.pts import (
    MIN_FILLS,
    NA,
    POINT_DEFINITION,
    POINT_S_PARAM,
    Chart,
    CurvesChart,
    Header,
    duration,
    fmt,
    last_minute,
    open_test,
    plural,
    snia_header,
    steady_state,
    stored,
)
from tkperf.testtypes.writesat import (
    GB_LABEL,
    SERIES,
    TAIL,
    TIME_LABEL,
    WriteSaturationTest,
    iops,
    stimulus,
)
from tkperf.testtypes.writesat.responsetimes import capture_blocks, response_time_blocks

#: Tables list every interval up to this many, else this many bins of intervals.
TABLE_ROWS = 24
IOPS_LABEL = "IOPS"


@dataclass(frozen=True, eq=False)
class WsatData:
    """A WSAT test as arrays, one element per interval: its end (seconds since
    the start), the data written so far (GB) and its IOPS."""

    seconds: np.ndarray
    written_gb: np.ndarray
    iops: np.ndarray


def wsat_data(test: api.TestRun) -> WsatData:
    s = test.series.get(SERIES)
    if s is None or not len(s):
        empty = np.zeros(0)
        return WsatData(empty, empty, empty)
    return WsatData(seconds=np.cumsum(s.column("fio_s")), written_gb=np.cumsum(s.column("io_bytes")) / 1e9,
                    iops=iops(test))


@dataclass(frozen=True)
class WsatSummary:
    intervals: int
    duration_s: float
    written_gb: float
    first_iops: Optional[float]
    max_iops: Optional[float]
    min_iops: Optional[float]
    tail_iops: Optional[float]
    tail_label: str


def wsat_summary(test: api.TestRun, data: Optional[WsatData] = None) -> WsatSummary:
    """The WSAT figures; the final IOPS are the steady-state window's average
    where it was steady, else the last :data:`TAIL` intervals'."""
    d = data if data is not None else wsat_data(test)
    n = int(d.iops.size)
    s = test.steady
    if s is not None and s.steady and s.rounds:
        tail = float(sum(s.values) / len(s.values))
        label = f"steady-state window (intervals {window_start(test, s)}-{s.last_round})"
    elif n:
        k = min(TAIL, n)
        tail = float(d.iops[-k:].mean())
        label = f"last {plural(k, 'interval')}"
    else:
        tail, label = None, f"last {TAIL} intervals"
    return WsatSummary(
        intervals=n, duration_s=float(d.seconds[-1]) if n else 0.0,
        written_gb=float(d.written_gb[-1]) if n else 0.0,
        first_iops=float(d.iops[0]) if n else None,
        max_iops=float(d.iops.max()) if n else None,
        min_iops=float(d.iops.min()) if n else None, tail_iops=tail, tail_label=label)


@dataclass(frozen=True)
class WsatBin:
    first: int
    last: int
    end_s: float
    written_gb: float
    mean_iops: float
    min_iops: float
    max_iops: float


def wsat_bins(data: WsatData, rows: int = TABLE_ROWS) -> List[WsatBin]:
    """Every interval when there are at most ``rows``, else ``rows`` bins of
    consecutive intervals (mean, min and max IOPS of each)."""
    n = int(data.iops.size)
    if n == 0:
        return []
    edges = np.linspace(0, n, min(n, rows) + 1).astype(int)
    out = []
    for a, z in zip(edges[:-1], edges[1:]):
        if z <= a:
            continue
        chunk = data.iops[a:z]
        out.append(WsatBin(first=int(a) + 1, last=int(z), end_s=float(data.seconds[z - 1]),
                           written_gb=float(data.written_gb[z - 1]), mean_iops=float(chunk.mean()),
                           min_iops=float(chunk.min()), max_iops=float(chunk.max())))
    return out


def spacing_s(test: api.TestRun) -> Optional[int]:
    """Seconds between the points WSAT's steady state is judged on; None for
    a file from before the spacing (adjacent intervals)."""
    text = test.params.get("steady_spacing", "")
    return int(text) if text.isdigit() and int(text) > 0 else None


def window_start(test: api.TestRun, s: api.SteadyState) -> int:
    """The first interval the steady-state window's points measure."""
    take = point_intervals(test)
    return max(1, s.first_round - take + 1) if take else s.first_round


def _every(test: api.TestRun) -> int:
    """Intervals per steady-state point (0: a file from before the spacing)."""
    spacing, interval = spacing_s(test), test.params.get("interval", "")
    if spacing is None or not interval.isdigit() or int(interval) <= 0:
        return 0
    return max(1, spacing // int(interval))


def point_intervals(test: api.TestRun) -> int:
    """Intervals each steady-state point measures: its last minute's (the
    stored ``steady_point_s``), or in results from before that definition
    the whole spacing (0: a file from before the spacing)."""
    every, interval = _every(test), test.params.get("interval", "")
    measured = test.params.get(POINT_S_PARAM, "")
    if every and last_minute(test.params) and measured.isdigit() and interval.isdigit():
        return max(1, min(every, int(measured) // max(1, int(interval))))
    return every


def steady_rule(test: api.TestRun, window: int) -> str:
    """The steady-state rule of a WSAT test in words, with what each point is."""
    spacing = spacing_s(test)
    if spacing is None:
        return f"20/10 over {window} intervals"
    rule = f"20/10 on {window} points {duration(float(spacing))} apart"
    if not last_minute(test.params):
        return (f"{rule}, each the mean IOPS of the intervals it ends (this result's earlier definition; tkperf "
                "now takes each point's last minute)")
    take = point_intervals(test)
    measured = take * int(test.params.get("interval", "0") or 0)
    what = (f"the IOPS of the last {plural(take, 'interval')} before it ({measured} s)" if measured != 60
            else "the IOPS of the last minute before it" + (f" ({plural(take, 'interval')})" if take > 1 else ""))
    return f"{rule}, each {what} ({POINT_DEFINITION})"


def _floor_words(test: api.TestRun) -> str:
    """The written amount the steady-state stop waits for: two drive fills
    (files from before that rule: one)."""
    fills = test.params.get(MIN_FILLS, "1")
    return "one drive fill" if fills == "1" else f"{fills} drive fills"


def _steady_words(test: api.TestRun, window: int) -> str:
    s = steady_state(test, window)
    if test.params.get("steady_stop") != "true":
        return "not a stop rule (WSAT runs to its time or TGBW limit)"
    rule = f"{steady_rule(test, s.window if s else 5)}, a stop rule after {_floor_words(test)}"
    if test.stop_reason.startswith("steady state") and s is not None:
        return f"{rule}: reached in intervals {window_start(test, s)}-{s.last_round}"
    return f"{rule}: not reached"


def stop_rules(test: api.TestRun) -> str:
    """The limits a WSAT test ran under: 'time 24.0 h, TGBW 4x, steady state (points 30.0 min apart)'."""
    p = test.params
    out = f"time {duration(stored.number(test, 'time_limit'))}, TGBW {p.get('tgbw', NA)}"
    if p.get("steady_stop") != "true":
        return out
    spacing = spacing_s(test)
    return out + ", steady state" + (f" (points {duration(float(spacing))} apart)" if spacing else "")


def wsat_header(ctx: api.ReportContext, test: api.TestRun, d: WsatData) -> Header:
    p = test.params
    n = int(d.iops.size)
    middle = (
        ("Interval", f"{p.get('interval', NA)} s"),
        ("Stop rules", stop_rules(test)),
        ("Intervals run", f"{n} ({duration(float(d.seconds[-1]) if n else 0.0)}, "
         f"{float(d.written_gb[-1]) if n else 0.0:,.2f} GB written)"),
        ("Steady state", _steady_words(test, ctx.window)),
    )
    return snia_header(ctx.run, test, f"{stimulus(p)}, continuous", middle,
                       without_wipc="none: WSAT starts fresh after the purge", wdpc="none")


def curve_charts(curves: Sequence[api.Curve], by_gb: Sequence[api.Curve], capacity_gb: float = 0.0):
    """(IOPS vs time, IOPS vs GB written) chart specs of one or more runs;
    with ``capacity_gb`` (one run) the GB axis has drive fills along the top."""
    by_time = CurvesChart(tuple(curves), TIME_LABEL, IOPS_LABEL, "WSAT: IOPS vs time", time_axis=True)
    dense = max((c.y.size for c in by_gb), default=0) > 200
    written = api.XYChart(tuple(by_gb), GB_LABEL, IOPS_LABEL, "WSAT: IOPS vs total GB written (TGBW)",
                          dots=dense, top_axis=("Drive fills (data written / capacity)", capacity_gb)
                          if capacity_gb > 0 else None)
    return by_time, written


def fills_chart(curves: Sequence[WsatCurve]) -> api.XYChart:
    """IOPS against drive fills (data written over each run's own capacity),
    so that drives of different sizes compare."""
    dense = max((c.iops.size for c in curves), default=0) > 200
    return api.XYChart(tuple(api.Curve(c.label, c.data.written_gb / c.capacity_gb, c.iops) for c in curves
                             if c.capacity_gb > 0),  # an unknown capacity (0) has no drive fills
                       "Drive fills (data written / capacity)", IOPS_LABEL, "WSAT: IOPS vs drive fills", dots=dense)


def report_section(ctx: api.ReportContext, tests: Sequence[api.TestRun]) -> list:
    out: list = []
    for test in tests:
        data = wsat_data(test)
        opening, measured = open_test(test, WriteSaturationTest.title, wsat_header(ctx, test, data))
        out += opening
        if not measured:
            continue
        ws = wsat_summary(test, data)
        out += [api.Heading("WSAT figures", 2),
                api.table(["Figure", "Value", "Unit"], [
                    ["Intervals", str(ws.intervals), f"of {test.params.get('interval', NA)} s"],
                    ["Duration", fmt(ws.duration_s, "s"), "s"],
                    ["Total data written", fmt(ws.written_gb, "GB"), "GB"],
                    ["FOB IOPS (interval 1)", fmt(ws.first_iops), "IOPS"],
                    ["Highest interval", fmt(ws.max_iops), "IOPS"],
                    ["Lowest interval", fmt(ws.min_iops), "IOPS"],
                    [f"Average of the {ws.tail_label}", fmt(ws.tail_iops), "IOPS"],
                    ["Stopped by", test.stop_reason or NA, ""],
                ], title=f"Write saturation, {stimulus(test.params)}", widths=[40, 30, 30])]
        by_time, by_gb = curve_charts([api.Curve(ctx.run.name, data.seconds, data.iops)],
                                      [api.Curve(ctx.run.name, data.written_gb, data.iops)],
                                      ctx.run.device.size_bytes / 1e9)
        out += [ctx.chart(test, "iops-vs-time", by_time,
                          "WSAT: IOPS of each interval against time since the purge."),
                ctx.chart(test, "iops-vs-tgbw", by_gb,
                          "WSAT: IOPS of each interval against the total data written (GB, decimal, "
                          "TGBW), and in drive fills along the top.")]
        bins = wsat_bins(data)
        every = len(bins) == ws.intervals
        rows = [[str(x.first) if x.first == x.last else f"{x.first}-{x.last}", fmt(x.end_s, "s"),
                 fmt(x.written_gb, "GB"), fmt(x.mean_iops)]
                + ([] if every else [fmt(x.min_iops), fmt(x.max_iops)]) for x in bins]
        headers = ["Interval" if every else "Intervals", "End (s)", "Written (GB)",
                   "IOPS" if every else "Mean IOPS"] + ([] if every else ["Min IOPS", "Max IOPS"])
        title = ("IOPS of every interval" if every else
                 f"IOPS in {len(bins)} bins of consecutive intervals (every interval is in the XML file)")
        out.append(api.table(headers, rows, title=title))
        out += response_time_blocks(ctx, test, data.seconds, data.written_gb)
        out += capture_blocks(ctx, test)
    return out


@dataclass(frozen=True, eq=False)
class WsatCurve:
    """One run's WSAT in a comparison."""

    label: str
    test: api.TestRun
    data: WsatData
    capacity_gb: float = 1.0

    @property
    def seconds(self) -> np.ndarray:
        return self.data.seconds

    @property
    def iops(self) -> np.ndarray:
        return self.data.iops


def wsat_curves(ctx: api.CompareContext) -> List[WsatCurve]:
    """Every run that measured WSAT intervals, with its label."""
    out = []
    for run, label in zip(ctx.runs, ctx.labels):
        for t in run.tests_of(WriteSaturationTest.name):
            d = wsat_data(t)
            if d.iops.size:
                out.append(WsatCurve(label, t, d, run.device.size_bytes / 1e9))
                break
    return out


def normalised_chart(curves: Sequence[WsatCurve]) -> CurvesChart:
    """IOPS vs time, each run divided by its own maximum interval (the SNIA
    primer's Figure 5): 1.0 is each drive's peak."""
    return CurvesChart(tuple(api.Curve(c.label, c.data.seconds, c.data.iops).normalised() for c in curves),
                       TIME_LABEL, "IOPS / the drive's maximum IOPS",
                       "WSAT: IOPS normalised to each drive's maximum, vs time", time_axis=True, thousands=False)


def compare_section(ctx: api.CompareContext, runs: Sequence[api.RunResult], labels: Sequence[str]) -> list:
    curves = wsat_curves(ctx)
    if not curves:
        return []
    rows = []
    for c in curves:
        s = wsat_summary(c.test, c.data)
        rows.append([c.label, str(s.intervals), fmt(s.duration_s, "s"), fmt(s.written_gb, "GB"),
                     fmt(s.first_iops), fmt(s.max_iops), fmt(s.tail_iops), c.test.stop_reason or NA])
    by_time, by_gb = curve_charts([api.Curve(c.label, c.data.seconds, c.data.iops) for c in curves],
                                  [api.Curve(c.label, c.data.written_gb, c.data.iops) for c in curves])
    return [api.Heading(WriteSaturationTest.title),
            api.table(["Run", "Intervals", "Duration (s)", "Written (GB)", "FOB IOPS", "Max IOPS",
                       "Last 5 / SS IOPS", "Stopped by"], rows,
                      title="WSAT, " + ", ".join(sorted({stimulus(c.test.params) for c in curves})),
                      widths=[18, 9, 10, 10, 11, 11, 12, 19]),
            Chart("wsat-iops-vs-time.png", by_time, "WSAT IOPS per interval against time, every run overlaid."),
            Chart("wsat-normalised-vs-time.png", normalised_chart(curves),
                  "WSAT IOPS divided by each run's own maximum interval (1.0 = the drive's peak), "
                  "so the shapes compare regardless of speed."),
            Chart("wsat-iops-vs-tgbw.png", by_gb,
                  "WSAT IOPS per interval against the total data written (GB, decimal)."),
    ] + ([Chart("wsat-iops-vs-fills.png", fills_chart(curves),
                "WSAT IOPS per interval against drive fills: data written over each run's own "
                "capacity, so drives of different sizes compare"
                + ("." if all(c.capacity_gb > 0 for c in curves) else " (runs whose capacity is unknown left out)."))]
         if any(c.capacity_gb > 0 for c in curves) else [])


class WriteSaturationView(api.View):
    """How WriteSaturation results are shown."""

    # its sections are this module's functions
    report_section = staticmethod(report_section)
    compare_section = staticmethod(compare_section)

    def summary(self, test: api.TestRun) -> Dict[str, api.SummaryValue]:
        values = iops(test)
        if not values.size or stimulus(test.params) != "RND 4k 100% W":  # the summary's FOB is RND 4K W
            return {}
        return {"fob_iops": api.SummaryValue(float(values[0]), "WSAT interval 1, after purge", rank=10,
                                             definition="WSAT: first interval after the purge (FOB)")}

    def check_data(self, test: api.TestRun) -> None:
        if test.rounds:
            raise ValueError("a WSAT test keeps its intervals as a series, not as rounds")
