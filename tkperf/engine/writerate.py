"""The write rate a target's estimates assume (:mod:`tkperf.kit.writerate`):
an emulated SSD's model speed, read from its running server's parameters
(``tkperf simdrive stats``) when the dry run or the run starts, so a
change of the model's defaults or a drive made with other parameters is
timed as it is; any other drive the stated default."""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Mapping, Optional, Tuple

from tkperf.kit.writerate import DEFAULT, RandomTiming, WriteRate
from tkperf.model.results import DeviceInfo
from tkperf.simdrive import TRANSPORT as EMULATED
from tkperf.simdrive import expect
from tkperf.simdrive.params import PARAMS


def _value(params: Mapping[str, Any], name: str) -> float:
    got = params[name]
    return float(got["value"] if isinstance(got, Mapping) else got)


def _program_us(params: Mapping[str, Any]) -> float:
    """One page's share of a program: a program writes ``program_pages``
    pages at once (a flash page times its planes; one page in models
    recorded before that parameter existed)."""
    try:
        pages = _value(params, "program_pages")
    except KeyError:
        pages = 1.0
    return _value(params, "program_us") / max(pages, 1.0)


def model_rate(params: Mapping[str, Any]) -> Optional[WriteRate]:
    """The model's sequential write speed from its parameters (``{name:
    {value, unit}}`` as ``stats`` gives them, or ``{name: value}``): every
    unit programs ``program_pages`` pages at a time, and each block a
    sequential overwrite empties is erased once per ``block_pages`` pages,
    so ``units`` x page / (program / program_pages + erase / block_pages).
    None when a parameter is missing."""
    try:
        units, page_kib = _value(params, "units"), _value(params, "page_kib")
        program_us, erase_us = _program_us(params), _value(params, "erase_us")
        block_pages = _value(params, "block_pages")
    except (KeyError, TypeError, ValueError):
        return None
    per_page_s = (program_us + erase_us / max(block_pages, 1.0)) / 1e6
    if units <= 0 or page_kib <= 0 or per_page_s <= 0:
        return None
    return WriteRate(units * page_kib * 1024 / per_page_s,
                     f"the emulated SSD's model speed ({units:g} units x {page_kib:g} KiB pages / "
                     f"({program_us:g} µs program a page + {erase_us:g} µs erase / {block_pages:g} pages))")


def with_random(rate: WriteRate, params: Mapping[str, Any], capacity: float) -> WriteRate:
    """``rate`` and the model's timing of random writes from a purged drive
    (:func:`tkperf.simdrive.expect.random_writes`: the model's own FTL run
    on a copy of the drive, at the stream's block size and outstanding
    I/Os): the burst at the controller's pace or the flash's, then greedy
    GC's write amplification rising over the first capacities written to
    its steady state.  ``rate`` as it is when the parameters are not a
    model this version runs."""
    if set(params) != set(PARAMS):  # a model of another version: not the FTL this one runs
        return rate
    try:
        values = tuple(sorted((name, _value(params, name)) for name in params))
        size = int(capacity)
        expect.random_writes(size, dict(values), 0.0)  # the parameters check
    except (KeyError, TypeError, ValueError):
        return rate

    def timer(amount: float, bs: int, depth: int) -> RandomTiming:
        return RandomTiming(*_timed(size, values, float(amount), int(bs), int(depth)))

    said = ("; random ones from a purged drive as the model's own FTL, run here on a copy of the drive, takes "
            "them at the stream's block size and queue depth (the burst, then greedy GC's write amplification "
            "rising toward its steady state)")
    return dataclasses.replace(rate, random=timer, source=rate.source + said)


@functools.lru_cache(maxsize=64)
def _timed(size: int, values: Tuple[Tuple[str, float], ...], amount: float, bs: int,
           depth: int) -> expect.RandomTiming:
    return expect.random_writes(size, dict(values), amount, bs, depth)


def of_facts(facts: Any) -> Optional[WriteRate]:
    """The model's rate from a run's recorded facts (``facts['simdrive']``)."""
    got = facts.get("simdrive") if isinstance(facts, Mapping) else None
    params = got.get("params") if isinstance(got, Mapping) else None
    if not isinstance(got, Mapping) or not isinstance(params, Mapping):
        return None
    rate = model_rate(params)
    if rate is None:
        return rate
    try:
        capacity = float(got["capacity_bytes"])
    except (KeyError, TypeError, ValueError):
        return rate
    return with_random(rate, params, capacity)


def of_device(dev: DeviceInfo, facts: Any = None) -> WriteRate:
    """The rate for ``dev``: its recorded facts' model, else its running
    emulated SSD's (asked now), else :data:`~tkperf.kit.writerate.DEFAULT`."""
    if dev.transport != EMULATED:
        return DEFAULT
    known = of_facts(facts)
    if known is not None:
        return known
    from tkperf.target.facts import simdrive_facts

    try:
        return of_facts({"simdrive": simdrive_facts(dev)}) or DEFAULT
    except Exception:  # noqa: BLE001 - an estimate never stops a run or a dry run
        return DEFAULT
