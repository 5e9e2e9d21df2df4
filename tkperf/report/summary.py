"""The short plain-text summary (one line per test) and its machine-readable twin.

This is what ``tkperf show`` prints; it reads the result model and the
test types' headline figures and never imports matplotlib.
"""
from __future__ import annotations

import math
from typing import Dict, List

from tkperf.durations import latency
from tkperf.kit import registry
from tkperf.kit.base import Figure
from tkperf.kit.longrounds import stored_definition
from tkperf.kit.rules import steps_of
from tkperf.model import pts
from tkperf.model.results import RunResult, TestRun
from tkperf.report import words
from tkperf.report.words import capacity_text
from tkperf.verdict import conformance


def figures(t: TestRun) -> List[Figure]:
    """The test's headline figures; none when its test type is not installed."""
    kind = registry.get(t.type)
    return kind.headline(t) if kind is not None else []


def fob_figures(t: TestRun) -> List[Figure]:
    """Fresh out of box: the figures measured after the purge and before any
    preconditioning (WSAT's first interval, XSR's first phase)."""
    kind = registry.get(t.type)
    return steps_of(kind, t).fob(kind.headline, t) if kind is not None else []


def round1_figures(t: TestRun) -> List[Figure]:
    """Round 1 of a test that ran a WIPC first: not FOB, and named so."""
    kind = registry.get(t.type)
    return steps_of(kind, t).round1_after_wipc(kind.headline, t) if kind is not None else []


def headline(t: TestRun) -> Dict[str, float]:
    """The figures a reader looks at first, averaged over the measurement window."""
    return {f.key: f.value for f in figures(t)}


#: Figures whose short label a report explains beside it; the terminal has
#: no such text, so it says what they are.  ``{last}``: the steps a
#: 'last N' figure averages, as many as the test measured, at most N.
TERMINAL_LABELS = {
    "rnd_4k_write_lat_max_us": "MAX (mean of round maxima)",
    "rnd_4k_write_lat_largest_us": "largest single I/O",
    "last_5_intervals_iops": "mean of {last}",
}
#: The most steps a 'last N' figure averages, by its key.
_LAST_N = {"last_5_intervals_iops": (5, "interval")}


def _last(key: str, done: int) -> str:
    """'the last 3 intervals': what a 'last N' figure of a test that measured
    ``done`` steps averages, worded as the report words it."""
    most, unit = _LAST_N.get(key, (0, "step"))
    return f"the last {words.plural(min(most, done) if done > 0 else most, unit)}"


def _shown(f: Figure, micro: str, window: bool = False, done: int = 0) -> str:
    """'MAX (mean of round maxima) 12.2 ms': the terminal's words for a
    figure (a ``window`` figure's label explained, as a report does beside
    it; ``done``: the steps the test measured); a response time in the
    one unit chooser's words (:func:`tkperf.durations.latency`)."""
    label = TERMINAL_LABELS.get(f.key, f.label) if window else f.label
    label = label.format(last=_last(f.key, done)) if "{last}" in label else label
    if f.unit == "us" and isinstance(f.value, (int, float)) and math.isfinite(f.value):
        return f"{label} {latency(f.value, micro=micro)}"
    return f"{label} {f.text.format(f.value)}" + (f" {f.unit}" if f.unit else "")


def lines(run: RunResult, micro: str = "µs") -> List[str]:
    """The summary ``run`` and ``show`` print; ``micro`` is the unit written for
    microseconds ('us' where the output cannot show 'µ')."""
    out = [f"{run.name}: {run.device.model or run.device.path} ({capacity_text(run.device.size_bytes)}, "
           f"{run.device.kind}) - run {run.status}" + (", resumed" if run.resumed else "")
           + (f", imported from {_imported(run)['tool']} {_imported(run)['version']}" if _imported(run) else "")]
    if run.integrity:  # what is known of the file's completeness, said once
        out.append(f"  result file: {run.integrity}")
    verdict = conformance.of_run(run)  # a --quick run's first deviation says so: not said twice
    out.append(f"  {verdict.sentence()}")
    out += [f"    - {d.replace('µs', micro)}" for d in verdict.deviations]
    for t in run.tests:
        shown = ", ".join(_shown(f, micro, window=True, done=words.steps_done(t)) for f in figures(t))
        said = words.test_verdict(t).replace("µs", micro)  # a tracked label's unit, in this output's word
        out.append(f"  {words.test_title(t):<9} {said}" + (f"; {shown}" if shown else ""))
        fob = fob_figures(t)
        if fob:
            out.append(f"  {'':<9} {_fob_words(run, t)}: " + ", ".join(_shown(f, micro) for f in fob))
        points = stored_definition(t.params)
        if points is not None:
            out.append(f"  {'':<9} steady-state points: {points[1]}")
        first = round1_figures(t)
        if first:
            out.append(f"  {'':<9} round 1, {words.round1_after(t)} (not FOB): "
                       + ", ".join(_shown(f, micro) for f in first))
    return out


