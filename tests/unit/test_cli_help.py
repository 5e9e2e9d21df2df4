"""The command line helps: a typo gets the nearest option or command of what
was typed, hidden commands are never offered, every option has help text,
and a run's directory given for its result file names the file inside."""
from __future__ import annotations

import pytest

from tkperf.cli import ROUTES, build_parser, completion, main, manual, parsertree, route, typos
from tkperf.errors import EXIT_RESULT_FILE, EXIT_USAGE


def _err(argv, capsys) -> tuple:
    rc = main(argv)
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return rc, err


@pytest.mark.parametrize("argv,said", [
    (["ssd", "run", "/dev/null", "--quik"], "unrecognized arguments: --quik: did you mean --quick?"),
    (["ssd", "run", "/dev/null", "--test", "iops"], "unrecognized arguments: --test iops: did you mean --tests?"),
    (["hdd", "run", "/dev/null", "--qiuet"], "did you mean --quiet?"),
    (["show", "x.xml", "--jsno"], "did you mean --json?"),
    (["report", "x.xml", "--formt", "pdf"], "did you mean --format?"),
])
def test_an_option_typo_gets_the_nearest_option_of_that_command(argv, said, capsys):
    rc, err = _err(argv, capsys)
    assert rc == EXIT_USAGE and said in err


def test_an_unknown_word_without_a_near_option_points_to_the_help(capsys):
    rc, err = _err(["ssd", "run", "/dev/null", "--zzzzzz"], capsys)
    assert rc == EXIT_USAGE and "'tkperf ssd run --help' lists the options" in err


def test_a_command_typo_gets_the_command_and_never_the_hidden_agent(capsys):
    rc, err = _err(["sdd"], capsys)
    assert rc == EXIT_USAGE and "did you mean ssd?" in err
    assert "agent" not in err and "completion" in err  # the listed choices are those of --help
    rc, err = _err(["agnet"], capsys)
    assert "agent" not in err.split("(choose from")[1]


def test_the_hidden_agent_is_hidden_from_the_choices_read_off_the_parser():
    root = build_parser()
    sub = typos._subparsers(root)
    assert sub is not None and "agent" in sub.choices  # it exists ...
    assert "agent" not in typos.visible_choices(sub)  # ... and is not offered


def _commands(parser) -> dict:
    sub = typos._subparsers(parser)
    assert sub is not None
    return sub.choices


def test_the_routing_table_is_what_the_commands_register():
    """Each command's line in the table is the one its own module gives it:
    the whole parser (every module's own) lists the same names, in order,
    with the same help."""
    whole = parsertree.read(build_parser())
    listed = [(name, help_text) for name, _, help_text in ROUTES if help_text is not None]
    assert [(c.path[0], c.help) for c in whole.subcommands] == listed
    assert list(_commands(build_parser())) == [name for name, _, _ in ROUTES]


@pytest.mark.parametrize("name", [name for name, _, _ in ROUTES])
def test_a_command_parsed_alone_says_what_the_whole_parser_says(name):
    """Only the given command's module builds its parser: tkperf --help, the
    command's own help (and its subcommands'), and its options are those of
    the whole parser; every other command is only its name and help."""
    whole, alone = build_parser(), build_parser(name)
    assert alone.format_help() == whole.format_help()
    assert parsertree.read(_commands(alone)[name]) == parsertree.read(_commands(whole)[name])
    module_of = {n: module for n, module, _ in ROUTES}
    others = [parsertree.read(_commands(alone)[n]) for n in module_of if module_of[n] != module_of[name]]
    assert others and not any(c.options or c.subcommands for c in others)


def test_the_first_word_routes_and_anything_else_gets_the_whole_parser(capsys):
    assert route(["ssd", "run", "/dev/null"]) == "ssd" and route(["help", "--man"]) == "help"
    assert route([]) is None and route(["--help"]) is None and route(["sdd"]) is None
    bash = completion.script(build_parser(), "bash", {"topic": manual.topic_names()})
    for argv, whole in ((["help", "--man"], manual.man_page(build_parser())), (["completion", "bash"], bash)):
        assert main(argv) == 0  # read off the whole tree, though only help's module built its parser
        assert capsys.readouterr().out == whole


def test_every_command_and_option_has_help_text():
    tree = parsertree.read(build_parser())
    missing = [f"{c.name} (command)" for c in tree.walk() if c.path and not c.help.strip()]
    missing += [f"{c.name} {' '.join(o.flags) or o.dest}" for c in tree.walk() for o in c.options
                if not o.help.strip()]
    assert not missing, missing
    quiet = [c.name for c in tree.walk() for o in c.options if "--quiet" in o.flags]
    assert {"tkperf report", "tkperf compare", "tkperf demo", "tkperf resume"} <= set(quiet)


def test_a_run_directory_for_a_result_names_the_file_inside(tmp_path, capsys):
    run = tmp_path / "loop1"
    run.mkdir()
    (run / "loop1.xml").write_text("<x/>")
    (run / "other.xml").write_text("<x/>")
    for argv in (["report", str(run)], ["show", str(run)], ["resume", str(run)]):
        rc, err = _err(argv, capsys)
        assert rc == EXIT_RESULT_FILE and f"did you mean {run / 'loop1.xml'}?" in err, err
    lone = tmp_path / "renamed"
    lone.mkdir()
    (lone / "night-3.xml").write_text("<x/>")
    rc, err = _err(["show", str(lone)], capsys)
    assert f"did you mean {lone / 'night-3.xml'}?" in err
    rc, err = _err(["show", str(tmp_path)], capsys)  # two directories, no .xml: nothing to suggest
    assert "did you mean" not in err and "not a regular file" in err


SAMPLE = """Exit codes
==========

Every error starts ``tkperf: error:``; see `the PTS <https://www.snia.org/pts>`_ and :func:`tkperf.api.x`,
**strong** words, *emphasis* and a glob ``tkperf-demo-*`` kept as it is::

    tkperf ssd run /dev/x

.. image:: images/a.png
   :alt: a burst, a cliff
   :width: 80%

====  =======
code  meaning
====  =======
0     done
====  =======
"""


def test_a_help_topic_reads_as_plain_text_on_a_terminal(monkeypatch, capsys):
    # Issue 60 item 6: tkperf help TOPIC printed raw reStructuredText (rules and backquotes) on a terminal
    text = manual.plain(SAMPLE)
    assert text.splitlines()[:4] == [
        "Exit codes", "",
        "Every error starts tkperf: error:; see the PTS (https://www.snia.org/pts) and tkperf.api.x,",
        "strong words, emphasis and a glob tkperf-demo-* kept as it is:"]
    assert "[picture: images/a.png: a burst, a cliff]" in text and "width" not in text
    assert "====" not in text and "`" not in text and "code  meaning" in text and "0     done" in text
    monkeypatch.setattr(manual, "_terminal", lambda: True)
    assert main(["help", "exit-codes"]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("Exit codes\n\n") and "``" not in shown and "\n====" not in shown
    assert main(["help", "exit-codes", "--source"]) == 0  # the document as it is
    assert capsys.readouterr().out.startswith("Exit codes\n==========\n")
    monkeypatch.setattr(manual, "_terminal", lambda: False)  # a pipe or a file: the source
    assert main(["help", "exit-codes"]) == 0
    assert capsys.readouterr().out.startswith("Exit codes\n==========\n")
