"""Matplotlib figures for the reports, drawn from figures the report computed.

Every function here takes plain data (:class:`Series`, :class:`Grid`,
:class:`WindowView`, :class:`WsatCurve`) and writes one PNG; none of them
reads a result file or knows about the runner.  The same data objects feed
the report's tables, so every number in a plot is also in a table.

Figures are sized for the width of a PDF page (about 17 cm): 7 x 3.4 inches
at 120 dpi, 9 pt text.  Legends sit outside the axes so they never cover
data.  The Agg backend is used without pyplot, so nothing here needs a
display and no global figure state is kept between reports.
"""
from __future__ import annotations

import io
import textwrap
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, Tuple

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.colors import LogNorm, Normalize  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter, MaxNLocator  # noqa: E402

from tkperf.store import atomic_write  # noqa: E402

WIDTH_IN = 7.0
HEIGHT_IN = 3.4
DPI = 120
# A log axis is used when the largest value is this many times the smallest.
LOG_RATIO = 30.0
# Above this many points a WSAT curve is drawn as small dots only.
DENSE_POINTS = 3000

_RC = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


@dataclass(frozen=True)
class Series:
    """One line of a chart; ``y`` holds ``nan`` where nothing was measured."""

    label: str
    x: Tuple[float, ...]
    y: Tuple[float, ...]


@dataclass(frozen=True)
class Grid:
    """Figures by row and column, e.g. IOPS by block size (rows) and R/W mix (columns).

    ``row_keys`` are the numeric row values (block sizes in bytes) for
    charts with a numeric x axis; ``None`` in ``values`` means not measured.
    """

    rows: Tuple[str, ...]
    row_keys: Tuple[float, ...]
    cols: Tuple[str, ...]
    values: Tuple[Tuple[Optional[float], ...], ...]
    unit: str
    row_title: str = "Block size"
    col_title: str = "R/W mix"

    def __post_init__(self) -> None:
        if len(self.values) != len(self.rows) or any(len(r) != len(self.cols) for r in self.values):
            raise ValueError("grid values do not match its rows and columns")

    def array(self) -> np.ndarray:
        """The values as floats, ``nan`` where not measured."""
        return np.array([[np.nan if v is None else float(v) for v in row] for row in self.values],
                        dtype=float).reshape(len(self.rows), len(self.cols))


@dataclass(frozen=True)
class WindowView:
    """The tracking variable of a test and its steady-state window, ready to draw."""

    title: str
    ylabel: str
    rounds: Tuple[int, ...]
    values: Tuple[float, ...]
    window_rounds: Tuple[int, ...]
    window_values: Tuple[float, ...]
    average: float
    slope: float
    intercept: float
    verdict: str


@dataclass(frozen=True)
class WsatCurve:
    """One drive's WSAT: per interval its end time (s), data written so far (GB) and IOPS."""

    label: str
    seconds: np.ndarray
    written_gb: np.ndarray
    iops: np.ndarray


# --- figure plumbing ---------------------------------------------------------

def _figure(height: float = HEIGHT_IN, ncols: int = 1) -> Tuple[Figure, list]:
    with matplotlib.rc_context(_RC):
        fig = Figure(figsize=(WIDTH_IN, height), dpi=DPI, layout="constrained")
        FigureCanvasAgg(fig)
        axes = [fig.add_subplot(1, ncols, i + 1) for i in range(ncols)]
    return fig, axes


def _save(fig: Figure, path: str) -> str:
    buf = io.BytesIO()
    with matplotlib.rc_context(_RC):
        fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    atomic_write(path, buf.getvalue())
    return path


def _draw(path: str, build: Callable[[], Figure]) -> str:
    """Build a figure under the report's style and write it; style applies to
    text created inside ``build`` as well, hence the context around both."""
    with matplotlib.rc_context(_RC):
        fig = build()
        return _save(fig, path)


def _legend_below(fig: Figure, axes: Sequence, ncol: Optional[int] = None, title: str = "") -> None:
    """One legend under the axes (never over data), in as many columns as fit
    the figure's width, more rows otherwise."""
    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if not handles:
        return
    # About 100 characters of 8 pt legend text fit across the figure, and a
    # legend entry's handle and padding take about 6 more.
    fit = max(1, 100 // (max(len(x) for x in labels) + 6))
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), ncol or fit, fit),
               frameon=False, title=title or None, title_fontsize=8)


