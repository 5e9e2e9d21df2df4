"""A figure's history as an SVG: one point per run, its window's spread, the levels and change points.

Written as SVG text directly (no matplotlib): a history page of a year of
nights redraws every plot after each new night, and a plot of a few
hundred points is a few kilobytes of markup, written in a millisecond.
Takes plain data, so that nothing here reads a result file; every text
from result files (titles, run names, dates) is escaped and is text only.
The x axis is the run, in time order, labelled with each labelled run's
name or date (:attr:`TrendChart.names`).
"""
from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from tkperf.store import atomic_write

WIDTH, HEIGHT = 760, 320
LEFT, RIGHT, TOP, BOTTOM = 78, 16, 40, 62
#: Most x labels on the axis (a year of nights gets one every few weeks).
X_LABELS = 8
#: Above this many runs the points are drawn without markers.
MARKERS = 120


@dataclass(frozen=True)
class TrendChart:
    """``values`` per run (x: run number from 1); ``lo``/``hi`` the window's
    range (NaN where unknown); ``levels`` (first, end, mean) per segment;
    ``changes`` (index, label) where a new level begins; ``dates`` each
    run's start; ``names`` each run's name (the x axis's labels); ``red``
    the runs (index) whose night the check called red, ``failed`` those
    of them on which this figure itself regressed."""

    title: str
    unit: str
    values: Tuple[float, ...]
    lo: Tuple[float, ...]
    hi: Tuple[float, ...]
    levels: Tuple[Tuple[int, int, float], ...] = ()
    changes: Tuple[Tuple[int, str], ...] = ()
    dates: Tuple[str, ...] = ()
    names: Tuple[str, ...] = ()
    red: Tuple[int, ...] = ()
    failed: Tuple[int, ...] = ()


#: The red nights' marks: a ring round a night the check called red, filled
#: where this figure itself regressed that night.
RED = "#cb181d"


def e(text: object) -> str:
    return html.escape(str(text), quote=True)


def number(value: float) -> str:
    """An axis label: thousands separated, small values with 3 digits."""
    if value == 0:
        return "0"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def ticks(lo: float, hi: float, count: int = 5) -> List[float]:
    """Round values from ``lo`` to ``hi``: steps of 1, 2 or 5 x 10^k."""
    span = hi - lo
    if span <= 0:
        return [lo]
    raw = span / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def _bounds(spec: TrendChart) -> Tuple[float, float]:
    known = [v for v in spec.values + spec.lo + spec.hi if math.isfinite(v)]
    if not known:
        return 0.0, 1.0
    lo, hi = min(known), max(known)
    pad = (hi - lo) * 0.08 or abs(hi) * 0.1 or 1.0
    return lo - pad, hi + pad


def x_label(spec: TrendChart, i: int) -> str:
    name = spec.names[i] if i < len(spec.names) else ""
    date = spec.dates[i][:10] if i < len(spec.dates) else ""
    return name if name and len(spec.values) <= X_LABELS else (date or name or str(i + 1))


