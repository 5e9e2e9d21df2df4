"""``tkperf ssd run``, ``tkperf hdd run`` and ``tkperf resume``."""
from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
from typing import Callable, List, Optional, Sequence

from tkperf import notify
from tkperf.cli import advice, common, multirun, runargs
from tkperf.cli import remote as remote_cli
from tkperf.cli.runargs import add_run_options, add_unattended_options, epilog
from tkperf.kit import options
from tkperf.engine import resume
from tkperf.engine import request as request_file
from tkperf.engine.request import RunRequest
from tkperf.durations import micro_unit
from tkperf.engine.session import Session, fio_settings
from tkperf.errors import EXIT_OK, Interrupted, ResumeError, UsageError, exit_code_of
from tkperf import store
from tkperf.model.results import RunResult
from tkperf.report import summary

log = logging.getLogger("tkperf")


def _complete(saved: RunResult, path: str) -> int:
    print("\n".join(summary.lines(saved, micro_unit(sys.stdout))))
    print(f"results: {path} (already complete, nothing to resume)")
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    profile = args.command
    if args.action != "run":
        raise UsageError(f"say what to do: tkperf {profile} run DEVICE")
    for device in args.device:
        advice.full_path(device, args.size)
        if not args.dry_run:
            advice.need_root_for(device, [profile, "run", *args.device, "..."])
    if args.request is not None:
        with multirun.child_hooks() as hooks:  # a bad file, too, is told on the channel
            return _run_one(_given_request(args, profile), hooks)
    return run(runargs.request_from_args(args, profile))


def _given_request(args: argparse.Namespace, profile: str) -> RunRequest:
    """``--request FILE``: a child of a run of several targets (the file
    says everything; the command line names the target for ``ps``)."""
    given = request_file.load(args.request)
    if given.profile != profile or given.devices != tuple(args.device) or len(given.devices) != 1:
        raise UsageError(f"--request {args.request} is for tkperf {given.profile} run "
                         f"{' '.join(given.devices)}, not for this command line")
    return given


def run(request: RunRequest) -> int:
    """``PROFILE run`` as ``request`` asks: one target, or several at once."""
    if len(request.devices) > 1:
        return multirun.run_several(request)
    with multirun.child_hooks() as hooks:  # None unless one of several runs (docs/parallel.rst)
        return _run_one(request, hooks)


def _run_one(request: RunRequest, hooks: Optional[multirun.ChildHooks]) -> int:
    profile, opts = request.profile, request.options
    dev, name, outdir, desc, features, side = runargs.open_run(request, request.device, request.size)
    try:
        mail = runargs.unattended(request.json_summary, request.mail)
        if request.dry_run:
            return runargs.dry_run(dev, opts, profile, side, request.jobs)
        saved = None
        xml_path = store.run_file(outdir, name)
        if request.resume and request.overwrite:
            raise UsageError("--resume continues the saved run, --overwrite replaces it: give one")
        if not request.resume:
            common.refuse_replacing(xml_path, request.overwrite)
        if request.resume:
            if not os.path.exists(xml_path):
                raise UsageError(f"--resume: no saved run {xml_path} to resume")
            saved = store.load(xml_path)
            _say_forced(resume.check(saved, dev, opts, request.force))
            if saved.status == "complete":
                return _complete(saved, xml_path)
        fio = remote_cli.backend(side, fio_settings(dev, opts), outdir, request.remote)
        return _execute(request, Session(profile=profile, opts=opts, device=dev, name=name, outdir=outdir,
                                         saved=saved, force=request.force, description=desc.text,
                                         description_fields=dict(desc.fields), features=features,
                                         side=side, fio=fio,
                                         remote_facts=remote_cli.facts(side, request.remote)), mail, hooks)
    finally:
        side.close()


