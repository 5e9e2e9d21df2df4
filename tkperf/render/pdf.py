"""Doctree -> PDF, with rst2pdf: A4, small table text, the plots as vector
graphics (their SVGs, read by svglib) where svglib is there, else their PNGs.
"""
from __future__ import annotations

import importlib
import io
import logging
import os
import tempfile
from typing import Any, Callable, Dict, List, Optional, Tuple



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


def _vector_images(tree: object, base_dir: str,
                   drawings: Optional[Dict[str, object]] = None) -> Tuple[bool, Callable[[], None]]:
    """Point every plot of ``tree`` at its SVG (:func:`vector_of`), for vector
    graphics in the PDF, when svglib (rst2pdf's SVG reader) is there; and
    have rst2pdf read each SVG once, not twice (it reads an image once to
    size it and once to draw it), or not at all where ``drawings`` (SVG path
    -> drawing) has it read already.  Returns whether any plot is an SVG now,
    and what undoes the second part."""
    from docutils import nodes  # loaded only when a PDF is written (in its own process)

    try:
        svgimage: Any = importlib.import_module("rst2pdf.svgimage")  # imports svglib
    except ImportError:  # no svglib: the PNGs (drawn beside the SVGs then)
        for image in tree.findall(nodes.image):  # type: ignore[attr-defined]
            if image["uri"].endswith(".svg"):
                image["uri"] = image["uri"][:-4] + ".png"
        return False, lambda: None
    found = False
    for image in tree.findall(nodes.image):  # type: ignore[attr-defined]
        uri = image["uri"]
        # absolute: rst2pdf joins a relative path to its basedir (a relative --outdir twice)
        path = os.path.abspath(uri if os.path.isabs(uri) else os.path.join(base_dir, uri))
        vector = path if path.endswith(".svg") else vector_of(path)
        if vector:
            image["uri"] = vector
            found = True
    read = svgimage.svg2rlg
    cache: Dict[str, object] = dict(drawings or {})

    def read_once(path: str, *args: object, **kwargs: object) -> object:
        if args or kwargs:
            return read(path, *args, **kwargs)
        if path not in cache:
            cache[path] = read(path)
        return cache[path]

    svgimage.svg2rlg = read_once

    def restore() -> None:
        svgimage.svg2rlg = read

    return found, restore


def render_pdf(doctree: object, base_dir: str, copy: bool = True,
               drawings: Optional[Dict[str, object]] = None) -> Tuple[Optional[bytes], List[str]]:
    """Doctree -> PDF with rst2pdf; (None, [reason]) when rst2pdf is missing or fails.
    ``copy=False`` writes from ``doctree`` itself (its last use).

    rst2pdf reports problems through its logger (with its own stderr
    handler); they are collected here and returned as warnings instead.
    """
    try:
        from rst2pdf.createpdf import RstToPdf  # loaded only when a PDF is written (in its own process)
    except ImportError as exc:
        return None, [f"PDF not written: rst2pdf is not available ({exc}); "
                      "install it with 'pip install rst2pdf'"]
    from reportlab import rl_config  # loaded only when a PDF is written (in its own process)

    tree = doctree.deepcopy() if copy else doctree  # type: ignore[attr-defined]
    vector, restore_svg = _vector_images(tree, base_dir, drawings)
    collector = _LogCollector()
    logger = logging.getLogger("rst2pdf")
    # Binary image streams for PNG plots: ASCII85 (reportlab's default) makes
    # the PDF a quarter larger and costs a third of its build time, in pure
    # Python.  Not with SVG plots: reportlab writes the few images inside a
    # drawing (a heat map's cells) inline, and inline images must be ASCII85.
    saved_a85 = rl_config.useA85
    rl_config.useA85 = 1 if vector else 0
    saved = (list(logger.handlers), logger.propagate)
    for h in saved[0]:
        logger.removeHandler(h)
    logger.addHandler(collector)
    logger.propagate = False
    buf = io.BytesIO()
    try:
        with tempfile.TemporaryDirectory(prefix="tkperf-pdf-") as tmp:
            style = os.path.join(tmp, "tkperf.yaml")
            with open(style, "w", encoding="utf-8") as fh:
                fh.write(_PDF_STYLE)
            rc = RstToPdf(stylesheets=[style], basedir=base_dir, breaklevel=1, breakside="any", splittables=True,
                          repeat_table_rows=True, footer="###Page###").createPdf(
                doctree=tree, output=buf)
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
