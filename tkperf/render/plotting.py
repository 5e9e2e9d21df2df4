"""The plumbing every chart shares: figure size and style, writing a figure
as PNG and/or SVG, legends below the axes, number formats on the axes.

Imported only by the modules that draw (:mod:`tkperf.render.charts`,
:mod:`tkperf.render.xycharts`), in the processes that draw.
"""
from __future__ import annotations

import contextlib
import io
import textwrap
from typing import Any, Callable, Dict, Iterator, Optional, Sequence, Tuple, cast
from xml.sax.saxutils import escape as xml_escape

from tkperf.render.mpl import matplotlib  # first: no settings file of the caller's (tkperf/render/mpl.py)

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from matplotlib.backend_bases import RendererBase  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogFormatter, MaxNLocator  # noqa: E402
from PIL import Image  # noqa: E402 - matplotlib's own PNG writer

from tkperf.render.blocks import CHART_HEIGHT_IN, CHART_WIDTH_IN, Stamp  # noqa: E402
from tkperf.render.mpl import drawing_style  # noqa: E402
from tkperf.render.pdf import svg_beside as svg_path  # noqa: E402 - the one rule for where an SVG goes
from tkperf.render.recorder import measured_text, svg_and_graphic  # noqa: E402
from tkperf.store import atomic_write  # noqa: E402
from tkperf.untrusted import replace_controls  # noqa: E402

WIDTH_IN = CHART_WIDTH_IN
HEIGHT_IN = CHART_HEIGHT_IN
DPI = 120
# A log axis is used when the largest value is this many times the smallest.
LOG_RATIO = 30.0
# Above this many points a curve is drawn as small dots only.
DENSE_POINTS = 3000
# Above this many markers a curve is a picture inside the SVG (the axes and
# text stay vector): every marker is an element of its own in an SVG, slow
# for the PDF writer to read, and a cloud of dots is no sharper as vectors.
MANY_MARKERS = 200

_RC: Dict[Any, Any] = {  # matplotlib types the keys as literals
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
    "svg.fonttype": "none",  # text as <text>, not glyph outlines
    "svg.hashsalt": "tkperf",  # the same ids in every build of the same chart
}


# --- figure plumbing ---------------------------------------------------------

class _Measuring(RendererBase):
    """What a layout asks of a renderer, at 72 dpi: sizes, and texts
    measured by :func:`measured_text`.  It draws nothing."""

    def __init__(self, width: float, height: float) -> None:
        super().__init__()
        self.width = width
        self.height = height

    def get_canvas_width_height(self) -> Tuple[float, float]:
        return self.width, self.height

    def get_text_width_height_descent(self, s: str, prop: Any, ismath: Any) -> Tuple[float, float, float]:
        return measured_text(s, prop, ismath)


class _Canvas(FigureCanvasAgg):
    """The Agg canvas (for the PNG), which hands out a :class:`_Measuring`
    renderer while the figure is laid out (:func:`_lay_out`)."""

    measuring: Optional[_Measuring] = None

    def get_renderer(self, *args: Any, **kwargs: Any) -> Any:
        if self.measuring is not None:
            return self.measuring
        return super().get_renderer(*args, **kwargs)


def _figure(height: float = HEIGHT_IN, ncols: int = 1) -> Tuple[Figure, list]:
    """A figure and its axes; called inside :func:`_draw`, under the report's style."""
    fig = Figure(figsize=(WIDTH_IN, height), dpi=DPI, layout="constrained")
    _Canvas(fig)
    axes = [fig.add_subplot(1, ncols, i + 1) for i in range(ncols)]
    return fig, axes


#: What :func:`draw` writes: a PNG (``path``) and/or an SVG beside it
#: (``path`` with ``.svg``), and with "pdf-graphic" the PDF graphic drawn
#: with the SVG (:func:`take_graphic`); set by :func:`draw` for one drawing.
_OUTPUTS: Tuple[str, ...] = ("png",)
#: The stamp of the chart being drawn, and its title (None: no stamp);
#: set by :func:`draw` for one drawing.
_STAMP: Optional[Tuple[Stamp, str]] = None
#: The stamp's line: its size (points), colour, and the room it takes at the
#: top of the figure (inches); longer lines are cut (a model string from a
#: file can be of any length).
STAMP_POINTS = 6.5
STAMP_COLOUR = "0.4"
STAMP_ROOM_IN = 0.16
STAMP_CHARS = 135