def cmd_resume(args: argparse.Namespace) -> int:
    formats = options.parse_report_formats(args.report_format)
    mail_given = runargs.mail_of(args)
    mail = runargs.unattended(args.json_summary, mail_given)
    saved = store.load(args.result)
    if saved.status == "complete":
        return _complete(saved, args.result)
    bad = notify.CONTROL.search(saved.name)
    if bad or not saved.name:  # it names the files and folders the resumed run writes
        shown = repr(args.result) if notify.CONTROL.search(args.result) else args.result  # one line
        raise ResumeError(f"{shown}: its run name {saved.name!r} holds a control character "
                          f"(U+{ord(bad.group()):04X}); tkperf never names a file so" if bad else
                          f"{shown}: the run has no name; tkperf cannot resume it")
    if os.path.basename(args.result) != f"{saved.name}.xml":
        raise ResumeError(f"{args.result}: resume needs the file under its run name {saved.name}.xml")
    try:
        opts = options.RunOptions.from_dict(saved.options)
    except (UsageError, ValueError, TypeError) as exc:
        raise ResumeError(f"{args.result}: its options cannot be read back ({exc})") from None
    request = RunRequest(
        profile=saved.profile, devices=(saved.device.path,), options=opts,
        size=saved.device.size_bytes if saved.device.kind == "file" else None,
        name=saved.name, outdir=os.path.dirname(os.path.abspath(args.result)),
        report_formats=formats, no_report=args.no_report, png=args.png, resume=True, force=args.force, yes=args.yes,
        quiet=args.quiet, json_summary=args.json_summary, mail=mail_given,
        remote=remote_cli.settings_of(args))
    with multirun.child_hooks() as hooks:
        return resume_run(request, saved, args.result, mail, hooks)


def resume_run(request: RunRequest, saved: RunResult, path: str, mail: Optional[notify.MailSettings],
               hooks: Optional[multirun.ChildHooks] = None) -> int:
    """Continue ``saved`` (read from ``path``) as ``request`` says."""
    opts = request.options
    was = remote_cli.saved_remote(saved.facts)
    side, dev = remote_cli.open_target(request.device, request.size, request.remote, was)
    try:
        advice.need_root(dev, ["resume", path, "..."])
        _say_forced(resume.check(saved, dev, opts, request.force))
        outdir = request.outdir or os.path.dirname(os.path.abspath(path))
        fio = remote_cli.backend(side, fio_settings(dev, opts), outdir, request.remote, was)
        return _execute(request, Session(profile=request.profile, opts=opts, device=dev, name=saved.name,
                                         outdir=outdir, saved=saved, force=request.force, side=side, fio=fio,
                                         remote_facts=remote_cli.facts(side, request.remote, was)),
                        mail, hooks)
    finally:
        side.close()


def _say_forced(line: str) -> None:
    """The one line of a resume that ``--force`` let past an identity it could not match."""
    if line:  # the run's events keep it too
        print(f"tkperf: warning: {line}", file=sys.stderr)


def _execute(request: RunRequest, session: Session, mail: Optional[notify.MailSettings] = None,
             hooks: Optional[multirun.ChildHooks] = None) -> int:
    common.setup_logging(None, request.quiet, request.debug)
    if hooks is not None:
        hooks.attach(session)
    error: Optional[BaseException] = None
    try:
        session.execute(confirm=lambda dev: common.confirm(dev, request.yes))
    except BaseException as exc:
        error = exc
        if isinstance(exc, Interrupted) and os.path.exists(session.xml_path):
            exc.resume_command = advice.resume_command(session.xml_path, request.yes)  # type: ignore[attr-defined]
        raise
    finally:
        common.stop_progress()
        reports: List[str] = []
        if session.run is not None:
            if not request.no_report:
                reports = _final_report(session.run, session.outdir, request.report_formats, request.png)
            print("\n".join(summary.lines(session.run, micro_unit(sys.stdout))))
            print(f"results: {session.xml_path}")
        _run_ended(request, session, mail, reports, error)
        session.close_log()
        if hooks is not None:
            hooks.detach()
    return EXIT_OK


