"""The content of a report as plain data: blocks of text, tables and charts.

A test type's section, the summary page and the run notes are lists of the
blocks below.  They say *what* is shown, never *how*: :mod:`tkperf.render.rst`
turns them into reStructuredText, :mod:`tkperf.render.charts` draws the
charts, :mod:`tkperf.render.documents` writes HTML and PDF.  Nothing here
imports matplotlib or docutils; every text is plain (the reST writer escapes
it), every number in a chart is plain data that a table can show too.

Blocks: :class:`Title`, :class:`Heading`, :class:`Rubric`, :class:`Paragraph`,
:class:`Admonition`, :class:`Table`, :class:`Header` (the SNIA header),
:class:`Literal` and :class:`Chart`.  A :class:`Chart` holds a *chart spec*:
which drawing (the spec's class) and its data (:class:`Series`,
:class:`Grid`, :class:`Curve` ...).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np

Pairs = Tuple[Tuple[str, str], ...]


# --- text blocks ------------------------------------------------------------------

@dataclass(frozen=True)
class Title:
    """The document's title (one per document)."""

    text: str


@dataclass(frozen=True)
class Heading:
    """A section title, ``level`` 1 (a test) to 4.  In the PDF a heading of
    level 2 or more starts a new page unless ``room_cm`` (default 5 cm; a
    chart needs 10) is left below it, so no heading ends a page alone."""

    text: str
    level: int = 1
    room_cm: float = 0.0

    def __post_init__(self) -> None:
        if not 1 <= self.level <= 4:
            raise ValueError(f"heading level {self.level} is not 1 to 4")


@dataclass(frozen=True)
class Rubric:
    """A heading outside the section structure (no page break before it)."""

    text: str


@dataclass(frozen=True)
class Paragraph:
    """One paragraph of plain text; ``anchor``: a name other blocks link to
    (a :class:`Header`'s ``link``)."""

    text: str
    anchor: str = ""


@dataclass(frozen=True)
class Admonition:
    """A boxed note (``kind``: warning, note ...); several lines become a
    list; no lines, no box."""

    kind: str
    lines: Tuple[str, ...]


@dataclass(frozen=True)
class Table:
    """A table of plain-text cells under one header row; ``stub_columns``
    leading columns are row titles; ``widths`` are relative column widths."""

    headers: Tuple[str, ...]
    rows: Tuple[Tuple[str, ...], ...]
    title: str = ""
    widths: Tuple[int, ...] = ()
    stub_columns: int = 0

    def __post_init__(self) -> None:
        if self.widths and len(self.widths) != len(self.headers):
            raise ValueError("table widths do not match its columns")
        if any(len(r) != len(self.headers) for r in self.rows):
            raise ValueError("a table row does not match its columns")


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], title: str = "",
          widths: Sequence[int] = (), stub_columns: int = 0) -> Table:
    """A :class:`Table` from any sequences (lists welcome)."""
    return Table(tuple(headers), tuple(tuple(r) for r in rows), title, tuple(widths), stub_columns)


@dataclass(frozen=True)
class Header:
    """The SNIA report header: four groups of (label, value) pairs, shown as
    one table: test platform then set-up parameters | device under test then
    test parameters, each side running on where its first group ends."""

    platform: Pairs
    device: Pairs
    setup: Pairs
    test: Pairs
    #: Lines listed right below the tables: a long list in a table cell
    #: would split the table across pages.
    notes: Tuple[str, ...] = ()
    notes_title: str = ""
    #: Below the tables: ``notes_title``, the word ``link`` linked to the
    #: paragraph of that ``anchor`` (the deviations, listed once on the first
    #: page), then ``link_text``.
    link: str = ""
    link_text: str = ""


@dataclass(frozen=True)
class Literal:
    """Preformatted text, shown as it is."""

    text: str


# --- chart data -----------------------------------------------------------------------

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


@dataclass(frozen=True, eq=False)
class Curve:
    """One curve of many points (a stream's intervals): ``x`` and ``y`` arrays."""

    label: str
    x: np.ndarray
    y: np.ndarray

    def normalised(self) -> Curve:
        """The curve divided by its own maximum (1.0 = its peak), so that the
        shapes of fast and slow drives compare; unchanged when it has no
        positive value."""
        peak = float(np.max(self.y)) if self.y.size else 0.0
        return Curve(self.label, self.x, self.y / peak if peak > 0 else self.y)


@dataclass(frozen=True)
class Panel:
    """One bar chart of a figure: a grid drawn as bar groups (rows) of bars (columns)."""

    grid: Grid
    title: str
    ylabel: str


# --- chart specs: which drawing, and its data ------------------------------------------

@dataclass(frozen=True)
class ConvergenceChart:
    """Values per round, one line per series; the window's rounds shaded."""

    series: Tuple[Series, ...]
    ylabel: str
    title: str
    window: Tuple[int, ...] = ()
    legend_title: str = ""


@dataclass(frozen=True)
class WindowChart:
    """The tracking variable per round with its steady-state window: the
    window's average, the ±10% and ±20% bands, the least-squares line."""

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
class LinesChart:
    """One line per grid column over the rows' numeric keys (a log2 block-size axis)."""

    grid: Grid
    ylabel: str
    title: str


@dataclass(frozen=True)
class HeatmapChart:
    """A grid as coloured cells, the value printed in each."""

    grid: Grid
    title: str
    colorbar_label: str


@dataclass(frozen=True)
class BarsChart:
    """Grouped bar charts side by side, one legend for all."""

    panels: Tuple[Panel, ...]
    title: str = ""
    legend_title: str = ""


