"""Is a run a PTS-conformant measurement?  Every deviation, in plain words.

A run is conformant only when every parameter matches the PTS revision it
follows (:mod:`tkperf.model.pts`) and every test ran as the revision says.
The check works on what a result file stores (the options as text, the
device, the tests, the events), so the dry run (options and device alone),
``show --json``, the summary and every report header give the same answer.

Settings common to every test are checked here; each test type adds the
deviations of its own options (a narrowed matrix, a shorter WSAT) through
:meth:`tkperf.kit.base.PtsRules.deviations` (the type's ``pts``; a
type whose ``pts`` is None is not a PTS test).

A run of the HDD profile (``tkperf hdd run``) follows no PTS revision: its
verdict is headed :data:`HDD_HEADING` and lists disclosures (what the run
did, set against tkperf's defaults), never a PTS revision's requirement.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from tkperf.durations import unit_words
from tkperf.errors import UsageError
from tkperf.kit import registry
from tkperf.kit.options import RunOptions
from tkperf.kit.rules import steps_of
from tkperf.model import pts
from tkperf.model.results import DeviceInfo, RunResult, TestRun
from tkperf.model.steadystate import Steady
from tkperf.simdrive import TRANSPORT as EMULATED
from tkperf.target import purge, writecache

PTS_RUNTIME_S = 60
PTS_MAX_ROUNDS = 25
PTS_WINDOW = 5
PTS_WIPC_LOOPS = 2
#: The verdict's heading for a run of the HDD profile, which no PTS revision covers.
HDD_HEADING = "HDD profile: not a SNIA PTS run"
HDD = "hdd"
#: The HDD profile's disclosure of a write cache no tool could read on the target.
HDD_CACHE_UNKNOWN = "write cache state unknown (tkperf could not read it on this target)"


@dataclass(frozen=True)
class Conformance:
    """The verdict: ``conformant`` when ``deviations`` is empty.  A run that
    follows no PTS revision (``pts_run`` False: the HDD profile) is never
    conformant, and its lines are disclosures, not deviations."""

    revision: str
    deviations: Tuple[str, ...]
    pts_run: bool = True

    @property
    def conformant(self) -> bool:
        return self.pts_run and not self.deviations

    @property
    def line_word(self) -> str:
        """What one of its lines is called: 'deviation' ('disclosure' for a run that follows no PTS)."""
        return "deviation" if self.pts_run else "disclosure"

    def as_dict(self) -> Dict[str, object]:
        """What ``show --json`` prints under ``conformance``: whether the run
        is conformant, its lines, the one-line ``verdict`` and whether it
        follows a PTS revision at all (``pts_run``; false for the HDD profile)."""
        return {"conformant": self.conformant, "deviations": list(self.deviations),
                "verdict": self.sentence(), "pts_run": self.pts_run}

    def sentence(self) -> str:
        """One line: 'PTS-conformant (SNIA PTS 2.0.2, enterprise)' or the
        count of deviations; for the HDD profile 'HDD profile: not a SNIA PTS
        run: 5 disclosures'."""
        n = len(self.deviations)
        if not self.pts_run:
            return self.revision + (f": {n} {self.line_word}{'s' if n != 1 else ''}" if n else "")
        if self.conformant:
            return f"PTS-conformant ({self.revision})"
        return f"NOT PTS-conformant ({self.revision}): {n} deviation{'s' if n != 1 else ''}"

    def heading(self) -> str:
        """The verdict without its count: 'NOT PTS-conformant (SNIA PTS 2.0.2,
        enterprise)', 'PTS-conformant (...)' or :data:`HDD_HEADING`."""
        if not self.pts_run:
            return self.revision
        return f"{'' if self.conformant else 'NOT '}PTS-conformant ({self.revision})"