def _run_ended(request: RunRequest, session: Session, mail: Optional[notify.MailSettings],
               reports: List[str], error: Optional[BaseException]) -> None:
    """``--json-summary`` and ``--mail`` at the end of a run; a failure of
    either is a warning and never changes the run's exit code."""
    paths = notify.paths_dict(session.xml_path, session.log_path, reports)
    path, run = request.json_summary, session.run
    if path and run is not None:
        _warn_on_failure("no JSON summary", lambda: notify.write_summary(
            path, summary.as_document(run, paths, exit_code_of(error))))
    if mail is not None:
        _send_mail(mail, session, paths, error)


def _send_mail(mail: notify.MailSettings, session: Session, paths: dict,
               error: Optional[BaseException]) -> None:
    run = session.run
    if run is None:  # stopped before the run began: no result, and the log may be an older run's
        paths = notify.paths_dict("", "", [])
    try:  # building the message too: nothing about the mail changes the run's exit code
        msg = notify.build_message(
            mail, name=session.name, host=notify.host_name(run), run=run,
            summary_lines=summary.lines(run) if run is not None else [], paths=paths, error=error,
            log_tail=notify.tail(session.log_path) if error is not None and run is not None else [],
            pdf=notify.read_pdf(paths["reports"]) if error is None else None)
        notify.send(msg, mail)
    except Exception as exc:  # noqa: BLE001 - a mail failure never changes the run's outcome
        line = notify.describe_failure(exc, mail)
        log.warning("%s", line)
        print(f"tkperf: warning: {line}", file=sys.stderr)
    else:
        log.info("mailed %r to %s", msg["Subject"], ", ".join(mail.recipients))


def _warn_on_failure(what: str, action: Callable[[], None]) -> None:
    try:
        action()
    except Exception as exc:  # noqa: BLE001 - the run's result is saved; say what is missing
        log.error("%s:\n%s", what, traceback.format_exc())
        print(f"tkperf: warning: {what}: {exc}", file=sys.stderr)


def _final_report(run: RunResult, outdir: str, formats: Sequence[str], png: bool = False) -> List[str]:
    """The report at the end of a run, complete or partial; a failure here is
    a warning, since the XML (the record) is already saved.  The paths of
    the report documents written (rst, html, pdf)."""
    try:
        from tkperf.report import report

        result = report.build_report(run, outdir, tuple(formats), png=png)
        common.print_report(result)
        return [p for p in result.paths if p.endswith((".rst", ".html", ".pdf"))]
    except Exception as exc:  # noqa: BLE001 - never lose the run's exit status to the report
        log.error("report failed:\n%s", traceback.format_exc())
        print(f"tkperf: warning: no report: {exc}", file=sys.stderr)
        return []


def register(sub) -> None:
    for profile in ("ssd", "hdd"):
        p = sub.add_parser(profile, help=f"test an {profile.upper()}", allow_abbrev=False)
        psub = p.add_subparsers(dest="action", metavar="ACTION", parser_class=common.Parser)
        run = psub.add_parser("run", help="run the tests and write XML, log and summary",
                              allow_abbrev=False, epilog=epilog(profile),
                              formatter_class=argparse.RawDescriptionHelpFormatter)
        add_run_options(run, profile)
        p.set_defaults(func=cmd_run)
    res = sub.add_parser("resume", help="continue an interrupted run from its result file",
                         allow_abbrev=False)
    res.add_argument("result", help="the interrupted run's NAME.xml")
    res.add_argument("--yes", "-ft", dest="yes", action="store_true", help="do not ask for confirmation")
    res.add_argument("--force", action="store_true",
                     help="as for ssd run; also resume on a device that cannot be matched to the saved "
                          "run's (serial, WWN, backing file), saying so in one line")
    res.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")
    common.add_report_options(res)
    add_unattended_options(res)
    remote_cli.add_options(res)
    res.set_defaults(func=cmd_resume)
