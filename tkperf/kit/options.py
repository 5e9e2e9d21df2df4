"""Run options: parsing of sizes, mixes and durations, the profiles, validation.

Everything a run does is decided here before the device is touched, and
every option is stored in the result file as text so a report can disclose
it and ``--resume`` can check it.
"""
from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, fields, replace
from typing import Dict, Mapping, Optional, Sequence, Set, Tuple, Type

from tkperf.errors import TargetError, UsageError
from tkperf.kit import registry
from tkperf.kit.precondition import WIPC_BS
from tkperf.kit.settings import S, settings_from
from tkperf.kit.values import (  # noqa: F401 - the options' values, re-exported
    MAX_IODEPTH,
    check_depths,
    format_auto_duration,
    format_block_sizes,
    format_depths,
    format_mixes,
    nonempty,
    parse_auto_duration,
    parse_block_sizes,
    parse_depths,
    parse_duration,
    parse_mix,
    parse_mixes,
    parse_size,
)
from tkperf.model import pts as pts_model
from tkperf.model import segments as segments_model
from tkperf.model.results import format_bs
from tkperf.model.steadystate import WINDOW

MAX_NUMJOBS = 256
MAX_RUNTIME = 24 * 3600
MAX_ROUNDS = 1000
MAX_SEED = 2 ** 31 - 1
#: The rules of the test range a run follows (stored as ``range_rules`` with a
#: test range; a file without it is an earlier tkperf's, rules 1): 1, every
#: test ran over the test range and its segments were drawn slots that may
#: touch; 2, only the test types that use a test range (IOPS, TP, LAT and
#: the HDD profile's) run over it, the others over the active range, and
#: segments never touch (:mod:`tkperf.model.segments`).
RANGE_RULES = 2


def narrows(test_range: int, range_rules: int, kind: object) -> bool:
    """Whether a test range (``test_range`` bytes, 0: none) under
    ``range_rules`` narrows a test of type ``kind``: one that says it uses
    it (``uses_test_range``), or under an earlier tkperf's rules (1) every
    test.  :meth:`RunOptions.uses_test_range`; a stored run's header and
    verdict ask it of the options as stored."""
    if not test_range:
        return False
    return range_rules < 2 or bool(getattr(kind, "uses_test_range", False))


def parse_data_pattern(text: str) -> str:
    """``random``, ``zero`` or ``compressible:PCT`` (1..99): the data written."""
    t = text.strip().lower()
    if t in ("random", "zero"):
        return t
    m = re.fullmatch(r"compressible:(\d{1,2})%?", t)
    if m and 1 <= int(m.group(1)) <= 99:
        return f"compressible:{int(m.group(1))}"
    raise UsageError(f"--data-pattern {text!r}: choose random, zero or compressible:PCT (PCT 1 to 99)")


def data_pattern_fio(pattern: str) -> Tuple[Tuple[str, str], ...]:
    """The fio options of a data pattern (random: fio's own random buffers)."""
    if pattern == "zero":
        return (("zero_buffers", "1"),)
    if pattern.startswith("compressible:"):
        return (("refill_buffers", "1"), ("buffer_compress_percentage", pattern.split(":", 1)[1]))
    return ()


REPORT_FORMATS: Tuple[str, ...] = ("rst", "html", "pdf")


def parse_report_formats(formats: str | Sequence[str]) -> Tuple[str, ...]:
    """'rst,html' or ['rst', 'html'] -> ('rst', 'html'), in the order given, once each."""
    parts = formats.split(",") if isinstance(formats, str) else list(formats)
    out = []
    for part in parts:
        f = part.strip().lower()
        if f not in REPORT_FORMATS:
            raise UsageError(f"unknown report format {part.strip()!r}; choose from {', '.join(REPORT_FORMATS)}")
        if f not in out:
            out.append(f)
    if not out:
        raise UsageError("no report format chosen")
    return tuple(out)


