"""The typed run request (``tkperf.engine.request``): every field survives
its JSON, anything else is refused in one line, the command line gives it,
and a child of several targets takes it through ``--request FILE``."""
import dataclasses
import json
import os

import pytest

from tkperf.cli import build_parser, main, runargs
from tkperf.engine import request as request_file
from tkperf.engine.request import SCHEMA, VERSION, MailRequest, RemoteSettings, RunRequest
from tkperf.errors import EXIT_USAGE, UsageError
from tkperf.kit import options


def _full() -> RunRequest:
    """A request with no field left at its default."""
    opts = options.build({"tests": ("lat",), "runtime": 3}, quick=True, device_class="client",
                         pts=None, profile="ssd")
    return RunRequest(
        profile="hdd", devices=("/dev/a", "host:/dev/b"), options=opts, size=1 << 30, name="n",
        outdir="o", report_formats=("html", "rst"), no_report=True, png=True, resume=True, overwrite=True,
        force=True, yes=True, quiet=True, debug=True, dry_run=True, jobs=True, json_summary="s.json",
        mail=MailRequest(recipients=("x@example.org", "y@example.org"), smtp="mx:26", starttls=True,
                         user="u", password_file="pw", sender="t@example.org"),
        description="d.txt", features="f.txt",
        remote=RemoteSettings(fio_port=8766, ssh_config="ssh.conf", remote_tkperf="sudo -n tkperf"))


def test_every_field_survives_the_json_round_trip():
    req = _full()
    defaults = RunRequest(profile="ssd", devices=("/dev/x",),
                          options=options.build({}, quick=False, device_class=None, pts=None, profile="ssd"))
    for f in dataclasses.fields(RunRequest):  # the example sets every field
        assert getattr(req, f.name) != getattr(defaults, f.name), f.name
    again = RunRequest.from_json(req.to_json())
    assert again == req
    assert again.options.to_dict() == req.options.to_dict()
    doc = json.loads(req.to_json())
    assert doc["schema"] == SCHEMA and doc["version"] == VERSION
    assert "password" not in json.dumps(doc).replace("password_file", "")


@pytest.mark.parametrize("change, words", [
    (lambda d: d.update(schema="tkperf-summary"), "not a tkperf run request"),
    (lambda d: d.update(version=VERSION + 1), f"this tkperf reads version {VERSION}"),
    (lambda d: d.update(devices="/dev/a"), "devices must be a list of strings"),
    (lambda d: d.update(devices=[]), "at least one target"),
    (lambda d: d.update(yes="yes"), "yes must be a bool"),
    (lambda d: d.update(size=True), "size must be a int"),
    (lambda d: d.update(report_formats=["doc"]), "unknown report format"),
    (lambda d: d.update(profile="nvme"), "profile 'nvme'"),
    (lambda d: d.update(extra=1), "unknown field 'extra'"),
    (lambda d: d["mail"].update(starttls=1), "starttls must be a bool"),
    (lambda d: d.update(options={"tests": "nonesuch"}), "nonesuch"),
])
def test_a_bad_or_foreign_document_is_one_usage_line(change, words):
    doc = _full().to_dict()
    change(doc)
    with pytest.raises(UsageError) as err:
        RunRequest.from_dict(doc, "--request r.json")
    text = str(err.value)
    assert words in text and "\n" not in text and text.startswith("--request r.json: ")


def test_the_command_line_becomes_one_request():
    argv = ["hdd", "run", "/dev/a", "/dev/b", "--tests", "hdd-lat", "--runtime", "2m", "--size", "1g",
            "--name", "n", "--outdir", "o", "--yes", "--quiet", "--report-format", "pdf,rst", "--no-report", "--png",
            "--json-summary", "s.json", "--mail", "x@example.org", "--smtp", "mx", "--fio-port", "8766",
            "--force", "--debug"]
    req = runargs.request_from_args(build_parser().parse_args(argv), "hdd")
    assert req.profile == "hdd" and req.devices == ("/dev/a", "/dev/b")
    assert req.options.tests == ("hdd-lat",) and req.options.runtime == 120
    assert req.size == 1 << 30 and (req.name, req.outdir) == ("n", "o")
    assert req.report_formats == ("pdf", "rst") and req.no_report and req.png and req.yes and req.quiet
    assert req.force and req.debug and not req.resume and not req.dry_run
    assert req.json_summary == "s.json" and req.mail.recipients == ("x@example.org",)
    assert req.remote == RemoteSettings(fio_port=8766)
    assert RunRequest.from_json(req.to_json()) == req


def _write(tmp_path, req):
    path = tmp_path / "r.json"
    request_file.write(req, str(path))
    return str(path)


def test_a_request_file_runs_as_its_command_line_would(tmp_path, capsys):
    target = str(tmp_path / "t.img")
    req = runargs.request_from_args(build_parser().parse_args(
        ["ssd", "run", target, "--size", "64m", "--dry-run", "--tests", "lat", "--quick"]), "ssd")
    path = _write(tmp_path, req)
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    rc = main(["ssd", "run", target, "--request", path])
    by_file = capsys.readouterr().out
    rc2 = main(["ssd", "run", target, "--size", "64m", "--dry-run", "--tests", "lat", "--quick"])
    assert rc == rc2 == 0 and by_file == capsys.readouterr().out
    assert not os.path.exists(target)


@pytest.mark.parametrize("content, words", [
    (None, "No such file or directory"),
    ("{not json", "not JSON"),
    ('{"schema": "tkperf-multi-summary", "version": 1}', "not a tkperf run request"),
])
def test_a_bad_request_file_is_refused_in_one_line(tmp_path, capsys, content, words):
    path = tmp_path / "r.json"
    if content is not None:
        path.write_text(content)
    rc = main(["ssd", "run", "/dev/a", "--request", str(path)])
    err = capsys.readouterr().err.strip()
    assert rc == EXIT_USAGE
    assert err.startswith(f"tkperf: error: --request {path}") and words in err and "\n" not in err


def test_a_request_for_another_target_is_refused(tmp_path, capsys):
    req = RunRequest(profile="ssd", devices=(str(tmp_path / "a.img"),),
                     options=options.build({}, quick=False, device_class=None, pts=None, profile="ssd"))
    path = _write(tmp_path, req)
    rc = main(["ssd", "run", str(tmp_path / "b.img"), "--request", path])
    assert rc == EXIT_USAGE and "not for this command line" in capsys.readouterr().err
    both = (str(tmp_path / "a.img"), str(tmp_path / "b.img"))
    path = str(tmp_path / "two.json")
    request_file.write(dataclasses.replace(req, devices=both), path)
    rc = main(["ssd", "run", *both, "--request", path])  # a child runs one target
    assert rc == EXIT_USAGE and "not for this command line" in capsys.readouterr().err


def test_the_request_option_is_not_in_the_help(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["ssd", "run", "--help"])
    assert "--request" not in capsys.readouterr().out