@contextlib.contextmanager
def outputs_of(outputs: Sequence[str], stamp: Optional[Stamp] = None, title: str = "") -> Iterator[None]:
    """Within: :func:`_draw` writes what ``outputs`` names ('png', 'svg'),
    each drawing named by ``stamp`` (:func:`stamp_figure`, :func:`stamp_svg`;
    ``title``: the chart's own)."""
    global _OUTPUTS, _STAMP
    saved = _OUTPUTS, _STAMP
    _OUTPUTS, _STAMP = tuple(outputs), (None if stamp is None else (stamp, title))
    try:
        yield
    finally:
        _OUTPUTS, _STAMP = saved


def _cut(text: str, chars: int) -> str:
    """``text`` as one line of at most ``chars`` characters (cut with '…'),
    without the characters a terminal acts on or XML cannot hold."""
    text = " ".join(replace_controls(text)[0].split())
    return text if len(text) <= chars else text[:chars - 1] + "…"


def stamp_figure(fig: Figure, stamp: Stamp) -> None:
    """Draw ``stamp``'s line at the top left of ``fig``, in a strip the
    layout leaves free (called before it runs): small grey text, as text
    (no mathtext: a '$' in a model string stays a '$')."""
    engine: Any = fig.get_layout_engine()
    if engine is not None:  # the layout keeps clear of the strip (within what a legend took already)
        x, y, w, h = engine.get().get("rect", (0, 0, 1, 1))
        engine.set(rect=(x, y, w, h - STAMP_ROOM_IN / fig.get_figheight()))
    fig.text(0.006, 0.995, _cut(stamp.line, STAMP_CHARS), ha="left", va="top", fontsize=STAMP_POINTS,
             color=STAMP_COLOUR, parse_math=False, gid="tkperf-stamp")


def _below_the_strip(fig: Figure) -> None:
    """After the layout: figure texts it placed at the very top (a
    ``suptitle``) moved below the stamp's strip."""
    room = STAMP_ROOM_IN / fig.get_figheight()
    for text in fig.texts:
        if text.get_gid() != "tkperf-stamp" and text.get_position()[1] > 1 - room:
            text.set_y(text.get_position()[1] - room)


def stamp_svg(svg: bytes, stamp: Stamp, chart_title: str) -> bytes:
    """``svg`` with a ``<title>`` (the chart's title and the stamp's line)
    and a ``<desc>`` (the stamp's) as the root's first children, escaped:
    what a slide tool or a screen reader shows as the picture's name."""
    title = " — ".join(x for x in (_cut(chart_title, 300), _cut(stamp.title or stamp.line, 300)) if x)
    desc = _cut(stamp.desc or stamp.line, 2000)
    at = svg.find(b"<svg")
    end = svg.find(b">", at) + 1 if at >= 0 else 0
    if end <= 0:
        return svg
    head = f"\n <title>{xml_escape(title)}</title>\n <desc>{xml_escape(desc)}</desc>".encode()
    return svg[:end] + head + svg[end:]


def _draw(path: str, build: Callable[[], Figure]) -> str:
    """Build a figure under the report's style and write it as an RGB PNG
    and/or an SVG (:data:`_OUTPUTS`); the style applies to text created
    inside ``build`` as well, hence one context around both.

    The figure is laid out once (:func:`_lay_out`) for every output; the
    PNG is one draw of the canvas, opaque, so the alpha channel is dropped:
    the same pixels, a smaller file.  The SVG keeps text as text (smaller,
    selectable).
    """
    with drawing_style(_RC):  # matplotlib's built-in settings, whatever a matplotlibrc says
        fig = build()
        if _STAMP is not None:
            stamp_figure(fig, _STAMP[0])
        _lay_out(fig)
        if _STAMP is not None:
            _below_the_strip(fig)
        if "png" in _OUTPUTS:
            canvas = cast(FigureCanvasAgg, fig.canvas)  # set by _figure
            canvas.draw()
            rgba = np.asarray(canvas.buffer_rgba())
            buf = io.BytesIO()
            Image.fromarray(rgba[..., :3]).save(buf, format="PNG", dpi=(DPI, DPI), compress_level=3)
            atomic_write(path, buf.getvalue())
        if "svg" in _OUTPUTS:
            if "pdf-graphic" in _OUTPUTS:
                svg, graphic = svg_and_graphic(fig, DPI)
                _GRAPHICS[path] = graphic
            else:
                buf = io.BytesIO()
                fig.savefig(buf, format="svg", metadata={"Date": None})
                svg = buf.getvalue()
            if _STAMP is not None:
                svg = stamp_svg(svg, *_STAMP)
            atomic_write(svg_path(path), svg)
    return path