def _did_you_mean(word: str, known: Sequence[str]) -> str:
    """': did you mean iops?' for the known name nearest ``word`` (one that
    starts with it first, as ``iop`` for ``iops``), '' when none is near."""
    longer = [k for k in known if k.startswith(word)] if len(word) >= 2 else []
    close = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    guess = longer[0] if len(longer) == 1 else (close[0] if close else "")
    return f": did you mean {guess}?" if guess else ""


def parse_tests(text: str) -> Tuple[str, ...]:
    """'iops,lat' -> the installed test types named, in run order."""
    known = registry.names()
    names = []
    for part in (text or "").split(","):
        name = part.strip().lower()
        if name not in known:
            raise UsageError(f"unknown test {part.strip()!r}{_did_you_mean(name, known)} "
                             f"(choose from {', '.join(known)})")
        if name not in names:
            names.append(name)
    return tuple(n for n in known if n in names)


def _int_in(value: int, lo: int, hi: int, what: str) -> int:
    if not lo <= value <= hi:
        raise UsageError(f"{what} {value} is out of range ({lo}..{hi})")
    return value


OIO = {"enterprise": (4, 32), "client": (2, 16)}
WRITE_CACHE = ("on", "off", "keep")


def _test_options(tests: Sequence[str]) -> list:
    """The options of the test types in ``tests``, in run order, one per
    field (two flags may set one field: ``--wsat-steady``/``--no-wsat-steady``)."""
    out = []
    seen = set()
    for name in tests:
        t = registry.get(name)
        if t is None:
            raise UsageError(f"test {name!r} is not installed")
        for opt in t.options:
            if opt.field not in seen:
                seen.add(opt.field)
                out.append(opt)
    return out


