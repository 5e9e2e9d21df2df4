"""Command line: the one place that prints errors and picks exit codes.

    tkperf ssd run DEVICE [options]     the PTS on an SSD
    tkperf hdd run DEVICE [options]     HDD tests (zones, IOPS, latency) without purge and WIPC
    tkperf demo                         quick run on a throw-away loop device
    tkperf resume RESULT.xml            continue an interrupted run
    tkperf show RESULT.xml [--json]     the summary again, from the file
    tkperf report RESULT.xml            HTML/PDF report rebuilt from the file
    tkperf export RESULT.xml --csv DIR  rounds, workloads and intervals as CSV
    tkperf compare A.xml B.xml ...      several drives side by side
    tkperf tests [--json]               the test types, built in and installed
    tkperf check RESULT.xml --baseline BASE.xml   regression check (exit 1 on a regression)
    tkperf history FILES|DIR [--outdir D]   a device's results over time, with change points
    tkperf info DEVICE [--json]         everything known about a device (read-only)
    tkperf import OLD.xml [-o NEW.xml]  convert a result file of the original TKperf
    tkperf capture DEVICE --duration D --name N   an application's block I/O: streams and steps (RWSW)
    tkperf simdrive up|down|stats       an emulated SSD with a write cliff (a loop device)
    tkperf server [HOST --start]        the fio server a test host needs (remote targets)
    tkperf help [TOPIC] [--man]         a document, or the man page tkperf(1)
    tkperf completion bash|zsh          the shell completion script

Each command is one module of this package with ``register(subparsers)``
and its ``cmd_*`` function; :func:`main` turns every error into one line
on stderr and an exit code (``tkperf help exit-codes``).
"""
from __future__ import annotations

import argparse
import errno
import logging
import os
import select
import sys
import traceback
from typing import Optional, Sequence

from tkperf import __version__
from tkperf.cli import (
    advice,
    capture,
    check,
    common,
    compare,
    demo,
    export,
    history,
    importcmd,
    info,
    manual,
    remote,
    report,
    run,
    show,
    simdrive,
    tests,
)
from tkperf.errors import EXIT_OK, EXIT_OUTPUT, EXIT_SIGPIPE, Interrupted, TkperfError, exit_code_of
from tkperf.store.legacy import tkperf2_device
from tkperf.untrusted import TerminalStream

log = logging.getLogger("tkperf")

COMMANDS = (run, demo, report, compare, show, export, check, history, tests, info, importcmd, capture, remote,
            simdrive, manual)
#: The commands that read result files, original TKperf ones too: they take ``--capacity``.
READERS = ("show", "report", "import", "compare", "check")


def build_parser() -> argparse.ArgumentParser:
    parser = common.Parser(prog="tkperf", allow_abbrev=False,
                           description="SNIA PTS performance tests for SSDs and HDDs, driven by fio.",
                           epilog="Documents: tkperf help [TOPIC]; the manual: man tkperf (tkperf help --man); "
                                  "exit codes: tkperf help exit-codes.")
    parser.add_argument("--version", action="version", version=f"tkperf {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=common.Parser)
    for module in COMMANDS:
        module.register(sub)
    for name in READERS:
        sub.choices[name].add_argument(
            "--capacity", metavar="SIZE",
            help="the device's capacity, for an original TKperf file that does not record it (a "
                 "description file as devinfo): e.g. 480g or 1.6t, decimal as drives are sold "
                 "('tkperf help tkperf2')")
    parser.set_defaults(root_parser=parser)  # help --man and completion read the whole tree
    parser.set_defaults(main=main)  # demo runs its commands through main, below which it sits
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command of ``argv``; the exit code.  Standard output that goes
    away (a pipe into ``head``) ends the command quietly with 141, as a shell
    reports SIGPIPE; output that cannot be written (a full disk) is one line
    and exit 8.  Everything printed passes :class:`~tkperf.untrusted.TerminalStream`:
    no string from a file or a device reaches the terminal as a control sequence."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = TerminalStream(sys.stdout), TerminalStream(sys.stderr)
    try:
        code = _command(argv)
        _flush(sys.stdout)
    except BrokenPipeError:
        _discard_stdout()
        return EXIT_SIGPIPE
    except OSError as exc:  # only standard output's flush gets here
        _discard_stdout()
        _say(f"tkperf: error: cannot write to standard output: {exc.strerror or exc}")
        return EXIT_OUTPUT
    finally:
        sys.stdout, sys.stderr = saved
    return code


def _flush(stream: object) -> None:
    flush = getattr(stream, "flush", None)
    if flush is not None:
        flush()


def _discard_stdout() -> None:
    """What is still buffered for standard output goes nowhere, so that
    Python's own flush at exit cannot fail again with a traceback."""
    try:
        fd = sys.stdout.fileno()
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, fd)
        finally:
            os.close(devnull)
    except (AttributeError, OSError, ValueError):
        pass  # not a real file (a test's capture): nothing is flushed at exit


def _say(line: str) -> None:
    """One line on stderr; a stderr that is gone or full is not an error of its own."""
    try:
        print(line, file=sys.stderr)
        _flush(sys.stderr)
    except OSError:
        pass


def _output_gone(exc: BaseException) -> bool:
    """A broken pipe of standard output (not of a program or a test host)."""
    if not (isinstance(exc, OSError) and exc.errno == errno.EPIPE):
        return False
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(ev & select.POLLERR for _, ev in poller.poll(0))


def _command(argv: Optional[Sequence[str]]) -> int:
    logging.raiseExceptions = False  # a full disk must not print logging tracebacks
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        advice.habit(argv)
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help and --version
            return int(exc.code or 0)
        func = getattr(args, "func", None)
        if func is None:
            parser.print_help()
            return EXIT_OK if not argv else 2
        given = getattr(args, "capacity", None)
        with tkperf2_device.given_capacity(tkperf2_device.parse_capacity(given) if given is not None else None):
            return func(args)
    except Interrupted as exc:
        log.error("%s", exc)
        _say(f"tkperf: stopped: {exc}")
        resume = getattr(exc, "resume_command", "")
        if resume:
            _say(f"tkperf: continue the run with: {resume}")
        return exit_code_of(exc)
    except TkperfError as exc:
        log.error("%s", exc)
        stderr = getattr(exc, "stderr", "")
        if stderr:
            log.error("stderr of the failed program:\n%s", stderr)
        _say(f"tkperf: error: {exc}")
        return exit_code_of(exc)
    except KeyboardInterrupt as exc:
        _say("tkperf: interrupted")
        return exit_code_of(exc)
    except OSError as exc:
        if _output_gone(exc):
            raise BrokenPipeError(errno.EPIPE, "standard output closed") from None
        if exc.errno == errno.ENOSPC:  # a full disk is an output failure, wherever it showed
            log.error("%s", exc)
            where = exc.filename if exc.filename is not None else "to standard output"
            _say(f"tkperf: error: cannot write {where}: {exc.strerror}")
            return EXIT_OUTPUT
        return _internal(exc)
    except Exception as exc:  # noqa: BLE001 - the one place that turns surprises into a line
        return _internal(exc)
    finally:
        common.close_logging()


def _internal(exc: Exception) -> int:
    log.error("unexpected error:\n%s", traceback.format_exc())
    _say(f"tkperf: internal error: {type(exc).__name__}: {exc} (details in the run's log)")
    return exit_code_of(exc)
