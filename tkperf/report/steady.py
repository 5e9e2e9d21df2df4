"""Steady state as a reader sees it: the verdict of a test, where its
figures were measured, its convergence and its measurement window (a chart
and a table each).

Every round-based test type shows these the same way; a test type decides
only *which* lines its convergence chart has (:class:`Convergence`).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable, List, Optional, Tuple

from tkperf.kit import registry
from tkperf.kit.rules import steps_of
from tkperf.model.results import RunResult, TestRun
from tkperf.model.steadystate import DATA_EXCURSION, SLOPE_EXCURSION, WINDOW, SteadyState
from tkperf.render import blocks as b
from tkperf.report.words import (
    NA,
    fmt,
    metric_display,
    round1_after,
    short_verdict,
    shown_figure,
    test_title,
    tracking_label,
    verdict,
    window_checks,
)


def run_window(run: RunResult) -> int:
    """The run's steady-state window (rounds), as stored in its options."""
    w = run.options.get("window", str(WINDOW))
    return int(w) if w.isdigit() and int(w) >= 2 else WINDOW


def steady_state(test: TestRun, window: int = WINDOW) -> Optional[SteadyState]:
    """The recorded verdict, or one computed from the rounds (older or partial files)."""
    if test.steady is not None:
        return test.steady
    if test.tracking_values():
        return test.evaluate(window)
    return None


#: What :func:`window_definition` says after the test's short name.
STEADY_WINDOW = "steady-state window average"
_LAST_ROUNDS = re.compile(r"(.+): mean of the last (\d+) rounds, NO steady state")


def window_definition(short: str, test: TestRun) -> str:
    """What a round-based test's window figures are, for a comparison to set
    like beside like: 'IOPS: steady-state window average', or for a test that
    reached no steady state 'IOPS: mean of the last 5 rounds, NO steady state'
    (another definition: such a figure may still be drifting)."""
    s = steady_state(test)
    if s is not None and s.rounds and not s.steady:
        return f"{short}: mean of the last {len(s.rounds)} rounds, NO steady state"
    return f"{short}: {STEADY_WINDOW}"


def window_ending(definition: str) -> Optional[Tuple[str, str]]:
    """A :func:`window_definition` read back: (the test's short name, how
    its window ended: 'steady' or 'NOT steady, last 5 rounds'); None for
    any other definition (an XSR phase level, an imported figure's)."""
    m = _LAST_ROUNDS.fullmatch(definition)
    if m:
        return m.group(1), f"NOT steady, last {m.group(2)} rounds"
    if definition.endswith(f": {STEADY_WINDOW}"):
        return definition[:-len(f": {STEADY_WINDOW}")], "steady"
    return None


def window_source(test: TestRun) -> str:
    """Where a test's figures were measured: 'IOPS rounds 3-7, steady'."""
    s = steady_state(test)
    if s is None or not s.rounds:
        return f"{test_title(test)}: no rounds"
    state = "steady" if s.steady else "NOT steady"
    return f"{test_title(test)} rounds {s.first_round}-{s.last_round}, {state}"


@dataclass(frozen=True)
class Convergence:
    """Per round, the value of every line the convergence chart shows."""

    title: str
    ylabel: str
    series: Tuple[b.Series, ...]
    rounds: Tuple[int, ...]
    legend_title: str = ""


def per_round(test: TestRun, label: str, workload: Optional[str], metric: str,
              convert: Callable[[float], float] = float) -> b.Series:
    """One line of a convergence chart: ``metric`` of ``workload`` in every
    round (nan where the round lacks it), in display units by ``convert``."""
    ys = []
    for r in test.rounds:
        w = r.workload(workload) if workload is not None else None
        ys.append(math.nan if w is None else convert(w.metric(metric)))
    return b.Series(label, tuple(float(r.index) for r in test.rounds), tuple(ys))


