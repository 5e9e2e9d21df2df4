"""The registry of test types: tkperf's own and those installed by other packages.

Every test type is found the same way: through the entry-point group
``tkperf.tests``, where tkperf's ``pyproject.toml`` lists its built-in
types (the packages under ``tkperf/testtypes/``) and a plug-in package
lists its own; an entry point names a
:class:`~tkperf.kit.base.TestType` subclass (or an instance).  A
built-in is an entry point into ``tkperf.testtypes``; they load first,
and a plug-in cannot take a built-in's name.  Run from a source tree
that was never installed (no entry points of tkperf's), the built-ins are
read from the same table of the tree's ``pyproject.toml``, so there is
one list.

A plug-in that fails to load, or that reuses a taken name, is left out
with a warning in the log (and in ``tkperf tests``); it never stops tkperf:
also not one that calls ``sys.exit`` (or runs argparse, which does), or
raises ``KeyboardInterrupt``, as it is imported (:class:`_Loading`; what it
printed meanwhile is kept out of tkperf's output and its last line quoted
in the warning).  A real Ctrl-C while plug-ins load still stops tkperf.
The version test is here (:func:`api_of`); a type written for API 2 is
wrapped in :class:`~tkperf.kit.adapter.Api2Type`
(:func:`adapted` says which, for ``tkperf tests``).  A type may name its
view ``"package.module:Class"`` (a view module imports its type's):
:func:`view_class` loads it, as the types themselves are loaded.
"""
from __future__ import annotations

import contextlib
import importlib
import io
import logging
import os
import re
import signal
import threading
from importlib import metadata
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, Type

import tkperf
from tkperf.kit.adapter import API2_ENDS, Api2Type
from tkperf.kit.base import API_VERSION, OptionSet, Plan, TestType, View, own, runs_by_default
from tkperf.kit.policy import Steady, stored_policy
from tkperf.kit.settings import Options, settings_fields

if TYPE_CHECKING:  # pragma: no cover - imports for type hints only
    from tkperf.model.results import TestRun

log = logging.getLogger("tkperf")

ENTRY_POINT_GROUP = "tkperf.tests"
#: Where tkperf's own test types live: an entry point into this package is a built-in.
BUILTIN_PACKAGE = "tkperf.testtypes."
NAME_RE = re.compile(r"[a-z][a-z0-9_-]{0,31}")

#: Members of an API 2 type that API 3 moved to a part (or dropped).
API2_ONLY = ("unit", "default_run", "settings", "keeps_steady_on_resume", "pts_test", "oio", "shows_histograms",
             "fob_from_first_round", "largest_block", "smallest_block", "deviations", "planned_deviations",
             "result_deviations", "instance_title", "steady_policy", "tracking_variables", "unsteady_variables",
             "first_figures", "fob", "round1_after_wipc", "summary", "check_data", "report_section",
             "compare_section")

_types: Optional[Dict[str, TestType]] = None
_problems: List[str] = []
#: The types :func:`get` loaded alone, by entry point name: (its value, the type), or None.
_some: Dict[str, Optional[Tuple[str, TestType]]] = {}


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


def api_of(obj: object) -> Any:
    """The API MAJOR an instance was written for: what it declares, else 2
    when it defines a member only API 2 has, else this tkperf's."""
    for cls in type(obj).__mro__:
        if cls is TestType:
            break
        if "api_version" in vars(cls):
            return vars(cls)["api_version"]
    view = getattr(obj, "view", None)
    if (isinstance(view, str) and ":" not in view) or any(own(obj, n) is not None for n in API2_ONLY):
        return 2
    return API_VERSION[0]


def _instance(obj: object, where: str) -> TestType:
    inst = obj() if isinstance(obj, type) else obj
    if not isinstance(inst, TestType):
        raise TypeError(f"{where} is not a tkperf TestType")
    declared = api_of(inst)
    if declared == 2:
        inst = Api2Type(inst)
    elif declared != API_VERSION[0]:
        raise ValueError(f"{where} is written for tkperf API {declared!r}; this tkperf has API "
                         f"{API_VERSION[0]}.{API_VERSION[1]} (update the plug-in or tkperf)")
    if not NAME_RE.fullmatch(inst.name or ""):
        raise ValueError(f"{where}: test type name {inst.name!r} is not a short lower-case word")
    view_class(inst)  # a view that cannot be loaded leaves the type out, as a broken plug-in
    if not isinstance(inst.options, OptionSet):  # a plain tuple: options without settings
        inst.options = OptionSet(None, inst.options)
    settings = inst.options.settings
    if settings is not None:
        declared_fields = {opt.field for opt in inst.options}
        stray = [f for f in settings_fields(settings) if f not in declared_fields]
        if stray:
            raise ValueError(f"{where}: its settings {settings.__name__} hold options it does not declare "
                             f"({', '.join(stray)})")
    return inst


