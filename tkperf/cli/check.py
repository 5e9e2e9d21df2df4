"""``tkperf check RESULT.xml --baseline BASE.xml [BASE.xml ...]``: a regression check for nightly QA.

Compares the headline figures of every test the files hold (docs/check.rst)
and exits 0 when every figure is within the tolerance or its change is
noise (Welch's t-test over the window values with one baseline, a
prediction interval with several; Holm's correction over the night's
figures), 1 (``EXIT_REGRESSION``) when one got worse by more and the test
says it is no noise, 12 when the
files do not measure the same thing.  Reads the files and the test types' headline
figures only; never imports matplotlib.  The text it prints is
:mod:`tkperf.cli.checktext`'s, the files it writes for machines (``--json``,
``--junit``, ``--summary``) :mod:`tkperf.cli.checkfiles`'s.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import os
import re
from typing import List, Optional, Sequence

from tkperf import store, strictjson
from tkperf.cli import checkfiles
from tkperf.cli.checkfiles import add_to_summary, as_dict, junit_xml, night_text, summary_section
from tkperf.cli.checktext import extreme_lines, night_lines, summary_line, table, warning_lines
from tkperf.errors import EXIT_OK, EXIT_REGRESSION, NotComparableError, ResultFileError, UsageError
from tkperf.model import noise
from tkperf.model.results import RunResult
from tkperf.model.shown import cut
from tkperf.report import checked
from tkperf.verdict import comparable, persisting, regression
from tkperf.verdict.persisting import Persisting
from tkperf.verdict.regression import Comparison

DEFAULT_TOLERANCE = "10%"
MAX_TOLERANCE_PCT = 1000.0


def parse_tolerance(text: str) -> float:
    """``10%`` or ``10``: percent, 0 to 1000."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*%?\s*", text)
    value = float(m.group(1)) if m else math.nan
    if not 0 <= value <= MAX_TOLERANCE_PCT:
        raise UsageError(f"--tolerance {text!r}: give a percentage from 0 to {MAX_TOLERANCE_PCT:g}, "
                         f"as 10% or 10")
    return value


def check_metrics(wanted: Sequence[str], known: Sequence[str]) -> None:
    """A UsageError naming the known figure keys when a ``--metric`` is not one."""
    unknown = [m for m in wanted if m not in known]
    if unknown:
        raise UsageError(f"--metric {','.join(unknown)}: not a figure of both files; "
                         f"known: {', '.join(known) or 'none'}")


