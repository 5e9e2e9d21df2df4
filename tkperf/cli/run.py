"""``tkperf ssd run``, ``tkperf hdd run`` and ``tkperf resume``: the
command line turned into a request (:mod:`tkperf.cli.runargs`), handed to
the engine's front door (:mod:`tkperf.engine.run`), and what it tells and
returns turned into printed lines (:class:`Printed`) and the exit code."""
from __future__ import annotations

import argparse
import os
import stat
import sys
from collections import Counter
from typing import TYPE_CHECKING, Optional, Sequence

from tkperf.cli import common, runargs, shorthelp, typos
from tkperf.cli import progress as shown
from tkperf.cli.runargs import add_run_options, add_unattended_options, epilog
from tkperf.durations import micro_unit
from tkperf.engine import run as engine
from tkperf.engine.listener import RunOutcome, SeveralEnded
from tkperf.engine.opening import DryRun, can_write
from tkperf.engine.opening import command_words as _command
from tkperf.engine.request import ResumeRequest
from tkperf.errors import EXIT_REFUSED, TargetError, UsageError
from tkperf.kit.options import parse_report_formats
from tkperf.model.results import DeviceInfo, RunResult
from tkperf.report import summary
from tkperf.target.identity import split_target

if TYPE_CHECKING:  # the report's documents are built by the engine, not loaded to parse a command
    from tkperf.render.documents import ReportResult

PROFILES = ("ssd", "hdd")


def cmd_run(args: argparse.Namespace) -> int:
    profile = args.command
    if args.action != "run":
        raise UsageError(f"say what to do: tkperf {profile} run DEVICE")
    for device in args.device:
        full_path(device, args.size)
        if not args.dry_run:
            need_root_for(device, [profile, "run", *args.device, "..."])
    if args.request is not None:  # a child of a run of several targets (docs/parallel.rst)
        return shown_outcome(engine.run_child(args.request, profile, tuple(args.device), Printed()))
    return shown_outcome(engine.run(runargs.request_from_args(args, profile), Printed()))


# --- mistakes a newcomer makes, answered with what to do instead (see :mod:`tkperf.cli.advice`) ---

def habit(argv: Sequence[str]) -> None:
    """A UsageError for ``tkperf ssd DEVICE ...`` and TKperf 2's ``tkperf ssd
    NAME DEVICE ...``, naming the command that does it here."""
    if len(argv) < 2 or argv[0] not in PROFILES or argv[1] == "run" or argv[1].startswith("-"):
        return
    profile, rest = argv[0], list(argv[1:])
    if typos.nearest(rest[0], ["run"]) and not rest[0].startswith("/"):  # a typo of the action: runn, rnu
        raise UsageError(f"tkperf {profile}: invalid action {rest[0]!r}; did you mean run? "
                         f"tkperf {_command([profile, 'run', *rest[1:]])}")
    if len(rest) >= 2 and not rest[0].startswith("/") and rest[1].startswith("/dev/"):
        # TKperf 2: tkperf ssd TESTNAME DEVICE [options]; the test name is --name now
        suggestion = [profile, "run", rest[1], "--name", rest[0], *rest[2:]]
    else:
        suggestion = [profile, "run", *rest]
    raise UsageError(f"tkperf {profile} needs an action: tkperf {_command(suggestion)}")


def full_path(path: str, size: Optional[int]) -> None:
    """A TargetError (the exit code of any missing target) for a device named
    without ``/dev/`` (``nvme0n1``), when no such file is here to be a file
    target and ``/dev/NAME`` exists."""
    if size is not None or "/" in path or split_target(path) is not None or os.path.lexists(path):
        return
    dev = os.path.join("/dev", path)
    if os.path.exists(dev):
        raise TargetError(f"{path}: no such file here; the device is {dev} (give the full path)")


def need_root_for(path: str, words: Sequence[str]) -> None:
    """:func:`need_root` for a target named on the command line, before it is
    opened (several targets: before any run starts)."""
    if split_target(path) is not None or can_write(path):
        return
    try:
        is_block = stat.S_ISBLK(os.stat(path).st_mode)
    except OSError:
        return  # not there: the target's own error says so
    if is_block:
        raise UsageError(f"{path}: testing a block device needs root: run as root or with sudo "
                         f"(sudo tkperf {_command(words)})")


def cmd_resume(args: argparse.Namespace) -> int:
    asked = ResumeRequest(
        report_formats=parse_report_formats(args.report_format), no_report=args.no_report,
        png=args.png, force=args.force, yes=args.yes, quiet=args.quiet, json_summary=args.json_summary,
        mail=runargs.mail_of(args), remote=runargs.settings_of(args))
    return shown_outcome(engine.resume(asked, args.result, Printed()))


