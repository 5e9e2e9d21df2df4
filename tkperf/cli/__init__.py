"""Command line: the one place that prints errors and picks exit codes.

    tkperf ssd run DEVICE [options]     the PTS on an SSD
    tkperf hdd run DEVICE [options]     HDD tests (zones, IOPS, latency) without purge and WIPC
    tkperf demo                         quick run on a throw-away loop device
    tkperf resume RESULT.xml            continue an interrupted run
    tkperf show RESULT.xml [--json]     the summary again, from the file
    tkperf report RESULT.xml            HTML/PDF report rebuilt from the file
    tkperf compare A.xml B.xml ...      several drives side by side
    tkperf tests [--json]               the test types, built in and installed
    tkperf check RESULT.xml --baseline BASE.xml   regression check (exit 1 on a regression)
    tkperf info DEVICE [--json]         everything known about a device (read-only)
    tkperf import OLD.xml [-o NEW.xml]  convert a result file of the original TKperf
    tkperf server [HOST --start]        the fio server a test host needs (remote targets)

Each command is one module of this package with ``register(subparsers)``
and its ``cmd_*`` function; :func:`main` turns every error into one line
on stderr and an exit code (docs/exit-codes.rst).
"""
from __future__ import annotations

import argparse
import logging
import sys
import traceback
from typing import Optional, Sequence

from tkperf import __version__
from tkperf.cli import check, common, compare, demo, importcmd, info, remote, report, run, show, tests
from tkperf.errors import EXIT_OK, Interrupted, TkperfError, exit_code_of

log = logging.getLogger("tkperf")

COMMANDS = (run, demo, report, compare, show, check, tests, info, importcmd, remote)


def build_parser() -> argparse.ArgumentParser:
    parser = common.Parser(prog="tkperf", allow_abbrev=False,
                           description="SNIA PTS performance tests for SSDs and HDDs, driven by fio.",
                           epilog="Exit codes are listed in docs/exit-codes.rst.")
    parser.add_argument("--version", action="version", version=f"tkperf {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=common.Parser)
    for module in COMMANDS:
        module.register(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    logging.raiseExceptions = False  # a full disk must not print logging tracebacks
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help and --version
            return int(exc.code or 0)
        func = getattr(args, "func", None)
        if func is None:
            parser.print_help()
            return EXIT_OK if not argv else 2
        return func(args)
    except Interrupted as exc:
        log.error("%s", exc)
        print(f"tkperf: stopped: {exc}", file=sys.stderr)
        return exit_code_of(exc)
    except TkperfError as exc:
        log.error("%s", exc)
        stderr = getattr(exc, "stderr", "")
        if stderr:
            log.error("stderr of the failed program:\n%s", stderr)
        print(f"tkperf: error: {exc}", file=sys.stderr)
        return exit_code_of(exc)
    except KeyboardInterrupt as exc:
        print("tkperf: interrupted", file=sys.stderr)
        return exit_code_of(exc)
    except Exception as exc:  # noqa: BLE001 - the one place that turns surprises into a line
        log.error("unexpected error:\n%s", traceback.format_exc())
        print(f"tkperf: internal error: {type(exc).__name__}: {exc} (details in the run's log)",
              file=sys.stderr)
        return exit_code_of(exc)
    finally:
        common.close_logging()
