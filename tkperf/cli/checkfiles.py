"""What ``tkperf check`` writes for machines: ``--json``, the ``--junit`` XML a CI
dashboard reads, and the ``check`` entry of the run's ``--json-summary``.

The text ``tkperf check`` prints is :mod:`tkperf.cli.check`'s; this module
builds the files from the same :class:`~tkperf.verdict.regression.Comparison`
and decides nothing.  Text from the result files (a host's name, a run's
name) passes :func:`tkperf.untrusted.for_xml` before it becomes XML.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

from lxml import etree

from tkperf import notify, strictjson
from tkperf.cli.checktext import change_text, p_text, warning_lines
from tkperf.errors import UsageError
from tkperf.model.results import DeviceInfo, HostInfo, RunResult
from tkperf.model.shown import cut
from tkperf.simdrive import hostlimit
from tkperf.untrusted import for_xml
from tkperf.verdict import comparable, regression
from tkperf.verdict.persisting import Persisting
from tkperf.verdict.regression import Cell, Comparison

#: 1: one baseline; 2: ``baseline`` is a list, p values, spreads, ``warnings``, verdict ``noise``;
#: 3: the test run named, ``correction``, ``night``, ``p_adjusted``, verdict ``warn``;
#: 4: ``red_since`` (the night's and each regressed figure's), verdict ``host-limited``.
JSON_VERSION = 4


def night_text(run: RunResult) -> str:
    """When the run started, as the night it stands for: '2026-12-07 01:30' ('' when not recorded)."""
    return cut(run.started[:16].replace("T", " "), 40)


def suite_name(run: RunResult) -> str:
    """The JUnit suite's name: the drive, the night and the host, which a CI dashboard shows."""
    host = cut(run.host.hostname, 80) or "an unnamed host"
    return f"tkperf check: {comparable.drive_text(run)}, night {night_text(run) or 'unknown'}, host {host}"


def not_judged_junit(path: str, run: RunResult, cells: Sequence[tuple], reason: str) -> bytes:
    """JUnit XML of a night not judged: every figure (``(test, Figure)``) a
    skipped test case with ``reason``."""
    root, suite = _suite(run, len(cells), 0, len(cells))
    props = etree.SubElement(suite, "properties")
    for name, value in _identity(path, run) + [("not_judged", reason)]:
        etree.SubElement(props, "property", name=name, value=for_xml(value))
    for test, fig in cells:
        case = etree.SubElement(suite, "testcase", classname=test, name=fig.key, time="0")
        etree.SubElement(case, "skipped", type="not-judged", message=for_xml(reason))
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


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
    noted = [f"{c.test}/{c.figure}: {c.verdict} ({change_text(c.change_pct, comparison.tolerance_pct)}%)"
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
    told = (f"{cell.label}: {moved} ({change_text(cell.change_pct, tolerance_pct)}%, {cell.better} is better, "
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
                       f"change_pct={change_text(cell.change_pct, tolerance_pct)} p={p_text(cell.p_value)} "
                       f"p_adjusted={p_text(cell.p_adjusted)} "
                       f"unit={cell.unit} better={cell.better or 'none'} verdict={cell.verdict}")


def _digits(value: object) -> str:
    """A figure as a machine reads it: fourteen significant digits, no float noise (19409.9083172)."""
    return format(value, ".14g") if isinstance(value, float) else repr(value)


def host_facts(run: RunResult) -> dict:
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
            "warnings": list(comparison.warnings), **host_facts(run)}


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
