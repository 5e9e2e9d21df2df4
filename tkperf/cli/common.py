"""What the commands share: run names, the output directory, the terminal
prompt and printing of written files.  The parser class is
:class:`tkperf.cli.Parser`; the options of a run and its report are in
:mod:`tkperf.cli.runargs`; the progress display and the run's logging in
:mod:`tkperf.cli.progress`."""
from __future__ import annotations

import sys

from tkperf import store
from tkperf.cli import advice
from tkperf.engine.opening import check_name as check_name
from tkperf.engine.opening import default_name as default_name
from tkperf.errors import NotConfirmedError
from tkperf.model.results import DeviceInfo, format_gb
from tkperf.untrusted import for_terminal


def prepare_outdir(path: str) -> str:
    return store.ensure_dir(path, "output directory")


def confirm(dev: DeviceInfo, assume_yes: bool) -> None:
    if assume_yes:
        return
    if not sys.stdin.isatty():
        raise NotConfirmedError(f"{dev.path}: no terminal to confirm on; pass --yes to write to it")
    what = f"{dev.path} ({dev.model or 'unknown model'}, {format_gb(dev.size_bytes)})"
    try:
        # input() may write its prompt past sys.stdout, straight to the terminal
        answer = input(for_terminal(f"All data on {what} will be destroyed.{advice.on_device(dev)} "
                                    "Type 'yes' to continue: "))
    except EOFError:  # Ctrl-D, or the terminal went away
        print(file=sys.stderr)
        answer = ""
    if answer.strip().lower() != "yes":
        raise NotConfirmedError("not confirmed; nothing was written")


def print_report(result) -> None:
    for w in result.warnings:
        print(f"tkperf: warning: {w}", file=sys.stderr)
    for path in result.paths:
        print(f"report: {path}")
