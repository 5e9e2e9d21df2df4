"""Doctree -> PDF, with rst2pdf: A4, small table text, the plots as vector
graphics: each drawn from the PDF graphic recorded while its SVG was drawn
(:class:`PdfGraphic`), else from its SVG read by svglib, else its PNG.
"""
from __future__ import annotations

import contextlib
import importlib
import io
import logging
import os
import sys
import tempfile
import zlib
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple


def svg_beside(path: str) -> str:
    """Where a plot's SVG is drawn: beside its PNG ``path`` (``x.png`` -> ``x.svg``)."""
    if path.endswith(".svg"):
        return path
    return (path[:-4] if path.endswith(".png") else path) + ".svg"


def vector_of(path: str) -> str:
    """The SVG drawn beside the plot ``path`` (``x.png``), or '' when there is none."""
    if not path.endswith(".png"):
        return ""
    svg = svg_beside(path)
    return svg if os.path.isfile(svg) else ""


class PdfGraphic:
    """A chart as PDF drawing operations (recorded by
    :mod:`tkperf.render.recorder` while its SVG was drawn), drawn in the
    chart's place in the PDF: ``width`` x ``height`` points, origin at the
    bottom left.  Plain data, so that it travels between processes (an
    image's pixels zlib-compressed)."""

    def __init__(self, width: float, height: float, ops: Tuple[tuple, ...]) -> None:
        self.width = width
        self.height = height
        self.ops = ops

    def drawOn(self, canv: Any) -> None:
        """Draw on a reportlab canvas, in its current coordinates."""
        for op in self.ops:
            kind = op[0]
            if kind == "lit":
                canv.addLiteral(op[1])
            elif kind == "q":
                canv.saveState()
            elif kind == "Q":
                canv.restoreState()
            elif kind == "alpha":
                canv.setStrokeAlpha(op[1])
                canv.setFillAlpha(op[2])
            elif kind == "text":
                _text(canv, *op[1:])
            elif kind == "image":
                _image(canv, *op[1:])


def _text(canv: Any, font: str, size: float, rgb: Tuple[float, float, float], alpha: float, x: float, y: float,
          angle: float, anchor: str, s: str) -> None:
    canv.saveState()
    if alpha < 1:
        canv.setFillAlpha(alpha)
    canv.setFillColorRGB(*rgb)
    canv.setFont(font, size)
    canv.translate(x, y)
    if angle:
        canv.rotate(angle)
    draw = {"middle": canv.drawCentredString, "end": canv.drawRightString}.get(anchor, canv.drawString)
    draw(0, 0, s)
    canv.restoreState()


def _image(canv: Any, clip: str, origin: Tuple[float, float], matrix: Optional[Tuple[float, ...]],
           size: Tuple[float, float], pixels: Tuple[int, int], mode: str, data: bytes) -> None:
    from PIL import Image  # loaded only when a PDF is written (in its own process)
    from reportlab.lib.utils import ImageReader

    canv.saveState()
    if clip:
        canv.addLiteral(clip)
    canv.translate(*origin)
    if matrix is not None:
        canv.transform(*matrix)
    canv.drawImage(ImageReader(Image.frombytes(mode, pixels, zlib.decompress(data))), 0, 0, size[0], size[1],
                   mask="auto" if mode == "RGBA" else None)
    canv.restoreState()


