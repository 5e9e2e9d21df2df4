"""Result files read for showing: every stored value checked by the one
layer (:mod:`tkperf.model.stored`), every text bounded (:mod:`tkperf.model.shown`).

:func:`load` is :func:`tkperf.store.load` (the schema and
:mod:`tkperf.model.ranges`: every attribute) plus, as :func:`problems`:

* the run's options: each number in its range, each switch ``true`` or
  ``false``, each option of an installed test type one its own parser
  takes, at most :data:`~tkperf.model.stored.MAX_OPTIONS` of them
  (:func:`tkperf.model.stored.check_options`).  They are the run's own
  settings, which every part of a report reads: a file with one that is not
  is refused (a :class:`ResultFileError`, exit 7, naming the option);
* the facts tkperf reads back (an emulated SSD's late replies, the runs
  that shared the host, a test host, an imported file's record:
  :data:`tkperf.model.stored.FACTS`): one that is not of its kind is left
  out, said in a warning; the run shows without it;
* for every test, its numeric data items and parameters against their
  ranges (:func:`tkperf.model.stored.check_test`, for tkperf's own test
  types) and, where its type is installed,
  :meth:`~tkperf.kit.base.View.check_data` of its view: a test whose stored
  data its type would never write (a sweep round that is not there, a phase
  without its offsets, a share that is text or NaN, a block-layer counter
  below 0 ...) is left out of the run that ``show``, ``report``,
  ``compare``, ``check`` and ``export`` see, and named in a warning;
* every text longer than tkperf shows, cut with a note
  (:func:`tkperf.model.shown.bound_run`), said in one warning.

Warnings are events of the run (shown in the report's run notes) and lines
on stderr; the rest of the file still shows.  The file itself is not changed.
"""
from __future__ import annotations

import dataclasses
import sys
from typing import Callable, Dict, Iterable, List, Optional

from tkperf import store
from tkperf.errors import ResultFileError, TkperfError
from tkperf.kit.base import Option, TestType
from tkperf.kit.options import RunOptions
from tkperf.kit.registry import get, is_builtin, types
from tkperf.model import shown, stored
from tkperf.model.results import Event, RunResult, now_iso
from tkperf.report.generic import view_of

#: The most description fields and feature rows a file may hold (each comes
#: from a file of at most 64 KiB: tkperf/target/description.py).
MAX_FIELDS = 10_000
#: The most tests a file may hold (a run of every built-in type holds a few
#: dozen: TP one per block size); comparing runs pairs their tests by key.
MAX_TESTS = 1000


def option_parsers(run: Optional[RunResult] = None) -> Dict[str, Callable[[str], object]]:
    """Every installed test type's options, as ``field -> parse`` (raising on
    a value it would never store; a switch is ``true`` or ``false``).  With
    ``run``, those of the types it ran when they are all its options hold
    (a run stores the options of its tests' types): ``show`` of an IOPS
    result loads no other type."""
    if run is not None:
        named = {t.type for t in run.tests} | {n for n in run.options.get("tests", "").split(",") if n}
        found = [get(n) for n in sorted(named)] if len(named) <= MAX_TESTS else [None]
        kinds = [k for k in found if k is not None]
        if len(kinds) == len(found):
            out = _parsers(sorted(kinds, key=lambda k: (k.order, k.name)))
            if all(key in out or key in _CORE or key in stored.OPTIONS or key in stored.SWITCHES
                   for key in run.options):
                return out
    return _parsers(types().values())


#: The run options every run stores, whatever its tests.
_CORE = frozenset(f.name for f in dataclasses.fields(RunOptions))


def _parsers(kinds: Iterable[TestType]) -> Dict[str, Callable[[str], object]]:
    out: Dict[str, Callable[[str], object]] = {}
    for kind in kinds:
        for opt in kind.options:
            out.setdefault(opt.field, _parser(opt))
    return out


def _parser(opt: Option) -> Callable[[str], object]:
    def parse(text: str) -> object:
        if opt.switch is not None and text not in ("true", "false"):
            raise ValueError("not true or false")
        value = opt.from_text(text)
        if opt.check is not None:
            opt.check(value)
        return value
    return parse


def check_run(run: RunResult) -> None:
    """A ResultFileError (exit 7) naming what makes ``run`` no result tkperf
    shows: an option that is not what a run stores, more options, tests,
    description fields or feature rows than any file of tkperf's holds."""
    for what, count, most in (("description fields", len(run.description_fields), MAX_FIELDS),
                              ("feature rows", len(run.features), MAX_FIELDS), ("tests", len(run.tests), MAX_TESTS)):
        if count > most:
            raise ResultFileError(f"the file holds {count:,} {what}, more than the {most:,} tkperf reads")
    try:
        stored.check_options(run.options, option_parsers(run))
    except stored.StoredValueError as exc:
        raise ResultFileError(str(exc)) from None


def problems(run: RunResult) -> List[str]:
    """Check ``run`` (:mod:`module docs <tkperf.report.checked>`): a
    ResultFileError for an option; leave out every fact and every test that
    is not what tkperf writes, and cut every long text; one line each, said."""
    check_run(run)
    said = stored.check_facts(run.facts)
    kept = []
    for t in run.tests:
        kind = get(t.type)
        try:
            stored.check_counts(t)
            if is_builtin(t.type):  # every numeric data item and param in its range
                stored.check_test(t)
            if kind is not None:
                view_of(kind).check_data(t)
        except (ValueError, KeyError, TypeError, ArithmeticError, TkperfError) as exc:
            said.append(f"test {shown.cut(t.key, 200)} is left out: its stored data is not what "
                        f"{shown.cut(t.type, 200)} writes ({shown.cut(str(exc), 400)})")
            continue
        kept.append(t)
    run.tests[:] = kept
    cut = shown.bound_run(run, {*stored.OPTIONS, *stored.SWITCHES, *option_parsers(run)})
    if cut:
        said.append(f"text longer than tkperf shows is cut, with a note of how much: {', '.join(cut[:5])}"
                    + (f" and {len(cut) - 5:,} more" if len(cut) > 5 else ""))
    run.events += [Event(now_iso(), "warning", text) for text in said]
    return said


def load(path: str, say_integrity: bool = True) -> RunResult:
    """Read a result file for showing (:mod:`module docs <tkperf.report.checked>`).
    What was cut from the file (a torn last row dropped) is said once on
    stderr (``say_integrity``; ``show`` says it in its summary instead); that
    an older format records no completeness is said by ``show`` and the
    report only."""
    run = store.load(path)
    cut = store.cut_notes(run)
    if cut and say_integrity:  # stderr is made safe for the terminal by tkperf.cli.main
        print(f"tkperf: warning: {path}: result file: {cut}", file=sys.stderr)
    try:
        said = problems(run)
    except ResultFileError as exc:
        raise ResultFileError(f"{path}: {exc}") from None
    for text in said:
        print(f"tkperf: warning: {path}: {text}", file=sys.stderr)
    return run
