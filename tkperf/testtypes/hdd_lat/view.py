"""How HDD random-access latency is shown: per block size and direction the
average, 99th, 99.9th percentile and maximum response time at QD 1 (a
table and bars), and the repeatability of the rounds; tkperf's latency QoS
part (nines table, histograms, confidence plots) follows, added by the
report for every test that kept histograms.  In a comparison: the headline
figures and the confidence curves of random R and W, one curve per run.
"""
from __future__ import annotations

from typing import Any, Dict, List, Sequence

from tkperf import api
from tkperf.pts import HDD_SUMMARY_RANK as SUMMARY_RANK
from tkperf.pts import (
    NA,
    BarsChart,
    Convergence,
    Grid,
    Header,
    Panel,
    compare_blocks,
    fmt,
    hdd_blocks,
    hdd_comparison,
    hdd_header,
    metric_display,
    per_round,
    repeat_source,
    test_sections,
    test_title,
)
from tkperf.pts import hdd_cell as cell_name
from tkperf.pts import hdd_check_cells as check_cells
from tkperf.pts import hdd_window_cells as window_cells
from tkperf.testtypes.hdd_lat import MIXES, HddLatencyTest, direction, percentile, response_times

#: The columns of the response-time table and bars besides AVE and MAX.
TABLE_PERCENTILES = ("99", "99.9")
NOT_SUPPORTED = "n/s"


def _sizes(test: api.TestRun) -> List[int]:
    return sorted({c[0] for c in window_cells(test)})


def latency_rows(test: api.TestRun) -> List[List[Any]]:
    """Per block size and direction (R first): I/Os, AVE, the percentiles of
    :data:`TABLE_PERCENTILES` (None where not supported) and MAX, over the
    window: floats, and None where a figure is not supported."""
    cells = window_cells(test)
    out = []
    for bs in _sizes(test):
        for mix in MIXES:
            ws = cells.get((bs, mix, 1), [])
            mean, worst, ios = response_times(ws, direction(mix))
            if ios:
                out.append([float(bs), float(mix), float(ios), mean]
                           + [percentile(ws, direction(mix), p) for p in TABLE_PERCENTILES] + [worst])
    return out


def latency_table(test: api.TestRun, src: str) -> api.Table:
    rows = []
    for bs, mix, ios, mean, *rest in latency_rows(test):
        pct, worst = rest[:-1], rest[-1]
        rows.append([api.format_bs(int(bs)), "RND 100% R" if mix == 100 else "RND 100% W", f"{int(ios):,}",
                     fmt(mean, "µs")] + [fmt(v, "µs") if v is not None else NOT_SUPPORTED for v in pct]
                    + [fmt(worst, "µs")])
    return api.table(["BS", "Access", "I/Os", "AVE (µs)"] + [f"{p}% (µs)" for p in TABLE_PERCENTILES] + ["MAX (µs)"],
                     rows, title=f"Response time at TC 1/QD 1 ({NOT_SUPPORTED}: too few I/Os for the "
                     f"percentile), {src}", widths=[10, 18, 12, 15, 15, 15, 15])


def latency_grid(test: api.TestRun, bs: int) -> Grid:
    """AVE, percentiles and MAX (columns) of read and write (rows) at one block size."""
    rows = [r for r in latency_rows(test) if int(r[0]) == bs]
    return Grid(rows=tuple("R" if r[1] == 100 else "W" for r in rows), row_keys=tuple(r[1] for r in rows),
                cols=("AVE",) + tuple(f"{p}%" for p in TABLE_PERCENTILES) + ("MAX",),
                values=tuple(tuple(r[3:]) for r in rows), unit="µs", row_title="Direction",
                col_title="Figure")


