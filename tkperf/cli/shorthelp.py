"""A ``--help`` that fits a screen, for the commands with many options.

``tkperf ssd run --help`` shows the usage in one line, the options most
runs need in a few groups, and where the rest are: ``--help-all`` (argparse's
whole help, every option of every test) and ``tkperf help options`` (the
same as a document); the man page keeps everything too.  The groups name
options by their flags and are read off the parser, so an option renamed
or removed drops out of the short help rather than being described wrong.
"""
from __future__ import annotations

import argparse
import re
import sys
import textwrap
from typing import List, Optional, Sequence, Tuple

#: The common options of a run, by group: what most runs need.
RUN_GROUPS: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    ("What to run", ("device", "--tests", "--pts", "--class", "--quick", "--dry-run")),
    ("The run and its files", ("--name", "--outdir", "--yes", "--force", "--size", "--resume", "--overwrite")),
    ("Workloads", ("--runtime", "--numjobs", "--iodepth", "--active-range", "--write-cache", "--purge")),
    ("Output", ("--quiet", "--report-format", "--no-report", "--json-summary")),
)
#: The most lines the short help may take (issue: a screen and a half).
MAX_LINES = 150


def _named(parser: argparse.ArgumentParser, name: str) -> Optional[argparse.Action]:
    for action in parser._actions:  # noqa: SLF001 - argparse's own list, read only
        if name in action.option_strings or (not action.option_strings and action.dest == name):
            return action
    return None


def _others(parser: argparse.ArgumentParser, shown: Sequence[argparse.Action]) -> Tuple[List[str], List[str]]:
    """What the short help leaves out: the general groups and the tests'
    own, each with its count of options ('unattended runs (6)', 'wsat (8)')."""
    general, tests = [], []
    for group in parser._action_groups:  # noqa: SLF001
        rest = [a for a in group._group_actions  # noqa: SLF001
                if a not in shown and a.help != argparse.SUPPRESS and not isinstance(a, _HelpActions)]
        if not rest:
            continue
        title = group.title or ""
        test = re.search(r" test \(([^()]+)\)$", title)
        if test:
            tests.append(f"{test.group(1)} ({len(rest)})")
        else:
            title = "more run options" if title in ("options", "optional arguments") else title.split(" (")[0]
            title = title.split(",")[0]
            general.append(f"{title[:1].lower()}{title[1:]} ({len(rest)})")
    return general, tests


def short_help(parser: argparse.ArgumentParser, groups: Sequence[Tuple[str, Sequence[str]]]) -> str:
    """The usage in one line, the options of ``groups`` (those the parser
    has), where the rest are, and the parser's epilog (its examples)."""
    formatter = parser._get_formatter()  # noqa: SLF001 - argparse's own layout and wrapping
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)  # noqa: SLF001
    formatter.add_text(parser.description)
    shown: List[argparse.Action] = []
    for title, names in groups:
        actions = [a for a in (_named(parser, n) for n in names) if a is not None and a.help != argparse.SUPPRESS]
        if not actions:
            continue
        shown += actions
        formatter.start_section(title)
        formatter.add_arguments(actions)
        formatter.end_section()
    general, tests = _others(parser, shown)
    if general or tests:
        lines = [f"The other options: {parser.prog} --help-all, or tkperf help options; every option "
                 "of every command: man tkperf (tkperf help --man).  Left out here: "
                 + ", ".join(general) + (("; each test's own: " + ", ".join(tests)) if tests else "") + "."]
        formatter.add_text("\n".join(textwrap.fill(x, width=79) for x in lines))
    text = formatter.format_help()
    return text + (("\n" + parser.epilog + "\n") if parser.epilog else "")


class ShortHelp(argparse.Action):
    """``-h``/``--help``: the short help, then exit 0."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None,
                 groups: Sequence[Tuple[str, Sequence[str]]] = RUN_GROUPS):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)
        self.groups = groups

    def __call__(self, parser, namespace, values, option_string=None):
        sys.stdout.write(short_help(parser, self.groups))
        parser.exit()


class FullHelp(argparse.Action):
    """``--help-all``: argparse's whole help, every option, then exit 0."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        parser.print_help()
        parser.exit()


_HelpActions = (ShortHelp, FullHelp, argparse._HelpAction)  # noqa: SLF001


def add_help_options(parser: argparse.ArgumentParser,
                     groups: Sequence[Tuple[str, Sequence[str]]] = RUN_GROUPS) -> None:
    """``-h``/``--help`` (short) and ``--help-all`` (everything) on a parser
    made with ``add_help=False``."""
    parser.add_argument("-h", "--help", action=ShortHelp, groups=groups,
                        help="show the common options, by group, and where the rest are")
    parser.add_argument("--help-all", action=FullHelp, help="show every option, those of every test too")