def view_class(kind: TestType) -> Optional[Type[View]]:
    """``kind``'s own :class:`~tkperf.kit.base.View` subclass, loaded
    when the type names it (``"package.module:Class"``); None: it has none."""
    view = _load(kind.view) if isinstance(kind.view, str) else kind.view
    if view is not None and not (isinstance(view, type) and issubclass(view, View)):
        raise TypeError(f"the view {kind.view!r} of test type {kind.name} is not a tkperf View class")
    return view


def _source_tree_builtins() -> List[Tuple[str, str, object]]:
    """(name, value, None) of the built-ins in the ``tkperf.tests`` table of
    the ``pyproject.toml`` beside the package (a source tree never installed)."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(tkperf.__file__))), "pyproject.toml")
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError:
        return []
    table = re.search(r'^\[project\.entry-points\."tkperf\.tests"\]\n(.*?)(?=^\[|\Z)', text, re.M | re.S)
    rows = re.findall(r'^([a-z][\w-]*)\s*=\s*"([\w.]+:[\w.]+)"', table.group(1) if table else "", re.M)
    return [(name, value, None) for name, value in rows if value.startswith(BUILTIN_PACKAGE)]


def builtins() -> List[Tuple[str, str, object]]:
    """(name, value, entry point or None) of tkperf's own test types."""
    own = [c for c in _entry_points() if c[1].startswith(BUILTIN_PACKAGE)]
    # an editable install whose metadata predates the tree: the tree's newer built-ins too
    known = {c[0] for c in own}
    return own + [c for c in _source_tree_builtins() if c[0] not in known]


class _Loading:
    """Around the import of one test type: what it prints goes to a buffer
    (a plug-in's output is no part of ``--json`` or a summary), and a SIGINT
    that arrives meanwhile is noted before the handler in place runs, so a
    ``KeyboardInterrupt`` is told apart: the user's Ctrl-C (``signalled``)
    or the plug-in's own raise."""

    def __init__(self) -> None:
        self.signalled = False
        self.printed = io.StringIO()
        self._previous: Any = None
        self._redirect = contextlib.ExitStack()

    def _on_sigint(self, signum: int, frame: Any) -> None:
        self.signalled = True
        self._previous(signum, frame)  # the handler in place: KeyboardInterrupt, or tkperf's own

    def __enter__(self) -> _Loading:
        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGINT)
            if callable(previous):  # SIG_IGN and SIG_DFL need no telling apart: nothing is raised
                self._previous = previous
                signal.signal(signal.SIGINT, self._on_sigint)
        self._redirect.enter_context(contextlib.redirect_stdout(self.printed))
        self._redirect.enter_context(contextlib.redirect_stderr(self.printed))
        return self

    def __exit__(self, *exc: object) -> None:
        self._redirect.close()
        if self._previous is not None:  # also over a handler the plug-in set
            signal.signal(signal.SIGINT, self._previous)

    def said(self) -> str:
        """The last line the plug-in printed, shortened: '' when it printed nothing."""
        lines = [line.strip() for line in self.printed.getvalue().splitlines() if line.strip()]
        return lines[-1][:160] if lines else ""


def _why(exc: BaseException, loading: _Loading) -> str:
    """Why a test type could not be loaded, in a few words."""
    if isinstance(exc, SystemExit):
        code = exc.code
        why = f"it called sys.exit({code!r}) as it was imported" if code is None or isinstance(code, int) \
            else f"it called sys.exit() as it was imported: {code}"
    elif isinstance(exc, KeyboardInterrupt):
        why = "it raised KeyboardInterrupt as it was imported"
    else:
        why = f"{type(exc).__name__}: {exc}"
    said = loading.said()
    why = " ".join((f"{why} (it printed: {said})" if said and said not in why else why).split())  # one line
    return why if len(why) <= 400 else why[:397] + "..."


