"""``--mail`` when a run ends: real runs on a loop device mailing a real SMTP
server (aiosmtpd on 127.0.0.1), a server that is down, AUTH with the
password from the environment, and the message built without a server."""
import email
import email.policy
import os
import signal
import socket

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult

from conftest import needs_fio
from test_fio_failures import SCRIPTS, fake_fio
from tkperf import notify, store
from tkperf.cli import main
from tkperf.errors import EXIT_FIO, EXIT_USAGE, FioError, Interrupted
from tkperf.report import summary
from tkperf.verdict import conformance

pytestmark = pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(HERE, "..", "examples", "example-ssd.xml")
QUICK = ["--tests", "lat", "--lat-bs", "4k", "--lat-mix", "0/100", "--max-rounds", "1",
         "--runtime", "1", "--quick", "--wipc-loops", "1", "--yes", "-q"]


class Collect:
    """aiosmtpd handler keeping every message it receives."""

    def __init__(self):
        self.messages = []

    async def handle_DATA(self, server, session, envelope):
        self.messages.append(email.message_from_bytes(envelope.original_content or envelope.content,
                                                      policy=email.policy.default))
        return "250 OK"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(handler, **kwargs):
    controller = Controller(handler, hostname="127.0.0.1", port=free_port(), **kwargs)
    controller.start()
    return controller


@pytest.fixture
def smtp():
    handler = Collect()
    controller = start(handler)
    try:
        yield handler, f"127.0.0.1:{controller.port}"
    finally:
        controller.stop()


@pytest.fixture
def smtp_auth():
    """A server that requires AUTH as user 'tk' with password 's3cret pw'."""
    handler = Collect()
    seen = []

    def authenticator(server, session, envelope, mechanism, auth_data):
        seen.append((auth_data.login, auth_data.password))
        ok = (auth_data.login, auth_data.password) == (b"tk", b"s3cret pw")
        return AuthResult(success=ok, handled=False)  # handled=False: the server answers 535

    controller = start(handler, authenticator=authenticator, auth_require_tls=False, auth_required=True)
    try:
        yield handler, f"127.0.0.1:{controller.port}", seen
    finally:
        controller.stop()


def run_cli(dev, tmp_path, *extra):
    out = tmp_path / "out"
    rc = main(["ssd", "run", dev, "--name", "m", "--outdir", str(out), *QUICK, *extra])
    return rc, out


def text_of(msg):
    return msg.get_body(("plain",)).get_content().replace("\r\n", "\n")  # as sent over SMTP


def host_of(out):
    return notify.host_name(store.load(str(out / "m.xml")))


# --- real runs --------------------------------------------------------------------

@needs_fio
def test_complete_run_mails_summary_and_pdf(loopdev, tmp_path, smtp, capsys):
    handler, server = smtp
    rc, out = run_cli(loopdev, tmp_path, "--mail", "a@example.org", "--mail", "b@example.org",
                      "--smtp", server)
    err = capsys.readouterr().err
    assert rc == 0, err
    (msg,) = handler.messages
    assert msg["Subject"] == f"tkperf: m complete on {host_of(out)} (NOT PTS-conformant)"
    assert msg["To"] == "a@example.org, b@example.org"
    body = text_of(msg)
    for line in summary.lines(store.load(str(out / "m.xml"))):
        assert line in body
    assert str(out / "m.xml") in body and str(out / "m.log") in body
    if not (out / "m.pdf").exists():
        pytest.skip(f"no PDF toolchain here: {err}")
    (pdf,) = [p for p in msg.iter_attachments()]
    assert pdf.get_content_type() == "application/pdf" and pdf.get_filename() == "m.pdf"
    assert pdf.get_content() == (out / "m.pdf").read_bytes()
    assert "mailed 'tkperf: m complete" in (out / "m.log").read_text()


