"""How HDD random IOPS are shown: IOPS by block size and R/W mix at every
queue depth (tables and bars), IOPS against queue depth, every cell's
response times, and the repeatability of the rounds; in a comparison, the
headline figures and IOPS against queue depth per mix, one curve per run.
"""
from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from tkperf import api
from tkperf.pts import HDD_SUMMARY_RANK as SUMMARY_RANK
from tkperf.pts import (
    NA,
    BarsChart,
    Chart,
    Convergence,
    Grid,
    Header,
    Panel,
    fmt,
    grid_table,
    hdd_blocks,
    hdd_comparison,
    hdd_header,
    mb,
    metric_display,
    per_round,
    repeat_source,
    test_sections,
    test_title,
)
from tkperf.pts import hdd_cell as cell_name
from tkperf.pts import hdd_check_cells as check_cells
from tkperf.pts import hdd_window_cells as window_cells
from tkperf.testtypes.hdd_iops import HddIopsTest, cell_average, headline_bs

QD_LABEL = "Queue depth (TC 1, QD = fio iodepth)"
#: At most this many queue depths get a bar panel each (the lowest and highest always).
MAX_PANELS = 4


# --- IOPS by block size, mix and queue depth ----------------------------------------------------

def dimensions(test: api.TestRun) -> Tuple[List[int], List[int], List[int]]:
    """Block sizes (smallest first), mixes (100/0 first) and queue depths run."""
    cells = window_cells(test)
    return (sorted({c[0] for c in cells}), sorted({c[1] for c in cells}, reverse=True),
            sorted({c[2] for c in cells}))


def qd_grid(test: api.TestRun, qd: int) -> Grid:
    """Window-average IOPS by block size (rows) and mix (columns) at one queue depth."""
    sizes, mixes, _ = dimensions(test)
    return Grid(rows=tuple(api.format_bs(x) for x in sizes), row_keys=tuple(float(x) for x in sizes),
                cols=tuple(api.mix_label(m) for m in mixes),
                values=tuple(tuple(cell_average(test, bs, m, qd, "iops") for m in mixes) for bs in sizes),
                unit="IOPS")


def panel_depths(depths: Sequence[int]) -> List[int]:
    """The queue depths that get a bar panel: all, or the lowest, highest and some between."""
    if len(depths) <= MAX_PANELS:
        return list(depths)
    picks = {round(i * (len(depths) - 1) / (MAX_PANELS - 1)) for i in range(MAX_PANELS)}
    return [depths[i] for i in sorted(picks)]


def _curve(label: str, xs: Sequence[float], ys: Sequence[Optional[float]]) -> api.Curve:
    return api.Curve(label, np.array([float(x) for x in xs]),
                     np.array([math.nan if y is None else float(y) for y in ys]))


def qd_chart(test: api.TestRun) -> api.XYChart:
    """IOPS against queue depth, one curve per block size and mix."""
    sizes, mixes, depths = dimensions(test)
    curves = tuple(_curve(f"{api.format_bs(bs)} {api.mix_label(m)}", depths,
                          [cell_average(test, bs, m, qd, "iops") for qd in depths])
                   for m in mixes for bs in sizes)
    return api.XYChart(curves, QD_LABEL, "IOPS", f"{test_title(test)}: IOPS vs queue depth",
                       xlog=2, xticks=tuple(float(d) for d in depths), legend_title="Block size, R/W")


def cells_table(test: api.TestRun, src: str) -> api.Table:
    """Every cell over the window: IOPS, MB/s, AVE and MAX response time."""
    sizes, mixes, depths = dimensions(test)
    cells = window_cells(test)
    rows = []
    for m in mixes:
        for bs in sizes:
            for qd in depths:
                ws = cells.get((bs, m, qd), [])
                worst = max((w.lat_max_us for w in ws), default=None)
                rows.append([api.mix_label(m), api.format_bs(bs), str(qd),
                             fmt(cell_average(test, bs, m, qd, "iops"), "IOPS"),
                             fmt(None if not ws else mb(cell_average(test, bs, m, qd, "bw_bytes") or 0.0), "MB/s"),
                             fmt(cell_average(test, bs, m, qd, "lat_mean_us"), "µs"), fmt(worst, "µs")])
    return api.table(["R/W", "BS", "QD", "IOPS", "MB/s", "AVE (µs)", "MAX (µs)"], rows,
                     title=f"Every cell at TC 1: IOPS, MB/s and response time (AVE; MAX of the window), {src}",
                     widths=[10, 10, 8, 18, 18, 18, 18])


def convergence(test: api.TestRun) -> Convergence:
    """IOPS per round of every cell at the tracked queue depth."""
    sizes, mixes, depths = dimensions(test)
    qd = max(depths) if depths else 0
    m = metric_display("iops")
    cells = [(bs, mix) for mix in mixes for bs in sizes]
    series = tuple(per_round(test, f"{api.format_bs(bs)} {api.mix_label(mix)}", cell_name(bs, mix, qd),
                             "iops", lambda v: v * m.scale)
                   for bs, mix in cells)
    return Convergence(title=f"{test_title(test)}: IOPS of every block size and mix at QD{qd} per round",
                       ylabel=m.unit, series=series, rounds=tuple(r.index for r in test.rounds),
                       legend_title="Block size, R/W")


def report_section(ctx: api.ReportContext, tests: Sequence[api.TestRun]) -> list:
    return test_sections(ctx, tests, HddIopsTest.title, header, measured_blocks)


