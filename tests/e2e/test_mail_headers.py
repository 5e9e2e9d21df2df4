"""Mail headers and names carry no control characters (issue 32, class 4).

Options that become headers are refused before the run (exit 2); untrusted
text in the subject (a result file's host name, fio's error line) reaches
a real SMTP server (aiosmtpd on 127.0.0.1) with its control characters
replaced; a mail that fails never changes the run's exit code; and a result
file whose run name holds a control character is not resumed, so no file
or folder is ever named with one."""
import dataclasses
import os
import re

import pytest
from aiosmtpd.controller import Controller

from conftest import needs_fio
from test_fio_failures import fake_fio
from test_mail import Collect, free_port, run_cli, smtp  # noqa: F401 - smtp is a fixture
from tkperf import notify, store
from tkperf.cli import main
from tkperf.errors import EXIT_FIO, EXIT_RESUME, EXIT_USAGE, FioError, UsageError

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(HERE, "..", "examples", "example-ssd.xml")
CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
HOSTILE = ["a@example.org\r\nBcc: victim@example.org", "a@example.org\n", "a@example.org\x00",
           "a@example.org\x85Bcc: v@example.org", "a@example.org\u2028", "a@example.org\x1b[2J"]


def _names(root):
    return [n for _, dirs, files in os.walk(root) for n in dirs + files]


def _one_error(err):
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("tkperf: error: "), err
    assert "Traceback" not in err
    return lines[0]


# --- refused before the run ---------------------------------------------------------

@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("option", ["--mail", "--mail-from", "--smtp-user"])
def test_a_control_character_in_a_header_option_is_refused_before_the_run(option, value, loopdev, tmp_path,
                                                                           monkeypatch, capsys):
    monkeypatch.setenv(notify.PASSWORD_ENV, "pw")
    extra = ["--mail", "a@example.org", "--smtp", "127.0.0.1:25"]
    extra = [option, value] + (extra[2:] if option == "--mail" else extra)
    before = open(loopdev, "rb").read(1 << 16)
    rc, out = run_cli(loopdev, tmp_path, *extra)
    line = _one_error(capsys.readouterr().err)
    assert rc == EXIT_USAGE
    assert f"{option} " in line and "control character" in line, line
    assert not out.exists()  # nothing started: no folder, no result, no log
    assert open(loopdev, "rb").read(1 << 16) == before


@pytest.mark.parametrize("name", ["m\rx", "m\nx", "m\x00x", "m\x1bx", "m\u2028x", "../m"])
def test_a_run_name_with_a_control_character_is_refused(name, loopdev, tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["ssd", "run", loopdev, "--name", name, "--outdir", str(out), "--yes", "-q"])
    line = _one_error(capsys.readouterr().err)
    assert rc == EXIT_USAGE and "--name" in line
    assert not out.exists()


def test_header_option_check_and_subject_text():
    for value in HOSTILE:
        with pytest.raises(UsageError, match="control character"):
            notify.check_header_option("--mail-from", value)
    assert notify.check_header_option("--mail-from", "tkperf lab <lab@example.org>")
    assert notify.header_text("a\r\nb\x00c\u2028d\te") == "a\ufffd\ufffdb\ufffdc\ufffdd\ufffde"


# --- what reaches the server ----------------------------------------------------------

def test_untrusted_subject_text_reaches_the_server_without_control_characters(smtp):  # noqa: F811
    handler, server = smtp
    host, port = notify.parse_smtp(server)
    settings = notify.MailSettings(recipients=("a@example.org",), host=host, port=port,
                                   sender="lab@example.org")
    run = store.load(EXAMPLE)
    run.host = dataclasses.replace(run.host, hostname="lab\r\nBcc: victim@example.org\r\nX-Evil: 1")
    error = FioError("fio failed in lat round 1 (exit 1): \x1b]0;owned\x07 \x00\x85Bcc: v@example.org")
    msg = notify.build_message(settings, name="m", host=notify.host_name(run), run=run,
                               summary_lines=["x"], paths={}, error=error)
    notify.send(msg, settings)
    (got,) = handler.messages
    subject = got["Subject"]
    assert subject.startswith("tkperf: m FAILED on lab\ufffd\ufffdBcc: victim@example.org")
    assert not CONTROLS.search(subject)
    assert got["Bcc"] is None and got["X-Evil"] is None
    assert got.get_all("To") == ["a@example.org"] and got["From"] == "lab@example.org"
    # a header value from elsewhere with a line break is refused by the policy itself
    with pytest.raises(ValueError):
        msg["X-Test"] = "a\r\nBcc: b@example.org"