def _settings(options: Mapping[str, str], device: DeviceInfo, profile: str,
              before_run: bool = True) -> List[str]:
    """Deviations that the options and the target alone show.  Before the
    run the write-cache option is judged; after it, the state recorded.
    For the HDD profile, disclosures instead (:func:`_hdd_settings`)."""
    if profile == HDD:
        return _hdd_settings(options, device, before_run)
    rev = pts.of_options(dict(options))
    out = _common(options, device, "instead of")
    loops = _int(options.get("wipc_loops"))
    if loops is not None and loops != PTS_WIPC_LOOPS:
        out.append(f"WIPC writes {loops}x the active range instead of {PTS_WIPC_LOOPS}x")
    purge = options.get("purge", "auto")
    if purge == "none":
        out.append("no PURGE before the tests (--purge none)")
    elif purge == "discard":
        out.append("PURGE by whole-device discard, which is not a PTS PURGE")
    elif purge.startswith("cmd:"):
        out.append("PURGE by a vendor command (--purge-cmd), which tkperf cannot count as a PTS PURGE")
    pattern = options.get("data_pattern", "random")
    if pattern != "random":
        out.append(f"data pattern {pattern} instead of random (incompressible) data: a drive that "
                   "compresses or deduplicates would look faster than it is")
    elif options.get("refill_buffers") == "false" and not _all_refill(options):
        out.append("data pattern: fio's random buffers reused (scrambled, not refilled: mostly, not wholly "
                   "incompressible) instead of the PTS's random data; refill_buffers makes it wholly "
                   "incompressible")
    out += _test_range(options, device, rev)
    want = "on" if rev.wce else "off"
    wc = options.get("write_cache", "")
    if before_run and wc and wc != want:
        out.append(f"write cache {'kept as found' if wc == 'keep' else 'set ' + wc} "
                   f"({rev.title} requires {rev.write_cache})")
    return out


def _common(options: Mapping[str, str], device: DeviceInfo, against: str) -> List[str]:
    """The lines every profile words alike: --quick, the target, and the
    round settings set ``against`` ('instead of') the PTS's values, which are
    tkperf's defaults too."""
    out: List[str] = []
    if options.get("quick") == "true":
        out.append("--quick smoke-test profile (1 s workloads, narrowed matrices, few rounds)")
    if device.kind == "file":
        out.append("the target is a file, not a raw block device")
    if device.transport == EMULATED:
        out.append("emulated SSD: the target is tkperf's FTL model (tkperf simdrive), not a drive")
    runtime = _int(options.get("runtime"))
    if runtime is not None and runtime != PTS_RUNTIME_S:
        out.append(f"workloads run {runtime} s each {against} {PTS_RUNTIME_S} s")
    rounds = _int(options.get("max_rounds"))
    if rounds is not None and rounds != PTS_MAX_ROUNDS:
        # more rounds is no kinder: a steady state after round 25 is not the PTS's (docs/method.rst)
        out.append(f"at most {rounds} rounds per test {against} {PTS_MAX_ROUNDS}")
    window = _int(options.get("window"))
    if window is not None and window != PTS_WINDOW:
        out.append(f"steady state judged over {window} rounds {against} {PTS_WINDOW}")
    return out


def _hdd_settings(options: Mapping[str, str], device: DeviceInfo, before_run: bool) -> List[str]:
    """What a run of the HDD profile did that a reader must know, as
    disclosures: no PTS revision applies to a hard disk, so nothing here is
    set against one; a setting that differs is set against tkperf's default."""
    out = ["hdd run: the SNIA PTS is a solid-state test; this profile skips PURGE and WIPC"]
    out += _common(options, device, "instead of the default")
    loops = _int(options.get("wipc_loops"))
    if loops:
        out.append(f"a WIPC of {loops}x the active range before the tests (the HDD profile's default: none)")
    purge = options.get("purge", "none")
    if purge.startswith("cmd:"):
        out.append("the disk was purged by a vendor command (--purge-cmd) before each test")
    elif purge != "none":
        out.append(f"the disk was purged before each test (--purge {purge}; the HDD profile's default: none)")
    pattern = options.get("data_pattern", "random")
    if pattern != "random":
        out.append(f"data pattern {pattern} instead of random data")
    active = _int(options.get("active_range"))
    if active is not None and active != 100:
        out.append(f"the tests use {active}% of the disk's LBA range")
    test_range = _int(options.get("test_range")) or 0
    if test_range:
        out.append(f"the tests use the first {pts.range_text(test_range)} of the LBA range")
    wc = options.get("write_cache", "")
    if before_run and wc in ("on", "off"):
        out.append(f"write cache set {wc} (the HDD profile's default: kept as found)")
    return out