def _loaded(value: str, ep: object, where: str) -> TestType:
    """The test type an entry point names, as an instance; raises what its
    import or its checks raised (SystemExit and KeyboardInterrupt too,
    unless the user pressed Ctrl-C: then that KeyboardInterrupt goes on as
    a RuntimeError would not)."""
    with _Loading() as loading:
        try:
            obj = ep.load() if ep is not None else _load(value)  # type: ignore[attr-defined]
            return _instance(obj, where)
        except (KeyboardInterrupt, SystemExit) as exc:
            if isinstance(exc, KeyboardInterrupt) and loading.signalled:
                raise  # the user's Ctrl-C, not the plug-in's
            raise _LoadFailed(_why(exc, loading)) from None
        except Exception as exc:  # noqa: BLE001 - a broken plug-in must not stop tkperf
            raise _LoadFailed(_why(exc, loading)) from None


class _LoadFailed(Exception):
    """A test type that could not be loaded; the message says why."""


def _discover() -> Dict[str, TestType]:
    found: Dict[str, TestType] = {}
    problems: List[str] = []
    # the built-ins first, then every plug-in
    candidates: List[Tuple[str, str, object]] = builtins()
    candidates += [c for c in _entry_points() if not c[1].startswith(BUILTIN_PACKAGE)]
    for name, value, ep in candidates:
        where = f"test type {name} ({value})"
        early = _some.get(name)
        try:
            inst = early[1] if early is not None and early[0] == value else _loaded(value, ep, where)
        except _LoadFailed as exc:
            problems.append(f"{where} could not be loaded: {exc}")
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


def is_builtin(name: str) -> bool:
    """Whether ``name`` is one of tkperf's own test types (whose stored fields
    :mod:`tkperf.model.stored` knows); a plug-in's are its own to check."""
    kind = get(name)
    return kind is not None and type(kind).__module__.startswith(BUILTIN_PACKAGE)


def problems() -> List[str]:
    """Why installed test types were left out (empty when all loaded)."""
    types()
    return list(_problems)


def get(name: str) -> Optional[TestType]:
    """The test type called ``name``, or None when it is not installed.
    Before every type is loaded (:func:`types`), only the entry points
    named ``name`` are: ``show`` of an IOPS result loads the IOPS type."""
    if _types is not None:
        return _types.get(name)
    if name not in _some:
        _some[name] = _one(name)
    found = _some[name]
    return found[1] if found is not None else types().get(name)


def _one(name: str) -> Optional[Tuple[str, TestType]]:
    """The type of the first entry point called ``name`` (the built-ins
    first, as :func:`_discover` has them) that loads as a type of that
    name; None when none does (then :func:`get` asks every type)."""
    candidates = [c for c in builtins() if c[0] == name]
    candidates += [c for c in _entry_points() if c[0] == name and not c[1].startswith(BUILTIN_PACKAGE)]
    for _name, value, ep in candidates:
        try:
            inst = _loaded(value, ep, f"test type {name} ({value})")
        except _LoadFailed:
            continue  # said, with the others, when every type is loaded
        if inst.name == name:
            return value, inst
    return None


def plan_all(opts: Options, capacity: int) -> List[Tuple[str, Plan]]:
    """(test type name, plan) of every test instance the options ask for, in
    run order; each type planned on the options its tests run with (a run's
    ``for_test``: without the test range for a type that does not use one)."""
    out: List[Tuple[str, Plan]] = []
    for name in opts.tests:
        t = get(name)
        if t is None:
            raise ValueError(f"test type {name!r} is not installed")
        narrowed = getattr(opts, "for_test", None)
        out.extend((name, p) for p in t.plan(narrowed(t) if narrowed is not None else opts, capacity))
    return out


def names() -> Tuple[str, ...]:
    return tuple(types())


def default_names(profile: str = "ssd") -> Tuple[str, ...]:
    """The tests ``PROFILE run`` runs without ``--tests``."""
    return tuple(n for n, t in types().items() if runs_by_default(t, profile))


def reset() -> None:
    """Forget what was found (tests install plug-ins and look again)."""
    global _types
    _types = None
    _some.clear()


def adapted() -> List[str]:
    """One line per installed type written for API 2 (run through the adapter)."""
    return [f"{name}: written for API 2, run through the adapter; API 2 ends with {API2_ENDS}"
            for name, kind in types().items() if isinstance(kind, Api2Type)]


def steady_policy(test: TestRun) -> Steady:
    """The steady-state policy of a stored test (the file does not record
    it): what the file holds (:func:`~tkperf.kit.policy.stored_policy`),
    or what an API 2 type says of it."""
    kind = get(test.type)
    method = own(kind.old, "steady_policy") if isinstance(kind, Api2Type) else None
    return method(test) if method is not None else stored_policy(test)
