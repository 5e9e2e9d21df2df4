"""What the shape of a stored test decided: its :class:`~tkperf.kit.steps.Steps`.

A result file does not record the loop shape a test ran.  Its type's plans
do: :func:`steps_of` plans the type once on its default options (and a
nominal target) and keeps, per plan key, the shape it would run, so that a
report, ``show``, the conformance check and ``resume`` read a stored test
by the same rule the run followed (its unit word, its first figures, its
tracking variables, whether a steady state is kept on resume).  A type
that cannot be planned so (one that needs an input, as the real-world
types need a capture) is read by the shape its stored test shows: phase
labels (:class:`~tkperf.kit.shapes.Phases`), a sweep round
(:class:`~tkperf.kit.composite.SteadyThenSweep`), captured sweep rounds
(:class:`~tkperf.kit.composite.SweepRounds`), intervals without rounds
(:class:`~tkperf.kit.shapes.Stream`); anything else, and a type that is
not installed, as a plain round loop whose round 1 is not a first figure
(:class:`Steps`).  A shape's rules are its class's: no field of it is read.
"""
from __future__ import annotations

import logging
import weakref
from typing import Dict, Optional

from tkperf.errors import UsageError
from tkperf.kit import options
from tkperf.kit.adapter import Api2Type
from tkperf.kit.base import TestType
from tkperf.kit.composite import CAPTURE_ROUND, SWEEP_ROUND, WDPC_SERIES, SteadyThenSweep, SweepRounds
from tkperf.kit.shapes import Phases, Stream
from tkperf.kit.steps import Steps
from tkperf.model.results import TestRun

debug = logging.getLogger("tkperf.debug")

#: The target size a type is planned on to learn its shapes (1 TiB).
NOMINAL_CAPACITY = 1 << 40

_planned: weakref.WeakKeyDictionary[TestType, Dict[str, Steps]] = weakref.WeakKeyDictionary()


def _shapes(kind: TestType) -> Dict[str, Steps]:
    """The shape of each of ``kind``'s plans on its defaults, by plan key."""
    found = _planned.get(kind)
    if found is None:
        profile = "hdd" if "hdd" in kind.default_profiles and "ssd" not in kind.default_profiles else "ssd"
        try:
            opts = options.build({"tests": (kind.name,)}, profile=profile)
            found = {p.key: p.shape for p in kind.plan(opts, NOMINAL_CAPACITY)}
        except (UsageError, ValueError, KeyError, TypeError) as exc:
            debug.debug("test type %s could not be planned on its defaults (%s); read as rounds", kind.name, exc)
            found = {}
        _planned[kind] = found
    return found


def stored_steps(test: Optional[TestRun]) -> Steps:
    """The rules of the shape ``test``'s stored data shows (module doc)."""
    if test is None:
        return Steps()
    if any(k.startswith("phase.") for k in test.data):
        cls: type = Phases
    elif SWEEP_ROUND in test.data:
        cls = SteadyThenSweep
    elif CAPTURE_ROUND in test.data or WDPC_SERIES in test.series:
        cls = SweepRounds
    elif not test.rounds and test.series:
        cls = Stream
    else:
        return Steps()
    return object.__new__(cls)  # its rules only: they read no field of the shape


def steps_of(kind: Optional[TestType], test: Optional[TestRun] = None) -> Steps:
    """The steps of ``test`` (of type ``kind``; None: not installed): the
    shape of its plan, else of the type's first plan, else what the stored
    test shows."""
    if kind is None:
        return Steps()
    shapes = _shapes(kind)
    shape = (shapes.get(test.key) if test is not None else None) or next(iter(shapes.values()), None) \
        or stored_steps(test)
    return kind.steps(shape) if isinstance(kind, Api2Type) else shape