def _test_range(options: Mapping[str, str], device: DeviceInfo, rev: pts.Revision) -> List[str]:
    """The test range's deviations: the revision's range rules when a test
    ran (or runs) over it; a test SNIA does not define it for that an
    earlier tkperf narrowed to it (``range_rules`` 1: every test); and
    segments of an earlier tkperf's layout, which may touch."""
    asked = _int(options.get("test_range")) or 0
    if not asked:
        return rev.range_deviations(_int(options.get("active_range")), 0, device.size_bytes or 0)
    count = _int(options.get("ar_segments")) or 1
    rules = _int(options.get("range_rules")) or 1
    uses, narrowed = _over_test_range(options, rules)
    if not uses and not narrowed:  # no test runs over it: only the active range counts
        return rev.range_deviations(_int(options.get("active_range")), 0, device.size_bytes or 0)
    out = rev.range_deviations(_int(options.get("active_range")), asked, device.size_bytes or 0, count)
    if narrowed:
        out.append(_narrowed(narrowed, count))
    if count > 1 and rules < 2:
        out += _touching(options, device, count)
    return out


def _over_test_range(options: Mapping[str, str], rules: int) -> Tuple[List[str], List[str]]:
    """The chosen tests that run over the test range: those whose type uses
    one, and (their short names) those an earlier tkperf's rules narrowed to it."""
    names = [n for n in options.get("tests", "").split(",") if n]
    kinds = {n: registry.get(n) for n in names}
    uses = [n for n in names if getattr(kinds[n], "uses_test_range", False)]
    narrowed = [n for n in names if n not in uses] if rules < 2 else []
    return uses, [getattr(kinds[n], "short", "") or n.upper() for n in narrowed]


def _narrowed(shown: List[str], count: int) -> str:
    """That the tests ``shown`` (not defined over a test range) ran over it, in ``count`` segments."""
    where = f"in {count:,} ActiveRange segments" if count > 1 else "one span at the start of the LBA range"
    return (f"{', '.join(shown)} ran over the test range ({where}), not the whole active range: SNIA "
            "defines the test range for three PTS tests only; an earlier tkperf narrowed every test")


def _touching(options: Mapping[str, str], device: DeviceInfo, count: int) -> List[str]:
    """How an earlier tkperf's segments lie: how many neighbours touch when
    the layout can be regenerated here (none: nothing to say), else that they may."""
    said = ("ActiveRange segments may touch (layout of an earlier tkperf; SNIA: \"ActiveRange segments shall "
            "not touch to form a single segment\")")
    if not device.size_bytes:
        return [said]
    try:
        lay = RunOptions.from_dict(options).segment_layout(device.size_bytes)
    except (UsageError, ValueError, TypeError, KeyError):
        return [said]
    return [said.replace("may touch", f"touch: {lay.touching:,} of {count - 1:,} neighbouring pairs", 1)] \
        if lay.touching else []


def _all_refill(options: Mapping[str, str]) -> bool:
    """Whether every chosen test writes new random data whatever the run's
    ``refill_buffers`` (a type whose ``refills_buffers`` is true: CBW)."""
    kinds = [registry.get(n) for n in options.get("tests", "").split(",") if n]
    return bool(kinds) and all(getattr(k, "refills_buffers", False) for k in kinds)


