"""How tkperf words things, in one place: test names, steady-state verdicts,
durations, numbers and their units.

Everything here is plain text from the result model; ``show`` uses it as
much as the report does, so nothing here may import matplotlib.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional, Tuple

from tkperf.durations import ANY_TEXT, unit_word, unit_words
from tkperf.kit import registry
from tkperf.kit.base import instance_title
from tkperf.kit.composite import WDPC_SERIES
from tkperf.kit.rules import steps_of
from tkperf.model.results import TestRun, format_gb
from tkperf.model.steadystate import DATA_EXCURSION, SLOPE_EXCURSION, Steady, SteadyState
from tkperf.verdict.conformance import PTS_MAX_ROUNDS

#: What a table shows for a figure that was not measured.
NA = "n/a"


def round1_after(t: TestRun) -> str:
    """What round 1 follows: 'after WIPC', or, where a workload dependent
    preconditioning ran before the rounds (PTS 2.0 DIRTH and CBW), 'after
    WIPC and WDPC'."""
    wdpc = t.series.get(WDPC_SERIES)
    return "after WIPC and WDPC" if wdpc is not None and len(wdpc) else "after WIPC"


def test_title(t: TestRun) -> str:
    """Short name of a test instance: IOPS, TP 1024k, LAT, WSAT (a test type
    that is not installed: its name in capitals)."""
    kind = registry.get(t.type)
    if kind is None:
        return t.type.upper()
    view = registry.view_class(kind)
    return view(kind).instance_title(t) if view is not None else instance_title(kind, t)


def unit_of(t: TestRun) -> str:
    """What one measured step of the test is called: round, interval ..."""
    return steps_of(registry.get(t.type), t).unit


def steps_done(t: TestRun) -> int:
    """How many of its steps (:func:`unit_of`) the test measured: its
    rounds, or a sweep's points."""
    return steps_of(registry.get(t.type), t).steps_done(t)


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def is_stream(t: TestRun) -> bool:
    """A test measured as a continuous series of intervals, not in rounds."""
    return not t.rounds and bool(t.series)


def seeks_steady_state(t: TestRun) -> bool:
    """Whether the test's plan sought a steady state (its type's policy,
    :func:`tkperf.testtypes.steady_policy`; a sweep or phases seek none)."""
    return registry.steady_policy(t) is not Steady.NONE


def test_verdict(t: TestRun) -> str:
    """One test's state for ``show``: steady state reached, or why not."""
    if t.status != "complete" and not t.done:
        return f"{t.status}, no {unit_of(t)}s"
    s = t.steady
    if is_stream(t):
        return f"{plural(steps_done(t), unit_of(t))}, stopped by {t.stop_reason or t.status}"
    if not seeks_steady_state(t):  # a sweep or phases: no steady state to reach
        return f"{plural(steps_done(t), unit_of(t))}: {t.stop_reason or t.status}"
    if s is not None and s.steady:
        return f"steady state in rounds {s.first_round}-{s.last_round}" + _late(s, t)
    # rounds that ran the tracked workload (a sweep after them is no such round)
    return (f"NO steady state in {plural(len(t.tracking_values()) or t.done, 'round')}"
            + _failed(t) + ("" if t.status == "complete" else f" ({t.status})"))


def unsteady_variables(t: TestRun) -> list:
    """The tracking variables that failed, for a test that tracks several."""
    return steps_of(registry.get(t.type), t).unsteady_variables(t)


def _failed(t: TestRun) -> str:
    failed = [unit_words(x, ANY_TEXT) for x in unsteady_variables(t)]
    return f" (not steady: {', '.join(failed)})" if failed else ""


# --- steady state ------------------------------------------------------------------

def verdict(test: TestRun, s: Optional[SteadyState]) -> str:
    """The steady-state verdict in words, e.g. 'steady state reached in rounds 3-7'."""
    if s is None or not s.rounds:
        return "no rounds measured"
    span = f"rounds {s.first_round}-{s.last_round}"
    if s.steady:
        return f"steady state reached in {span}" + _late(s, test)
    return (f"NO steady state in {plural(len(test.tracking_values()) or test.done, 'round')} (window {span})"
            + _failed(test))


def _late(s: SteadyState, test: TestRun) -> str:
    """What a steady window that ends after the PTS's last round is (nothing
    for a test that is no PTS test, e.g. an HDD test's repeatability)."""
    kind = registry.get(test.type)
    if s.last_round <= PTS_MAX_ROUNDS or (kind is not None and kind.pts is None):
        return ""
    return f" (20/10), after round {PTS_MAX_ROUNDS}: NOT a PTS steady state"


def _shares(s: SteadyState) -> tuple:
    rng = s.range / s.average if s.average else 0.0
    slope = s.slope_excursion / s.average if s.average else 0.0
    return rng, slope


