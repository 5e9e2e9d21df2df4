"""Blocks -> files: the charts, the ``.rst``, the self-contained ``.html``
(docutils, charts embedded as data URIs) and the ``.pdf`` (rst2pdf), each
replaced atomically, and the plots of an earlier build that this one did
not make removed.

:func:`publish` is the whole of it; the report and the comparison hand it
their blocks.  The charts are drawn first, in parallel
(:mod:`tkperf.render.parallel`), because a chart that could not be drawn
becomes a sentence in the reST instead of a figure; the PDF is begun
meanwhile (:class:`PdfChild`), each chart drawn from the graphic recorded
with its SVG (:mod:`tkperf.render.recorder`).
"""
from __future__ import annotations

import base64
import io
import os
import re
import secrets
import tempfile
import time
from dataclasses import dataclass
from html import escape as html_escape
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from tkperf.errors import OutputError
from tkperf.model.files import ensure_own_dir
from tkperf.model.shown import file_stem
from tkperf.render import blocks as b
from tkperf.render import navigation, parallel, rst
from tkperf.render.pdf import PdfGraphic, load_rst2pdf, svg_beside, vector_of
from tkperf.render.pdfchild import PdfChild, write_pdf
from tkperf.store import atomic_write, ensure_dir


@dataclass(frozen=True)
class ReportResult:
    """What a report build wrote (documents, then the plot directory) and what went wrong."""

    paths: Tuple[str, ...]
    warnings: Tuple[str, ...] = ()


_HTML_CSS = """
body { font-family: sans-serif; }
main { max-width: 60em; }
table { font-size: 0.9em; border-collapse: collapse; margin: 0.8em 0; }
table caption { font-weight: bold; text-align: left; padding-bottom: 0.3em; }
th, td { padding: 0.15em 0.5em; }
td { text-align: left; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
nav.contents, div.contents { border: 1px solid #ccc; padding: 0.3em 1em; margin: 1em 0; }
nav.contents ul, div.contents ul { margin: 0.1em 0; padding-left: 1.3em; }
nav.contents p, div.contents p { margin: 0; }
figure img, div.figure img { max-width: 100%; height: auto; }
figcaption, p.caption { font-size: 0.9em; }
div.warning, aside.admonition.warning { border-left: 4px solid #c33; padding: 0.3em 1em; }
"""

def _docutils_settings(warnings: io.StringIO) -> Dict[str, object]:
    return {
        "_disable_config": True,  # a user's docutils.conf must not change the report
        "report_level": 2,
        "halt_level": 5,
        "warning_stream": warnings,
        "file_insertion_enabled": False,
        # Raw is only ever written by the reST writer (PDF page breaks); every
        # text from a result file is escaped, so no raw block can come from one.
        "raw_enabled": True,
        "input_encoding": "utf-8",
        "output_encoding": "utf-8",
        "embed_stylesheet": True,
        "syntax_highlight": "none",
    }


#: docutils' WARNING level: a system message at it or above is a warning of the build.
_WARNING_LEVEL = 2


def _noting(what: str, warnings: List[str]) -> Callable[[Any], None]:
    """An observer of docutils' reporter (``Reporter.attach_observer``): each
    system message of WARNING level or above, told by its ``level``, is
    noted in ``warnings`` as its first line (where the warning stream's
    text goes on with the source it quotes, which may say anything)."""
    def note(message: Any) -> None:
        if message["level"] >= _WARNING_LEVEL:
            warnings.append(f"{what}: {message.astext().splitlines()[0].strip()}")
    return note


def _observed_reader(note: Callable[[Any], None]) -> Any:
    """docutils' standalone reader, its document's reporter observed by ``note``."""
    from docutils.readers import standalone

    class Reader(standalone.Reader):
        def new_document(self) -> Any:
            document = super().new_document()
            document.reporter.attach_observer(note)
            return document

    return Reader()


