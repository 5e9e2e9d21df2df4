"""The end of an unattended run, told to the world: the ``--json-summary``
file and the ``--mail`` message.

Everything is checked before the run starts (:func:`check_summary_path`,
:func:`mail_settings`); at the end :func:`write_summary` writes the
document atomically, :func:`build_message` (a pure function) makes the mail
and :func:`send` sends it.  Standard library only; a password never comes
from the command line, only from ``TKPERF_SMTP_PASSWORD`` or a file.

Header values never carry a control character: the options that become
headers (``--mail``, ``--mail-from``) or SMTP commands (``--smtp``,
``--smtp-user``) are refused with one if they hold one (exit 2, before the
run); the subject's untrusted parts (the tested host's name as a result
file records it, an error's text) have theirs replaced by U+FFFD
(:func:`header_text`); and the message is built with the email package's
SMTP policy, which itself refuses a line break in a header value.
"""
from __future__ import annotations

import email.policy
import os
import re
import smtplib
import socket
import ssl
from collections import deque
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from tkperf import strictjson
from tkperf.errors import Interrupted, OutputError, UsageError
from tkperf.model.files import atomic_write, read_limited, temp_file
from tkperf.model.results import RunResult
from tkperf.verdict import conformance

#: The JSON Schema of the ``--json-summary`` document.
SUMMARY_SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model", "data",
                                   "summary.schema.json")
PASSWORD_ENV = "TKPERF_SMTP_PASSWORD"
DEFAULT_SMTP_PORT = 25
LOG_TAIL_LINES = 50
SMTP_TIMEOUT_S = 30.0


# --- the JSON summary ---------------------------------------------------------

def check_summary_path(path: str) -> None:
    """Raise :class:`OutputError` unless ``path`` can be written: its folder
    exists and takes a new file, and ``path`` is not a folder."""
    if os.path.isdir(path):
        raise OutputError(f"--json-summary {path}: is a directory")
    folder = os.path.dirname(os.path.abspath(path))
    try:
        with temp_file(folder, ".tkperf-probe.") as (probe, name):
            probe.close()
            os.unlink(name)
    except OSError as exc:
        raise OutputError(f"--json-summary {path}: cannot write there ({exc.strerror or exc})") from None
    if os.path.exists(path) and not os.access(path, os.W_OK):
        raise OutputError(f"--json-summary {path}: not writable")


def write_summary(path: str, document: dict) -> None:
    """Write the ``--json-summary`` document atomically (OutputError on failure)."""
    text = strictjson.dumps(document, indent=2) + "\n"
    atomic_write(path, text.encode("utf-8"))


# --- mail settings --------------------------------------------------------------

@dataclass(frozen=True)
class MailSettings:
    """Where and how the end-of-run mail goes."""

    recipients: Tuple[str, ...]
    host: str
    port: int = DEFAULT_SMTP_PORT
    starttls: bool = False
    user: str = ""
    password: str = field(default="", repr=False)
    sender: str = ""


#: What no header value (nor a name that becomes a path) may hold: C0 and C1
#: controls, DEL, and the line and paragraph separators that Python's
#: ``str.splitlines`` (and so the email package) breaks lines at.
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
#: The email package's SMTP policy (CRLF line ends; a line break in a header
#: value is a ValueError), and a defect in what it parses an error.
POLICY = email.policy.SMTP.clone(raise_on_defect=True)


def check_header_option(option: str, value: str) -> str:
    """``value`` of ``option``, or a UsageError when it holds a control character."""
    m = CONTROL.search(value)
    if m:
        raise UsageError(f"{option} {value!r}: holds a control character (U+{ord(m.group()):04X}); "
                         "a mail header cannot")
    return value


def header_text(text: str) -> str:
    """Untrusted ``text`` fit for a header value: each control character
    (:data:`CONTROL`) replaced by U+FFFD."""
    return CONTROL.sub("\ufffd", text)


