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

The same layer holds the run's other stored values (issue 54):
:data:`OPTIONS` and :func:`check_options` for the run's options (a number
in its range, a switch, a test type's option its own parser takes; a file
with one that is not is refused), :data:`FACTS` and :func:`check_facts`
for the facts tkperf reads back from ``<facts>`` (one that is not of its
kind is left out, said), and :func:`check_counts` and :data:`MAX_OPTIONS`
for how many a file may hold (:mod:`tkperf.report.checked` calls them all).

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
from typing import Callable, Dict, List, Mapping, NamedTuple, Optional, Pattern, Tuple, Union

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
    r"exact\.(reads|writes|flushes|discards|moved|dropped)": _COUNT,   # realworld/exact.py
    r"exact\.span": _BYTES,
    r"exact\.length_us": Rule("whole", 0, int(MAX_SECONDS * 1e6), "a time in microseconds"),
    r"exact\.iodepth": _SMALL,
    r"exact\.(lag_max|lag_p99|zero)_us": Rule("whole", 0, int(MAX_SECONDS * 1e6), "a time in microseconds"),
    r"exact\.step\.\d+\.(captured|replayed|edge)": _COUNT,
    r"block\.\d+\.(ios|busy_ms|flushes|flush_ms|discards|discard_ms)": _COUNT,  # realworld/blockstats.py
    r"trace\.\d+\.(ios|busy_us|flushes|discards|lost)": _COUNT,
    r"trace\.\d+\.lat_(mean|p99|max)_us": Rule("number", 0.0, MAX_SECONDS * 1e6, "microseconds"),
    r"trace\.\d+\.step\.\d+\.(ios|lost)": _COUNT,                  # an exact replay's captured steps
    r"trace\.\d+\.step\.\d+\.qd": _RATE,
    r"trace\.\d+\.step\.\d+\.lat_(mean|p99)_us": Rule("number", 0.0, MAX_SECONDS * 1e6, "microseconds"),
})

