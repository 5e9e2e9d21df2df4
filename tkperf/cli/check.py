"""``tkperf check RESULT.xml --baseline BASE.xml [BASE.xml ...]``: a regression check for nightly QA.

Compares the headline figures of every test the files hold (docs/check.rst)
and exits 0 when every figure is within the tolerance or its change is
noise (Welch's t-test over the window values with one baseline, a
prediction interval with several; Holm's correction over the night's
figures), 1 (``EXIT_REGRESSION``) when one got worse by more and the test
says it is no noise, 12 when the
files do not measure the same thing.  Reads the files and the test types' headline
figures only; never imports matplotlib.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import os
import re
import sys
from typing import List, Optional, Sequence

from lxml import etree

from tkperf import notify, store, strictjson
from tkperf.durations import unit_word
from tkperf.errors import EXIT_OK, EXIT_REGRESSION, NotComparableError, ResultFileError, UsageError
from tkperf.model import noise
from tkperf.model.results import DeviceInfo, HostInfo, RunResult
from tkperf.model.shown import cut
from tkperf.report import checked
from tkperf.simdrive import hostlimit
from tkperf.untrusted import for_xml
from tkperf.verdict import comparable, persisting, regression
from tkperf.verdict.persisting import Persisting
from tkperf.verdict.regression import Cell, Comparison

DEFAULT_TOLERANCE = "10%"
MAX_TOLERANCE_PCT = 1000.0
#: 1: one baseline; 2: ``baseline`` is a list, p values, spreads, ``warnings``, verdict ``noise``;
#: 3: the test run named, ``correction``, ``night``, ``p_adjusted``, verdict ``warn``;
#: 4: ``red_since`` (the night's and each regressed figure's), verdict ``host-limited``.
JSON_VERSION = 4
SHOWN_VERDICT = {regression.OK: "ok", regression.REGRESSION: "REGRESSION",
                 regression.IMPROVED: "improved", regression.INFO: "info", regression.NOISE: "noise",
                 regression.WARN: "warn", regression.HOST_LIMITED: "host-limited"}
#: The tests as the summary line names them.
METHOD_TEXT = {regression.WELCH: "Welch's t-test of the window values",
               regression.PREDICTION: "prediction-interval t-test against the baseline nights",
               regression.NIGHT_ADJUSTED: "prediction-interval t-test against the baseline nights, "
                                          "the night's shared shift tested apart"}
HEADER = ("test", "figure", "unit", "baseline", "result", "change %", "p", "p adj", "verdict")
#: Most decimals a change is shown with (beyond this it is the tolerance itself).
MAX_DECIMALS = 6


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
                        + night_lines(comparison) + since_lines(persist) + [summary_line(comparison)]))
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


def night_text(run: RunResult) -> str:
    """When the run started, as the night it stands for: '2026-12-07 01:30' ('' when not recorded)."""
    return cut(run.started[:16].replace("T", " "), 40)


def suite_name(run: RunResult) -> str:
    """The JUnit suite's name: the drive, the night and the host, which a CI dashboard shows."""
    host = cut(run.host.hostname, 80) or "an unnamed host"
    return f"tkperf check: {comparable.drive_text(run)}, night {night_text(run) or 'unknown'}, host {host}"


def not_judged(args: argparse.Namespace, result: RunResult) -> int:
    """``--not-judged REASON``: every headline figure of the result as a
    skipped JUnit test case (a first night: too few nights to judge by);
    exit 0, one line."""
    cells = [(t.key, f) for t in result.tests for f in regression.figures(t)]
    reason = args.not_judged.strip() or "not judged"
    if args.junit:
        root, suite = _suite(result, len(cells), 0, len(cells))
        props = etree.SubElement(suite, "properties")
        for name, value in _identity(args.result, result) + [("not_judged", reason)]:
            etree.SubElement(props, "property", name=name, value=for_xml(value))
        for test, fig in cells:
            case = etree.SubElement(suite, "testcase", classname=test, name=fig.key, time="0")
            etree.SubElement(case, "skipped", type="not-judged", message=for_xml(reason))
        store.atomic_write(args.junit, etree.tostring(root, xml_declaration=True, encoding="UTF-8",
                                                      pretty_print=True))
    if args.summary:
        add_to_summary(args.summary, {"verdict": "not judged", "reason": reason, **_host_facts(result)})
    print(f"not judged: {reason} ({len(cells)} figure{'' if len(cells) == 1 else 's'}"
          f"{', written as skipped test cases' if args.junit else ''})")
    return EXIT_OK


# --- text ------------------------------------------------------------------------------------

