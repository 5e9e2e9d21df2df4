"""Text from a result file, bounded for showing.

A result file may hold any amount of text where tkperf writes a few words:
a run name, a device's identify strings, an option's value, an event's
message, a test's key.  What ``show``, ``check``, ``compare``, ``report``
and ``export`` print of it is bounded here, once, as the file is read for
showing (:func:`tkperf.report.checked.load`): every such text longer than
:data:`LIMIT` characters (the description's text: :data:`LONG_LIMIT`, the
description file's own limit) is cut there, and ends with a note of what was
cut (``[... 41,943,040 more characters not shown]``); :func:`bound_run` says
which fields it cut, for one warning line.  A test type's stored items and
params are numbers in their ranges or its own text, read by its own code:
they are not cut here (an imported TKperf file keeps a round matrix as JSON
of some kilobytes), and the report's escaping bounds what of them is shown
(:func:`tkperf.render.rst.rst_escape`).
"""
from __future__ import annotations

import dataclasses
import hashlib
from typing import Any, Collection, Dict, List, Tuple

from tkperf.model.results import HealthSnapshot, RunResult, TestRun

#: The most characters of one text shown (a name, an identify string, a message).
LIMIT = 4096
#: ... of the run's description (the description file's limit, tkperf/target/description.py).
LONG_LIMIT = 64 * 1024


def cut(text: str, limit: int = LIMIT) -> str:
    """``text``, or its first ``limit`` characters and a note of how many more there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]} [... {len(text) - limit:,} more characters not shown]"


#: The longest file name stem made from a file's text (a run name, a test
#: key): file systems take 255 bytes, and a report adds ``-plots`` and a chart's name.
MAX_STEM = 120


def file_stem(stem: str) -> str:
    """``stem`` (already safe characters) when short; else its start and a
    digest of the whole, so two long names stay two files."""
    if len(stem) <= MAX_STEM:
        return stem
    return f"{stem[:MAX_STEM - 17]}-{hashlib.sha256(stem.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"


def _text_fields(cls: type) -> Tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.type in ("str", str))


_FIELDS: Dict[type, Tuple[str, ...]] = {}


class _Cutter:
    """Cuts the long texts of one run and remembers where."""

    def __init__(self) -> None:
        self.where: List[str] = []

    def text(self, text: str, where: str, limit: int = LIMIT) -> str:
        if len(text) <= limit:
            return text
        self.where.append(f"{where} ({len(text):,} characters)")
        return cut(text, limit)

    def obj(self, obj: Any, where: str) -> Any:
        """A dataclass instance (frozen or not) with its long text fields cut."""
        names = _FIELDS.get(type(obj))
        if names is None:
            names = _FIELDS[type(obj)] = _text_fields(type(obj))
        changes = {n: self.text(getattr(obj, n), f"{where} {n.replace('_', '-')}") for n in names
                   if isinstance(getattr(obj, n), str) and len(getattr(obj, n)) > LIMIT}
        return dataclasses.replace(obj, **changes) if changes else obj

    def mapping(self, items: Dict[str, str], where: str) -> Dict[str, str]:
        if all(len(k) <= LIMIT and len(v) <= LIMIT for k, v in items.items()):
            return items
        return {self.text(k, f"{where} name"): self.text(v, f"{where} {cut(k, 40)}") for k, v in items.items()}

    def json(self, value: Any, where: str) -> Any:
        if isinstance(value, str):
            return self.text(value, where)
        if isinstance(value, list):
            return [self.json(v, where) for v in value]
        if isinstance(value, dict):
            return {self.text(k, f"{where} name"): self.json(v, f"{where}.{cut(k, 40)}") for k, v in value.items()}
        return value


def bound_run(run: RunResult, parsed: Collection[str] = ()) -> List[str]:
    """Cut every long text of ``run`` shown from its file (in place); one
    entry per text cut, naming it and its length.  ``parsed``: the options
    whose values their readers parse, left whole (their parser took them:
    :func:`tkperf.model.stored.check_options`)."""
    c = _Cutter()
    for name in ("name", "started", "finished", "status", "profile", "tkperf_version"):
        setattr(run, name, c.text(getattr(run, name), f"run {name.replace('_', '-')}"))
    run.description = c.text(run.description, "description", LONG_LIMIT)
    run.description_fields = c.mapping(run.description_fields, "description field")
    loose = {k: v for k, v in run.options.items() if k not in parsed}
    bounded = c.mapping(loose, "option")
    if bounded is not loose:  # something cut (the order kept otherwise)
        run.options = {**bounded, **{k: v for k, v in run.options.items() if k in parsed}}
    run.features = [(c.text(k, "feature name"), c.text(v, f"feature {cut(k, 40)}")) for k, v in run.features]
    run.device = c.obj(run.device, "device")
    run.host = c.obj(run.host, "host")
    run.events = [c.obj(e, "event") for e in run.events]
    run.health = [_bound_health(c, h) for h in run.health]
    run.facts = c.json(run.facts, "fact")
    for t in run.tests:
        _bound_test(c, t)
    return c.where


def _bound_health(c: _Cutter, h: HealthSnapshot) -> HealthSnapshot:
    """A health snapshot with its long texts cut, its values' names too."""
    if all(len(n) <= LIMIT for n, _v in h.values):
        return c.obj(h, "health snapshot")
    return dataclasses.replace(c.obj(h, "health snapshot"),
                               values=tuple((c.text(n, "health value name"), v) for n, v in h.values))


def _bound_test(c: _Cutter, t: TestRun) -> None:
    """Cut a test's long texts (in place): its own, its purge's and its rounds' and their workloads'."""
    for name in ("type", "key", "tracking_workload", "tracking_metric", "tracking_label", "status", "started",
                 "finished", "stop_reason"):
        setattr(t, name, c.text(getattr(t, name), f"test {name.replace('_', '-')}"))
    if t.purge is not None:
        t.purge = c.obj(t.purge, "purge")
    t.rounds = [r if all(len(w.name) <= LIMIT and len(w.rw) <= LIMIT for w in r.workloads) and
                len(r.started) <= LIMIT else
                dataclasses.replace(c.obj(r, "round"), workloads=tuple(c.obj(w, "workload") for w in r.workloads))
                for r in t.rounds]