def svg(spec: TrendChart) -> str:
    """The chart as SVG text."""
    n = len(spec.values)
    lo, hi = _bounds(spec)
    w, h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(i: float) -> float:
        return LEFT + (w * (i + 0.5) / n if n else 0.0)

    def y(v: float) -> float:
        return TOP + h * (hi - v) / (hi - lo)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="11">',
           f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
           f'<text x="{WIDTH / 2:.0f}" y="20" text-anchor="middle" font-size="13">{e(spec.title)}</text>',
           f'<text x="14" y="{TOP + h / 2:.0f}" text-anchor="middle" '
           f'transform="rotate(-90 14 {TOP + h / 2:.0f})">{e(spec.unit)}</text>']
    for v in ticks(lo, hi):
        out.append(f'<line x1="{LEFT}" x2="{LEFT + w}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#e5e5e5"/>'
                   f'<text x="{LEFT - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{e(number(v))}</text>')
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{w}" height="{h}" fill="none" stroke="#888"/>')
    step = max(1, math.ceil(n / X_LABELS))
    for i in range(0, n, step):
        out.append(f'<line x1="{x(i):.1f}" x2="{x(i):.1f}" y1="{TOP + h}" y2="{TOP + h + 4}" stroke="#888"/>'
                   f'<text x="{x(i):.1f}" y="{TOP + h + 16}" text-anchor="middle">{e(x_label(spec, i)[:24])}</text>')
    span = f", {spec.dates[0][:10]} to {spec.dates[-1][:10]}" if spec.dates and spec.dates[0] else ""
    out.append(f'<text x="{LEFT + w / 2:.0f}" y="{HEIGHT - 28}" text-anchor="middle">'
               f'{e(f"run, in time order ({n}{span})")}</text>')
    for i, (a, b) in enumerate(zip(spec.lo, spec.hi)):
        if math.isfinite(a) and math.isfinite(b):
            out.append(f'<line x1="{x(i):.1f}" x2="{x(i):.1f}" y1="{y(a):.1f}" y2="{y(b):.1f}" '
                       'stroke="#9ecae1" stroke-width="2"/>')
    for first, end, mean in spec.levels:
        out.append(f'<line x1="{x(first - 0.5):.1f}" x2="{x(end - 0.5):.1f}" y1="{y(mean):.1f}" y2="{y(mean):.1f}" '
                   'stroke="#636363" stroke-dasharray="5 3"/>')
    points = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(spec.values) if math.isfinite(v))
    out.append(f'<polyline points="{points}" fill="none" stroke="#08519c" stroke-width="1"/>')
    if n <= MARKERS:
        out += [f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="2.5" fill="#08519c"/>'
                for i, v in enumerate(spec.values) if math.isfinite(v)]
    for i in spec.red:
        if 0 <= i < n and math.isfinite(spec.values[i]):
            cls, fill = ("red-figure", RED) if i in spec.failed else ("red-night", "none")
            out.append(f'<circle class="{cls}" data-run="{i + 1}" cx="{x(i):.1f}" cy="{y(spec.values[i]):.1f}" '
                       f'r="6" fill="{fill}" fill-opacity="0.6" stroke="{RED}" stroke-width="1.5"/>')
    for index, label in spec.changes:
        cx = x(index - 0.5)
        out.append(f'<line x1="{cx:.1f}" x2="{cx:.1f}" y1="{TOP}" y2="{TOP + h}" stroke="#cb181d" stroke-width="1.2"/>'
                   f'<text x="{cx + 3:.1f}" y="{TOP + 12}" fill="#cb181d">{e(label)}</text>')
    out += _legend(spec)
    return "\n".join(out + ["</svg>\n"])


def _legend(spec: TrendChart) -> List[str]:
    """The legend below the chart: the lines, then the red nights' marks where there are any."""
    out: List[str] = []
    legend = [("#08519c", "figure"), ("#9ecae1", "window range"), ("#636363", "level"), ("#cb181d", "change point")]
    marks = [(cls, text) for cls, text, shown in (("red-night", "red night", set(spec.red) - set(spec.failed)),
                                                  ("red-figure", "red: this figure", spec.failed)) if shown]
    gap = (WIDTH - LEFT - RIGHT) / (len(legend) + len(marks)) if marks else 150
    for k, (colour, text) in enumerate(legend):
        lx = LEFT + k * gap
        out.append(f'<line x1="{lx:.0f}" x2="{lx + 18:.0f}" y1="{HEIGHT - 10}" y2="{HEIGHT - 10}" stroke="{colour}" '
                   f'stroke-width="2"/><text x="{lx + 22:.0f}" y="{HEIGHT - 6}">{text}</text>')
    for k, (cls, text) in enumerate(marks, len(legend)):
        lx = LEFT + k * gap
        fill = RED if cls == "red-figure" else "none"
        out.append(f'<circle class="legend-{cls}" cx="{lx + 9:.0f}" cy="{HEIGHT - 10}" r="6" fill="{fill}" '
                   f'fill-opacity="0.6" stroke="{RED}" stroke-width="1.5"/><text x="{lx + 22:.0f}" '
                   f'y="{HEIGHT - 6}">{text}</text>')
    return out


def trend(path: str, spec: TrendChart) -> str:
    atomic_write(path, svg(spec).encode("utf-8"))
    return path


def draw_all(jobs: Sequence[Tuple[str, TrendChart]]) -> Optional[str]:
    """Draw every (path, chart); the last path written."""
    last = None
    for path, spec in jobs:
        last = trend(path, spec)
    return last
