"""Drawings of the x/y chart specs: sweeps and curves (:class:`XYChart`),
response-time histograms (:class:`HistogramChart`) and confidence ("nines")
plots (:class:`ConfidenceChart`).

Same plumbing and style as :mod:`tkperf.render.charts` (which dispatches
here): one PNG per spec, legends below the axes, Agg without pyplot.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List

from tkperf.render.mpl import matplotlib  # first: no settings file of the caller's (tkperf/render/mpl.py)

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter  # noqa: E402

from tkperf.render.blocks import ConfidenceChart, Curve, HistogramChart, XYChart  # noqa: E402
from tkperf.render.plotting import (  # noqa: E402
    DENSE_POINTS,
    MANY_MARKERS,
    _draw,
    _figure,
    _legend_below,
    _thousands,
    _time_unit,
    _wrap_title,
)


def _check(curves) -> None:
    for c in curves:
        if np.shape(c.x) != np.shape(c.y):
            raise ValueError(f"curve {c.label!r}: {np.size(c.x)} x values for {np.size(c.y)} y values")


def _number(value: float, _pos: int = 0) -> str:
    """Axis text for sweep positions and times: 1, 2, 128, 0.5, 1,024."""
    if value >= 1000:
        return f"{value:,.0f}"
    return f"{value:g}"


def xy(path: str, spec: XYChart) -> str:
    """Curves of y over x with markers (lines unless ``dots``)."""
    _check(spec.curves)

    def build() -> Figure:
        fig, (ax,) = _figure()
        shown = [c for c in spec.curves if np.size(c.y)]
        longest = max((float(np.nanmax(c.x)) for c in shown), default=0.0)
        scale, unit = _time_unit(longest) if spec.time_axis else (1.0, "")
        for i, c in enumerate(shown):
            x = np.asarray(c.x, dtype=float) / scale
            y = np.asarray(c.y, dtype=float)
            dense = y.size > DENSE_POINTS
            if spec.dots:
                ax.plot(x, y, linestyle="none", marker=".", markersize=1.2 if dense else 2.5,
                        color=f"C{i % 10}", label=c.label, rasterized=y.size > MANY_MARKERS)
            else:
                ax.plot(x, y, linewidth=1.1, marker="o" if y.size <= 200 else None, markersize=3.2,
                        color=f"C{i % 10}", label=c.label, rasterized=dense)
        box = dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor="none", alpha=0.8)
        for label, value in spec.hlines:
            ax.axhline(value, color="0.35", linestyle=(0, (4, 3)), linewidth=0.9)
            ax.annotate(label, (1.0, value), xycoords=("axes fraction", "data"), ha="right",
                        va="bottom", fontsize=7, color="0.25", bbox=box)
        for label, value in spec.vlines:
            ax.axvline(value / scale, color="tab:red", linestyle=(0, (4, 3)), linewidth=0.9)
            ax.annotate(label, (value / scale, 1.0), xycoords=("data", "axes fraction"), ha="left",
                        va="top", fontsize=7, color="tab:red", bbox=box, xytext=(3, -2),
                        textcoords="offset points")
        if spec.xlog:
            ax.set_xscale("log", base=spec.xlog)
        if spec.ylog:
            ax.set_yscale("log", base=spec.ylog)
        if spec.xticks:
            ax.xaxis.set_major_locator(FixedLocator([t / scale for t in spec.xticks]))
            ax.xaxis.set_major_formatter(FuncFormatter(_number))
            ax.xaxis.set_minor_formatter(NullFormatter())
            lo, hi = min(spec.xticks) / scale, max(spec.xticks) / scale
            if spec.xlog:
                ax.set_xlim(lo / 1.3, hi * 1.3)
            elif hi > lo:
                pad = (hi - lo) * 0.04
                ax.set_xlim(lo - pad, hi + pad)
        elif spec.time_axis:
            ax.set_xlim(left=0)
        else:
            ax.xaxis.set_major_formatter(FuncFormatter(_thousands))
            if not spec.xlog and all(float(np.nanmin(c.x)) >= 0 for c in shown if np.size(c.x)):
                ax.set_xlim(left=0)
        low, high = spec.ylim
        if spec.ylog:
            low = None if low is not None and low <= 0 else low
        if low is not None or high is not None:
            ax.set_ylim(bottom=low, top=high)
        ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
        if spec.ylog:
            # labels at 1, 2 and 5 of every decade (a log axis of one label
            # per decade reads badly over less than three decades); minor
            # ticks labelled only while the axis spans less than about a decade
            lo_y, hi_y = ax.get_ylim()
            decades = np.log(hi_y / lo_y) / np.log(spec.ylog) if lo_y > 0 else 99.0
            if spec.ylog == 10 and 1.2 <= decades < 3:
                ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
                ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
            ax.yaxis.set_minor_formatter(FuncFormatter(_thousands) if decades < 1.2 else NullFormatter())
        ax.set_xlabel(f"{spec.xlabel} ({unit})" if unit else spec.xlabel)
        if spec.top_axis and spec.top_axis[1] > 0:
            per = float(spec.top_axis[1]) / scale
            top = ax.secondary_xaxis("top", functions=(lambda v: v / per, lambda v: v * per))
            top.set_xlabel(spec.top_axis[0])
            top.xaxis.set_major_formatter(FuncFormatter(_number))
        ax.set_ylabel(spec.ylabel)
        ax.set_title(_wrap_title(spec.title))
        if len(shown) > 1 or spec.legend_title:
            _legend_below(fig, [ax], title=spec.legend_title)
        if not shown:
            ax.text(0.5, 0.5, "no data", transform=ax.transAxes, ha="center", va="center", color="0.4")
        return fig

    return _draw(path, build)


def histogram(path: str, spec: HistogramChart) -> str:
    """Share of each curve's I/Os per response-time bin, as steps over a log
    time axis (fio's bins are log-spaced: equal widths on this axis)."""
    _check(spec.curves)

    def build() -> Figure:
        fig, (ax,) = _figure()
        for i, c in enumerate(spec.curves):
            x = np.asarray(c.x, dtype=float)
            y = np.asarray(c.y, dtype=float)
            if not y.size or y.sum() <= 0:
                continue
            share = y / y.sum() * 100.0
            ax.step(x, share, where="mid", linewidth=1.0, color=f"C{i % 10}",
                    label=f"{c.label} ({int(y.sum()):,} I/Os)")
            ax.fill_between(x, share, step="mid", alpha=0.12, color=f"C{i % 10}")
        ax.set_ylim(bottom=0)
        _log_time_axis(fig, ax, spec.xlabel, "Share of I/Os per bin (%)", spec.title)
        return fig

    return _draw(path, build)


def _log_time_axis(fig: Figure, ax, xlabel: str, ylabel: str, title: str) -> None:
    """A response-time axis (log, plain numbers), the labels and the legend below."""
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(_number))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(_wrap_title(title))
    _legend_below(fig, [ax])


