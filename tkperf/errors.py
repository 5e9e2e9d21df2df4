"""Errors tkperf raises and the exit codes the CLI maps them to.

Nothing below :func:`tkperf.cli.main` prints an error or exits; it raises a
:class:`TkperfError` subclass and the CLI turns it into one line on stderr and
the exit code named here.  The table is documented in docs/exit-codes.rst.
"""
from __future__ import annotations

from typing import Optional

EXIT_OK = 0
EXIT_REGRESSION = 1      # tkperf check: a figure is worse than the baseline beyond the tolerance
EXIT_USAGE = 2           # bad option or argument
EXIT_REFUSED = 3         # the target is unsafe to write (mounted, in use, holds /)
EXIT_TARGET = 4          # the target does not exist, is the wrong kind, or is too small
EXIT_TOOL = 5            # a required program is missing or too old
EXIT_FIO = 6             # fio failed, hung or reported an I/O error
EXIT_RESULT_FILE = 7     # a result file is unreadable, corrupt, foreign or too new
EXIT_OUTPUT = 8          # results or reports cannot be written
EXIT_RESUME = 9          # --resume does not match the saved run
EXIT_LOCKED = 10         # another tkperf run holds the device
EXIT_NOT_CONFIRMED = 11  # the user declined, or no terminal to ask and no --yes
EXIT_NOT_COMPARABLE = 12  # tkperf check: result and baseline do not measure the same thing
EXIT_REMOTE = 13         # a test host: SSH login refused or lost, no fio server, another fio version
EXIT_NO_RESULT = 14      # the command's job produced nothing it was asked for, though nothing said why
EXIT_INTERNAL = 70       # unexpected error (traceback in the run's log); EX_SOFTWARE of sysexits.h
EXIT_SIGHUP = 129
EXIT_SIGINT = 130
EXIT_SIGTERM = 143
EXIT_SIGPIPE = 141       # standard output went away (``tkperf show X | head``), as a shell reports SIGPIPE


#: Each exit code with its meaning in a few words: the man page's EXIT STATUS
#: section and ``tkperf help exit-codes`` (docs/exit-codes.rst has the long form;
#: a test keeps the two lists the same).
EXIT_CODES = {
    EXIT_OK: "done (a test without steady state is still a result: the summary says so)",
    EXIT_REGRESSION: "tkperf check: a figure got worse than the baseline beyond the tolerance",
    EXIT_USAGE: "bad option or argument",
    EXIT_REFUSED: "the target looks in use (mounted, holders, swap, RAID/LVM, holds /); --force overrides",
    EXIT_TARGET: "the target does not exist, is the wrong kind or too small, or its state forbids the purge",
    EXIT_TOOL: ("a required program (or the kernel's device-mapper) is missing or too old, or a program "
                "other than fio failed"),
    EXIT_FIO: "fio failed, printed invalid JSON or impossible figures, reported an I/O error or hung",
    EXIT_RESULT_FILE: ("a result file is missing, unreadable, corrupt, foreign or of a newer format, "
                       "or holds a figure that is not a finite number in its range"),
    EXIT_OUTPUT: "results or reports cannot be written",
    EXIT_RESUME: "--resume does not match the saved run",
    EXIT_LOCKED: "another tkperf run holds the device",
    EXIT_NOT_CONFIRMED: "not confirmed, or no terminal to ask on and no --yes",
    EXIT_NOT_COMPARABLE: ("tkperf check: the result and the baseline do not measure the same thing, "
                          "or a figure is not a number and cannot be judged"),
    EXIT_REMOTE: "a test host cannot be used (SSH, fio server, versions) or its session ended",
    EXIT_NO_RESULT: ("nothing that was asked for was produced, though no error said why (a target's run "
                     "that exited 0 without a result)"),
    EXIT_INTERNAL: "unexpected error; the traceback is in the run's log",
    EXIT_SIGHUP: "stopped by SIGHUP (terminal or SSH session gone)",
    EXIT_SIGINT: "stopped by SIGINT (Ctrl-C)",
    EXIT_SIGPIPE: "standard output went away (tkperf show X | head): ended quietly",
    EXIT_SIGTERM: "stopped by SIGTERM",
}

class TkperfError(Exception):
    """Base class: ``str(err)`` is the one-line message shown to the user."""

    exit_code = EXIT_INTERNAL


class UsageError(TkperfError):
    exit_code = EXIT_USAGE


class RefusedError(TkperfError):
    exit_code = EXIT_REFUSED


class TargetError(TkperfError):
    exit_code = EXIT_TARGET


class ToolError(TkperfError):
    exit_code = EXIT_TOOL


class ToolTimeout(ToolError):
    """A program tkperf ran did not finish within its time and was killed
    (:func:`tkperf.programs.run`): told by its class, not its words."""


class FioError(TkperfError):
    """fio failed; ``stderr`` carries what fio printed."""

    exit_code = EXIT_FIO

    def __init__(self, message: str, stderr: str = "") -> None:
        super().__init__(message)
        self.stderr = stderr


class ResultFileError(TkperfError):
    exit_code = EXIT_RESULT_FILE


class OutputError(TkperfError):
    exit_code = EXIT_OUTPUT


class ResumeError(TkperfError):
    exit_code = EXIT_RESUME


class LockedError(TkperfError):
    exit_code = EXIT_LOCKED


class NotConfirmedError(TkperfError):
    exit_code = EXIT_NOT_CONFIRMED


class NotComparableError(TkperfError):
    """``tkperf check``: the result and the baseline cannot be compared
    (other tests, block sizes, device class or capacity); the message says which."""

    exit_code = EXIT_NOT_COMPARABLE


class RemoteError(TkperfError):
    """A remote test host cannot be used: SSH cannot log in or the connection
    dropped, no fio server answers, or its fio is another version."""

    exit_code = EXIT_REMOTE


class Interrupted(BaseException):
    """A signal stopped the run; ``signum`` names it.

    A BaseException, like KeyboardInterrupt, so that no ``except Exception``
    on the way (logging handlers swallow those) can lose the signal."""

    def __init__(self, signum: int, name: str) -> None:
        super().__init__(f"interrupted by {name}")
        self.signum = signum
        self.exit_code = 128 + signum


def exit_code_of(exc: Optional[BaseException]) -> int:
    """The exit code the CLI gives for ``exc`` (``None``: success).

    The one mapping from exceptions to exit codes; :func:`tkperf.cli.main`
    and what reports a run's end (``--json-summary``, ``--mail``) use it."""
    if exc is None:
        return EXIT_OK
    if isinstance(exc, (Interrupted, TkperfError)):
        return exc.exit_code
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_SIGINT
    return EXIT_INTERNAL