class Printed:
    """The engine's listener on the command line: lines on stdout, warnings
    on stderr, the progress display and the prompt on the terminal."""

    def warning(self, text: str) -> None:
        print(f"tkperf: warning: {text}", file=sys.stderr)

    def confirm(self, dev: DeviceInfo, assume_yes: bool) -> None:
        common.confirm(dev, assume_yes)

    def show_progress(self, quiet: bool, debug: bool) -> None:
        shown.setup_logging(None, quiet, debug)

    def stop_progress(self) -> None:
        shown.stop_progress()

    def report_written(self, result: ReportResult) -> None:
        common.print_report(result)

    def run_ended(self, run: RunResult, xml_path: str) -> None:
        print("\n".join(summary.lines(run, micro_unit(sys.stdout))))
        print(f"results: {xml_path}")

    def combined(self, quiet: bool) -> shown.CombinedPlain:
        return shown.choose_combined(sys.stderr, sys.stdout, quiet)

    def several_ended(self, ended: SeveralEnded) -> None:
        outcomes = ended.outcomes
        counts = Counter(o.status for o in outcomes)
        print(f"{len(outcomes)} targets: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
        width = max(len(o.target.name) for o in outcomes)
        for o in outcomes:
            code = "-" if o.exit_code is None else str(o.exit_code)
            why = f"  ({o.error})" if o.error else ""
            print(f"  {o.target.name:<{width}}  {o.target.device}  {o.status}, exit {code}, "
                  f"{o.wall_s:.0f} s: {o.target.xml_path}{why}")
        print(f"comparison: {', '.join(ended.reports) if ended.reports else '-'} ({ended.note})")
        print(f"exit code {ended.worst}" + (" (the worst of the targets')" if ended.worst else ""))


def shown_outcome(outcome: RunOutcome) -> int:
    """What the outcome says that was not told while the run went; its exit code."""
    if outcome.already_complete and outcome.run is not None:
        print("\n".join(summary.lines(outcome.run, micro_unit(sys.stdout))))
        print(f"results: {outcome.xml_path} (already complete, nothing to resume)")
    for dry in outcome.dry_runs:
        _print_dry_run(dry)
    return outcome.exit_code


def _print_dry_run(dry: DryRun) -> None:
    """The summary (time per test, total, the verdict this target would get,
    what only the run can tell), then the job files with ``--jobs``."""
    if dry.target:  # one of several targets
        print(f"# ===== {dry.target}: run {dry.name} in {dry.outdir}")
    for p in dry.refusals:  # first: what decides whether the run would start at all
        print(f"# {'forced past' if dry.forced else 'a real run would refuse'}: {p}"
              + ("" if dry.forced else f" (exit {EXIT_REFUSED}; --force runs it anyway)"))
    print("\n".join(dry.summary))
    print(f"# verdict on this target: {dry.verdict}")
    for d in dry.deviations:
        print(f"#   - {d}")
    print("# known only after the run: " + "; ".join(dry.unknown))
    for n in dry.needs:
        print(f"# note: {n}")
    if dry.job_files is not None:
        print("\n".join(["#", "# fio job files", *dry.job_files]))
    else:
        print("# the fio job files: add --jobs")


def register(sub) -> None:
    for profile in ("ssd", "hdd"):
        p = sub.add_parser(profile, help=f"test an {profile.upper()}", allow_abbrev=False)
        psub = p.add_subparsers(dest="action", metavar="ACTION")
        run = psub.add_parser("run", help="run the tests and write XML, log and summary",
                              description="Run the tests on each device and write XML, log, summary and report.",
                              usage="%(prog)s [options] DEVICE [DEVICE ...]",
                              allow_abbrev=False, epilog=epilog(profile), add_help=False,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
        shorthelp.add_help_options(run)
        add_run_options(run, profile)
        p.set_defaults(func=cmd_run)
    res = sub.add_parser("resume", help="continue an interrupted run from its result file",
                         allow_abbrev=False)
    res.add_argument("result", help="the interrupted run's NAME.xml")
    res.add_argument("--yes", "-ft", dest="yes", action="store_true", help="do not ask for confirmation")
    res.add_argument("--force", action="store_true",
                     help="as for ssd run; also resume on a device that cannot be matched to the saved "
                          "run's (serial, WWN, backing file), saying so in one line")
    res.add_argument("--quiet", "-q", action="store_true", help="no progress lines on stderr")
    runargs.add_report_options(res)
    add_unattended_options(res)
    runargs.add_remote_options(res)
    res.set_defaults(func=cmd_resume)
