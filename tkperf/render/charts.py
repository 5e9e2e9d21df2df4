"""Matplotlib drawings of chart specs (:mod:`tkperf.render.blocks`).

:func:`draw` writes one PNG and/or SVG from one spec; the spec's class says which
drawing, its fields hold the plain data.  Nothing here reads a result file
or knows a test type; only the drawing modules (this one,
:mod:`tkperf.render.xycharts` and their plumbing, :mod:`tkperf.render.plotting`)
import matplotlib (the report draws its charts in worker processes,
:mod:`tkperf.render.parallel`).

Figures are sized for the width of a PDF page (about 17 cm): 7 x 3.4 inches
at 120 dpi, 9 pt text.  Legends sit outside the axes so they never cover
data.  The Agg backend is used without pyplot, so nothing here needs a
display and no global figure state is kept between reports.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Sequence

from tkperf.render.mpl import matplotlib  # first: no settings file of the caller's (tkperf/render/mpl.py)

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from matplotlib.colors import LogNorm, Normalize  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from tkperf.render import xycharts  # noqa: E402 - x/y sweeps, histograms, confidence plots
from tkperf.render.blocks import (  # noqa: E402
    BarsChart,
    ConvergenceChart,
    CurvesChart,
    HeatmapChart,
    LinesChart,
    Stamped,
    WindowChart,
    chart_inches,
    spec_of,
)
from tkperf.render.plotting import (  # noqa: E402
    DENSE_POINTS,
    MANY_MARKERS,
    _draw,
    _figure,
    _legend_below,
    _LogThousands,
    _round_axis,
    _set_yscale,
    _thousands,
    _time_unit,
    _wants_log,
    _wrap_title,
    outputs_of,
    short_number,
    svg_path,  # noqa: E402,F401 - part of this module's face
)

# --- charts --------------------------------------------------------------------

def convergence(path: str, spec: ConvergenceChart) -> str:
    """Steady-state convergence: one line per workload, value per round,
    the measurement window shaded grey (the caption says so)."""

    def build() -> Figure:
        fig, (ax,) = _figure()
        all_y = np.array([v for s in spec.series for v in s.y], dtype=float)
        rounds = sorted({int(x) for s in spec.series for x in s.x})
        if spec.window:
            ax.axvspan(min(spec.window) - 0.4, max(spec.window) + 0.4, color="0.93", zorder=0)
        for s in spec.series:
            ax.plot(s.x, s.y, marker="o", markersize=3.5, linewidth=1.2, label=s.label)
        _set_yscale(ax, all_y)
        _round_axis(ax, rounds)
        ax.set_ylabel(spec.ylabel)
        ax.set_title(_wrap_title(spec.title))
        _legend_below(fig, [ax], title=spec.legend_title)
        return fig

    return _draw(path, build)


def _average_text(value: float) -> str:
    """The window's average in the legend as the tables show figures:
    '913.5', '17,804', '0.912' (not '913.47' or '973.136')."""
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:,.1f}" if abs(value) >= 10 else f"{value:.3g}"


def measurement_window(path: str, view: WindowChart) -> str:
    """The tracking variable per round with what the 20/10 criterion checks:
    the window's average, lines at 110% and 90% of it (a range within 20% of
    the average fits between them) and the least-squares line (its
    excursion over the window must stay within 10% of the average)."""

    def build() -> Figure:
        fig, (ax,) = _figure()
        ax.plot(view.rounds, view.values, color="0.55", marker="o", markersize=3.5, linewidth=1,
                label="tracking variable, all rounds")
        if view.window_rounds:
            lo, hi = min(view.window_rounds), max(view.window_rounds)
            xs = np.array([lo, hi], dtype=float)
            avg = view.average
            ax.plot(xs, [avg, avg], color="tab:green", linewidth=1.5, label=f"window average {_average_text(avg)}")
            ax.plot(xs, [avg * 1.1, avg * 1.1], color="tab:green", linestyle=":", linewidth=1.5,
                    label="110% of average")
            ax.plot(xs, [avg * 0.9, avg * 0.9], color="tab:olive", linestyle=":", linewidth=1.5,
                    label="90% of average")
            ax.plot(xs, view.slope * xs + view.intercept, color="tab:red", linestyle="--",
                    linewidth=1.5, label="least-squares line")
            ax.plot(view.window_rounds, view.window_values, color="tab:blue", marker="o",
                    markersize=5, linestyle="none", label="window rounds")
            top = max(max(view.values), avg * 1.1)
            ax.set_ylim(0, top * 1.08)
        else:
            ax.set_ylim(bottom=0)
        ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
        _round_axis(ax, view.rounds)
        ax.set_ylabel(view.ylabel)
        ax.set_title(_wrap_title(f"{view.title}\n{view.verdict}"))
        _legend_below(fig, [ax], ncol=3)
        return fig

    return _draw(path, build)


def _block_size_axis(ax, keys: Sequence[float], labels: Sequence[str]) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(keys))
    ax.set_xticklabels(list(labels))
    ax.minorticks_off()
    ax.set_xlabel("Block size (bytes, fio units: k = KiB)")
    if len(keys) == 1:
        ax.set_xlim(keys[0] / 2, keys[0] * 2)


def lines_by_block_size(path: str, spec: LinesChart) -> str:
    """One line per column (R/W mix) over the block sizes (rows), log2 x axis."""
    grid = spec.grid

    def build() -> Figure:
        fig, (ax,) = _figure()
        data = grid.array()
        for j, col in enumerate(grid.cols):
            ax.plot(grid.row_keys, data[:, j], marker="o", markersize=3.5, linewidth=1.2,
                    label=col)
        _block_size_axis(ax, grid.row_keys, grid.rows)
        _set_yscale(ax, data)
        ax.set_ylabel(spec.ylabel)
        ax.set_title(_wrap_title(spec.title))
        _legend_below(fig, [ax], title=f"{grid.col_title} (read/write %)")
        return fig

    return _draw(path, build)


_NO_VALUE = "0.92"  # the grey of a heatmap cell without a value


def heatmap(path: str, spec: HeatmapChart) -> str:
    """The matrix as coloured cells with the value printed in each cell."""
    grid = spec.grid

    def build() -> Figure:
        fig, (ax,) = _figure(height=chart_inches(spec)[1])
        data = grid.array()
        finite = data[np.isfinite(data) & (data > 0)]
        norm: Normalize
        if finite.size and _wants_log(finite):
            norm = LogNorm(vmin=finite.min(), vmax=finite.max())
        elif finite.size:
            norm = Normalize(vmin=0, vmax=finite.max())
        else:
            norm = Normalize(vmin=0, vmax=1)
        masked = np.ma.masked_invalid(data)
        cmap = matplotlib.colormaps["viridis"].with_extremes(bad=_NO_VALUE)
        # One vector rectangle per cell (sharp at any zoom, a few bytes in
        # the SVG and the PDF), row 0 at the top as in the tables; a cell
        # without a value shows the background, grey.  Each cell is outlined in
        # its own colour: no hairline seams where a viewer smooths the edges.
        rows, cols = data.shape
        ax.set_facecolor(_NO_VALUE)
        ax.grid(False)  # before the mesh, whose own removal of a grid is deprecated (matplotlib 3.6 warns)
        cells = ax.pcolormesh(np.arange(cols + 1) - 0.5, np.arange(rows + 1) - 0.5, masked,
                              cmap=cmap, norm=norm, edgecolors="face", linewidth=0.4)
        ax.set_xlim(-0.5, cols - 0.5)
        ax.set_ylim(rows - 0.5, -0.5)
        ax.set_xticks(range(len(grid.cols)))
        ax.set_xticklabels(list(grid.cols))
        ax.set_yticks(range(len(grid.rows)))
        ax.set_yticklabels(list(grid.rows))
        ax.set_xlabel(grid.col_title + " (read/write %)")
        ax.set_ylabel(grid.row_title)
        ax.tick_params(length=0)
        for spine in ax.spines.values():
            spine.set_visible(False)
        for i in range(len(grid.rows)):
            for j in range(len(grid.cols)):
                v = data[i, j]
                if not np.isfinite(v):
                    ax.text(j, i, "n/a", ha="center", va="center", fontsize=8, color="0.4")
                    continue
                shade = norm(v) if v > 0 or not isinstance(norm, LogNorm) else 0.0
                ax.text(j, i, short_number(v), ha="center", va="center", fontsize=8,
                        color="black" if shade > 0.55 else "white")
        bar = fig.colorbar(cells, ax=ax, pad=0.02)
        bar.set_label(spec.colorbar_label)
        bar.ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
        if isinstance(norm, LogNorm):
            bar.ax.yaxis.set_minor_formatter(_LogThousands(labelOnlyBase=False))
        ax.set_title(_wrap_title(spec.title))
        return fig

    return _draw(path, build)


def grouped_bars(path: str, spec: BarsChart) -> str:
    """Grouped bar charts side by side, one legend below for all of them."""
    panels = spec.panels
    if not panels:
        raise ValueError("a bar chart needs at least one panel")

    def build() -> Figure:
        fig, axes = _figure(ncols=len(panels))
        for ax, panel in zip(axes, panels):
            data = panel.grid.array()
            nrows, ncols = data.shape
            width = 0.8 / max(ncols, 1)
            x = np.arange(nrows, dtype=float)
            for j, col in enumerate(panel.grid.cols):
                label = f"{spec.legend_title} {col}".strip()
                heights = np.nan_to_num(data[:, j], nan=0.0)
                ax.bar(x - 0.4 + width * (j + 0.5), heights, width=width * 0.92, label=label,
                       color=f"C{j % 10}")
            ax.set_xticks(x)
            # Long or many group labels in a narrow panel are turned to stay apart.
            crowded = sum(len(r) + 2 for r in panel.grid.rows) * len(panels) > 70
            ax.set_xticklabels(list(panel.grid.rows), rotation=35 if crowded else 0,
                               ha="right" if crowded else "center")
            ax.set_xlabel(panel.grid.row_title)
            _set_yscale(ax, data)
            ax.set_ylabel(panel.ylabel)
            ax.set_title(panel.title)
            ax.grid(axis="x", visible=False)
            for i in range(nrows):
                for j in range(ncols):
                    if not np.isfinite(data[i, j]):
                        ax.text(x[i] - 0.4 + width * (j + 0.5), 0, "n/a", rotation=90,
                                ha="center", va="bottom", fontsize=7, color="0.4",
                                transform=ax.get_xaxis_transform())
        if spec.title:
            fig.suptitle(spec.title)
        _legend_below(fig, axes)
        return fig

    return _draw(path, build)


def curves(path: str, spec: CurvesChart) -> str:
    """Curves of many points (a stream's intervals) on one axis from 0.

    Each curve is one Line2D: a day of 1-second intervals is 86,400 points,
    drawn as dots without any per-point Python work.
    """
    for c in spec.curves:
        if np.shape(c.x) != np.shape(c.y):
            raise ValueError(f"curve {c.label!r}: {np.size(c.x)} x values for {np.size(c.y)} y values")

    def build() -> Figure:
        fig, (ax,) = _figure()
        longest = max((float(np.max(c.x)) for c in spec.curves if c.x.size), default=0.0)
        scale, unit = _time_unit(longest) if spec.time_axis else (1.0, "")
        ymax = 0.0
        for i, c in enumerate(spec.curves):
            if not c.y.size:
                continue
            ys = c.y
            ymax = max(ymax, float(np.max(ys)))
            dense = ys.size > DENSE_POINTS
            ax.plot(c.x / scale, ys, linestyle="none" if dense else "-", linewidth=0.8,
                    marker="." if dense or ys.size > 200 else "o",
                    markersize=1.2 if dense else (2.0 if ys.size > 200 else 3.5),
                    color=f"C{i % 10}", label=c.label, rasterized=ys.size > MANY_MARKERS)
        ax.set_xlabel(f"{spec.xlabel} ({unit})" if unit else spec.xlabel)
        ax.set_xlim(left=0)
        ax.set_ylim(0, (ymax or 1.0) * 1.08)
        ax.set_ylabel(spec.ylabel)
        if spec.thousands:
            ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
        ax.set_title(_wrap_title(spec.title))
        if len(spec.curves) > 1:
            _legend_below(fig, [ax])
        return fig

    return _draw(path, build)


#: Chart spec class -> its drawing (path, that spec) -> path.
DRAWINGS: Dict[type, Callable[[str, Any], str]] = {
    ConvergenceChart: convergence,
    WindowChart: measurement_window,
    LinesChart: lines_by_block_size,
    HeatmapChart: heatmap,
    BarsChart: grouped_bars,
    CurvesChart: curves,
}


def draw(spec: object, path: str, outputs: Sequence[str] = ("png",)) -> str:
    """Draw ``spec`` into the PNG file ``path`` and/or (``outputs`` holds
    ``"svg"``) the SVG beside it (:func:`svg_path`); an unknown spec is a TypeError.
    A :class:`~tkperf.render.blocks.Stamped` spec is drawn with its stamp
    (:func:`tkperf.render.plotting.stamp_figure`)."""

    stamp, caption = (spec.stamp, spec.caption) if isinstance(spec, Stamped) else (None, "")
    spec = spec_of(spec)
    drawing = DRAWINGS.get(type(spec)) or xycharts.DRAWINGS.get(type(spec))
    if drawing is None:
        raise TypeError(f"no drawing for a {type(spec).__name__}")
    with outputs_of(outputs, stamp, str(getattr(spec, "title", "") or caption)):
        return drawing(path, spec)
