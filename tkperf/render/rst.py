"""Blocks -> reStructuredText.

Every text a block carries is plain text, often from a result file (a
device model, an event's message, a description or feature file);
:func:`rst_escape` makes it inert, so no such text can inject markup: no
directive, role, substitution, footnote or citation reference, target,
raw block, and no link (docutils' standalone URIs and e-mail addresses
are broken by an escaped colon or ``@``; :func:`tkperf.render.documents.parse_rst`
checks the parsed tree once more).  The only raw markup written is the
PDF page-break hint before a subsection.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from tkperf.model.shown import cut
from tkperf.render import blocks as b
from tkperf.render.pdf import svg_beside

_INLINE = re.compile(r"([\\`*_|<>\[\]])")
#: A colon that would end a URI scheme (``javascript:``, ``data:``, ``file:``
#: ...): a letter-led run of scheme characters not preceded by a letter or
#: digit, the colon, then something other than a space.  Escaping the colon
#: stops docutils from reading a standalone URI; ``@`` is escaped for e-mail
#: addresses (docutils' own rule: an escaped ``@`` is never an address).
_SCHEME_COLON = re.compile(r"(?<![A-Za-z0-9])([A-Za-z][A-Za-z0-9.+-]*):(?=\S)")
_BLOCK_START = re.compile(r"^(?:[-+*#:.=~^\"'(|>!@$%&,;?/]|\d+[.)]\s|[A-Za-z][.)]\s|[ivxlcdmIVXLCDM]+[.)]\s)")
#: Relative column widths of the SNIA header's tables: label, value, label, value.
HEADER_WIDTHS = (16, 34, 16, 34)
_UNDERLINE = "=-~^"


#: The most characters of one text a report shows: a longer one (only a
#: file's can be: tkperf/model/shown.py bounds most at load) is cut, with a note.
MAX_SHOWN = 64 * 1024


def rst_escape(text: object) -> str:
    """One line of plain text made inert in reST: inline markup escaped, no
    line breaks, and nothing that starts a list, field or comment; at most
    :data:`MAX_SHOWN` characters of it (then a note of how many were cut)."""
    s = cut(str(text), MAX_SHOWN)
    s = "".join(ch if ch.isprintable() else " " for ch in s)
    s = " ".join(s.split())
    s = _INLINE.sub(r"\\\1", s)
    s = _SCHEME_COLON.sub(r"\1\\:", s).replace("@", "\\@")
    if s.endswith("::"):  # would announce a literal block
        s = s[:-1] + "\\:"
    if _BLOCK_START.match(s):
        s = "\\" + s
    return s


def literal_line(text: str) -> str:
    """One line of a literal block: shown as it is, but without control characters."""
    return "".join(ch if ch.isprintable() or ch == "\t" else "\ufffd" for ch in text)


def text_width(s: str) -> int:
    """Display width: East Asian wide characters take two columns."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def list_table(headers: Sequence[str], rows: Iterable[Sequence[str]], title: str = "",
               widths: Optional[Sequence[int]] = None, stub_columns: int = 0) -> str:
    """A docutils list-table of plain-text cells (escaped); empty cells stay empty."""
    lines = [".. list-table::" + (f" {rst_escape(title)}" if title else ""), "   :header-rows: 1"]
    if widths:
        lines.append("   :widths: " + " ".join(str(int(w)) for w in widths))
    if stub_columns:
        lines.append(f"   :stub-columns: {stub_columns}")
    lines.append("")
    body = [list(r) for r in rows]
    if not body:  # docutils refuses a table without a body row
        body = [["none"] + [""] * (len(headers) - 1)]
    for row in [list(headers)] + body:
        for i, cell in enumerate(row):
            text = rst_escape(cell)
            lines.append(("   * - " if i == 0 else "     - ") + text if text else
                         ("   * -" if i == 0 else "     -"))
    return "\n".join(lines) + "\n"


def _side_by_side(left: Sequence[Tuple[str, str]], right: Sequence[Tuple[str, str]]) -> List[List[str]]:
    n = max(len(left), len(right))
    left = list(left) + [("", "")] * (n - len(left))
    right = list(right) + [("", "")] * (n - len(right))
    return [[a, v, c, d] for (a, v), (c, d) in zip(left, right)]


#: A group's title inside the header table, where the group after it starts.
_GROUP_TITLE = "\x00title\x00"


