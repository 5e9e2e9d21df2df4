"""The one door through which a test type's stored fields are read: every number a test keeps
as text (its ``<data>`` items and its ``<params>``) is checked against its physical range here.

A result file's attributes are typed by its XML Schema and ranged by
:mod:`tkperf.model.ranges`; the items a test type stores for itself
(``test.data``: a phase's idle time, a job's offset, a zone's size, an
exact replay's counters) and its parameters (``test.params``: a replay
step's left-out share, an interval, a run time) are free text to the
schema.  :data:`DATA` and :data:`PARAMS` name every one of them that holds
a number, with its kind and range; :func:`check_test` looks at each item a
test holds against them (a file read for showing: :mod:`tkperf.report.checked`
leaves a test with a bad one out, named, and shows the rest), and the
readers :func:`number` and :func:`whole` are how the types' code turns them
into numbers, by the same rules, so no stored text reaches a ``float()``
unchecked.  A :class:`StoredValueError` is a ValueError naming the item,
its value and what it should be (docs/resilience.rst, "Result files").

The tables are of tkperf's own test types (a plug-in's keys are its own:
it reads them through :func:`number` and :func:`whole` too, as finite
numbers of at least 0, and checks them in its view's ``check_data``).
The ranges are physical: counts and byte figures a signed 64-bit number
(what the kernel and fio count in), times at most ten years, shares 0 to 1,
percentages 0 to 100; every number finite.  A name not in the tables is
text (a label, a list, a workload's description) and read as such.
"""
from __future__ import annotations

import math
import re
from typing import Mapping, NamedTuple, Optional, Pattern, Tuple, Union

from tkperf.model.results import TestRun

#: Counts, bytes, offsets: what a signed 64-bit counter holds.
MAX_COUNT = 2 ** 63 - 1
#: Ten years, in seconds: no test of tkperf's runs longer.
MAX_SECONDS = 10 * 366 * 86400.0
#: I/O rates and queue depths: well above any device (10^12 IOPS, 10^12 MB/s).
MAX_RATE = 1e12


class StoredValueError(ValueError):
    """A stored field that is not the number its test type writes there."""


class Rule(NamedTuple):
    """How one stored field reads: ``kind`` is ``whole`` (an integer),
    ``number`` (a float), ``pair`` (two floats, comma-separated) or
    ``wholes``/``numbers`` (a comma-separated list of them), each in
    [``low``, ``high``]."""
    kind: str
    low: float
    high: float
    what: str


_SECONDS = Rule("number", 0.0, MAX_SECONDS, "a time in seconds")
_WHOLE_SECONDS = Rule("whole", 0, int(MAX_SECONDS), "a whole number of seconds")
_BYTES = Rule("whole", 0, MAX_COUNT, "a byte count")
_COUNT = Rule("whole", 0, MAX_COUNT, "a count")
_INDEX = Rule("whole", 0, 10 ** 9, "an index")
_RATE = Rule("number", 0.0, MAX_RATE, "a rate")
_SHARE = Rule("number", 0.0, 1.0, "a share from 0 to 1")
_PERCENT = Rule("number", 0.0, 100.0, "a percentage")
_SMALL = Rule("whole", 0, 10 ** 6, "a small whole number")


def _table(rows: Mapping[str, Rule]) -> Tuple[Tuple[Pattern[str], Rule], ...]:
    return tuple((re.compile(pattern), rule) for pattern, rule in rows.items())


#: Every numeric ``<data>`` item of tkperf's test types (the key, a regular expression).
DATA = _table({
    r"idle\.\d+": _SECONDS,                              # kit/shapes.py: a phase's idle time
    r"offset\.\d+\..+": _BYTES,                          # kit/shapes.py: a job's offset
    r"zones\.capacity": _BYTES,                          # hdd-zones
    r"zone\.\d+\.(offset|size)": _BYTES,
    r"hir\.setting\.\d+": _WHOLE_SECONDS,                # hir: the idle time of a setting
    r"hir\.round\.\d+": _INDEX,
    r"hir\.logged\.\d+": Rule("pair", 0.0, 1e6, "two ratios (logged to counted I/Os)"),
    r"sweep_round|capture_round": _INDEX,                # kit/composite.py
    r"exact\.(reads|writes|moved|dropped)": _COUNT,      # realworld/exact.py
    r"exact\.span": _BYTES,
})

