"""``tkperf help [TOPIC]``, ``tkperf help --man`` and ``tkperf completion SHELL``.

The documents of ``docs/`` travel inside the installed package (the build
copies them to ``tkperf/help/``, ``setup.py``), so every pointer in
``--help`` and in error messages names something an installed tkperf has:
``tkperf help TOPIC`` or the man page, which is generated from the argument
parser (:mod:`tkperf.cli.parsertree`) and cannot drift from it.
"""
from __future__ import annotations

import argparse
import datetime
import os
import re
import sys
from typing import Callable, Dict, List, Tuple

from tkperf import __version__
from tkperf.cli import completion, parsertree
from tkperf.errors import EXIT_CODES, EXIT_OK, UsageError

#: Pages of the documentation site that only arrange or include others
#: (``api`` is the site's page of autodoc; its topic is written below).
_SITE_ONLY = ("index", "getting-started", "api")
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def docs_dir() -> str:
    """Where the documents are: in the installed package, else (a source
    checkout, an editable install) the ``docs/`` beside the package."""
    for d in (os.path.join(_PACKAGE, "help"), os.path.join(os.path.dirname(_PACKAGE), "docs")):
        if os.path.isfile(os.path.join(d, "exit-codes.rst")):
            return d
    return ""


def topics() -> Dict[str, str]:
    """Topic name -> document path (``exit-codes`` -> .../exit-codes.rst)."""
    d = docs_dir()
    if not d:
        return {}
    return {name[:-4]: os.path.join(d, name) for name in sorted(os.listdir(d))
            if name.endswith(".rst") and name[:-4] not in _SITE_ONLY}


def _api_text(parser: argparse.ArgumentParser) -> str:
    """The ``api`` topic: every name of ``tkperf.api`` with the first line of
    its documentation (the documentation site's API page has them whole)."""
    import inspect

    from tkperf import api

    out = [f"The plug-in API: tkperf.api, version {'.'.join(map(str, api.API_VERSION))}",
           "",
           "The one module a plug-in imports; everything else in tkperf is internal.",
           "tkperf help extending walks through a complete plug-in and the rule of API_VERSION.",
           ""]
    kinds: Dict[str, List[str]] = {"Classes": [], "Functions": [], "Constants": []}
    for name in sorted(api.__all__, key=str.lower):
        obj = getattr(api, name)
        if inspect.isclass(obj):
            kind, first = "Classes", (inspect.getdoc(obj) or "").split("\n")[0]
        elif callable(obj):
            kind, first = "Functions", (inspect.getdoc(obj) or "").split("\n")[0]
        else:
            kind, first = "Constants", repr(obj) if len(repr(obj)) <= 60 else type(obj).__name__
        kinds[kind].append(f"  {name:<28} {first}")
    for kind, lines in kinds.items():
        out += [f"{kind}:"] + lines + [""]
    return "\n".join(out)


def _options_text(parser: argparse.ArgumentParser) -> str:
    """The ``options`` topic: every option of ``ssd run`` and ``hdd run``
    (their ``--help-all``), which their short ``--help`` points to."""
    from tkperf.cli.typos import command_of

    return "\n\n".join(command_of(parser, [profile, "run"]).format_help() for profile in ("ssd", "hdd"))


#: Topics written from the code rather than a document: name -> (title, text maker).
GENERATED: Dict[str, Tuple[str, Callable[[argparse.ArgumentParser], str]]] = {
    "api": ("The plug-in API, tkperf.api: every name and its first line", _api_text),
    "options": ("Every option of ssd run and hdd run (their --help-all)", _options_text),
}


def topic_names() -> List[str]:
    """Every topic ``tkperf help`` shows: the documents and the written ones."""
    return sorted(list(topics()) + list(GENERATED))


def _title(path: str) -> str:
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if line and not re.fullmatch(r"[=\-~^*#.:]+", line) and not line.startswith(".."):
                return line
    return ""


