"""How IOPS results are shown: the block size x R/W mix matrix (a table, a
chart per mix, a heat map), convergence and the measurement window; in a
comparison, the IOPS at the common corners.
"""
from __future__ import annotations

from typing import Dict, Sequence, Tuple

from tkperf import api
from tkperf.pts import (
    BarsChart,
    Chart,
    Grid,
    HeatmapChart,
    LinesChart,
    Panel,
    cell_average,
    first_test,
    grid_table,
    matrix_convergence,
    matrix_grid,
    matrix_header,
    steady_sections,
    test_sections,
    window_source,
)
from tkperf.testtypes.iops import IopsTest

# The cells compared across drives, where a run measured them.
CORNERS: Tuple[Tuple[int, int, str], ...] = (
    (4096, 0, "RND 4KiB 100% W"),
    (4096, 65, "RND 4KiB 65:35"),
    (4096, 100, "RND 4KiB 100% R"),
    (8192, 65, "RND 8KiB 65:35"),
)


# --- IOPS ------------------------------------------------------------------------------------

def iops_grid(test: api.TestRun) -> Grid:
    """The IOPS matrix: window-average IOPS (read + write) per block size and mix."""
    return matrix_grid(test, lambda name: test.window_average(name, "iops"), "IOPS")


def report_section(ctx: api.ReportContext, tests: Sequence[api.TestRun]) -> list:
    return test_sections(ctx, tests, IopsTest.title, matrix_header, measured_blocks)


def measured_blocks(ctx: api.ReportContext, test: api.TestRun) -> list:
    """The blocks of one test that measured something."""
    out: list = []
    grid = iops_grid(test)
    src = window_source(test)
    out += [
        api.Heading("IOPS by block size and R/W mix", 2),
        grid_table(grid, f"Average IOPS (read + write) by block size and R/W mix %, {src}"),
        ctx.chart(test, "iops-by-bs", LinesChart(grid, "IOPS (read + write)", "IOPS vs block size per R/W mix"),
                  f"IOPS vs block size, one line per R/W mix (read/write %), {src}."),
        ctx.chart(test, "iops-matrix", HeatmapChart(grid, "IOPS: block size x R/W mix", "IOPS"),
                  f"The IOPS matrix as a heat map, {src}."),
    ]
    out += steady_sections(ctx, test, matrix_convergence(test), 2)
    return out


def corner_grid(ctx: api.CompareContext) -> Grid:
    """Window-average IOPS at the corners any run measured; n/a where a run did not."""
    tests = [first_test(r, IopsTest.name) for r in ctx.runs]
    present = [c for c in CORNERS if any(cell_average(t, c[0], c[1], "iops") is not None for t in tests)]
    return ctx.by_runs([(c[2], float(c[0])) for c in present],
                       lambda i, j: cell_average(tests[j], present[i][0], present[i][1], "iops"),
                       "IOPS", "Corner")


def compare_section(ctx: api.CompareContext, runs: Sequence[api.RunResult], labels: Sequence[str]) -> list:
    corners = corner_grid(ctx)
    if not corners.rows:
        return []
    return [api.Heading(IopsTest.title),
            ctx.grid_table(corners, "Average IOPS over each run's measurement window"),
            Chart("iops-corners.png", BarsChart((Panel(corners, "IOPS at the common corners", "IOPS"),)),
                  "Steady-state (window average) IOPS at the corners, one bar per run; "
                  "n/a where a run did not measure the cell.")]


class IopsView(api.View):
    """How Iops results are shown."""

    # its sections are this module's functions
    report_section = staticmethod(report_section)
    compare_section = staticmethod(compare_section)

    def summary(self, test: api.TestRun) -> Dict[str, api.SummaryValue]:
        # Round 1 comes after WIPC, so it is not FOB: FOB comes from WSAT only.
        return {f.key: api.SummaryValue(f.value) for f in self.kind.headline(test) if f.key != "tracking"}