def _observed_html_writer(note: Callable[[Any], None]) -> Any:
    """docutils' HTML5 writer; the reporter made for its publishing (from a
    doctree: a new one) observed by ``note`` from its first transform on."""
    from docutils.transforms import Transform
    from docutils.writers import html5_polyglot

    class Observe(Transform):
        default_priority = 0  # before every other transform

        def apply(self) -> None:
            self.document.reporter.attach_observer(note)

    class Writer(html5_polyglot.Writer):
        def get_transforms(self) -> List[Any]:
            return [Observe, *super().get_transforms()]

    return Writer()


#: The only link targets a report may hold (the HTML ``href``, the PDF ``/URI``).
_LINK_SCHEMES = ("http", "https")


def parse_rst(text: str, source_path: str) -> Tuple[object, List[str]]:
    """reST -> a docutils doctree (shared by the HTML and PDF writers) and its
    warnings; a link to anything but http(s) is made plain text
    (:func:`unlink`)."""
    from docutils.core import publish_doctree  # docutils loads while the charts are drawn (publish), not at import

    from tkperf.render import listtable  # with docutils

    listtable.register()
    warnings: List[str] = []
    doctree = publish_doctree(text, source_path=source_path, reader=_observed_reader(_noting("reST", warnings)),
                              settings_overrides=_docutils_settings(io.StringIO()))  # the stream is not read
    unlinked = unlink(doctree)
    return doctree, warnings + [f"reST: link to {u!r} made plain text" for u in unlinked]


def unlink(doctree: object) -> List[str]:
    """The second guard behind :func:`tkperf.render.rst.rst_escape`: every
    reference in ``doctree`` to a URI whose scheme is not http(s)
    (``javascript:``, ``data:``, ``file:``, ``mailto:`` ...) becomes its
    text, and every raw block not for the PDF writer goes; the URIs removed."""
    from docutils import nodes  # docutils loads while the charts are drawn (publish), not at import

    removed: List[str] = []
    for ref in list(doctree.findall(nodes.reference)):  # type: ignore[attr-defined]
        uri = ref.get("refuri")
        if uri is None:
            continue  # a reference inside the document
        scheme = uri.split(":", 1)[0].strip().lower() if ":" in uri else ""
        if scheme not in _LINK_SCHEMES:
            removed.append(uri)
            ref.replace_self(nodes.Text(ref.astext()))
    for raw in list(doctree.findall(nodes.raw)):  # type: ignore[attr-defined]
        if raw.get("format") != "pdf":
            raw.parent.remove(raw)
    return removed


_SVG_DATA = "data:image/svg+xml;base64,"