def header_rst(h: b.Header) -> str:
    """The SNIA header as one list table of two columns of (label, value):
    test platform, then set-up parameters on the left; device under test,
    then test parameters on the right.  Each column runs on where its first
    group ends (the second group's title a bold row), so the short platform
    rows do not leave blank rows beside the device's tall cells.

    A list table, not a grid table: a grid table's cells are wrapped by hand
    and a word longer than its column (a model number, a serial, a
    ``/dev/disk/by-id/...`` path) would be cut, and docutils joins the
    pieces with a space.  Each group's title spans its label and value
    columns in spirit; a list table has no spans, so the value column's
    title cell stays empty.
    """
    left = list(h.platform) + [(_GROUP_TITLE, "Set-up parameters")] + list(h.setup)
    right = list(h.device) + [(_GROUP_TITLE, "Test parameters")] + list(h.test)
    lines = [".. list-table::", "   :header-rows: 1",
             "   :widths: " + " ".join(str(w) for w in HEADER_WIDTHS), ""]
    for row in [["Test platform", "", "Device under test", ""]] + _side_by_side(left, right):
        for i, cell in enumerate(row):
            if cell == _GROUP_TITLE:  # our own words, bold: never text from a file
                text = f"**{rst_escape(row[i + 1])}**"
            elif i % 2 and row[i - 1] == _GROUP_TITLE:
                text = ""
            else:
                text = rst_escape(cell)
            lines.append(("   * - " if i == 0 else "     - ") + text if text else ("   * -" if i == 0 else "     -"))
    return "\n".join(lines) + "\n" + _notes(h.notes_title, h.notes, h.link, h.link_text)


def _notes(title: str, notes: Sequence[str], link: str = "", link_text: str = "") -> str:
    """The lines below a header's tables: ``title``, then ``notes`` as a
    list, or ``title``, the word ``link`` as a link to the paragraph of that
    anchor (our own names only: one lower-case word), then ``link_text``."""
    if link and re.fullmatch(r"[a-z]+", link):
        return "\n" + " ".join(p for p in (rst_escape(title), f"`{link}`_", rst_escape(link_text)) if p) + ".\n"
    if not notes:
        return ""
    return "\n" + rst_escape(title) + "\n\n" + "\n".join(f"* {rst_escape(n)}" for n in notes) + "\n"


def heading(text: str, level: int = 1, room_cm: float = 0.0) -> List[str]:
    """A section title; below level 1, first the PDF's conditional page break."""
    t = rst_escape(text)
    out = []
    if level > 1:
        points = round((room_cm or 5.0) / 2.54 * 72)
        out.append(f".. raw:: pdf\n\n   FrameBreak {points}")
    out.append(f"{t}\n{_UNDERLINE[level - 1] * text_width(t)}")
    return out


def figure(ref: str, caption: str) -> str:
    c = rst_escape(caption)
    return f".. figure:: {ref}\n   :width: 100%\n   :alt: {c}\n\n   {c}"


def block_parts(block: object, plot_ref: str = "", failed: Optional[Dict[str, str]] = None,
                vector: bool = False) -> List[str]:
    """The reST of one block, as parts separated by blank lines; a chart
    refers to its PNG file, or to its SVG with ``vector``."""
    if isinstance(block, b.Paragraph):
        return ([f".. _{block.anchor}:"] if block.anchor else []) + [rst_escape(block.text)]
    if isinstance(block, b.Table):
        return [list_table(block.headers, block.rows, block.title, block.widths, block.stub_columns)]
    if isinstance(block, b.Heading):
        return heading(block.text, block.level, block.room_cm)
    if isinstance(block, b.Chart):
        filename = svg_beside(block.filename) if vector else block.filename
        if failed and block.filename in failed:
            return [rst_escape(f"(The plot {filename} could not be drawn: {failed[block.filename]}.)")]
        return [figure(f"{plot_ref}/{filename}" if plot_ref else filename, block.caption)]
    if isinstance(block, b.Header):
        return [header_rst(block)]
    if isinstance(block, b.Admonition):
        if not block.lines:
            return []
        many = len(block.lines) > 1
        body = "\n".join(f"   * {rst_escape(x)}" if many else f"   {rst_escape(x)}" for x in block.lines)
        return [f".. {block.kind}::\n\n{body}"]
    if isinstance(block, b.Rubric):
        return [f".. rubric:: {rst_escape(block.text)}"]
    if isinstance(block, b.Title):
        t = rst_escape(block.text)
        bar = "=" * text_width(t)
        return [f"{bar}\n{t}\n{bar}"]
    if isinstance(block, b.Literal):
        return ["::\n\n" + "\n".join("   " + literal_line(line) for line in block.text.splitlines())]
    raise TypeError(f"not a report block: {type(block).__name__}")


def to_rst(blocks: Iterable[object], plot_ref: str = "", failed: Optional[Dict[str, str]] = None,
           vector: bool = False) -> str:
    """A document's reST.  Charts refer to ``plot_ref/filename`` (its SVG,
    ``x.svg`` for ``x.png``, with ``vector``); a chart named in ``failed``
    (filename -> reason) becomes a sentence saying it could not be drawn."""
    parts = [p.rstrip("\n") + "\n" for block in blocks for p in block_parts(block, plot_ref, failed, vector)]
    return "\n".join(parts)
