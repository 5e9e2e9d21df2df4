"""The results folder of ``tkperf history``: found without following links, read from one descriptor.

A results folder may be shared, and may hold what a lab leaves there: a
``latest.xml`` link to the newest night (dangling once that is moved), a
link loop, a FIFO.  :func:`scan` opens none of them and says which it left
out; :func:`read_result` reads a file through one descriptor, opened
without following a link when it was found in a folder, so the bytes that
are hashed are the bytes that are parsed, and a link swapped in after the
scan is not opened either.
"""
from __future__ import annotations

import errno
import os
import stat
from typing import Iterator, List, Optional, Tuple

from tkperf.errors import ResultFileError
from tkperf.history.indexfile import read_all
from tkperf.model.files import open_to_read
from tkperf.store.fileformat import MAX_FILE_BYTES


def read_result(path: str, follow: bool) -> Tuple[bytes, os.stat_result]:
    """A result file's bytes and status from one descriptor (the bytes hashed
    are the bytes parsed); ``follow`` False: a link is not opened; True (a
    file named on the command line): a link of root's or this user's is,
    another user's is not (:func:`tkperf.model.files.open_to_read`)."""
    if follow:
        fd = open_to_read(path, "")
    else:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError as exc:
            why = "a symbolic link, not opened" if exc.errno == errno.ELOOP else exc.strerror
            raise ResultFileError(f"{path}: {why}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ResultFileError(f"{path}: not a regular file")
        if st.st_size > MAX_FILE_BYTES:
            raise ResultFileError(f"{path}: {st.st_size} bytes, larger than the {MAX_FILE_BYTES} byte limit")
        return read_all(fd), st
    except OSError as exc:
        raise ResultFileError(f"{path}: {exc.strerror}") from None
    finally:
        os.close(fd)


def scan(directory: str, links: Optional[List[str]] = None) -> Iterator[str]:
    """Every ``*.xml`` regular file under ``directory``, sorted; hidden folders
    left out.  A link (to a file or a folder; dangling, looping or not) and
    anything else that is not a regular file or folder is neither followed
    nor opened: its path goes into ``links``."""
    for root, dirs, files in os.walk(directory):
        kept = []
        for d in sorted(dirs):
            if d.startswith("."):
                continue
            if os.path.islink(os.path.join(root, d)):
                if links is not None:
                    links.append(os.path.join(root, d))
            else:
                kept.append(d)
        dirs[:] = kept
        for name in sorted(files):
            if not name.lower().endswith(".xml"):
                continue
            path = os.path.join(root, name)
            try:
                regular = stat.S_ISREG(os.lstat(path).st_mode)
            except OSError:
                regular = False
            if regular:
                yield path
            elif links is not None:
                links.append(path)
