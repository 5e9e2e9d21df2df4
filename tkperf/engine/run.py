"""The engine's front door: how a run goes.

:func:`run` takes a :class:`~tkperf.engine.request.RunRequest` (the command
line's, or a program's) and a :class:`~tkperf.engine.listener.Listener`
(what it tells and asks whoever started it); :func:`resume` continues a
saved run.  Both return a :class:`~tkperf.engine.listener.RunOutcome` and
never print.  A run of one target goes:

1. open and check the target, before anything touches it
   (:func:`tkperf.engine.opening.open_run`);
2. ``--dry-run``: the plan and the verdict, and stop
   (:func:`tkperf.engine.opening.dry_run`);
3. refuse to replace an earlier result, or load the one to resume;
4. the session: lock, safety checks, confirmation, the runner (purge, WIPC,
   each test's loop shape driving fio), the result saved as it grows
   (:class:`tkperf.engine.session.Session`);
5. however it ended: the report, the summary, ``--json-summary`` and mail
   (:mod:`tkperf.engine.ending`).

Several targets run at once, one child process each
(:mod:`tkperf.engine.parallel`); a child reports to its parent through
:mod:`tkperf.engine.child`.
"""
from __future__ import annotations

import os
from typing import List, Optional, Tuple

from tkperf import notify, store
from tkperf.engine import ending, opening, parallel
from tkperf.engine import request as request_file
from tkperf.engine import resume as resuming
from tkperf.engine.child import CHILD_ENV, ChildHooks, child_hooks
from tkperf.engine.listener import Listener, RunOutcome
from tkperf.engine.request import ResumeRequest, RunRequest
from tkperf.engine.session import Session, fio_settings
from tkperf.errors import EXIT_OK, Interrupted, ResultFileError, UsageError
from tkperf.model import stored
from tkperf.model.results import Event, RunResult, now_iso
from tkperf.report import checked, summary


def run(request: RunRequest, listener: Listener) -> RunOutcome:
    """``PROFILE run`` as ``request`` asks: one target, or several at once."""
    if len(request.devices) > 1:
        return parallel.run_several(request, listener)
    if CHILD_ENV.isdisjoint(os.environ):  # a run by itself: no parent, no host sharing told
        return _run_one(request, listener, None)
    with child_hooks() as hooks:  # one of several runs, or told the host sharing (docs/parallel.rst)
        return _run_one(request, listener, hooks)


def run_child(path: str, profile: str, devices: Tuple[str, ...], listener: Listener) -> RunOutcome:
    """A child of a run of several targets: the request in ``path``, for the
    command line ``PROFILE run DEVICES --request PATH`` that names it."""
    with child_hooks() as hooks:  # a bad file, too, is told on the channel
        given = request_file.load(path)
        if given.profile != profile or given.devices != devices or len(devices) != 1:
            raise UsageError(f"--request {path} is for tkperf {given.profile} run "
                             f"{' '.join(given.devices)}, not for this command line")
        return _run_one(given, listener, hooks)


def _run_one(request: RunRequest, listener: Listener, hooks: Optional[ChildHooks]) -> RunOutcome:
    try:
        target = opening.open_run(request, request.device, request.size)
    finally:
        opening.say_left(listener.warning)
    opts = request.options
    try:
        mail = opening.unattended(request.json_summary, request.mail)
        if request.dry_run:
            dry = opening.dry_run(target.device, opts, request.profile, target.side, request.jobs, request.force)
            return RunOutcome(exit_code=dry.exit_code, dry_runs=(dry,))
        xml_path, saved = store.run_file(target.outdir, target.name), None
        if request.resume and request.overwrite:
            raise UsageError("--resume continues the saved run, --overwrite replaces it: give one")
        if not request.resume:
            opening.refuse_replacing(xml_path, request.overwrite)
        else:
            if not os.path.exists(xml_path):
                raise UsageError(f"--resume: no saved run {xml_path} to resume")
            saved = store.load(xml_path)
            _say_forced(resuming.check(saved, target.device, opts, request.force), listener)
            if saved.status == "complete":
                return _already_complete(request.json_summary, saved, xml_path, listener)
        fio = opening.backend(target.side, fio_settings(target.device, opts), target.outdir, request.remote)
        return _execute(request, Session(
            profile=request.profile, opts=opts, device=target.device, name=target.name, outdir=target.outdir,
            saved=saved, force=request.force, description=target.description.text,
            description_fields=dict(target.description.fields), features=target.features, side=target.side,
            fio=fio, remote_facts=opening.facts(target.side, request.remote)), mail, hooks, listener)
    finally:
        target.close()


