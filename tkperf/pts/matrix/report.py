"""The report's view of a block size x R/W mix matrix (IOPS and LAT run
one): its cells, a grid of a figure per cell, the tracking metric of every
block size per round, the SNIA header and a cell's window average."""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

from tkperf.kit.composite import steady_rounds
from tkperf.kit.sections import ReportContext
from tkperf.model.names import iops_workload as workload_name
from tkperf.model.results import RunResult, TestRun, Workload, format_bs, mix_label
from tkperf.render.blocks import Grid, Header
from tkperf.report.header import round_fields, snia_header
from tkperf.report.steady import Convergence, per_round
from tkperf.report.words import NA, metric_display, test_title


def matrix_cells(test: TestRun) -> Dict[Tuple[int, int], str]:
    """(block size, read %) -> workload name, over every round of the test
    but a capture after them (LAT's response-time capture is no cell)."""
    out: Dict[Tuple[int, int], str] = {}
    for r in steady_rounds(test):
        for w in r.workloads:
            out.setdefault((w.bs, w.rwmixread), w.name)
    return out


def window_workloads(test: TestRun, name: str) -> List[Workload]:
    """The workload ``name`` of every round in the measurement window."""
    return [w for r in test.window_rounds() for w in r.workloads if w.name == name]


def matrix_grid(test: TestRun, value: Callable[[str], Optional[float]], unit: str) -> Grid:
    """A block size x R/W mix grid over the cells the test ran: rows smallest
    block size first, columns in PTS order (100/0 first)."""
    found = matrix_cells(test)
    sizes = sorted({bs for bs, _ in found})
    mixes = sorted({mix for _, mix in found}, reverse=True)
    values = tuple(tuple(value(found[(bs, mix)]) if (bs, mix) in found else None for mix in mixes)
                   for bs in sizes)
    return Grid(rows=tuple(format_bs(x) for x in sizes), row_keys=tuple(float(x) for x in sizes),
                  cols=tuple(mix_label(m) for m in mixes), values=values, unit=unit)


def tracking_mix(test: TestRun) -> Optional[int]:
    """The R/W mix of the tracking workload; None where no round ran it."""
    for r in test.rounds:
        w = r.workload(test.tracking_workload)
        if w is not None:
            return w.rwmixread
    return None


def matrix_convergence(test: TestRun) -> Convergence:
    """The tracking metric of every block size at the tracking mix, per round."""
    m = metric_display(test.tracking_metric)
    mix = tracking_mix(test)
    at_mix = {bs: name for (bs, mx), name in matrix_cells(test).items() if mx == mix}
    series = tuple(per_round(test, format_bs(bs), at_mix[bs], test.tracking_metric, lambda v: v * m.scale)
                   for bs in sorted(at_mix))
    what = "mean latency" if m.unit == "µs" else "IOPS"
    title = (f"{test_title(test)}: {what} of every block size at R/W {mix_label(mix)} per round"
             if mix is not None else f"{test_title(test)}: per round")
    return Convergence(title=title, ylabel=m.unit, series=series,
                              rounds=tuple(r.index for r in test.rounds), legend_title="Block size")


def matrix_header(ctx: ReportContext, test: TestRun) -> Header:
    """The SNIA report header of a matrix test: its stimulus and its rounds."""
    p = test.params
    stimulus = (f"RND, R/W mix {p.get('mixes', NA)} (outer loop) x block size "
                f"{p.get('block_sizes', NA)} (inner loop)")
    return snia_header(ctx.run, test, stimulus, round_fields(ctx.run, test))


def cell_average(test: Optional[TestRun], bs: int, mix: int, metric: str) -> Optional[float]:
    """A cell's window average in one run; None where it was not measured."""
    return None if test is None else test.window_average(workload_name(bs, mix), metric)


def first_test(run: RunResult, type_name: str) -> Optional[TestRun]:
    """A run's first test of a type; None where it ran none."""
    tests = run.tests_of(type_name)
    return tests[0] if tests else None
