"""The registry of test types: the built-in ones and those installed by other packages.

The built-in test types are the one list :data:`BUILTIN`, loaded first,
whether tkperf is installed or runs from a source tree.  Other packages
add theirs through the entry-point group ``tkperf.tests`` (tkperf itself
registers none there); an entry point names a
:class:`~tkperf.testtypes.base.TestType` subclass (or an instance).  A
plug-in cannot take a built-in's name.

A plug-in that fails to load, or that reuses a taken name, is left out
with a warning in the log (and in ``tkperf tests``); it never stops tkperf.
"""
from __future__ import annotations

import importlib
import logging
import re
from importlib import metadata
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from tkperf.testtypes.base import API_VERSION, TestType
from tkperf.testtypes.policy import Steady, stored_policy
from tkperf.testtypes.settings import settings_fields

if TYPE_CHECKING:  # pragma: no cover - imports for type hints only
    from tkperf.model.results import TestRun

log = logging.getLogger("tkperf")

ENTRY_POINT_GROUP = "tkperf.tests"
BUILTIN: Tuple[Tuple[str, str], ...] = (
    ("iops", "tkperf.testtypes.iops:IopsTest"),
    ("tp", "tkperf.testtypes.throughput:ThroughputTest"),
    ("lat", "tkperf.testtypes.latency:LatencyTest"),
    ("wsat", "tkperf.testtypes.writesat:WriteSaturationTest"),
    ("consistency", "tkperf.testtypes.consistency:ConsistencyTest"),
    ("qd", "tkperf.testtypes.qd:QueueDepthTest"),
    ("dirth", "tkperf.testtypes.dirth:DemandIntensityTest"),
    ("cbw", "tkperf.testtypes.cbw:CompositeWorkloadTest"),
    ("hir", "tkperf.testtypes.hir:HostIdleRecoveryTest"),
    ("xsr", "tkperf.testtypes.xsr:CrossStimulusRecoveryTest"),
    ("hdd-zones", "tkperf.testtypes.hdd_zones:HddZonesTest"),
    ("hdd-iops", "tkperf.testtypes.hdd_iops:HddIopsTest"),
    ("hdd-lat", "tkperf.testtypes.hdd_lat:HddLatencyTest"),
    ("replay", "tkperf.testtypes.realworld.replay:ReplayTest"),
    ("rwsw-wsat", "tkperf.testtypes.realworld.wsat:RwswWsatTest"),
    ("rwsw-dirth", "tkperf.testtypes.realworld.dirth:RwswDirthTest"),
)
NAME_RE = re.compile(r"[a-z][a-z0-9_-]{0,31}")

_types: Optional[Dict[str, TestType]] = None
_problems: List[str] = []


def _load(spec: str) -> object:
    module, _, attr = spec.partition(":")
    obj: object = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


def _entry_points() -> List[Tuple[str, str, object]]:
    """(name, value, entry point) of every installed ``tkperf.tests`` entry point."""
    eps: Any = metadata.entry_points()  # a dict of groups on Python 3.9, EntryPoints later
    group = eps.select(group=ENTRY_POINT_GROUP) if hasattr(eps, "select") else \
        eps.get(ENTRY_POINT_GROUP, [])  # Python 3.9
    return [(ep.name, ep.value, ep) for ep in group]


def _instance(obj: object, where: str) -> TestType:
    inst = obj() if isinstance(obj, type) else obj
    if not isinstance(inst, TestType):
        raise TypeError(f"{where} is not a tkperf TestType")
    declared = getattr(inst, "api_version", None)
    if declared != API_VERSION[0]:
        raise ValueError(f"{where} is written for tkperf API {declared!r}; this tkperf has API "
                         f"{API_VERSION[0]}.{API_VERSION[1]} (update the plug-in or tkperf)")
    if not NAME_RE.fullmatch(inst.name or ""):
        raise ValueError(f"{where}: test type name {inst.name!r} is not a short lower-case word")
    if inst.settings is not None:
        own = {opt.field for opt in inst.options}
        stray = [f for f in settings_fields(inst.settings) if f not in own]
        if stray:
            raise ValueError(f"{where}: its settings {inst.settings.__name__} hold options it does not declare "
                             f"({', '.join(stray)})")
    return inst


def _discover() -> Dict[str, TestType]:
    found: Dict[str, TestType] = {}
    problems: List[str] = []
    builtin = {spec for _, spec in BUILTIN}
    # the built-ins first, then every plug-in (an older install may still list the built-ins as entry points)
    candidates: List[Tuple[str, str, object]] = [(name, spec, None) for name, spec in BUILTIN]
    candidates += [c for c in _entry_points() if c[1] not in builtin]
    for name, value, ep in candidates:
        where = f"test type {name} ({value})"
        try:
            obj = ep.load() if ep is not None else _load(value)  # type: ignore[attr-defined]
            inst = _instance(obj, where)
        except Exception as exc:  # noqa: BLE001 - a broken plug-in must not stop tkperf
            problems.append(f"{where} could not be loaded: {type(exc).__name__}: {exc}")
            continue
        if inst.name in found:
            if type(found[inst.name]) is not type(inst):
                problems.append(f"{where} is left out: the name {inst.name!r} is taken by "
                                f"{type(found[inst.name]).__module__}")
            continue
        found[inst.name] = inst
    for p in problems:
        log.warning("%s", p)
    _problems[:] = problems
    return dict(sorted(found.items(), key=lambda kv: (kv[1].order, kv[0])))


def types() -> Dict[str, TestType]:
    """Every test type, by name, in run order."""
    global _types
    if _types is None:
        _types = _discover()
    return _types


def problems() -> List[str]:
    """Why installed test types were left out (empty when all loaded)."""
    types()
    return list(_problems)


def get(name: str) -> Optional[TestType]:
    """The test type called ``name``, or None when it is not installed."""
    return types().get(name)


def names() -> Tuple[str, ...]:
    return tuple(types())


def default_names(profile: str = "ssd") -> Tuple[str, ...]:
    """The tests ``PROFILE run`` runs without ``--tests``."""
    return tuple(n for n, t in types().items() if t.runs_by_default(profile))


def reset() -> None:
    """Forget what was found (tests install plug-ins and look again)."""
    global _types
    _types = None


def steady_policy(test: "TestRun") -> Steady:
    """The steady-state policy of a stored test (the file does not record
    it): its type's when the type is installed, else what the file holds."""
    kind = get(test.type)
    return kind.steady_policy(test) if kind is not None else stored_policy(test)