def tracking_convergence(test: TestRun) -> Convergence:
    """The tracking figure's kind (IOPS, MB/s, mean latency: the metric
    without its direction) of every workload of the test, per round."""
    metric = test.tracking_metric.rsplit(".", 1)[-1]
    m = metric_display(metric)
    series = tuple(per_round(test, name, name, metric, lambda v: v * m.scale) for name in test.workload_names())
    return Convergence(title=f"{test_title(test)}: {m.unit} of every workload per round", ylabel=m.unit,
                       series=series, rounds=tuple(r.index for r in test.rounds), legend_title="Workload")


def convergence_blocks(ctx, test: TestRun, conv: Convergence, level: int) -> list:
    """The convergence section (``ctx``: the report's context): the chart,
    the window shaded, and its table."""
    if not conv.rounds or not conv.series:
        return []
    s = steady_state(test)
    window = tuple(s.rounds) if s is not None else ()
    # a window of every round shades the whole plot and marks nothing: no band then
    every = bool(window) and set(conv.rounds) <= set(window)
    spec = b.ConvergenceChart(conv.series, conv.ylabel, conv.title, () if every else window, conv.legend_title)
    said = (f"the measurement window is every round ({window[0]}-{window[-1]}), so no band is shaded"
            if every else "the shaded band is the measurement window")
    headers = ["Round"] + [f"{x.label} ({conv.ylabel})" for x in conv.series]
    rows = []
    for i, rnd in enumerate(conv.rounds):
        mark = " *" if rnd in window else ""
        rows.append([f"{rnd}{mark}"] + [fmt(None if math.isnan(x.y[i]) else x.y[i], conv.ylabel)
                                        for x in conv.series])
    return [b.Heading("Steady-state convergence", level, room_cm=10),
            ctx.chart(test, "convergence", spec,
                  f"{conv.title} ({conv.ylabel}); {said}."),
            b.table(headers, rows, title=f"{conv.title} (* = measurement window)",
                    widths=[10] + [13] * len(conv.series))]


def window_view(test: TestRun, window: int = WINDOW) -> Optional[b.WindowChart]:
    """The tracking variable and its window, ready to draw; None before any round."""
    s = steady_state(test, window)
    pairs = test.tracking_values()
    if s is None or not pairs:
        return None
    m = metric_display(test.tracking_metric)
    return b.WindowChart(
        title=f"{test_title(test)} measurement window: {tracking_label(test)}",
        ylabel=m.unit, rounds=tuple(p[0] for p in pairs),
        values=tuple(p[1] * m.scale for p in pairs), window_rounds=tuple(s.rounds),
        window_values=tuple(v * m.scale for v in s.values), average=s.average * m.scale,
        slope=s.slope * m.scale, intercept=s.intercept * m.scale,
        verdict=short_verdict(s))


def window_blocks(ctx, test: TestRun, level: int) -> list:
    """The measurement-window section: the chart and the 20/10 checks as a
    table, once per tracking variable when the steady state needs several
    (PTS 2.0 IOPS: ``iops-window-rnd-4k-0-100.png`` and so on), each with its
    own verdict, after a line naming the ones that failed."""
    steps = steps_of(registry.get(test.type), test)
    variables = steps.tracking_variables(test)
    if not variables:
        return _window_blocks(ctx, test, level, "window", "Measurement window")
    failed = steps.unsteady_variables(test)
    s = steady_state(test)
    names = ", ".join(v.tracking_label for v in variables)
    said = (f"Steady state needs all {len(variables)} tracking variables ({names}) to pass 20/10 "
            "in the same window. " + (f"Not steady: {', '.join(failed)}." if failed else
                                      ("All passed." if s is not None and s.steady else "")))
    out: list = [b.Heading("Measurement window", level, room_cm=10), b.Paragraph(said.strip())]
    for v in variables:
        out += _window_blocks(ctx, v, level + 1, f"window-{v.tracking_workload}",
                              f"Measurement window: {tracking_label(v)}")
    return out


