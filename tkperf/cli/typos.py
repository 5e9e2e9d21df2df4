"""What argparse says of a typo, made helpful: the nearest option of the
command the word was given to (``--quik`` -> ``--quick``, ``--test`` ->
``--tests``), the nearest choice of an invalid one, and the choices without
the hidden commands (``agent``, which only tkperf itself starts on a test
host).  Read from the parser itself, so it cannot drift from it."""
from __future__ import annotations

import argparse
import difflib
import re
from typing import List, Optional, Sequence

_UNRECOGNIZED = "unrecognized arguments: "
_CHOICE = re.compile(r"^argument (?P<arg>[^:]+): invalid choice: (?P<value>.+?) \(choose from .*\)$", re.S)


def _subparsers(parser: argparse.ArgumentParser) -> Optional[argparse._SubParsersAction]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None


def command_of(root: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.ArgumentParser:
    """The (sub)command parser ``argv`` reaches: each word that names a
    subcommand of the parser reached so far goes one level down."""
    parser = root
    for word in argv:
        sub = _subparsers(parser)
        if sub is not None and word in sub.choices:
            parser = sub.choices[word]
    return parser


def visible_choices(action: argparse.Action) -> List[str]:
    """An action's choices as its help lists them: a subcommand whose help is
    suppressed is left out."""
    if isinstance(action, argparse._SubParsersAction):
        shown = {a.dest for a in action._choices_actions}
        return [c for c in action.choices if c in shown]
    return [str(c) for c in (action.choices or ())]


def options_of(parser: argparse.ArgumentParser) -> List[str]:
    """Every long option a command takes, hidden ones left out."""
    return [o for a in parser._actions if a.help != argparse.SUPPRESS
            for o in a.option_strings if o.startswith("--")]


def nearest(word: str, candidates: Sequence[str]) -> str:
    """The candidate nearest to ``word`` ('' when none is near enough):
    a candidate that starts with it first (``--test`` -> ``--tests``), else
    difflib's closest match."""
    longer = [c for c in candidates if c.startswith(word) and len(word.lstrip("-")) >= 3]
    if len(longer) == 1:
        return longer[0]
    bare = {c.lstrip("-"): c for c in candidates}  # '--' alike in every option: not a likeness
    close = difflib.get_close_matches(word.lstrip("-"), list(bare), n=1, cutoff=0.6)
    return bare[close[0]] if close else ""


def _unrecognized(root: argparse.ArgumentParser, words: str, argv: Sequence[str]) -> str:
    parser = command_of(root, argv)
    options = options_of(parser)
    hints = []
    for word in words.split():
        if word.startswith("-"):
            guess = nearest(word.split("=", 1)[0], options)
            if guess:
                hints.append(f"did you mean {guess}?")
    if not hints:
        return f"{_UNRECOGNIZED}{words} ('{parser.prog} --help' lists the options)"
    return f"{_UNRECOGNIZED}{words}: {'; '.join(dict.fromkeys(hints))}"


def _invalid_choice(parser: argparse.ArgumentParser, arg: str, value: str) -> Optional[str]:
    for action in parser._actions:
        names = ["/".join(action.option_strings)] if action.option_strings else []
        names += [str(action.metavar or ""), str(action.dest or "")]
        if arg in names and action.choices is not None:
            shown = visible_choices(action)
            guess = nearest(value.strip("'\""), shown)
            return (f"argument {arg}: invalid choice: {value}"
                    + (f"; did you mean {guess}?" if guess else "")
                    + f" (choose from {', '.join(shown)})")
    return None


def explain(parser: argparse.ArgumentParser, message: str, argv: Sequence[str]) -> str:
    """argparse's ``message`` with a suggestion, where one can be made."""
    if message.startswith(_UNRECOGNIZED):
        return _unrecognized(parser, message[len(_UNRECOGNIZED):], argv)
    m = _CHOICE.match(message)
    if m:
        return _invalid_choice(parser, m.group("arg"), m.group("value")) or message
    return message