@dataclass(frozen=True)
class RunOptions:
    """Every setting of a run; ``to_dict``/``from_dict`` for the result file.

    The fields are the settings every test shares; ``values`` holds the
    options of the chosen test types (declared by each type as
    :class:`~tkperf.kit.base.Option`), read through the type's typed
    settings: ``opts.of(IopsSettings).bs``.
    """

    tests: Tuple[str, ...] = ()
    device_class: str = "enterprise"
    #: The PTS revision the run follows (:mod:`tkperf.model.pts`).
    pts: str = pts_model.DEFAULT
    #: Percent of the LBA range preconditioned (and tested, unless ``test_range``).
    active_range: int = 100
    #: Bytes at the start of the LBA range the tests use after preconditioning
    #: over ``active_range`` (PTS-C 1.1: 80% / 8 GiB); 0: the active range.
    test_range: int = 0
    #: The test range as this many ActiveRange segments spread randomly across
    #: the active range (:mod:`tkperf.model.segments`); 1: one span at the start.
    ar_segments: int = 1
    #: The seed that places the segments (chosen when the run starts, stored).
    ar_segment_seed: int = 0
    #: The rules of the test range (:data:`RANGE_RULES`; 1: an earlier
    #: tkperf's run, read from a file without them): which tests it narrows
    #: and how its segments are placed (:meth:`uses_test_range`).
    range_rules: int = RANGE_RULES
    #: Drive write cache during the run: on (WCE), off (WCD) or keep as found.
    write_cache: str = "keep"
    runtime: int = 60
    numjobs: int = 4
    iodepth: int = 32
    max_rounds: int = 25
    window: int = WINDOW
    #: New random data for every write: wholly incompressible, the PTS's random
    #: data (fio's buffers reused, only scrambled, compress to about 93%).
    refill_buffers: bool = True
    #: Keep every workload's response-time histogram (fio json+), for every test.
    latency_histograms: bool = False
    #: What is written: random (incompressible), compressible:PCT or zero.
    data_pattern: str = "random"
    purge: str = "auto"
    wipc_loops: int = 2
    quick: bool = False
    values: Tuple[Tuple[str, object], ...] = ()

    def __post_init__(self) -> None:
        _int_in(self.runtime, 1, MAX_RUNTIME, "--runtime")
        _int_in(self.numjobs, 1, MAX_NUMJOBS, "--numjobs")
        _int_in(self.iodepth, 1, MAX_IODEPTH, "--iodepth")
        _int_in(self.max_rounds, 1, MAX_ROUNDS, "--max-rounds")
        _int_in(self.wipc_loops, 0, 100, "--wipc-loops")
        _int_in(self.window, 2, MAX_ROUNDS, "--window")
        _int_in(self.active_range, 1, 100, "--active-range")
        if self.test_range < 0:
            raise UsageError(f"--test-range {self.test_range} must not be negative")
        _int_in(self.ar_segments, 1, segments_model.MAX_SEGMENTS, "--ar-segments")
        if self.ar_segments > 1 and not self.test_range:
            raise UsageError(f"--ar-segments {self.ar_segments} needs --test-range: the segments split the "
                             "test range (without it the tests use the whole active range)")
        _int_in(self.ar_segment_seed, 0, MAX_SEED, "the segment seed")
        _int_in(self.range_rules, 1, RANGE_RULES, "the test range rules")
        parse_data_pattern(self.data_pattern)
        if self.write_cache not in WRITE_CACHE:
            raise UsageError(f"--write-cache {self.write_cache!r}: choose on, off or keep")
        if self.pts not in pts_model.REVISIONS:
            raise UsageError(f"unknown PTS revision {self.pts!r}; choose from {', '.join(pts_model.REVISIONS)}")
        if not self.tests:
            raise UsageError("no tests chosen")
        if self.device_class not in OIO:
            raise UsageError(f"unknown device class {self.device_class!r}; choose enterprise or client")
        have = dict(self.values)
        for opt in _test_options(self.tests):
            if opt.field not in have:
                raise UsageError(f"option {opt.field} is missing")
            if opt.check is not None:
                opt.check(have[opt.field])

    def of(self, kind: Type[S]) -> S:
        """The values of a chosen test type's options as ``kind``, its
        frozen settings dataclass: ``opts.of(IopsSettings).bs``
        (:mod:`tkperf.kit.settings`)."""
        return settings_from(kind, dict(self.values))

    def to_dict(self) -> Dict[str, str]:
        out: Dict[str, str] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "values":
                continue
            if f.name in ("ar_segments", "ar_segment_seed") and not self.segmented:
                continue  # one span: stored as before segments existed
            if f.name == "range_rules" and not self.test_range:
                continue  # no test range: nothing they decide
            if f.name == "tests":
                out[f.name] = ",".join(value)
            elif isinstance(value, bool):
                out[f.name] = "true" if value else "false"
            else:
                out[f.name] = str(value)
        have = dict(self.values)
        for opt in _test_options(self.tests):
            out[opt.field] = opt.to_text(have[opt.field])
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, str]) -> RunOptions:
        kwargs: Dict[str, object] = {}
        for f in fields(cls):
            if f.name not in data or f.name == "values":
                continue
            text = data[f.name]
            if f.name == "tests":
                kwargs[f.name] = parse_tests(text)
            elif f.type in ("bool", bool):
                kwargs[f.name] = text == "true"
            elif f.type in ("int", int):
                kwargs[f.name] = int(text)
            else:
                kwargs[f.name] = text
        tests = kwargs.get("tests") or _default_tests()
        device_class = str(kwargs.get("device_class", "enterprise"))
        if "range_rules" not in kwargs and kwargs.get("test_range"):  # a file from before them: an earlier tkperf's
            kwargs["range_rules"] = 1
        if "pts" not in kwargs:  # a file from before --pts: its class's current revision
            kwargs["pts"] = pts_model.BY_CLASS.get(device_class, pts_model.DEFAULT)
        quick = bool(kwargs.get("quick", False))
        values = []
        for opt in _test_options(tests):  # type: ignore[arg-type]
            if opt.field in data:
                values.append((opt.field, opt.from_text(data[opt.field])))
            else:  # a file from before the option existed
                values.append((opt.field, opt.default_for(device_class, quick)))
        kwargs["values"] = tuple(values)
        return cls(**kwargs)  # type: ignore[arg-type]

    @property
    def revision(self) -> pts_model.Revision:
        return pts_model.REVISIONS[self.pts]

    def active_bytes(self, capacity: int, align: int = 1024 * 1024) -> int:
        """The active range in bytes: ``active_range`` percent of ``capacity``,
        rounded down to ``align`` (the whole capacity at 100%)."""
        return pts_model.active_bytes(capacity, self.active_range, align)

    @property
    def segmented(self) -> bool:
        """Whether the tests use ActiveRange segments (a device-mapper map), not one span."""
        return self.ar_segments > 1

    def test_bytes(self, capacity: int) -> int:
        """The range the tests use: ``--test-range`` when given (never beyond
        the preconditioned range), else the active range; with segments,
        their total (the test range rounded down to whole 4 KiB segments)."""
        tested = pts_model.tested_bytes(capacity, self.active_range, self.test_range)
        if self.segmented:
            return segments_model.segment_size(tested, self.ar_segments) * self.ar_segments
        return tested

    def segment_layout(self, capacity: int) -> segments_model.Layout:
        """Where the run's segments lie on a device of ``capacity`` bytes (a
        UsageError when they do not fit), placed by the run's own rules: an
        earlier tkperf's run regenerates its own layout."""
        return segments_model.layout(self.active_bytes(capacity),
                                     pts_model.tested_bytes(capacity, self.active_range, self.test_range),
                                     self.ar_segments, self.ar_segment_seed,
                                     segments_model.TOUCHING if self.range_rules < 2 else segments_model.APART)

    def uses_test_range(self, kind: object) -> bool:
        """Whether a test of type ``kind`` runs over the test range (in its
        segments) rather than the whole active range: with a test range, a
        type that says it uses one (``uses_test_range``: IOPS, TP and LAT,
        for which SNIA defines the test range's segments, and the HDD
        profile's tests); under an earlier tkperf's rules, every test."""
        return narrows(self.test_range, self.range_rules, kind)

    @property
    def maps_segments(self) -> bool:
        """Whether the run maps its ActiveRange segments: it has several and
        a chosen test runs over them (:meth:`uses_test_range`)."""
        return self.segmented and any(self.uses_test_range(registry.get(n)) for n in self.tests)

    def for_test(self, kind: object) -> RunOptions:
        """The options a test of type ``kind`` runs with: the run's own when
        it uses the test range, else the same without it (the whole active
        range, no segments)."""
        if not self.test_range or self.uses_test_range(kind):
            return self
        return replace(self, test_range=0, ar_segments=1, ar_segment_seed=0)

    def wipc_size(self, capacity: int) -> int:
        """The ``size=`` of the WIPC job: the preconditioning range when the
        tests use a narrower one (their [global] ``size=``) or another device
        (segments), else 0."""
        active = self.active_bytes(capacity)
        if self.segmented:
            return active if active < capacity else 0
        return active if self.test_range and self.test_bytes(capacity) < active else 0


