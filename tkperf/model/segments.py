"""ActiveRange segments: the test range as contiguous, equal LBA ranges whose
starts are spread randomly across the active range.

SNIA's PTS test terminology ("ActiveRange Segments", SNIA Solid State
Storage Performance Test Specification (PTS) Client 1.1) defines them, and
PTS-C 1.1 uses 2,048 of them for IOPS, TP and LAT when the tests use an
8 GiB test range.  The layout here is a pure function of the active range,
the test range, the count and a seed, so a resumed run rebuilds the same
layout and a reader of the result file can regenerate it.  Each segment is
``size = test_range // count`` bytes, rounded down to a multiple of
:data:`ALIGN` (4 KiB); where the segments start depends on the run's
``placement`` (stored with its options as ``range_rules``):

* :data:`APART` (tkperf since issue 55): SNIA's "ActiveRange segments
  shall not touch to form a single segment", so neighbours are at least
  :data:`ALIGN` apart.  On a grid of :data:`ALIGN` units, ``free = active
  units - count * size units - (count - 1)`` units are spare after every
  segment and one unit between each pair; ``p = sorted(random.Random(seed)
  .sample(range(free + count), count))`` splits them (stars and bars: each
  way of sharing the spare units among the ``count + 1`` gaps is equally
  likely) and segment ``i`` starts at unit ``(p_i - i) + i * (size units +
  1)``.  An active range without room for the gaps is refused.
* :data:`TOUCHING` (results of an earlier tkperf, kept so that their
  layout is regenerated as it was): the active range is cut into
  ``active // size`` slots, and ``random.Random(seed).sample(range(slots),
  count)``, sorted, are the slots used: segment ``i`` starts at byte
  ``slot_i * size``; neighbouring slots may be drawn, and then touch.

The engine maps the segments, in order, into one contiguous device-mapper
linear device (:mod:`tkperf.target.armap`); :func:`dm_table` is its table.
"""
from __future__ import annotations

import bisect
import random
from dataclasses import dataclass
from typing import List, Tuple

from tkperf.errors import UsageError
from tkperf.model.pts import SEGMENT_ALIGN

#: Segment sizes are whole multiples of this (4 KiB: every logical sector size).
ALIGN = SEGMENT_ALIGN
#: The most segments a run may ask for (one device-mapper table line each).
MAX_SEGMENTS = 65536
SECTOR = 512
#: The layouts (a run's ``range_rules``): drawn slots that may touch (an
#: earlier tkperf's), and segments at least :data:`ALIGN` apart.
TOUCHING, APART = 1, 2


@dataclass(frozen=True)
class Layout:
    """Where the segments lie: ``starts`` (bytes from the start of the
    device, ascending) of ``count`` segments of ``size`` bytes each."""

    count: int
    size: int
    seed: int
    starts: Tuple[int, ...]

    @property
    def total(self) -> int:
        """The bytes the tests use: the mapped device's size."""
        return self.count * self.size

    @property
    def touching(self) -> int:
        """How many neighbouring pairs touch (SNIA: they "shall not"); 0 in
        every layout tkperf now draws, more in an earlier tkperf's."""
        return sum(1 for a, b in zip(self.starts, self.starts[1:]) if b - a <= self.size)

    def segment_of(self, offset: int) -> int:
        """The index of the segment holding device byte ``offset``, -1 when none does."""
        i = bisect.bisect_right(self.starts, offset) - 1
        return i if i >= 0 and offset < self.starts[i] + self.size else -1


def segment_size(tested: int, count: int) -> int:
    """The bytes of one segment: ``tested // count`` rounded down to 4 KiB."""
    return tested // max(count, 1) // ALIGN * ALIGN


def check(active: int, tested: int, count: int, placement: int = APART) -> int:
    """The segment size, or a UsageError when ``count`` segments do not fit
    (with ``placement`` :data:`APART`, with a gap between neighbours)."""
    if not 1 <= count <= MAX_SEGMENTS:
        raise UsageError(f"--ar-segments {count} is out of range (1..{MAX_SEGMENTS:,})")
    size = segment_size(tested, count)
    if size < ALIGN:
        raise UsageError(f"--ar-segments {count:,}: a test range of {tested:,} bytes makes segments smaller "
                         f"than {ALIGN // 1024} KiB; give fewer segments or a larger --test-range")
    if placement == TOUCHING:
        if active // size < count:
            raise UsageError(f"--ar-segments {count:,}: the active range ({active:,} bytes) holds only "
                             f"{active // size:,} segments of {size:,} bytes")
        return size
    needed = count * size + (count - 1) * ALIGN
    if active < needed:
        raise UsageError(f"--ar-segments {count:,}: the active range ({active:,} bytes) cannot hold {count:,} "
                         f"segments of {size_text(size)} that do not touch (at least {ALIGN // 1024} KiB between "
                         f"neighbours: {needed:,} bytes); give fewer segments, a smaller --test-range, or "
                         "--ar-segments 1")
    return size


def layout(active: int, tested: int, count: int, seed: int, placement: int = APART) -> Layout:
    """The segments of ``tested`` bytes, ``count`` of them, spread over the
    first ``active`` bytes of the device by ``seed`` (see the module's text
    for both ``placement`` rules)."""
    size = check(active, tested, count, placement)
    if placement == TOUCHING:
        slots = random.Random(seed).sample(range(active // size), count)
        return Layout(count=count, size=size, seed=seed, starts=tuple(s * size for s in sorted(slots)))
    units = size // ALIGN
    free = active // ALIGN - count * units - (count - 1)
    picks = sorted(random.Random(seed).sample(range(free + count), count))
    starts = tuple(((p - i) + i * (units + 1)) * ALIGN for i, p in enumerate(picks))
    return Layout(count=count, size=size, seed=seed, starts=starts)


def dm_table(lay: Layout, major: int, minor: int) -> str:
    """The device-mapper table that maps the segments, in order, into one
    contiguous device: one ``linear`` line per segment (512-byte sectors)."""
    n = lay.size // SECTOR
    lines: List[str] = [f"{i * n} {n} linear {major}:{minor} {start // SECTOR}"
                        for i, start in enumerate(lay.starts)]
    return "\n".join(lines) + "\n"


def size_text(n: int) -> str:
    """A segment's size as the header writes it: '4 MiB', '12 KiB', '1,052,672 bytes'."""
    for unit, name in ((2 ** 30, "GiB"), (2 ** 20, "MiB"), (2 ** 10, "KiB")):
        if n >= unit and n % unit == 0:
            return f"{n // unit:,} {name}"
    return f"{n:,} bytes"
