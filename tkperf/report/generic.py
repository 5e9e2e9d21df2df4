"""Sections for test types that do not write their own (plug-ins), and for
tests whose type is not installed.

The report shows a test type through its view (:func:`view_of`): the
type's own :class:`~tkperf.kit.base.View`, or :class:`GenericView`,
whose report section is :func:`report_section`: per test instance the SNIA header, the headline
figures, a table of every workload's window averages (IOPS, MB/s, mean
latency) and, for round-based tests, the steady-state convergence and
measurement window; for a stream (a series of intervals, no rounds), IOPS
per interval.  Its default comparison section, :func:`compare_section`,
sets the headline figures of the runs side by side.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

import numpy as np

from tkperf.kit import registry
from tkperf.kit.adapter import Api2View
from tkperf.kit.base import TestType, View
from tkperf.kit.sections import CompareContext, ReportContext
from tkperf.model.results import RunResult, TestRun, mb
from tkperf.render import blocks as b
from tkperf.report import header, steady
from tkperf.report.words import NA, fmt, is_stream, plural, seeks_steady_state, shown_unit, test_title, unit_of


def _header(ctx: ReportContext, test: TestRun) -> b.Header:
    stimulus = test.params.get("access", NA)
    if is_stream(test):
        return header.snia_header(ctx.run, test, stimulus, header.stream_fields(test),
                                  without_wipc="none recorded", wdpc="none")
    return header.snia_header(ctx.run, test, stimulus, header.round_fields(ctx.run, test))


def workload_table(test: TestRun) -> Optional[b.Table]:
    """Every workload's averages over the measurement window; None without rounds."""
    names = test.workload_names()
    if not names:
        return None
    rows = []
    for name in names:
        v_iops = test.window_average(name, "iops")
        v_bw = test.window_average(name, "bw_bytes")
        v_lat = test.window_average(name, "lat_mean_us")
        rows.append([name, fmt(v_iops, "IOPS"), fmt(None if v_bw is None else mb(v_bw), "MB/s"),
                     fmt(v_lat, "µs")])
    return b.table(["Workload", "IOPS", "MB/s", "Mean latency (µs)"], rows,
                   title=f"Every workload's averages, {steady.window_source(test)}", widths=[40, 20, 20, 20])


def headline_table(kind, test: TestRun) -> Optional[b.Table]:
    figures = kind.headline(test)
    if not figures:
        return None
    rows = [[f.label, f.text.format(f.value), shown_unit(f.unit), f.better or ""] for f in figures]
    return b.table(["Figure", "Value", "Unit", "Better"], rows, title=f"{test_title(test)}: headline figures",
                   widths=[40, 25, 15, 20])


def stream_blocks(ctx: ReportContext, test: TestRun) -> list:
    """IOPS per interval of every series that has them: a chart and the first
    and last intervals."""
    out: list = []
    for name, s in test.series.items():
        if "iops" not in s.columns or not len(s):
            continue
        y = s.column("iops")
        x = np.cumsum(s.column("fio_s")) if "fio_s" in s.columns else np.arange(1, len(s) + 1, dtype=float)
        spec = b.CurvesChart((b.Curve(ctx.run.name, x, y),), "Time" if "fio_s" in s.columns else unit_of(test),
                             "IOPS", f"{test_title(test)}: IOPS per {unit_of(test)}", time_axis="fio_s" in s.columns)
        out += [b.Heading(f"IOPS per {unit_of(test)} ({name})", 2, room_cm=10),
                ctx.chart(test, f"{name}-iops", spec, f"{test_title(test)}: IOPS of each {unit_of(test)}."),
                b.table(["Figure", "Value", "Unit"], [
                    [unit_of(test).capitalize() + "s", str(len(s)), ""],
                    ["First", fmt(float(y[0])), "IOPS"],
                    ["Highest", fmt(float(y.max())), "IOPS"],
                    ["Lowest", fmt(float(y.min())), "IOPS"],
                    ["Last", fmt(float(y[-1])), "IOPS"],
                ], title=f"IOPS per {unit_of(test)} ({name})", widths=[40, 30, 30])]
    return out


def report_section(kind, ctx: ReportContext, tests: Sequence[TestRun]) -> list:
    """The generic section of test type ``kind``: a heading, then per instance
    (under its own heading when there are several) its header and figures."""
    out: list = [b.Heading(kind.title or kind.name)]
    level = 2 if len(tests) > 1 else 1
    for test in tests:
        opening, measured = header.open_test(test, test_title(test), _header(ctx, test), level)
        out += opening[1:] if level == 1 else opening
        if not measured:
            continue
        out += [x for x in (headline_table(kind, test), workload_table(test)) if x is not None]
        if test.rounds and seeks_steady_state(test) and test.tracking_metric:
            out += steady.steady_sections(ctx, test, steady.tracking_convergence(test), level + 1)
        elif test.rounds:  # no tracking figure (a sweep, a single pass): no steady state to show
            out += [b.Paragraph(f"{test_title(test)} tracks no figure for a steady state: its rounds are shown "
                                "as measured."), _rounds_table(test)]
        else:
            out += stream_blocks(ctx, test)
    return out