def change_text(change: Optional[float], tolerance_pct: float) -> str:
    """The change with as many decimals (one at least) as it takes to read on the
    side of the tolerance it is judged on: -10.045 at 10% is '-10.04', not '-10.0'."""
    if change is None:
        return "n/a"
    beyond = abs(change) > tolerance_pct
    for decimals in range(1, MAX_DECIMALS + 1):
        shown = round(change, decimals)
        if (abs(shown) > tolerance_pct) == beyond and (abs(shown) != tolerance_pct
                                                       or abs(change) == tolerance_pct):
            break
    return f"{change:+.{decimals}f}"


def _change(cell: Cell, tolerance_pct: float) -> str:
    return change_text(cell.change_pct, tolerance_pct)


def p_text(p: Optional[float]) -> str:
    """The p value: '-' when no test was made, '<0.001' when tiny."""
    if p is None:
        return "-"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def row(cell: Cell, tolerance_pct: float = 10.0) -> List[str]:
    """The cells of one table row."""
    return [cell.test, cell.figure, unit_word(cell.unit, sys.stdout), cell.text.format(cell.baseline),
            cell.text.format(cell.result), _change(cell, tolerance_pct), p_text(cell.p_value),
            p_text(cell.p_adjusted), SHOWN_VERDICT[cell.verdict]]


def table(comparison: Comparison) -> List[str]:
    """A plain table, one line per compared figure, numbers right-aligned."""
    rows = [list(HEADER)] + [row(c, comparison.tolerance_pct) for c in comparison.cells]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    right = (3, 4, 5, 6, 7)
    return ["  ".join(v.rjust(w) if i in right else v.ljust(w)
                      for i, (v, w) in enumerate(zip(r, widths))).rstrip() for r in rows]


def warning_lines(comparison: Comparison) -> List[str]:
    """'warning: ...' per caveat of the runs compared, and one for the figures
    worse beyond the tolerance that had no noise estimate to judge them by."""
    unjudged = [f"{c.test}/{c.figure}" for c in comparison.cells if c.verdict == regression.WARN]
    lines = [f"warning: {w}" for w in comparison.warnings]
    if unjudged:
        lines.append(f"warning: {', '.join(unjudged)} got worse beyond the tolerance, but without a noise "
                     "estimate (no window values on either side, p -); such a figure cannot fail the "
                     "check on its own (--alpha 1: the tolerance alone decides)")
    held = host_limited(comparison)
    if held:
        lines.append(f"warning: {', '.join(held)} left out of the verdict (host-limited): the host path, not "
                     f"the drive, sets {'it' if len(held) == 1 else 'them'}, and the host limited this night; "
                     f"the other figures are judged")
    return lines


def host_limited(comparison: Comparison) -> List[str]:
    """The figures left out of the verdict as host-limited, 'test/figure'."""
    return [f"{c.test}/{c.figure}" for c in comparison.cells if c.verdict == regression.HOST_LIMITED]


def night_lines(comparison: Comparison) -> List[str]:
    """What the p columns mean when the night's shift was tested apart, with the shift itself."""
    night = comparison.night
    if night is None:
        return []
    worse = night.shift_pct < 0
    return [f"night's shift: {night.shift_pct:+.1f}% (p adj {p_text(night.adjusted(worse))}, "
            f"{'worse' if worse else 'better'}); p is each figure's own move with the shift taken out, or, "
            f"where the shift decided, its whole move against its own nights (a figure moved beyond the "
            f"tolerance with a significant shift fails only when its whole move is beyond its own noise "
            f"too); p adj is what decided, never below p"]


def test_text(comparison: Comparison) -> str:
    """The test and its error control, as the summary line names them."""
    n = sum(1 for c in comparison.cells if c.p_value is not None)
    control = (f"Holm's correction over {n} figure{'' if n == 1 else 's'}"
               + (" and the night's shift" if comparison.night is not None else "")
               if comparison.correction == regression.HOLM else "no correction")
    return f"{METHOD_TEXT[comparison.method]}, {control}, at {comparison.alpha:g}"


def counts(comparison: Comparison) -> str:
    """'13 figures: 1 within 10%, 11 noise, 1 info': each figure counted once."""
    tol = f"{comparison.tolerance_pct:g}%"
    names = ((regression.OK, f"within {tol}"), (regression.REGRESSION, "regressed"),
             (regression.NOISE, "noise"), (regression.WARN, "warn"),
             (regression.IMPROVED, "improved"), (regression.INFO, "info"),
             (regression.HOST_LIMITED, "host-limited"))
    n = len(comparison.cells)
    parts = [f"{k} {name}" for verdict, name in names
             for k in [sum(1 for c in comparison.cells if c.verdict == verdict)] if k]
    return f"{n} figure{'' if n == 1 else 's'}: " + ", ".join(parts)