QUICK = dict(runtime=1, max_rounds=5, numjobs=1, iodepth=8, quick=True)


def _default_tests(profile: str = "ssd") -> Tuple[str, ...]:
    return registry.default_names(profile)


def build(overrides: Mapping[str, object], quick: bool = False, device_class: Optional[str] = None,
          pts: Optional[str] = None, profile: str = "ssd") -> RunOptions:
    """Defaults, then the PTS revision's (OIO, active range, write cache)
    and the test types' defaults, then --quick, then what the user gave.
    ``--class`` is a short form of the current revision of that class.
    ``overrides`` may name shared fields and test types' options alike; an
    option of a test type that is not among the tests is refused."""
    rev_id, rev = _revision(device_class, pts)
    device_class = rev.device_class
    given = {k: v for k, v in overrides.items() if v is not None}
    base: Dict[str, object] = dict(device_class=device_class, pts=rev_id, numjobs=rev.numjobs,
                                   iodepth=rev.iodepth, active_range=rev.active_range,
                                   write_cache=("on" if rev.wce else "off") if profile == "ssd" else "keep")
    if quick:
        base.update(QUICK)
    shared = {f.name for f in fields(RunOptions)} - {"values"}
    base.update({k: v for k, v in given.items() if k in shared})
    tests: Tuple[str, ...] = tuple(base.get("tests") or _default_tests(profile))  # type: ignore[arg-type]
    base["tests"] = tests
    base["values"] = _test_values(tests, given, shared, device_class, quick)
    _segments_defaults(base, rev, "ar_segments" in given)
    return RunOptions(**base)  # type: ignore[arg-type]