def _graphic_backend(graphics: Mapping[str, PdfGraphic], sizes: Mapping[str, Tuple[float, float]],
                     charts: Mapping[str, str], fallback: Any) -> Callable[..., Any]:
    """What rst2pdf makes the flowable of an SVG image with: for a chart's
    stand-in (``charts``: stand-in -> SVG path), a flowable of its size
    (``sizes``: SVG path -> width and height in points, known before it is
    drawn) that draws its graphic (``graphics``: SVG path -> graphic, looked
    up when the page is drawn: it may still be arriving); else ``fallback``
    (rst2pdf's own, through svglib; None without svglib)."""
    from reportlab.platypus import Flowable  # loaded only when a PDF is written (in its own process)

    class GraphicImage(Flowable):
        def __init__(self, path: str, size: Tuple[float, float], width: Optional[float],
                     height: Optional[float], kind: str) -> None:
            super().__init__()
            self.path = path
            w, h = size
            # as rst2pdf's SVG images: its image flowable reads and sets these
            self.imageWidth, self.imageHeight = width or w, height or h
            if kind in ("bound", "proportional") and width and height:
                factor = min(width / w, height / h)
                self.drawWidth, self.drawHeight = w * factor, h * factor
            else:
                self.drawWidth, self.drawHeight = self.imageWidth, self.imageHeight

        def wrap(self, aW: float, aH: float) -> Tuple[float, float]:
            return self.drawWidth, self.drawHeight

        def draw(self) -> None:
            graphic = graphics[self.path]
            canv = self.canv
            canv.saveState()
            canv.scale(self.drawWidth / graphic.width, self.drawHeight / graphic.height)
            graphic.drawOn(canv)
            canv.restoreState()

    def backend(filename: str, width: Optional[float] = None, height: Optional[float] = None,
                kind: str = "direct", mask: object = None, lazy: object = True, srcinfo: object = None) -> Any:
        path = charts.get(os.path.abspath(filename))
        if path is not None:
            return GraphicImage(path, sizes[path], width, height, kind)
        if fallback is None:
            raise ValueError(f"no drawing of {os.path.basename(filename)} (svglib is not installed)")
        return fallback(filename, width, height, kind, mask, lazy, srcinfo)

    return backend


#: rst2pdf's own cover template (title and subtitle), written into the PDF's
#: private folder: rst2pdf looks for ``cover.tmpl`` in its basedir, then in
#: ``~/.rst2pdf``, and renders what it finds with Jinja2, which runs code.
_COVER = """{% if title: %}

.. class:: title

{{title}}

{% endif %}

{% if subtitle: %}

.. class:: subtitle

{{subtitle}}

{% endif %}
"""
_COVER_NAME = "tkperf-cover.tmpl"

# rst2pdf stylesheet: A4, small table text so an 8-column matrix fits the page.
_PDF_STYLE = """
pageSetup:
  size: A4
  margin-top: 1.5cm
  margin-bottom: 1.5cm
  margin-left: 1.5cm
  margin-right: 1.5cm
styles:
  base:
    fontSize: 9
  table:
    commands: [[VALIGN, [0, 0], [-1, -1], TOP], [INNERGRID, [0, 0], [-1, -1], 0.25, black],
               [ROWBACKGROUNDS, [0, 0], [-1, -1], [white, '#E0E0E0']], [BOX, [0, 0], [-1, -1], 0.25, black],
               [TOPPADDING, [0, 0], [-1, -1], 1.5], [BOTTOMPADDING, [0, 0], [-1, -1], 1.5]]
  table-body:
    fontSize: 7.5
    leading: 9
  table-heading:
    fontSize: 7.5
    leading: 9
  table-title:
    fontSize: 9
    spaceBefore: 4
    keepWithNext: true
  heading1:
    fontSize: 150%
  heading2:
    fontSize: 125%
  heading3:
    fontSize: 110%
  title:
    fontSize: 180%
    spaceAfter: 6
  figure:
    spaceBefore: 2
    spaceAfter: 4
  figure-caption:
    fontSize: 8
  admonition:
    fontSize: 8.5
"""


