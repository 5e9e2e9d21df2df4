"""The text ``tkperf check`` prints: the table, its warnings, the night's
shift, the summary line.  Also the JUnit messages (:mod:`tkperf.cli.checkfiles`)
use these; pure formatting of a :class:`~tkperf.verdict.regression.Comparison`.
"""
from __future__ import annotations

import sys
from typing import List, Optional

from tkperf.durations import unit_word
from tkperf.verdict import regression
from tkperf.verdict.regression import Cell, Comparison

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


def extreme_lines(comparison: Comparison) -> List[str]:
    """How the extreme figures (the slowest I/O, percentiles beyond 99.9%) were
    judged against several baselines, when the night has one that was tested."""
    named = [f"{c.test}/{c.figure}" for c in comparison.cells
             if regression.extreme(c.figure) and c.p_value is not None]
    if comparison.method == regression.WELCH or not named:
        return []
    one = len(named) == 1
    it, own, theirs = ("it", "its", "its") if one else ("each", "each one's", "their")
    return [f"extreme: {', '.join(named)} (a few I/Os set {it}, heavy-tailed night to night): judged on {own} "
            f"own whole move against {theirs} nights, on a log scale, the spread at least one round's, never "
            f"through the night's shift"]


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