def _roff(text: str) -> str:
    """Plain text as roff: backslashes and hyphens escaped, no line may
    start a request."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(("\\&" + ln) if ln[:1] in (".", "'") else ln for ln in text.splitlines())


def man_page(parser: argparse.ArgumentParser) -> str:
    """tkperf(1) in roff (man(7) macros), every subcommand and option."""
    tree = parsertree.read(parser)
    date = datetime.date.today().isoformat()
    out: List[str] = [
        f'.TH TKPERF 1 "{date}" "tkperf {__version__}" "User Commands"',
        ".SH NAME", "tkperf \\- " + _roff(tree.description or "SNIA PTS performance tests"),
        ".SH SYNOPSIS",
        ".B tkperf", "[\\fB\\-\\-version\\fR] \\fICOMMAND\\fR [\\fIoptions\\fR]",
        ".SH DESCRIPTION",
        _roff("tkperf runs the SNIA Solid State Storage Performance Test Specification (PTS) and "
              "HDD tests with fio on raw block devices, keeps every result in an XML file and "
              "writes reports in reST, HTML and PDF. Every test writes over the whole device."),
        ".PP", _roff("The documents named below are shown by 'tkperf help TOPIC'."),
        ".SH COMMANDS",
    ]
    for cmd in tree.walk():
        if not cmd.path:
            continue
        out += [".SS " + _roff(cmd.name), _roff(cmd.help or cmd.description or "")]
        if cmd.subcommands and not cmd.options:
            out += [".PP", _roff("Commands: " + ", ".join(s.name for s in cmd.subcommands) + ".")]
            continue
        out += [".PP", "Usage: " + _roff(cmd.usage)]
        group = None
        for opt in cmd.options:
            if opt.group != group and opt.group:
                out += [".PP", "\\fB" + _roff(opt.group) + "\\fR"]
            group = opt.group
            if opt.positional:
                head = "\\fI" + _roff(opt.metavar or opt.dest.upper()) + "\\fR"
            else:
                head = ", ".join("\\fB" + _roff(f) + "\\fR" for f in opt.flags)
                if opt.takes_value:
                    head += " \\fI" + _roff(opt.metavar) + "\\fR"
            out += [".TP", head, _roff(opt.help or "")]
    out += [".SH EXIT STATUS"]
    for code, meaning in sorted(EXIT_CODES.items()):
        out += [".TP", f"\\fB{code}\\fR", _roff(meaning)]
    out += [".PP", _roff("With several devices the exit code is the highest of the targets' codes. "
                         "'tkperf help exit-codes' has the long form.")]
    names = topic_names()
    if names:
        out += [".SH TOPICS", _roff("tkperf help TOPIC shows one of: " + ", ".join(names) + ".")]
    out += [".SH FILES",
            _roff("NAME.xml (results, rewritten atomically after every round), NAME.log (every "
                  "command line), NAME.fio-json/ (fio's own JSON output of every round, gzip-compressed), "
                  "NAME.rst/.html/.pdf (the report), in ./NAME or --outdir."),
            ".SH SEE ALSO", "\\fBfio\\fR(1), \\fBnvme\\fR(1), \\fBhdparm\\fR(8), \\fBsg_format\\fR(8), "
            "\\fBsdparm\\fR(8), \\fBsmartctl\\fR(8)"]
    return "\n".join(out) + "\n"


_ADORNMENT = re.compile(r"^([=\-~^*#\"'+`:.])\1{2,}\s*$")
_TABLE_RULE = re.compile(r"^\s*=+(\s+=+)+\s*$")
#: Inline markup, replaced over the whole text (it may span lines): a role's, a link's, a
#: literal's, a reference's, strong and emphasis, each by its words.
_LITERAL = re.compile(r"``(.+?)``", re.S)
_INLINE = ((re.compile(r":[a-z:]+:`([^`<]+?)(?:\s*<[^`>]+>)?`", re.S), r"\1"),
           (re.compile(r"`([^`<]+?)\s*<([^`>]+)>`__?", re.S), r"\1 (\2)"),
           (re.compile(r"`([^`]+)`__?", re.S), r"\1"),
           (re.compile(r"\*\*(.+?)\*\*", re.S), r"\1"),
           (re.compile(r"(?<![\w*])\*(?![\s*])(.+?)(?<![\s*])\*(?![\w*])", re.S), r"\1"))


def plain(text: str) -> str:
    """A reStructuredText document as plain text for a terminal: no section
    rules or table borders, no backquotes or markup around words, a link as
    its words and its address, directives' own lines dropped (a picture
    says what it shows).  The source is what ``tkperf help TOPIC`` prints
    elsewhere (a pipe, a file) or with ``--source``."""
    out: List[str] = []
    for line in text.splitlines():
        if _ADORNMENT.match(line) or _TABLE_RULE.match(line):
            continue
        stripped = line.strip()
        indent = line[:len(line) - len(stripped)]
        if stripped.startswith(".. "):
            directive = stripped[3:]
            if directive.startswith(("image::", "figure::")):
                out.append(f"{indent}[picture: {directive.split('::', 1)[1].strip()}]")
            continue  # code-block::, comments, targets: their own line says nothing to a reader
        if stripped.startswith(":alt:") and out and out[-1].lstrip().startswith("[picture:"):
            out[-1] = f"{out[-1][:-1]}: {stripped[5:].strip()}]"
            continue
        if stripped.startswith(":") and out and out[-1].lstrip().startswith("[picture:"):
            continue  # a picture's other options (width, target)
        if line.endswith(" ::"):
            line = line[:-3]
        elif line.endswith("::"):
            line = line[:-1]
        out.append(line)
    literals: List[str] = []  # kept aside: their words are shown as they are, asterisks and all

    def aside(m: re.Match[str]) -> str:
        literals.append(m.group(1))
        return f"\0{len(literals) - 1}\0"

    joined = _LITERAL.sub(aside, "\n".join(out))
    for pattern, words in _INLINE:
        joined = pattern.sub(words, joined)
    return re.sub(r"\0(\d+)\0", lambda m: literals[int(m.group(1))], joined) + "\n"


def cmd_help(args: argparse.Namespace) -> int:
    if args.man:
        print(man_page(args.whole_parser()), end="")
        return EXIT_OK
    known = topics()
    names = topic_names()
    if not args.topic:
        width = max((len(n) for n in names), default=0)
        print("tkperf help TOPIC shows a document; tkperf help --man prints the man page tkperf(1).")
        print("Topics:")
        for name in names:
            title = GENERATED[name][0] if name in GENERATED else _title(known[name])
            print(f"  {name:<{width}}  {title}")
        if not known:
            print("  (none: this tkperf was installed without its documents)")
        return EXIT_OK
    topic = args.topic[:-4] if args.topic.endswith(".rst") else args.topic
    if topic in GENERATED:
        print(GENERATED[topic][1](args.whole_parser()).rstrip("\n"))
        return EXIT_OK
    if topic not in known:
        raise UsageError(f"no help topic {args.topic!r}; 'tkperf help' lists them: {', '.join(names)}")
    with open(known[topic], encoding="utf-8") as fh:
        text = fh.read()
    print(plain(text) if _terminal() and not args.source else text, end="")
    return EXIT_OK


def _terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def cmd_completion(args: argparse.Namespace) -> int:
    print(completion.script(args.whole_parser(), args.shell, {"topic": topic_names()}), end="")
    return EXIT_OK


def register(sub) -> None:
    h = sub.add_parser("help", help="show a document (tkperf help TOPIC) or the man page (--man)",
                       allow_abbrev=False)
    h.add_argument("topic", nargs="?", metavar="TOPIC", help="a document, e.g. exit-codes, method, remote")
    h.add_argument("--man", action="store_true", help="print the man page tkperf(1) in roff")
    h.add_argument("--source", action="store_true",
                   help="the document's reStructuredText as it is (on a terminal it is shown as plain text)")
    h.set_defaults(func=cmd_help)
    c = sub.add_parser("completion", help="print the shell completion script for bash or zsh",
                       allow_abbrev=False)
    c.add_argument("shell", choices=completion.SHELLS, help="the shell")
    c.set_defaults(func=cmd_completion)
