"""``tkperf check RESULT.xml --baseline BASE.xml``: a regression check for nightly QA.

Compares the headline figures of every test both files hold (docs/check.rst)
and exits 0 when every figure is within the tolerance, 1
(``EXIT_REGRESSION``) when one got worse by more, 12 when the files do not
measure the same thing.  Reads the files and the test types' headline
figures only; never imports matplotlib.
"""
from __future__ import annotations

import argparse
import json
import math
import re
from typing import List, Sequence

from lxml import etree

from tkperf.errors import EXIT_OK, EXIT_REGRESSION, NotComparableError, UsageError
from tkperf.model import regression, store
from tkperf.model.regression import Cell, Comparison

DEFAULT_TOLERANCE = "10%"
MAX_TOLERANCE_PCT = 1000.0
JSON_VERSION = 1
SHOWN_VERDICT = {regression.OK: "ok", regression.REGRESSION: "REGRESSION",
                 regression.IMPROVED: "improved", regression.INFO: "info"}
HEADER = ("test", "figure", "unit", "baseline", "result", "change %", "verdict")


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


def cmd_check(args: argparse.Namespace) -> int:
    tolerance = parse_tolerance(args.tolerance)
    result, baseline = store.load(args.result), store.load(args.baseline)
    reasons = regression.not_comparable(result, baseline)
    if reasons:
        raise NotComparableError(f"{args.result} and {args.baseline} are not comparable: "
                                 + "; ".join(reasons))
    metrics = args.metric or []
    check_metrics(metrics, regression.figure_keys(result, baseline))
    comparison = regression.compare(result, baseline, tolerance, metrics)
    if args.junit:
        store.atomic_write(args.junit, junit_xml(comparison, args.result, args.baseline))
    if args.json:
        print(json.dumps(as_dict(comparison, args.result, args.baseline), indent=2))
    else:
        print("\n".join(table(comparison) + [summary_line(comparison)]))
    return EXIT_REGRESSION if comparison.regressions else EXIT_OK


# --- text ------------------------------------------------------------------------------------

def _change(cell: Cell) -> str:
    return "n/a" if cell.change_pct is None else f"{cell.change_pct:+.1f}"


def row(cell: Cell) -> List[str]:
    """The cells of one table row."""
    return [cell.test, cell.figure, cell.unit, cell.text.format(cell.baseline),
            cell.text.format(cell.result), _change(cell), SHOWN_VERDICT[cell.verdict]]


def table(comparison: Comparison) -> List[str]:
    """A plain table, one line per compared figure, numbers right-aligned."""
    rows = [list(HEADER)] + [row(c) for c in comparison.cells]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    right = (3, 4, 5)
    return ["  ".join(v.rjust(w) if i in right else v.ljust(w)
                      for i, (v, w) in enumerate(zip(r, widths))).rstrip() for r in rows]


def summary_line(comparison: Comparison) -> str:
    """One line: the verdict, counts and the figures that regressed."""
    n, tol = len(comparison.cells), f"{comparison.tolerance_pct:g}%"
    improved = len(comparison.improvements)
    if comparison.regressions:
        worse = ", ".join(f"{c.test}/{c.figure} {_change(c)}%" for c in comparison.regressions)
        return f"REGRESSION: {len(comparison.regressions)} of {n} figures worse than {tol}: {worse}"
    return f"ok: {n} figures within {tol} of the baseline" + (f", {improved} improved" if improved else "")


# --- machine-readable --------------------------------------------------------------------------

def as_dict(comparison: Comparison, result: str, baseline: str) -> dict:
    """What ``check --json`` prints (schema: tkperf/model/data/check.schema.json)."""
    return {"version": JSON_VERSION, "tolerance_pct": comparison.tolerance_pct, "result": result,
            "baseline": baseline, "verdict": comparison.verdict,
            "figures": [c.as_dict() for c in comparison.cells]}


def junit_xml(comparison: Comparison, result: str, baseline: str) -> bytes:
    """JUnit XML: a testcase per compared figure, a failure per regression."""
    n, failures = str(len(comparison.cells)), str(len(comparison.regressions))
    root = etree.Element("testsuites", name="tkperf check", tests=n, failures=failures, errors="0")
    suite = etree.SubElement(root, "testsuite", name="tkperf check", tests=n, failures=failures,
                             errors="0", skipped="0")
    props = etree.SubElement(suite, "properties")
    for name, value in (("result", result), ("baseline", baseline),
                        ("tolerance_pct", f"{comparison.tolerance_pct:g}")):
        etree.SubElement(props, "property", name=name, value=value)
    for cell in comparison.cells:
        _testcase(suite, cell, comparison.tolerance_pct)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def _testcase(suite: etree._Element, cell: Cell, tolerance_pct: float) -> None:
    case = etree.SubElement(suite, "testcase", classname=cell.test, name=cell.figure, time="0")
    moved = f"{cell.text.format(cell.baseline)} -> {cell.text.format(cell.result)} {cell.unit}".rstrip()
    if cell.verdict == regression.REGRESSION:
        failure = etree.SubElement(case, "failure", type="regression",
                                   message=f"{cell.label}: {moved} ({_change(cell)}%, "
                                           f"{cell.better} is better, tolerance {tolerance_pct:g}%)")
        failure.text = moved
    out = etree.SubElement(case, "system-out")
    out.text = (f"baseline={cell.baseline!r} result={cell.result!r} change_pct={_change(cell)} "
                f"unit={cell.unit} better={cell.better or 'none'} verdict={cell.verdict}")


def register(sub) -> None:
    check = sub.add_parser("check", help="check a result against a baseline (exit 1 on a regression)",
                           allow_abbrev=False)
    check.add_argument("result", help="the tkperf result XML file to check")
    check.add_argument("--baseline", required=True, metavar="BASE.xml", help="the result file to compare with")
    check.add_argument("--tolerance", default=DEFAULT_TOLERANCE, metavar="PCT",
                       help="how much worse a figure may get, in percent: 10%% or 10 (default 10%%)")
    check.add_argument("--metric", action="append", metavar="KEY",
                       help="check only this figure key (repeatable; default all)")
    check.add_argument("--junit", metavar="FILE", help="also write the comparison as JUnit XML")
    check.add_argument("--json", action="store_true", help="print the comparison as JSON")
    check.set_defaults(func=cmd_check)
