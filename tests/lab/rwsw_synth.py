"""Synthetic block traces in blkparse's default text output, for the import
tests and benchmarks/rwsw.py: workloads whose streams are known by
construction (test inputs, not measurements).

Each I/O is a ``D`` (issue) line and a ``C`` (completion) line; the lines
come in time order, as blkparse writes them.  ``ios`` yields (write,
sector, sectors) per I/O in issue order; the I/Os are issued ``gap_us``
apart and each completes ``lat_us`` (times a spread drawn per I/O) later.
"""
from __future__ import annotations

import heapq
import random
from typing import IO, Iterable, Iterator, List, Tuple

#: (write, first sector, sectors) of one I/O.
Io = Tuple[bool, int, int]


def lines(ios: Iterable[Io], gap_us: float = 50.0, lat_us: float = 200.0, seed: int = 42,
          dev: str = "7,0") -> Iterator[str]:
    """blkparse text lines of the I/Os ``ios`` (issue and completion, in time order)."""
    rnd = random.Random(seed)
    pending: List[Tuple[float, int, str, int, int]] = []
    seq = 0
    t = 0.0
    n = 0
    for n, (write, sector, count) in enumerate(ios):
        t = n * gap_us / 1e6
        while pending and pending[0][0] <= t:
            done, _, rwbs, s, c = heapq.heappop(pending)
            seq += 1
            yield f"{dev:>5}  0 {seq:>8} {done:14.9f}     0  C  {rwbs} {s} + {c} [0]\n"
        rwbs = "W" if write else "R"
        seq += 1
        yield f"{dev:>5}  0 {seq:>8} {t:14.9f}  4711  D  {rwbs} {sector} + {count} [fio]\n"
        heapq.heappush(pending, (t + lat_us * rnd.uniform(0.5, 1.5) / 1e6, n, rwbs, sector, count))
    while pending:
        done, _, rwbs, s, c = heapq.heappop(pending)
        seq += 1
        yield f"{dev:>5}  0 {seq:>8} {done:14.9f}     0  C  {rwbs} {s} + {c} [0]\n"


def sequential_streams(streams: int, per_stream: int, bs_sectors: int = 256, write: bool = False,
                       region_sectors: int = 1 << 24, seed: int = 7) -> Iterator[Io]:
    """``streams`` sequential streams, each in its own region, interleaved as
    concurrent threads would be: each round issues one I/O of every stream,
    the streams in a random order."""
    rnd = random.Random(seed)
    order = list(range(streams))
    for i in range(per_stream):
        rnd.shuffle(order)
        for s in order:
            yield write, s * region_sectors + i * bs_sectors, bs_sectors


def random_ios(n: int, device_sectors: int = 1 << 21, bs_sectors: int = 8, write_share: float = 0.3,
               seed: int = 11) -> Iterator[Io]:
    """``n`` random I/Os of ``bs_sectors`` anywhere on a device of ``device_sectors`` (default 1 GiB)."""
    rnd = random.Random(seed)
    blocks = device_sectors // bs_sectors
    for _ in range(n):
        yield rnd.random() < write_share, rnd.randrange(blocks) * bs_sectors, bs_sectors


def mix(n: int, device_sectors: int = 1 << 24, seed: int = 3) -> Iterator[Io]:
    """60% random 4 KiB reads, 25% sequential 64 KiB writes, 15% random 8 KiB writes (default 8 GiB device)."""
    rnd = random.Random(seed)
    seq = 0
    for _ in range(n):
        x = rnd.random()
        if x < 0.60:
            yield False, rnd.randrange(device_sectors // 8) * 8, 8
        elif x < 0.85:
            yield True, seq, 128
            seq = (seq + 128) % device_sectors
        else:
            yield True, rnd.randrange(device_sectors // 16) * 16, 16


def write(path: str, ios: Iterable[Io], **kw: float) -> None:
    with open(path, "w", encoding="ascii") as fh:
        _write(fh, ios, **kw)


def _write(fh: IO[str], ios: Iterable[Io], **kw: float) -> None:
    buf: List[str] = []
    for line in lines(ios, **kw):  # type: ignore[arg-type]
        buf.append(line)
        if len(buf) >= 65536:
            fh.write("".join(buf))
            buf.clear()
    fh.write("".join(buf))