def summary_line(comparison: Comparison) -> str:
    """One line: the verdict, each figure counted once, the test, and the figures that regressed."""
    head = f"{counts(comparison)} ({test_text(comparison)})"
    if comparison.regressions:
        worse = ", ".join(f"{c.test}/{c.figure} {_change(c, comparison.tolerance_pct)}%"
                          for c in comparison.regressions)
        return f"REGRESSION: {head}: {worse}"
    return f"ok: {head}"


# --- machine-readable --------------------------------------------------------------------------

def as_dict(comparison: Comparison, result: str, baselines: Sequence[str],
            persist: Optional[Persisting] = None) -> dict:
    """What ``check --json`` prints (schema: tkperf/model/data/check.schema.json)."""
    return {"version": JSON_VERSION, "tolerance_pct": comparison.tolerance_pct, "alpha": comparison.alpha,
            "test": comparison.method, "correction": comparison.correction, "result": result,
            "baseline": list(baselines), "verdict": comparison.verdict, "warnings": list(comparison.warnings),
            "night": comparison.night.as_dict() if comparison.night is not None else None,
            "red_since": _since(persist),
            "figures": [dict(c.as_dict(), **_figure_since(c, persist)) for c in comparison.cells]}


def _since(persist: Optional[Persisting]) -> Optional[dict]:
    return persist.night.as_dict() if persist is not None else None


def _figure_since(cell: Cell, persist: Optional[Persisting]) -> dict:
    """``red_since`` of a regressed figure (nothing for the others)."""
    since = persist.of(cell.test, cell.figure) if persist is not None else None
    return {"red_since": since.as_dict()} if since is not None else {}


def _suite(run: RunResult, tests: int, failures: int, skipped: int) -> tuple:
    """The JUnit root and its one suite, named for the drive, night and host
    (``timestamp`` and ``hostname`` as the JUnit schema has them)."""
    n, failed, skips = str(tests), str(failures), str(skipped)
    name = for_xml(suite_name(run))
    root = etree.Element("testsuites", name=name, tests=n, failures=failed, errors="0", skipped=skips)
    suite = etree.SubElement(root, "testsuite", name=name, tests=n, failures=failed, errors="0",
                             skipped=skips, hostname=for_xml(cut(run.host.hostname, 80) or "unknown"))
    if run.started:
        suite.set("timestamp", for_xml(run.started[:19]))
    return root, suite


def _identity(path: str, run: RunResult) -> List[tuple]:
    return [("result", path), ("drive", comparable.drive_text(run)), ("night", night_text(run)),
            ("host", cut(run.host.hostname, 80))]


