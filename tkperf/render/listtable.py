"""docutils' ``list-table`` directive, read faster in the shape tkperf writes.

docutils reads a list table as a two-level bullet list and starts a new
state machine for every row (each builds its dozen states and their
transitions): nine tenths of parsing a full report, 38 tables and 1,400
cells, a quarter of a second.  :class:`ListTable` takes the rows and cells
from the lines itself when every line has the shape
:func:`tkperf.render.rst.list_table` writes (``* - text``, ``  - text``, an
empty ``* -`` or ``  -``) and parses each cell's text as docutils parses a
list item's text, with a reused nested state machine; so the doctree is
the same, node for node (a test holds the two readings of every example
report side by side).  Any other content (blank lines, a cell over
several lines, a malformed table) is read by docutils' own directive, with
its messages.

:func:`register` installs it for the process's reST parser; it reads every
table exactly as docutils does, so other users of docutils in the process
see no difference.
"""
from __future__ import annotations

import re
from typing import Any, List, Optional

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.parsers.rst.directives import tables
from docutils.statemachine import StringList
from docutils.utils import SystemMessagePropagation

#: A line of a row's first cell (``* -``) or of a further cell (``  -``),
#: with its text, which is one line without spaces at either end.
_CELL = re.compile(r"(\* |  )-(?: (\S(?:.*\S)?))?")


def _rows(content: StringList) -> Optional[List[List[Optional[int]]]]:
    """Per row, per cell, the index of its content line, or None where the
    cell is empty; None when the content is not wholly in the plain shape
    (or its rows are not all as long)."""
    rows: List[List[Optional[int]]] = []
    for i, line in enumerate(content):
        m = _CELL.fullmatch(line)
        if m is None:
            return None
        if m.group(1) == "* ":
            rows.append([])
        elif not rows:
            return None
        rows[-1].append(i if m.group(2) is not None else None)
    return rows if rows and all(len(r) == len(rows[0]) for r in rows) else None


class ListTable(tables.ListTable):
    """``list-table``: the plain shape read line by line, anything else by docutils."""

    def run(self) -> List[Any]:
        rows = _rows(self.content)
        if rows is None:
            return list(super().run())  # docutils reads it, and says what is wrong with it
        title, messages = self.make_title()
        try:
            table_data = [[self._cell(i) for i in row] for row in rows]
            # Where docutils' reading of the list ends: past its last line,
            # at no source line (the table takes that as its own source).
            document: Any = self.state.document  # typed as taking a str and an int only
            document.note_source(None, None)
            col_widths = self.get_column_widths(len(rows[0]))
            header_rows = self.options.get("header-rows", 0)
            stub_columns = self.options.get("stub-columns", 0)
            self.check_table_dimensions(table_data, header_rows, stub_columns)
        except SystemMessagePropagation as detail:
            return [detail.args[0]]
        table = self.build_table_from_list(table_data, col_widths, header_rows, stub_columns)
        if "align" in self.options:
            table["align"] = self.options.get("align")
        table["classes"] += self.options.get("class", [])
        self.set_table_width(table)
        self.add_name(table)
        if title:
            table.insert(0, title)
        return [table] + messages

    def _cell(self, index: Optional[int]) -> List[nodes.Node]:
        """The nodes of the cell on content line ``index`` (its text after
        the four columns of ``* - ``), parsed as a list item's text is."""
        if index is None:
            return []
        text = self.content[index][4:]
        block = StringList([text], items=[self.content.items[index]])
        holder = nodes.list_item()  # as in docutils' reading: messages go where a list item takes them
        self.state.nested_parse(block, self.content_offset + index, holder)
        return holder.children


def register() -> None:
    """Use :class:`ListTable` for ``list-table`` from now on."""
    directives.register_directive("list-table", ListTable)