def window_checks(s: SteadyState) -> str:
    """The two 20/10 checks with their limits, e.g. 'range 12.0% of average (limit 20%), ...'."""
    rng, slope = _shares(s)
    return (f"range {rng:.1%} of average (limit {DATA_EXCURSION:.0%}), "
            f"slope excursion {slope:.1%} (limit {SLOPE_EXCURSION:.0%})")


def short_verdict(s: SteadyState) -> str:
    """The verdict for a chart title: short enough for one line."""
    late = f" (after round {PTS_MAX_ROUNDS}: not PTS)" if s.last_round > PTS_MAX_ROUNDS else ""
    state = f"Steady{late}" if s.steady else "NOT steady"
    span = f"rounds {s.first_round}-{s.last_round}" if s.rounds else "no rounds"
    rng, slope = _shares(s)
    return (f"{state}, {span}: range {rng:.1%} (limit {DATA_EXCURSION:.0%}), "
            f"slope excursion {slope:.1%} (limit {SLOPE_EXCURSION:.0%})")


def tracking_label(test: TestRun) -> str:
    """The tracking figure's label; the runner's labels say 'us', the report writes 'µs'."""
    return test.tracking_label.replace("(us)", "(µs)")


def tracking_labels(test: TestRun) -> str:
    """Every tracking variable of a test, joined (PTS 2.0 IOPS tracks three); else its one label."""
    variables = steps_of(registry.get(test.type), test).tracking_variables(test)
    if not variables:
        return tracking_label(test)
    return ", ".join(tracking_label(v) for v in variables) + " (each must hold 20/10)"


# --- numbers, units, durations -------------------------------------------------------------

@dataclass(frozen=True)
class Metric:
    """How a metric is shown: its scale to display units and the unit."""

    key: str
    scale: float
    unit: str


def metric_display(key: str) -> Metric:
    """``write.bw_bytes`` -> MB/s (x 1e-6), ``lat_*``/``clat_*``/``slat_*`` -> µs, anything else IOPS."""
    name = key.rsplit(".", 1)[-1]
    if name.endswith("bw_bytes"):
        return Metric(key, 1e-6, "MB/s")
    if name.startswith(("lat_", "clat_", "slat_")):
        return Metric(key, 1.0, "µs")
    return Metric(key, 1.0, "IOPS")


def shown_unit(unit: str) -> str:
    """A unit as the reports write it: microseconds are always 'µs' (test
    types' figures and fio's fields say 'us'; :func:`~tkperf.durations.unit_word`)."""
    return unit_word(unit, ANY_TEXT)


def shown_figure(f: Any) -> str:
    """A headline figure's value with its unit as the reports write it: '196.9 µs'
    (``f``: a :class:`~tkperf.model.figures.Figure` or alike)."""
    unit = shown_unit(f.unit)
    return f.text.format(f.value) + (f" {unit}" if unit else "")


def fmt(value: Optional[float], unit: str = "") -> str:
    """A figure as text with thousands separators; 'n/a' when not measured."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return NA
    v = float(value)
    if unit in ("GB",):
        text = f"{v:,.2f}"
    elif unit in ("MB/s", "µs"):
        text = f"{v:,.1f}" if abs(v) < 100000 else f"{v:,.0f}"
    elif abs(v) >= 100:
        text = f"{v:,.0f}"
    elif abs(v) >= 1:
        text = f"{v:,.1f}"
    else:
        text = f"{v:.3g}"
    return text


def oio(numjobs: str, iodepth: str) -> str:
    """Outstanding I/O as the PTS writes it: 'TC 2 x QD 16 = OIO 32'."""
    try:
        total = int(numjobs) * int(iodepth)
    except ValueError:
        return f"TC {numjobs or '?'} x QD {iodepth or '?'}"
    return f"TC {numjobs} x QD {iodepth} = OIO {total}"


#: What a report says for a capacity an original TKperf file did not record.
CAPACITY_UNKNOWN = "unknown (not recorded; --capacity SIZE gives it)"


def capacity_text(size_bytes: int, exact: bool = False) -> str:
    """'480.1 GB' (with ``exact``: '480.1 GB (480,103,981,056 bytes)'), or
    :data:`CAPACITY_UNKNOWN` for size 0."""
    if size_bytes <= 0:
        return CAPACITY_UNKNOWN
    text = format_gb(size_bytes)
    return f"{text} ({size_bytes:,} bytes)" if exact else text


def clock(longest_s: float) -> Tuple[float, str]:
    """(seconds per unit, unit) for a time axis up to ``longest_s``, as the
    charts' own time axes choose them."""
    if longest_s >= 3 * 3600:
        return 3600.0, "hours"
    if longest_s >= 180:
        return 60.0, "minutes"
    return 1.0, "seconds"
