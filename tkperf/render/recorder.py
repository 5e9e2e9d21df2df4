"""A chart's SVG and its PDF graphic from one drawing of the figure.

:func:`svg_and_graphic` draws a laid-out matplotlib figure once, through a
renderer that hands every drawing call both to matplotlib's SVG renderer
(the file the HTML report embeds) and to :class:`PdfRecorder`, which turns
it into PDF drawing operators (a :class:`~tkperf.render.pdf.PdfGraphic`,
what the PDF writer draws in the chart's place).  One traversal of the
figure instead of a second one, and no SVG read back for the PDF.

The graphic keeps what matplotlib decided: positions, colours, line widths,
dashes, clipping, transparency, markers; the rasterized parts (dense clouds
of dots, a colour bar) as images.  Text is set in the PDF's standard
Helvetica (as svglib would set it), placed by its anchor as the SVG places
it, so that centred and right-aligned labels stay so in another font.

Imported only where charts are drawn (it imports matplotlib).
"""
from __future__ import annotations

import io
import math
import zlib
from typing import Any, Dict, List, Optional, Tuple, cast

from tkperf.render.mpl import matplotlib  # first: no settings file of the caller's (tkperf/render/mpl.py)

matplotlib.use("Agg")

import numpy as np  # noqa: E402
from matplotlib.backend_bases import GraphicsContextBase, RendererBase  # noqa: E402
from matplotlib.backends.backend_mixed import MixedModeRenderer  # noqa: E402
from matplotlib.backends.backend_svg import RendererSVG  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.path import Path  # noqa: E402
from matplotlib.textpath import TextToPath  # noqa: E402

from tkperf.render.pdf import PdfGraphic  # noqa: E402

_CAPS = {"butt": 0, "round": 1, "projecting": 2}
_JOINS = {"miter": 0, "round": 1, "bevel": 2}
_ANCHORS = {"left": "start", "center": "middle", "right": "end"}
_BOLD = {"semibold", "demibold", "demi", "bold", "heavy", "extra bold", "black"}


#: Where an infinite coordinate (a log axis's zero, a filled area's far
#: edge) is drawn: far off the page, but a number a PDF can hold.
_FAR = 100000.0


def _num(v: float) -> str:
    """A coordinate as PDF text: two decimals, no trailing zeros."""
    if not -_FAR < v < _FAR:
        v = _FAR if v > 0 else -_FAR  # also NaN: iter_segments removes those, this is the last guard
    s = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _path_ops(path: Any, transform: Any, clip: Optional[Tuple[float, float, float, float]] = None,
              simplify: Optional[bool] = None) -> str:
    """PDF path construction operators for ``path`` under ``transform``
    (quadratic curves as cubic ones)."""
    out: List[str] = []
    last = (0.0, 0.0)
    start = (0.0, 0.0)
    segments: Any = path.iter_segments(transform, remove_nans=True, clip=clip, simplify=simplify, curves=True)
    for verts, code in segments:
        if code == Path.MOVETO:
            last = start = (verts[0], verts[1])
            out.append(f"{_num(verts[0])} {_num(verts[1])} m")
        elif code == Path.LINETO:
            last = (verts[0], verts[1])
            out.append(f"{_num(verts[0])} {_num(verts[1])} l")
        elif code == Path.CURVE3:
            (qx, qy), (x, y) = (verts[0], verts[1]), (verts[2], verts[3])
            c1 = (last[0] + 2 / 3 * (qx - last[0]), last[1] + 2 / 3 * (qy - last[1]))
            c2 = (x + 2 / 3 * (qx - x), y + 2 / 3 * (qy - y))
            out.append(" ".join(_num(v) for v in (*c1, *c2, x, y)) + " c")
            last = (x, y)
        elif code == Path.CURVE4:
            out.append(" ".join(_num(v) for v in verts[:6]) + " c")
            last = (verts[4], verts[5])
        elif code == Path.CLOSEPOLY:
            out.append("h")
            last = start
    return " ".join(out)