def render_html(doctree: object, base_dir: str, copy: bool = True,
                later: Optional[Dict[str, Optional[Tuple[str, str]]]] = None) -> Tuple[bytes, List[str]]:
    """Doctree -> one self-contained HTML file: every image becomes a data URI,
    a plot's SVG (:func:`~tkperf.render.pdf.vector_of`) where there is one, else its PNG;
    stable anchors, a table of contents and right-aligned numbers
    (:func:`tkperf.render.navigation.prepare`).
    ``copy=False`` writes from ``doctree`` itself, changing it (its last use).

    ``later``: the SVG paths of charts still being drawn (-> None); each
    such image gets a placeholder instead (a random one: no text of a
    result file can hold it), noted in ``later`` (SVG path -> the
    placeholder and the image's own URI) for :func:`fill_html`."""
    from docutils import nodes  # docutils loads while the charts are drawn (publish), not at import
    from docutils.core import publish_from_doctree
    from docutils.writers import html5_polyglot  # docutils loads while the charts are drawn (publish), not at import

    tree: Any = doctree.deepcopy() if copy else doctree  # type: ignore[attr-defined]
    warnings: List[str] = []
    nonce, holes = secrets.token_hex(8), 0
    for image in tree.findall(nodes.image):
        uri = image["uri"]
        if uri.startswith("data:"):
            continue
        path = uri if os.path.isabs(uri) else os.path.join(base_dir, uri)
        svg = os.path.abspath(svg_beside(path))
        if later is not None and svg in later:
            hole = later[svg]
            if hole is None:
                hole = later[svg] = (f"tkperf-chart-{nonce}-{holes}-", uri)  # no token begins another
                holes += 1
            image["uri"] = _SVG_DATA + hole[0]
            continue
        path = vector_of(path) or path
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            warnings.append(f"HTML: cannot embed {uri}: {exc.strerror}")
            continue
        kind = "image/svg+xml" if path.endswith(".svg") else "image/png"
        image["uri"] = f"data:{kind};base64," + base64.b64encode(data).decode("ascii")
    navigation.prepare(tree)
    with tempfile.TemporaryDirectory(prefix="tkperf-css-") as tmp:
        css = os.path.join(tmp, "tkperf.css")
        with open(css, "w", encoding="utf-8") as fh:
            fh.write(_HTML_CSS)
        settings = dict(_docutils_settings(io.StringIO()), stylesheet_path=f"minimal.css,plain.css,{css}",
                        stylesheet_dirs=list(html5_polyglot.Writer.default_stylesheet_dirs))
        out = publish_from_doctree(tree, writer=_observed_html_writer(_noting("HTML", warnings)),
                                   settings_overrides=settings)
    return out, warnings


def fill_html(html: bytes, later: Mapping[str, Optional[Tuple[str, str]]]) -> Tuple[bytes, List[str]]:
    """Put each chart drawn since :func:`render_html` left its placeholder
    into ``html``: its SVG as a data URI (a chart whose SVG cannot be read
    keeps its URI, and a warning says so)."""
    warnings: List[str] = []
    for svg, hole in later.items():
        if not hole:
            continue  # no image of this chart in the document
        token, uri = hole
        try:
            with open(svg, "rb") as fh:
                filled = _SVG_DATA + base64.b64encode(fh.read()).decode("ascii")
        except OSError as exc:
            warnings.append(f"HTML: cannot embed {uri}: {exc.strerror}")
            filled = uri
        html = html.replace(f"{_SVG_DATA}{token}".encode("ascii"), html_escape(filled).encode("utf-8"))
    return html, warnings


def safe_name(name: str) -> str:
    """A run name fit for file names: no directories, nothing hidden, short
    enough for every file system (:func:`tkperf.model.shown.file_stem`)."""
    return file_stem(re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip(".-") or "report")


def prepare_outdir(outdir: str, plot_dirname: str) -> str:
    """Create the output and plot directories; an OutputError says why not."""
    ensure_dir(outdir, "report directory")
    return ensure_own_dir(os.path.join(outdir, plot_dirname), "plot directory")


def remove_stale_plots(plot_dir: str, keep: Sequence[str], png: bool = True) -> None:
    """Plots an earlier build wrote that this one did not (a test since
    removed, or PNGs of an earlier ``--png`` build).  ``keep``: the plots
    drawn (``x.png``, whose SVG is ``x.svg``); ``png``: whether their PNGs
    were drawn too."""
    drawn = {os.path.basename(p) for p in keep}
    try:
        names = os.listdir(plot_dir)
    except OSError:
        return
    wanted = {svg_beside(n) for n in drawn} | (drawn if png else set())
    for name in names:
        if name.endswith((".png", ".svg")) and name not in wanted:
            try:
                os.unlink(os.path.join(plot_dir, name))
            except OSError:
                pass


def _preload(formats: Sequence[str]) -> None:
    """Import the writers the formats need (while the charts are drawn)."""
    try:
        if "html" in formats:
            import docutils.writers.html5_polyglot  # noqa: F401
        if "pdf" in formats:
            load_rst2pdf()
    except ImportError:
        pass  # said where the writer is used


