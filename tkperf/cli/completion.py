"""Shell completion for bash and zsh, generated from the argument parser.

One bash function, ``_tkperf``, completes subcommands, every option of the
command typed so far, the choices of an option that has them, comma lists of
test names (from the registry, plug-ins included) and of report formats,
block devices where a command takes a device (the emulated SSDs that are up
where ``simdrive down`` or ``stats`` takes one), the values of an option or argument that names one
of a known list (``--pts`` revisions, ``help`` topics), directories and
``.xml`` files where a result file is expected, and file names elsewhere.  zsh runs the same function
through its ``bashcompinit`` layer, so the two cannot disagree.
"""
from __future__ import annotations

import argparse
import shlex
from typing import Dict, List, Mapping, Optional, Sequence

from tkperf import __version__
from tkperf.cli import parsertree
from tkperf.kit import registry
from tkperf.kit.options import REPORT_FORMATS
from tkperf.model import pts

SHELLS = ("bash", "zsh")

#: Positional arguments (by their dest) that name a device: completed with
#: the block devices lsblk lists; every other positional gets file names.
_DEVICE_DESTS = ("device", "devices", "target", "targets")
#: Options whose value is a directory.
_DIR_DESTS = ("outdir", "output_dir", "rwdir")
#: Arguments that take a result file: directories (a run's own) and .xml files.
_XML_DESTS = ("result", "results", "baseline", "old", "inputs")
#: Options whose value is a comma list of report formats.
_FORMAT_DESTS = ("format", "report_format")
#: Commands whose device is an emulated SSD that is up (``tkperf simdrive list``).
_SIMDRIVE_PATHS = (("simdrive", "down"), ("simdrive", "stats"))


def _words(items: List[str]) -> str:
    return shlex.quote(" ".join(items))


def _value_kind(opt: parsertree.Option) -> str:
    """How an option's value (or a positional) is completed."""
    if opt.choices:
        return "choices"
    if opt.dest in _XML_DESTS:
        return "xml"
    if opt.dest == "tests":
        return "tests"
    if opt.dest in _FORMAT_DESTS:
        return "formats"
    if opt.dest in _DEVICE_DESTS:
        return "device"
    if opt.dest in _DIR_DESTS or opt.metavar == "DIR":
        return "dir"
    return "file"


def _with_values(tree: parsertree.Command, values: Mapping[str, Sequence[str]]) -> None:
    """Give the options and arguments whose dest names a list in ``values``
    those words as choices, for completion only (the parser checks them)."""
    for cmd in tree.walk():
        cmd.options[:] = [o if o.choices or o.dest not in values else
                          parsertree.Option(o.flags, o.dest, o.metavar, o.help, tuple(values[o.dest]), o.group)
                          for o in cmd.options]


def _option_arms(cmd: parsertree.Command, kinds: List[str], choices: List[str]) -> None:
    """The value kind (and choices) of each of ``cmd``'s options that takes a value."""
    for o in cmd.options:
        if not o.takes_value or o.positional:
            continue
        for f in o.flags:
            kinds.append(f"{shlex.quote(' '.join(cmd.path + (f,)))}) echo {_value_kind(o)} ;;")
            if o.choices:
                choices.append(f"{shlex.quote(' '.join(cmd.path + (f,)))}) echo {_words(list(o.choices))} ;;")


def _positional_arms(cmd: parsertree.Command, key: str, positional: List[str], poschoices: List[str]) -> None:
    """What ``cmd``'s first positional argument completes to (a command without subcommands)."""
    pos = [o for o in cmd.options if o.positional]
    if not pos or cmd.subcommands:
        return
    kind = _value_kind(pos[0])
    if kind == "device" and cmd.path in _SIMDRIVE_PATHS:
        kind = "simdrive"
    positional.append(f"{key}) echo {'words' if kind == 'choices' else kind} ;;")
    if pos[0].choices:
        poschoices.append(f"{key}) echo {_words(list(pos[0].choices))} ;;")


def _cases(tree: parsertree.Command) -> Dict[str, List[str]]:
    """Shell ``case`` arms per lookup table, keyed by the command path."""
    subs: List[str] = []
    opts: List[str] = []
    valued: List[str] = []
    kinds: List[str] = []
    choices: List[str] = []
    positional: List[str] = []
    poschoices: List[str] = []
    for cmd in tree.walk():
        key = shlex.quote(" ".join(cmd.path))
        if cmd.subcommands:
            subs.append(f"{key}) echo {_words([s.path[-1] for s in cmd.subcommands])} ;;")
        flags = [f for o in cmd.options for f in o.flags] + ["--help"]
        opts.append(f"{key}) echo {_words(flags)} ;;")
        takes = [f for o in cmd.options if o.takes_value for f in o.flags]
        if takes:
            valued.append(f"{key}) echo {_words(takes)} ;;")
        _option_arms(cmd, kinds, choices)
        _positional_arms(cmd, key, positional, poschoices)
    return {"subs": subs, "opts": opts, "valued": valued, "kinds": kinds,
            "choices": choices, "positional": positional, "poschoices": poschoices}