class PdfRecorder(RendererBase):
    """A matplotlib renderer (at 72 dpi: display units are points, origin
    at the bottom left, as in PDF) that records PDF drawing operations.

    What needs the PDF writer's own state (transparency, fonts, images) is
    an operation of its own; everything else is operator text, joined into
    as few literal pieces as possible."""

    def __init__(self, width: float, height: float, image_dpi: float) -> None:
        super().__init__()
        self.width = width
        self.height = height
        self.image_dpi = image_dpi
        self._ops: List[tuple] = []
        self._text: List[str] = []

    # --- the recording ---------------------------------------------------------

    def _literal(self, text: str) -> None:
        self._text.append(text)

    def _flush(self) -> None:
        if self._text:
            self._ops.append(("lit", "\n".join(self._text)))
            self._text = []

    def _op(self, op: tuple) -> None:
        self._flush()
        self._ops.append(op)

    def graphic(self) -> PdfGraphic:
        """What was drawn, as a graphic of the figure's size."""
        self._flush()
        return PdfGraphic(self.width, self.height, tuple(self._ops))

    # --- graphics state -------------------------------------------------------------

    def _clip(self, gc: GraphicsContextBase) -> str:
        parts = []
        rect = gc.get_clip_rectangle()
        if rect is not None:
            x0, y0, w, h = rect.bounds
            parts.append(f"{_num(x0)} {_num(y0)} {_num(w)} {_num(h)} re W n")
        clip_path, affine = gc.get_clip_path()
        if clip_path is not None:
            parts.append(_path_ops(clip_path, affine) + " W n")
        return " ".join(parts)

    def _begin(self, gc: GraphicsContextBase, fill: Optional[tuple]) -> Tuple[str, str, bool]:
        """Open a saved state with ``gc``'s clip, colours, transparency and
        line style: (operators, the painting operator - '' to paint nothing,
        whether the state is the PDF writer's own: see :meth:`_end`)."""
        rgb = gc.get_rgb()
        stroke, filled, stroke_alpha, fill_alpha = _painting(gc, rgb, fill)
        paint = "B" if filled and stroke else "f" if filled else "S" if stroke else ""
        if not paint:
            return "", "", False
        parts = [self._clip(gc)]
        if filled:
            assert fill is not None
            parts.append(f"{_num3(fill[0])} {_num3(fill[1])} {_num3(fill[2])} rg")
        if stroke:
            assert rgb is not None
            parts += _stroke_ops(gc, rgb)
        if stroke_alpha < 1 or fill_alpha < 1:
            self._op(("q",))
            self._op(("alpha", float(stroke_alpha), float(fill_alpha)))
            return " ".join(p for p in parts if p), paint, True
        return "q " + " ".join(p for p in parts if p), paint, False

    def _end(self, writers_state: bool) -> None:
        """Close what :meth:`_begin` opened: transparency needs the PDF
        writer's own saved state (it names a graphics state resource)."""
        if writers_state:
            self._op(("Q",))
        else:
            self._literal("Q")

    # --- drawing calls ---------------------------------------------------------------

    def draw_path(self, gc: GraphicsContextBase, path: Path, transform: Any, rgbFace: Any = None) -> None:
        state, paint, writers_state = self._begin(gc, rgbFace)
        if not paint:
            return
        clip = (0.0, 0.0, self.width, self.height) if rgbFace is None else None
        simplify = path.should_simplify and rgbFace is None
        self._literal(f"{state} {_path_ops(path, transform, clip, simplify)} {paint}")
        self._end(writers_state)

    def draw_markers(self, gc: GraphicsContextBase, marker_path: Path, marker_trans: Any, path: Path,
                     trans: Any, rgbFace: Any = None) -> None:
        state, paint, writers_state = self._begin(gc, rgbFace)
        if not paint:
            return
        marker = _path_ops(marker_path, marker_trans)
        pieces = [state]
        segments: Any = path.iter_segments(trans, simplify=False)
        for verts, _code in segments:
            if len(verts):
                x, y = verts[-2], verts[-1]
                if -50 <= x <= self.width + 50 and -50 <= y <= self.height + 50:
                    pieces.append(f"q 1 0 0 1 {_num(x)} {_num(y)} cm {marker} {paint} Q")
        self._literal(" ".join(pieces))
        self._end(writers_state)

    def draw_image(self, gc: GraphicsContextBase, x: float, y: float, im: Any, transform: Any = None) -> None:
        h, w = im.shape[:2]
        if w == 0 or h == 0:
            return
        pixels = np.asarray(im, dtype=np.uint8)[::-1]  # rows from the top, as PDF images run
        opaque = pixels.shape[2] == 3 or bool(np.all(pixels[..., 3] == 255))
        mode = "RGB" if opaque else "RGBA"  # no soft mask where nothing shows through
        # Compressed: a dense cloud's picture is mostly transparent, and it
        # travels to the PDF writer through a pipe.
        data = zlib.compress(np.ascontiguousarray(pixels[..., :3] if opaque else pixels).tobytes(), 1)
        # At (x, y): drawn at its resolution, or into the unit square that
        # ``transform`` (image -> page, when given) maps onto the page.
        matrix = None if transform is None else tuple(float(v) for v in transform.frozen().to_values())
        size = (72.0 * w / self.image_dpi, 72.0 * h / self.image_dpi) if matrix is None else (1.0, 1.0)
        self._op(("image", self._clip(gc), (float(x), float(y)), matrix, size, (w, h), mode, data))

    def draw_text(self, gc: GraphicsContextBase, x: float, y: float, s: str, prop: Any, angle: float,
                  ismath: Any = False, mtext: Any = None) -> None:
        rgb = gc.get_rgb()
        alpha = gc.get_alpha() if gc.get_forced_alpha() else (rgb[3] if len(rgb) > 3 else 1.0)
        if alpha == 0 or not s.strip():
            return
        y = self.height - y  # measured from the top: matplotlib asked the SVG renderer (flipy)
        anchor = "start"
        if mtext is not None and (angle == 0 or mtext.get_rotation_mode() == "anchor"):
            # Where the SVG anchors the text (backend_svg's rule): the
            # aligned point, moved along the text's up direction onto this
            # line's baseline, so the alignment holds in another font.
            ax, ay = mtext.get_transform().transform(mtext.get_unitless_position())
            up = (-math.sin(math.radians(angle)), math.cos(math.radians(angle)))
            shift = up[0] * (x - ax) + up[1] * (y - ay)
            x, y = ax + shift * up[0], ay + shift * up[1]
            anchor = _ANCHORS.get(mtext.get_ha(), "start")
        weight = prop.get_weight()
        bold = weight in _BOLD or (isinstance(weight, (int, float)) and weight >= 600)
        italic = prop.get_style() in ("italic", "oblique")
        font = "Helvetica" + ("-Bold" if bold else "") + ("Oblique" if italic and bold else
                                                          "-Oblique" if italic else "")
        self._op(("text", font, float(prop.get_size_in_points()), tuple(float(c) for c in rgb[:3]),
                  float(alpha), float(x), float(y), float(angle), anchor, s))

    # --- what matplotlib asks of a renderer -----------------------------------------

    def flipy(self) -> bool:
        return False

    def get_canvas_width_height(self) -> Tuple[float, float]:
        return self.width, self.height