def parse_smtp(text: str) -> Tuple[str, int]:
    """``HOST[:PORT]`` (``[v6addr]:PORT`` for IPv6) -> (host, port)."""
    host, port = text, str(DEFAULT_SMTP_PORT)
    if text.startswith("["):
        end = text.find("]")
        host, rest = text[1:end], text[end + 1:]
        if end < 0 or (rest and not rest.startswith(":")):
            raise UsageError(f"--smtp {text!r}: use HOST[:PORT]")
        port = rest[1:] or port
    elif text.count(":") == 1:
        host, port = text.split(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--smtp {text!r}: use HOST[:PORT] with a port from 1 to 65535")
    return host, int(port)


def read_password(path: Optional[str], env: Mapping[str, str]) -> str:
    """The SMTP password: from the file ``path`` (its first line) or else
    from ``TKPERF_SMTP_PASSWORD``; '' when neither is given."""
    if path:
        # Never through another user's link: root would mail what it points at.
        data = read_limited(path, "--smtp-password-file", 1 << 16, UsageError)
        try:
            return data.decode("utf-8").split("\n", 1)[0].rstrip("\r")
        except UnicodeDecodeError as exc:
            raise UsageError(f"--smtp-password-file {path}: {exc}") from None
    return env.get(PASSWORD_ENV, "")


def mail_settings(recipients: Sequence[str], smtp: Optional[str], starttls: bool, user: Optional[str],
                  password_file: Optional[str], sender: Optional[str],
                  env: Mapping[str, str]) -> Optional[MailSettings]:
    """The checked mail settings, or ``None`` without ``--mail``; every
    mistake is a :class:`UsageError` before the run starts."""
    if not recipients:
        if smtp or starttls or user or password_file or sender:
            raise UsageError("--smtp, --smtp-starttls, --smtp-user, --smtp-password-file and "
                             "--mail-from need --mail ADDR")
        return None
    if not smtp:
        raise UsageError("--mail needs --smtp HOST[:PORT]")
    _check_recipients(recipients)
    for option, value in (("--mail-from", sender), ("--smtp", smtp), ("--smtp-user", user)):
        check_header_option(option, value or "")
    host, port = parse_smtp(smtp)
    if password_file and not user:
        raise UsageError("--smtp-password-file needs --smtp-user")
    password = read_password(password_file, env) if user else ""
    if user and not password:
        raise UsageError(f"--smtp-user needs a password: set {PASSWORD_ENV} or use --smtp-password-file")
    return MailSettings(recipients=tuple(recipients), host=host, port=port, starttls=starttls,
                        user=user or "", password=password,
                        sender=sender or f"tkperf@{socket.gethostname()}")


def _check_recipients(recipients: Sequence[str]) -> None:
    """Each ``--mail`` address is one header-safe mail address."""
    for addr in recipients:
        check_header_option("--mail", addr)
        if "@" not in addr or any(c.isspace() for c in addr):
            raise UsageError(f"--mail {addr!r}: not a mail address")


# --- the message ------------------------------------------------------------------

def one_line(error: BaseException) -> str:
    """The error's first line, at most 160 characters (for a subject)."""
    lines = str(error).strip().splitlines()
    text = lines[0] if lines else type(error).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def subject(name: str, host: str, run: Optional[RunResult], error: Optional[BaseException]) -> str:
    """'tkperf: NAME complete on HOST (conformant)', 'tkperf: NAME interrupted on
    HOST: why' (a signal) or 'tkperf: NAME FAILED on HOST: why'."""
    if error is None and run is not None and run.status == "complete":
        judged = conformance.of_run(run)
        verdict = ("conformant" if judged.conformant else "NOT PTS-conformant" if judged.pts_run
                   else "not a PTS run")
        return f"tkperf: {name} complete on {host} ({verdict})"
    why = one_line(error) if error is not None else f"run {run.status if run else 'not started'}"
    what = "interrupted" if isinstance(error, (Interrupted, KeyboardInterrupt)) else "FAILED"
    return f"tkperf: {name} {what} on {host}: {why}"


def _paths_lines(paths: Mapping[str, object]) -> List[str]:
    out = [f"  {key}: {paths[key]}" for key in ("result", "log") if paths.get(key)]
    reports = paths.get("reports", ())
    out += [f"  report: {p}" for p in (reports if isinstance(reports, (list, tuple)) else ())]
    return ["", "Files:", *out] if out else []


def body(summary_lines: Sequence[str], paths: Mapping[str, object], error: Optional[BaseException],
         log_tail: Sequence[str], log_path: str = "") -> str:
    """The mail's text: the summary and the files; on failure the error
    first and the log's last lines after."""
    out: List[str] = []
    if error is not None:
        stopped = "was interrupted" if isinstance(error, (Interrupted, KeyboardInterrupt)) else "failed"
        out += [f"The run {stopped}: {error}", ""]
    out += list(summary_lines)
    out += _paths_lines(paths)
    if error is not None:
        out += ["", f"Last {len(log_tail)} lines of the log" + (f" {log_path}" if log_path else "") + ":", ""]
        out += [line.rstrip("\n") for line in log_tail] or ["(no log)"]
    return "\n".join(out) + "\n"


def build_message(settings: MailSettings, *, name: str, host: str, run: Optional[RunResult],
                  summary_lines: Sequence[str], paths: Mapping[str, object],
                  error: Optional[BaseException] = None, log_tail: Sequence[str] = (),
                  pdf: Optional[Tuple[str, bytes]] = None) -> EmailMessage:
    """The end-of-run mail; a pure function of its arguments.  ``pdf`` is
    (file name, bytes) of the report to attach, ``log_tail`` the log's last
    lines (shown when the run did not complete)."""
    msg = EmailMessage(policy=POLICY)
    msg["Subject"] = header_text(subject(name, host, run, error))
    msg["From"] = check_header_option("--mail-from", settings.sender)
    msg["To"] = check_header_option("--mail", ", ".join(settings.recipients))
    msg.set_content(body(summary_lines, paths, error, log_tail, str(paths.get("log") or "")))
    if pdf is not None:
        msg.add_attachment(pdf[1], maintype="application", subtype="pdf", filename=pdf[0])
    return msg


def tail(path: str, n: int = LOG_TAIL_LINES) -> List[str]:
    """The last ``n`` lines of a text file; none when it cannot be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return list(deque(fh, maxlen=n))
    except OSError:
        return []


def read_pdf(reports: Sequence[str]) -> Optional[Tuple[str, bytes]]:
    """(name, bytes) of the first PDF among ``reports``, if it can be read."""
    for path in reports:
        if path.endswith(".pdf"):
            try:
                with open(path, "rb") as fh:
                    return os.path.basename(path), fh.read()
            except OSError:
                return None
    return None


def host_name(run: Optional[RunResult]) -> str:
    """The tested host's name as the result file records it."""
    return (run.host.hostname if run is not None and run.host.hostname else "") or socket.gethostname()


# --- sending ----------------------------------------------------------------------

def send(msg: EmailMessage, settings: MailSettings, timeout: float = SMTP_TIMEOUT_S) -> None:
    """Send ``msg``; raises ``OSError`` or ``smtplib.SMTPException`` on failure."""
    with smtplib.SMTP(settings.host, settings.port, timeout=timeout) as smtp:
        if settings.starttls:
            smtp.starttls(context=ssl.create_default_context())
        if settings.user:
            smtp.login(settings.user, settings.password)
        smtp.send_message(msg)


def describe_failure(exc: BaseException, settings: MailSettings) -> str:
    """One line naming a mail failure: 'mail to a@b via host:25 failed: why'."""
    why = one_line(exc) if str(exc).strip() else type(exc).__name__
    return (f"mail to {', '.join(settings.recipients)} via {settings.host}:{settings.port} "
            f"failed: {type(exc).__name__}: {why}")


def paths_dict(result: str, log: str, reports: Sequence[str]) -> Dict[str, object]:
    """The ``paths`` of the summary document and of the mail."""
    return {"result": result, "log": log, "reports": list(reports)}
