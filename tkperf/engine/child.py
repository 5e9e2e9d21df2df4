"""A run started by a run of several targets (the child side of
``docs/parallel.rst``): a run that finds the parent's environment
variables (:mod:`tkperf.engine.multi`) sends its progress, and why it
stopped, to the parent and records in its result how many runs shared the
host.  The parent's side is :mod:`tkperf.engine.parallel`.
"""
from __future__ import annotations

import contextlib
import errno
import logging
import os
import resource
import stat
from typing import Iterator, Optional, Tuple

from tkperf import strictjson
from tkperf.engine import multi
from tkperf.engine.session import Session
from tkperf.errors import EXIT_OUTPUT, Interrupted, TkperfError, UsageError, exit_code_of
from tkperf.kit import progress as engine_progress
from tkperf.model import files

progress_log = logging.getLogger("tkperf.progress")

#: A progress line longer than this is cut, so that each line is one write
#: of at most PIPE_BUF bytes, never torn by another.
_MAX_TEXT = 2000

#: The environment variables that make a run report to a parent or record
#: the host's sharing: a run whose environment has neither is by itself.
CHILD_ENV = frozenset((multi.PROGRESS_FD_ENV, multi.HOST_SHARING_ENV))


class _ChannelHandler(logging.Handler):
    def __init__(self, hooks: ChildHooks) -> None:
        super().__init__()
        self.hooks = hooks

    def emit(self, record: logging.LogRecord) -> None:
        self.hooks.send({"t": "msg", "text": record.getMessage()[:_MAX_TEXT], "level": record.levelname})


class ChildHooks:
    """A run started by a run of several targets: its progress (snapshots and
    progress lines) and why it stopped go to the parent's pipe, and the run
    records ``facts["host_sharing"]`` from ``TKPERF_HOST_SHARING``."""

    def __init__(self, fd: Optional[int], sharing: Optional[dict]) -> None:
        self.session: Optional[Session] = None
        self.fd = fd
        self.sharing = sharing
        self.handler = _ChannelHandler(self)

    @classmethod
    def from_env(cls, environ=os.environ) -> Optional[ChildHooks]:
        """Hooks if the environment names a channel or the host sharing (both
        are removed from ``environ``, so that no program the run starts sees
        them); None otherwise.  A bad value is a UsageError."""
        fd_text = environ.pop(multi.PROGRESS_FD_ENV, None)
        sharing_text = environ.pop(multi.HOST_SHARING_ENV, None)
        if fd_text is None and sharing_text is None:
            return None
        sharing = None
        if sharing_text is not None:
            try:
                sharing = multi.parse_sharing(sharing_text)
            except ValueError as exc:
                raise UsageError(f"${multi.HOST_SHARING_ENV}: {exc}") from None
        fd = None
        if fd_text is not None:
            try:
                fd = int(fd_text)
                if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                    raise ValueError
            except (ValueError, OSError):
                raise UsageError(f"${multi.PROGRESS_FD_ENV}={fd_text!r}: not an open pipe") from None
            os.set_blocking(fd, False)  # a parent that stops reading must never stall the run
        return cls(fd, sharing)

    def attach(self, session: Session) -> None:
        """Send ``session``'s progress from now on (after the run's logging is set up)."""
        self.session = session
        engine_progress.add_listener(self._on_progress)
        progress_log.addHandler(self.handler)

    def detach(self) -> None:
        engine_progress.remove_listener(self._on_progress)
        progress_log.removeHandler(self.handler)

    def send(self, obj: dict) -> None:
        if self.fd is None:
            return
        data = (strictjson.dumps(obj, default=str) + "\n").encode("utf-8")
        try:
            os.write(self.fd, data)
        except BlockingIOError:
            pass  # the parent is behind: this line is lost, the next state replaces it
        except OSError:
            self._close_fd()  # the parent is gone; the run goes on as if alone

    def stopped(self, exc: BaseException) -> None:
        """Tell the parent why the run stopped (before :meth:`close`)."""
        text, code = stop_reason(exc)
        self.send({"t": "error", "text": text[:_MAX_TEXT], "exit": code})

    def _on_progress(self, prog: engine_progress.Progress, event: str) -> None:
        run = self.session.run if self.session is not None else None
        if event == "run" and self.sharing is not None and run is not None:
            # Progress says "run" right before the runner's first save.
            run.facts["host_sharing"] = multi.merge_sharing(run.facts.get("host_sharing"), self.sharing)
        self.send({"t": "state", "state": engine_progress.snapshot(prog)})

    def _close_fd(self) -> None:
        fd, self.fd = self.fd, None
        files.close_quietly(fd)

    def close(self) -> None:
        """Stop listening and tell the parent the CPU time this run used."""
        self.detach()
        me = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.send({"t": "end", "cpu_self_s": me.ru_utime + me.ru_stime,
                   "cpu_children_s": kids.ru_utime + kids.ru_stime})
        self._close_fd()


@contextlib.contextmanager
def child_hooks(environ=os.environ) -> Iterator[Optional[ChildHooks]]:
    """:meth:`ChildHooks.from_env` around a whole run: an exception out of
    it is told to the parent, then the end; None when the run is alone."""
    hooks = ChildHooks.from_env(environ)
    if hooks is None:
        yield None
        return
    try:
        yield hooks
    except BaseException as exc:
        hooks.stopped(exc)
        raise
    finally:
        hooks.close()


def stop_reason(exc: BaseException) -> Tuple[str, int]:
    """Why a run stopped and its exit code: what :func:`tkperf.cli.main`
    says of ``exc``, without its ``tkperf: error: `` (``stopped: ...`` and
    ``internal error: ...`` keep their word)."""
    if isinstance(exc, Interrupted):
        return f"stopped: {exc}", exit_code_of(exc)
    if isinstance(exc, TkperfError):
        return str(exc), exit_code_of(exc)
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted", exit_code_of(exc)
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        where = exc.filename if exc.filename is not None else "to standard output"
        return f"cannot write {where}: {exc.strerror}", EXIT_OUTPUT
    return f"internal error: {type(exc).__name__}: {exc} (details in the run's log)", exit_code_of(exc)