def _already_complete(json_summary: Optional[str], saved: RunResult, xml_path: str,
                      listener: Listener) -> RunOutcome:
    """A resume that found its run complete: nothing to do, and the
    ``--json-summary`` says so as the run's end did (a parent of several
    runs reads what its child achieved there, docs/parallel.rst)."""
    if json_summary:
        log_path = os.path.splitext(xml_path)[0] + ".log"
        paths = notify.paths_dict(xml_path, log_path if os.path.exists(log_path) else "", [])
        ending.warn_on_failure("no JSON summary", lambda: notify.write_summary(
            json_summary, summary.as_document(saved, paths, EXIT_OK)), listener)
    return RunOutcome(run=saved, xml_path=xml_path, already_complete=True)


def _execute(request: RunRequest, session: Session, mail: Optional[notify.MailSettings],
             hooks: Optional[ChildHooks], listener: Listener) -> RunOutcome:
    """The session, then, however it ended, the report, the summary, the
    ``--json-summary`` and the mail."""
    listener.show_progress(request.quiet, request.debug)
    if hooks is not None:
        hooks.attach(session)
    error: Optional[BaseException] = None
    try:
        session.execute(confirm=lambda dev: listener.confirm(dev, request.yes))
    except BaseException as exc:
        error = exc
        if isinstance(exc, Interrupted) and os.path.exists(session.xml_path):
            exc.resume_command = opening.resume_command(session.xml_path, request.yes)  # type: ignore[attr-defined]
        raise
    finally:
        listener.stop_progress()
        reports: List[str] = []
        run = session.run
        if run is not None:
            if not request.no_report:
                reports = ending.final_report(run, session.outdir, request.report_formats, listener, request.png)
            listener.run_ended(run, session.xml_path)
        ending.run_ended(request, session, mail, reports, error, listener)
        session.close_log()
        if hooks is not None:
            hooks.detach()
    return RunOutcome(run=session.run, xml_path=session.xml_path)


def _check_resumable(saved: RunResult, path: str) -> None:
    """A ResultFileError (exit 7) naming an option or fact of ``saved`` that
    is not what a run stores (:mod:`tkperf.report.checked`'s layer).  A
    resume rewrites the file, so nothing is left out here: it is refused."""
    try:
        checked.check_run(saved)
    except ResultFileError as exc:
        raise ResultFileError(f"{path}: {exc}; not resumed") from None
    bad = stored.check_facts(dict(saved.facts))  # on a copy: the saved facts stay as they are
    if bad:
        raise ResultFileError(f"{path}: {bad[0]}; not resumed")


def resume(asked: ResumeRequest, path: str, listener: Listener) -> RunOutcome:
    """``tkperf resume PATH``: continue the run saved in ``path``."""
    mail = opening.unattended(asked.json_summary, asked.mail)
    saved = store.load(path)
    _check_resumable(saved, path)
    if saved.status == "complete":
        return _already_complete(asked.json_summary, saved, path, listener)
    if saved.integrity:  # a torn last row dropped, or an older format: said, and kept with the run
        if store.cut_notes(saved):
            listener.warning(f"{path}: result file: {store.cut_notes(saved)}")
        saved.events.append(Event(now_iso(), "warning", f"resumed from a result file that was read as: "
                                                         f"{saved.integrity}"))
    request = opening.resume_request(asked, saved, path)
    with child_hooks() as hooks:
        return resume_run(request, saved, path, mail, listener, hooks)


def resume_run(request: RunRequest, saved: RunResult, path: str, mail: Optional[notify.MailSettings],
               listener: Listener, hooks: Optional[ChildHooks] = None) -> RunOutcome:
    """Continue ``saved`` (read from ``path``) as ``request`` says."""
    opts, was = request.options, opening.saved_remote(saved.facts)
    side, dev = opening.open_target(request.device, request.size, request.remote, was)
    try:
        opening.need_root(dev, ["resume", path, "..."])
        _say_forced(resuming.check(saved, dev, opts, request.force), listener)
        opening.check_segments(opts, dev, side)
        try:
            opening.sweep_maps(side)
        finally:
            opening.say_left(listener.warning)
        outdir = request.outdir or os.path.dirname(os.path.abspath(path))
        fio = opening.backend(side, fio_settings(dev, opts), outdir, request.remote, was)
        return _execute(request, Session(profile=request.profile, opts=opts, device=dev, name=saved.name,
                                        outdir=outdir, saved=saved, force=request.force, side=side, fio=fio,
                                        remote_facts=opening.facts(side, request.remote, was)),
                       mail, hooks, listener)
    finally:
        side.close()


def _say_forced(line: str, listener: Listener) -> None:
    """The one line of a resume that ``--force`` let past an identity it could not match."""
    if line:  # the run's events keep it too
        listener.warning(line)
