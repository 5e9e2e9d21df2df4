"""The history's HTML pages: an index of devices and a page per device with its trends' plots.

Every string from a result file (device names, test and figure keys,
paths) is escaped with :func:`html.escape` and appears as text only: the
only links and images are the pages' own files, whose names
:func:`slug` builds from safe characters and a hash.
"""
from __future__ import annotations

import hashlib
import html
import os
import re
from typing import List, Sequence, Tuple

from tkperf.history import changepoints
from tkperf.history.trends import Device, Trend
from tkperf.model.store import atomic_write

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


def _changes(trend: Trend) -> List[str]:
    if not trend.changes:
        return ["<p>No change point.</p>"]
    rows = ["<table><tr><th>run</th><th>started</th><th>before</th><th>after</th><th>change</th>"
            "<th>p</th><th>file where the new level begins</th></tr>"]
    for c in trend.changes:
        pct = "n/a" if c.change_pct is None else f"{c.change_pct:+.1f}%"
        rows.append(f"<tr class=\"change\"><td class=\"n\">{c.index + 1}</td><td>{e(c.started)}</td>"
                    f"<td class=\"n\">{e(value_text(trend, c.before))}</td>"
                    f"<td class=\"n\">{e(value_text(trend, c.after))}</td><td class=\"n\">{e(pct)}</td>"
                    f"<td class=\"n\">{c.p_value:.3f}</td><td><code>{e(c.path)}</code></td></tr>")
    return rows + ["</table>"]


def chart_name(device: Device, trend: Trend) -> str:
    return f"{slug(device.key)}-{slug(trend.test + '.' + trend.figure)}.png"


def device_page(device: Device, charts: bool) -> bytes:
    last = device.trends[0].points[-1] if device.trends else None
    body = [f"<h1>History of {e(device.label)}</h1>",
            f"<p>{device.runs} results; the last: <code>{e(last.path) if last else '-'}</code>. "
            "Each point is a run's headline figure, its bar the range of the values of its measurement "
            "window; dashed lines are the levels between change points "
            f"(binary segmentation, permutation test at p &lt; {changepoints.ALPHA:g}, "
            f"at least {changepoints.MIN_SEGMENT} runs per level).</p>"]
    for t in device.trends:
        tail = t.points[-1]
        quick = " (a --quick run)" if tail.quick else ""
        steady = "" if tail.steady in (None, True) else " (window not steady)"
        body += [f"<h2>{e(t.test)}: {e(t.label)} <small>({e(t.figure)})</small></h2>",
                 f"<p>Last: {e(value_text(t, tail.value))} {e(t.unit)}{e(quick)}{e(steady)}; "
                 f"{len(t.points)} runs, {plural(len(t.changes), 'change point')}.</p>"]
        if charts:
            body.append(f"<img src=\"{chart_name(device, t)}\" alt=\"{e(t.test)} {e(t.figure)} trend\">")
        body += _changes(t)
    return _doc(f"tkperf history: {device.label}", body)


def index_page(devices: Sequence[Device]) -> bytes:
    body = ["<h1>tkperf history</h1>", "<table><tr><th>device</th><th>results</th><th>change points</th></tr>"]
    for d in devices:
        n = sum(len(t.changes) for t in d.trends)
        body.append(f"<tr><td><a href=\"{slug(d.key)}.html\">{e(d.label)}</a></td>"
                    f"<td class=\"n\">{d.runs}</td><td class=\"n\">{n}</td></tr>")
    return _doc("tkperf history", body + ["</table>"])


def write(devices: Sequence[Device], outdir: str, charts: bool = True) -> List[str]:
    """Write index.html, a page per device and (``charts``) a PNG per trend; the paths written."""
    os.makedirs(outdir, exist_ok=True)
    written = []
    jobs: List[Tuple[str, object]] = []
    for d in devices:
        path = os.path.join(outdir, f"{slug(d.key)}.html")
        atomic_write(path, device_page(d, charts))
        written.append(path)
        if charts:
            jobs += [(os.path.join(outdir, chart_name(d, t)), chart_spec(t)) for t in d.trends]
    if jobs:
        from tkperf.render import trendcharts  # matplotlib loads only when there is a chart to draw

        trendcharts.draw_all(jobs)  # type: ignore[arg-type]
        written += [p for p, _ in jobs]
    path = os.path.join(outdir, "index.html")
    atomic_write(path, index_page(devices))
    return [path] + written


def chart_spec(t: Trend):
    from tkperf.render.trendcharts import TrendChart  # matplotlib loads only when there is a chart to draw

    nan = float("nan")
    values = [p.value for p in t.points]
    return TrendChart(f"{t.test}: {t.label} ({t.figure})", t.unit, tuple(values),
                      tuple(nan if p.lo is None else p.lo for p in t.points),
                      tuple(nan if p.hi is None else p.hi for p in t.points),
                      tuple(changepoints.levels(len(values), _as_points(t), values)),
                      tuple((c.index, "n/a" if c.change_pct is None else f"{c.change_pct:+.1f}%")
                            for c in t.changes),
                      tuple(p.started for p in t.points))


def _as_points(t: Trend) -> List[changepoints.ChangePoint]:
    return [changepoints.ChangePoint(c.index, c.before, c.after, c.p_value) for c in t.changes]
