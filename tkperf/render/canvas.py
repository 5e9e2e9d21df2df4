"""The plumbing and house style every chart shares: figure size and fonts,
one figure drawn and written as a PNG, the legend below the axes, titles
that wrap, and the number and time formats of the axes.

:mod:`tkperf.render.charts` (the PTS drawings, and :func:`~tkperf.render.charts.draw`,
which picks a drawing for a spec), :mod:`tkperf.render.xycharts` (x/y,
histogram and confidence drawings) and :mod:`tkperf.render.trendcharts`
(``tkperf history``) draw with it, so all look alike.  The Agg backend is
used without pyplot, so nothing here needs a display and no global figure
state is kept between reports.
"""
from __future__ import annotations

import io
import textwrap
from typing import Callable, Optional, Sequence, Tuple

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from PIL import Image  # noqa: E402 - matplotlib's own PNG writer

from tkperf.model.files import atomic_write  # noqa: E402

WIDTH_IN = 7.0
HEIGHT_IN = 3.4
DPI = 120
# Above this many points a curve is drawn as small dots only.
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


def figure(height: float = HEIGHT_IN, ncols: int = 1) -> Tuple[Figure, list]:
    """A figure and its axes; called inside :func:`draw`, under the report's style."""
    fig = Figure(figsize=(WIDTH_IN, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    axes = [fig.add_subplot(1, ncols, i + 1) for i in range(ncols)]
    return fig, axes


def draw(path: str, build: Callable[[], Figure]) -> str:
    """Build a figure under the report's style and write it as an RGB PNG;
    the style applies to text created inside ``build`` as well, hence one
    context around both.

    One draw of the canvas lays the figure out and renders it (``savefig``
    would draw twice); the figure is opaque, so the alpha channel is
    dropped: the same pixels, a smaller file, less work for the PDF writer.
    """
    with matplotlib.rc_context(_RC):
        fig = build()
        fig.canvas.draw()
        rgba = np.asarray(fig.canvas.buffer_rgba())
    buf = io.BytesIO()
    Image.fromarray(rgba[..., :3]).save(buf, format="PNG", dpi=(DPI, DPI))
    atomic_write(path, buf.getvalue())
    return path


def legend_below(fig: Figure, axes: Sequence, ncol: Optional[int] = None, title: str = "") -> None:
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
    style = dict(ncol=min(len(labels), ncol or fit, fit), frameon=False, title=title or None, title_fontsize=8)
    try:
        fig.legend(handles, labels, loc="outside lower center", **style)
    except ValueError:  # matplotlib 3.6 (Debian 12) has no "outside" legends: keep room for it by hand
        legend = fig.legend(handles, labels, loc="lower center", **style)
        height = legend.get_window_extent(fig.canvas.get_renderer()).height / fig.bbox.height
        fig.get_layout_engine().set(rect=(0, height, 1, 1 - height))


def wrap_title(text: str, width: int = 88) -> str:
    """Titles wrap instead of running off the figure."""
    return "\n".join(textwrap.fill(line, width) for line in text.split("\n"))


def thousands(value: float, _pos: int = 0) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:g}"
    return f"{value:.3g}"


def time_unit(seconds: float) -> Tuple[float, str]:
    if seconds >= 3 * 3600:
        return 3600.0, "hours"
    if seconds >= 180:
        return 60.0, "minutes"
    return 1.0, "seconds"