#: Every numeric ``<param>`` of tkperf's test types.
PARAMS = _table({
    r"(runtime|duration|time_limit|precondition_time|precondition|mixed|round_s|capture_s|"
    r"capture_prewrite_s|prewrite_s|point_time|wdpc_round_s|wdpc_tracked_s|step_time|seq1|rnd|seq2)": _SECONDS,
    r"interval|steady_spacing|steady_point_s": _WHOLE_SECONDS,
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
    r"capture_ios|capture_(flushes|fua|discards)|iolog_(ios|flushes|discards)": _COUNT,
    r"capture_(iops|mbps|qd)": _RATE,
    r"capture_duration": _SECONDS,
    r"capture_lat_(mean|p99)_us|step\.\d+\.lat_(mean|p99)_us": Rule("number", 0.0, MAX_SECONDS * 1e6, "microseconds"),
    r"span": _BYTES,                                      # realworld/replay.py: an exact replay's range
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


#: The longest text read as a number: no number in any range is longer
#: (a float's repr is at most 24 characters); a longer one is refused unread,
#: since turning thousands of digits into an int takes time that grows with
#: their square (Python before 3.11, which caps it at 4,300 digits).
MAX_DIGITS = 100


def shown(text: str) -> str:
    """``text`` as a message quotes it: at most 40 characters, and its length when longer."""
    return repr(text) if len(text) <= 40 else f"{text[:40]!r}... ({len(text):,} characters)"


def _number(text: str, rule: Rule, where: str) -> Union[int, float]:
    quoted = shown(text)
    if len(text) > MAX_DIGITS:
        raise StoredValueError(f"{where} is {quoted}, not {rule.what}")
    try:
        value: Union[int, float] = int(text, 10) if rule.kind == "whole" else float(text)
    except ValueError:
        raise StoredValueError(f"{where} is {quoted}, not {rule.what}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise StoredValueError(f"{where} is {quoted}, not a finite number")
    if not rule.low <= value <= rule.high:
        raise StoredValueError(f"{where} is {quoted}, outside {rule.what}'s range {rule.low:g} to {rule.high:g}")
    return value


def _convert(text: str, rule: Rule, where: str) -> Union[int, float, Tuple[float, float]]:
    text = text.strip()
    if rule.kind in ("pair", "wholes", "numbers"):
        parts = text.split(",")
        if rule.kind == "pair" and len(parts) != 2:
            raise StoredValueError(f"{where} is {shown(text)}, not {rule.what}")
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



# --- how many: a file of tkperf's holds far fewer of each ---------------------------------------

#: The most run options a file may hold (tkperf writes about 30, a test type's
#: plug-in a few more each); the most data items and params one test may hold
#: (a replay keeps six counters a round, a long HDD test some hundreds).  A
#: file with more is refused: reading it is no result's work.
MAX_OPTIONS = 1000
MAX_ITEMS = 100_000


def check_counts(test: TestRun) -> None:
    """A StoredValueError when ``test`` holds more data items or params than any test of tkperf's."""
    for items, what in ((test.data, "data items"), (test.params, "params")):
        if len(items) > MAX_ITEMS:
            raise StoredValueError(f"{len(items):,} {what}, more than the {MAX_ITEMS:,} any test of tkperf holds")


# --- run options: the run's own settings, as ``<option name value>`` -----------------------------

#: The segment seed's range (kit/options.py, MAX_SEED) and the most segments (model/segments.py).
_MAX_SEED = 2 ** 31 - 1
_MAX_SEGMENTS = 65536

#: Every run option that holds a number (kit/options.py, RunOptions): read
#: by the header, the conformance verdict and the steady-state window.
OPTIONS = {
    "active_range": Rule("whole", 1, 100, "a percentage from 1 to 100"),
    "test_range": _BYTES,
    "ar_segments": Rule("whole", 1, _MAX_SEGMENTS, "a segment count"),
    "ar_segment_seed": Rule("whole", 0, _MAX_SEED, "a seed"),
    #: The test range's rules (kit/options.py, RANGE_RULES): 1 an earlier tkperf's, 2 today's.
    "range_rules": Rule("whole", 1, 2, "the test range's rules (1 or 2)"),
    "runtime": _WHOLE_SECONDS,
    "numjobs": _SMALL,
    "iodepth": _SMALL,
    "max_rounds": _SMALL,
    "wipc_loops": _SMALL,
    "window": Rule("whole", 2, 10 ** 6, "a window of at least 2 rounds"),
}
#: Run options that are ``true`` or ``false``.
SWITCHES = ("quick", "refill_buffers", "latency_histograms")


def check_options(options: Mapping[str, str],
                  parsers: Mapping[str, Callable[[str], object]] = {}) -> None:  # noqa: B006 - read only
    """A StoredValueError naming the first run option that is not what a run
    stores there: a number out of :data:`OPTIONS`' range, a switch that is
    neither ``true`` nor ``false``, or a test type's option its own parser
    refuses (``parsers``: field -> parse, raising anything on a bad value);
    also when there are more than :data:`MAX_OPTIONS`.  An empty number or
    switch is an absent one.  Other options are text (a name, a list of
    tests, a purge method) and read as such."""
    if len(options) > MAX_OPTIONS:
        raise StoredValueError(f"the file holds {len(options):,} run options, more than the {MAX_OPTIONS:,} "
                               "any tkperf run stores")
    for key, text in options.items():
        where = f"option {_name(key)}"
        rule = OPTIONS.get(key)
        if rule is not None:
            if text.strip():  # empty: absent, the reader's default (as before the option existed)
                _convert(text, rule, where)
        elif key in SWITCHES and text not in ("true", "false", ""):
            raise StoredValueError(f"{where} is {shown(text)}, not true or false")
        elif key in parsers:
            if len(text) > MAX_TEXT:
                raise StoredValueError(f"{where} is {shown(text)}, longer than any value of it")
            try:
                parsers[key](text)
            except Exception as exc:  # noqa: BLE001 - a type's parser: UsageError, ValueError, OverflowError ...
                why = " ".join(str(exc).split())
                raise StoredValueError(f"{where} is {shown(text)}, not a value its test type takes"
                                       + (f" ({why[:200]})" if why else "")) from None


# --- facts: what tkperf knew of the device and the host, JSON in ``<facts>`` ----------------------

#: The longest text value a parser is given (an option's, a fact's): no value tkperf writes comes near.
MAX_TEXT = 64 * 1024


class Text(NamedTuple):
    """A fact that is text."""


class Switch(NamedTuple):
    """A fact that is true or false."""


class Scalar(NamedTuple):
    """A fact that is text, true or false, or a finite number of at most :data:`MAX_COUNT` either way."""


class Maybe(NamedTuple):
    """A fact that may be null, else ``spec``."""
    spec: object


class Each(NamedTuple):
    """An object whose every member (any name) is ``spec``, at most ``most`` of them."""
    spec: object
    most: int = 4096


class Many(NamedTuple):
    """A list, each item ``spec``, at most ``most`` of them."""
    spec: object
    most: int = 65536


_RUNS = Rule("whole", 0, 10 ** 6, "a count of runs or CPUs")

#: Every fact tkperf reads back from a result file, by its key in ``<facts>``:
#: a mapping is an object whose named members (when there) are of their
#: kind, any other member being free; a :class:`Rule` a JSON number of its
#: kind (``whole``: an integer) in its range.  Facts not named here are kept
#: as found and read by nobody (lsblk's and sysfs's raw answers, notes).
FACTS: Dict[str, object] = {
    # simdrive/hostlimit.py: the emulated SSD's late replies over the run
    "simdrive_host": {"replies": _COUNT, "late_replies": _COUNT, "late_share": _SHARE, "idle_share": _SHARE,
                      "max_late_s": _SECONDS, "late_s": _SECONDS, "threshold": _SHARE},
    # engine/multi.py: the runs that shared the host
    "host_sharing": {"runs": _RUNS, "host_cpus": _RUNS, "host": Text(),
                     "targets": Many({"name": Text(), "device": Text()}, 4096)},
    # engine/opening.py: how a run on a test host reached it
    "remote": {"host": Text(), "fio_host": Text(), "fio_port": Rule("whole", 0, 65535, "a port number")},
    # target/facts.py: an emulated SSD's model and counters at the start
    "simdrive": {"params": Each({"value": Scalar(), "unit": Text(), "what": Text()}, 256),
                 "physical_blocks": _COUNT, "capacity_bytes": _COUNT},
    "target": {"target_kind": {"kind": Text(), "detail": Text()}},
    # store/legacy: what an imported file of the original TKperf said
    "imported": {"tool": Text(), "version": Text(), "source": Text(), "mode": Text(),
                 "not_recorded": Many(Text(), 64), "steady_state": Each(Maybe({"agree": Maybe(Switch())})),
                 "control_characters_replaced": Many(Text(), 4096)},
    # fio/keep.py: fio's output, kept beside the result
    "fio_output": {"dir": Text(), "files": Many({"file": Text(), "bytes": _COUNT, "format": Text(),
                                                 "started": Text(), "what": Text()}, 1 << 20)},
}


def _kind(value: object) -> str:
    """What a JSON value is, in words (a message names it, never quotes it)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, float) or abs(value) < 10 ** 40 else "a number of 40 digits or more"
    if isinstance(value, str):
        return shown(value)
    return "a list" if isinstance(value, list) else "an object"


def _fact_number(value: object, rule: Rule, where: str) -> None:
    number = isinstance(value, int) if rule.kind == "whole" else isinstance(value, (int, float))
    if isinstance(value, bool) or not number:
        raise StoredValueError(f"{where} is {_kind(value)}, not {rule.what}")
    assert isinstance(value, (int, float))
    if isinstance(value, float) and not math.isfinite(value):
        raise StoredValueError(f"{where} is {value!r}, not a finite number")
    if not rule.low <= value <= rule.high:
        raise StoredValueError(f"{where} is {_kind(value)}, outside {rule.what}'s range {rule.low:g} to {rule.high:g}")


def _fact_scalar(value: object, spec: object, where: str) -> None:
    """A :class:`Text`, :class:`Switch` or :class:`Scalar` fact."""
    if isinstance(spec, Text) and not isinstance(value, str):
        raise StoredValueError(f"{where} is {_kind(value)}, not text")
    if isinstance(spec, Switch) and not isinstance(value, bool):
        raise StoredValueError(f"{where} is {_kind(value)}, not true or false")
    if isinstance(spec, Scalar) and not isinstance(value, (str, bool)):
        if isinstance(value, float) and not math.isfinite(value):
            raise StoredValueError(f"{where} is {value!r}, not a finite number")
        if not isinstance(value, (int, float)) or not -MAX_COUNT <= value <= MAX_COUNT:
            raise StoredValueError(f"{where} is {_kind(value)}, not text, true or false or a number of at most "
                                   f"{MAX_COUNT:,} either way")


def _fact(value: object, spec: object, where: str) -> None:
    """A StoredValueError naming ``where`` when ``value`` is not of ``spec``."""
    if isinstance(spec, Maybe):
        if value is not None:
            _fact(value, spec.spec, where)
    elif isinstance(spec, Rule):
        _fact_number(value, spec, where)
    elif isinstance(spec, (Text, Switch, Scalar)):
        _fact_scalar(value, spec, where)
    elif isinstance(spec, Many):
        if not isinstance(value, list):
            raise StoredValueError(f"{where} is {_kind(value)}, not a list")
        if len(value) > spec.most:
            raise StoredValueError(f"{where} holds {len(value):,} items, more than the {spec.most:,} tkperf writes")
        for i, item in enumerate(value):
            _fact(item, spec.spec, f"{where}[{i}]")
    elif not isinstance(value, dict):
        raise StoredValueError(f"{where} is {_kind(value)}, not an object")
    elif isinstance(spec, Each):
        if len(value) > spec.most:
            raise StoredValueError(f"{where} holds {len(value):,} members, more than the {spec.most:,} tkperf writes")
        for key, item in value.items():
            _fact(item, spec.spec, f"{where}.{_name(key)}")
    else:
        assert isinstance(spec, dict)
        for key, part in spec.items():
            if key in value:
                _fact(value[key], part, f"{where}.{key}")


def _name(key: str) -> str:
    """A name from the file, as a message names it (quoted and cut when long)."""
    return key if len(key) <= 40 and key.isprintable() else shown(key)


def check_facts(facts: Dict[str, object]) -> List[str]:
    """Leave out of ``facts`` every fact of :data:`FACTS` that is not of its
    kind; one line each, naming the first member that is not."""
    said = []
    for key, spec in FACTS.items():
        if key in facts:
            try:
                _fact(facts[key], spec, key)
            except StoredValueError as exc:
                del facts[key]
                said.append(f"fact {key} is left out: {exc}")
    return said