def header(ctx: api.ReportContext, test: api.TestRun) -> Header:
    """The SNIA header of one test."""
    p = test.params
    stimulus = (f"RND, R/W mix {p.get('mixes', NA)} x block size {p.get('block_sizes', NA)} x "
                f"queue depth {p.get('depths', NA)}, TC 1")
    first = [("Time per cell", f"{p.get('runtime', NA)} s, the cells of a round back to back in one "
              "fio process")]
    return hdd_header(ctx, test, stimulus, first)


def measured_blocks(ctx: api.ReportContext, test: api.TestRun) -> list:
    """The blocks of one test that measured something, between its
    headline figures and its repeatability (:func:`hdd_blocks`)."""
    out: list = []
    src = repeat_source(test)
    _, _, depths = dimensions(test)
    out.append(api.Heading("IOPS by block size and R/W mix", 2, room_cm=10))
    out += [grid_table(qd_grid(test, qd), f"IOPS (read + write) by block size and R/W mix % at QD{qd}, {src}")
            for qd in depths]
    shown = panel_depths(depths)
    out.append(ctx.chart(test, "iops-by-bs-mix", BarsChart(
        tuple(Panel(qd_grid(test, qd), f"QD{qd}", "IOPS") for qd in shown), legend_title="R/W"),
        f"IOPS by block size (groups) and R/W mix (bars) at QD {', '.join(map(str, shown))}, {src}."))
    out += [api.Heading("IOPS vs queue depth", 2, room_cm=10),
            ctx.chart(test, "iops-vs-qd", qd_chart(test),
                      f"IOPS at each queue depth (TC 1, log2 axis), one curve per block size and R/W mix, {src}."),
            cells_table(test, src)]
    return hdd_blocks(ctx, HddIopsTest(), test, out, convergence(test))


# --- comparison -------------------------------------------------------------------------------------

Cells = Dict[Tuple[int, int, int], float]


def _window_iops(tests: Sequence[Optional[api.TestRun]]) -> List[Cells]:
    """Per run, the window-average IOPS of every (block size, mix, QD) cell it measured."""
    per_run: List[Cells] = []
    for t in tests:
        found: Cells = {}
        for c in (window_cells(t) if t is not None else {}):
            v = cell_average(t, *c, "iops")  # type: ignore[arg-type]
            if v is not None:
                found[c] = v
        per_run.append(found)
    return per_run


def _compared_pairs(per_run: Sequence[Cells]) -> List[Tuple[int, int]]:
    """The (block size, mix) pairs shown: the 4KiB curves, where some run
    has them; else the block sizes there are."""
    pairs = sorted({(c[0], c[1]) for f in per_run for c in f}, key=lambda x: (x[0], -x[1]))
    return [(bs, mix) for bs, mix in pairs
            if bs == 4096 or not any((4096, mix) == (c[0], c[1]) for f in per_run for c in f)]


def _by_queue_depth(ctx: api.CompareContext, per_run: Sequence[Cells], bs: int, mix: int) -> list:
    """One (block size, mix)'s IOPS by queue depth: a table and a chart, every run overlaid."""
    depths = sorted({c[2] for f in per_run for c in f if c[:2] == (bs, mix)})
    name = f"RND {api.format_bs(bs)} {api.mix_label(mix)}"
    grid = ctx.by_runs([(str(d), float(d)) for d in depths], lambda i, j: per_run[j].get((bs, mix, depths[i])),
                       "IOPS", "QD")
    curves = tuple(_curve(label, [d for d in depths if (bs, mix, d) in f],
                          [f[(bs, mix, d)] for d in depths if (bs, mix, d) in f])
                   for label, f in zip(ctx.labels, per_run) if any(c[:2] == (bs, mix) for c in f))
    return [api.Heading(f"{name} by queue depth", 2, room_cm=10),
            ctx.grid_table(grid, f"{name}: IOPS by queue depth (TC 1), window averages"),
            Chart(f"hdd-iops-{api.format_bs(bs)}-{mix}-{100 - mix}-vs-qd.png",
                  api.XYChart(curves, QD_LABEL, "IOPS", f"{name}: IOPS vs queue depth", xlog=2,
                              xticks=tuple(float(d) for d in depths)),
                  f"{name}: IOPS at each queue depth, every run overlaid.")]


def compare_section(ctx: api.CompareContext, runs: Sequence[api.RunResult], labels: Sequence[str]) -> list:
    out, tests = hdd_comparison(HddIopsTest(), ctx, runs, labels)
    if not out:
        return []
    per_run = _window_iops(tests)
    for bs, mix in _compared_pairs(per_run):
        out += _by_queue_depth(ctx, per_run, bs, mix)
    return out


class HddIopsView(api.View):
    """How HddIops results are shown."""

    # its sections are this module's functions
    report_section = staticmethod(report_section)
    compare_section = staticmethod(compare_section)

    def summary(self, test: api.TestRun) -> Dict[str, api.SummaryValue]:
        """RND 4KiB R and W IOPS at the highest queue depth run."""
        cells = window_cells(test)
        if not cells or headline_bs(test) != 4096:
            return {}
        qd = max(q for _, _, q in cells)
        out = {}
        for mix, key in ((100, "rnd_4k_read_iops"), (0, "rnd_4k_write_iops")):
            v = cell_average(test, 4096, mix, qd, "iops")
            if v is not None:
                out[key] = api.SummaryValue(v, f"{repeat_source(test)}, HDD at TC1/QD{qd}", SUMMARY_RANK)
        return out

    def check_data(self, test: api.TestRun) -> None:
        check_cells(test, "an HDD-IOPS test")