def named_window_blocks(ctx, test: TestRun, level: int, what: str, heading: str) -> list:
    """The measurement-window chart (``what`` names its file) and 20/10 table of ``test``'s tracking
    figure under ``heading``: for a phase a test type keeps apart (DIRTH/CBW's preconditioning)."""
    return _window_blocks(ctx, test, level, what, heading)


def _window_blocks(ctx, test: TestRun, level: int, what: str, heading: str) -> list:
    view = window_view(test)
    s = steady_state(test)
    if view is None or s is None:
        return []
    unit = view.ylabel
    scale = metric_display(test.tracking_metric).scale
    avg = s.average
    rows: List[List[str]] = [
        ["Window", f"rounds {s.first_round}-{s.last_round}" if s.rounds else NA, ""],
        ["Average", fmt(avg * scale, unit), unit],
        ["Range (max - min)", fmt(s.range * scale, unit),
         f"{unit}; {s.range / avg:.1%} of average, limit {DATA_EXCURSION:.0%}" if avg else unit],
        ["Least-squares slope", f"{s.slope * scale:,.4g}", f"{unit} per round"],
        ["Least-squares intercept", f"{s.intercept * scale:,.6g}", unit],
        ["Slope excursion", fmt(s.slope_excursion * scale, unit),
         f"{unit}; {s.slope_excursion / avg:.1%} of average, limit {SLOPE_EXCURSION:.0%}" if avg else unit],
        ["Verdict", verdict(test, s), ""],
    ]
    for rnd, val in zip(s.rounds, s.values):
        rows.append([f"Round {rnd}", fmt(val * scale, unit), unit])
    return [b.Heading(heading, level, room_cm=10),
            ctx.chart(test, what, view,
                  f"{view.title}: {verdict(test, s)}; {window_checks(s)}. Dotted: 110% and 90% "
                  "of the window average (a range within 20% of the average lies between them); "
                  "dashed: least-squares line over the window (its excursion must stay within 10%)."),
            b.table(["Measurement window", "Value", "Unit / check"], rows,
                    title=f"Steady-state check of {tracking_label(test)}", widths=[26, 26, 48])]


def fob_blocks(test: TestRun, level: int) -> list:
    """The first figures beside their steady-state values: fresh out of box
    (after the purge, before any preconditioning) or, for a test that ran a
    WIPC first, round 1 after the WIPC, named so; nothing without either."""
    kind = registry.get(test.type)
    if kind is None:
        return []
    steps = steps_of(kind, test)
    fob = steps.fob(kind.headline, test)
    first = fob or steps.round1_after_wipc(kind.headline, test)
    if not first:
        return []
    steady = {f.key: f for f in kind.headline(test)}
    rows = []
    for f in first:
        s = steady.get(f.key)
        change = (f"{(s.value - f.value) / f.value * 100:+.1f}%" if s is not None and f.value else NA)
        rows.append([f.label, shown_figure(f), shown_figure(s) if s is not None else NA, change])
    window = f"Steady state ({window_source(test)})"
    if fob:
        step = "round 1" if test.rounds else f"the first {steps.unit}"
        return [b.Heading("Fresh out of box and steady state", level),
                b.table(["Figure", f"FOB ({step})", window, "Change"], rows,
                        title="The headline figures as first measured after the purge, before any "
                        "preconditioning, and over the window", widths=[26, 24, 34, 16])]
    after = round1_after(test)
    return [b.Heading(f"Round 1 ({after}) and steady state", level),
            b.table(["Figure", f"Round 1, {after}", window, "Change"], rows,
                    title=f"The headline figures of round 1, measured {after.replace('WIPC', 'the WIPC', 1)} "
                    "(so not fresh out of box), and over the window", widths=[26, 24, 34, 16])]


def steady_sections(ctx, test: TestRun, conv: Convergence, level: int) -> list:
    """FOB beside steady state, convergence, then the measurement window."""
    return (fob_blocks(test, level) + convergence_blocks(ctx, test, conv, level)
            + window_blocks(ctx, test, level))
