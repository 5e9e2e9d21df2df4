"""The command line's shape, read from the argument parser itself.

The man page (:mod:`tkperf.cli.manual`) and the shell completion
(:mod:`tkperf.cli.completion`) are generated from this, so neither can
drift from what ``tkperf`` accepts.  argparse keeps subcommands and
options in attributes with a leading underscore; they have been stable
since Python 3.2 and are read here only, in one place.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Iterator, List, Tuple


@dataclass(frozen=True)
class Option:
    """One option or positional argument of a command."""

    flags: Tuple[str, ...]        # ("--tests",) or () for a positional
    dest: str
    metavar: str                  # "" for a switch that takes no value
    help: str
    choices: Tuple[str, ...] = ()
    group: str = ""               # the argument group's title ("" for the default ones)

    @property
    def positional(self) -> bool:
        return not self.flags

    @property
    def takes_value(self) -> bool:
        return bool(self.metavar)


@dataclass
class Command:
    """A command (``path`` is ``()`` for ``tkperf`` itself, ``("ssd", "run")``...)."""

    path: Tuple[str, ...]
    help: str
    description: str
    usage: str
    options: List[Option] = field(default_factory=list)
    subcommands: List[Command] = field(default_factory=list)

    @property
    def name(self) -> str:
        return " ".join(("tkperf",) + self.path)

    def walk(self) -> Iterator[Command]:
        yield self
        for sub in self.subcommands:
            yield from sub.walk()


def _metavar(action: argparse.Action) -> str:
    if action.nargs == 0:
        return ""
    if action.metavar:
        return action.metavar if isinstance(action.metavar, str) else " ".join(action.metavar)
    if action.choices:
        return "{" + ",".join(str(c) for c in action.choices) + "}"
    return action.dest.upper()


def _group_titles(parser: argparse.ArgumentParser) -> dict:
    titles = {}
    for group in parser._action_groups:  # noqa: SLF001 - see the module's docstring
        for action in group._group_actions:  # noqa: SLF001
            if group.title not in ("options", "optional arguments", "positional arguments"):
                titles[id(action)] = group.title or ""
    return titles


def read(parser: argparse.ArgumentParser, path: Tuple[str, ...] = (), help_text: str = "") -> Command:
    """The command tree below ``parser``; suppressed (hidden) commands and
    options are left out."""
    usage = " ".join(parser.format_usage().split())
    usage = usage[len("usage: "):] if usage.startswith("usage: ") else usage
    cmd = Command(path=path, help=help_text, description=parser.description or "", usage=usage)
    titles = _group_titles(parser)
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            helps = {a.dest: a.help or "" for a in action._choices_actions}  # noqa: SLF001
            seen = set()
            for name, sub in action.choices.items():
                if name not in helps or id(sub) in seen:  # hidden, or an alias
                    continue
                seen.add(id(sub))
                cmd.subcommands.append(read(sub, path + (name,), helps[name]))
            continue
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):  # noqa: SLF001
            continue
        help_text_ = (action.help or "").replace("%(default)s", str(action.default)).replace("%%", "%")
        cmd.options.append(Option(flags=tuple(action.option_strings), dest=action.dest,
                                  metavar=_metavar(action), help=help_text_,
                                  choices=tuple(str(c) for c in action.choices or ()),
                                  group=titles.get(id(action), "")))
    return cmd
