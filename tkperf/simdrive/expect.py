"""How long the model takes for a stream of random writes from a purged
drive, worked out by running the model itself (:class:`~tkperf.simdrive.model.Drive`)
on its own clock, with no server, no data and no wall clock.

Random writes past a purged drive's burst cost what greedy garbage
collection copies, and that grows over the first few capacities written
(the blocks GC picks hold more and more valid pages) before it settles;
the controller's pace per command and the write buffer set the burst.  No
closed formula follows all of that, so the estimate runs the model's own
FTL: uniform random, aligned writes of the stream's block size, with the
stream's outstanding I/Os (each one issued as another completes), from a
fresh drive.  A drive larger than :data:`SIM_PAGES` pages is timed on a
copy of that many pages with the same share of spare blocks (the units and
the controller are the same, so the copy's time scales with the bytes);
past :data:`MAX_FILLS` capacities the rest is timed at the last capacity's
rate, greedy GC's steady state by then.  Deterministic (a fixed seed).
"""
from __future__ import annotations

import heapq
import random
from typing import Any, Dict, List, Mapping, NamedTuple, Tuple

from tkperf.simdrive.model import Drive
from tkperf.simdrive.params import check_params, physical_blocks

SIM_PAGES = 8192  #: the largest drive timed as it is, in pages (a copy this size stands in for a larger one)
MAX_FILLS = 8.0   #: capacities of writes run; the rest at the last capacity's rate
SEED = 1


class RandomTiming(NamedTuple):
    """A random-write stream as the model times it (seconds on its clock)."""

    seconds: float
    burst_bytes: float  #: written before foreground GC first ran (all of it when it never did)
    burst_s: float      #: the time those took
    waf: float          #: write amplification over the last capacity written (1: no GC)


def _copy(capacity: int, params: Mapping[str, Any]) -> Tuple[int, Dict[str, Any]]:
    """The drive to run: ``capacity`` itself, or :data:`SIM_PAGES` pages with
    as many spare blocks per logical block as ``capacity`` has."""
    p = check_params(capacity, dict(params))
    page, ppb = p["page_kib"] * 1024, p["block_pages"]
    if ppb > SIM_PAGES or p["units"] > SIM_PAGES or p["buffer_programs"] > SIM_PAGES:
        raise ValueError(f"a model of more than {SIM_PAGES} pages a block, units or programs buffered "
                         "is not timed by running it")
    logical = capacity // page
    if logical <= SIM_PAGES:
        return capacity, p
    blocks = physical_blocks(logical, p)
    small = max(SIM_PAGES // ppb, 1) * ppb
    small_blocks = max(round(small / ppb * blocks * ppb / logical), small // ppb + p["gc_low_blocks"] + 2)
    q = dict(p, op_pct=((small_blocks - 1) * ppb / small - 1) * 100.0, bg_free_blocks=0)
    check_params(small * page, q)
    return small * page, q


def random_writes(capacity: int, params: Mapping[str, Any], amount: float, bs: int = 4096,
                  depth: int = 1) -> RandomTiming:
    """``amount`` bytes of uniform random ``bs``-byte writes with ``depth``
    outstanding, from a purged drive of ``capacity`` bytes with the model
    parameters ``params`` (``{name: value}``); ValueError as
    :func:`~tkperf.simdrive.params.check_params`."""
    size, p = _copy(capacity, params)
    scale = capacity / size
    drive = Drive(size, p)
    bs = max(min(bs, size), 1)
    slots = size // bs
    per_write = -(-bs // drive.page)  # pages a write programs (a smaller write: a whole page)
    fill = size * bs / (per_write * drive.page)  # host bytes of one capacity's worth of page writes
    target = min(amount / scale, MAX_FILLS * fill)
    rng = random.Random(SEED)
    done: List[float] = [0.0] * max(depth, 1)
    marks: List[Tuple[int, int, float]] = [(0, 0, 0.0)]  # (host bytes, nand pages, time) every 1/8 capacity
    next_mark = fill / 8.0
    burst: Tuple[float, float] = (-1.0, 0.0)
    written = 0
    while written < target:
        t = heapq.heappop(done)
        heapq.heappush(done, drive.write(t, rng.randrange(slots) * bs, bs))
        written += bs
        if burst[0] < 0 and drive.first_fg_gc is not None:
            burst = (float(drive.first_fg_gc), t)
        if written >= next_mark:
            marks.append((written, drive.c["nand_write_pages"], max(done)))
            next_mark += fill / 8.0
    end = max(done)
    if marks[-1][0] != written:
        marks.append((written, drive.c["nand_write_pages"], end))
    back = next((m for m in reversed(marks) if m[0] <= written - fill), marks[0])  # a capacity ago
    host_pages = (written - back[0]) / bs * per_write
    waf = (drive.c["nand_write_pages"] - back[1]) / host_pages if host_pages else 1.0
    seconds = end
    rest = amount / scale - written
    if rest > 0 and end > back[2]:  # past MAX_FILLS: at the last capacity's rate
        seconds += rest * (end - back[2]) / (written - back[0])
    if burst[0] < 0:
        burst = (float(written), end)
    return RandomTiming(seconds * scale, min(burst[0] * scale, amount), burst[1] * scale, waf)