def _tests(options: Mapping[str, str], before_run: bool = False, profile: str = "ssd") -> List[str]:
    """What each chosen test type says of its own options (for the HDD
    profile, which follows no PTS revision, only what cannot be checked)."""
    rev = pts.of_options(dict(options))
    out: List[str] = []
    names = [n for n in options.get("tests", "").split(",") if n]
    for name in names:
        kind = registry.get(name)
        if kind is None:
            out.append(f"test type {name!r} is not installed, its settings cannot be checked")
            continue
        if profile == HDD:
            continue
        if kind.pts is None:
            out.append(f"{kind.name} ({kind.title}) is not a SNIA PTS test")
            continue
        out += kind.pts.deviations(kind, options, rev)
        if before_run:
            out += kind.pts.planned_deviations(kind, options, rev)
    return out


def of_settings(options: Mapping[str, str], device: DeviceInfo, profile: str = "ssd") -> Conformance:
    """The verdict on a run's settings before it runs (the dry run)."""
    found = _settings(options, device, profile) + _tests(options, before_run=True, profile=profile)
    return _verdict(options, profile, found)


def _verdict(options: Mapping[str, str], profile: str, found: Sequence[str]) -> Conformance:
    """The verdict on ``found``, each line said once: against the run's PTS
    revision, or for the HDD profile headed :data:`HDD_HEADING`."""
    lines = tuple(dict.fromkeys(found))
    if profile == HDD:
        return Conformance(HDD_HEADING, lines, pts_run=False)
    return Conformance(pts.of_options(dict(options)).title, lines)


def of_target(options: Mapping[str, str], device: DeviceInfo, profile: str,
              purged: Sequence[str]) -> Tuple[Conformance, Tuple[str, ...]]:
    """The verdict the real run on ``device`` would reach, as far as the
    target shows it before anything runs, and what only the run can tell.

    Beyond :func:`of_settings`: the PURGE ``--purge auto`` picks for this
    transport (a loop device's discard is not a PTS PURGE) for the tests
    ``purged``, and a write cache that no tool can reach on this target
    (unknown, as the run will record it), each worded as the result's own
    verdict words it (:func:`_purges`, :func:`_measured`).
    """
    rev = pts.of_options(dict(options))
    found = _settings(options, device, profile) + _tests(options, before_run=True, profile=profile)
    unknown = []
    requested = options.get("purge", "auto")
    if requested == "auto" and purged and profile != "hdd":
        method, _note = purge.choose(requested, device)
        if method not in purge.PTS_METHODS and method != "none":
            found.append(f"purged by {method}, which is not a PTS PURGE ({', '.join(purged)})")
        else:
            unknown.append(f"whether the drive supports a {method.upper()} PURGE (read at the start of each test)")
    if profile != HDD:
        if writecache.without_volatile_cache(device):
            if rev.write_cache != "WCD":
                found.append(f"write cache was WCD during the run ({rev.title} requires {rev.write_cache})")
        elif not writecache.transport_kind(device):
            found.append(f"write cache state unknown ({rev.title} requires {rev.write_cache})")
        else:
            unknown.append(f"the write cache state ({rev.title} requires {rev.write_cache}; "
                           "read and set at the start of the run)")
    elif not writecache.transport_kind(device):
        found.append(HDD_CACHE_UNKNOWN)
    else:
        unknown.append("the write cache state (read at the start of the run)")
    unknown.append("whether each test reaches steady state within its rounds")
    return _verdict(options, profile, found), tuple(unknown)


def _purges(run: RunResult) -> List[str]:
    """Tests that did not start from a PTS PURGE, one line per method used
    (no PURGE at all is a setting, said once with the settings)."""
    if run.options.get("purge") in ("none", "discard"):
        return []
    by_method: Dict[str, List[str]] = {}
    for t in run.tests:
        if t.purge is not None and not t.purge.pts_purge:
            by_method.setdefault(t.purge.method, []).append(t.key)
    return [f"purged by {m}, which is not a PTS PURGE ({', '.join(keys)})" for m, keys in by_method.items()]