def _case_fn(name: str, arms: List[str]) -> str:
    body = "\n".join("        " + a for a in arms)
    return f"_tkperf_{name}() {{\n    case \"$1\" in\n{body}\n    esac\n}}\n"


_MAIN = r'''
_tkperf_has() {  # _tkperf_has WORD LIST...: is WORD one of LIST?
    [ -n "${ZSH_VERSION-}" ] && emulate -L sh  # bash's word splitting in zsh
    local w="$1"; shift
    local x
    for x in $*; do [ "$x" = "$w" ] && return 0; done
    return 1
}

_tkperf() {
    [ -n "${ZSH_VERSION-}" ] && emulate -L sh  # bash's arrays and word splitting in zsh
    local cur prev path="" i w skip=0
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    if [ "$cur" = "=" ]; then cur=""; prev="${COMP_WORDS[COMP_CWORD-1]}"; fi
    if [ "$prev" = "=" ] && [ "$COMP_CWORD" -ge 2 ]; then prev="${COMP_WORDS[COMP_CWORD-2]}"; fi
    for ((i = 1; i < COMP_CWORD; i++)); do
        w="${COMP_WORDS[i]}"
        if [ "$skip" = 1 ]; then skip=0; continue; fi
        if [ "$w" = "=" ]; then skip=1; continue; fi
        case "$w" in
            -*) _tkperf_has "$w" "$(_tkperf_valued "$path")" && skip=1; continue ;;
        esac
        if _tkperf_has "$w" "$(_tkperf_subs "$path")"; then
            path="${path:+$path }$w"
        fi
    done
    COMPREPLY=()
    local kind=""
    if _tkperf_has "$prev" "$(_tkperf_valued "$path")"; then
        kind="$(_tkperf_kinds "${path:+$path }$prev")"
    elif [ "${cur#-}" != "$cur" ]; then
        COMPREPLY=($(compgen -W "$(_tkperf_opts "$path")" -- "$cur"))
        return 0
    elif [ -n "$(_tkperf_subs "$path")" ]; then
        COMPREPLY=($(compgen -W "$(_tkperf_subs "$path")" -- "$cur"))
        return 0
    else
        kind="$(_tkperf_positional "$path")"
    fi
    case "$kind" in
        choices) COMPREPLY=($(compgen -W "$(_tkperf_choices "${path:+$path }$prev")" -- "$cur")) ;;
        tests|formats)
            local done_="" last="$cur" words_="$_tkperf_test_names"
            [ "$kind" = formats ] && words_="$_tkperf_formats"
            case "$cur" in *,*) done_="${cur%,*},"; last="${cur##*,}" ;; esac
            COMPREPLY=($(compgen -P "$done_" -W "$words_" -- "$last"))
            ;;
        words) COMPREPLY=($(compgen -W "$(_tkperf_poschoices "$path")" -- "$cur")) ;;
        device) COMPREPLY=($(compgen -W "$(lsblk -lnpo NAME 2>/dev/null)" -- "$cur")) ;;
        simdrive)  # the emulated SSDs that are up, by name and by device
            COMPREPLY=($(compgen -W "$("${COMP_WORDS[0]}" simdrive list 2>/dev/null | tr ' ' '\n' | grep -v '^-$')" \
                -- "$cur")) ;;
        dir) COMPREPLY=($(compgen -d -- "$cur")) ;;
        xml) COMPREPLY=($(compgen -d -- "$cur") $(compgen -f -X '!*.xml' -- "$cur")) ;;
        file) COMPREPLY=($(compgen -f -- "$cur")) ;;
    esac
    return 0
}
'''


def script(parser: argparse.ArgumentParser, shell: str, values: Optional[Mapping[str, Sequence[str]]] = None) -> str:
    """The completion script for ``shell`` (bash or zsh); ``values``: the words
    of arguments checked after parsing (dest -> words; ``--pts`` is known here)."""
    tree = parsertree.read(parser)
    _with_values(tree, {"pts": list(pts.REVISIONS), **(values or {})})
    cases = _cases(tree)
    head = (f"# tkperf {__version__} completion for {shell}, generated from its argument parser:\n"
            f"#   tkperf completion {shell} > FILE, then source FILE (docs: tkperf help completion)\n")
    if shell == "zsh":
        head += "autoload -U +X compinit && compinit -u\nautoload -U +X bashcompinit && bashcompinit\n"
    body = "".join(_case_fn(name, arms) for name, arms in cases.items())
    names = (f"_tkperf_test_names={_words(list(registry.names()))}\n"
             f"_tkperf_formats={_words(list(REPORT_FORMATS))}\n")
    # bash: -o filenames for a slash after a directory and quoting; zsh's
    # bashcompinit would then add no space after an option or a test name.
    bind = "complete -F _tkperf tkperf\n" if shell == "zsh" else "complete -o filenames -F _tkperf tkperf\n"
    return head + names + body + _MAIN + bind