def _painting(gc: GraphicsContextBase, rgb: Optional[tuple],
              fill: Optional[tuple]) -> Tuple[bool, bool, float, float]:
    """Whether ``gc`` strokes and whether it fills with ``fill`` (nothing
    that does not show), and the stroke's and the fill's alpha."""
    stroke = gc.get_linewidth() > 0 and rgb is not None and (len(rgb) < 4 or rgb[3] != 0.0)
    filled = fill is not None and (len(fill) < 4 or fill[3] != 0.0)
    if gc.get_forced_alpha():
        stroke_alpha = fill_alpha = gc.get_alpha()
    else:
        stroke_alpha = rgb[3] if rgb is not None and len(rgb) > 3 else 1.0
        fill_alpha = fill[3] if fill is not None and len(fill) > 3 else 1.0
    return stroke and stroke_alpha > 0, filled, stroke_alpha, fill_alpha


def _stroke_ops(gc: GraphicsContextBase, rgb: tuple) -> List[str]:
    """The operators of ``gc``'s line: colour, width, caps, joins and dashes."""
    ops = [f"{_num3(rgb[0])} {_num3(rgb[1])} {_num3(rgb[2])} RG {_num(gc.get_linewidth())} w "
           f"{_CAPS.get(gc.get_capstyle(), 0)} J {_JOINS.get(gc.get_joinstyle(), 0)} j"]
    offset, dash_list = gc.get_dashes()
    dashes: Any = dash_list
    if dashes is not None and len(dashes):
        ops.append("[" + " ".join(_num(d) for d in dashes) + f"] {_num(offset or 0)} d")
    return ops