def convergence(test: api.TestRun) -> Convergence:
    """Mean response time per round of every block size and direction."""
    m = metric_display("lat_mean_us")
    series = tuple(per_round(test, f"{api.format_bs(bs)} {'R' if mix == 100 else 'W'}", cell_name(bs, mix, 1),
                             f"{direction(mix)}.lat_mean_us")
                   for bs in _sizes(test) for mix in MIXES)
    return Convergence(title=f"{test_title(test)}: mean response time per round (QD 1)", ylabel=m.unit,
                       series=series, rounds=tuple(r.index for r in test.rounds), legend_title="Workload")


def report_section(ctx: api.ReportContext, tests: Sequence[api.TestRun]) -> list:
    return test_sections(ctx, tests, HddLatencyTest.title, header, measured_blocks)


def header(ctx: api.ReportContext, test: api.TestRun) -> Header:
    """The SNIA header of one test."""
    p = test.params
    stimulus = f"RND 100% R and RND 100% W, block size {p.get('block_sizes', NA)}, TC 1/QD 1"
    first = [("Time per workload", f"{p.get('runtime', NA)} s, back to back in one fio process")]
    return hdd_header(ctx, test, stimulus, first)


def measured_blocks(ctx: api.ReportContext, test: api.TestRun) -> list:
    """The blocks of one test that measured something, between its
    headline figures and its repeatability (:func:`hdd_blocks`)."""
    out: list = []
    src = repeat_source(test)
    out += [api.Heading("Response time at QD 1", 2, room_cm=10),
            api.Paragraph("Response time is fio's total latency, from submission to completion. At QD 1 "
                          "a drive cannot reorder anything: a read waits for a seek and, on average, half "
                          "a revolution; a write may be absorbed by the drive's write cache (its state "
                          "is in the header). Percentiles come from fio's latency histograms added over "
                          "the rounds the figures are measured in."),
            latency_table(test, src)]
    for bs in _sizes(test):
        out.append(ctx.chart(test, f"response-{api.format_bs(bs)}", BarsChart(
            (Panel(latency_grid(test, bs), f"RND {api.format_bs(bs)} at QD 1", "Response time (µs)"),)),
            f"AVE, {', '.join(p + '%' for p in TABLE_PERCENTILES)} and MAX response time of random "
            f"reads and writes, block size {api.format_bs(bs)}, TC 1/QD 1, {src}; "
            "a missing bar is a percentile the I/O count does not support."))
    return hdd_blocks(ctx, HddLatencyTest(), test, out, convergence(test))


def compare_section(ctx: api.CompareContext, runs: Sequence[api.RunResult], labels: Sequence[str]) -> list:
    out, tests = hdd_comparison(HddLatencyTest(), ctx, runs, labels)
    if not out:
        return []
    sizes = sorted({c[0] for t in tests if t is not None for c in window_cells(t)})
    wanted = tuple(f"RND {api.format_bs(bs)} {m}/{100 - m} {'R' if m == 100 else 'W'}" for bs in sizes for m in MIXES)
    return out + compare_blocks(ctx, tests, wanted, "Response-time confidence by run", "hdd-lat")


class HddLatencyView(api.View):
    """How HddLatency results are shown."""

    # its sections are this module's functions
    report_section = staticmethod(report_section)
    compare_section = staticmethod(compare_section)

    def summary(self, test: api.TestRun) -> Dict[str, api.SummaryValue]:
        """The RND 4KiB W response time lines (AVE and MAX), at QD 1 as the PTS's LAT."""
        figures = {f.key: f.value for f in self.kind.headline(test)}
        source = f"{repeat_source(test)}, HDD at TC1/QD1"
        return {key: api.SummaryValue(figures[key], source, SUMMARY_RANK)
                for key in ("rnd_4k_write_lat_mean_us", "rnd_4k_write_lat_max_us") if key in figures}

    def check_data(self, test: api.TestRun) -> None:
        check_cells(test, "an HDD-LAT test")
        for r in test.rounds:
            for w in r.workloads:
                if w.iodepth != 1 or w.rwmixread not in MIXES:
                    raise ValueError(f"round {r.index} has {w.name!r}, not random 100% R or W at QD 1")
