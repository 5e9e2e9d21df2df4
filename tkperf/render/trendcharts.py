"""A figure's history as a PNG: one point per run, its window's spread, the levels and change points.

Drawn like the report's charts (:mod:`tkperf.render.charts`: Agg without
pyplot, the same size and style).  Takes plain data, so that nothing here
reads a result file; text from result files is drawn as plain text
(a ``$`` never starts matplotlib's math mode).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence, Tuple

import numpy as np
from matplotlib.ticker import FuncFormatter, MaxNLocator

from tkperf.render.plotting import _draw, _figure, _legend_below, _thousands, _wrap_title


@dataclass(frozen=True)
class TrendChart:
    """``values`` per run (x: run number from 1); ``lo``/``hi`` the window's
    range (NaN where unknown); ``levels`` (first, end, mean) per segment;
    ``changes`` (index, label) where a new level begins."""

    title: str
    unit: str
    values: Tuple[float, ...]
    lo: Tuple[float, ...]
    hi: Tuple[float, ...]
    levels: Tuple[Tuple[int, int, float], ...] = ()
    changes: Tuple[Tuple[int, str], ...] = ()
    dates: Tuple[str, ...] = ()


def plain(text: str) -> str:
    """Text matplotlib draws as it is: no math mode."""
    return text.replace("$", r"\$")


def trend(path: str, spec: TrendChart) -> str:
    def build():
        fig, (ax,) = _figure()
        x = np.arange(1, len(spec.values) + 1)
        y = np.asarray(spec.values, dtype=float)
        lo, hi = np.asarray(spec.lo, dtype=float), np.asarray(spec.hi, dtype=float)
        known = np.isfinite(lo) & np.isfinite(hi)
        if known.any():
            ax.vlines(x[known], lo[known], hi[known], color="#9ecae1", linewidth=2, label="window range")
        ax.plot(x, y, marker="o", markersize=2.5 if y.size > 60 else 4, linewidth=0.8, color="#08519c",
                label="figure")
        for first, end, mean in spec.levels:
            ax.hlines(mean, first + 0.5, end + 0.5, colors="#636363", linestyles="dashed", linewidth=1)
        for i, (index, label) in enumerate(spec.changes):
            ax.axvline(index + 0.5, color="#cb181d", linewidth=1.2, label="change point" if i == 0 else None)
            ax.annotate(plain(label), (index + 0.5, 1.0), xycoords=("data", "axes fraction"), fontsize=7,
                        color="#cb181d", ha="left", va="top", rotation=90)
        ax.set_title(_wrap_title(plain(spec.title)))
        span = f", {spec.dates[0][:10]} to {spec.dates[-1][:10]}" if spec.dates and spec.dates[0] else ""
        ax.set_xlabel(plain(f"run (in time order{span})"))
        ax.set_ylabel(plain(spec.unit))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
        _legend_below(fig, [ax])  # never over the data
        return fig

    return _draw(path, build)


def draw_all(jobs: Sequence[Tuple[str, TrendChart]]) -> Optional[str]:
    """Draw every (path, chart); the last path written."""
    last = None
    for path, spec in jobs:
        last = trend(path, spec)
    return last