class _LogCollector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: List[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _vector_images(tree: object, base_dir: str, graphics: Mapping[str, PdfGraphic],
                   sizes: Mapping[str, Tuple[float, float]], stand_ins: str) -> Tuple[bool, Callable[[], None]]:
    """Have rst2pdf draw every chart of ``tree`` from its recorded graphic
    (``graphics`` and ``sizes``: see :func:`render_pdf`), for vector
    graphics in the PDF; the image's path becomes an empty stand-in file in
    the private directory ``stand_ins`` (rst2pdf wants an image file that
    exists; the chart's SVG may still be being drawn).  Any other plot is
    pointed at its SVG, read by svglib (rst2pdf's SVG reader), and where
    svglib is not there, at its PNG when there is one.  Returns whether
    svglib reads any, and what undoes the change to rst2pdf."""
    from docutils import nodes  # loaded only when a PDF is written (in its own process)

    image_module: Any = importlib.import_module("rst2pdf.image")
    own = image_module.SVGImage  # None without svglib, or as loaded by load_rst2pdf
    fallback, looked_for_svglib = own, own is not None
    svglib_reads = False
    charts: Dict[str, str] = {}  # stand-in -> the chart's SVG path
    for image in tree.findall(nodes.image):  # type: ignore[attr-defined]
        uri = image["uri"]
        # absolute: rst2pdf joins a relative path to its basedir (a relative --outdir twice)
        path = os.path.abspath(uri if os.path.isabs(uri) else os.path.join(base_dir, uri))
        if svg_beside(path) in sizes:
            stand_in = os.path.join(stand_ins, f"chart-{len(charts)}.svg")
            with open(stand_in, "wb"):
                pass
            charts[stand_in] = svg_beside(path)
            image["uri"] = stand_in
            continue
        vector = vector_of(path) or (path if path.endswith(".svg") else "")
        if vector and not looked_for_svglib:
            fallback, looked_for_svglib = _svglib_image(), True
        if vector and fallback is not None:
            image["uri"] = vector
            svglib_reads = True
        elif path.endswith(".svg") and os.path.isfile(path[:-4] + ".png"):
            image["uri"] = path[:-4] + ".png"
        else:
            image["uri"] = path  # rst2pdf's basedir is a private folder (render_pdf)
    image_module.SVGImage = _graphic_backend(graphics, sizes, charts, fallback)

    def restore() -> None:
        image_module.SVGImage = own

    return svglib_reads, restore


def _svglib_image() -> Any:
    """rst2pdf's image flowable of an SVG read by svglib, loaded now (an
    image that is not a chart); None without svglib."""
    try:
        return importlib.import_module("rst2pdf.svgimage").SVGImage
    except ImportError:
        return None


def load_rst2pdf() -> Any:
    """rst2pdf's writer class (ImportError when it is not installed).

    rst2pdf imports matplotlib for its math directive, which a report
    never holds, and svglib for SVG images, which a report's charts do not
    need (:class:`PdfGraphic`); where they are not loaded yet they are kept
    out (a fifth of a second, in the process that parses the report):
    rst2pdf then goes without math, as it does where matplotlib is
    missing, and svglib is loaded when an SVG that is not a chart is met
    (:func:`_vector_images`)."""
    kept_out = [name for name in ("matplotlib", "svglib") if name not in sys.modules]
    for name in kept_out:
        sys.modules[name] = None  # type: ignore[assignment]  # an import of it raises ImportError
    try:
        from rst2pdf.createpdf import RstToPdf
    finally:
        for name in kept_out:
            if sys.modules.get(name, True) is None:
                del sys.modules[name]
    return RstToPdf


@contextlib.contextmanager
def _no_docutils_config() -> Iterator[None]:
    """Within: docutils reads no configuration file (``DOCUTILSCONFIG`` empty:
    not ``./docutils.conf``, ``~/.docutils`` nor ``/etc/docutils.conf``), as
    for tkperf's own parsing (``_disable_config``); rst2pdf parses its cover
    page with docutils' defaults."""
    saved = os.environ.get("DOCUTILSCONFIG")
    os.environ["DOCUTILSCONFIG"] = ""
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("DOCUTILSCONFIG", None)
        else:
            os.environ["DOCUTILSCONFIG"] = saved


def render_pdf(doctree: object, base_dir: str, copy: bool = True,
               graphics: Optional[Mapping[str, PdfGraphic]] = None,
               sizes: Optional[Mapping[str, Tuple[float, float]]] = None) -> Tuple[Optional[bytes], List[str]]:
    """Doctree -> PDF with rst2pdf; (None, [reason]) when rst2pdf is missing or fails.
    ``copy=False`` writes from ``doctree`` itself (its last use).

    The charts are drawn from their PDF graphics: ``graphics`` maps a
    chart's SVG path to its :class:`PdfGraphic`; ``sizes`` (the same paths
    -> width and height in points) says which charts have one and how large
    it is, so that ``graphics`` may be a mapping that waits for a graphic
    still being drawn when its page is drawn; without ``sizes``, the
    graphics' own.

    rst2pdf reports problems through its logger (with its own stderr
    handler); they are collected here and returned as warnings instead.
    """
    try:
        RstToPdf = load_rst2pdf()  # loaded only when a PDF is written (in its own process)
    except ImportError as exc:
        return None, [f"PDF not written: rst2pdf is not available ({exc}); "
                      "install it with 'pip install rst2pdf'"]
    from reportlab import rl_config  # loaded only when a PDF is written (in its own process)

    tree = doctree.deepcopy() if copy else doctree  # type: ignore[attr-defined]
    graphics = graphics if graphics is not None else {}
    if sizes is None:
        sizes = {path: (g.width, g.height) for path, g in graphics.items()}
    collector = _LogCollector()
    logger = logging.getLogger("rst2pdf")
    # Binary image streams: ASCII85 (reportlab's default) makes the PDF a
    # quarter larger and costs a third of its build time, in pure Python.
    # Not where svglib reads an SVG: reportlab writes the few images inside
    # its drawing (a heat map's cells) inline, and inline images must be ASCII85.
    saved_a85 = rl_config.useA85
    saved = (list(logger.handlers), logger.propagate)
    for h in saved[0]:
        logger.removeHandler(h)
    logger.addHandler(collector)
    logger.propagate = False
    buf = io.BytesIO()
    restore_svg: Callable[[], None] = lambda: None  # noqa: E731
    try:
        with tempfile.TemporaryDirectory(prefix="tkperf-pdf-") as tmp:
            svglib_reads, restore_svg = _vector_images(tree, base_dir, graphics, sizes, tmp)
            rl_config.useA85 = 1 if svglib_reads else 0
            style = os.path.join(tmp, "tkperf.yaml")
            with open(style, "w", encoding="utf-8") as fh:
                fh.write(_PDF_STYLE)
            with open(os.path.join(tmp, _COVER_NAME), "w", encoding="utf-8") as fh:
                fh.write(_COVER)
            # basedir: the private folder, where rst2pdf finds tkperf's cover
            # first (every image path is absolute); no docutils.conf read
            # for the cover's text, neither the current folder's nor ~/.docutils.
            with _no_docutils_config():
                rc = RstToPdf(stylesheets=[style], basedir=tmp, custom_cover=_COVER_NAME, breaklevel=1,
                              breakside="any", splittables=True, repeat_table_rows=True,
                              footer="###Page###").createPdf(doctree=tree, output=buf)
    except Exception as exc:  # noqa: BLE001 - a failing PDF writer must not cost the other formats
        return None, [f"PDF not written: rst2pdf failed: {type(exc).__name__}: {exc}"]
    finally:
        restore_svg()
        rl_config.useA85 = saved_a85
        logger.removeHandler(collector)
        for h in saved[0]:
            logger.addHandler(h)
        logger.propagate = saved[1]
    problems = [f"PDF: {m}" for m in collector.messages]
    if rc or not buf.getvalue().startswith(b"%PDF"):
        return None, ["PDF not written: rst2pdf failed"] + problems
    return buf.getvalue(), problems
