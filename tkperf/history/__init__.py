"""``tkperf history``: every result of a device in time order, its trends and change points.

    files or a directory -> index (SQLite beside the results, from the XML)
    -> trends (per device and test, change points) -> text, JSON or HTML pages

:func:`collect` does the first two steps; :mod:`tkperf.history.page`
writes the pages, :mod:`tkperf.render.trendcharts` the plots.
"""
from __future__ import annotations

import os
from typing import List, Optional, Sequence, Tuple

from tkperf.errors import ResultFileError
from tkperf.history.folder import scan
from tkperf.history.index import INDEX_NAME, Index, UpdateStats
from tkperf.history.trends import Device, build
from tkperf.model.files import foreign_link

__all__ = ["collect", "INDEX_NAME"]


def _paths(inputs: Sequence[str], links: List[str]) -> Tuple[List[str], Optional[str], bool]:
    """(result paths, the index's path or None, whether the paths were named
    one by one); the links a directory's scan left out go into ``links``."""
    if not inputs:
        raise ResultFileError("history: give result files or a directory of them")
    paths: List[str] = []
    named = True
    for item in inputs:
        # A folder is scanned and its index written in it, a file read: neither
        # through another user's link (a folder's own entries are never followed).
        why = foreign_link(item)
        if why:
            raise ResultFileError(f"{item}: {why}; tkperf does not follow it")
        if os.path.isdir(item):
            found = list(scan(item, links))
            named = False
            paths += found
        elif os.path.isfile(item):
            paths.append(item)
        else:
            raise ResultFileError(f"{item}: no such file or directory")
    index = os.path.join(inputs[0], INDEX_NAME) if len(inputs) == 1 and os.path.isdir(inputs[0]) else None
    return sorted(set(paths), key=paths.index), index, named


def collect(inputs: Sequence[str]) -> Tuple[List[Device], Optional[str], UpdateStats]:
    """The devices and their trends of the results in ``inputs`` (files, or a
    directory whose index is kept in it); the index's path (None: in memory,
    for files named one by one or an index not trusted or not written) and
    what its update did, with the lines to show about the index.  A
    ResultFileError when there is no result, or a named file is not one."""
    links: List[str] = []
    paths, where, named = _paths(inputs, links)
    index = Index(where, inputs[0] if where is not None else None)
    try:
        stats = index.update(paths, strict=named)
        results = index.results()
    finally:
        index.close()
    stats.links = len(links)
    stats.notes = list(index.notes)
    if not results:
        raise ResultFileError(f"{', '.join(inputs)}: no tkperf result files"
                              + (f" ({len(stats.skipped)} other XML files)" if stats.skipped else "")
                              + (f" ({len(links)} links left out)" if links else ""))
    return build(results), (where if index.kept else None), stats