def _num3(v: float) -> str:
    return f"{v:.3f}".rstrip("0").rstrip(".") or "0"


#: Texts measured (at 72 dpi, as the SVG renderer measures them):
#: (text, font, math) -> (width, height, descent) in points.
_MEASURED: Dict[tuple, Tuple[float, float, float]] = {}
_TEXT_TO_PATH = TextToPath()


def measured_text(s: str, prop: Any, ismath: Any) -> Tuple[float, float, float]:
    """Width, height and descent of a text in points, as an SVG renderer
    measures it, remembered for the process: a chart's layout, its
    drawing and the next charts ask for the same tick labels and titles."""
    key = (s, prop.copy(), ismath)  # as matplotlib keys its own text cache
    size = _MEASURED.get(key)
    if size is None:
        size = _MEASURED[key] = _TEXT_TO_PATH.get_text_width_height_descent(s, prop, ismath)
    return size


class _Both:
    """The renderer matplotlib draws through: every question (text sizes,
    options, groups) goes to the SVG renderer, every drawing call to the
    SVG renderer and then to the recorder."""

    def __init__(self, svg: RendererSVG, pdf: PdfRecorder) -> None:
        self._svg = svg
        self._pdf = pdf

    def __getattr__(self, name: str) -> Any:
        return getattr(self._svg, name)

    def get_text_width_height_descent(self, s: str, prop: Any, ismath: Any) -> Tuple[float, float, float]:
        """The SVG renderer's measure of a text, as the layout had it
        (remembered for the process: the same tick labels and titles again)."""
        return measured_text(s, prop, ismath)

    def draw_gouraud_triangles(self, *args: Any, **kwargs: Any) -> None:
        self._svg.draw_gouraud_triangles(*args, **kwargs)  # a PDF graphic has no shading: left out there

    def draw_tex(self, gc: Any, x: float, y: float, s: str, prop: Any, angle: float, *, mtext: Any = None) -> None:
        self._svg.draw_tex(gc, x, y, s, prop, angle, mtext=mtext)
        self._pdf.draw_text(gc, x, y, s, prop, angle, mtext=mtext)


def _to_both(name: str) -> Any:
    def call(self: _Both, *args: Any, **kwargs: Any) -> None:
        getattr(self._svg, name)(*args, **kwargs)
        getattr(self._pdf, name)(*args, **kwargs)

    call.__name__ = name
    return call


for _name in ("draw_path", "draw_markers", "draw_path_collection", "draw_quad_mesh", "draw_image", "draw_text"):
    setattr(_Both, _name, _to_both(_name))


def svg_and_graphic(fig: Figure, image_dpi: float) -> Tuple[bytes, PdfGraphic]:
    """Draw ``fig`` (laid out already: no layout engine) once: its SVG text
    (what ``fig.savefig(format="svg")`` writes, without a date) and its
    PDF graphic.  Rasterized artists are drawn at ``image_dpi``."""
    text = io.StringIO()
    dpi = fig.dpi
    fig.dpi = 72  # vector units are points, as savefig has them for an SVG
    try:
        width, height = fig.get_size_inches()
        w, h = width * 72, height * 72
        svg = RendererSVG(w, h, text, image_dpi=image_dpi, metadata={"Date": None})
        pdf = PdfRecorder(w, h, image_dpi)
        renderer = MixedModeRenderer(fig, width, height, image_dpi, _Both(svg, pdf))
        fig.draw(cast(Any, renderer))  # a renderer in all but name (as savefig's)
        renderer.finalize()
    finally:
        fig.dpi = dpi
    return text.getvalue().encode("utf-8"), pdf.graphic()