def parse_alpha(text: str) -> float:
    """The test's level: a number above 0 and at most 1."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= 1:
        raise UsageError(f"--alpha {text!r}: give the noise test's level, a number above 0 and at most 1 "
                         f"(default {noise.ALPHA:g}; 1 turns the test off)")
    return value


def cmd_check(args: argparse.Namespace) -> int:
    tolerance, alpha = parse_tolerance(args.tolerance), parse_alpha(args.alpha)
    result = checked.load(args.result)
    if args.not_judged is not None:
        if args.baseline:
            raise UsageError("--not-judged: a night that is not judged has no --baseline; give one or the other")
        return not_judged(args, result)
    if not args.baseline:
        raise UsageError("give --baseline BASE.xml (or --not-judged REASON for a night that is not judged)")
    baselines = [checked.load(path) for path in args.baseline]
    drives = drive_lines(args.result, result, args.baseline, baselines, args.allow_other_drive)
    for path, baseline in zip(args.baseline, baselines):
        reasons = comparable.not_comparable(result, baseline)
        if reasons:
            raise NotComparableError(f"{args.result} and {path} are not comparable: " + "; ".join(reasons))
    metrics = args.metric or []
    known = [k for k in regression.figure_keys(result, baselines[0])
             if all(k in regression.figure_keys(result, b) for b in baselines[1:])]
    check_metrics(metrics, known)
    comparison = regression.compare(result, baselines, tolerance, metrics, alpha, args.correction)
    unjudged = regression.unjudged(comparison)
    if unjudged:
        raise NotComparableError(
            f"{args.result}: cannot judge " + ", ".join(f"{c.test}/{c.figure}" for c in unjudged)
            + ": not a finite number in the result or the baseline; no verdict rests on it")
    told = dataclasses.replace(comparison, warnings=tuple(drives) + comparison.warnings)
    persist = red_since(args, result, baselines, comparison)
    if args.junit:
        store.atomic_write(args.junit, junit_xml(told, args.result, args.baseline, result, persist))
    if args.summary:
        add_to_summary(args.summary, summary_section(told, result, args.baseline, persist))
    if args.json:
        print(strictjson.dumps(as_dict(told, args.result, args.baseline, persist), indent=2))
    else:
        print("\n".join([f"warning: {d}" for d in drives] + table(comparison) + warning_lines(comparison)
                        + night_lines(comparison) + extreme_lines(comparison) + since_lines(persist)
                        + [summary_line(comparison)]))
    return EXIT_REGRESSION if comparison.regressions else EXIT_OK


def night_of(path: str, run: RunResult) -> persisting.Night:
    """A night as the red-since lines name it: its run's name (the file's when none), start and file."""
    name = cut(run.name.strip(), 80) or cut(os.path.splitext(os.path.basename(path))[0], 80)
    return persisting.Night(name, night_text(run), path)


def red_since(args: argparse.Namespace, result: RunResult, baselines: Sequence[RunResult],
              comparison: Comparison) -> Optional[Persisting]:
    """Since when a red night has been red (None when it is green): since
    itself, or the first of ``--red-nights``.  Each of those is read and
    judged again against the same baseline, for each figure's own since;
    one that cannot be read (named by its file), is not comparable with the
    baseline or is of another drive counts for the night only."""
    if not comparison.regressions:
        return None
    earlier: List[persisting.Night] = []
    judged: List[Optional[Comparison]] = []
    for path in args.red_nights or []:
        try:
            run = checked.load(path)
        except ResultFileError:
            earlier.append(persisting.Night(cut(os.path.splitext(os.path.basename(path))[0], 80), "", path))
            judged.append(None)
            continue
        earlier.append(night_of(path, run))
        same = not comparable.other_drive(result, run) and not any(
            comparable.not_comparable(run, b) for b in baselines)
        judged.append(regression.compare(run, baselines, comparison.tolerance_pct, args.metric or [],
                                         comparison.alpha, comparison.correction) if same else None)
    return persisting.persisting(night_of(args.result, result), comparison, earlier, judged)


def since_lines(persist: Optional[Persisting]) -> List[str]:
    """'red since ...': the night's, then each regressed figure's."""
    if persist is None or persist.night.nights < 2:
        return []
    figures = "; ".join(f"{test}/{figure} since {since.text()}" for (test, figure), since in persist.figures.items())
    return [f"red since {persist.night.text()}: a regression that persists ({figures})"]


def drive_lines(result_path: str, result: RunResult, paths: Sequence[str], baselines: Sequence[RunResult],
                allowed: bool) -> List[str]:
    """One line per baseline measured on another drive than the result (model,
    serial or world-wide name differ), naming both; a NotComparableError
    (exit 12) for the first unless ``allowed`` (``--allow-other-drive``)."""
    lines = []
    for path, baseline in zip(paths, baselines):
        fields = comparable.other_drive(result, baseline)
        if not fields:
            continue
        line = (f"another drive: {result_path} was measured on {comparable.drive_text(result)}, "
                f"{path} on {comparable.drive_text(baseline)} (different {', '.join(fields)})")
        if not allowed:
            raise NotComparableError(line + "; a swapped drive is not a regression: give --allow-other-drive "
                                            "to compare them all the same")
        lines.append(line)
    return lines


def not_judged(args: argparse.Namespace, result: RunResult) -> int:
    """``--not-judged REASON``: every headline figure of the result as a
    skipped JUnit test case (a first night: too few nights to judge by);
    exit 0, one line."""
    cells = [(t.key, f) for t in result.tests for f in regression.figures(t)]
    reason = args.not_judged.strip() or "not judged"
    if args.junit:
        store.atomic_write(args.junit, checkfiles.not_judged_junit(args.result, result, cells, reason))
    if args.summary:
        add_to_summary(args.summary, {"verdict": "not judged", "reason": reason, **checkfiles.host_facts(result)})
    print(f"not judged: {reason} ({len(cells)} figure{'' if len(cells) == 1 else 's'}"
          f"{', written as skipped test cases' if args.junit else ''})")
    return EXIT_OK


def register(sub) -> None:
    check = sub.add_parser("check", help="check a result against a baseline (exit 1 on a regression)",
                           allow_abbrev=False)
    check.add_argument("result", help="the tkperf result XML file to check")
    check.add_argument("--baseline", nargs="+", action="extend", metavar="BASE.xml",
                       help="the result file(s) to compare with (required unless --not-judged); several "
                            "(the last nights) are one baseline: their mean and their pooled window values")
    check.add_argument("--tolerance", default=DEFAULT_TOLERANCE, metavar="PCT",
                       help="how much worse a figure may get, in percent: 10%% or 10 (default 10%%)")
    check.add_argument("--alpha", default=f"{noise.ALPHA:g}", metavar="LEVEL",
                       help="a change beyond the tolerance is a regression only when the noise test "
                            "(Welch's t with one baseline, a prediction interval with several) gives an "
                            "adjusted p below LEVEL (default %(default)s; 1: off)")
    check.add_argument("--correction", choices=regression.CORRECTIONS, default=regression.HOLM,
                       help="for the many figures of a night: holm (default; at most LEVEL of the "
                            "nights with no change go red) or none (each figure at LEVEL)")
    check.add_argument("--metric", action="append", metavar="KEY",
                       help="check only this figure key (repeatable; default all)")
    check.add_argument("--junit", metavar="FILE", help="also write the comparison as JUnit XML (its suite "
                                                         "names the drive, the night and the host)")
    check.add_argument("--summary", metavar="FILE",
                       help="add the check's verdict and the host's facts to the run's --json-summary FILE "
                            "(its 'check' entry)")
    check.add_argument("--red-nights", nargs="+", action="extend", metavar="RED.xml",
                       help="the nights red before this one since the last normal night, oldest first (a "
                            "nightly job's list): on a red night the JUnit, JSON and text then say since when "
                            "the night and each regressed figure have been red (read only on a red night)")
    check.add_argument("--allow-other-drive", action="store_true",
                       help="compare also when a baseline was measured on another drive (model, serial or "
                            "world-wide name differ); without it that is refused (exit 12)")
    check.add_argument("--not-judged", metavar="REASON",
                       help="judge nothing: no --baseline; with --junit every figure is a skipped test case "
                            "with REASON (a nightly job's first nights)")
    check.add_argument("--json", action="store_true", help="print the comparison as JSON")
    check.set_defaults(func=cmd_check)
