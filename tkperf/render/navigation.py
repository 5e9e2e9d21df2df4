"""What makes the HTML report easy to move around in, done on its doctree
before it is written: stable anchors, a table of contents, numbers
right-aligned.

* Every section gets an id made from its own title under its parent's id
  (``iops``, ``iops-steady-state-convergence``), so that the same part of
  the same test has the same anchor in every build and every report: a
  comparison, a mail or a ticket can link to ``report.html#lat-latency-percentiles``.
  docutils' own ids number repeated titles through the whole document
  (``steady-state-convergence-3``), which moves when a test is added; they
  are kept after the stable one, so that older links still work.
* A table of contents with a link to every test and each of its parts.
* Table columns that hold only numbers (and n/a) are marked ``num``; the
  stylesheet aligns them right.

Titles and cells are plain text from the result model; ids are made of
lower-case letters, digits and hyphens only.
"""
from __future__ import annotations

import re
from typing import Any, List, Set

#: How deep the table of contents goes: the tests and their parts.
CONTENTS_DEPTH = 2
CONTENTS_TITLE = "Contents"
_NUMBER = re.compile(r"^[+\-\u2212]?\d[\d,]*(\.\d+)?(%| ?(µs|us|ms|s|IOPS|MB/s|GB|GiB|x))?$")
_NOT_MEASURED = ("n/a", "n/s", "")


def slug(text: str) -> str:
    """Lower-case letters, digits and hyphens: 'RND 4KiB 100% W' -> 'rnd-4kib-100-w'."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "part"


def stable_ids(tree: object) -> None:
    """Give every section an id from its title path (see the module's text)."""
    from docutils import nodes  # docutils loads while the charts are drawn (documents.publish)

    used: Set[str] = set()
    for node in tree.findall(nodes.Element):  # type: ignore[attr-defined]
        used.update(node.get("ids", []))

    def walk(parent: object, prefix: str, parent_slug: str) -> None:
        for section in [c for c in parent.children if isinstance(c, nodes.section)]:  # type: ignore[attr-defined]
            title = section.next_node(nodes.title)
            own = slug(title.astext() if title is not None else "")
            # 'Throughput 128k' under 'Throughput': throughput-128k, not throughput-throughput-128k
            rest = own[len(parent_slug) + 1:] if parent_slug and own.startswith(parent_slug + "-") else own
            base = f"{prefix}-{rest}" if prefix else rest
            ident, n = base, 2
            while ident in used and ident not in section["ids"]:
                ident, n = f"{base}-{n}", n + 1
            used.add(ident)
            section["ids"] = [ident] + [i for i in section["ids"] if i != ident]
            walk(section, ident, own)

    walk(tree, "", "")


def _entries(parent: Any, depth: int) -> Any:
    from docutils import nodes  # docutils loads while the charts are drawn (documents.publish)

    sections = [c for c in parent.children if isinstance(c, nodes.section)]
    if not sections or depth == 0:
        return None
    items = nodes.bullet_list()
    for section in sections:
        title = section.next_node(nodes.title)
        para = nodes.paragraph()
        para += nodes.reference("", title.astext() if title is not None else section["ids"][0],
                                refid=section["ids"][0], internal=True)
        item = nodes.list_item("", para)
        below = _entries(section, depth - 1)
        if below is not None:
            item += below
        items += item
    return items


def add_contents(tree: object, depth: int = CONTENTS_DEPTH) -> None:
    """A table of contents right after the document's title: a link to every
    section down to ``depth`` levels (after :func:`stable_ids`)."""
    from docutils import nodes  # docutils loads while the charts are drawn (documents.publish)

    items = _entries(tree, depth)
    if items is None:
        return
    topic = nodes.topic(classes=["contents"], ids=["contents"], names=["contents"])
    topic += nodes.title("", CONTENTS_TITLE)
    topic += items
    titles = [i for i, c in enumerate(tree.children) if isinstance(c, (nodes.title, nodes.subtitle))]  # type: ignore[attr-defined]
    tree.insert(titles[-1] + 1 if titles else 0, topic)  # type: ignore[attr-defined]


def numeric_columns(rows: List[List[str]]) -> List[bool]:
    """Which columns of a table body hold numbers only (n/a, n/s and blanks allowed)."""
    width = max((len(r) for r in rows), default=0)
    out = []
    for i in range(width):
        cells = [r[i].strip() for r in rows if i < len(r)]
        shown = [c for c in cells if c not in _NOT_MEASURED]
        out.append(bool(shown) and all(_NUMBER.match(c) for c in shown))
    return out


def align_numbers(tree: object) -> None:
    """Mark the cells (and heading) of every all-number column ``num``."""
    from docutils import nodes  # docutils loads while the charts are drawn (documents.publish)

    for group in tree.findall(nodes.tgroup):  # type: ignore[attr-defined]
        body = group.next_node(nodes.tbody)
        if body is None:
            continue
        rows = [list(row.findall(nodes.entry)) for row in body.findall(nodes.row)]
        numeric = numeric_columns([[e.astext() for e in row] for row in rows])
        head = group.next_node(nodes.thead)
        heads = [list(row.findall(nodes.entry)) for row in head.findall(nodes.row)] if head is not None else []
        for row in rows + heads:
            for entry, is_number in zip(row, numeric):
                if is_number:
                    entry["classes"].append("num")


def prepare(tree: object) -> None:
    """Stable ids, the table of contents and aligned numbers, for the HTML."""
    stable_ids(tree)
    add_contents(tree)
    align_numbers(tree)