def junit_xml(comparison: Comparison, result: str, baselines: Sequence[str],
              run: Optional[RunResult] = None, persist: Optional[Persisting] = None) -> bytes:
    """JUnit XML: a testcase per compared figure, a failure per regression
    (its message ends with since when the figure is red), a skipped case per
    ``warn`` (no noise estimate: not judged), a passing case with the
    property ``verdict`` ``noise`` and a first output line saying so per
    ``noise``; the suite named for the drive, night and host; the warnings
    as properties and in the suite's system-out, and a red night's
    ``red_since`` (its name), ``red_since_night``, ``red_since_result`` and
    ``red_nights`` properties, also the first line of its system-out."""
    if run is None:
        run = RunResult(name="", started="", device=DeviceInfo("", "", "block", 0), host=HostInfo(), options={})
    warned = [c for c in comparison.cells if c.verdict in (regression.WARN, regression.HOST_LIMITED)]
    root, suite = _suite(run, len(comparison.cells), len(comparison.regressions), len(warned))
    props = etree.SubElement(suite, "properties")
    pairs = _identity(result, run)[:1] + [("baseline", b) for b in baselines] + [
        ("tolerance_pct", f"{comparison.tolerance_pct:g}"), ("alpha", f"{comparison.alpha:g}"),
        ("test", comparison.method), ("correction", comparison.correction)]
    pairs += [("warning", w) for w in comparison.warnings]
    pairs += _identity(result, run)[1:]
    if persist is not None:
        first = persist.night.first
        pairs += [("red_since", first.name), ("red_since_night", first.night), ("red_since_result", first.result),
                  ("red_nights", str(persist.night.nights))]
    for name, value in pairs:
        etree.SubElement(props, "property", name=name, value=for_xml(value))
    for cell in comparison.cells:
        _testcase(suite, cell, comparison.tolerance_pct, persist)
    noted = [f"{c.test}/{c.figure}: {c.verdict} ({_change(c, comparison.tolerance_pct)}%)"
             for c in comparison.cells if c.verdict in (regression.NOISE, regression.WARN)]
    red = [f"red since {persist.night.text()}"] if persist is not None else []
    if comparison.warnings or noted or red:
        etree.SubElement(suite, "system-out").text = for_xml("\n".join(
            red + [f"{len(noted)} figure{'' if len(noted) == 1 else 's'} worse beyond the tolerance but not "
                   f"failed: " + ", ".join(noted)] * bool(noted) + warning_lines(comparison)))
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def _testcase(suite: etree._Element, cell: Cell, tolerance_pct: float,
              persist: Optional[Persisting] = None) -> None:
    case = etree.SubElement(suite, "testcase", classname=cell.test, name=cell.figure, time="0")
    moved = f"{cell.text.format(cell.baseline)} -> {cell.text.format(cell.result)} {cell.unit}".rstrip()
    told = (f"{cell.label}: {moved} ({_change(cell, tolerance_pct)}%, {cell.better} is better, "
            f"tolerance {tolerance_pct:g}%, p {p_text(cell.p_value)}, adjusted {p_text(cell.p_adjusted)})")
    first = ""
    if cell.verdict == regression.REGRESSION:
        since = persist.of(cell.test, cell.figure) if persist is not None else None
        failure = etree.SubElement(case, "failure", type="regression", message=for_xml(
            told + (f"; red since {since.text()}" if since is not None else "")))
        failure.text = moved
    elif cell.verdict == regression.WARN:
        etree.SubElement(case, "skipped", type="warn", message=for_xml(
            f"warn: {told}: worse beyond the tolerance, but no noise estimate to judge it by"))
    elif cell.verdict == regression.HOST_LIMITED:
        etree.SubElement(case, "skipped", type="host-limited", message=for_xml(
            f"host-limited: {told}: left out of the verdict: the host path sets this figure, and the host "
            f"limited this night (the suite's warnings say how)"))
    elif cell.verdict == regression.NOISE:
        props = etree.SubElement(case, "properties")
        etree.SubElement(props, "property", name="verdict", value="noise")
        first = f"noise: {told}: worse beyond the tolerance, but within the nights' noise\n"
    out = etree.SubElement(case, "system-out")
    out.text = for_xml(first + f"baseline={_digits(cell.baseline)} result={_digits(cell.result)} "
                       f"change_pct={_change(cell, tolerance_pct)} p={p_text(cell.p_value)} "
                       f"p_adjusted={p_text(cell.p_adjusted)} "
                       f"unit={cell.unit} better={cell.better or 'none'} verdict={cell.verdict}")


def _digits(value: object) -> str:
    """A figure as a machine reads it: fourteen significant digits, no float noise (19409.9083172)."""
    return format(value, ".14g") if isinstance(value, float) else repr(value)


def _host_facts(run: RunResult) -> dict:
    """The tested host as the result records it, with the emulated SSD's host-limit facts (null: none)."""
    facts = run.facts.get(hostlimit.FACT) if isinstance(run.facts, dict) else None
    return {"drive": comparable.drive_text(run), "night": night_text(run),
            "host": {"hostname": cut(run.host.hostname, 200), "cores": run.host.cores,
                     hostlimit.FACT: facts if isinstance(facts, dict) else None}}


def summary_section(comparison: Comparison, run: RunResult, baselines: Sequence[str],
                    persist: Optional[Persisting] = None) -> dict:
    """The ``check`` entry ``--summary`` adds to the run's JSON summary."""
    def named(verdict: str) -> List[dict]:
        return [{"test": c.test, "figure": c.figure, "change_pct": c.change_pct, "p_adjusted": c.p_adjusted,
                 **_figure_since(c, persist)} for c in comparison.cells if c.verdict == verdict]
    return {"verdict": comparison.verdict, "tolerance_pct": comparison.tolerance_pct,
            "baseline": list(baselines), "test": comparison.method, "red_since": _since(persist),
            "regressions": named(regression.REGRESSION), "noise": named(regression.NOISE),
            "warn": named(regression.WARN), "host_limited": named(regression.HOST_LIMITED),
            "warnings": list(comparison.warnings), **_host_facts(run)}


def add_to_summary(path: str, section: dict) -> None:
    """Put ``section`` into the run's ``--json-summary`` file as its ``check``
    entry (replacing one there); one clear line when it is not such a file."""
    try:
        with open(path, "rb") as fh:
            doc = strictjson.loads(fh.read(4 << 20).decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        why = getattr(exc, "strerror", None) or "not a JSON summary"
        raise UsageError(f"--summary {path}: {why}") from None
    if not isinstance(doc, dict) or doc.get("schema") != "tkperf-summary":
        raise UsageError(f"--summary {path}: not a tkperf --json-summary file")
    doc["check"] = section
    notify.write_summary(path, doc)


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
