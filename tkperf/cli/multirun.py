"""``tkperf ssd run DEV DEV ...`` (and ``hdd run``): one complete,
independent run per target, all at the same time (docs/parallel.rst).

Two sides:

* the parent, :func:`run_several`: checks every target and option before
  anything starts, names the runs, asks once per device (or takes
  ``--yes``), starts one ``python -m tkperf PROFILE run DEV --request FILE``
  per target (FILE: the run's :class:`~tkperf.engine.request.RunRequest`
  with that target's own name, outdir and summary) through
  :class:`tkperf.engine.multi.ParallelRuns`, shows them together,
  then writes the comparison report, the combined ``--json-summary`` and
  exits with the worst target's code;
* the child, :class:`ChildHooks`: a run that finds the parent's
  environment variables sends its progress, and why it stopped, to the
  parent and records in its result how many runs shared the host.
"""
from __future__ import annotations

import contextlib
import dataclasses
import errno
import logging
import os
import resource
import shutil
import signal
import stat
import sys
import tempfile
import time
from collections import Counter
from typing import Iterator, List, Optional, Sequence, Tuple

from tkperf import strictjson
from tkperf import notify
from tkperf.cli import common, multiplan, runargs
from tkperf.cli import progress as shown
from tkperf.engine import multi
from tkperf.kit import progress as engine_progress
from tkperf.engine import request as request_file
from tkperf.engine.request import RunRequest
from tkperf.errors import EXIT_OK, EXIT_OUTPUT, Interrupted, TkperfError, UsageError, exit_code_of
from tkperf.model import files
from tkperf import store

log = logging.getLogger("tkperf")

#: A progress line longer than this is cut, so that each line is one write
#: of at most PIPE_BUF bytes, never torn by another.
_MAX_TEXT = 2000


# --- the child side ----------------------------------------------------------

class _ChannelHandler(logging.Handler):
    def __init__(self, hooks: "ChildHooks") -> None:
        super().__init__()
        self.hooks = hooks

    def emit(self, record: logging.LogRecord) -> None:
        self.hooks.send({"t": "msg", "text": record.getMessage()[:_MAX_TEXT], "level": record.levelname})


class ChildHooks:
    """A run started by a run of several targets: its progress (snapshots and
    progress lines) and why it stopped go to the parent's pipe, and the run
    records ``facts["host_sharing"]`` from ``TKPERF_HOST_SHARING``."""

    def __init__(self, fd: Optional[int], sharing: Optional[dict]) -> None:
        self.session = None
        self.fd = fd
        self.sharing = sharing
        self.handler = _ChannelHandler(self)

    @classmethod
    def from_env(cls, environ=os.environ) -> Optional["ChildHooks"]:
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

    def attach(self, session) -> None:
        """Send ``session``'s progress from now on (after the run's logging is set up)."""
        self.session = session
        engine_progress.add_listener(self._on_progress)
        common.progress.addHandler(self.handler)

    def detach(self) -> None:
        engine_progress.remove_listener(self._on_progress)
        common.progress.removeHandler(self.handler)

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


# --- the parent side -----------------------------------------------------------

class _Shown(multi.Listener):
    """Connects the runs to the combined view."""

    def __init__(self, view: shown.CombinedPlain, runs: Sequence[engine_progress.RemoteRun]) -> None:
        self.view = view
        self.runs = {r.name: r for r in runs}

    def started(self, o: multi.Outcome) -> None:
        self.view.note(f"{o.target.name}: started on {o.target.device}")

    def state(self, o: multi.Outcome, state: dict) -> None:
        self.runs[o.target.name].update(state)
        self.view.refresh()

    def message(self, o: multi.Outcome, text: str) -> None:
        self.view.message(self.runs[o.target.name], text)

    def output(self, o: multi.Outcome, line: str, stream: str) -> None:
        self.view.output(self.runs[o.target.name], line, stream)

    def ended(self, o: multi.Outcome) -> None:
        self.runs[o.target.name].exit_code = o.exit_code
        left = sum(1 for r in self.runs.values() if not r.ended)
        why = f": {o.error}" if o.error else ""
        self.view.note(f"{o.target.name}: ended, {o.status}, exit code {o.exit_code}{why}; "
                       f"{left} of {len(self.runs)} still running")

    def signalled(self, signum: int) -> None:
        self.view.note(f"{signal.Signals(signum).name}: stopping every run; each saves what it has "
                       "and can be resumed")

    def tick(self) -> None:
        self.view.refresh()


def run_several(request: RunRequest) -> int:
    twice = [d for d, n in Counter(request.devices).items() if n > 1]
    if twice:
        raise UsageError(f"{twice[0]} is given twice: give each target once")
    runargs.unattended(request.json_summary, request.mail)  # checked before anything runs
    planned = multiplan.plan_targets(request, runargs.open_run)
    try:
        return _start(request, planned)
    finally:
        multiplan.close_sides(planned)  # each child opens its own session to its host