def _measured(run: RunResult) -> List[str]:
    """Deviations only the results show (for the HDD profile, disclosures:
    no PTS revision's write cache, PURGE or steady-state rule applies)."""
    rev = pts.of_options(run.options)
    hdd = run.profile == HDD
    out = _cache_measured(run, rev, hdd)
    if run.status != "complete":
        out.append(f"the run did not complete (status: {run.status})")
    resumed = sorted({e.test for e in run.events if e.kind == "resume" and e.test})
    if run.resumed:
        out.append("the run was interrupted and resumed" + (f" ({', '.join(resumed)})" if resumed else ""))
    out += [] if hdd else _purges(run)
    for t in run.tests:
        out += _test_measured(run, t, rev, hdd)
    return out


def _cache_measured(run: RunResult, rev: pts.Revision, hdd: bool) -> List[str]:
    """The write cache the run recorded, against the revision's (for the HDD profile, said as it was)."""
    recorded = run.device.write_cache
    if hdd:
        asked = run.options.get("write_cache", "")
        how = f"set {asked} by --write-cache" if asked in ("on", "off") else "kept as found"
        return [f"write cache {recorded} during the run ({how})" if recorded in ("WCE", "WCD")
                else HDD_CACHE_UNKNOWN]
    if recorded not in ("WCE", "WCD"):
        # '' or, in files of older tkperf, sysfs's 'write back': not the drive's setting
        return [f"write cache state unknown ({rev.title} requires {rev.write_cache})"]
    if recorded != rev.write_cache:
        return [f"write cache was {recorded} during the run ({rev.title} requires {rev.write_cache})"]
    return []


def _test_measured(run: RunResult, t: TestRun, rev: pts.Revision, hdd: bool) -> List[str]:
    """One test's deviations in its results: its type's own, no (or a late) steady state, not complete."""
    out: List[str] = []
    kind = registry.get(t.type)
    if kind is not None and kind.pts is not None and not hdd:
        out += kind.pts.result_deviations(kind, t, run.options, rev, run.device.size_bytes)
    sought = registry.steady_policy(t) is not Steady.NONE
    if t.status == "complete" and sought and t.rounds and not (t.steady and t.steady.steady):
        failed = [unit_words(x) for x in steps_of(kind, t).unsteady_variables(t)]  # µs where it can be shown
        out.append(f"{t.key}: no steady state within {len(t.tracking_values()) or len(t.rounds)} rounds"
                   + (f" (not steady: {', '.join(failed)})" if failed else ""))
    elif t.status == "complete" and sought and late_window(t) and not hdd:
        out.append(f"{t.key}: steady state only in rounds {t.steady.first_round}-{t.steady.last_round}, "  # type: ignore[union-attr]  # late_window: steady is set
                   f"after round {PTS_MAX_ROUNDS}: not a PTS steady state")
    elif t.status not in ("complete", ""):
        out.append(f"{t.key}: test {t.status}")
    return out


def late_window(t: TestRun) -> bool:
    """A window that ends after round 25: steady by the 20/10 rule, but not a
    PTS steady state (the PTS allows at most 25 rounds).  Only for a test
    measured in rounds: a stream's window (WSAT's) holds interval numbers,
    and its steady state is judged by its own stop rules (its type's
    ``result_deviations``)."""
    return bool(t.steady and t.steady.rounds and t.steady.last_round > PTS_MAX_ROUNDS
                and steps_of(registry.get(t.type), t).unit == "round")