def _revision(device_class: Optional[str], pts: Optional[str]) -> Tuple[str, pts_model.Revision]:
    """The PTS revision of ``--pts`` (or the current one of ``--class``), and its id;
    an unknown class, or one that contradicts ``--pts``, is refused."""
    if device_class is not None and device_class not in OIO:
        raise UsageError(f"unknown device class {device_class!r}; choose enterprise or client")
    rev_id = pts_model.parse(pts) if pts else pts_model.BY_CLASS[device_class or "enterprise"]
    rev = pts_model.REVISIONS[rev_id]
    if device_class is not None and device_class != rev.device_class:
        raise UsageError(f"--class {device_class} contradicts --pts {rev_id} ({rev.device_class})")
    return rev_id, rev


def _test_values(tests: Tuple[str, ...], given: Mapping[str, object], shared: Set[str],
                 device_class: str, quick: bool) -> Tuple[Tuple[str, object], ...]:
    """The chosen test types' option values: given, else their default; an
    option of a test type that is not among the tests is refused."""
    values = []
    for opt in _test_options(tests):
        values.append((opt.field, given[opt.field] if opt.field in given
                       else opt.default_for(device_class, quick)))
    known = {opt.field for opt in _test_options(tests)}
    for key in given:
        if key not in shared and key not in known:
            raise UsageError(f"option {_flag(key)} belongs to a test that is not among --tests "
                             f"({','.join(tests)})")
    return tuple(values)


def _segments_defaults(base: Dict[str, object], rev: pts_model.Revision, asked: bool) -> None:
    """``--ar-segments``: the revision's count with a test range (PTS-C 1.1:
    2,048), else 1; a seed for the layout when there are several, chosen now."""
    if asked and not base.get("test_range"):
        raise UsageError(f"--ar-segments {base.get('ar_segments')} needs --test-range: the segments split "
                         "the test range (without it the tests use the whole active range)")
    if not asked:
        base["ar_segments"] = rev.test_range_segments if base.get("test_range") and rev.test_range_segments else 1
    if int(base.get("ar_segments", 1)) > 1 and not base.get("ar_segment_seed"):  # type: ignore[call-overload]
        base["ar_segment_seed"] = int.from_bytes(os.urandom(4), "big") % MAX_SEED + 1


def _flag(field_name: str) -> str:
    for t in registry.types().values():
        for opt in t.options:
            if opt.field == field_name:
                return opt.flags[0]
    return "--" + field_name.replace("_", "-")


def check_fits(opts: RunOptions, capacity: int, logical_sector: int = 0) -> None:
    """The largest I/O the run issues must fit the target many times over, and
    the smallest must be a whole number of its logical sectors (4Kn drives
    cannot take 512 B transfers)."""
    for n in opts.tests:
        small = registry.get(n).blocks(opts).smallest  # type: ignore[union-attr]
        if small and logical_sector and small % logical_sector:
            raise TargetError(f"--tests {n} issues {format_bs(small)} B transfers; the target has "
                              f"{logical_sector} B logical sectors and cannot run them (leave such block sizes out)")
    largest = max([WIPC_BS] + [registry.get(n).blocks(opts).largest for n in opts.tests])  # type: ignore[union-attr]
    needed = largest * max(opts.numjobs, 1) * 16
    if capacity < needed:
        raise TargetError(f"the target's {capacity} bytes are too small for block size "
                         f"{format_bs(largest)} with {opts.numjobs} jobs (needs {needed} bytes)")


def differences(a: Mapping[str, str], b: Mapping[str, str]) -> Dict[str, Tuple[str, str]]:
    """Options that differ between two runs: name -> (a's value, b's value)."""
    out = {}
    for key in sorted(set(a) | set(b)):
        if a.get(key, "") != b.get(key, ""):
            out[key] = (a.get(key, ""), b.get(key, ""))
    return out


