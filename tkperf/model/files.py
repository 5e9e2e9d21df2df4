"""Files that never end up half-written: atomic replacement, output directories."""
from __future__ import annotations

import os
import tempfile
from typing import Optional

from tkperf.errors import OutputError


def atomic_write(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a crash leaves the old or the new file, never half."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp",
                                   dir=directory)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc
    try:
        # mkstemp makes the file owner-only; give it what any new file gets.
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        # Also on a signal mid-write: the old file stays, the temp file goes.
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc
        raise
    try:
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def close_quietly(fd: Optional[int]) -> None:
    """Close ``fd`` if there is one; a close that fails has nothing left to save."""
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass


def ensure_dir(path: str, what: str = "output directory") -> str:
    """Create ``path`` (and parents) if needed; an OutputError says why it cannot be."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create {what} {path}: {exc.strerror or exc}") from None
    if not os.path.isdir(path):
        raise OutputError(f"{what} {path} is not a directory")
    if not os.access(path, os.W_OK | os.X_OK):
        raise OutputError(f"{what} {path} is not writable")
    return path