def _wrap_title(text: str, width: int = 88) -> str:
    """Titles wrap instead of running off the figure."""
    return "\n".join(textwrap.fill(line, width) for line in text.split("\n"))


def _wants_log(values: np.ndarray) -> bool:
    v = values[np.isfinite(values) & (values > 0)]
    return v.size > 1 and v.max() / v.min() >= LOG_RATIO


def _thousands(value: float, _pos: int = 0) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:g}"
    return f"{value:.3g}"


def _set_yscale(ax, values: np.ndarray) -> None:
    if _wants_log(values):
        ax.set_yscale("log")
    else:
        ax.set_ylim(bottom=0)
    ax.yaxis.set_major_formatter(FuncFormatter(_thousands))


def _round_axis(ax, rounds: Sequence[int]) -> None:
    ax.set_xlabel("Round")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if rounds:
        ax.set_xlim(min(rounds) - 0.5, max(rounds) + 0.5)


def short_number(value: float) -> str:
    """Cell text for heat maps: 3 significant figures with k/M suffixes."""
    a = abs(value)
    if a >= 1e6:
        return f"{value / 1e6:.3g}M"
    if a >= 1e4:
        return f"{value / 1e3:.3g}k"
    if a >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


# --- charts --------------------------------------------------------------------

def convergence(path: str, series: Sequence[Series], ylabel: str, title: str,
                window: Tuple[int, ...] = (), legend_title: str = "") -> str:
    """Steady-state convergence: one line per workload, value per round,
    the measurement window shaded grey (the caption says so)."""

    def build() -> Figure:
        fig, (ax,) = _figure()
        all_y = np.array([v for s in series for v in s.y], dtype=float)
        rounds = sorted({int(x) for s in series for x in s.x})
        if window:
            ax.axvspan(min(window) - 0.4, max(window) + 0.4, color="0.93", zorder=0)
        for s in series:
            ax.plot(s.x, s.y, marker="o", markersize=3.5, linewidth=1.2, label=s.label)
        _set_yscale(ax, all_y)
        _round_axis(ax, rounds)
        ax.set_ylabel(ylabel)
        ax.set_title(_wrap_title(title))
        _legend_below(fig, [ax], title=legend_title)
        return fig

    return _draw(path, build)


def measurement_window(path: str, view: WindowView) -> str:
    """The tracking variable per round with the window's average, the ±10%
    and ±20% bands around it, the least-squares line and the verdict."""

    def build() -> Figure:
        fig, (ax,) = _figure()
        ax.plot(view.rounds, view.values, color="0.55", marker="o", markersize=3.5, linewidth=1,
                label="tracking variable, all rounds")
        if view.window_rounds:
            lo, hi = min(view.window_rounds), max(view.window_rounds)
            xs = np.array([lo, hi], dtype=float)
            avg = view.average
            ax.fill_between(xs, avg * 0.8, avg * 1.2, color="tab:green", alpha=0.12,
                            label="average ±20%")
            ax.fill_between(xs, avg * 0.9, avg * 1.1, color="tab:green", alpha=0.22,
                            label="average ±10%")
            ax.plot(xs, [avg, avg], color="tab:green", linewidth=1.5, label=f"window average {_thousands(avg)}")
            ax.plot(xs, view.slope * xs + view.intercept, color="tab:red", linestyle="--",
                    linewidth=1.5, label="least-squares line")
            ax.plot(view.window_rounds, view.window_values, color="tab:blue", marker="o",
                    markersize=5, linestyle="none", label="window rounds")
            top = max(max(view.values), avg * 1.2)
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


def lines_by_block_size(path: str, grid: Grid, ylabel: str, title: str) -> str:
    """One line per column (R/W mix) over the block sizes (rows), log2 x axis."""

    def build() -> Figure:
        fig, (ax,) = _figure()
        data = grid.array()
        for j, col in enumerate(grid.cols):
            ax.plot(grid.row_keys, data[:, j], marker="o", markersize=3.5, linewidth=1.2,
                    label=col)
        _block_size_axis(ax, grid.row_keys, grid.rows)
        _set_yscale(ax, data)
        ax.set_ylabel(ylabel)
        ax.set_title(_wrap_title(title))
        _legend_below(fig, [ax], title=f"{grid.col_title} (read/write %)")
        return fig

    return _draw(path, build)