def _nines(share: np.ndarray) -> np.ndarray:
    """A completed share on the nines scale: 0.9 -> 1, 0.99 -> 2, 0.999 -> 3."""
    left = np.clip(1.0 - np.asarray(share, dtype=float), 1e-9, 1.0)
    return -np.log10(left)


def confidence(path: str, spec: ConfidenceChart) -> str:
    """Share of I/Os completed within each response time, on a nines axis;
    the marked percentiles as dotted lines across."""
    _check(spec.curves)

    def build() -> Figure:
        fig, (ax,) = _figure()
        top = 1.0
        for i, c in enumerate(spec.curves):
            x = np.asarray(c.x, dtype=float)
            y = np.asarray(c.y, dtype=float)
            if not y.size:
                continue
            # The last bin holds the slowest I/O: share 1.0, infinitely many nines;
            # it is drawn at the nines the sample size can resolve.
            n = _nines(y)
            finite = n[y < 1.0]
            cap = (float(finite.max()) + 0.5) if finite.size else 1.0
            n = np.minimum(n, cap)
            top = max(top, cap)
            ax.step(x, n, where="post", linewidth=1.2, color=f"C{i % 10}", label=c.label)
        ticks: List[float] = [0.0] + [float(k) for k in range(1, int(np.ceil(top)) + 1)]
        ax.yaxis.set_major_locator(FixedLocator(ticks))
        ax.yaxis.set_major_formatter(FuncFormatter(_share_label))
        for p in spec.marks:
            level = _nines(np.array([float(p) / 100.0]))[0]
            if level <= top:
                ax.axhline(level, color="0.45", linestyle=":", linewidth=0.9)
        ax.set_ylim(0, top + 0.2)
        _log_time_axis(fig, ax, spec.xlabel, "I/Os completed within", spec.title)
        return fig

    return _draw(path, build)


def _share_label(level: float, _pos: int = 0) -> str:
    """Nines-scale tick text: 0 -> 0%, 1 -> 90%, 2 -> 99%, 3 -> 99.9%."""
    if level <= 0:
        return "0%"
    k = int(round(level))
    return "90%" if k == 1 else "99." + "9" * (k - 2) + "%" if k > 2 else "99%"


DRAWINGS: Dict[type, Callable[[str, Any], str]] = {
    XYChart: xy,
    HistogramChart: histogram,
    ConfidenceChart: confidence,
}

__all__ = ["Curve", "DRAWINGS", "confidence", "histogram", "xy"]