@dataclass(frozen=True, eq=False)
class CurvesChart:
    """Curves of many points, dots where they are dense.  ``time_axis``: x is
    seconds, shown in seconds, minutes or hours as the longest curve needs;
    ``thousands``: y ticks with thousands separators."""

    curves: Tuple[Curve, ...]
    xlabel: str
    ylabel: str
    title: str = ""
    time_axis: bool = False
    thousands: bool = True


@dataclass(frozen=True, eq=False)
class XYChart:
    """Curves of y over x with markers: a sweep (IOPS vs QD or OIO), a
    demand-intensity curve (IOPS vs response time), per-interval latency.

    ``xlog``/``ylog``: 0 for a linear axis, else the log base (2 for queue
    depths, 10 for times); ``xticks``: x positions labelled with their
    plain values (1, 2, 4 ... 128); ``dots``: markers only, no lines
    (one dot per second); ``time_axis``: x is seconds, shown in seconds,
    minutes or hours as the longest curve needs; ``ylim``: (low, high), each
    None for automatic; ``hlines``: (label, y) lines across the plot;
    ``vlines``: (label, x) lines from bottom to top (x in the curves' units:
    seconds on a time axis).
    """

    curves: Tuple[Curve, ...]
    xlabel: str
    ylabel: str
    title: str = ""
    xlog: int = 0
    ylog: int = 0
    xticks: Tuple[float, ...] = ()
    dots: bool = False
    time_axis: bool = False
    ylim: Tuple[Optional[float], Optional[float]] = (0.0, None)
    hlines: Tuple[Tuple[str, float], ...] = ()
    legend_title: str = ""
    vlines: Tuple[Tuple[str, float], ...] = ()
    #: A second x scale along the top: (its label, x units per top unit),
    #: e.g. ("Drive fills", capacity in GB) under a GB axis.
    top_axis: Optional[Tuple[str, float]] = None


@dataclass(frozen=True, eq=False)
class HistogramChart:
    """Response-time histograms: per curve, x the bin's response time (µs)
    and y its I/O count; drawn as the share of the curve's I/Os per bin
    over a log time axis."""

    curves: Tuple[Curve, ...]
    title: str = ""
    xlabel: str = "Response time (µs)"


@dataclass(frozen=True, eq=False)
class ConfidenceChart:
    """Confidence ("nines") plot: per curve, x a response time (µs) and y
    the share of I/Os completed within it (0..1, rising); y is drawn on a
    nines scale (90%, 99%, 99.9% ... equally spaced) and the ``marks``
    (percentiles as text: '99.99') as lines across."""

    curves: Tuple[Curve, ...]
    title: str = ""
    marks: Tuple[str, ...] = ("99", "99.9", "99.99", "99.999", "99.9999")
    xlabel: str = "Response time (µs)"


@dataclass(frozen=True)
class Stamp:
    """What names a chart outside its report (its SVG or PNG copied into
    slides): ``line``, a small caption line drawn in the picture (the drive,
    the run, the test), and the SVG's ``<title>`` and ``<desc>``.  Plain
    text, partly from the result file: drawn as text, escaped in the SVG,
    never markup."""

    line: str
    title: str = ""
    desc: str = ""


@dataclass(frozen=True, eq=False)
class Chart:
    """A chart: drawn into ``filename`` (a PNG in the report's plot directory)
    from ``spec``, shown with ``caption``; ``stamp``: what names it outside the report."""

    filename: str
    spec: object
    caption: str
    stamp: Optional[Stamp] = None


@dataclass(frozen=True, eq=False)
class Stamped:
    """A chart's spec and its stamp, as a drawing process gets them
    (:func:`tkperf.render.charts.draw` draws ``spec`` with ``stamp``)."""

    spec: object
    stamp: Stamp
    caption: str = ""  #: the chart's caption, its name where the spec has no title


def spec_of(spec: object) -> object:
    """The chart spec itself, whether stamped or not."""
    return spec.spec if isinstance(spec, Stamped) else spec


Block = Union[Title, Heading, Rubric, Paragraph, Admonition, Table, Header, Literal, Chart]


#: A chart's width and usual height, inches: the width of an A4 page's text.
CHART_WIDTH_IN = 7.0
CHART_HEIGHT_IN = 3.4


def chart_inches(spec: object) -> Tuple[float, float]:
    """The size ``spec`` is drawn at (width, height in inches), known before
    it is drawn: a heat map grows with its rows, every other chart is the
    usual size (a stamp's line is drawn within it)."""
    spec = spec_of(spec)
    if isinstance(spec, HeatmapChart):
        return CHART_WIDTH_IN, max(2.4, 0.9 + 0.36 * len(spec.grid.rows))
    return CHART_WIDTH_IN, CHART_HEIGHT_IN


def charts(blocks: Sequence[object]) -> Tuple[Chart, ...]:
    """The charts among ``blocks``, in order."""
    return tuple(b for b in blocks if isinstance(b, Chart))


def chart_jobs(content: Sequence[object], plot_dir: str) -> List[Tuple[str, object]]:
    """What to draw: each chart's path in ``plot_dir`` and its spec, with
    its stamp where it has one (:class:`~tkperf.render.blocks.Stamped`: a
    stamp names the chart in its own file)."""
    return [(os.path.join(plot_dir, c.filename), Stamped(c.spec, c.stamp, c.caption) if c.stamp is not None
             else c.spec) for c in charts(content)]
