"""How Throughput results are shown: per block size its SEQ 100% W and
100% R MB/s, convergence and measurement window, then all block sizes in
one table and bar chart; in a comparison, W and R MB/s per block size."""
from __future__ import annotations

from typing import Callable, Dict, Optional, Sequence

from tkperf import api
from tkperf.pts import (
    NA,
    BarsChart,
    Chart,
    Convergence,
    Grid,
    Header,
    Panel,
    grid_table,
    mb,
    open_test,
    per_round,
    round_fields,
    snia_header,
    steady_sections,
    window_source,
)
from tkperf.testtypes.throughput import SUMMARY_BS, ThroughputTest, block_size, workload_name

SIDES = (("w", "SEQ 100% W", "write.bw_bytes"), ("r", "SEQ 100% R", "read.bw_bytes"))


def size_label(test: api.TestRun) -> str:
    return test.params.get("block_size", api.format_bs(block_size(test)))


def average_mb_s(test: api.TestRun, side: str) -> Optional[float]:
    bs = block_size(test)
    v = test.window_average(workload_name(bs, side), "bw_bytes") if bs else None
    return None if v is None else mb(v)


def tp_grid(tests: Sequence[api.TestRun]) -> Grid:
    """Window-average MB/s of SEQ 100% W and 100% R per TP block size."""
    tests = sorted(tests, key=block_size)
    return Grid(rows=tuple(size_label(t) for t in tests), row_keys=tuple(float(block_size(t)) for t in tests),
                cols=("100% W", "100% R"),
                values=tuple((average_mb_s(t, "w"), average_mb_s(t, "r")) for t in tests),
                unit="MB/s", col_title="SEQ")


def convergence(test: api.TestRun) -> Convergence:
    """The write and read MB/s of the block size, per round."""
    bs = block_size(test)
    series = tuple(per_round(test, label, workload_name(bs, side) if bs else None, key, mb)
                   for side, label, key in SIDES)
    return Convergence(title=f"TP {test.params.get('block_size', '')}: MB/s per round", ylabel="MB/s",
                       series=series, rounds=tuple(r.index for r in test.rounds))


def tp_header(ctx: api.ReportContext, test: api.TestRun) -> Header:
    bs = test.params.get("block_size", NA)
    return snia_header(ctx.run, test, f"SEQ {bs} 100% W, then SEQ {bs} 100% R",
                       round_fields(ctx.run, test))


def report_section(ctx: api.ReportContext, tests: Sequence[api.TestRun]) -> list:
    out: list = [api.Heading(ThroughputTest.title)]
    tests = sorted(tests, key=block_size)
    for t in tests:
        opening, measured = open_test(t, f"{ThroughputTest.title} {t.params.get('block_size', '')}",
                                      tp_header(ctx, t), level=2)
        out += opening
        if not measured:
            continue
        out.append(grid_table(tp_grid([t]), f"SEQ {t.params.get('block_size', '')} MB/s, "
                              f"{window_source(t)}", corner="Block size"))
        out += steady_sections(ctx, t, convergence(t), 3)
    with_rounds = [t for t in tests if t.rounds]
    if with_rounds:
        g = tp_grid(with_rounds)
        out += [api.Heading("Throughput by block size", 2, room_cm=10),
                grid_table(g, "Average MB/s over each block size's measurement window", corner="Block size"),
                Chart("tp-by-bs.png",
                      BarsChart((Panel(g, "SEQ throughput by block size", "Throughput (MB/s)"),)),
                      "Sequential throughput in MB/s (decimal) per block size, 100% W and 100% R.")]
    return out


def tp_grids(ctx: api.CompareContext):
    """SEQ write and read MB/s per block size (rows) and run (columns)."""
    sizes = sorted({block_size(t) for r in ctx.runs for t in r.tests_of(ThroughputTest.name) if t.rounds})

    def test_of(run: api.RunResult, bs: int) -> Optional[api.TestRun]:
        return next((t for t in run.tests_of(ThroughputTest.name) if block_size(t) == bs), None)

    def value(side: str) -> Callable[[int, int], Optional[float]]:
        def get(i: int, j: int) -> Optional[float]:
            t = test_of(ctx.runs[j], sizes[i])
            return None if t is None else average_mb_s(t, side)
        return get

    rows = [(api.format_bs(x), float(x)) for x in sizes]
    return (ctx.by_runs(rows, value("w"), "MB/s", "Block size"),
            ctx.by_runs(rows, value("r"), "MB/s", "Block size"))


def compare_section(ctx: api.CompareContext, runs: Sequence[api.RunResult], labels: Sequence[str]) -> list:
    write, read = tp_grids(ctx)
    return ctx.paired(ThroughputTest.title, "tp.png", "Throughput (MB/s)",
                      (write, "SEQ 100% W", "MB/s"), (read, "SEQ 100% R", "MB/s"),
                      "Sequential throughput in MB/s (decimal) per block size, one bar per run.")


class ThroughputView(api.View):
    """How Throughput results are shown."""

    # its sections are this module's functions
    report_section = staticmethod(report_section)
    compare_section = staticmethod(compare_section)

    def instance_title(self, test: api.TestRun) -> str:
        return f"TP {test.params.get('block_size', '')}".strip()

    def summary(self, test: api.TestRun) -> Dict[str, api.SummaryValue]:
        if block_size(test) != SUMMARY_BS:
            return {}
        return {f.key: api.SummaryValue(f.value) for f in self.kind.headline(test)}