@needs_fio
def test_failed_run_mails_error_and_log_tail(loopdev, tmp_path, smtp, monkeypatch, capsys):
    handler, server = smtp
    monkeypatch.setenv("PATH", fake_fio(tmp_path, SCRIPTS["exit1"]) + os.pathsep + os.environ["PATH"])
    rc, out = run_cli(loopdev, tmp_path, "--mail", "a@example.org", "--smtp", server)
    assert rc == EXIT_FIO
    (msg,) = handler.messages
    assert msg["Subject"].startswith(f"tkperf: m FAILED on {host_of(out)}: fio failed in lat round 1 (exit 1)")
    assert "\n" not in msg["Subject"]
    body = text_of(msg)
    assert body.startswith("The run failed: fio failed in lat round 1")
    log_lines = (out / "m.log").read_text().splitlines()
    tail = body.split(f"lines of the log {out / 'm.log'}:\n\n", 1)[1].splitlines()
    assert 0 < len(tail) <= 50 and all(line in log_lines for line in tail)
    assert any("err=22" in line for line in tail)  # fio's stderr, logged when the run failed
    assert not list(msg.iter_attachments())


@needs_fio
def test_smtp_down_is_one_warning_and_changes_nothing(loopdev, tmp_path, capsys):
    port = free_port()  # closed: nothing listens there
    rc, out = run_cli(loopdev, tmp_path, "--no-report", "--mail", "a@example.org",
                      "--smtp", f"127.0.0.1:{port}")
    err = capsys.readouterr().err
    assert rc == 0
    assert store.load(str(out / "m.xml")).status == "complete"
    (line,) = [ln for ln in err.splitlines() if "mail" in ln]
    assert line.startswith(f"tkperf: warning: mail to a@example.org via 127.0.0.1:{port} failed")
    assert "Connection refused" in line or "ConnectionRefusedError" in line
    assert line[len("tkperf: warning: "):] in (out / "m.log").read_text()


@needs_fio
def test_auth_with_password_from_the_environment(loopdev, tmp_path, smtp_auth, monkeypatch, capsys):
    handler, server, seen = smtp_auth
    monkeypatch.setenv(notify.PASSWORD_ENV, "s3cret pw")
    rc, out = run_cli(loopdev, tmp_path, "--no-report", "--mail", "a@example.org", "--smtp", server,
                      "--smtp-user", "tk")
    assert rc == 0, capsys.readouterr().err
    assert seen == [(b"tk", b"s3cret pw")]
    (msg,) = handler.messages
    assert "complete" in msg["Subject"]
    assert "s3cret" not in (out / "m.log").read_text()


@needs_fio
def test_auth_failure_is_a_warning(loopdev, tmp_path, smtp_auth, capsys):
    handler, server, _ = smtp_auth
    pwfile = tmp_path / "pw"
    pwfile.write_text("wrong\n")
    rc, out = run_cli(loopdev, tmp_path, "--no-report", "--mail", "a@example.org", "--smtp", server,
                      "--smtp-user", "tk", "--smtp-password-file", str(pwfile))
    err = capsys.readouterr().err
    assert rc == 0 and not handler.messages
    (line,) = [ln for ln in err.splitlines() if "mail" in ln]
    assert "SMTPAuthenticationError" in line
    assert store.load(str(out / "m.xml")).status == "complete"


# --- usage errors before the run ------------------------------------------------------

