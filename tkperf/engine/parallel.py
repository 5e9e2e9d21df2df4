"""``tkperf ssd run DEV DEV ...`` (and ``hdd run``): one complete,
independent run per target, all at the same time (docs/parallel.rst).

:func:`run_several` checks every target and option before anything
starts (:func:`plan_targets` names the runs), asks once per device (or
takes ``--yes``), starts one ``python -m tkperf PROFILE run DEV --request
FILE`` per target (FILE: the run's :class:`~tkperf.engine.request.RunRequest`
with that target's own name, outdir and summary) through
:class:`tkperf.engine.multi.ParallelRuns`, shows them together through the
listener's view, then writes the comparison report and the combined
``--json-summary``; the exit code is the worst target's.  Each child is a
run of one target with :mod:`tkperf.engine.child`'s hooks.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import resource
import shutil
import signal
import stat
import tempfile
import time
from collections import Counter
from typing import Dict, List, Optional, Sequence, Tuple

from tkperf import notify, programs, store
from tkperf.engine import multi, opening
from tkperf.engine import request as request_file
from tkperf.engine.ending import warn_on_failure
from tkperf.engine.listener import Listener, ParallelView, RunOutcome, SeveralEnded
from tkperf.engine.opening import backend, check_name, default_name, dry_run, open_run, refuse_replacing, unattended
from tkperf.engine.request import RemoteSettings, RunRequest
from tkperf.engine.session import fio_settings
from tkperf.errors import TkperfError, UsageError
from tkperf.kit.options import RunOptions
from tkperf.kit.progress import RemoteRun
from tkperf.model.results import DeviceInfo
from tkperf.remote import fio_host
from tkperf.target.identity import split_target
from tkperf.target.side import TargetSide

log = logging.getLogger("tkperf")


@dataclasses.dataclass
class Planned:
    """A target as the command line gave it (``arg``), checked and named."""

    arg: str
    dev: DeviceInfo
    opts: RunOptions
    name: str
    is_file: bool
    side: TargetSide


def _is_block(path: str) -> bool:
    try:
        return stat.S_ISBLK(os.stat(path).st_mode)
    except OSError:
        return False


def _identity(dev: DeviceInfo, side: TargetSide) -> Tuple[str, object]:
    if side.host:
        return "remote", (fio_host(side.host), dev.resolved)
    if dev.kind == "block":
        return "block", os.stat(dev.resolved).st_rdev
    return "file", os.path.realpath(dev.resolved)


def plan_targets(request: RunRequest) -> List[Planned]:
    """Every target checked as a run of it alone would be
    (:func:`tkperf.engine.opening.open_run`), and named: the default name of
    each device, with the device's own name appended where two defaults are
    the same (two drives of one model: ``MODEL-nvme1n1``) and ``-2``, ``-3``
    where they still are (``x.img``, ``x.img-2``); ``--name PREFIX`` goes in
    front of each (``PREFIX-loop0``).  The remote ones among them hold an
    SSH session each: :func:`close_sides`."""
    prefix = check_name(request.name) if request.name else ""
    planned: List[Planned] = []
    seen: Dict[object, str] = {}
    try:
        for arg in request.devices:
            is_file = split_target(arg) is None and not _is_block(arg)
            one = dataclasses.replace(request, devices=(arg,), name=None, outdir=None)
            opened = open_run(one, arg, request.size if is_file else None)  # --size: for the file targets
            planned.append(Planned(arg, opened.device, request.options, opened.name, is_file, opened.side))
            ident = _identity(opened.device, opened.side)
            if ident in seen:
                raise UsageError(f"{arg} and {seen[ident]} are the same target: give each target once")
            seen[ident] = arg
    except BaseException:
        close_sides(planned)
        raise
    counts = Counter(p.name for p in planned)
    for p in planned:
        own = default_name(dataclasses.replace(p.dev, kind="file"))  # nvme1n1, sdb, x.img
        if counts[p.name] > 1 and own != p.name:
            p.name = f"{p.name}-{own}"
    used: set = set()
    for p in planned:
        base = (f"{prefix}-{p.name}" if prefix else p.name)[:120]  # room for "-N" within 128
        name, n = base, 2
        while name in used:
            name, n = f"{base}-{n}", n + 1
        used.add(name)
        p.name = check_name(name)
    return planned


def close_sides(planned: Sequence[Planned]) -> None:
    for p in planned:
        p.side.close()


def check_fio_servers(remote: RemoteSettings, planned: Sequence[Planned]) -> None:
    """Every test host's fio server answers with this host's fio (RemoteError
    refuses the whole command); each host once, before any run starts."""
    seen = set()
    for p in planned:
        if p.side.host and fio_host(p.side.host) not in seen:
            seen.add(fio_host(p.side.host))
            backend(p.side, fio_settings(p.dev, p.opts), ".", remote)


def run_several(request: RunRequest, listener: Listener) -> RunOutcome:
    twice = [d for d, n in Counter(request.devices).items() if n > 1]
    if twice:
        raise UsageError(f"{twice[0]} is given twice: give each target once")
    unattended(request.json_summary, request.mail)  # checked before anything runs
    try:
        planned = plan_targets(request)
    finally:
        opening.say_left(listener.warning)
    try:
        return _start(request, planned, listener)
    finally:
        close_sides(planned)  # each child opens its own session to its host


def _start(request: RunRequest, planned: List[Planned], listener: Listener) -> RunOutcome:
    base = request.outdir or ""
    outdirs = [os.path.join(base, p.name) if base else p.name for p in planned]
    if request.dry_run:
        dries = tuple(dataclasses.replace(dry_run(p.dev, p.opts, request.profile, p.side, request.jobs, request.force),
                                          target=p.arg, name=p.name, outdir=outdir)
                      for p, outdir in zip(planned, outdirs))
        return RunOutcome(exit_code=max(d.exit_code for d in dries), dry_runs=dries)
    if request.resume and request.overwrite:
        raise UsageError("--resume continues the saved runs, --overwrite replaces them: give one")
    for p, outdir in zip(planned, outdirs):
        xml = store.run_file(outdir, p.name)
        if not request.resume:
            refuse_replacing(xml, request.overwrite)  # every target, before any starts
        elif not os.path.exists(xml):
            raise UsageError(f"--resume: no saved run {xml} to resume")
    for p in planned:
        p.side.check_safe(p.dev, request.force)  # read-only; the child checks again under its lock
    check_fio_servers(request.remote, planned)
    for p in planned:
        listener.confirm(p.dev, request.yes)
    close_sides(planned)
    tmp = tempfile.mkdtemp(prefix="tkperf-multi-")  # 0700: the requests and summaries are ours
    try:
        os.mkdir(os.path.join(tmp, "requests"), 0o700)
        targets = [_target(request, p, outdir, tmp) for p, outdir in zip(planned, outdirs)]
        return RunOutcome(exit_code=_run(request, targets, listener))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _target(request: RunRequest, p: Planned, outdir: str, tmp: str) -> multi.Target:
    """One child: its own request (this target, its name, outdir and
    summary; no questions, no progress lines of its own) in ``tmp``."""
    summary = os.path.join(tmp, f"{p.name}.json")
    own = dataclasses.replace(request, devices=(p.arg,), name=p.name, outdir=outdir, yes=True, quiet=True,
                              json_summary=summary, size=request.size if p.is_file else None)
    path = os.path.join(tmp, "requests", f"{p.name}.json")
    request_file.write(own, path)
    argv = tuple(programs.python_module("tkperf", request.profile, "run", p.arg, "--request", path))
    return multi.Target(p.name, p.arg, outdir, argv, summary)


class _Shown(multi.Listener):
    """Connects the runs to the listener's combined view."""

    def __init__(self, view: ParallelView, runs: Sequence[RemoteRun]) -> None:
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


