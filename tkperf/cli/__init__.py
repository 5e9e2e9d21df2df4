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
and its ``cmd_*`` function, named with its line of help in :data:`ROUTES`;
only the module of the command given builds its parser.  :func:`main`
turns every error into one line on stderr and an exit code (``tkperf help
exit-codes``).
"""
from __future__ import annotations

import argparse
import contextlib
import errno
import logging
import os
import sys
from typing import TYPE_CHECKING, Optional, Sequence

from tkperf import __version__
from tkperf.errors import EXIT_OK, EXIT_OUTPUT, EXIT_SIGPIPE, Interrupted, TkperfError, UsageError, exit_code_of
from tkperf.untrusted import TerminalStream

if TYPE_CHECKING:  # ``--version`` loads no more than it needs: these when they are used
    from types import ModuleType
    from typing import ContextManager

log = logging.getLogger("tkperf")


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
        from tkperf.cli import typos  # only a mistake needs it

        raise UsageError(typos.explain(self, message, self._argv))


#: The routing table: every command's name, the module of this package that
#: builds its parser and runs it, and its one line of help (None: a hidden
#: command).  Only the module of the command given is imported and builds its
#: parser; each other command is its name and its line, all that argparse's
#: list of commands needs of it (``tkperf --version`` imports none of them).
ROUTES = (
    ("ssd", "run", "test an SSD"),
    ("hdd", "run", "test an HDD"),
    ("resume", "run", "continue an interrupted run from its result file"),
    ("demo", "demo", "quick run of the default tests on a throw-away emulated SSD"),
    ("report", "report", "build the report (reST, HTML, PDF) from a result file"),
    ("compare", "compare", "compare 2 to 8 result files side by side"),
    ("show", "show", "print the summary of a result file"),
    ("export", "export", "write a result file's rounds, workloads and intervals as CSV"),
    ("check", "check", "check a result against a baseline (exit 1 on a regression)"),
    ("history", "history", "every result of a device over time: trends and change points"),
    ("tests", "tests", "list the test types (built in and installed plug-ins)"),
    ("info", "info", "everything known about a device (read-only)"),
    ("import", "importcmd", "convert a result file of the original TKperf to a tkperf result file"),
    ("capture", "capture", "record an application's block I/O (read-only, root) or import a blktrace capture: "
                           "its IO streams and steps (SNIA RWSW)"),
    ("server", "remote", "print, or start over SSH, the fio server a test host needs"),
    ("agent", "remote", None),
    ("simdrive", "simdrive", "an emulated SSD (FTL model with a write cliff) as a loop device"),
    ("help", "manual", "show a document (tkperf help TOPIC) or the man page (--man)"),
    ("completion", "manual", "print the shell completion script for bash or zsh"),
)
#: The command modules, each once, in the order of :data:`ROUTES`.
COMMANDS = tuple(dict.fromkeys(module for _, module, _ in ROUTES))


def command_module(name: str) -> ModuleType:
    """The command module ``name`` of :data:`COMMANDS`, imported now (an
    import statement each, so the layer checks see them)."""
    if name == "run":
        from tkperf.cli import run
        return run
    if name == "demo":
        from tkperf.cli import demo
        return demo
    if name == "report":
        from tkperf.cli import report
        return report
    if name == "compare":
        from tkperf.cli import compare
        return compare
    if name == "show":
        from tkperf.cli import show
        return show
    if name == "export":
        from tkperf.cli import export
        return export
    if name == "check":
        from tkperf.cli import check
        return check
    if name == "history":
        from tkperf.cli import history
        return history
    if name == "tests":
        from tkperf.cli import tests
        return tests
    if name == "info":
        from tkperf.cli import info
        return info
    if name == "importcmd":
        from tkperf.cli import importcmd
        return importcmd
    if name == "capture":
        from tkperf.cli import capture
        return capture
    if name == "remote":
        from tkperf.cli import remote
        return remote
    if name == "simdrive":
        from tkperf.cli import simdrive
        return simdrive
    if name == "manual":
        from tkperf.cli import manual
        return manual
    raise ValueError(f"no command module {name!r}")
#: The commands that read result files, original TKperf ones too: they take ``--capacity``.
READERS = ("show", "report", "import", "compare", "check")


def build_parser(command: Optional[str] = None) -> argparse.ArgumentParser:
    """The whole command line's parser; with ``command``, one whose other
    commands are only their names and help (:data:`ROUTES`): it parses
    that command and says the same of every other ('': no command's module
    at all, for ``--version``, ``--help`` and a word that is no command)."""
    parser = Parser(prog="tkperf", allow_abbrev=False,
                           description="SNIA PTS performance tests for SSDs and HDDs, driven by fio.",
                           epilog="Documents: tkperf help [TOPIC]; the manual: man tkperf (tkperf help --man); "
                                  "exit codes: tkperf help exit-codes.")
    parser.add_argument("--version", action="version", version=f"tkperf {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    chosen = {module for name, module, _ in ROUTES if command in (None, name)}
    for name, module, help_text in ROUTES:
        if module not in chosen and help_text is None:
            sub.add_parser(name, allow_abbrev=False)  # hidden: no line of help
        elif module not in chosen:
            sub.add_parser(name, help=help_text, allow_abbrev=False)
        elif name not in sub.choices:
            command_module(module).register(sub)
    for name in (n for n, module, _ in ROUTES if n in READERS and module in chosen):
        sub.choices[name].add_argument(
            "--capacity", metavar="SIZE",
            help="the device's capacity, for an original TKperf file that does not record it (a "
                 "description file as devinfo): e.g. 480g or 1.6t, decimal as drives are sold "
                 "('tkperf help tkperf2')")
    parser.set_defaults(whole_parser=build_parser)  # help --man and completion read the whole tree
    parser.set_defaults(main=main)  # demo runs its commands through main, below which it sits
    return parser


def route(argv: Sequence[str]) -> Optional[str]:
    """The command ``argv`` names (its first word), or None: no command, or
    one tkperf does not have (the whole parser says so)."""
    word = argv[0] if argv else None
    return word if any(word == name for name, _, _ in ROUTES) else None


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
    import select

    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(ev & select.POLLERR for _, ev in poller.poll(0))


def _signals_raise() -> ContextManager[None]:
    """SIGINT, SIGTERM and SIGHUP raise Interrupted while a command runs, so
    that every command ends through its clean-up (a temporary file a signal
    arrives at is removed, ``programs.signals_held``) and exits with the
    signal's code.  Signal handlers belong to the main thread: a command run
    in another thread (a test's) keeps the handlers it has."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return contextlib.nullcontext()
    from tkperf.target import guard  # not at import: ``--version`` loads no more than it needs

    return guard.signals_raise()


def _command(argv: Optional[Sequence[str]]) -> int:
    logging.raiseExceptions = False  # a full disk must not print logging tracebacks
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        parser = _parser_for(argv)
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help and --version
            return int(exc.code or 0)
        func = getattr(args, "func", None)
        if func is None:
            parser.print_help()
            return EXIT_OK if not argv else 2
        given = getattr(args, "capacity", None)
        with _signals_raise():
            if given is None:
                return func(args)
            from tkperf.store.legacy import tkperf2_device

            with tkperf2_device.given_capacity(tkperf2_device.parse_capacity(given)):
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
        _close_logging()


def _parser_for(argv: Sequence[str]) -> argparse.ArgumentParser:
    """The parser of the command ``argv`` names (no command given: the
    commands' names and lines alone); a run's habits said first."""
    if argv and argv[0] in ("ssd", "hdd"):
        command_module("run").habit(argv)
    return build_parser(route(argv) or "")


def _close_logging() -> None:
    shown = sys.modules.get("tkperf.cli.progress")  # loaded by a command that logged
    if shown is not None:
        shown.close_logging()


def _internal(exc: Exception) -> int:
    import traceback

    log.error("unexpected error:\n%s", traceback.format_exc())
    _say(f"tkperf: internal error: {type(exc).__name__}: {exc} (details in the run's log)")
    return exit_code_of(exc)
