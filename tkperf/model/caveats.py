"""What weakens a check's verdict: runs that had not settled, were short, or differ.

``tkperf check`` still judges such runs, by the same rules, and these
warnings say what the verdict is worth (docs/check.rst, "Warnings").  Each
warning is one line naming the side (``result`` or ``baseline N``) and
what it does to the verdict.
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from tkperf.model.results import RunResult

#: Options that name or place a run rather than shape its measurement.
IGNORED_OPTIONS = frozenset({"name", "outdir", "description", "mail", "smtp", "json_summary"})

NOT_STEADY = ("did not reach steady state in {tests}: its window values still drift, which widens "
              "their spread, so the noise test calls fewer changes regressions (a regression found "
              "still is one; an ok is less sure)")
NOT_STEADY_MANY = NOT_STEADY.replace("its window values", "their window values")
QUICK = ("was a --quick run: its rounds are too short to stand for the drive, so any verdict "
         "says little about it")
QUICK_MANY = ("were --quick runs: their rounds are too short to stand for the drive, so any verdict "
              "says little about it")
PARAMS = ("ran with different parameters ({diffs}): a change may come from the parameters, "
          "not the drive (the verdict is kept, but it compares unlike runs)")


def _sides(result: RunResult, baselines: Sequence[RunResult]) -> List[Tuple[str, RunResult]]:
    if len(baselines) == 1:
        return [("result", result), ("baseline", baselines[0])]
    return [("result", result)] + [(f"baseline {i}", b) for i, b in enumerate(baselines, 1)]


def not_steady(run: RunResult) -> List[str]:
    """Keys of the tests whose steady-state verdict is 'not steady'."""
    return [t.key for t in run.tests if t.steady is not None and not t.steady.steady]


def _params(run: RunResult) -> Dict[str, str]:
    out = {k: v for k, v in run.options.items() if k not in IGNORED_OPTIONS}
    for t in run.tests:
        out.update({f"{t.key}.{k}": v for k, v in t.params.items()})
    return out


#: The most differing parameters a warning names (the rest are counted), and
#: the most characters of a parameter's name or value it shows.
SHOWN_DIFFERENCES = 12
SHOWN_CHARS = 200


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]}... ({len(text):,} characters)"


def param_differences(result: RunResult, baseline: RunResult) -> List[str]:
    """'runtime 1 vs 10' for each option or test parameter that differs: the
    first :data:`SHOWN_DIFFERENCES`, then how many more ('and 3 more')."""
    mine, theirs = _params(result), _params(baseline)
    keys = [k for k in sorted(set(mine) | set(theirs)) if mine.get(k) != theirs.get(k)]
    out = [f"{_cut(k)} {_cut(mine.get(k, '-'))} vs {_cut(theirs.get(k, '-'))}" for k in keys[:SHOWN_DIFFERENCES]]
    if len(keys) > SHOWN_DIFFERENCES:
        out.append(f"and {len(keys) - SHOWN_DIFFERENCES:,} more")
    return out


def _together(sides: List[str]) -> str:
    """'result', 'baseline 1', 'result and baselines 1, 2 and 3' ..."""
    names = [s for s in sides if not s.startswith("baseline ")]
    numbers = [s[len("baseline "):] for s in sides if s.startswith("baseline ")]
    if numbers:
        names.append(("baselines " if len(numbers) > 1 else "baseline ") + _and(numbers))
    return _and(names)


def _and(items: List[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _grouped(found: List[Tuple[str, str]], line: str, many: str = "") -> List[str]:
    """One line per distinct detail, naming every side it is true of:
    'result and baselines 1, 2 and 3 were ...' rather than one line each."""
    by: Dict[str, List[str]] = {}
    for side, detail in found:
        by.setdefault(detail, []).append(side)
    out = []
    for detail, sides in by.items():
        verb = line if len(sides) == 1 or not many else many
        out.append(f"{_together(sides)} " + verb.format(tests=detail, diffs=detail))
    return out


def warnings(result: RunResult, baselines: Sequence[RunResult]) -> List[str]:
    """Every warning about the runs compared, one line per kind and detail
    (the sides it is true of named together)."""
    sides = _sides(result, baselines)
    unsteady = [(side, ", ".join(not_steady(run))) for side, run in sides if not_steady(run)]
    quick = [(side, "") for side, run in sides if run.quick]
    params = [(side, "; ".join(param_differences(result, run))) for side, run in sides[1:]
              if param_differences(result, run)]
    return (_grouped(unsteady, NOT_STEADY, NOT_STEADY_MANY) + _grouped(quick, QUICK, QUICK_MANY)
            + [f"result and {line}" for line in _grouped(params, PARAMS)])