@pytest.mark.parametrize("extra, words", [
    (["--mail", "a@example.org"], "--mail needs --smtp"),
    (["--smtp", "127.0.0.1"], "need --mail"),
    (["--mail", "a@example.org", "--smtp", "127.0.0.1:99999"], "port from 1 to 65535"),
    (["--mail", "nobody", "--smtp", "127.0.0.1"], "not a mail address"),
    (["--mail", "a@example.org", "--smtp", "127.0.0.1", "--smtp-user", "tk"], "needs a password"),
    (["--mail", "a@example.org", "--smtp", "127.0.0.1", "--smtp-password", "x"],
     "unrecognized arguments: --smtp-password"),
    (["--mail", "a@example.org", "--smtp", "127.0.0.1", "--smtp-user", "tk",
      "--smtp-password-file", "/nonexistent/pw"], "No such file"),
])
def test_mail_usage_errors_before_the_run(extra, words, loopdev, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(notify.PASSWORD_ENV, raising=False)
    rc, out = run_cli(loopdev, tmp_path, *extra)
    err = capsys.readouterr().err
    assert rc == EXIT_USAGE
    assert words in err and not out.exists()


def test_no_password_option_exists(capsys):
    main(["ssd", "run", "--help-all"])  # every option (the short --help names the common ones)
    text = capsys.readouterr().out
    assert "--smtp-password-file" in text
    assert "--smtp-password " not in text and "--smtp-pass " not in text and "--password" not in text


# --- the message without a server -----------------------------------------------------

SETTINGS = notify.MailSettings(recipients=("a@example.org",), host="mx", sender="tkperf@h")
PATHS = notify.paths_dict("/r/x.xml", "/r/x.log", ["/r/x.rst", "/r/x.pdf"])


def test_message_of_a_complete_run():
    run = store.load(EXAMPLE)
    lines = summary.lines(run)
    msg = notify.build_message(SETTINGS, name="x", host="h1", run=run, summary_lines=lines,
                               paths=PATHS, pdf=("x.pdf", b"%PDF-1.4 fake"))
    verdict = "conformant" if conformance.of_run(run).conformant else "NOT PTS-conformant"
    assert msg["Subject"] == f"tkperf: x complete on h1 ({verdict})"
    assert msg["From"] == "tkperf@h" and msg["To"] == "a@example.org"
    body = msg.get_body(("plain",)).get_content()
    assert body.startswith("\n".join(lines) + "\n\nFiles:\n  result: /r/x.xml\n  log: /r/x.log\n")
    assert "  report: /r/x.pdf" in body and "Last" not in body
    (att,) = msg.iter_attachments()
    assert att.get_content_type() == "application/pdf" and att.get_content() == b"%PDF-1.4 fake"


def test_message_of_a_failed_and_an_interrupted_run():
    run = store.load(EXAMPLE)
    error = FioError("fio failed in lat round 3 (exit 1): boom\nsecond line")
    tail = [f"log line {i}\n" for i in range(50)]
    msg = notify.build_message(SETTINGS, name="x", host="h1", run=run, summary_lines=["sum"],
                               paths=PATHS, error=error, log_tail=tail)
    assert msg["Subject"] == "tkperf: x FAILED on h1: fio failed in lat round 3 (exit 1): boom"
    body = msg.get_body(("plain",)).get_content()
    assert body.startswith("The run failed: fio failed in lat round 3 (exit 1): boom\nsecond line\n\nsum\n")
    assert body.endswith("Last 50 lines of the log /r/x.log:\n\n" + "".join(tail))
    msg = notify.build_message(SETTINGS, name="x", host="h1", run=run, summary_lines=[], paths=PATHS,
                               error=Interrupted(signal.SIGTERM, "SIGTERM"))
    assert msg["Subject"] == "tkperf: x interrupted on h1: interrupted by SIGTERM"
    assert msg.get_body(("plain",)).get_content().startswith("The run was interrupted: interrupted by SIGTERM")


def test_long_error_is_cut_for_the_subject():
    msg = notify.build_message(SETTINGS, name="x", host="h", run=None, summary_lines=[],
                               paths=notify.paths_dict("", "", []), error=RuntimeError("y" * 500))
    assert len(msg["Subject"]) < 220 and msg["Subject"].endswith("...")
    assert "Files:" not in msg.get_body(("plain",)).get_content()


def test_smtp_and_password_parsing(tmp_path):
    assert notify.parse_smtp("mail.example.org") == ("mail.example.org", 25)
    assert notify.parse_smtp("mail.example.org:587") == ("mail.example.org", 587)
    assert notify.parse_smtp("[::1]:2525") == ("::1", 2525)
    pw = tmp_path / "pw"
    pw.write_text("from file\nignored\n")
    assert notify.read_password(str(pw), {notify.PASSWORD_ENV: "env"}) == "from file"
    assert notify.read_password(None, {notify.PASSWORD_ENV: "env"}) == "env"
    s = notify.mail_settings(["a@b"], "h:2", False, "u", None, None, {notify.PASSWORD_ENV: "pw"})
    assert s.password == "pw" and "pw" not in repr(s)
    assert notify.mail_settings([], None, False, None, None, None, {notify.PASSWORD_ENV: "pw"}) is None
