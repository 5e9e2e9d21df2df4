"""Help that fits a screen, and help topics that exist (issue 48, items 6
and 7): ``ssd run --help`` is short, with the usage in one line, the
common options by group and where the rest are; every ``tkperf help X``
named in the documents, the completion scripts, the help text or the
package's messages is a topic that ``tkperf help`` shows."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tkperf.cli import build_parser, completion, main, manual, parsertree, shorthelp
from tkperf.cli.typos import command_of

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAMED = re.compile(r"tkperf help ([a-z0-9][a-z0-9_-]*(?:\.[a-z0-9_-]+)*)")


def _tkperf(*argv: str) -> str:
    done = subprocess.run([sys.executable, "-m", "tkperf", *argv], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "80"}, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("profile", ["ssd", "hdd"])
def test_short_help_fits_a_screen_and_says_where_the_rest_is(profile):
    text = _tkperf(profile, "run", "--help")
    lines = text.splitlines()
    assert len(lines) <= shorthelp.MAX_LINES, len(lines)
    assert lines[0] == f"usage: tkperf {profile} run [options] DEVICE [DEVICE ...]" and lines[1] == ""
    headings = [ln[:-1] for ln in lines if re.fullmatch(r"[A-Z][^ ].*:", ln)]
    assert headings[:4] == [title for title, _ in shorthelp.RUN_GROUPS]
    flat = " ".join(text.split())
    assert f"tkperf {profile} run --help-all, or tkperf help options" in flat
    assert "man tkperf" in flat
    for flag in ("--tests", "--quick", "--dry-run", "--name", "--yes", "--runtime", "--purge", "--report-format"):
        assert re.search(rf"^  {re.escape(flag)}\b", text, re.M), flag
    assert text.rstrip().splitlines()[-1].startswith(f"The {'HDD' if profile == 'ssd' else 'SSD'} tests' options")
    # each test's own options are counted, not listed
    own = "each test's own: iops" if profile == "ssd" else "each test's own: hdd-zones"
    assert own in flat
    assert "--wsat-time" not in text and "--hdd-iops-qd" not in text


@pytest.mark.parametrize("profile", ["ssd", "hdd"])
def test_help_all_and_the_options_topic_and_the_man_page_keep_every_option(profile):
    tree = parsertree.read(build_parser())
    run = next(c for c in tree.walk() if c.path == (profile, "run"))
    flags = [o.flags[0] for o in run.options if o.flags]
    assert len(flags) > 50  # its tests' options too: the whole list, not the short one
    every = _tkperf(profile, "run", "--help-all")
    assert every.splitlines()[0] == f"usage: tkperf {profile} run [options] DEVICE [DEVICE ...]"
    topic = _tkperf("help", "options")
    man = manual.man_page(build_parser())
    shown_here = [f for f in flags if f in every]
    assert len(shown_here) == len(flags)
    for flag in shown_here:
        assert flag in topic, flag
    for flag in flags:
        assert flag.replace("-", "\\-") in man, flag


def _named_topics() -> dict:
    """Every 'tkperf help X' named anywhere a user reads: docs/, README,
    the package's source (help text, messages, epilogs), the generated
    completion scripts and the whole help of every command."""
    found: dict = {}

    def scan(text: str, where: str) -> None:
        for name in NAMED.findall(text):
            found.setdefault(name.rstrip("."), where)

    for folder in ("docs", "tkperf"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
            for name in files:
                if name.endswith((".rst", ".py", ".txt")):
                    with open(os.path.join(dirpath, name), encoding="utf-8") as fh:
                        scan(fh.read(), os.path.join(dirpath, name))
    with open(os.path.join(ROOT, "README.rst"), encoding="utf-8") as fh:
        scan(fh.read(), "README.rst")
    parser = build_parser()
    for shell in completion.SHELLS:
        scan(completion.script(parser, shell, {"topic": manual.topic_names()}), f"completion {shell}")
    for cmd in parsertree.read(parser).walk():
        sub = command_of(parser, list(cmd.path))
        scan(sub.format_help(), cmd.name + " --help")
    for profile in ("ssd", "hdd"):
        scan(shorthelp.short_help(command_of(parser, [profile, "run"]), shorthelp.RUN_GROUPS),
             f"{profile} run --help")
    return found


def test_every_help_topic_named_anywhere_exists(capsys):
    named = _named_topics()
    # the scan finds what it must: the topics the review found missing, and the short help's pointer
    assert {"completion", "api", "options", "exit-codes", "remote"} <= set(named), sorted(named)
    for name, where in sorted(named.items()):
        assert main(["help", name]) == 0, f"'tkperf help {name}' named in {where}"
        out, err = capsys.readouterr()
        assert len(out.splitlines()) > 5 and not err, name
    assert set(named) <= set(manual.topic_names())


def test_the_completion_topic_is_what_the_scripts_point_to(capsys):
    script = completion.script(build_parser(), "bash")
    assert "(docs: tkperf help completion)" in script
    assert main(["help", "completion"]) == 0
    text = capsys.readouterr().out
    assert "tkperf completion bash" in text and "tkperf completion zsh" in text


def test_the_api_topic_names_every_name_of_the_api(capsys):
    from tkperf import api
    assert main(["help", "api"]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"The plug-in API: tkperf.api, version {'.'.join(map(str, api.API_VERSION))}")
    listed = set(re.findall(r"^  (\S+) ", text, re.M))
    assert set(api.__all__) <= listed
