"""How Latency results are shown: AVE and MAX response time by block size
and R/W mix (tables and bars), the percentiles, convergence and the
measurement window; in a comparison, AVE and MAX per cell and run."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

from tkperf import api
from tkperf.pts import (
    PERCENTILES,
    BarsChart,
    Grid,
    Panel,
    capture_qos_blocks,
    capture_round,
    cell_average,
    compare_blocks,
    first_test,
    fmt,
    grid_table,
    matrix_cells,
    matrix_convergence,
    matrix_grid,
    matrix_header,
    qos_blocks,
    steady_sections,
    test_sections,
    window_source,
    window_workloads,
)
from tkperf.pts import iops_workload as workload_name
from tkperf.testtypes.latency import (
    AVE_RULE,
    CAPTURE_SOURCE,
    MAX_RULE,
    LatencyTest,
    largest_us,
    mean_of_maxima,
)


def lat_grids(test: api.TestRun) -> Tuple[Grid, Grid, Grid]:
    """Per block size and mix, in microseconds: the PTS's AVE (the per-round
    means, over both directions, averaged over the window) and MAX (the
    per-round maxima averaged over the window), and the largest single
    response time in the window (not a PTS figure)."""

    def maxima(name: str) -> List[float]:
        return [w.lat_max_us for w in window_workloads(test, name)]

    return (matrix_grid(test, lambda name: test.window_average(name, "lat_mean_us"), "µs"),
            matrix_grid(test, lambda name: mean_of_maxima(maxima(name)), "µs"),
            matrix_grid(test, lambda name: largest_us(maxima(name)), "µs"))


@dataclass(frozen=True)
class PercentileRow:
    """Response time of one direction of one LAT cell over the window (µs)."""

    block_size: str
    mix: str
    direction: str
    mean_us: float
    max_us: float
    percentiles: Tuple[Optional[float], ...]


def lat_percentiles(test: api.TestRun) -> List[PercentileRow]:
    """Per cell and direction: the mean, the maximum and, for each of
    :data:`PERCENTILES`, the highest value any window round reported."""
    out = []
    cells = matrix_cells(test)
    for bs, mix in sorted(cells, key=lambda c: (c[0], -c[1])):
        ws = window_workloads(test, cells[(bs, mix)])
        for direction in ("read", "write"):
            stats = [getattr(w, direction) for w in ws if getattr(w, direction).ios > 0]
            if not stats:
                continue
            pct = []
            for p in PERCENTILES:
                vals = [v for v in (s.percentile(p) for s in stats) if v is not None]
                pct.append(max(vals) if vals else None)
            out.append(PercentileRow(
                block_size=api.format_bs(bs), mix=api.mix_label(mix), direction=direction,
                mean_us=sum(s.lat_mean_us for s in stats) / len(stats),
                max_us=max(s.lat_max_us for s in stats), percentiles=tuple(pct)))
    return out


def report_section(ctx: api.ReportContext, tests: Sequence[api.TestRun]) -> list:
    return test_sections(ctx, tests, LatencyTest.title, matrix_header, measured_blocks)


def measured_blocks(ctx: api.ReportContext, test: api.TestRun) -> list:
    """The blocks of one test that measured something."""
    out: list = []
    ave, worst, largest = lat_grids(test)
    src = window_source(test)
    out += [
        api.Heading("Response time by block size and R/W mix", 2),
        api.Paragraph(f"AVE is the {AVE_RULE} (a mixed cell's round mean covers both directions, "
                      f"weighted by their I/O counts); MAX is the {MAX_RULE}, as the open PTS "
                      "implementations compute it.  The largest single response time of the window "
                      "is a different figure and has its own table."),
        grid_table(ave, f"AVE response time (µs, {AVE_RULE}) by block size and R/W mix %, {src}"),
        grid_table(worst, f"MAX response time (µs, {MAX_RULE}) by block size and R/W mix %, {src}"),
        grid_table(largest, f"Largest response time in the window (µs, the slowest single I/O; not "
                   f"the PTS MAX) by block size and R/W mix %, {src}"),
        ctx.chart(test, "ave-max",
                  BarsChart((Panel(ave, "AVE response time", "Response time (µs)"),
                             Panel(worst, "MAX response time", "Response time (µs)")), legend_title="R/W"),
                  f"AVE and MAX response time in µs per block size and R/W mix (TC1/QD1), {src}; "
                  f"AVE: {AVE_RULE}; MAX: {MAX_RULE}."),
    ]
    qos = histogram_blocks(ctx, test, src)
    rows = [[r.block_size, r.mix, r.direction, fmt(r.mean_us, "µs"), fmt(r.max_us, "µs")]
            + [fmt(v, "µs") for v in r.percentiles] for r in lat_percentiles(test)]
    out += qos
    if rows and not qos:  # a file from before histograms were kept
        out += [api.Heading("Latency percentiles", 2),
                api.table(["BS", "R/W", "Dir", "AVE µs", "Largest µs"] + [f"{p}% µs" for p in PERCENTILES],
                          rows, widths=[8, 9, 8, 11, 11, 11, 11, 11, 11],
                          title=f"Response time percentiles (highest of the window rounds; AVE: {AVE_RULE}; "
                          f"largest: the slowest single I/O), {src}")]
    out += steady_sections(ctx, test, matrix_convergence(test), 2)
    return out


def histogram_blocks(ctx: api.ReportContext, test: api.TestRun, src: str) -> list:
    """The response-time histogram and confidence ("nines") plots: from the
    capture after the rounds (:data:`~tkperf.testtypes.latency.CAPTURE_SOURCE`),
    or, in a result without one, from the window rounds, labelled as such."""
    cap = capture_round(test)
    if cap is not None:
        return capture_qos_blocks(ctx, test, cap, CAPTURE_SOURCE, f"round {cap.index}",
                                  "The AVE and MAX tables above are the window rounds' figures.")
    return qos_blocks(ctx, test, src, source=(
        "No response-time capture after the rounds (a result from before it, or --lat-capture 0): "
        "these plots come from the window rounds."))


def compare_grids(ctx: api.CompareContext) -> Tuple[Grid, Grid]:
    """LAT AVE and MAX (µs) per cell any run measured (rows) and run (columns)."""
    tests = [first_test(r, LatencyTest.name) for r in ctx.runs]
    cells = sorted({(w.bs, w.rwmixread) for t in tests if t is not None for r in t.rounds
                    for w in r.workloads}, key=lambda c: (c[0], -c[1]))

    def ave(i: int, j: int) -> Optional[float]:
        return cell_average(tests[j], cells[i][0], cells[i][1], "lat_mean_us")

    def worst(i: int, j: int) -> Optional[float]:
        t = tests[j]
        if t is None:
            return None
        return mean_of_maxima(w.lat_max_us for w in window_workloads(t, workload_name(*cells[i])))

    rows = [(f"{api.format_bs(x)} {api.mix_label(m)}", float(x)) for x, m in cells]
    return ctx.by_runs(rows, ave, "µs", "BS, R/W"), ctx.by_runs(rows, worst, "µs", "BS, R/W")


def compare_section(ctx: api.CompareContext, runs: Sequence[api.RunResult], labels: Sequence[str]) -> list:
    ave, worst = compare_grids(ctx)
    out = ctx.paired(LatencyTest.title, "lat.png", "Response time (µs)",
                     (ave, "AVE response time", "µs"), (worst, "MAX response time", "µs"),
                     "AVE and MAX response time (TC1/QD1) in µs per block size and R/W mix, one bar per run; "
                     f"AVE: {AVE_RULE}; MAX: {MAX_RULE}.")
    tests = [first_test(r, LatencyTest.name) for r in runs]
    return out + compare_blocks(ctx, tests, QOS_CELLS, "Latency QoS (response-time confidence)", "lat")


#: The LAT cells whose response-time distributions a comparison overlays.
QOS_CELLS = ("RND 4k 100/0 R", "RND 4k 65/35 R", "RND 4k 65/35 W", "RND 4k 0/100 W")


class LatencyView(api.View):
    """How Latency results are shown."""

    shows_histograms = True

    # its sections are this module's functions
    report_section = staticmethod(report_section)
    compare_section = staticmethod(compare_section)

    def summary(self, test: api.TestRun) -> Dict[str, api.SummaryValue]:
        return {f.key: api.SummaryValue(f.value) for f in self.kind.headline(test) if f.key != "tracking"}
