"""The man page, ``tkperf help`` and the shell completion (issue 26): all
generated from the argument parser, so each test walks the real parser and
checks that nothing it accepts is missing, and that every pointer a user
reads leads to something an installed tkperf has."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from tkperf.cli import build_parser, main, manual, parsertree
from tkperf.errors import EXIT_CODES, EXIT_USAGE
from tkperf.kit import registry

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TREE = parsertree.read(build_parser())


def _man(capsys) -> str:
    assert main(["help", "--man"]) == 0
    return capsys.readouterr().out


def test_man_page_names_every_command_and_option(capsys):
    roff = _man(capsys)
    assert roff.startswith(".TH TKPERF 1 ")
    for cmd in TREE.walk():
        if cmd.path:
            assert ".SS " + cmd.name.replace("-", "\\-") in roff, cmd.name
        for opt in cmd.options:
            for flag in opt.flags:
                assert "\\fB" + flag.replace("-", "\\-") + "\\fR" in roff, (cmd.name, flag)
    hidden = [c.name for c in TREE.walk() if c.path == ("agent",)]
    assert hidden == [], "the hidden agent command must stay out of the manual"


def test_man_page_has_every_exit_code_and_no_stray_request(capsys):
    roff = _man(capsys)
    section = roff[roff.index(".SH EXIT STATUS"):]
    for code in EXIT_CODES:
        assert f".TP\n\\fB{code}\\fR\n" in section
    # help text that starts with a dot or quote must not become a roff request
    known = {".TH", ".SH", ".SS", ".TP", ".PP", ".B"}
    for line in roff.splitlines():
        if line[:1] in (".", "'"):
            assert line.split()[0] in known, line


@pytest.mark.skipif(shutil.which("man") is None, reason="man-db is not installed")
def test_man_renders_the_page(tmp_path, capsys):
    page = tmp_path / "tkperf.1"
    page.write_text(_man(capsys))
    shown = subprocess.run(["man", "-l", str(page)], capture_output=True, text=True,
                           env=dict(os.environ, MANWIDTH="200", MAN_KEEP_FORMATTING="0"))
    assert shown.returncode == 0, shown.stderr
    text = re.sub(r".\x08", "", shown.stdout)
    assert "tkperf ssd run" in text and "EXIT STATUS" in text
    assert "stopped by SIGTERM" in text


def test_exit_codes_match_the_document():
    with open(os.path.join(REPO, "docs", "exit-codes.rst"), encoding="utf-8") as fh:
        documented = {int(m.group(1)) for m in re.finditer(r"^(\d+)\s+EXIT_", fh.read(), re.M)}
    assert documented == set(EXIT_CODES)


def test_no_help_text_points_into_the_source_tree():
    for cmd in TREE.walk():
        texts = [cmd.help, cmd.description] + [o.help for o in cmd.options] + [o.group for o in cmd.options]
        for text in texts:
            assert "docs/" not in (text or ""), (cmd.name, text)
    assert "docs/" not in build_parser().format_help()


def test_every_document_is_a_help_topic(capsys):
    docs = sorted(n[:-4] for n in os.listdir(os.path.join(REPO, "docs")) if n.endswith(".rst")
                  and n not in ("index.rst", "getting-started.rst", "api.rst"))
    assert sorted(manual.topics()) == docs
    assert main(["help"]) == 0
    listing = capsys.readouterr().out
    assert "  exit-codes  " in listing and "Exit codes" in listing
    assert main(["help", "exit-codes"]) == 0
    assert capsys.readouterr().out.startswith("Exit codes\n==========\n")


def test_unknown_topic_is_one_line_and_exit_2(capsys):
    assert main(["help", "no-such-topic"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("tkperf: error: no help topic 'no-such-topic'; "
                          "'tkperf help' lists them: api, check, completion, ")


# --- completion --------------------------------------------------------------

def _script(capsys, shell: str, tmp_path) -> str:
    assert main(["completion", shell]) == 0
    path = tmp_path / f"tkperf.{shell}"
    path.write_text(capsys.readouterr().out)
    return str(path)


def _complete_bash(script: str, words: list) -> list:
    """COMPREPLY for the command line ``words`` (the last is being typed)."""
    quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
    code = (f"source {script}\nCOMP_WORDS=({quoted})\nCOMP_CWORD={len(words) - 1}\n"
            "_tkperf\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n")
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return [w for w in done.stdout.splitlines() if w]


@pytest.mark.parametrize("words,expected", [
    (["tkperf", "ss"], ["ssd"]),
    (["tkperf", "ssd", ""], ["run"]),
    (["tkperf", "ssd", "run", "--test"], ["--test-range", "--tests"]),
    (["tkperf", "hdd", "run", "--write-c"], ["--write-cache"]),
    (["tkperf", "ssd", "run", "--write-cache", "o"], ["off", "on"]),
    (["tkperf", "ssd", "run", "--write-cache", "=", "k"], ["keep"]),
    (["tkperf", "ssd", "run", "--tests", "l"], ["lat"]),
    (["tkperf", "ssd", "run", "--tests", "iops,w"], ["iops,wsat"]),
    (["tkperf", "--outdir", "x", "com"], ["compare", "completion"]),
    (["tkperf", "completion", ""], ["bash", "zsh"]),
    (["tkperf", "show", "--js"], ["--json"]),
])
def test_bash_completes(words, expected, capsys, tmp_path):
    got = _complete_bash(_script(capsys, "bash", tmp_path), words)
    assert sorted(got) == sorted(expected)


def test_bash_completes_every_test_name(capsys, tmp_path):
    got = _complete_bash(_script(capsys, "bash", tmp_path), ["tkperf", "ssd", "run", "--tests", ""])
    assert got == list(registry.names())


def test_bash_completes_every_option_of_ssd_run(capsys, tmp_path):
    script = _script(capsys, "bash", tmp_path)
    run = next(c for c in TREE.walk() if c.path == ("ssd", "run"))
    got = set(_complete_bash(script, ["tkperf", "ssd", "run", "/dev/x", "-"]))
    assert {f for o in run.options for f in o.flags} <= got


def test_bash_completes_block_devices_for_a_device(loopdev, capsys, tmp_path):
    script = _script(capsys, "bash", tmp_path)
    assert loopdev in _complete_bash(script, ["tkperf", "ssd", "run", loopdev[:-1]])
    assert loopdev in _complete_bash(script, ["tkperf", "info", loopdev])


def test_bash_completes_files_for_a_result(capsys, tmp_path):
    script = _script(capsys, "bash", tmp_path)
    (tmp_path / "night-1.xml").write_text("<x/>")
    assert _complete_bash(script, ["tkperf", "show", str(tmp_path / "night-")]) == [str(tmp_path / "night-1.xml")]


def test_bash_completes_only_xml_files_and_directories_for_a_result(capsys, tmp_path):
    script = _script(capsys, "bash", tmp_path)
    run = tmp_path / "loop1"
    run.mkdir()
    for name in ("loop1.xml", "loop1.log", "loop1.html", "loop1.pdf"):
        (run / name).write_text("x")
    (run / "plots").mkdir()
    got = sorted(_complete_bash(script, ["tkperf", "show", str(run) + "/"]))
    assert got == [str(run / "loop1.xml"), str(run / "plots")]
    got = sorted(_complete_bash(script, ["tkperf", "check", str(run / "loop1.xml"), "--baseline", str(run) + "/l"]))
    assert got == [str(run / "loop1.xml")]


def test_bash_completes_pts_revisions_and_help_topics(capsys, tmp_path):
    from tkperf.cli.manual import topic_names
    from tkperf.model import pts
    script = _script(capsys, "bash", tmp_path)
    assert _complete_bash(script, ["tkperf", "ssd", "run", "--pts", ""]) == list(pts.REVISIONS)
    assert _complete_bash(script, ["tkperf", "ssd", "run", "--pts", "pts-c"]) == \
        [r for r in pts.REVISIONS if r.startswith("pts-c")]
    assert _complete_bash(script, ["tkperf", "help", "exit"]) == ["exit-codes"]
    assert sorted(_complete_bash(script, ["tkperf", "help", ""])) == sorted(topic_names())


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
@pytest.mark.parametrize("words,typed,expected", [
    ("tkperf ssd run --test", "--test", ["--test-range", "--tests"]),
    ("tkperf ssd run --write-cache ''", "", ["on", "off", "keep"]),
    ("tkperf ssd run --tests iops,l", "iops,l", ["iops,lat"]),
])
def test_zsh_runs_the_same_completion(words, typed, expected, capsys, tmp_path):
    """zsh calls the bash function through bashcompinit, in sh emulation,
    and does the prefix matching itself (its compgen returns every
    candidate): the candidates matching what was typed are the same."""
    script = _script(capsys, "zsh", tmp_path)
    count = len(words.split()) - 1
    code = (f"source {script}\nCOMP_WORDS=({words})\nCOMP_CWORD={count}\n"
            "_tkperf\nprint -l -- $COMPREPLY\n")
    done = subprocess.run(["zsh", "-f", "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, HOME=str(tmp_path)))
    assert done.returncode == 0, done.stderr
    assert [w for w in done.stdout.split() if w.startswith(typed)] == expected


# --- the documentation site ----------------------------------------------------

def test_docs_site_builds_with_warnings_as_errors(tmp_path):
    sphinx = pytest.importorskip("sphinx")
    out = tmp_path / "html"
    built = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                            os.path.join(REPO, "docs"), str(out)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-3000:]
    index = (out / "index.html").read_text(encoding="utf-8")
    for name in os.listdir(os.path.join(REPO, "docs")):
        if name.endswith(".rst") and name != "index.rst":
            assert f'href="{name[:-4]}.html"' in index, name
    api = (out / "api.html").read_text(encoding="utf-8")
    from tkperf import api as public
    for name in public.__all__:
        if isinstance(getattr(public, name), type):  # every class; constants have no id of their own
            assert f'id="tkperf.api.{name}"' in api, name
    assert sphinx.__version__