#: The PDF graphics of the charts drawn (with "pdf-graphic" in the outputs):
#: chart path -> :class:`~tkperf.render.pdf.PdfGraphic`; taken by :func:`take_graphic`.
_GRAPHICS: Dict[str, Any] = {}


def take_graphic(path: str) -> Any:
    """The PDF graphic recorded while the chart ``path`` was drawn (None
    when none was), forgotten here."""
    return _GRAPHICS.pop(path, None)


def _lay_out(fig: Figure) -> None:
    """Run the figure's layout once, at 72 dpi with the texts measured as
    the SVG is drawn (:func:`measured_text`), and keep it for every drawing
    that follows (``savefig`` would otherwise draw the whole figure without
    output first, only to lay it out again).  The layout is in fractions
    of the figure, the same at every resolution."""
    engine: Any = fig.get_layout_engine()
    if engine is None:
        return
    with _measuring(fig):
        engine.execute(fig)
    fig.set_layout_engine("none")


@contextlib.contextmanager
def _measuring(fig: Figure) -> Iterator[_Measuring]:
    """Within: the figure at 72 dpi, its canvas handing out (and this
    yielding) a :class:`_Measuring` renderer; no Agg renderer is made."""
    canvas = cast(_Canvas, fig.canvas)  # set by _figure
    dpi = fig.dpi
    fig.dpi = 72
    canvas.measuring = _Measuring(*fig.bbox.size)
    try:
        yield canvas.measuring
    finally:
        canvas.measuring = None
        fig.dpi = dpi


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
    style = dict(ncol=min(len(labels), ncol or fit, fit), frameon=False, title=title or None, title_fontsize=8)
    try:
        fig.legend(handles, labels, loc="outside lower center", **style)
    except ValueError:  # matplotlib 3.6 (Debian 12) has no "outside" legends: keep room for it by hand
        legend = fig.legend(handles, labels, loc="lower center", **style)
        with _measuring(fig) as renderer:  # measured as the layout measures it, a fraction of the height
            height = legend.get_window_extent(renderer).height / fig.bbox.height
        engine: Any = fig.get_layout_engine()  # the figure's constrained layout (_figure)
        engine.set(rect=(0, height, 1, 1 - height))


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


class _LogThousands(LogFormatter):
    """Log-axis tick labels written as the linear ones are ('3,000', not
    matplotlib's 3x10^3 in mathtext, which is slow to lay out and reads
    differently from the major labels); the same choice of labelled ticks."""

    def _num_to_string(self, x: float, vmin: float, vmax: float) -> str:
        return _thousands(x)


def _set_yscale(ax, values: np.ndarray) -> None:
    if _wants_log(values):
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter(_LogThousands(labelOnlyBase=False))
    else:
        ax.set_ylim(bottom=0)
    ax.yaxis.set_major_formatter(FuncFormatter(_thousands))


def _round_axis(ax, rounds: Sequence[int]) -> None:
    ax.set_xlabel("Round")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if rounds:
        ax.set_xlim(min(rounds) - 0.5, max(rounds) + 0.5)


def _time_unit(seconds: float) -> Tuple[float, str]:
    if seconds >= 3 * 3600:
        return 3600.0, "hours"
    if seconds >= 180:
        return 60.0, "minutes"
    return 1.0, "seconds"


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
