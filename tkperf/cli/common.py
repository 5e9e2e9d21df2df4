"""What the commands share: the parser class, logging, run names, the
terminal prompt and printing of written files."""
from __future__ import annotations

import argparse
import logging
import sys
from typing import Optional, Sequence

from tkperf import store
from tkperf.cli import advice, typos
from tkperf.cli import progress as shown
from tkperf.engine.opening import check_name as check_name
from tkperf.engine.opening import default_name as default_name
from tkperf.errors import NotConfirmedError, UsageError
from tkperf.model.results import DeviceInfo, format_gb
from tkperf.untrusted import for_terminal

log = logging.getLogger("tkperf")
progress = logging.getLogger("tkperf.progress")
debug_log = logging.getLogger("tkperf.debug")
_renderer: Optional[shown._Renderer] = None


class Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting, so every
    bad option gets the same one-line error and exit code; a typo gets the
    nearest option or choice of the command it was given to
    (:mod:`tkperf.cli.typos`), and hidden commands are not offered."""

    _argv: Sequence[str] = ()

    def parse_known_args(self, args=None, namespace=None):
        self._argv = tuple(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(typos.explain(self, message, self._argv))


def add_report_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--report-format", default="rst,html,pdf",
                   help="formats of the report written at the end (default rst,html,pdf)")
    p.add_argument("--no-report", action="store_true", help="write no report at the end")
    add_png_option(p)


def add_png_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--png", action="store_true",
                   help="draw the plots as PNG files too, and have the reST refer to them (for reST "
                        "viewers that show no SVG); the HTML and PDF keep the vector plots")


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


def setup_logging(log_path: Optional[str], quiet: bool, debug: bool = False) -> None:
    """The run's log file (``log_path``) and the progress on stderr: an
    in-place display on a terminal, timestamped lines elsewhere, nothing
    with ``quiet``.  ``debug`` keeps the ``tkperf.debug`` detail (the log
    file, and stderr when it shows plain lines)."""
    global _renderer
    log.setLevel(logging.DEBUG)
    close_logging()
    debug_log.setLevel(logging.DEBUG if debug else logging.INFO)
    if log_path:
        fh = logging.FileHandler(log_path)
        fh.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        log.addHandler(fh)
    renderer = shown.choose(sys.stderr, quiet)
    if renderer is not None:
        progress.addHandler(renderer)
        if debug and isinstance(renderer, shown.PlainRenderer):
            debug_log.addHandler(renderer)
        renderer.start()
        _renderer = renderer


def stop_progress() -> None:
    """End the in-place display (before printing the summary); idempotent."""
    global _renderer
    renderer, _renderer = _renderer, None
    if renderer is not None:
        renderer.stop()


def print_report(result) -> None:
    for w in result.warnings:
        print(f"tkperf: warning: {w}", file=sys.stderr)
    for path in result.paths:
        print(f"report: {path}")


def close_logging() -> None:
    stop_progress()
    for logger in (log, progress, debug_log):
        for h in list(logger.handlers):
            if not isinstance(h, logging.NullHandler):
                logger.removeHandler(h)
                h.close()