#: Every numeric ``<param>`` of tkperf's test types.
PARAMS = _table({
    r"(runtime|duration|time_limit|precondition_time|precondition|mixed|round_s|capture_s|"
    r"capture_prewrite_s|prewrite_s|point_time|wdpc_round_s|wdpc_tracked_s|step_time|seq1|rnd|seq2)": _SECONDS,
    r"interval|steady_spacing": _WHOLE_SECONDS,
    r"write": _SECONDS,                                   # hir, consistency: the write phase
    r"log_avg_msec": Rule("whole", 0, int(MAX_SECONDS * 1000), "milliseconds"),
    r"rt_limit_us": Rule("number", 0.0, MAX_SECONDS * 1e6, "microseconds"),
    r"settle_band_pct|rwmixread": _PERCENT,
    r"span_bytes|steady_min_written|capture_size|smallest_block": _BYTES,
    r"numjobs|cycles|passes|zones|phases|steps|precondition_qd": _SMALL,
    r"iodepth|qd|tc|depths": Rule("wholes", 0, 10 ** 6, "whole numbers (queue depths, job counts)"),
    r"idle": Rule("wholes", 0, int(MAX_SECONDS), "whole numbers of seconds"),
    r"return": _WHOLE_SECONDS,
    r"percentage_random": Rule("numbers", 0.0, 100.0, "percentages"),
    r"capture_ios": _COUNT,
    r"capture_(iops|mbps|qd)": _RATE,
    r"captured_share|share\..+|step\.\d+\.left_out": _SHARE,
    r"step\.\d+\.(iops|mbps|qd|target_qd)": _RATE,
    r"step\.\d+\.duration": _SECONDS,
})


def rule_of(table: Tuple[Tuple[Pattern[str], Rule], ...], key: str) -> Optional[Rule]:
    """The rule for ``key`` in ``table`` (:data:`DATA` or :data:`PARAMS`); None: text."""
    for pattern, rule in table:
        if pattern.fullmatch(key):
            return rule
    return None


def _number(text: str, rule: Rule, where: str) -> Union[int, float]:
    shown = text if len(text) <= 40 else text[:40] + "..."
    try:
        value: Union[int, float] = int(text, 10) if rule.kind == "whole" else float(text)
    except ValueError:
        raise StoredValueError(f"{where} is {shown!r}, not {rule.what}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise StoredValueError(f"{where} is {shown!r}, not a finite number")
    if not rule.low <= value <= rule.high:
        raise StoredValueError(f"{where} is {shown!r}, outside {rule.what}'s range {rule.low:g} to {rule.high:g}")
    return value


def _convert(text: str, rule: Rule, where: str) -> Union[int, float, Tuple[float, float]]:
    text = text.strip()
    if rule.kind in ("pair", "wholes", "numbers"):
        parts = text.split(",")
        if rule.kind == "pair" and len(parts) != 2:
            raise StoredValueError(f"{where} is {text[:40]!r}, not {rule.what}")
        one = Rule("whole" if rule.kind == "wholes" else "number", rule.low, rule.high, rule.what)
        got = tuple(_number(part.strip(), one, where) for part in parts)
        if rule.kind == "pair":
            return float(got[0]), float(got[1])
        return 0  # a list is checked, not read: its type parses it
    return _number(text, rule, where)


def _item(test: TestRun, key: str) -> Tuple[str, str, Optional[Rule]]:
    """(value, where, rule) of the data item or param ``key`` (data first)."""
    if key in test.data or rule_of(DATA, key) is not None:
        return test.data.get(key, ""), f"data item {key}", rule_of(DATA, key)
    return test.params.get(key, ""), f"param {key}", rule_of(PARAMS, key)


def number(test: TestRun, key: str, default: float = 0.0) -> float:
    """The stored number ``key`` (a data item, else a param) by its rule;
    ``default`` when it is absent or empty; a StoredValueError when it is
    not a number in its range."""
    text, where, rule = _item(test, key)
    if not text.strip():
        return default
    if rule is None or rule.kind != "number":
        rule = Rule("number", 0.0, MAX_RATE, "a number") if rule is None or rule.kind != "whole" else rule
    return float(_convert(text, rule, where))  # type: ignore[arg-type]


def whole(test: TestRun, key: str, default: int = 0) -> int:
    """The stored whole number ``key`` by its rule (see :func:`number`)."""
    text, where, rule = _item(test, key)
    if not text.strip():
        return default
    if rule is None or rule.kind != "whole":
        rule = Rule("whole", 0, MAX_COUNT, "a whole number")
    return int(_convert(text, rule, where))  # type: ignore[arg-type]


def pair(test: TestRun, key: str) -> Optional[Tuple[float, float]]:
    """The stored pair ``key`` (``a,b``); None when it is absent or empty."""
    text, where, rule = _item(test, key)
    if not text.strip():
        return None
    got = _convert(text, rule or Rule("pair", 0.0, MAX_RATE, "two numbers"), where)
    assert isinstance(got, tuple)
    return got


def check_test(test: TestRun) -> None:
    """A StoredValueError naming the first data item or param of ``test``
    that is not the number its rule says (empty items are absent ones)."""
    for items, table, what in ((test.data, DATA, "data item"), (test.params, PARAMS, "param")):
        for key, text in items.items():
            rule = rule_of(table, key)
            if rule is not None and text.strip():
                _convert(text, rule, f"{what} {key}")

