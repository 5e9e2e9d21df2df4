"""Files that never end up half-written (atomic replacement), output
directories, and files opened without following a link someone else
planted where others may write (``/run/lock``, ``/tmp``, a shared output
directory): tkperf runs as root, and a link there could point it at any file.

Every file a run or a report creates is either written through
:func:`atomic_write` or another :func:`temp_file` (a fresh temporary
file, then ``os.replace``, which replaces a planted link instead of
following it; no signal leaves the temporary file behind) or opened with
:func:`open_own` (``O_NOFOLLOW``, and refused unless it is a regular file
of ours with one link); the directories tkperf names itself (the plots)
are made with :func:`ensure_own_dir`.  Every file tkperf reads on a
user's behalf (a result, a baseline, an archive to import, a description
or feature file, a request, a password file, a capture, its iolog, an
imported trace) is opened with :func:`open_to_read` (or read whole with
:func:`read_limited`): never through another user's link, never a FIFO.
"""
from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from typing import IO, Iterator, Optional, Tuple, Type

from tkperf import programs
from tkperf.errors import OutputError, ResultFileError, TkperfError


@contextlib.contextmanager
def temp_file(directory: str, prefix: str, suffix: str = ".tmp", perms: int = 0o666, mode: str = "wb",
              buffering: int = -1) -> Iterator[Tuple[IO, str]]:
    """A fresh file in ``directory`` for something written under a temporary
    name: made with O_EXCL (nothing planted there is written through), with
    the permissions any new file gets (``perms`` less the umask), opened in
    ``mode``.  Yields the open file and its name; if the block raises, the
    file is closed and removed.  A signal that arrives as the file is made
    raises only once its name is known here (:func:`programs.signals_held`),
    so no signal leaves it behind.  Where the block ends normally the file
    stays open and its owner's: renamed when whole, or removed."""
    path = ""
    fh: Optional[IO] = None
    try:
        with programs.signals_held():
            fd, path = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=directory)
        try:
            mask = os.umask(0)
            os.umask(mask)
            os.fchmod(fd, perms & ~mask)
            fh = os.fdopen(fd, mode, buffering)
        except BaseException:
            if fh is None:
                with contextlib.suppress(OSError):
                    os.close(fd)
            raise
        yield fh, path
    except BaseException:
        if fh is not None:
            with contextlib.suppress(OSError, ValueError):
                fh.close()
        if path:
            with contextlib.suppress(OSError):
                os.unlink(path)
        raise