def _run(request: RunRequest, targets: Sequence[multi.Target], listener: Listener) -> int:
    t0, cpu0 = time.monotonic(), _own_cpu()
    runs = [RemoteRun(t.name, t.device) for t in targets]
    view = listener.combined(request.quiet)
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
    reports, note = _comparison(request, outcomes, signum, listener)
    listener.several_ended(SeveralEnded(tuple(outcomes), tuple(reports), note, worst))
    path = request.json_summary
    if path:
        doc = multi.summary_document(f"{request.profile} run", outcomes, worst, reports, note, signum,
                                     time.monotonic() - t0, _own_cpu() - cpu0)
        warn_on_failure("no JSON summary", lambda: notify.write_summary(path, doc), listener)
    return worst


def _own_cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def _comparison(request: RunRequest, outcomes: Sequence[multi.Outcome], signum: Optional[int],
                listener: Listener) -> Tuple[List[str], str]:
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
        result = compare.build_comparison(runs, store.ensure_dir(outdir, "output directory"),
                                          request.report_formats, png=request.png)
    except Exception as exc:  # noqa: BLE001 - never lose the runs' exit status to the comparison
        log.error("comparison failed: %s", exc)
        listener.warning(f"no comparison: {exc}")
        return [], f"failed: {exc}{left}"
    listener.report_written(result)
    return [p for p in result.paths if p.endswith((".rst", ".html", ".pdf"))], \
        f"{len(runs)} complete runs{left}"
