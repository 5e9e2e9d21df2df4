"""The write rate a target's estimates assume (:mod:`tkperf.kit.writerate`):
an emulated SSD's model speed, read from its running server's parameters
(``tkperf simdrive stats``) when the dry run or the run starts, so a
change of the model's defaults or a drive made with other parameters is
timed as it is; any other drive the stated default."""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Optional

from tkperf.kit.writerate import DEFAULT, WriteRate
from tkperf.model.results import DeviceInfo
from tkperf.simdrive import TRANSPORT as EMULATED


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


def with_random(rate: WriteRate, params: Mapping[str, Any], capacity: float, blocks: float) -> WriteRate:
    """``rate`` and the model's random-write speed past its burst: greedy GC
    under uniform random writes copies about WAF - 1 pages per page written,
    WAF = (1 + s) / (2 s) for the spare share s of the capacity (the
    physical blocks less those GC keeps free and one open block); each page
    written then costs a program, WAF - 1 copies and WAF / block_pages
    erases on one of ``units`` units.  The burst is the physical space a
    purged drive fills before GC starts."""
    try:
        units, page = _value(params, "units"), _value(params, "page_kib") * 1024
        program_us, copy_us = _program_us(params), _value(params, "copy_us")
        erase_us, block_pages = _value(params, "erase_us"), _value(params, "block_pages")
        low = _value(params, "gc_low_blocks")
    except (KeyError, TypeError, ValueError):
        return rate
    spare = ((blocks - low - 1) * block_pages * page - capacity) / capacity if capacity > 0 else 0.0
    if spare <= 0 or units <= 0:
        return rate
    waf = (1 + spare) / (2 * spare)
    per_page_s = (program_us + (waf - 1) * copy_us + waf * erase_us / max(block_pages, 1.0)) / 1e6
    random_bps = units * page / per_page_s
    said = (f"; random writes past the burst {random_bps / 1e6:,.1f} MB/s (greedy GC at its steady state, "
            f"write amplification {waf:.1f}; a stream of a few drive fills ends before that and runs faster)")
    return dataclasses.replace(rate, random_bps=random_bps, burst_bytes=blocks * block_pages * page,
                               source=rate.source + said)


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
        capacity, blocks = float(got["capacity_bytes"]), float(got["physical_blocks"])
    except (KeyError, TypeError, ValueError):
        return rate
    return with_random(rate, params, capacity, blocks)


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