class Reject(Collect):
    """A server that refuses every message."""

    async def handle_DATA(self, server, session, envelope):
        return "554 5.7.1 refused"


@needs_fio
def test_a_mail_that_fails_keeps_the_runs_exit_code(loopdev, tmp_path, monkeypatch, capsys):
    """fio fails (exit 6) with control characters in its error line, and the
    server refuses the mail: one warning, the exit code stays fio's."""
    body = 'printf "fio: err=22 \\033]0;owned\\007 \\302\\205Bcc: v@example.org\\n" >&2; exit 1'
    monkeypatch.setenv("PATH", fake_fio(tmp_path, body) + os.pathsep + os.environ["PATH"])
    controller = Controller(Reject(), hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        rc, out = run_cli(loopdev, tmp_path, "--no-report", "--mail", "a@example.org",
                          "--smtp", f"127.0.0.1:{controller.port}")
    finally:
        controller.stop()
    err = capsys.readouterr().err
    assert rc == EXIT_FIO, err
    assert "Traceback" not in err
    errors = [ln for ln in err.splitlines() if ln.startswith("tkperf: error")]
    warnings = [ln for ln in err.splitlines() if ln.startswith("tkperf: warning: mail")]
    assert len(errors) == 1 and "fio failed in lat round 1" in errors[0]
    assert len(warnings) == 1 and "SMTPDataError" in warnings[0] and "554" in warnings[0]
    assert warnings[0][len("tkperf: warning: "):] in (out / "m.log").read_text()
    assert store.load(str(out / "m.xml")).status == "failed"


@needs_fio
def test_a_failed_runs_mail_has_a_clean_subject(loopdev, tmp_path, monkeypatch, smtp, capsys):  # noqa: F811
    handler, server = smtp
    body = 'printf "fio: err=22 \\033[2J\\000 gone\\n" >&2; exit 1'
    monkeypatch.setenv("PATH", fake_fio(tmp_path, body) + os.pathsep + os.environ["PATH"])
    rc, _ = run_cli(loopdev, tmp_path, "--no-report", "--mail", "a@example.org", "--smtp", server)
    assert rc == EXIT_FIO, capsys.readouterr().err
    (msg,) = handler.messages
    assert "fio failed in lat round 1 (exit 1)" in msg["Subject"]
    assert not CONTROLS.search(msg["Subject"]) and "\ufffd[2J" in msg["Subject"]


# --- names from result files -------------------------------------------------------------

@pytest.mark.parametrize("name", ["ex\rample", "ex\nample", "ex\tample", "ex\x85ample", "ex\u2028ample"])
def test_resume_refuses_a_run_name_with_a_control_character(name, tmp_path, capsys, smtp):  # noqa: F811
    handler, server = smtp
    run = store.load(EXAMPLE)
    run.status, run.name = "interrupted", name
    path = tmp_path / f"{name}.xml"
    store.save(run, str(path))
    assert store.load(str(path)).name == name  # the file holds it (as &#13; / &#10; ...)
    before = sorted(_names(tmp_path))
    rc = main(["resume", str(path), "--yes", "--mail", "a@example.org", "--smtp", server])
    line = _one_error(capsys.readouterr().err)
    assert rc == EXIT_RESUME and "control character" in line and "run name" in line
    assert sorted(_names(tmp_path)) == before  # no log, folder or result named after it
    assert not handler.messages
