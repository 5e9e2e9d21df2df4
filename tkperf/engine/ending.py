"""The end of a run, however it ended: the final report, the
``--json-summary`` and the mail.  Nothing after the run changes its exit
code: a failure there is a warning (:func:`warn_on_failure`).
"""
from __future__ import annotations

import logging
import traceback
from typing import Callable, List, Optional, Sequence

from tkperf import notify
from tkperf.engine.listener import Listener
from tkperf.engine.request import RunRequest
from tkperf.engine.session import Session
from tkperf.errors import exit_code_of
from tkperf.model.results import RunResult
from tkperf.report import summary

log = logging.getLogger("tkperf")


def run_ended(request: RunRequest, session: Session, mail: Optional[notify.MailSettings],
              reports: List[str], error: Optional[BaseException], listener: Listener) -> None:
    """``--json-summary`` and ``--mail`` at the end of a run."""
    paths = notify.paths_dict(session.xml_path, session.log_path, reports)
    path, run = request.json_summary, session.run
    if path and run is not None:
        warn_on_failure("no JSON summary", lambda: notify.write_summary(
            path, summary.as_document(run, paths, exit_code_of(error))), listener)
    if mail is not None:
        _send_mail(mail, session, paths, error, listener)


def _send_mail(mail: notify.MailSettings, session: Session, paths: dict,
               error: Optional[BaseException], listener: Listener) -> None:
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
        listener.warning(line)
    else:
        log.info("mailed %r to %s", msg["Subject"], ", ".join(mail.recipients))


def warn_on_failure(what: str, action: Callable[[], None], listener: Listener) -> None:
    """``action``, whose failure is logged and told as a warning: the
    run's result is saved, this says what is missing."""
    try:
        action()
    except Exception as exc:  # noqa: BLE001 - the exit code reports the run, not this
        log.error("%s:\n%s", what, traceback.format_exc())
        listener.warning(f"{what}: {exc}")


def final_report(run: RunResult, outdir: str, formats: Sequence[str], listener: Listener,
                 png: bool = False) -> List[str]:
    """The report at the end of a run, complete or partial; a failure here is
    a warning, since the XML (the record) is already saved.  The paths of
    the report documents written (rst, html, pdf)."""
    try:
        from tkperf.report import report  # matplotlib loads only when a report is drawn

        tell = logging.getLogger("tkperf.progress").info  # the run's progress lines, on a terminal or not
        result = report.build_report(run, outdir, tuple(formats), png=png, tell=lambda text: tell("report: %s", text))
        listener.report_written(result)
        return [p for p in result.paths if p.endswith((".rst", ".html", ".pdf"))]
    except Exception as exc:  # noqa: BLE001 - never lose the run's exit status to the report
        log.error("report failed:\n%s", traceback.format_exc())
        listener.warning(f"no report: {exc}")
        return []