def write_documents(text: str, doctree: object, outdir: str, name: str, formats: Sequence[str],
                    graphics: Optional[Mapping[str, PdfGraphic]] = None,
                    pdf_child: Optional[PdfChild] = None,
                    html_made: Optional[Tuple[bytes, List[str]]] = None) -> Tuple[List[str], List[str]]:
    """Write ``text`` (and its ``doctree``, used up) as the chosen formats,
    each file atomically: (paths, warnings).  The PDF is written by
    ``pdf_child`` when one is writing it already, else, with the HTML too, by
    a forked process while this one writes the HTML.  ``html_made``: the
    HTML (and its warnings) when it was rendered already."""
    paths: List[str] = []
    warnings: List[str] = []
    if "rst" in formats:
        path = os.path.join(outdir, f"{name}.rst")
        atomic_write(path, text.encode("utf-8"))
        paths.append(path)
    pdf_path = os.path.join(outdir, f"{name}.pdf")
    if pdf_child is None and "html" in formats and "pdf" in formats:
        pdf_child = PdfChild.start(doctree, outdir, pdf_path, graphics)
    if "html" in formats:
        html, problems = html_made or render_html(doctree, outdir, copy="pdf" in formats and pdf_child is None)
        warnings += problems
        path = os.path.join(outdir, f"{name}.html")
        atomic_write(path, html)
        paths.append(path)
    if "pdf" in formats:
        answer = pdf_child.wait() if pdf_child is not None else None
        if answer is None:
            if pdf_child is not None:  # the process died: the doctree here may have data URIs now
                doctree, _ = parse_rst(text, os.path.join(outdir, f"{name}.rst"))
            answer = ("ok",) + write_pdf(doctree, outdir, pdf_path, False, graphics)
        if answer[0] == "output":
            raise OutputError(answer[1])
        warnings += answer[2]
        if answer[1]:
            paths.append(pdf_path)
    return paths, warnings


def chart_outputs(formats: Sequence[str], png: bool = False) -> Tuple[str, ...]:
    """What the charts are drawn as: SVG (vector graphics) for every format,
    PNG as well when asked for (``png``: the reST then refers to the PNGs,
    for reST viewers that show no SVG); for the PDF, each chart's PDF
    graphic too, recorded in the same drawing as its SVG."""
    out: Tuple[str, ...] = ("png", "svg") if png else ("svg",)
    if "pdf" in formats:
        out += ("pdf-graphic",)
    return out


