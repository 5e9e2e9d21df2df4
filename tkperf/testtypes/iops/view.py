"""How IOPS results are shown: the block size x R/W mix matrix (a table, a
chart per mix, a heat map), convergence and the measurement window; in a
comparison, the IOPS at the common corners.

The matrix helpers are shared with LAT, which runs the same kind of matrix.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from tkperf.api import (
    NA,
    BarsChart,
    Chart,
    CompareContext,
    Convergence,
    Grid,
    Header,
    Heading,
    HeatmapChart,
    LinesChart,
    Panel,
    ReportContext,
    RunResult,
    SummaryValue,
    TestRun,
    View,
    Workload,
    format_bs,
    grid_table,
    metric_display,
    mix_label,
    open_test,
    per_round,
    round_fields,
    snia_header,
    steady_sections,
    test_title,
    window_source,
)
from tkperf.api import iops_workload as workload_name
from tkperf.testtypes.iops import IopsTest

# The cells compared across drives, where a run measured them.
CORNERS: Tuple[Tuple[int, int, str], ...] = (
    (4096, 0, "RND 4KiB 100% W"),
    (4096, 65, "RND 4KiB 65:35"),
    (4096, 100, "RND 4KiB 100% R"),
    (8192, 65, "RND 8KiB 65:35"),
)


# --- the matrix (IOPS and LAT) -------------------------------------------------------

def cells(test: TestRun) -> Dict[Tuple[int, int], str]:
    """(block size, read %) -> workload name, over every round of the test."""
    out: Dict[Tuple[int, int], str] = {}
    for r in test.rounds:
        for w in r.workloads:
            out.setdefault((w.bs, w.rwmixread), w.name)
    return out


def window_workloads(test: TestRun, name: str) -> List[Workload]:
    return [w for r in test.window_rounds() for w in r.workloads if w.name == name]


def matrix_grid(test: TestRun, value: Callable[[str], Optional[float]], unit: str) -> Grid:
    """A block size x R/W mix grid over the cells the test ran: rows smallest
    block size first, columns in PTS order (100/0 first)."""
    found = cells(test)
    sizes = sorted({bs for bs, _ in found})
    mixes = sorted({mix for _, mix in found}, reverse=True)
    values = tuple(tuple(value(found[(bs, mix)]) if (bs, mix) in found else None for mix in mixes)
                   for bs in sizes)
    return Grid(rows=tuple(format_bs(x) for x in sizes), row_keys=tuple(float(x) for x in sizes),
                  cols=tuple(mix_label(m) for m in mixes), values=values, unit=unit)


def tracking_mix(test: TestRun) -> Optional[int]:
    for r in test.rounds:
        w = r.workload(test.tracking_workload)
        if w is not None:
            return w.rwmixread
    return None


def matrix_convergence(test: TestRun) -> Convergence:
    """The tracking metric of every block size at the tracking mix, per round."""
    m = metric_display(test.tracking_metric)
    mix = tracking_mix(test)
    at_mix = {bs: name for (bs, mx), name in cells(test).items() if mx == mix}
    series = tuple(per_round(test, format_bs(bs), at_mix[bs], test.tracking_metric, lambda v: v * m.scale)
                   for bs in sorted(at_mix))
    what = "mean latency" if m.unit == "µs" else "IOPS"
    title = (f"{test_title(test)}: {what} of every block size at R/W {mix_label(mix)} per round"
             if mix is not None else f"{test_title(test)}: per round")
    return Convergence(title=title, ylabel=m.unit, series=series,
                              rounds=tuple(r.index for r in test.rounds), legend_title="Block size")


def matrix_header(ctx: ReportContext, test: TestRun) -> Header:
    p = test.params
    stimulus = (f"RND, R/W mix {p.get('mixes', NA)} (outer loop) x block size "
                f"{p.get('block_sizes', NA)} (inner loop)")
    return snia_header(ctx.run, test, stimulus, round_fields(ctx.run, test))


def cell_average(test: Optional[TestRun], bs: int, mix: int, metric: str) -> Optional[float]:
    """A cell's window average in one run; None where it was not measured."""
    return None if test is None else test.window_average(workload_name(bs, mix), metric)


def first_test(run: RunResult, type_name: str) -> Optional[TestRun]:
    tests = run.tests_of(type_name)
    return tests[0] if tests else None


# --- IOPS ------------------------------------------------------------------------------------

def iops_grid(test: TestRun) -> Grid:
    """The IOPS matrix: window-average IOPS (read + write) per block size and mix."""
    return matrix_grid(test, lambda name: test.window_average(name, "iops"), "IOPS")


def report_section(ctx: ReportContext, tests: Sequence[TestRun]) -> list:
    out: list = []
    for test in tests:
        opening, measured = open_test(test, IopsTest.title, matrix_header(ctx, test))
        out += opening
        if not measured:
            continue
        grid = iops_grid(test)
        src = window_source(test)
        out += [
            Heading("IOPS by block size and R/W mix", 2),
            grid_table(grid, f"Average IOPS (read + write) by block size and R/W mix %, {src}"),
            ctx.chart(test, "iops-by-bs", LinesChart(grid, "IOPS (read + write)", "IOPS vs block size per R/W mix"),
                      f"IOPS vs block size, one line per R/W mix (read/write %), {src}."),
            ctx.chart(test, "iops-matrix", HeatmapChart(grid, "IOPS: block size x R/W mix", "IOPS"),
                      f"The IOPS matrix as a heat map, {src}."),
        ]
        out += steady_sections(ctx, test, matrix_convergence(test), 2)
    return out


def corner_grid(ctx: CompareContext) -> Grid:
    """Window-average IOPS at the corners any run measured; n/a where a run did not."""
    tests = [first_test(r, IopsTest.name) for r in ctx.runs]
    present = [c for c in CORNERS if any(cell_average(t, c[0], c[1], "iops") is not None for t in tests)]
    return ctx.by_runs([(c[2], float(c[0])) for c in present],
                       lambda i, j: cell_average(tests[j], present[i][0], present[i][1], "iops"),
                       "IOPS", "Corner")


def compare_section(ctx: CompareContext, runs: Sequence[RunResult], labels: Sequence[str]) -> list:
    corners = corner_grid(ctx)
    if not corners.rows:
        return []
    return [Heading(IopsTest.title),
            ctx.grid_table(corners, "Average IOPS over each run's measurement window"),
            Chart("iops-corners.png", BarsChart((Panel(corners, "IOPS at the common corners", "IOPS"),)),
                    "Steady-state (window average) IOPS at the corners, one bar per run; "
                    "n/a where a run did not measure the cell.")]


class IopsView(View):
    """How Iops results are shown."""

    def report_section(self, ctx: Any, tests: Sequence[TestRun]) -> list:
        return report_section(ctx, tests)

    def compare_section(self, ctx: Any, runs: Sequence[RunResult], labels: Sequence[str]) -> list:
        return compare_section(ctx, runs, labels)

    def summary(self, test: TestRun) -> Dict[str, SummaryValue]:
        # Round 1 comes after WIPC, so it is not FOB: FOB comes from WSAT only.
        return {f.key: SummaryValue(f.value) for f in self.kind.headline(test) if f.key != "tracking"}
