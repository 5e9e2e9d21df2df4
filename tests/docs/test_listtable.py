"""The fast reading of list tables (tkperf.render.listtable) against docutils' own.

Every case is parsed twice, once with docutils' list-table directive and
once with tkperf's, and the two doctrees must be the same: every node,
every attribute, the source line of every node, and the same warnings.
"""
import io
import os

import pytest
from docutils import nodes
from docutils.core import publish_doctree
from docutils.parsers.rst import directives
from docutils.parsers.rst.directives import tables

from tkperf import store
from tkperf.render import documents, listtable, rst
from tkperf.report import report

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def parse(text, fast):
    directives.register_directive("list-table", listtable.ListTable if fast else tables.ListTable)
    stream = io.StringIO()
    try:
        tree = publish_doctree(text, source_path="/x/report.rst",
                               settings_overrides=documents._docutils_settings(stream))
    finally:
        listtable.register()
    where = [(type(n).__name__, n.line, n.source) for n in tree.findall(nodes.Element)]
    return tree.pformat(), where, stream.getvalue()


def same_both_ways(text):
    stock, fast = parse(text, fast=False), parse(text, fast=True)
    assert fast[0] == stock[0]
    assert fast[1] == stock[1]
    assert fast[2] == stock[2]
    return stock


EXAMPLES = sorted(n for n in os.listdir(os.path.join(ROOT, "examples")) if n.endswith(".xml"))


def test_the_examples_are_there():
    assert {"example-ssd.xml", "example-full.xml"} <= set(EXAMPLES)


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_example_report_reads_the_same(name):
    path = os.path.join(ROOT, "examples", name)
    text = rst.to_rst(report.report_blocks(store.load(path)), "x-plots", vector=True)
    tree, _, _ = same_both_ways(text)
    tables = text.count(".. list-table::")
    assert tables >= 5 and tree.count("<table") >= tables  # the tables were read, not skipped


TRICKY = ["- x", "-", "1.", "2. two", "#.", "a) b", "*emph*", "**bold**", "`x <javascript:y>`_", "x::", "::",
          "| line", ">>> 1", "+---+", ".. comment", ".. image:: x.png", "=====", "term", ":field: value",
          "-o option", "\\- escaped", "a | b", "[1]_", "|sub|", "x_", "__ y", "µs ≤ 99.9999%", "\\", "*"]


def test_cells_of_every_kind_read_the_same():
    # Unescaped on purpose: whatever a cell holds, it is read as docutils reads it.
    lines = [".. list-table:: A *title*", "   :header-rows: 1", "   :widths: 1 2", ""]
    for i in range(0, len(TRICKY) - 1, 1):
        lines += [f"   * - {TRICKY[i]}", f"     - {TRICKY[i + 1]}"]
    lines += ["   * -", "     -", ""]
    tree, _, warnings = same_both_ways("\n".join(lines) + "\n")
    assert "<emphasis>" in tree and "<bullet_list" in tree and "<enumerated_list" in tree
    assert warnings  # the broken references were reported, as docutils reports them


def test_escaped_cells_read_the_same():
    text = rst.list_table(["Figure", "Value"], [[t, t[::-1]] for t in TRICKY], title="Escaped", stub_columns=1)
    tree, _, warnings = same_both_ways(text)
    assert tree.count("<entry") == 2 * (len(TRICKY) + 1) and "<bullet_list" not in tree
    assert warnings == ""


@pytest.mark.parametrize("body", [
    "   * - a\n     - b\n\n   * - c\n     - d\n",   # blank lines between rows
    "   * - a\n       more\n     - b\n",            # a cell over two lines
    "   * - a\n     - b\n   * - c\n",               # rows of different lengths
    "     - a\n   * - b\n",                         # a cell before the first row
    "   * - a\n     -  b\n",                        # two spaces after the dash
    "   * - a\n     - b\n   * text\n",              # not a table row
    "   *  - a\n",                                  # a dash further in
    "   * - a\n     - b\n     - c\n   * - d\n     - e\n     - f\n",
])
def test_any_other_shape_is_read_by_docutils(body):
    text = ".. list-table::\n   :header-rows: 1\n\n" + body
    same_both_ways(text)


def test_errors_are_docutils_own():
    _, _, warnings = same_both_ways(".. list-table::\n   :widths: 1 2 3\n\n   * - a\n     - b\n")
    assert "widths do not match" in warnings
    _, _, warnings = same_both_ways(".. list-table::\n   :header-rows: 2\n\n   * - a\n     - b\n")
    assert "header row(s) specified" in warnings
    _, _, warnings = same_both_ways(".. list-table::\n")
    assert "content required" in warnings


def test_parse_rst_uses_the_fast_reading(monkeypatch):
    read = []
    real = listtable.ListTable._cell
    monkeypatch.setattr(listtable.ListTable, "_cell", lambda self, i: read.append(i) or real(self, i))
    doctree, warnings = documents.parse_rst(rst.list_table(["a", "b"], [["1", "2"]]), "/x/r.rst")
    assert read == [0, 1, 2, 3] and warnings == []
    assert [e.astext() for e in doctree.findall(nodes.entry)] == ["a", "b", "1", "2"]