def publish(content: Sequence[object], outdir: str, name: str, formats: Sequence[str],
            png: bool = False, drawers: Optional[parallel.Drawers] = None,
            tell: Optional[Callable[[str], None]] = None) -> ReportResult:
    """Blocks -> ``outdir/<name>.rst|.html|.pdf`` and ``outdir/<name>-plots/``,
    the plots as SVG files, and as PNG files too with ``png`` (which the reST
    then refers to).

    The charts are drawn first, in parallel and in document order;
    meanwhile the reST is made (as if every chart will be drawn) and
    parsed, the writers are loaded, a forked process starts the PDF,
    taking each chart's graphic as it comes (:class:`PdfChild`), and the
    HTML is rendered with a placeholder for each chart, filled in when all
    are drawn (:func:`fill_html`).  A chart that failed becomes a sentence
    instead of a figure (and a warning): the reST and the HTML are made
    again and the PDF started anew.  Then the files are written.
    ``drawers``: drawing processes made ready before, to draw the charts.
    ``tell``: where each phase is said as it starts (a report takes seconds
    to tens of seconds: whoever waits is told what it is doing).
    """
    say = tell or (lambda text: None)
    started = time.monotonic()
    plot_dirname = f"{name}-plots"
    plot_dir = prepare_outdir(outdir, plot_dirname)
    source = os.path.join(outdir, f"{name}.rst")
    tree_needed = "html" in formats or "pdf" in formats
    jobs = b.chart_jobs(content, plot_dir)
    svgs = [os.path.abspath(svg_beside(path)) for path, _ in jobs]  # how the PDF and the HTML know each chart
    outputs = chart_outputs(formats, png)
    vector = "png" not in outputs  # what the reST refers to
    say(f"drawing {len(jobs)} chart{'s' if len(jobs) != 1 else ''} and writing {', '.join(formats)} "
        f"in {outdir}")
    with parallel.Drawing(jobs, outputs=outputs, in_order="pdf" in formats, drawers=drawers) as drawing:
        text = rst.to_rst(content, plot_dirname, vector=vector)
        doctree, problems = parse_rst(text, source) if tree_needed else (None, [])
        _preload(formats)
        pdf_child, html_made, later = _meanwhile(doctree, outdir, name, formats, drawing.parallel, svgs, jobs)
        try:
            drawn = drawing.wait(pdf_child.send if pdf_child is not None else None)
        except BaseException:
            if pdf_child is not None:
                pdf_child.abort()
            raise
    failed = parallel.failures(drawn)
    if failed:
        html_made = None  # made again, from the reST that says what failed
        if pdf_child is not None:
            pdf_child.abort()
            pdf_child = None
        text = rst.to_rst(content, plot_dirname, failed, vector=vector)
        doctree, problems = parse_rst(text, source) if tree_needed else (None, [])
    html_made = _filled(html_made, later)
    say(f"{len(drawn)} chart{'s' if len(drawn) != 1 else ''} drawn ({time.monotonic() - started:.0f} s); "
        f"finishing {', '.join(formats)}")
    graphics = {os.path.abspath(svg_beside(d.path)): d.graphic for d in drawn if d.graphic is not None}
    paths, more = write_documents(text, doctree, outdir, name, formats, graphics, pdf_child, html_made)
    remove_stale_plots(plot_dir, [d.path for d in drawn if not d.kind], "png" in outputs)
    warnings = [d.warning(vector) for d in drawn if d.kind] + problems + more
    return ReportResult(paths=tuple(paths + [plot_dir]), warnings=tuple(warnings))


def _meanwhile(doctree: object, outdir: str, name: str, formats: Sequence[str], in_parallel: bool,
               svgs: List[str], jobs: List[Tuple[str, object]]
               ) -> Tuple[Optional[PdfChild], Optional[Tuple[bytes, List[str]]], Dict[str, Optional[Tuple[str, str]]]]:
    """While the charts are drawn (in parallel): the PDF's process started, and the
    HTML rendered with a placeholder for each chart (the third: filled in later)."""
    pdf_child: Optional[PdfChild] = None
    if "pdf" in formats and in_parallel:
        sizes = {svg: _points(b.chart_inches(spec)) for svg, (_, spec) in zip(svgs, jobs)}
        pdf_child = PdfChild.start(doctree, outdir, os.path.join(outdir, f"{name}.pdf"), sizes=sizes)
    html_made: Optional[Tuple[bytes, List[str]]] = None
    later: Dict[str, Optional[Tuple[str, str]]] = dict.fromkeys(svgs)
    if "html" in formats and in_parallel and (pdf_child is not None or "pdf" not in formats):
        # Meanwhile the HTML, with a placeholder for each chart (the doctree is
        # the PDF writer's no longer: it has its own copy, from the fork).
        html_made = render_html(doctree, outdir, copy=False, later=later)
    return pdf_child, html_made, later


def _filled(html_made: Optional[Tuple[bytes, List[str]]],
            later: Dict[str, Optional[Tuple[str, str]]]) -> Optional[Tuple[bytes, List[str]]]:
    """The HTML rendered meanwhile with its charts filled in (and its warnings: what was lost)."""
    if html_made is None:
        return None
    filled, lost = fill_html(html_made[0], later)
    return filled, html_made[1] + lost


def _points(inches: Tuple[float, float]) -> Tuple[float, float]:
    return inches[0] * 72.0, inches[1] * 72.0