def _rounds_table(test: TestRun) -> Optional[b.Table]:
    if not test.rounds:
        return None
    rows = [[str(r.index), r.started or NA, f"{r.fio_s:,.1f}", str(len(r.workloads))] for r in test.rounds]
    return b.table(["Round", "Started", "fio time (s)", "Workloads"], rows,
                   title=f"{test_title(test)}: every round", widths=[12, 40, 24, 24])


def not_installed(type_name: str) -> b.Admonition:
    return b.Admonition("note", (f"test type {type_name} is not installed; install it to see its own figures",))


def missing_section(ctx: ReportContext, type_name: str, tests: Sequence[TestRun]) -> list:
    """Tests of a type that is not installed: their common parts (the header,
    their rounds and window averages) and a note saying what is missing."""
    out: list = [b.Heading(type_name.upper()), not_installed(type_name)]
    for test in tests:
        opening, measured = header.open_test(test, f"{test.key} (type {type_name})", _header(ctx, test), 2)
        out += opening
        if measured:
            out += [x for x in (workload_table(test), _rounds_table(test)) if x is not None]
            if test.series:
                out.append(b.Paragraph("Stored series: " + ", ".join(
                    f"{name} ({plural(len(s), 'row')})" for name, s in test.series.items()) + "."))
    return out


def _compared_keys(kind, runs: Sequence[RunResult]) -> List[str]:
    """The keys of ``kind``'s tests in any of the runs, in the order first seen."""
    keys: List[str] = []
    for run in runs:
        keys += [t.key for t in run.tests_of(kind.name) if t.key not in keys]
    return keys


Row = Tuple[str, List[Optional[float]], List[str]]


def _figure_rows(kind, found: Sequence[Optional[TestRun]]) -> List[Row]:
    """One test instance's headline figures in the runs (``found``: the
    instance per run, None where a run lacks it), a row per figure."""
    first = next((t for t in found if t is not None), None)
    if first is None:
        return []  # (never: the key came from one of the runs)
    figures = [{f.key: f for f in kind.headline(t)} if t is not None else {} for t in found]
    order: List[str] = []
    for fs in figures:
        order += [k for k in fs if k not in order]
    rows: List[Row] = []
    for fkey in order:
        some = next(fs[fkey] for fs in figures if fkey in fs)
        rows.append((f"{test_title(first)} {some.label} ({shown_unit(some.unit)})".replace(" ()", ""),
                     [fs[fkey].value if fkey in fs else None for fs in figures],
                     [fs[fkey].text.format(fs[fkey].value) if fkey in fs else NA for fs in figures]))
    return rows


def compare_section(kind, ctx: CompareContext, runs: Sequence[RunResult], labels: Sequence[str]) -> list:
    """The headline figures of every run side by side, a row per instance and figure."""
    rows: List[Row] = []
    for key in _compared_keys(kind, runs):
        rows += _figure_rows(kind, [run.test(key) for run in runs])
    if not rows:
        return []
    return [b.Heading(kind.title or kind.name),
            ctx.numbers_table("Figure", rows, f"{kind.title or kind.name}: headline figures, side by side")]


def missing_compare(ctx: CompareContext, type_names: Sequence[str]) -> list:
    """One note per test type some run has but this installation lacks."""
    out: list = []
    for name in type_names:
        out += [b.Heading(name.upper()), not_installed(name)]
    return out


class GenericView(View):
    """tkperf's generic sections, for a test type without a view of its own."""

    def report_section(self, ctx: ReportContext, tests: Sequence[TestRun]) -> list:
        return report_section(self.kind, ctx, tests)

    def compare_section(self, ctx: CompareContext, runs: Sequence[RunResult], labels: Sequence[str]) -> list:
        return compare_section(self.kind, ctx, runs, labels)


def view_of(kind: TestType) -> View:
    """The view of ``kind``, built with it: its own, else the generic one
    (which also shows what an API 2 type's own view leaves out)."""
    generic = GenericView(kind)
    own = registry.view_class(kind)
    if own is None:
        return generic
    view = own(kind)
    if isinstance(view, Api2View):
        view.generic = generic
    return view
