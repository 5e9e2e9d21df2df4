"""The history's HTML pages: an index of devices and a page per device with its runs and trends' plots.

Every string from a result file (device names, firmware, test and figure
keys, paths) is escaped with :func:`html.escape` and appears as text
only: the only links and images are the pages' own files, whose names
:func:`slug` builds from safe characters and a hash, and each run's own
HTML report when one lies beside its result file (a relative link to a
file found on disk, percent-quoted; nothing from inside a file).
"""
from __future__ import annotations

import hashlib
import html
import os
import re
from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple
from urllib.parse import quote

from lxml import etree

from tkperf.durations import ANY_TEXT, unit_word
from tkperf.history import changepoints
from tkperf.history.index import FileFacts
from tkperf.history.trends import Device, Trend
from tkperf.store import atomic_write
from tkperf.store.fileformat import safe_parser

STYLE = """body{font-family:sans-serif;margin:2em;max-width:60em}
table{border-collapse:collapse}td,th{padding:.2em .6em;border-bottom:1px solid #ddd;text-align:left}
td.n{text-align:right}.change{color:#cb181d}img{max-width:100%}code{font-size:90%}"""


def slug(text: str) -> str:
    """A file-name-safe, unique name for untrusted ``text``."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._-")[:40] or "x"
    return f"{safe}-{hashlib.sha1(text.encode('utf-8', 'replace')).hexdigest()[:8]}"


def e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _doc(title: str, body: List[str]) -> bytes:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{e(title)}</title><style>{STYLE}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n").encode("utf-8")


def plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def value_text(trend: Trend, value: float) -> str:
    try:
        return trend.text.format(value)
    except (ValueError, IndexError, KeyError):
        return f"{value:g}"


def too_short(trend: Trend) -> bool:
    """Whether the series is too short for any change point to be found."""
    return len(trend.points) < 2 * changepoints.MIN_SEGMENT


def _changes(trend: Trend) -> List[str]:
    if not trend.changes and too_short(trend):
        return [f"<p>Series too short for a change point: {plural(len(trend.points), 'run')}, and a change "
                f"point needs at least {changepoints.MIN_SEGMENT} at each level.</p>"]
    if not trend.changes:
        return ["<p>No change point.</p>"]
    host = any(c.host_step is not None for c in trend.changes)
    rows = ["<table><tr><th>run</th><th>started</th><th>before</th><th>after</th><th>change</th>"
            "<th>p</th><th>file where the new level begins</th>" + ("<th>the host</th>" if host else "") + "</tr>"]
    for c in trend.changes:
        pct = "n/a" if c.change_pct is None else f"{c.change_pct:+.1f}%"
        said = f"<td>{e(c.host_text() or '-')}</td>" if host else ""
        rows.append(f"<tr class=\"change\"><td class=\"n\">{c.index + 1}</td><td>{e(c.started)}</td>"
                    f"<td class=\"n\">{e(value_text(trend, c.before))}</td>"
                    f"<td class=\"n\">{e(value_text(trend, c.after))}</td><td class=\"n\">{e(pct)}</td>"
                    f"<td class=\"n\">{c.p_value:.3f}</td><td><code>{e(c.path)}</code></td>{said}</tr>")
    return rows + ["</table>"]


def chart_name(device: Device, trend: Trend) -> str:
    return f"{slug(device.key)}-{slug(trend.test + '.' + trend.figure)}.svg"


def run_name(path: str) -> str:
    """A run's name: its result file's name without ``.xml`` (tkperf writes NAME.xml)."""
    base = os.path.basename(path)
    return base[:-4] if base.lower().endswith(".xml") else base


def report_link(path: str, outdir: str) -> Optional[str]:
    """A relative link from the pages to the run's HTML report (NAME.html
    beside NAME.xml), when there is one."""
    report = os.path.splitext(path)[0] + ".html"
    if not os.path.isfile(report):
        return None
    return quote(os.path.relpath(os.path.abspath(report), os.path.abspath(outdir)))


#: The JUnit report of a night's ``tkperf check`` beside its result (the nightly job's).
JUNIT_NAME = "junit.xml"
#: The largest such report read.
MAX_JUNIT_BYTES = 1 << 20


@dataclass(frozen=True)
class NightCheck:
    """What a night's check said: the runs table's words, whether it was
    red, and the (test, figure) of each failed test case."""

    text: str
    red: bool = False
    failed: FrozenSet[Tuple[str, str]] = frozenset()


def night_check(path: str) -> NightCheck:
    """What the night's check said, from the JUnit report beside the result
    (``junit.xml`` in its folder): 'RED: 2 of 13 figures regressed' (red,
    with the test cases that failed), 'ok', 'not judged', or '-' when there
    is no readable report, with ' (3 host-limited)' when the check left
    figures out as host-limited.  Only its counts, the failed cases' class
    and name (compared with the trends' keys, never shown) and the skipped
    cases' type are read."""
    junit = os.path.join(os.path.dirname(path), JUNIT_NAME)
    try:
        if os.path.islink(junit) or not os.path.isfile(junit) or os.path.getsize(junit) > MAX_JUNIT_BYTES:
            return NightCheck("-")
        with open(junit, "rb") as fh:
            root = etree.fromstring(fh.read(), safe_parser())
        counts = [int(root.get(k, "0")) for k in ("tests", "failures", "errors", "skipped")]
        failed = frozenset((c.get("classname", ""), c.get("name", "")) for c in root.iter("testcase")
                           if c.find("failure") is not None or c.find("error") is not None)
        held = sum(1 for c in root.iter("skipped") if c.get("type") == "host-limited")
    except (OSError, ValueError, etree.XMLSyntaxError):
        return NightCheck("-")
    tests, failures, errors, skipped = counts
    host = f" ({held} host-limited)" if held else ""
    if failures or errors:
        return NightCheck(f"RED: {failures + errors} of {tests} figures regressed{host}", True, failed)
    if tests and skipped == tests:
        return NightCheck("not judged")
    return NightCheck(f"ok{host}")


def night_checks(files: Sequence[FileFacts]) -> Dict[str, NightCheck]:
    """Each result's night's check, by its path."""
    return {f.path: night_check(f.path) for f in files}


def _runs(files: Sequence[FileFacts], outdir: str, checks: Optional[Dict[str, NightCheck]] = None) -> List[str]:
    checks = night_checks(files) if checks is None else checks
    verdicts = [(checks[f.path].text, checks[f.path].red) for f in files]
    red = sum(1 for _, r in verdicts if r)
    rows = ["<h2>Runs</h2>", f"<p>{plural(red, 'night')} red by the night's check (its {JUNIT_NAME} beside the "
            "result).</p>" if red else "",
            "<table><tr><th>run</th><th>name</th><th>started</th><th>firmware</th><th>check</th>"
            "<th>report</th></tr>"]
    for i, (f, (verdict, is_red)) in enumerate(zip(files, verdicts), 1):
        link = report_link(f.path, outdir)
        report = f"<a href=\"{e(link)}\">report</a>" if link else "-"
        quick = " (--quick)" if f.quick else ""
        mark = " class=\"change\"" if is_red else ""
        rows.append(f"<tr{mark}><td class=\"n\">{i}</td><td><code>{e(run_name(f.path))}</code>{e(quick)}</td>"
                    f"<td>{e(f.started)}</td><td>{e(f.firmware or '-')}</td><td>{e(verdict)}</td>"
                    f"<td>{report}</td></tr>")
    return [r for r in rows if r] + ["</table>"]


def device_page(device: Device, charts: bool, outdir: str = ".",
                checks: Optional[Dict[str, NightCheck]] = None) -> bytes:
    last = device.trends[0].points[-1] if device.trends else None
    body = [f"<h1>History of {e(device.label)}</h1>",
            f"<p>{device.runs} results; the last: <code>{e(last.path) if last else '-'}</code>. "
            "Each point is a run's headline figure, its bar the range of the values of its measurement "
            "window; dashed lines are the levels between change points, a red ring marks a night the "
            "night's check called red (filled where that figure itself regressed) "
            f"(binary segmentation, permutation test at p &lt; {changepoints.ALPHA:g}, "
            f"at least {changepoints.MIN_SEGMENT} runs per level).</p>"]
    for t in device.trends:
        tail = t.points[-1]
        quick = " (a --quick run)" if tail.quick else ""
        steady = "" if tail.steady in (None, True) else " (window not steady)"
        body += [f"<h2>{e(t.test)}: {e(t.label)} <small>({e(t.figure)})</small></h2>",
                 f"<p>Last: {e(value_text(t, tail.value))} {e(unit_word(t.unit, ANY_TEXT))}{e(quick)}{e(steady)}; "
                 f"{len(t.points)} runs, {plural(len(t.changes), 'change point')}.</p>"]
        if charts:
            body.append(f"<img src=\"{chart_name(device, t)}\" alt=\"{e(t.test)} {e(t.figure)} trend\">")
        body += _changes(t)
    body += _runs(device.files, outdir, checks)
    return _doc(f"tkperf history: {device.label}", body)


def index_page(devices: Sequence[Device], skipped: Sequence[str] = ()) -> bytes:
    body = ["<h1>tkperf history</h1>", "<table><tr><th>device</th><th>results</th><th>first</th><th>last</th>"
            "<th>change points</th></tr>"]
    for d in devices:
        n = sum(len(t.changes) for t in d.trends)
        first, last = (d.files[0].started, d.files[-1].started) if d.files else ("-", "-")
        body.append(f"<tr><td><a href=\"{slug(d.key)}.html\">{e(d.label)}</a></td>"
                    f"<td class=\"n\">{d.runs}</td><td>{e(first)}</td><td>{e(last)}</td>"
                    f"<td class=\"n\">{n}</td></tr>")
    body.append("</table>")
    if skipped:
        body += [f"<h2>Skipped: {plural(len(skipped), 'XML file')} that are not tkperf results</h2>", "<ul>"]
        body += [f"<li><code>{e(p)}</code></li>" for p in skipped] + ["</ul>"]
    return _doc("tkperf history", body)


def write(devices: Sequence[Device], outdir: str, charts: bool = True, skipped: Sequence[str] = ()) -> List[str]:
    """Write index.html, a page per device and (``charts``) an SVG plot per trend; the paths written."""
    os.makedirs(outdir, exist_ok=True)
    written = []
    jobs: List[Tuple[str, object]] = []
    for d in devices:
        path = os.path.join(outdir, f"{slug(d.key)}.html")
        checks = night_checks(d.files)
        atomic_write(path, device_page(d, charts, outdir, checks))
        written.append(path)
        if charts:
            jobs += [(os.path.join(outdir, chart_name(d, t)), chart_spec(t, checks)) for t in d.trends]
    if jobs:
        from tkperf.render import trendcharts

        trendcharts.draw_all(jobs)  # type: ignore[arg-type]
        written += [p for p, _ in jobs]
    path = os.path.join(outdir, "index.html")
    atomic_write(path, index_page(devices, skipped))
    return [path] + written


def chart_spec(t: Trend, checks: Optional[Dict[str, NightCheck]] = None):
    """The trend's plot: its points, window ranges, levels and change points,
    and the nights the check called red (``checks``, by result path)."""
    from tkperf.render.trendcharts import TrendChart

    nan = float("nan")
    values = [p.value for p in t.points]
    found = [(checks or {}).get(p.path, NightCheck("-")) for p in t.points]
    return TrendChart(f"{t.test}: {t.label} ({t.figure})", unit_word(t.unit, ANY_TEXT), tuple(values),
                      tuple(nan if p.lo is None else p.lo for p in t.points),
                      tuple(nan if p.hi is None else p.hi for p in t.points),
                      tuple(changepoints.levels(len(values), _as_points(t), values)),
                      tuple((c.index, "n/a" if c.change_pct is None else f"{c.change_pct:+.1f}%")
                            for c in t.changes),
                      tuple(p.started for p in t.points), tuple(run_name(p.path) for p in t.points),
                      tuple(i for i, c in enumerate(found) if c.red),
                      tuple(i for i, c in enumerate(found) if c.red and (t.test, t.figure) in c.failed))


def _as_points(t: Trend) -> List[changepoints.ChangePoint]:
    return [changepoints.ChangePoint(c.index, c.before, c.after, c.p_value) for c in t.changes]