def of_run(run: RunResult) -> Conformance:
    """The verdict on a run: its settings, then what its results show."""
    profile = run.profile or "ssd"
    info = run.facts.get("imported") if isinstance(run.facts, dict) else None
    if isinstance(info, dict):  # an older tool's file: what it did not record cannot be judged
        missing = "; ".join(str(x) for x in info.get("not_recorded", [])) or "its settings"
        source = f"imported from {info.get('tool') or 'TKperf'} {info.get('version') or '1.x'}"
        lines = (f"imported from a result file of the original TKperf {info.get('version') or '1.x'}: "
                 f"cannot be known: {missing}",) + tuple(imported_caveats(run))
        if profile == HDD:
            return Conformance(f"{HDD_HEADING} ({source})", lines, pts_run=False)
        return Conformance(f"revision not recorded ({source})", lines)
    settings = _settings(run.options, run.device, profile, before_run=False)
    return _verdict(run.options, profile, settings + _tests(run.options, profile=profile) + _measured(run))


#: What the original TKperf's WSAT measured (see :func:`imported_caveats`).
REPLAYED_WSAT = ("{key}: the original TKperf's WSAT measures no write cliff: each of its rounds is a new "
                 "fio process with fio's default randrepeat=1 (and no norandommap), so every round rewrites "
                 "round 1's offsets in the same order (on tkperf's emulated SSD: 4.2 capacities written, "
                 "91.9% of the LBAs touched, no garbage collection, every round at burst speed); "
                 "its figures are not random-write saturation")
#: ... and its other random-write tests, whose rounds repeat their offsets the same way.
REPLAYED_ROUNDS = ("{key}: each round of the original TKperf ran every workload as a new fio process with "
                   "fio's default randrepeat=1, so its random workloads repeat the same offsets every round")


#: What an imported WSAT's first round is, where tkperf's own says 'first interval after the purge (FOB)'.
IMPORTED_FOB = "WSAT: first round of the original TKperf, no cliff measured"
#: ... and what the other figures of a test the original TKperf replayed are ({definition}: tkperf's own words).
IMPORTED_FIGURE = "{definition}, of the original TKperf (every round replays the same offsets)"


def imported_figure(run: RunResult, test: TestRun, key: str, definition: str, source: str) -> Tuple[str, str]:
    """A summary figure's definition and source (where it was measured) for
    a test of an imported run that :func:`imported_caveats` names: the
    import's own words, so a comparison sets it in a row of its own, never
    beside tkperf's figure of that name; unchanged for any other test."""
    if test.type not in REPLAYED_TYPES or not replays(run):
        return definition, source
    if test.type == "wsat" and key == "fob_iops":
        return IMPORTED_FOB, "WSAT round 1 of the original TKperf (its rounds replay one offset sequence)"
    return IMPORTED_FIGURE.format(definition=definition), f"{source}, of the original TKperf"


#: The test types whose imported rounds replay their offsets (:func:`imported_caveats`).
REPLAYED_TYPES = ("wsat", "iops", "lat")


def replays(run: RunResult) -> bool:
    """Whether ``run`` was imported from a result file of the original TKperf."""
    info = run.facts.get("imported") if isinstance(run.facts, dict) else None
    return isinstance(info, dict) and str(info.get("tool") or "TKperf") == "TKperf"


def imported_caveats(run: RunResult) -> List[str]:
    """What an imported result of the original TKperf measured other than
    its name says: its WSAT, and each random-write test of rounds, ran every
    round (or workload) as a new fio process with fio's default
    ``randrepeat=1`` and no ``norandommap``, so each round replays the
    same offsets (fio's manual, ``randrepeat``: "Seed the random number
    generator used for random I/O patterns in a predictable way so the
    pattern is repeatable across runs"); tkperf's own WSAT is one job with
    ``randrepeat=0`` and ``norandommap``.  Empty for tkperf's own runs."""
    if not replays(run):
        return []
    out = []
    for t in run.tests:
        if t.type == "wsat":
            out.append(REPLAYED_WSAT.format(key=t.key))
        elif t.type in ("iops", "lat"):
            out.append(REPLAYED_ROUNDS.format(key=t.key))
    return out


def _int(text: Optional[str]) -> Optional[int]:
    try:
        return int(text) if text not in (None, "") else None
    except ValueError:
        return None