def _start(request: RunRequest, planned: List[multiplan.Planned]) -> int:
    base = request.outdir or ""
    outdirs = [os.path.join(base, p.name) if base else p.name for p in planned]
    if request.dry_run:
        for p, outdir in zip(planned, outdirs):
            print(f"# ===== {p.arg}: run {p.name} in {outdir}")
            runargs.dry_run(p.dev, p.opts, request.profile, p.side, request.jobs)
        return EXIT_OK
    if request.resume and request.overwrite:
        raise UsageError("--resume continues the saved runs, --overwrite replaces them: give one")
    for p, outdir in zip(planned, outdirs):
        xml = store.run_file(outdir, p.name)
        if not request.resume:
            common.refuse_replacing(xml, request.overwrite)  # every target, before any starts
        elif not os.path.exists(xml):
            raise UsageError(f"--resume: no saved run {xml} to resume")
    for p in planned:
        p.side.check_safe(p.dev, request.force)  # read-only; the child checks again under its lock
    multiplan.check_fio_servers(request.remote, planned)
    for p in planned:
        common.confirm(p.dev, request.yes)
    multiplan.close_sides(planned)
    tmp = tempfile.mkdtemp(prefix="tkperf-multi-")  # 0700: the requests and summaries are ours
    try:
        os.mkdir(os.path.join(tmp, "requests"), 0o700)
        targets = [_target(request, p, outdir, tmp) for p, outdir in zip(planned, outdirs)]
        return _run(request, targets)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _target(request: RunRequest, p: multiplan.Planned, outdir: str, tmp: str) -> multi.Target:
    """One child: its own request (this target, its name, outdir and
    summary; no questions, no progress lines of its own) in ``tmp``."""
    summary = os.path.join(tmp, f"{p.name}.json")
    own = dataclasses.replace(request, devices=(p.arg,), name=p.name, outdir=outdir, yes=True, quiet=True,
                              json_summary=summary, size=request.size if p.is_file else None)
    path = os.path.join(tmp, "requests", f"{p.name}.json")
    request_file.write(own, path)
    argv = (sys.executable, "-m", "tkperf", request.profile, "run", p.arg, "--request", path)
    return multi.Target(p.name, p.arg, outdir, argv, summary)


def _run(request: RunRequest, targets: Sequence[multi.Target]) -> int:
    profile = request.profile
    t0, cpu0 = time.monotonic(), _own_cpu()
    runs = [engine_progress.RemoteRun(t.name, t.device) for t in targets]
    view = shown.choose_combined(sys.stderr, sys.stdout, request.quiet)
    view.start(runs)
    view.note(f"{len(targets)} runs at once on {os.cpu_count()} CPUs: "
              + ", ".join(f"{t.name} ({t.device})" for t in targets))
    parallel = multi.ParallelRuns(targets, _Shown(view, runs))
    try:
        outcomes = parallel.run()
    finally:
        view.stop()
    signum = parallel.signum
    codes = [o.exit_code for o in outcomes if o.exit_code is not None]
    worst = multi.worst_exit(codes + ([128 + signum] if signum else []))
    reports, note = _comparison(request, outcomes, signum)
    _print_outcomes(outcomes, reports, note, worst)
    if request.json_summary:
        doc = multi.summary_document(f"{profile} run", outcomes, worst, reports, note, signum,
                                     time.monotonic() - t0, _own_cpu() - cpu0)
        _warn_on_failure("no JSON summary", lambda: _write_summary(request.json_summary, doc))
    return worst


def _own_cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def _write_summary(path: str, doc: dict) -> None:
    notify.write_summary(path, doc)


def _warn_on_failure(what: str, action) -> None:
    try:
        action()
    except Exception as exc:  # noqa: BLE001 - the runs' outcome is what the exit code reports
        print(f"tkperf: warning: {what}: {exc}", file=sys.stderr)


def _comparison(request: RunRequest, outcomes: Sequence[multi.Outcome],
                signum: Optional[int]) -> Tuple[List[str], str]:
    """The comparison report of the complete runs: (documents written, a note
    saying what was left out or why there is none)."""
    from tkperf.report import compare  # matplotlib loads only when the runs end

    if signum:
        return [], "not built: the runs were stopped"
    if request.no_report:
        return [], "not built: --no-report"
    runs, left_out = [], []
    for o in outcomes:
        if o.status != "complete":
            left_out.append(f"{o.target.name} ({o.status})")
            continue
        try:
            runs.append(store.load(o.target.xml_path))
        except TkperfError as exc:
            left_out.append(f"{o.target.name} ({exc})")
    left = f"; left out: {', '.join(left_out)}" if left_out else ""
    if len(runs) < compare.MIN_RUNS:
        return [], f"not built: fewer than {compare.MIN_RUNS} complete runs{left}"
    if len(runs) > compare.MAX_RUNS:
        return [], (f"not built: {len(runs)} complete runs, a comparison takes at most "
                    f"{compare.MAX_RUNS} (tkperf compare on a subset){left}")
    prefix = request.name or ""
    outdir = os.path.join(request.outdir or ".", f"{prefix}-comparison" if prefix else "comparison")
    try:
        result = compare.build_comparison(runs, common.prepare_outdir(outdir),
                                          request.report_formats, png=request.png)
    except Exception as exc:  # noqa: BLE001 - never lose the runs' exit status to the comparison
        log.error("comparison failed: %s", exc)
        print(f"tkperf: warning: no comparison: {exc}", file=sys.stderr)
        return [], f"failed: {exc}{left}"
    common.print_report(result)
    return [p for p in result.paths if p.endswith((".rst", ".html", ".pdf"))], \
        f"{len(runs)} complete runs{left}"


def _print_outcomes(outcomes: Sequence[multi.Outcome], reports: Sequence[str], note: str,
                    worst: int) -> None:
    counts = Counter(o.status for o in outcomes)
    print(f"{len(outcomes)} targets: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    width = max(len(o.target.name) for o in outcomes)
    for o in outcomes:
        code = "-" if o.exit_code is None else str(o.exit_code)
        why = f"  ({o.error})" if o.error else ""
        print(f"  {o.target.name:<{width}}  {o.target.device}  {o.status}, exit {code}, "
              f"{o.wall_s:.0f} s: {o.target.xml_path}{why}")
    print(f"comparison: {', '.join(reports) if reports else '-'} ({note})")
    print(f"exit code {worst}" + (" (the worst of the targets')" if worst else ""))