def _points(t: TestRun) -> dict:
    """``steady_points``: how a test tracked in 30-minute stretches took its points (none for other tests)."""
    points = stored_definition(t.params)
    return {"steady_points": points[0]} if points is not None else {}


def _first_step(t: TestRun) -> str:
    return steps_of(registry.get(t.type), t).unit


def _fob_words(run: RunResult, t: TestRun) -> str:
    """What a test's first figures are: 'FOB (first interval after the purge,
    before any preconditioning)'; for the WSAT of a result imported from the
    original TKperf its own words, as a comparison labels it
    (:data:`tkperf.verdict.conformance.IMPORTED_FOB`)."""
    if t.type == "wsat" and conformance.replays(run):
        return "first round of the original TKperf, no cliff measured (its rounds replay one offset sequence)"
    return f"FOB (first {_first_step(t)} after the purge, before any preconditioning)"


def _imported(run: RunResult) -> dict:
    """What an imported run says of its source: tool, version, source file and
    the tests whose recorded steady-state verdict tkperf's 20/10 check disputes."""
    info = run.facts.get("imported") if isinstance(run.facts, dict) else None
    if not isinstance(info, dict):
        return {}
    steady = info.get("steady_state") or {}
    disputed = sorted(k for k, v in steady.items() if isinstance(v, dict) and v.get("agree") is False)
    return {"tool": str(info.get("tool") or "TKperf"), "version": str(info.get("version") or ""),
            "source": str(info.get("source") or ""), "steady_disagreements": disputed,
            "warnings": conformance.imported_caveats(run)}


def as_dict(run: RunResult) -> dict:
    out = _as_dict(run)
    if _imported(run):
        out["imported"] = _imported(run)
    return out


def _as_dict(run: RunResult) -> dict:
    return {
        "name": run.name,
        "pts": pts.of_options(run.options).id,
        "conformance": conformance.of_run(run).as_dict(),
        "status": run.status,
        "file_integrity": run.integrity,
        "quick": run.quick,
        "resumed": run.resumed,
        "device": {"path": run.device.path, "model": run.device.model, "serial": run.device.serial,
                   "size_bytes": run.device.size_bytes, "kind": run.device.kind},
        "tests": [
            {"key": t.key, "status": t.status, "rounds": t.done, "stop_reason": t.stop_reason,
             "steady": bool(t.steady and t.steady.steady),
             "pts_steady": bool(t.steady and t.steady.steady and not conformance.late_window(t)),
             "window": list(t.steady.rounds) if t.steady else [],
             "not_steady_variables": words.unsteady_variables(t),
             "headline": headline(t),
             "fob": {f.key: f.value for f in fob_figures(t)},
             "round1_after_wipc": {f.key: f.value for f in round1_figures(t)},
             **_points(t)}
            for t in run.tests
        ],
    }


#: What ``--json-summary`` writes: its ``schema`` name and ``version``
#: (tkperf/model/data/summary.schema.json, docs/result-format.rst).
DOCUMENT_SCHEMA = "tkperf-summary"
DOCUMENT_VERSION = 1


def _figure_dict(f: Figure) -> dict:
    return {"key": f.key, "label": f.label, "value": f.value, "unit": f.unit, "better": f.better}


def as_document(run: RunResult, paths: Dict[str, object], exit_code: int) -> dict:
    """The ``--json-summary`` document: :func:`as_dict` with a schema name and
    version, each test's type and figures, the files written and the exit code.

    ``paths`` holds ``result``, ``log`` and ``reports`` (a list)."""
    doc = {"schema": DOCUMENT_SCHEMA, "version": DOCUMENT_VERSION, **as_dict(run)}
    for entry, t in zip(doc["tests"], run.tests):
        entry["type"] = t.type
        entry["figures"] = [_figure_dict(f) for f in figures(t)]
    reports = paths["reports"]
    doc["paths"] = {"result": paths["result"], "log": paths["log"],
                    "reports": list(reports) if isinstance(reports, (list, tuple)) else []}
    doc["exit_code"] = exit_code
    return doc