def heatmap(path: str, grid: Grid, title: str, colorbar_label: str) -> str:
    """The matrix as coloured cells with the value printed in each cell."""

    def build() -> Figure:
        height = max(2.4, 0.9 + 0.36 * len(grid.rows))
        fig, (ax,) = _figure(height=height)
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
        cmap = matplotlib.colormaps["viridis"].with_extremes(bad="0.92")
        image = ax.imshow(masked, cmap=cmap, norm=norm, aspect="auto")
        ax.grid(False)
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
        bar = fig.colorbar(image, ax=ax, pad=0.02)
        bar.set_label(colorbar_label)
        bar.ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
        ax.set_title(_wrap_title(title))
        return fig

    return _draw(path, build)


@dataclass(frozen=True)
class Panel:
    """One bar chart of a figure: a grid drawn as bar groups (rows) of bars (columns)."""

    grid: Grid
    title: str
    ylabel: str


def grouped_bars(path: str, panels: Sequence[Panel], title: str = "",
                 legend_title: str = "") -> str:
    """Grouped bar charts side by side, one legend below for all of them."""

    def build() -> Figure:
        fig, axes = _figure(ncols=len(panels))
        for ax, panel in zip(axes, panels):
            data = panel.grid.array()
            nrows, ncols = data.shape
            width = 0.8 / max(ncols, 1)
            x = np.arange(nrows, dtype=float)
            for j, col in enumerate(panel.grid.cols):
                label = f"{legend_title} {col}".strip()
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
        if title:
            fig.suptitle(title)
        _legend_below(fig, axes)
        return fig

    return _draw(path, build)


def _time_unit(seconds: float) -> Tuple[float, str]:
    if seconds >= 3 * 3600:
        return 3600.0, "hours"
    if seconds >= 180:
        return 60.0, "minutes"
    return 1.0, "seconds"


def wsat(path: str, curves: Sequence[WsatCurve], x: str, normalised: bool = False,
         title: str = "") -> str:
    """WSAT IOPS per interval against time (``x="time"``) or against the total
    GB written (``x="gb"``); ``normalised`` divides each curve by its maximum,
    as the PTS comparison of drives does.

    Each curve is one Line2D: a day of 1-second intervals is 86,400 points,
    drawn as dots without any per-point Python work.
    """
    if x not in ("time", "gb"):
        raise ValueError(f"unknown WSAT x axis {x!r}")

    def build() -> Figure:
        fig, (ax,) = _figure()
        longest = max((float(c.seconds[-1]) for c in curves if c.seconds.size), default=0.0)
        scale, unit = _time_unit(longest)
        ymax = 0.0
        for i, c in enumerate(curves):
            if not c.iops.size:
                continue
            xs = c.seconds / scale if x == "time" else c.written_gb
            peak = float(np.max(c.iops)) if c.iops.size else 0.0
            ys = c.iops / peak if normalised and peak > 0 else c.iops
            ymax = max(ymax, float(np.max(ys)))
            dense = ys.size > DENSE_POINTS
            ax.plot(xs, ys, linestyle="none" if dense else "-", linewidth=0.8,
                    marker="." if dense or ys.size > 200 else "o",
                    markersize=1.2 if dense else (2.0 if ys.size > 200 else 3.5),
                    color=f"C{i % 10}", label=c.label, rasterized=dense)
        ax.set_xlabel(f"Time ({unit})" if x == "time" else "Total data written (GB, decimal)")
        ax.set_xlim(left=0)
        ax.set_ylim(0, (ymax or 1.0) * 1.08)
        if normalised:
            ax.set_ylabel("IOPS / the drive's maximum IOPS")
        else:
            ax.set_ylabel("IOPS (RND 4KiB 100% W)")
            ax.yaxis.set_major_formatter(FuncFormatter(_thousands))
        ax.set_title(_wrap_title(title))
        if len(curves) > 1:
            _legend_below(fig, [ax])
        return fig

    return _draw(path, build)