def atomic_write(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a crash leaves the old or the new file, never half."""
    directory = os.path.dirname(os.path.abspath(path))
    try:
        # Also on a signal mid-write: the old file stays, the temp file goes.
        with temp_file(directory, "." + os.path.basename(path) + ".") as (fh, tmp):
            with fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc
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


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _not_ours(st: os.stat_result) -> bool:
    return st.st_uid != os.geteuid()


def open_own(path: str, flags: int, what: str, mode: int = 0o644) -> int:
    """``os.open(path, flags | O_NOFOLLOW)``, then refused (OutputError,
    the descriptor closed) unless it is a regular file owned by this user
    with no other hard link: a link or a file someone else planted is never
    written through."""
    try:
        fd = os.open(path, flags | _NOFOLLOW, mode)
    except OSError as exc:
        if os.path.islink(path):
            raise OutputError(f"{what} {path} is a symbolic link; tkperf does not follow one "
                              "there (remove it)") from None
        raise OutputError(f"cannot open {what} {path}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        why = ("not a regular file" if not stat.S_ISREG(st.st_mode) else
               f"owned by another user (uid {st.st_uid})" if _not_ours(st) else
               f"a file with {st.st_nlink} hard links" if st.st_nlink != 1 else "")
    except OSError as exc:
        why = exc.strerror or str(exc)
    if why:
        os.close(fd)
        raise OutputError(f"{what} {path} is {why}; tkperf does not write to it (remove it)")
    return fd


def ensure_own_dir(path: str, what: str) -> str:
    """A directory tkperf names itself (``NAME-plots``) inside a directory of
    the user's: made if missing, refused (OutputError) if it is a link or
    someone else's, so nothing written into it lands elsewhere."""
    try:
        os.mkdir(path)
    except FileExistsError:
        pass
    except OSError as exc:
        raise OutputError(f"cannot create {what} {path}: {exc.strerror or exc}") from None
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise OutputError(f"cannot use {what} {path}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(st.st_mode):
        raise OutputError(f"{what} {path} is a symbolic link; tkperf does not follow one there (remove it)")
    if not stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{what} {path} is not a directory")
    if _not_ours(st):
        raise OutputError(f"{what} {path} is owned by another user (uid {st.st_uid}); "
                          "tkperf does not write into it (remove it)")
    return path


def ensure_dir(path: str, what: str = "output directory") -> str:
    """Create ``path`` (and parents) if needed; an OutputError says why it
    cannot be.  A symbolic link owned by another user (not root) is not
    followed, as the kernel's ``protected_symlinks`` does in sticky
    directories."""
    try:
        st = os.lstat(path)
    except OSError:
        st = None
    if st is not None and stat.S_ISLNK(st.st_mode) and st.st_uid not in (0, os.geteuid()):
        raise OutputError(f"{what} {path} is a symbolic link of another user (uid {st.st_uid}); "
                          "tkperf does not follow it")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create {what} {path}: {exc.strerror or exc}") from None
    if not os.path.isdir(path):
        raise OutputError(f"{what} {path} is not a directory")
    if not os.access(path, os.W_OK | os.X_OK):
        raise OutputError(f"{what} {path} is not writable")
    return path


def foreign_link(path: str) -> Optional[str]:
    """Why ``path`` is not to be followed: its first component (itself
    included) that is a symbolic link owned by neither root nor this user;
    None when there is none."""
    prefix = ""
    for part in os.path.abspath(path).split(os.sep)[1:]:
        prefix = f"{prefix}{os.sep}{part}"
        try:
            st = os.lstat(prefix)
        except OSError:
            return None  # a missing component: the open says so
        if stat.S_ISLNK(st.st_mode) and st.st_uid not in (0, os.geteuid()):
            return f"{prefix} is a symbolic link of another user (uid {st.st_uid})"
    return None


def open_to_read(path: str, what: str, error: Type[TkperfError] = ResultFileError) -> int:
    """A descriptor of the regular file ``path`` for reading, or ``error``
    saying in one line why not.  A symbolic link owned by another user (not
    root) anywhere on the path is not followed: the rule of the kernel's
    ``protected_symlinks`` for sticky directories, applied wherever the link
    stands, as tkperf runs as root and the kernel may not enforce it (the
    sysctl is off).  A FIFO or a device is not read (opened ``O_NONBLOCK``,
    then ``fstat``), so a planted one can neither hang nor feed the read.
    The path is checked again once open: a link swapped in meanwhile is found.
    The line names the file as ``WHAT PATH`` (``what`` may be empty)."""
    label = f"{what} {path}".strip()
    why = foreign_link(path)
    if why:
        raise error(f"{label}: {why}; tkperf does not follow it")
    flags = os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW
    if os.path.islink(path):  # a link of root's or this user's: followed
        flags &= ~getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise error(f"{label}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        why = foreign_link(path) or ("" if stat.S_ISREG(st.st_mode) else "not a regular file")
        if why:
            raise error(f"{label}: {why}; tkperf does not read it")
        return fd
    except BaseException:
        os.close(fd)
        raise


def read_limited(path: str, what: str, limit: int, error: Type[TkperfError] = ResultFileError) -> bytes:
    """The bytes of the regular file ``path``, opened by :func:`open_to_read`
    (never through another user's link, never a FIFO or a device), at most
    ``limit`` of them: a larger file is ``error`` in one line."""
    label = f"{what} {path}".strip()
    fd = open_to_read(path, what, error)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise error(f"{label}: {size} bytes, larger than the {limit} byte limit")
        chunks = []
        got = 0
        while got <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
    except OSError as exc:
        raise error(f"{label}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if got > limit:  # grew since the fstat
        raise error(f"{label}: larger than the {limit} byte limit")
    return b"".join(chunks)
