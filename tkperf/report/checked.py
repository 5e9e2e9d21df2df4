"""Result files read for showing: each test's stored data checked by its own type.

:func:`load` is :func:`tkperf.store.load` plus, for every test, the
check of its numeric data items and parameters against their ranges
(:func:`tkperf.model.stored.check_test`, for tkperf's own test types) and, where its type is installed,
:meth:`~tkperf.kit.base.View.check_data` of its view: a test whose stored
data its type would never write (a sweep round that is not there, a phase
without its offsets, a share that is text or NaN ...) is left out of the run that
``show``, ``report``, ``compare``, ``check`` and ``export`` see, and named
in a warning event (shown in the report's run notes and on stderr); the
rest of the file still shows.  The file itself is not changed.
"""
from __future__ import annotations

import sys
from typing import List

from tkperf import store
from tkperf.kit.registry import get, is_builtin
from tkperf.model import stored
from tkperf.model.results import Event, RunResult, now_iso
from tkperf.report.generic import view_of


def problems(run: RunResult) -> List[str]:
    """Leave out of ``run`` every test its type refuses; one line each, said."""
    said: List[str] = []
    kept = []
    for t in run.tests:
        kind = get(t.type)
        try:
            if is_builtin(t.type):  # every numeric data item and param in its range
                stored.check_test(t)
            if kind is not None:
                view_of(kind).check_data(t)
        except (ValueError, KeyError, TypeError) as exc:
            said.append(f"test {t.key} is left out: its stored data is not what {t.type} writes ({exc})")
            continue
        kept.append(t)
    if said:
        run.tests[:] = kept
        run.events += [Event(now_iso(), "warning", text) for text in said]
    return said


def load(path: str, say_integrity: bool = True) -> RunResult:
    """Read a result file for showing (:mod:`module docs <tkperf.report.checked>`).
    What is known of the file's completeness, when there is something to
    say (rows cut from its end, a format that records none), is said once
    on stderr (``say_integrity``; ``show`` says it in its summary instead)."""
    run = store.load(path)
    if run.integrity and say_integrity:  # stderr is made safe for the terminal by tkperf.cli.main
        print(f"tkperf: warning: {path}: result file: {run.integrity}", file=sys.stderr)
    for text in problems(run):
        print(f"tkperf: warning: {path}: {text}", file=sys.stderr)
    return run
